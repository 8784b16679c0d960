/*
 * core.h - the smlimit admission logic: a budget of measured GPU time for one
 * process on one device. Pure: no clock, no CUDA, no locks; every function
 * takes 'now' (ns of any monotonic clock), so the unit test drives it with a
 * simulated clock (tests/unit/sml_core_test.c) and the plugin with the real one.
 *
 * The budget is a token bucket counted in nanoseconds of GPU time:
 *   - tokens accrue at 'share' ns per ns of wall time, up to 'cap' = share * window
 *     (an idle process hoards at most one window's worth: the bound on bursts);
 *   - measured busy time (sml_complete) is taken out; the balance may go
 *     negative (a kernel longer than the window), down to -debt_max, and the
 *     process then waits until the debt is repaid;
 *   - a launch is admitted while tokens exceed the GPU time of the launches
 *     already admitted but not yet measured (outstanding * learned time per
 *     launch), so a deep launch queue cannot run ahead of the budget. Until the
 *     first measurement only one launch may be outstanding. After a refusal,
 *     admission resumes only when half the cap is free: the work then runs in
 *     bursts of about half a window rather than one kernel at a time, and the
 *     few microseconds by which each burst's end is measured late (the polling
 *     period) are spread over many kernels.
 * Over any interval T the process therefore gets at most share*T + cap of
 * GPU time, and, when it always has work, at least share*T - (outstanding work).
 *
 * Busy time is the union of the measured intervals (several streams overlap):
 * a small sorted set of disjoint intervals over the recent past.
 */
#ifndef SML_CORE_H
#define SML_CORE_H

#include <stdint.h>

#define SML_MAX_IV 64           /* intervals kept for the union                        */

typedef struct sml_limiter {
    double share;               /* (0, 1]                                               */
    uint64_t window_ns;         /* burst bound: cap = share * window                    */
    int64_t cap;                /* ns of GPU time                                       */
    int64_t debt_max;           /* tokens never go below -debt_max                      */
    int64_t tokens;             /* ns of GPU time; negative = debt                      */
    uint64_t t_accrued;         /* tokens accrued up to this time                       */
    uint64_t outstanding;       /* launches admitted, not yet measured                  */
    double est_ns;              /* GPU time per launch (EWMA); 0 = not measured yet     */
    int blocked;                /* refused since the last admission: resume only once
                                   half the cap is free, so admitted work comes in
                                   bursts (fewer idle gaps to mis-measure), not a trickle */
    uint64_t iv[SML_MAX_IV][2]; /* disjoint busy intervals, sorted by start             */
    uint32_t niv;
    /* statistics */
    uint64_t busy_ns;           /* union of measured intervals, since init             */
    uint64_t admitted;          /* launches admitted                                    */
    uint64_t delays;            /* admissions refused (each one a wait)                 */
} sml_limiter;

/* 'share' in (0, 1]; 'window_ns' > 0. Starts with a full bucket. */
void sml_init(sml_limiter *l, double share, uint64_t window_ns, uint64_t now);
/* Change the share (weights, work-conserving mode); tokens accrued so far keep. */
void sml_set_share(sml_limiter *l, double share, uint64_t now);
/* 0: admitted (counted as outstanding). Else: ns to wait before asking again
   (at least 1, at most the window). */
uint64_t sml_admit(sml_limiter *l, uint64_t now);
/* Admit without a budget (a process with no limit that takes part in priorities): counted as pending only. */
void sml_admit_free(sml_limiter *l);
/* 'launches' admitted launches finished; their work ran within [start, end].
   Adds the part of [start, end] not already counted to the busy time and takes
   it from the tokens. Returns the ns added. start > end counts nothing. */
uint64_t sml_complete(sml_limiter *l, uint64_t start, uint64_t end, uint32_t launches, uint64_t now);
/* The same for an interval whose start was moved from 'own_start' (its submit time
   or the previous finish on its stream) to 'start' by another process's finish
   (poll.c): such an interval says little about what a launch costs (two pollers'
   clocks may leave it nearly empty), so it does not teach the learned time per
   launch, unless nothing has: then the unmoved interval does. An empty learned
   time would let a whole program's launches queue at once. */
uint64_t sml_complete_clipped(sml_limiter *l, uint64_t own_start, uint64_t start, uint64_t end, uint32_t launches,
                              uint64_t now);
/* Take back the launch sml_admit just admitted (it may not start yet: another
   process has the GPU's turn); tokens and the learned time stay. */
void sml_unadmit(sml_limiter *l);
/* 'launches' admitted launches will never be measured (the launch failed). */
void sml_forget(sml_limiter *l, uint32_t launches);
/* Union length of [start, end] with the intervals kept, inserting it. Exposed
   for the unit test. */
uint64_t sml_union_add(sml_limiter *l, uint64_t start, uint64_t end);

/*
 * The share in force for a process with limit 'own' (0, 1] among live
 * partners on the device with limits 'w[i]' and measured recent usage 'u[i]':
 * when the limits add up to more than 1 each is scaled by 1 / sum (weights);
 * with 'work_conserving', the partners' unused shares (scaled share minus
 * usage, less 'slack' in total) are added. Never above 1.
 */
double sml_weighted_share(double own, const double *w, const double *u, int n, int work_conserving, double slack);

/*
 * The time share that holds a share of *throughput* (option clock_ref_mhz): a
 * GPU that is busy only part of the time runs at higher clocks than one that is
 * kept busy (power headroom), so the same time share does more work. 'share' is
 * scaled by ref_mhz / mhz, the clock the GPU runs at under full load over the
 * clock seen while this process's work runs; the factor is kept within
 * [1/4, 4] and the result within (0, 1]. mhz or ref_mhz 0: 'share' unchanged.
 */
double sml_clock_share(double share, double ref_mhz, double mhz);

#endif /* SML_CORE_H */
