/*
 * clock.h - the cheap clock (clock.c): CLOCK_MONOTONIC nanoseconds from the
 * TSC. The read is inline: it runs on every timed hooked call.
 */
#ifndef RT_CLOCK_H
#define RT_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "base.h"

typedef struct clk_state_t {
    _Atomic uint32_t seq;        /* odd: the anchor is being renewed */
    _Atomic int mode;            /* 0 clock_gettime, 1 calibrating, 2 tsc */
    _Atomic uint64_t tsc0, ns0;  /* anchor */
    _Atomic uint64_t mult;       /* ns per tick << 32 */
    _Atomic uint64_t period;     /* ticks between renewals; 0 unless mode 2 */
    _Atomic uint64_t width0;     /* the anchor's uncertainty: ticks between the TSC reads around its time */
} __attribute__((aligned(64))) clk_state_t;
extern clk_state_t clk;
extern uint64_t clk_renew_ns;   /* the anchor's lifetime, 1 s (a unit test shortens it) */
void clk_init(void);
uint64_t clk_renew(void);   /* clock_gettime, renewing the anchor when due */
static inline uint64_t clk_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
/* The anchor snapshot taken with seqlock value 's' extrapolated to 'tsc': 1 and *ns when 's' was even, the
   snapshot held (the value unchanged after it) and the anchor is still valid at 'tsc'; else 0. */
static inline int clk_extrapolate(uint32_t s, uint64_t tsc, uint64_t *ns)
{
    uint64_t d = tsc - atomic_load_explicit(&clk.tsc0, memory_order_relaxed);
    if (RT_LIKELY(d < atomic_load_explicit(&clk.period, memory_order_relaxed) && !(s & 1))) {
        uint64_t v = atomic_load_explicit(&clk.ns0, memory_order_relaxed) +
                     (uint64_t)(((unsigned __int128)d * atomic_load_explicit(&clk.mult, memory_order_relaxed)) >> 32);
        RT_FENCE_ACQUIRE();
        if (RT_LIKELY(atomic_load_explicit(&clk.seq, memory_order_relaxed) == s)) {
            *ns = v;
            return 1;
        }
    }
    return 0;
}
/* CLOCK_MONOTONIC ns from the TSC (a seqlock snapshot of the anchor; clk_renew when it is being renewed or due). */
static inline uint64_t clk_now_ns(void)
{
    uint32_t s = atomic_load_explicit(&clk.seq, memory_order_acquire);
    uint64_t ns;
    if (RT_LIKELY(clk_extrapolate(s, clk_rdtsc(), &ns)))
        return ns;
    return clk_renew();
}

#endif /* RT_CLOCK_H */
