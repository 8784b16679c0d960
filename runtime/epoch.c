/*
 * epoch.c - when may a retired hook chain be freed: epoch-based reclamation
 * with asymmetric fences.
 *
 * Readers (a hooked call, from its chain load to its last post hook) mark
 * their thread's record: ctr = (epoch at entry << 16) | nesting. Nesting
 * covers a hooked call made inside another's real function and signal
 * handlers. The marks are plain single-instruction stores (rt_internal.h):
 * no locked instruction on the call path. The StoreLoad ordering they lack
 * (the mark must be visible before the chain pointer is loaded) is supplied by
 * the writer: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every running
 * thread of the process execute a full barrier. Without membarrier readers
 * fence instead (ep_fence).
 *
 * Writer: unpublish chains, E = ep_advance(), barrier, then a chain retired at
 * E may be freed once every reader inside a section has an entry epoch >= E:
 * - a reader whose mark the barrier made visible with epoch < E is waited for;
 * - a reader whose mark was not yet visible loads chain pointers after the
 *   barrier, so it sees the new chains, never the retired one;
 * - a reader that read epoch >= E (acquire) synchronised with ep_advance,
 *   which followed the unpublication, so it sees the new chains too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "epoch.h"
#include "log.h"
#include "thread.h"

_Atomic uint64_t ep_epoch RT_HOT = 1;
int ep_fence RT_HOT;
static int ep_inited;
static _Atomic int ep_no_free;

void ep_poison(void)
{
    atomic_store(&ep_no_free, 1);
}

int ep_poisoned(void)
{
    return atomic_load_explicit(&ep_no_free, memory_order_relaxed);
}

int ep_reap(th_rec *r)
{
    uint32_t tid = atomic_load_explicit(&r->tid, memory_order_relaxed);
    if (tid == 0 || syscall(SYS_tgkill, (pid_t)getpid(), (pid_t)tid, 0) == 0 || errno != ESRCH)
        return 0;
    log_warn("thread %u ended inside a hooked call without unwinding; its record is reset", tid);
    th_release(r);
    return 1;
}

/* Under the hook mutex, before the first hook is published: readers enter
   sections only on APIs with hooks, so none began before this. */
void ep_init(void)
{
    if (ep_inited)
        return;
    ep_inited = 1;
#if defined(__SANITIZE_THREAD__)
    ep_fence = 1;   /* TSan does not model membarrier: readers fence, so it can check the rest */
#else
    long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
        syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
        ep_fence = 1;
        log_debug("membarrier(2) unavailable: hooked calls fence");
    }
#endif
}

int ep_barrier(void)
{
    if (ep_fence) {
        RT_FENCE_SEQ_CST();
        return 0;
    }
    return syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}

uint64_t ep_advance(void)
{
    return atomic_fetch_add(&ep_epoch, 1) + 1;
}

uint64_t ep_min_active(const th_rec *skip)
{
    if (RT_UNLIKELY(ep_barrier() != 0)) {
        /* membarrier worked at registration and fails now (a seccomp filter
           added later?): a fence, and a pause long enough for every store
           buffer to drain. Degraded, logged once. */
        static _Atomic int logged;
        if (!atomic_exchange(&logged, 1))
            log_warn("membarrier(2) failed after registration: hook removal waits 1 ms per grace period");
        RT_FENCE_SEQ_CST();
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    uint64_t min = UINT64_MAX;
    for (th_rec *r = th_rec_first(); r != NULL; r = r->next) {
        if (r == skip)
            continue;
        uint64_t c = __atomic_load_n(&r->ctr, __ATOMIC_ACQUIRE);
        if ((c & EP_NEST_MASK) != 0 && (c >> EP_NEST_BITS) < min)
            min = c >> EP_NEST_BITS;
    }
    return min;
}

void ep_wait(uint64_t e, const th_rec *skip)
{
    unsigned polls = 0;
    while (ep_min_active(skip) < e) {
        struct timespec ts = { 0, polls++ < 100 ? 20000 : 1000000 };
        nanosleep(&ts, NULL);
        if (polls % 100 == 0)   /* a waited-for thread may have ended without unwinding */
            for (th_rec *r = th_rec_first(); r != NULL; r = r->next) {
                uint64_t c = __atomic_load_n(&r->ctr, __ATOMIC_ACQUIRE);
                if (r != skip && (c & EP_NEST_MASK) && (c >> EP_NEST_BITS) < e &&
                    atomic_load_explicit(&r->in_use, memory_order_relaxed))
                    ep_reap(r);
            }
    }
}
