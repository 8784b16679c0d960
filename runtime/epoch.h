/*
 * epoch.h - when a retired hook chain may be freed (epoch.c): epochs,
 * per-thread reader marks, membarrier(2). The reader side is inline: it runs
 * on every hooked call.
 */
#ifndef RT_EPOCH_H
#define RT_EPOCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "base.h"
#include "thread.h"

#define EP_NEST_BITS 16
#define EP_NEST_MASK ((1ull << EP_NEST_BITS) - 1)
extern _Atomic uint64_t ep_epoch;
extern int ep_fence;              /* 1: readers fence (no membarrier(2)) */
void ep_init(void);
uint64_t ep_advance(void);        /* a new epoch; readers starting later see all prior publications */
/* The smallest epoch of a reader inside a section (UINT64_MAX if none), after a
   barrier that makes every reader's entry visible. 'skip' is not looked at. */
uint64_t ep_min_active(const th_rec *skip);
/* Waits until no reader other than 'skip' is inside a section begun before 'e'. */
void ep_wait(uint64_t e, const th_rec *skip);
int ep_barrier(void);             /* membarrier(2) or a fence; 0 on success */
void ep_poison(void);             /* a reader's state was lost: never free again */
int ep_poisoned(void);
/* A record inside a section whose thread no longer exists (it left by
   SYS_exit, not pthread_exit): reset it, so it holds nobody back. */
int ep_reap(th_rec *r);

/* Reader side, on the call path: signal-safe (single-instruction updates of
   the owner's own counter), no locked instruction unless ep_fence. */
static inline void ep_add_(uint64_t *p, int64_t d)
{
#if defined(__SANITIZE_THREAD__)
    __atomic_fetch_add(p, (uint64_t)d, __ATOMIC_ACQ_REL);
#else
    __asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(d) : "memory");
#endif
}
static inline void ep_enter(th_rec *r)
{
    uint64_t c = __atomic_load_n(&r->ctr, __ATOMIC_RELAXED);
    uint64_t e = atomic_load_explicit(&ep_epoch, memory_order_acquire);
    /* Outermost (no level held: the epoch now, level 1) or nested (one level more): chosen without a branch, so
       that neither case runs a code line of its own (an outermost and a nested call alternate in cudart's
       queries). A signal handler between the load and the store enters and leaves as many levels (a handler
       that jumps out has its levels dropped by the frames' cleanups): the value stored is still right. */
    uint64_t n = (c & EP_NEST_MASK) ? c + 1 : (e << EP_NEST_BITS) | 1;
    __atomic_store_n(&r->ctr, n, __ATOMIC_RELAXED);
    if (RT_UNLIKELY(ep_fence))
        RT_FENCE_SEQ_CST();
    else
        atomic_signal_fence(memory_order_seq_cst);
}
static inline void ep_exit(th_rec *r)
{
    if (RT_LIKELY(__atomic_load_n(&r->ctr, __ATOMIC_RELAXED) & EP_NEST_MASK))   /* 0: reset (rt_live_top) */
        ep_add_(&r->ctr, -1);   /* x86 stores are releases; the asm is a compiler barrier */
}
static inline int ep_inside(const th_rec *r)
{
    return r != NULL && (__atomic_load_n(&r->ctr, __ATOMIC_RELAXED) & EP_NEST_MASK) != 0;
}

#endif /* RT_EPOCH_H */
