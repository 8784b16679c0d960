/*
 * tsc.h - the TSC as the plugins' recording clock (tsc.c): read in line by a hook (no conversion on the calling
 * thread), chosen only where it can be used, and (TSC, clock) pairs to convert it with later. Shared by the
 * flight recorder (plugins/flight/fl_clock.c) and the trace (plugins/trace/tr_clock.c); host-free. The core's
 * own clock (runtime/clock.c) makes the same test for itself: plugins reach the core only through the host
 * table, which offers the clock in ns (host->now_ns), not this choice.
 */
#ifndef CUSHIM_COMMON_TSC_H
#define CUSHIM_COMMON_TSC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#define TSC_AVAILABLE 1
static inline uint64_t tsc_read(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#else
#define TSC_AVAILABLE 0
static inline uint64_t tsc_read(void)
{
    return 0;
}
#endif

/* 1 where the TSC is invariant (CPUID's constant and nonstop TSC) and the kernel keeps time with it (its
   clocksource is "tsc": it found it synchronised across CPUs); else 0. Reads sysfs: call it at start. */
int tsc_usable(void);
/* A 'clock' option: "auto" (the TSC where tsc_usable, else the host's clock), "tsc" (the TSC, or an error where
   it cannot be used), "host". Sets *use_tsc. 0, or -1 with one line in 'why' ('name': the plugin's option). */
int tsc_choose(const char *mode, int *use_tsc, char *why, size_t whylen);
/* A (TSC, 'clock') pair: the narrowest bracket of four tries (TSC, clock, TSC), the TSC taken halfway (a thread
   preempted between the reads would pair a TSC with a later time). 'clock' must be async-signal-safe for the
   pair to be. Returns the bracket's width in ticks (UINT64_MAX: the TSC went back in every try). */
uint64_t tsc_pair(uint64_t (*clock)(void), uint64_t *tsc, uint64_t *ns);
/* CLOCK_MONOTONIC in ns (clock_gettime): a clock for tsc_pair. */
uint64_t tsc_mono_ns(void);

#endif /* CUSHIM_COMMON_TSC_H */
