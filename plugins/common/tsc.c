/*
 * tsc.c - the plugins' TSC (tsc.h): whether it can be used, the option that chooses it, calibration pairs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim_io.h>

#include "tsc.h"

int tsc_usable(void)
{
#if TSC_AVAILABLE
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

int tsc_choose(const char *mode, int *use_tsc, char *why, size_t whylen)
{
    if (strcmp(mode, "host") == 0) {
        *use_tsc = 0;
        return 0;
    }
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "tsc") != 0) {
        cushim_why(why, whylen, "clock=%.40s: auto, tsc or host", mode);
        return -1;
    }
    *use_tsc = tsc_usable();
    if (!*use_tsc && strcmp(mode, "tsc") == 0) {
        cushim_why(why, whylen, "clock=tsc: this CPU's TSC is not invariant, or the kernel does not keep time with "
                                "it (its clocksource is not 'tsc'); use clock=auto or host");
        return -1;
    }
    return 0;
}

uint64_t tsc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tsc_pair(uint64_t (*clock)(void), uint64_t *tsc, uint64_t *ns)
{
    uint64_t width = UINT64_MAX;
    *tsc = 0;
    *ns = clock();
    for (int i = 0; i < 4; i++) {
        uint64_t a = tsc_read(), n = clock(), b = tsc_read();
        if (b >= a && b - a < width) {
            width = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
    return width;
}
