/*
 * bench_memlimit.c - cost of the memlimit quota on the allocation path, on the CPU
 * (bench/cpu/memlimit.sh runs it under the shim with and without the plugin).
 *
 * USAGE: cushim_bench_memlimit <path of libcuda.so.1> <pairs> <rounds> [vmm]
 *
 * Opens the driver by path, makes device 0's primary context current, and
 * times 'pairs' cuMemAlloc_v2(256 bytes) + cuMemFree_v2 pairs through the
 * pointers dlsym returns (the shim's wrappers when preloaded); with 'vmm',
 * cuMemCreate(2 MiB of device 0's physical memory) + cuMemRelease pairs. Prints
 * the median over 'rounds' of the mean ns per pair: 'pair_ns N'.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*init_fn)(unsigned);
typedef int (*dev_get_fn)(int *, int);
typedef int (*retain_fn)(void **, int);
typedef int (*set_fn)(void *);
typedef int (*alloc_fn)(uint64_t *, size_t);
typedef int (*free_fn)(uint64_t);
typedef int (*create_fn)(uint64_t *, size_t, const CUmemAllocationProp *, unsigned long long);

/* One pair: cuMemAlloc_v2 + cuMemFree_v2 of 256 bytes, or (create != NULL) cuMemCreate + cuMemRelease of 2 MiB. */
static alloc_fn al;
static free_fn fr;
static create_fn cr;
static CUmemAllocationProp prop;

static int pair(void)
{
    uint64_t p = 0;
    if (cr != NULL)
        return cr(&p, 2u << 20, &prop, 0) || fr(p);
    return al(&p, 256) || fr(p);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    void *h;
    int dev = 0, n, rounds;
    void *ctx = NULL;
    double *m;
    if (argc != 4 && !(argc == 5 && argv[4][0] == 'v'))
        return 2;
    n = atoi(argv[2]);
    rounds = atoi(argv[3]);
    if (n <= 0 || rounds <= 0 || (m = calloc((size_t)rounds, sizeof *m)) == NULL)
        return 2;
    if ((h = dlopen(argv[1], RTLD_NOW)) == NULL)
        return 1;
    init_fn init = (init_fn)dlsym(h, "cuInit");
    dev_get_fn dget = (dev_get_fn)dlsym(h, "cuDeviceGet");
    retain_fn retain = (retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
    set_fn set = (set_fn)dlsym(h, "cuCtxSetCurrent");
    al = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
    fr = (free_fn)dlsym(h, argc == 5 ? "cuMemRelease" : "cuMemFree_v2");
    if (argc == 5 && (cr = (create_fn)dlsym(h, "cuMemCreate")) == NULL)
        return 1;
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    if (!init || !dget || !retain || !set || !al || !fr || init(0) || dget(&dev, 0) || retain(&ctx, dev) || set(ctx))
        return 1;
    for (int i = 0; i < (cr != NULL ? 100 : 10000); i++)   /* a VMM pair costs the fake a 2 MiB calloc */
        if (pair())
            return 1;
    for (int r = 0; r < rounds; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < n; i++)
            if (pair())
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &b);
        m[r] = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
    }
    qsort(m, (size_t)rounds, sizeof *m, cmp);
    printf("pair_ns %.1f\n", m[rounds / 2]);
    free(m);
    return 0;
}
