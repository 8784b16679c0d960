/*
 * bench_cpu.c - CPU cost of one interposed driver call (bench/cpu/run.sh runs it).
 *
 * USAGE: cushim_bench_cpu <path of libcuda.so.1> <iterations> <runs> [hook|hooktime|posttime|post|floor]
 *
 * Opens the driver by path and calls cuDriverGetVersion through the pointer
 * dlsym returns: the driver's own function when run plainly, the shim's
 * wrapper when run under LD_PRELOAD=libcushim.so. With 'hook', registers one
 * empty pre and one empty post hook on it first (through the host table of the
 * shim's exported cushim_host_get); 'hooktime' adds CUSHIM_HOOK_TIME (the host
 * reads the clock for call->t_enter_ns); 'posttime' registers the post hook alone, with
 * CUSHIM_HOOK_TIME (what a post-only recorder, the trace plugin on a query, costs the core); 'post' the post hook
 * alone without a clock (the core's part of a query the flight recorder times with the TSC itself); 'floor'
 * calls the driver through floor_call() below, without any shim (the least any recorder could cost).
 * Prints the latency of the first call (lazy resolution included), the median over 'runs' of the mean ns
 * per call, and the same in the calling thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID: without the time other threads, a trace writer, took its core), and
 * the calling thread's minor page faults per million calls over all runs (getrusage RUSAGE_THREAD: a
 * recorder writing into memory no one touched before pays them there) and voluntary context switches
 * per million calls (the thread blocked: a lock, the kernel's memory locks).
 *
 * BENCH_COLD_KB=N: before each call, write one byte in each 64-byte line of an N KiB buffer (an application's
 * work between its CUDA calls, evicting the shim's and the plugins' lines from the near caches), and time
 * each call alone with the TSC (lfence; rdtsc around it). Prints median_cold_ns_per_call: the median over
 * 'runs' of the mean TSC time of one call, converted with the TSC rate measured against CLOCK_MONOTONIC.
 * BENCH_COLD_BRANCHES=N: before each call (with or without BENCH_COLD_KB), N steps of an interpreter of 256
 * handlers jumping to each other at random (branchy() below): the branch predictors' state evicted, little memory.
 * Before timing, calls for BENCH_WARMUP_MS (50) ms untimed: the shim's clock is calibrated by then.
 * BENCH_COLD_CODE=N: before each call, run N KiB of straight-line code (cold_code() below): the instruction
 * caches evicted, not the data caches nor the branch predictors.
 * BENCH_COLD_STRIDE=B: one byte every B bytes of the buffer instead of every 64 (4160: one line in each page,
 * a different cache set each time - a program whose work between calls walks many pages evicts the TLB
 * entries of the shim's and the plugins' pages too).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>

#include "cushim/cushim.h"
#include "floor.h"

typedef int (*get_version_fn)(int *);

static int empty_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)call;
    (void)user;
    (void)slot;
    return 0;
}

static void empty_post(cushim_call *call, void *user, uint64_t *slot)
{
    (void)call;
    (void)user;
    (void)slot;
}

/* BENCH_COLD_BRANCHES: 'steps' jumps through an interpreter of 256 handlers, each with its own indirect jump
   to a pseudo-random next handler and a data-dependent conditional branch: a program's own work between its CUDA
   calls (Python's eval loop) as the branch predictors see it, touching almost no memory. */
#define BR_H(n)                                                          \
    h##n : x = x * 6364136223846793005ull + 1442695040888963407ull + n; \
    if ((x >> 40) & 1)                                                   \
        acc += x >> 50;                                                  \
    if (--steps <= 0)                                                    \
        goto done;                                                       \
    goto *tbl[(x >> 33) & 255];
#define BR_H4(n) BR_H(n##0) BR_H(n##1) BR_H(n##2) BR_H(n##3)
#define BR_H16(n) BR_H4(n##0) BR_H4(n##1) BR_H4(n##2) BR_H4(n##3)
#define BR_L(n) &&h##n,
#define BR_L4(n) BR_L(n##0) BR_L(n##1) BR_L(n##2) BR_L(n##3)
#define BR_L16(n) BR_L4(n##0) BR_L4(n##1) BR_L4(n##2) BR_L4(n##3)
static __attribute__((noinline)) uint64_t branchy(long steps, uint64_t x)
{
    static const void *const tbl[256] = { BR_L16(10) BR_L16(11) BR_L16(12) BR_L16(13) BR_L16(20) BR_L16(21)
                                          BR_L16(22) BR_L16(23) BR_L16(30) BR_L16(31) BR_L16(32) BR_L16(33)
                                          BR_L16(40) BR_L16(41) BR_L16(42) BR_L16(43) };
    uint64_t acc = 0;
    if (steps <= 0)
        return 0;
    goto *tbl[x & 255];
    BR_H16(10) BR_H16(11) BR_H16(12) BR_H16(13) BR_H16(20) BR_H16(21) BR_H16(22) BR_H16(23)
    BR_H16(30) BR_H16(31) BR_H16(32) BR_H16(33) BR_H16(40) BR_H16(41) BR_H16(42) BR_H16(43)
done:
    return acc + x;
}

/* BENCH_COLD_CODE: 'kb' KiB of straight-line machine code (x86-64: 4-byte 'add $1, %eax', then 'ret'), run
   before each call: a program's own code between its CUDA calls as the instruction caches see it (Python's eval
   loop and a framework's dispatcher run hundreds of KiB of code between two calls), evicting the shim's and the
   plugins' code lines from the first-level instruction cache and the decoded-instruction cache, with no branch
   but the call and its return. NULL where the architecture is not x86-64 or the mapping fails. */
static uint64_t (*cold_code(long kb))(void)
{
#if defined(__x86_64__)
    size_t n = (size_t)kb * 1024, i;
    unsigned char *p;
    if (kb <= 0)
        return NULL;
    p = mmap(NULL, n + 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    p[0] = 0x31, p[1] = 0xc0;   /* xor %eax, %eax */
    for (i = 2; i + 4 <= n; i += 4)
        p[i] = 0x83, p[i + 1] = 0xc0, p[i + 2] = 0x01, p[i + 3] = 0x90;   /* add $1, %eax; nop */
    p[i] = 0xc3;   /* ret */
    if (mprotect(p, n + 16, PROT_READ | PROT_EXEC) != 0) {
        munmap(p, n + 16);
        return NULL;
    }
    return (uint64_t(*)(void))(void *)p;
#else
    (void)kb;
    return NULL;
#endif
}

/* 'floor': the least a recorder of every call could cost (bench/floor.h), around the driver's function called
   directly, in this program's own code. */
static get_version_fn floor_real;

static __attribute__((noinline)) int floor_call(int *v)
{
    uint64_t t0 = bf_clock();
    int r = floor_real(v);
    uint64_t t1 = bf_clock();
    bf_record(1, t0, t1, (uint32_t)r, (uint64_t)(uintptr_t)v, (uint64_t)*v);
    return r;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The calling thread's CPU time: a writer thread preempting it on a busy machine does not count. */
static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* TSC ticks per ns, against CLOCK_MONOTONIC over ~50 ms. */
static double tsc_per_ns(void)
{
    double t0 = now_ns();
    uint64_t c0 = tsc();
    while (now_ns() - t0 < 50e6)
        ;
    return (double)(tsc() - c0) / (now_ns() - t0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s <libcuda.so.1 path> <iterations> <runs> [hook|hooktime|posttime|post|floor]\n",
                argv[0]);
        return 2;
    }
    long iters = atol(argv[2]), runs = atol(argv[3]);
    void *h = dlopen(argv[1], RTLD_NOW);
    if (h == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    get_version_fn volatile f = (get_version_fn)dlsym(h, "cuDriverGetVersion");
    if (f == NULL) {
        fprintf(stderr, "no cuDriverGetVersion in %s\n", argv[1]);
        return 1;
    }
    if (argc > 4 && (strcmp(argv[4], "hook") == 0 || strcmp(argv[4], "hooktime") == 0 ||
                     strcmp(argv[4], "posttime") == 0 || strcmp(argv[4], "post") == 0)) {
        cushim_host_get_fn get = (cushim_host_get_fn)dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME);
        const cushim_host *host = get ? get(CUSHIM_ABI_VERSION) : NULL;
        static const cushim_plugin_def def = { .size = sizeof def, .abi_version = CUSHIM_ABI_VERSION,
                                               .name = "bench" };
        cushim_plugin *self = NULL;
        uint64_t group;
        const cushim_api_info *api = host ? host->api_by_name("cuDriverGetVersion") : NULL;
        cushim_hook_spec spec = { .size = sizeof spec, .api_id = api ? api->id : 0,
                                  .pre = argv[4][0] == 'p' ? NULL : empty_pre, .post = empty_post,
                                  .flags = strcmp(argv[4], "hook") != 0 && strcmp(argv[4], "post") != 0
                                               ? CUSHIM_HOOK_TIME : 0 };
        if (api == NULL || host->plugin_register(&def, NULL, &self, NULL, 0) != CUSHIM_OK ||
            host->hooks_add(self, &spec, &group) != CUSHIM_OK) {
            fprintf(stderr, "hook: the shim is not preloaded\n");
            return 1;
        }
    }
    if (argc > 4 && strcmp(argv[4], "floor") == 0) {
        if (bf_init() != 0)
            return 1;
        floor_real = f;
        f = floor_call;
    }
    int v = 0;
    double t0 = now_ns();
    if (f(&v) != 0 || v == 0) {
        fprintf(stderr, "cuDriverGetVersion failed\n");
        return 1;
    }
    double first = now_ns() - t0;
    /* Warm-up, untimed, for BENCH_WARMUP_MS (50) ms: the shim's clock runs on clock_gettime for its first 20 ms of
       use while it measures the TSC's rate (runtime/clock.c), and a run shorter than that would time a timed hook
       with the slow clock (the figures of cold.sh before 2026-12-01 did: 20,000 calls a run) */
    {
        const char *w = getenv("BENCH_WARMUP_MS");
        double until = now_ns() + (w ? atof(w) : 50.0) * 1e6;
        while (now_ns() < until)
            for (int i = 0; i < 1000; i++)
                f(&v);
    }
    double *per = calloc((size_t)(runs > 0 ? runs : 1), sizeof *per);
    double *cpu = calloc((size_t)(runs > 0 ? runs : 1), sizeof *cpu);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_THREAD, &ru0);
    for (long r = 0; r < runs; r++) {
        double t = now_ns(), c = thread_cpu_ns();
        for (long i = 0; i < iters; i++)
            f(&v);
        per[r] = (now_ns() - t) / (double)(iters > 0 ? iters : 1);
        cpu[r] = (thread_cpu_ns() - c) / (double)(iters > 0 ? iters : 1);
    }
    getrusage(RUSAGE_THREAD, &ru1);
    {
        const char *ck = getenv("BENCH_COLD_KB"), *cs = getenv("BENCH_COLD_STRIDE"),
                   *cb = getenv("BENCH_COLD_BRANCHES"), *cc = getenv("BENCH_COLD_CODE");
        long kb = ck ? atol(ck) : 0, stride = cs ? atol(cs) : 64, br = cb ? atol(cb) : 0, code_kb = cc ? atol(cc) : 0;
        uint64_t (*code)(void) = cold_code(code_kb);
        static uint64_t br_sink;
        if (stride < 1)
            stride = 64;
        if (code_kb > 0 && code == NULL) {
            fprintf(stderr, "BENCH_COLD_CODE: no executable mapping here (x86-64 only)\n");
            return 1;
        }
        if ((kb > 0 || br > 0 || code != NULL) && runs > 0) {
            size_t n = (size_t)kb * 1024;
            volatile unsigned char *buf = calloc(n ? n : 1, 1);
            double *cold = calloc((size_t)runs, sizeof *cold), rate = tsc_per_ns();
            if (buf == NULL || cold == NULL)
                return 1;
            for (long r = 0; r < runs; r++) {
                uint64_t acc = 0;
                for (long i = 0; i < iters; i++) {
                    for (size_t k = 0; k < n; k += (size_t)stride)
                        buf[k]++;
                    br_sink += branchy(br, br_sink + (uint64_t)i);
                    if (code != NULL)
                        br_sink += code();
                    uint64_t c0 = tsc();
                    f(&v);
                    acc += tsc() - c0;
                }
                cold[r] = (double)acc / rate / (double)(iters > 0 ? iters : 1);
            }
            qsort(cold, (size_t)runs, sizeof *cold, cmp_double);
            printf("cold_kb\t%ld\ncold_branches\t%ld\ncold_code_kb\t%ld\nmedian_cold_ns_per_call\t%.3f\n", kb, br,
                   code_kb, cold[runs / 2]);
            free((void *)buf);
            free(cold);
        }
    }
    qsort(per, (size_t)runs, sizeof *per, cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    printf("first_call_ns\t%.0f\n", first);
    printf("median_ns_per_call\t%.3f\n", runs > 0 ? per[runs / 2] : 0.0);
    printf("median_thread_cpu_ns_per_call\t%.3f\n", runs > 0 ? cpu[runs / 2] : 0.0);
    printf("thread_minflt_per_mcall\t%.1f\n",
           iters > 0 && runs > 0 ? (double)(ru1.ru_minflt - ru0.ru_minflt) * 1e6 / ((double)iters * (double)runs) : 0.0);
    printf("thread_waits_per_mcall\t%.1f\n",   /* voluntary context switches: the thread blocked */
           iters > 0 && runs > 0 ? (double)(ru1.ru_nvcsw - ru0.ru_nvcsw) * 1e6 / ((double)iters * (double)runs) : 0.0);
    free(per);
    free(cpu);
    return 0;
}
