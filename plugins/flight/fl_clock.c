/*
 * fl_clock.c - the flight recorder's calibration pairs (fl_clock.h). The hot path reads the TSC in line
 * (flight.c); whether it may is decided at init by the clock= option (tsc_choose, plugins/common/tsc.c, shared
 * with the trace); this file takes the (TSC, CLOCK_MONOTONIC) pairs the reader converts with - at the ring's
 * making, at each thread's every FL_CAL_EVERY-th call, at a dump and at a fatal signal - and stores them.
 */
#include <stdint.h>

#include "fl_clock.h"

void fl_cal_take(fl_cal *c)
{
    uint64_t t, n;
    tsc_pair(tsc_mono_ns, &t, &n);
    c->tsc = t;
    c->ns = n;
}

void fl_cal_store(fl_cal *dst, const fl_cal *src)
{
    __atomic_store_n(&dst->ns, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->tsc, src->tsc, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->ns, src->ns, __ATOMIC_RELEASE);
}
