/*
 * tr_nest.h - links a runtime API call that CUPTI reports to the driver call our
 * hooks saw inside it (host-free; unit test tests/unit/trace_nest_test.c).
 *
 * A kernel launched through the CUDA runtime carries the correlation id of the
 * *runtime* call (cudaLaunchKernel) in CUPTI's records, while the shim may see only
 * the driver call the runtime makes (cuLaunchKernel: the runtime can be linked
 * statically or bind its own symbols). Our external correlation id is attached to
 * that driver call's record. CUPTI writes a call's API record when the call
 * returns, so on one thread the nested driver record comes before its runtime
 * record: the table keeps each thread's last few driver records that carry our id,
 * and a runtime record takes the id of the last one inside its [start, end].
 * Bounded memory; a thread's entries are overwritten by a thread hashing to the
 * same slot (a lost link, never a wrong one: entries are matched by thread id and
 * time).
 */
#ifndef TR_NEST_H
#define TR_NEST_H

#include <stdint.h>

#define TR_NEST_EXT 64       /* external ids waiting for their API record */
#define TR_NEST_THREADS 64   /* threads remembered */
#define TR_NEST_DEPTH 8      /* driver records remembered per thread */

typedef struct {
    uint32_t corr[TR_NEST_EXT];
    uint64_t ext[TR_NEST_EXT];
    uint32_t next_ext;
    struct {
        uint32_t tid;   /* 0: unused */
        uint32_t n;     /* records written (ring position) */
        uint64_t start[TR_NEST_DEPTH], end[TR_NEST_DEPTH], ext[TR_NEST_DEPTH];
    } thr[TR_NEST_THREADS];
} tr_nest;

/* CUPTI's external correlation record: API record 'corr' carries our id 'ext'. */
void tr_nest_ext(tr_nest *n, uint32_t corr, uint64_t ext);
/* A driver API record; remembered when an external id was given for it. Returns that id or 0. */
uint64_t tr_nest_driver(tr_nest *n, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end);
/* A runtime API record 'corr': the id of the last remembered driver record of thread 'tid' within
   [start, end]; 0 when there is none, or when an external id was given for this runtime call
   itself (the shim saw it: that direct link stands). */
uint64_t tr_nest_runtime(tr_nest *n, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end);

#endif
