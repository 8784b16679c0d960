/*
 * memlimit_bench.c - cost of the quota on the allocation path: N cuMemAlloc/cuMemFree pairs (256 KiB) on
 * the real driver, timed; run by tests/gpu/checks/memlimit.sh with the shim alone and with the shim +
 * memlimit (a quota well above what the loop uses), interleaved, and compared by their medians.
 *   memlimit_bench N   prints 'pair_ns <nanoseconds per alloc+free pair>'
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    CUdevice d;
    CUcontext c;
    CUdeviceptr p;
    struct timespec a, b;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c))
        return 1;
    for (int i = 0; i < 1000; i++) {   /* warm the driver's own caches */
        if (cuMemAlloc(&p, 256 << 10) || cuMemFree(p))
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        if (cuMemAlloc(&p, 256 << 10) || cuMemFree(p))
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("pair_ns %.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
