/*
 * hostprobe.c - what the primitives a recorded call is made of cost on this machine's CPU, so that a
 * difference between two machines (bench/cpu/cold.sh run on each) can be traced to one of them.
 *
 * USAGE: cushim_hostprobe [iterations]
 *
 * Prints the CPU model, whether membarrier(2) private expedited is available (without it every hooked call
 * fences: runtime/epoch.c), and for each primitive the median over 15 runs of the mean ns per operation in a
 * loop of 'iterations' (default 2,000,000), minus the empty loop: rdtsc alone and in a dependent chain,
 * rdtscp, mfence, a locked add, CLOCK_MONOTONIC through the vDSO, the shim's own TSC clock (the same
 * instructions as runtime/clock.h clk_now_ns), and ~40 ALU instructions alone and with a clock read
 * whose result is stored (a clock read inside other work: does it overlap?). Numbers on a loaded machine
 * are noisy; compare medians. The GPU suite's env line reports its rdtsc row.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RUNS 15

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile uint64_t sink;
static uint64_t line[8] __attribute__((aligned(64)));

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* The shim's clock (runtime/clock.h clk_now_ns): a seqlock snapshot of an anchor, the TSC since it, times a
   multiplier. The same instructions here, on an anchor set once. */
static struct {
    _Atomic uint32_t seq;
    _Atomic uint64_t tsc0, ns0, mult, period;
} __attribute__((aligned(64))) ck;

static inline uint64_t ck_now_ns(void)
{
    uint32_t s = atomic_load_explicit(&ck.seq, memory_order_acquire);
    uint64_t t = rdtsc();
    uint64_t d = t - atomic_load_explicit(&ck.tsc0, memory_order_relaxed);
    if (__builtin_expect(d < atomic_load_explicit(&ck.period, memory_order_relaxed) && !(s & 1), 1)) {
        uint64_t ns = atomic_load_explicit(&ck.ns0, memory_order_relaxed) +
                      (uint64_t)(((unsigned __int128)d * atomic_load_explicit(&ck.mult, memory_order_relaxed)) >> 32);
        __asm__ volatile("" ::: "memory");   /* an acquire fence on x86-64 (as RT_FENCE_ACQUIRE there) */
        if (__builtin_expect(atomic_load_explicit(&ck.seq, memory_order_relaxed) == s, 1))
            return ns;
    }
    return (uint64_t)now_ns();
}

static void ck_init(void)
{
    double n0 = now_ns();
    uint64_t t0 = rdtsc();
    while (now_ns() - n0 < 20e6)
        ;
    double n1 = now_ns();
    uint64_t t1 = rdtsc();
    uint64_t mult = (uint64_t)((n1 - n0) * 4294967296.0 / (double)(t1 - t0));
    atomic_store(&ck.tsc0, t1);
    atomic_store(&ck.ns0, (uint64_t)n1);
    atomic_store(&ck.mult, mult);
    atomic_store(&ck.period, ~0ull);
}

/* ~40 independent ALU instructions, standing in for a call's other work between two clock reads. */
static inline uint64_t work(uint64_t x)
{
    uint64_t a = x, b = x ^ 0x9e3779b97f4a7c15ull, c = x + 7, d = x * 3;
    for (int i = 0; i < 5; i++) {
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
        a += b; b ^= c; c += d; d ^= a;
        a = (a << 1) | (a >> 63); b += 3; c ^= 5; d += a;
    }
    return a ^ b ^ c ^ d;
}

enum { P_EMPTY, P_RDTSC, P_RDTSC_DEP, P_RDTSCP, P_MFENCE, P_LOCK_ADD, P_CLOCK, P_CK, P_WORK, P_WORK_RDTSC,
       P_WORK_CK, P_COUNT };
static const char *const names[P_COUNT] = {
    "empty loop", "rdtsc", "rdtsc, result used (dependent chain)", "rdtscp", "mfence",
    "lock add (one line)", "clock_gettime(MONOTONIC)", "the shim's clock (rdtsc, anchor, multiply)",
    "~40 ALU instructions (work)", "work + rdtsc stored", "work + the shim's clock stored",
};

static double run(int which, long n)
{
    uint64_t acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        switch (which) {
        case P_EMPTY:
            __asm__ volatile("" ::: "memory");
            break;
        case P_RDTSC:
            acc += rdtsc();
            break;
        case P_RDTSC_DEP: {   /* the next iteration's store depends on this reading */
            uint64_t t = rdtsc();
            line[t & 1] = t;
            acc += line[0];
            break;
        }
        case P_RDTSCP: {
            uint32_t lo, hi, aux;
            __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
            acc += lo;
            break;
        }
        case P_MFENCE:
            __asm__ volatile("mfence" ::: "memory");
            break;
        case P_LOCK_ADD:
            __asm__ volatile("lock addq $1, %0" : "+m"(line[0])::"memory");
            break;
        case P_CK:
            acc += ck_now_ns();
            break;
        case P_WORK:
            acc = work(acc + (uint64_t)i);
            line[i & 7] = acc;
            break;
        case P_WORK_RDTSC:
            acc = work(acc + (uint64_t)i);
            line[i & 7] = acc + rdtsc();
            break;
        case P_WORK_CK:
            acc = work(acc + (uint64_t)i);
            line[i & 7] = acc + ck_now_ns();
            break;
        case P_CLOCK: {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            acc += (uint64_t)ts.tv_nsec;
            break;
        }
        }
    }
    sink = acc;
    return (now_ns() - t0) / (double)n;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [iterations > 0]\n", argv[0]);
        return 2;
    }
    char model[512] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char buf[512];
        while (fgets(buf, sizeof buf, f) != NULL) {
            if (strncmp(buf, "model name", 10) == 0) {
                const char *c = strchr(buf, ':');
                snprintf(model, sizeof model, "%s", c != NULL ? c + 2 : buf);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        }
        fclose(f);
    }
    long q = syscall(SYS_membarrier, 0 /* MEMBARRIER_CMD_QUERY */, 0, 0);
    printf("cpu: %s\n", model);
    printf("membarrier: %s\n", q < 0 ? "not available" : (q & 8) ? "private expedited available"
                                                                  : "no private expedited");
    ck_init();
    double med[P_COUNT];
    for (int p = 0; p < P_COUNT; p++) {
        double v[RUNS];
        for (int r = 0; r < RUNS; r++)
            v[r] = run(p, n);
        qsort(v, RUNS, sizeof v[0], cmp);
        med[p] = v[RUNS / 2];
        printf("%-40s %8.2f ns per iteration (min %.2f max %.2f)%s\n", names[p],
               p == P_EMPTY ? med[p] : med[p] - med[P_EMPTY], (p == P_EMPTY ? v[0] : v[0] - med[P_EMPTY]),
               (p == P_EMPTY ? v[RUNS - 1] : v[RUNS - 1] - med[P_EMPTY]), p == P_EMPTY ? "" : ", minus the empty loop");
    }
    return 0;
}
