/*
 * bench_libs.c - the no-hook cost of an NVML and a cuBLAS call: the same
 * cheap query through a pointer from dlsym on the library's handle, run
 * directly and again with the shim preloaded (the pointer is then the shim's
 * wrapper: one load and an indirect jump). Built and run by the GPU check
 * 'universal bench' (tests/gpu/checks/universal.sh):
 *   bench_libs nvml|cublas [CALLS]   prints "<lib> ns_per_call <best of 7 rounds>"
 * No CUDA header needed: the few prototypes are declared here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

typedef int (*fn_void)(void);
typedef int (*fn_count)(unsigned *);
typedef int (*fn_create)(void **);
typedef int (*fn_mode)(void *, int *);

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : "nvml";
    long calls = argc > 2 ? atol(argv[2]) : 2000000;
    double best = 1e30;
    if (strcmp(lib, "nvml") == 0) {
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
        fn_void init = h ? (fn_void)dlsym(h, "nvmlInit_v2") : NULL;
        fn_count count = h ? (fn_count)dlsym(h, "nvmlDeviceGetCount_v2") : NULL;
        if (!init || !count || init() != 0) {
            fprintf(stderr, "bench_libs: no NVML\n");
            return 2;
        }
        unsigned n = 0;
        for (int r = 0; r < 7; r++) {
            double t0 = now_ns();
            for (long i = 0; i < calls; i++)
                count(&n);
            double t = (now_ns() - t0) / (double)calls;
            best = t < best ? t : best;
        }
    } else {
        void *h = dlopen("libcublas.so.13", RTLD_NOW);
        fn_create create = h ? (fn_create)dlsym(h, "cublasCreate_v2") : NULL;
        fn_mode mode = h ? (fn_mode)dlsym(h, "cublasGetPointerMode_v2") : NULL;
        void *handle = NULL;
        if (!create || !mode || create(&handle) != 0) {
            fprintf(stderr, "bench_libs: no cuBLAS (or no GPU)\n");
            return 2;
        }
        int m = 0;
        for (int r = 0; r < 7; r++) {
            double t0 = now_ns();
            for (long i = 0; i < calls; i++)
                mode(handle, &m);
            double t = (now_ns() - t0) / (double)calls;
            best = t < best ? t : best;
        }
    }
    printf("%s ns_per_call %.2f\n", lib, best);
    return 0;
}
