/*
 * fl_clock.c - the flight recorder's choice of clock and its calibration pairs (fl_clock.h). The hot path reads
 * the TSC in line (flight.c); this file decides at init whether it may, and takes the (TSC, CLOCK_MONOTONIC)
 * pairs the reader converts with: at the ring's making, at each thread's every FL_CAL_EVERY-th call, at a dump
 * and at a fatal signal.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim_io.h>

#include "fl_clock.h"

/* The TSC is invariant (CPUID 0x80000007 EDX bit 8: constant and nonstop) and the kernel keeps time with it (its
   clocksource is "tsc": it found the TSC synchronised across CPUs) - the host's own condition for its clock. */
static int fl_tsc_usable(void)
{
#if FL_HAVE_TSC
    uint32_t a, b, c, d;
    char buf[32] = {0};
    ssize_t n;
    int fd;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
    if (a < 0x80000007u)
        return 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
    if (!(d & (1u << 8)))
        return 0;
    fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
#else
    return 0;
#endif
}

int fl_clock_choose(const char *mode, int *use_tsc, char *why, size_t whylen)
{
    if (strcmp(mode, "host") == 0) {
        *use_tsc = 0;
        return 0;
    }
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "tsc") != 0) {
        cushim_why(why, whylen, "clock=%.40s: auto, tsc or host", mode);
        return -1;
    }
    *use_tsc = fl_tsc_usable();
    if (!*use_tsc && strcmp(mode, "tsc") == 0) {
        cushim_why(why, whylen, "clock=tsc: this CPU's TSC is not invariant, or the kernel does not keep time with "
                                "it (its clocksource is not 'tsc'); use clock=auto or host");
        return -1;
    }
    return 0;
}

static uint64_t fl_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fl_cal_take(fl_cal *c)
{
    uint64_t width = UINT64_MAX;
    c->tsc = 0;
    c->ns = fl_mono_ns();
    for (int i = 0; i < 4; i++) {
        uint64_t a = fl_rdtsc(), n = fl_mono_ns(), b = fl_rdtsc();
        if (b >= a && b - a < width) {
            width = b - a;
            c->tsc = a + (b - a) / 2;
            c->ns = n;
        }
    }
}

void fl_cal_store(fl_cal *dst, const fl_cal *src)
{
    __atomic_store_n(&dst->ns, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->tsc, src->tsc, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->ns, src->ns, __ATOMIC_RELEASE);
}
