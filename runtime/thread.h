/*
 * thread.h - per-thread records (thread.c): the reader state of the
 * reclamation epochs, the frame list of hooked calls, the kernel tid, call
 * numbering and plugins' per-thread values.
 */
#ifndef RT_THREAD_H
#define RT_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "base.h"
#include "cushim/cushim.h"

#define TH_MAX_KEYS 64            /* plugin TLS keys (host->tls_create) */
struct rt_frame;
typedef struct th_rec {
    /* Reader state of the reclamation epochs, written only by the owner with
       single instructions (signal-safe), read by writers: (epoch << 16) | nest. */
    uint64_t ctr;
    struct rt_frame *top;         /* innermost hooked call in progress on this thread */
    _Atomic uint32_t in_cb;       /* 1 while hook callbacks run (exit waits for 0) */
    _Atomic uint32_t in_use;      /* claimed by a live thread */
    _Atomic uint32_t tid;         /* the owner's kernel thread id */
    uint32_t id;                  /* record number, from 1: high bits of seq */
    uint64_t seq_count;           /* calls numbered on this record */
    void **uw_head;               /* glibc's cleanup list head of the owner (unwind.c) */
    struct th_rec *next;          /* every record ever made; never unlinked */
    void *tls[TH_MAX_KEYS];       /* plugin per-thread values */
} __attribute__((aligned(64))) th_rec;

/* Initial-exec: no __tls_get_addr on the call path; 8 bytes (and once.c's 4)
   fit the static TLS surplus glibc keeps for dlopen'ed libraries (drop-in mode). Written rarely:
   what changes per call lives in the record (a store and reload through %fs
   does not forward quickly on some CPUs). */
typedef struct rt_tls_t {
    th_rec *rec;                  /* this thread's record, NULL until needed */
} rt_tls_t;
extern __thread rt_tls_t rt_tls __attribute__((tls_model("initial-exec")));

th_rec *th_rec_get(void);         /* this thread's record, registered on first use; NULL: no memory */
/* The record's call state dropped: no hooked call in progress (top), no callback running (in_cb), outside every
   epoch section (ctr). Its own thread's, for a frame found dead (dispatch.c), or one whose thread is gone. */
void th_drop_calls(th_rec *r);
/* A record whose thread ended without a word (SYS_exit: no key destructor ran) is dropped and freed. */
void th_release(th_rec *r);
th_rec *th_rec_first(void);       /* all records, for scans (follow ->next) */
uint32_t th_tid(void);            /* cached kernel thread id */
/* Unique in the process, never 0: (record id << 40) | calls numbered on it.
   One non-locked xadd: atomic with respect to this thread's signal handlers,
   and only the owner writes seq_count. */
static inline uint64_t th_seq(th_rec *r)
{
    uint64_t n = 1;
#if defined(__SANITIZE_THREAD__)
    n = __atomic_fetch_add(&r->seq_count, 1, __ATOMIC_RELAXED);
#else
    __asm__ volatile("xaddq %0, %1" : "+r"(n), "+m"(r->seq_count));
#endif
    return ((uint64_t)r->id << 40) | ((n + 1) & ((1ull << 40) - 1));
}
int th_tls_create(cushim_plugin *owner, void (*destructor)(void *), uint32_t *key);
void *th_tls_get(uint32_t key);
int th_tls_set(uint32_t key, void *value);
void th_tls_release(cushim_plugin *owner);   /* a plugin that failed: its keys die */

#endif /* RT_THREAD_H */
