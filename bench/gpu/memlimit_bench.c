/*
 * memlimit_bench.c - cost of the quota on the allocation path: cuMemAlloc/cuMemFree pairs (256 KiB) on the
 * real driver, timed. Run by tests/gpu/checks/memlimit.sh, and against the fake driver by the ctests
 * memlimit_drivercalls and memlimit_bench_inproc (tests/e2e/run_memlimit_cost.sh).
 *
 *   memlimit_bench N
 *     prints 'pair_ns <ns per alloc+free pair>' (one process: the check runs it natively, with the shim alone
 *     and with the shim + memlimit, interleaved; between processes the driver's pair varies by microseconds)
 *   MEMLIMIT_BENCH_INPROC=BLOCKS memlimit_bench N
 *     also, in the same process, the pair through the functions the program linked (the shim's wrappers, with
 *     memlimit's hooks, when the shim is preloaded) against the pair through the driver's own functions, whose
 *     addresses are read from libcuda's ELF dynamic symbol table (elf_lookup.h: nothing the shim interposes is
 *     asked): BLOCKS pairs of blocks of N/BLOCKS pairs, alternately hooked-first and driver-first, through one
 *     loop function; prints
 *     'inproc hooked_med H driver_med D diff_med M diff_q1 A diff_q3 B diff_min X diff_max Y blocks K same_pointer S'
 *     (ns per pair; diff: hooked - driver of each block pair). Without the shim both are the same functions
 *     (same_pointer 1: a check of the lookup).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "elf_lookup.h"

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One loop for every measurement, never inlined: both paths timed through the same instructions. -1: failed. */
__attribute__((noinline)) static double run_block(alloc_fn a, free_fn f, int n)
{
    CUdeviceptr p;
    double t0 = now_ns();
    for (int i = 0; i < n; i++)
        if (a(&p, 256 << 10) != CUDA_SUCCESS || f(p) != CUDA_SUCCESS)
            return -1;
    return (now_ns() - t0) / n;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The value at fraction q of the sorted v[0..n) (nearest rank). */
static double quantile(const double *v, int n, double q)
{
    int k = (int)(q * (n - 1) + 0.5);
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static int inproc(int n, int blocks)
{
    alloc_fn ha = cuMemAlloc, da = (alloc_fn)elf_lookup("libcuda.so", "cuMemAlloc_v2");
    free_fn hf = cuMemFree, df = (free_fn)elf_lookup("libcuda.so", "cuMemFree_v2");
    int per = n / blocks > 0 ? n / blocks : 1;
    double *h = calloc((size_t)blocks, sizeof *h), *d = calloc((size_t)blocks, sizeof *d),
           *x = calloc((size_t)blocks, sizeof *x);
    int rc = 1;
    if (da == NULL || df == NULL) {
        fprintf(stderr, "memlimit_bench: cuMemAlloc_v2/cuMemFree_v2 not found in the .dynsym of the loaded libcuda\n");
        goto out;
    }
    if (h == NULL || d == NULL || x == NULL || run_block(ha, hf, per) < 0 || run_block(da, df, per) < 0)
        goto out;   /* both warm */
    for (int b = 0; b < blocks; b++) {
        if (b % 2 == 0) {
            h[b] = run_block(ha, hf, per);
            d[b] = run_block(da, df, per);
        } else {
            d[b] = run_block(da, df, per);
            h[b] = run_block(ha, hf, per);
        }
        if (h[b] < 0 || d[b] < 0)
            goto out;
        x[b] = h[b] - d[b];
    }
    qsort(h, (size_t)blocks, sizeof *h, cmp_d);
    qsort(d, (size_t)blocks, sizeof *d, cmp_d);
    qsort(x, (size_t)blocks, sizeof *x, cmp_d);
    printf("inproc hooked_med %.1f driver_med %.1f diff_med %.1f diff_q1 %.1f diff_q3 %.1f diff_min %.1f "
           "diff_max %.1f blocks %d same_pointer %d\n",
           quantile(h, blocks, 0.5), quantile(d, blocks, 0.5), quantile(x, blocks, 0.5), quantile(x, blocks, 0.25),
           quantile(x, blocks, 0.75), x[0], x[blocks - 1], blocks, ha == da && hf == df);
    rc = 0;
out:
    free(h), free(d), free(x);
    return rc;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    const char *ip = getenv("MEMLIMIT_BENCH_INPROC");
    int blocks = ip ? atoi(ip) : 0;
    CUdevice dev;
    CUcontext c;
    double t;
    if (n < 1 || blocks < 0) {
        fprintf(stderr, "usage: [MEMLIMIT_BENCH_INPROC=BLOCKS] memlimit_bench N\n");
        return 2;
    }
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&c, dev) || cuCtxSetCurrent(c))
        return 1;
    if (run_block(cuMemAlloc, cuMemFree, 1000) < 0)   /* warm the driver's own caches */
        return 1;
    if ((t = run_block(cuMemAlloc, cuMemFree, n)) < 0)
        return 1;
    printf("pair_ns %.1f\n", t);
    return blocks > 0 ? inproc(n, blocks) : 0;
}
