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
 * reading and the extrapolation. Otherwise, and for the first 20 ms while the
 * multiplier is measured, it is clock_gettime. The TSC is checked on the
 * clock's first use, not at start-up. Anchors are (TSC, clock) pairs read
 * together (clk_pair); a multiplier is only measured from pairs whose
 * uncertainty is under 100 ppm of the interval between them.
 *
 * Readers take a seqlock snapshot: a reader that finds the anchor being
 * renewed waits a few microseconds at most for the new one (clk_after_renewal),
 * then falls back to clock_gettime (a signal handler interrupting the renewal
 * on its own thread, too: it never waits for it).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "clock.h"

clk_state_t clk RT_HOT __attribute__((aligned(256)));   /* the section starts on 256: its ~100 bytes never straddle a page */

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
uint64_t clk_renew_ns = 1000000000ull;     /* the anchor's lifetime (unit tests shorten it) */
#define CLK_CALIBRATE_NS 20000000ull       /* the first multiplier is measured over at least 20 ms */

/* A (TSC, CLOCK_MONOTONIC) pair: the TSC read just before and just after the clock, the narrowest of four
   tries kept, the TSC taken halfway. A thread preempted between the two reads would pair a TSC with a much
   later time (a calibration under load once measured a multiplier tens of per cent off: the extrapolated
   clock ran ahead, and went back by tens of ms when readers fell back to clock_gettime). *width: the
   bracket in ticks, the pair's uncertainty. */
static void clk_pair(uint64_t *tsc, uint64_t *ns, uint64_t *width)
{
    *width = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = clk_rdtsc(), n = clk_mono(), b = clk_rdtsc();
        if (b >= a && b - a < *width) {
            *width = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
    if (*width == UINT64_MAX) {   /* the TSC went back between reads (never on an invariant TSC) */
        *tsc = clk_rdtsc();
        *ns = clk_mono();
    }
}

/* On first use (not at start-up: most processes never ask for the time). */
void clk_init(void)
{
    if (atomic_exchange(&clk_checked, 1) || !clk_tsc_usable())
        return;
    uint64_t t, n, w;
    clk_pair(&t, &n, &w);
    atomic_store(&clk.tsc0, t);
    atomic_store(&clk.ns0, n);
    atomic_store(&clk.width0, w);
    atomic_store(&clk.mode, 1);
}

/* A reader that met a renewal in progress (the seqlock odd): a renewal takes a few hundred ns (the pair's four
   clock reads), so wait up to ~200 pauses (a few us at most) for it and read with the new anchor - falling back to
   clock_gettime at once would give a time behind what the extrapolation gave a moment before by the drift since
   the last renewal. Bounded: a signal handler interrupting the renewal on its own thread must not wait for it;
   it, and a reader whose renewer was preempted, get clock_gettime. */
static uint64_t clk_after_renewal(uint64_t now)
{
    for (int i = 0; i < 200; i++) {
        uint32_t s = atomic_load_explicit(&clk.seq, memory_order_acquire);
        uint64_t ns;
        if (!(s & 1))
            return clk_extrapolate(s, clk_rdtsc(), &ns) ? ns : now;
        __builtin_ia32_pause();
    }
    return now;
}

/* Slow path: clock_gettime, and renew the anchor if due and nobody else is. The new anchor is a fresh pair
   (not the TSC the caller read before it got here). The multiplier is measured only when the two pairs' uncertainties
   are under 1/10,000 of the interval between them (100 ppm): else, while calibrating, calibration starts over
   from the new pair; later, the anchor moves and the multiplier stays. */
uint64_t clk_renew(void)
{
    if (RT_UNLIKELY(!atomic_load_explicit(&clk_checked, memory_order_relaxed)))
        clk_init();
    uint64_t now = clk_mono();
    int mode = atomic_load(&clk.mode);
    uint32_t s = atomic_load(&clk.seq);
    if (mode == 0 || (mode == 1 && now - atomic_load(&clk.ns0) < CLK_CALIBRATE_NS))
        return now;   /* no TSC, or calibrating */
    if ((s & 1) || !atomic_compare_exchange_strong(&clk.seq, &s, s + 1))
        return mode == 2 ? clk_after_renewal(now) : now;   /* another thread renews */
    uint64_t t, ns, w;
    clk_pair(&t, &ns, &w);
    uint64_t t0 = atomic_load(&clk.tsc0), n0 = atomic_load(&clk.ns0), w0 = atomic_load(&clk.width0);
    if (t > t0 && ns > n0 && (mode == 2 || ns - n0 >= CLK_CALIBRATE_NS)) {
        int clean = w != UINT64_MAX && w0 != UINT64_MAX && (unsigned __int128)(w + w0) * 10000u <= t - t0;
        uint64_t anchor = ns, mult = atomic_load(&clk.mult);
        if (mode == 2) {   /* never behind what readers were given */
            uint64_t ext = n0 + (uint64_t)(((unsigned __int128)(t - t0) * mult) >> 32);
            if (ext > anchor)
                anchor = ext;
        }
        if (clean)   /* against the old anchor: a clock run ahead measures slower and converges */
            mult = (uint64_t)(((unsigned __int128)(ns - n0) << 32) / (t - t0));
        if (mode == 2 || clean) {
            atomic_store(&clk.mult, mult);
            atomic_store(&clk.period, (uint64_t)(((unsigned __int128)clk_renew_ns << 32) / (mult ? mult : 1)));
            atomic_store(&clk.mode, 2);
        }
        atomic_store(&clk.tsc0, t);
        atomic_store(&clk.ns0, anchor);
        atomic_store(&clk.width0, w);
        ns = anchor;
    }
    atomic_store(&clk.seq, s + 2);
    return ns;
}
