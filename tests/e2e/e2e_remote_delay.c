/*
 * e2e_remote_delay.c - a client for the remote plugin's delay_us (run_remote_delay.sh): synchronous round trips
 * timed one by one, and training-like steps of batched launches, against the fake driver through cushim-serve.
 *   e2e_remote_delay sync N           N cuStreamQuery, each timed: prints "sync N min_us MIN"
 *   e2e_remote_delay steps S L        S times: L empty launches, then cuStreamSynchronize: prints "steps S L"
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                                  \
    do {                                                                                                       \
        CUresult r_ = (x);                                                                                     \
        if (r_ != CUDA_SUCCESS) {                                                                              \
            fprintf(stderr, "e2e_remote_delay: %s failed: %d\n", #x, (int)r_);                                 \
            return 1;                                                                                          \
        }                                                                                                      \
    } while (0)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    static const char ptx[] = ".version 9.0\n.target sm_75\n.address_size 64\n"
                              ".visible .entry empty(\n\t.param .u32 empty_param_0\n)\n{\n\tret;\n}\n";
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    if (argc < 3 || (strcmp(argv[1], "sync") != 0 && (strcmp(argv[1], "steps") != 0 || argc < 4))) {
        fprintf(stderr, "usage: e2e_remote_delay sync N | steps S L\n");
        return 2;
    }
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    if (strcmp(argv[1], "sync") == 0) {
        int n = atoi(argv[2]);
        double min = 1e30;
        for (int i = 0; i < n; i++) {
            double t0 = now_us();
            CK(cuStreamQuery(NULL));
            double t = now_us() - t0;
            min = t < min ? t : min;
        }
        printf("sync %d min_us %.0f\n", n, min);
    } else {
        int steps = atoi(argv[2]), launches = atoi(argv[3]), arg = 0;
        void *args[] = { &arg };
        CK(cuModuleLoadData(&mod, ptx));
        CK(cuModuleGetFunction(&fn, mod, "empty"));
        for (int s = 0; s < steps; s++) {
            for (int i = 0; i < launches; i++)
                CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
            CK(cuStreamSynchronize(NULL));
        }
        CK(cuModuleUnload(mod));
        printf("steps %d %d\n", steps, launches);
    }
    CK(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
