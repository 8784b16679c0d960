/*
 * clock.c - host->now_ns and the call frame's t_enter_ns: CLOCK_MONOTONIC
 * nanoseconds, read cheaply.
 *
 * clock_gettime(CLOCK_MONOTONIC) through the vDSO costs ~23 ns on the
 * reference VM (it serialises the TSC read); a plain rdtsc ~10 ns back to back
 * and less inside other work. So when the kernel itself keeps time with the
 * TSC (clocksource "tsc", invariant TSC), now_ns extrapolates from an anchor
 * (tsc, CLOCK_MONOTONIC) with a multiplier measured against CLOCK_MONOTONIC;
 * the anchor and multiplier are renewed every ~1 s, so the result tracks
 * CLOCK_MONOTONIC (NTP slewing included) to within the drift of one second.
 * A renewal never goes backwards: the new anchor is the later of the clock's
 * reading and the extrapolation. Otherwise, and for the first 2 ms while the
 * multiplier is measured, it is clock_gettime. The TSC is checked on the
 * clock's first use, not at start-up.
 *
 * Readers take a seqlock snapshot and never wait: a reader that finds the
 * anchor being renewed (a signal handler interrupting the renewal, too) falls
 * back to clock_gettime.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"

clk_state_t clk;

static uint64_t clk_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The kernel trusts the TSC (it is the clocksource) and it is invariant. */
static int clk_tsc_usable(void)
{
    uint32_t a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
    if (a < 0x80000007u)
        return 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
    if (!(d & (1u << 8)))
        return 0;
    char buf[32] = { 0 };
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
}

static _Atomic int clk_checked;

/* On first use (not at start-up: most processes never ask for the time). */
void clk_init(void)
{
    if (atomic_exchange(&clk_checked, 1) || !clk_tsc_usable())
        return;
    atomic_store(&clk.tsc0, clk_rdtsc());
    atomic_store(&clk.ns0, clk_mono());
    atomic_store(&clk.mode, 1);
}

/* Slow path: clock_gettime, and renew the anchor if due and nobody else is. */
uint64_t clk_renew(uint64_t tsc)
{
    if (RT_UNLIKELY(!atomic_load_explicit(&clk_checked, memory_order_relaxed)))
        clk_init();
    uint64_t ns = clk_mono();
    int mode = atomic_load(&clk.mode);
    uint32_t s = atomic_load(&clk.seq);
    if (mode == 0 || (s & 1) || !atomic_compare_exchange_strong(&clk.seq, &s, s + 1))
        return ns;
    uint64_t t0 = atomic_load(&clk.tsc0), n0 = atomic_load(&clk.ns0);
    if (tsc > t0 && ns > n0 && (mode == 2 || ns - n0 >= 2000000)) {
        uint64_t anchor = ns;
        if (mode == 2) {   /* never behind what readers were given */
            uint64_t ext = n0 + (uint64_t)(((unsigned __int128)(tsc - t0) * atomic_load(&clk.mult)) >> 32);
            if (ext > anchor)
                anchor = ext;
        }
        uint64_t mult = (uint64_t)(((unsigned __int128)(ns - n0) << 32) / (tsc - t0));
        atomic_store(&clk.mult, mult);
        atomic_store(&clk.period, (uint64_t)(((unsigned __int128)1000000000ull << 32) / (mult ? mult : 1)));
        atomic_store(&clk.tsc0, tsc);
        atomic_store(&clk.ns0, anchor);
        atomic_store(&clk.mode, 2);
        ns = anchor;
    }
    atomic_store(&clk.seq, s + 2);
    return ns;
}
