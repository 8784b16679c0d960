/*
 * fl_clock.h - how the flight recorder keeps time (docs/plugins/flight.md, "Time"). Where the TSC is invariant
 * and the kernel's clocksource (x86-64), a record's times are raw TSC ticks, read by the recorder's hooks
 * themselves (one rdtsc, no conversion on the calling thread); the file keeps (TSC, CLOCK_MONOTONIC) pairs and the
 * reader converts every time to CLOCK_MONOTONIC ns - the trace's and the host's clock - when it reads the file.
 * Elsewhere the times are the host's clock (ns), as the core reads it for the hooks. Host-free: the plugin and
 * the dump tool share it (the tool only the conversion).
 */
#ifndef FL_CLOCK_H
#define FL_CLOCK_H

#include <stdint.h>

#include "fl_ring.h"
#include "tsc.h"

/* The TSC read in line (plugins/common/tsc.h, shared with the trace). */
#define FL_HAVE_TSC TSC_AVAILABLE
static inline uint64_t fl_rdtsc(void)
{
    return tsc_read();
}

/* A TSC time of the file in CLOCK_MONOTONIC ns: 'c0' extrapolated at 'ns_per_tick' (0.01 to 100: fl_cal_rate).
   0 stays 0 (a time not set); a file's nonsense saturates (a file is input: no conversion out of range). */
static inline uint64_t fl_tsc_ns(const fl_cal *c0, double ns_per_tick, uint64_t t)
{
    double v;
    uint64_t d;
    if (t == 0)
        return 0;
    v = (double)(t >= c0->tsc ? t - c0->tsc : c0->tsc - t) * ns_per_tick + 0.5;
    d = v < 18446744073709549568.0 ? (uint64_t)v : UINT64_MAX;
    if (t >= c0->tsc)
        return d <= UINT64_MAX - c0->ns ? c0->ns + d : UINT64_MAX;
    return d < c0->ns ? c0->ns - d : 1;
}

/* The rate between two pairs, ns a tick: 0 when they do not make one (not in order, or past 0.01-100 ns a tick:
   a pair torn by a kill while it was written, a foreign file). */
static inline double fl_cal_rate(const fl_cal *a, const fl_cal *b)
{
    double r;
    if (b->ns == 0 || b->tsc <= a->tsc || b->ns <= a->ns)
        return 0;
    r = (double)(b->ns - a->ns) / (double)(b->tsc - a->tsc);
    return r >= 0.01 && r <= 100 ? r : 0;
}

/* ---- the plugin's side (fl_clock.c) ---- */
/* The clock= option: tsc_choose (plugins/common/tsc.h). */
/* A (TSC, CLOCK_MONOTONIC) pair (tsc_pair against clock_gettime). Async-signal-safe. */
void fl_cal_take(fl_cal *c);
/* Stores a pair where a reader of the live file (or of the file a killed process left) may find it: 'ns' zeroed
   first and written last, so that a pair torn by a kill reads as none. Async-signal-safe. */
void fl_cal_store(fl_cal *dst, const fl_cal *src);

#endif /* FL_CLOCK_H */
