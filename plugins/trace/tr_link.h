/*
 * tr_link.h - links a kernel launched through the CUDA runtime to the driver call
 * the shim saw (host-free; unit test tests/unit/trace_link_test.c).
 *
 * CUPTI gives a kernel the correlation id of the outermost API call that launched
 * it: for a runtime launch, cudaLaunchKernel's, and it records no API activity for
 * the driver call the runtime makes inside (so our external correlation id, pushed
 * at that driver call, reaches no record). The shim may see only the driver call:
 * PyTorch's kernels come through a runtime that binds its own symbols. CUPTI's
 * record of the runtime call has its thread and its [start, end] on our clock
 * (the timestamp callback), and the writer has every traced launch, copy and set
 * call with its thread and entry time: the runtime record takes the first such
 * call of its thread that entered inside it. CUPTI's thread id is compared with
 * both the OS thread id and pthread_self() (32 bits), whichever it uses.
 * Memory is bounded: a thread keeps its last TR_LINK_KEEP calls (16 bytes each),
 * and at most TR_LINK_KEEP runtime records wait for a late call; past that the
 * older half is dropped (CUPTI delivers a runtime record within a
 * buffer's worth of calls, 4 MiB, far fewer than that).
 */
#ifndef TR_LINK_H
#define TR_LINK_H

#include <stdint.h>

#ifndef TR_LINK_KEEP
#define TR_LINK_KEEP (1u << 20)
#endif

typedef struct tl_ent {
    uint64_t t, seq;
} tl_ent;

typedef struct tl_thr {
    uint32_t tid, alt;   /* the OS thread id and pthread_self(), 32 bits */
    tl_ent *v;
    uint32_t n, cap;
} tl_thr;

typedef struct tl_pend {
    uint32_t corr, tid;
    uint64_t start, end;
} tl_pend;

typedef struct tr_link {
    tl_thr *thr;
    uint32_t nthr, cap;
    tl_pend *pend;       /* runtime records no call matched yet */
    uint32_t npend, cap_pend;
} tr_link;

/* A traced call that may launch GPU work: thread (tid, alt), entry time t, our seq. 0 or -1 (no memory). */
int tr_link_call(tr_link *l, uint32_t tid, uint32_t alt, uint64_t t, uint64_t seq);
/* The seq of the first call of CUPTI thread 'tid' that entered within [start, end]; 0 if none. */
uint64_t tr_link_find(const tr_link *l, uint32_t tid, uint64_t start, uint64_t end);
/* A runtime record to try again later (its call not seen yet). 0 or -1. */
int tr_link_defer(tr_link *l, uint32_t corr, uint32_t tid, uint64_t start, uint64_t end);
void tr_link_free(tr_link *l);

#endif
