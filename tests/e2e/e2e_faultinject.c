/*
 * e2e_faultinject.c - a program for the faultinject end-to-end tests (run_faultinject.sh): it makes
 * the CUDA calls its arguments name, in order, and prints one line per step with the result of each
 * call, so that a test can compare which calls failed, and how, with what its rules say.
 *
 *   e2e_faultinject STEP...      STEP is one of
 *     init            cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent: "init R"
 *                     (R the first result that is not CUDA_SUCCESS, else 0)
 *     alloc N         N x cuMemAlloc (cuMemAlloc_v2) of 256 bytes: "alloc R1 ... RN"
 *     allochost N     N x cuMemAllocHost (cuMemAllocHost_v2): "allochost R1 ... RN"
 *     sync N          N x cuCtxSynchronize: "sync R1 ... RN"
 *     cudamalloc N    N x cudaMalloc (the runtime, which calls cuMemAlloc_v2): "cudamalloc R1 ... RN"
 *     errname R       cuGetErrorName(R): "errname NAME" or "errname ? RESULT"
 *     sleep MS        sleep MS milliseconds (no output)
 *     threads T N     T threads, N cuMemAlloc each: "threads F" (F calls that failed)
 * Results are printed as decimal numbers. Exit status 0, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void step_init(void)
{
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGet(&dev, 0);
    if (r == CUDA_SUCCESS)
        r = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(ctx);
    printf("init %d\n", (int)r);
}

/* Each call's result; the allocations are kept (the fake frees them at exit). */
static void step_repeat(const char *what, int n)
{
    printf("%s", what);
    for (int i = 0; i < n; i++) {
        int r;
        if (!strcmp(what, "alloc")) {
            CUdeviceptr p = 0;
            r = (int)cuMemAlloc(&p, 256);
        } else if (!strcmp(what, "allochost")) {
            void *p = NULL;
            r = (int)cuMemAllocHost(&p, 64);
        } else if (!strcmp(what, "sync")) {
            r = (int)cuCtxSynchronize();
        } else {
            void *p = NULL;
            r = (int)cudaMalloc(&p, 256);
        }
        printf(" %d", r);
    }
    printf("\n");
}

static int fi_thread_calls;

static void *step_thread(void *arg)
{
    long failed = 0;
    CUcontext ctx = arg;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return (void *)(long)-1;
    for (int i = 0; i < fi_thread_calls; i++) {
        CUdeviceptr p = 0;
        failed += cuMemAlloc(&p, 64) != CUDA_SUCCESS;
    }
    return (void *)failed;
}

static void step_threads(int t, int n)
{
    pthread_t th[64];
    CUcontext ctx = NULL;
    long failed = 0;
    if (t < 1 || t > 64 || cuCtxGetCurrent(&ctx) != CUDA_SUCCESS) {
        printf("threads bad\n");
        return;
    }
    fi_thread_calls = n;
    for (int i = 0; i < t; i++)
        if (pthread_create(&th[i], NULL, step_thread, ctx) != 0) {
            printf("threads bad\n");
            return;
        }
    for (int i = 0; i < t; i++) {
        void *v;
        pthread_join(th[i], &v);
        failed += (long)v;
    }
    printf("threads %ld\n", failed);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int n = i + 1 < argc ? atoi(argv[i + 1]) : -1;
        if (!strcmp(s, "init")) {
            step_init();
            continue;
        }
        if (n < 0) {
            fprintf(stderr, "e2e_faultinject: step '%s' needs a number\n", s);
            return 2;
        }
        i++;
        if (!strcmp(s, "alloc") || !strcmp(s, "allochost") || !strcmp(s, "sync") || !strcmp(s, "cudamalloc")) {
            step_repeat(s, n);
        } else if (!strcmp(s, "errname")) {
            const char *name = NULL;
            CUresult r = cuGetErrorName((CUresult)n, &name);
            if (r == CUDA_SUCCESS && name)
                printf("errname %s\n", name);
            else
                printf("errname ? %d\n", (int)r);
        } else if (!strcmp(s, "sleep")) {
            struct timespec ts = {n / 1000, (long)(n % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        } else if (!strcmp(s, "threads")) {
            int per = i + 1 < argc ? atoi(argv[++i]) : 0;
            step_threads(n, per);
        } else {
            fprintf(stderr, "e2e_faultinject: unknown step '%s'\n", s);
            return 2;
        }
    }
    return 0;
}
