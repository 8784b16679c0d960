/*
 * e2e_usage_libs.c - memory by library (memlimit, cushim usage --by-library): a program that allocates through
 * two shared libraries of its own and directly, frees one library's allocation itself, then holds:
 *
 *   e2e_usage_libs [N]   allocate (and launch N kernels on device 0), print "held", sleep until killed
 *
 * Device 0: libe2e_usage_a.so 3 x 1 MiB (cuMemAlloc; the program frees one: 2 MiB left), libe2e_usage_b.so
 * 2 MiB (cudaMalloc), the program 512 KiB; device 1: the program 256 KiB. run_memlimit_bylib.sh checks that
 * 'cushim usage' attributes each byte to the right one; with N, smlimit's busy time and kernel count show too
 * (the fake's simulated kernel durations, FAKE_CUDA_KERNEL_US).
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int e2e_usage_a_alloc(void **out, size_t n);
int e2e_usage_b_alloc(void **out, size_t n);

#define MiB (1024u * 1024u)

static int failures;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                                     \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 0;
    CUcontext ctx[2];
    CUdevice d;
    void *a[3] = {0}, *b = NULL;
    CUdeviceptr p0 = 0, p1 = 0;
    CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
    for (int i = 0; i < 2; i++) {
        CHECK(cuDeviceGet(&d, i) == CUDA_SUCCESS, "cuDeviceGet %d", i);
        CHECK(cuDevicePrimaryCtxRetain(&ctx[i], d) == CUDA_SUCCESS, "retain %d", i);
    }
    CHECK(cuCtxSetCurrent(ctx[0]) == CUDA_SUCCESS, "set current 0");
    for (int i = 0; i < 3; i++)
        CHECK(e2e_usage_a_alloc(&a[i], MiB) == 0, "library a: allocation %d", i);
    CHECK(e2e_usage_b_alloc(&b, 2 * MiB) == 0, "library b: allocation");
    CHECK(cuMemAlloc(&p0, MiB / 2) == CUDA_SUCCESS, "program: allocation on device 0");
    CHECK(cuCtxSetCurrent(ctx[1]) == CUDA_SUCCESS, "set current 1");
    CHECK(cuMemAlloc(&p1, MiB / 4) == CUDA_SUCCESS, "program: allocation on device 1");
    CHECK(cuCtxSetCurrent(ctx[0]) == CUDA_SUCCESS, "set current 0 again");
    /* freed by the program: credited to the library that allocated it */
    CHECK(cuMemFree((CUdeviceptr)(uintptr_t)a[1]) == CUDA_SUCCESS, "program: free of library a's allocation");
    if (launches > 0) {
        CUmodule mod;
        CUfunction fn;
        struct timespec beat = {0, 200 * 1000 * 1000};   /* smlimit publishes at its heartbeat (50 ms) */
        CHECK(cuModuleLoadData(&mod, "fake image") == CUDA_SUCCESS, "cuModuleLoadData");
        CHECK(cuModuleGetFunction(&fn, mod, "spin") == CUDA_SUCCESS, "cuModuleGetFunction");
        for (int i = 0; i < launches && !failures; i++)
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS, "launch %d", i);
        CHECK(cuCtxSynchronize() == CUDA_SUCCESS, "cuCtxSynchronize");
        nanosleep(&beat, NULL);
    }
    if (failures)
        return 1;
    printf("held\n");
    fflush(stdout);
    for (;;)
        pause();
}
