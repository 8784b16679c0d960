/*
 * tr_clock.h - the recording hooks' clock, converted by the writer (tr_clock.c). Where the TSC can be used
 * (plugins/common/tsc.h; the clock= option) the hooks store raw TSC ticks in their records and the writer
 * converts them to the host's clock (host->now_ns: CLOCK_MONOTONIC ns, the clock of the file's other records -
 * NVTX, CUPTI's GPU records through its timestamp callback, the queries the core times) with (TSC, now_ns)
 * pairs it takes itself, between which it interpolates. Host-free: the clock is handed in.
 */
#ifndef TR_CLOCK_H
#define TR_CLOCK_H

#include <stdint.h>

typedef struct tr_cal {
    uint64_t tsc, ns;
} tr_cal;

typedef struct tr_clock {
    uint64_t (*now_ns)(void);     /* the clock converted to (the host's now_ns)                        */
    tr_cal *v;                    /* pairs, in order: each at least TR_CLOCK_EVERY_NS after the one
                                     before, but the last, which each tr_clock_take moves forward until
                                     it is (the first two: at least TR_CLOCK_FIRST_NS apart); past
                                     TR_CLOCK_MAX, every other one of all but the latest TR_CLOCK_RECENT
                                     is dropped                                                          */
    uint32_t n, cap;
    uint32_t hint;                /* the segment of the last conversion                                */
    double hint_rate;             /* ... its ns a tick, while hint_gen == gen + 1 (0: none yet)          */
    uint64_t gen, hint_gen;       /* gen: changes with the table                                       */
} tr_clock;

#define TR_CLOCK_FIRST_NS 1000000ull       /* the first rate is measured over 1 ms at least           */
#define TR_CLOCK_EVERY_NS 10000000ull      /* a pair kept every 10 ms (the host's clock may change its
                                              rate or step at each of its renewals, once a second)     */
#define TR_CLOCK_MAX 4096u                 /* pairs kept at most (64 KiB): older ones thinned out      */
#define TR_CLOCK_RECENT 1024u              /* ... but never the latest (10 s at 10 ms)                */

/* The first pair (the output opens: the first recorded call). 0, or -1 (no memory). */
int tr_clock_start(tr_clock *c, uint64_t (*now_ns)(void));
/* A pair now (the writer, before each drain): appended, or in place of the last one while that is not
   TR_CLOCK_EVERY_NS after the one before it; and until the first two are TR_CLOCK_FIRST_NS apart it waits for
   that (at most 1 ms, once a process). After it, every TSC time up to now converts. Past TR_CLOCK_MAX pairs,
   every other one but the first and the latest TR_CLOCK_RECENT is dropped: old times convert over longer
   segments (a long call's entry, render=exit's records), recent ones over 10 ms. */
void tr_clock_take(tr_clock *c);
/* A TSC time of a record as the host's ns: interpolated between the pairs around it (a time after the last
   pair takes a new one first), extrapolated at the nearest segment's rate before the first (or after the last
   of a table without a clock); 0 stays 0. */
uint64_t tr_clock_ns(tr_clock *c, uint64_t tsc);
void tr_clock_free(tr_clock *c);

#endif /* TR_CLOCK_H */
