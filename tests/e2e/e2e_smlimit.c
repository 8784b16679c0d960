/*
 * e2e_smlimit.c - a launch loop for the smlimit end-to-end test (run_smlimit.sh),
 * against the fake driver with simulated kernel durations (FAKE_CUDA_KERNEL_US).
 *
 *   e2e_smlimit N [threads]
 *   e2e_smlimit now            CLOCK_MONOTONIC in ms, the fake's kernel log's clock (no CUDA call)
 *
 * Launches N kernels on one stream (alternating cuLaunchKernel and
 * cuLaunchKernelEx; with 'threads', two threads each launch N/2 on their own
 * stream), brackets them with timing events and prints
 *   share <GPU time of the kernels / elapsed GPU time between the events>
 * where both come from the fake's simulated timeline, i.e. how much of the
 * (fake) GPU's time the loop got. Without a limiter the kernels run back to
 * back: share close to 1.
 * E2E_SML_DEVICE=D: run on CUDA ordinal D (default 0).
 * E2E_SML_GAP_US=G: after each launch, wait for it (cuStreamSynchronize) and
 * sleep G us - a serving loop's requests (run_smlimit.sh 'priolatency').
 * E2E_SML_SHOW_MPS=1: after cuInit (the plugins loaded), print
 *   mps <CUDA_MPS_CLIENT_PRIORITY, or (unset)>   (run_smlimit.sh 'mpsprio').
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                       \
    do {                                                                               \
        CUresult r_ = (x);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "e2e_smlimit: %s failed: %d (line %d)\n", #x, (int)r_, __LINE__); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static CUcontext ctx;
static CUfunction fn;

struct job {
    int n;
    CUstream s;
};

static long gap_us = -1;   /* E2E_SML_GAP_US: synchronize and sleep after each launch */

static void *launcher(void *arg)
{
    struct job *j = arg;
    CHECK(cuCtxSetCurrent(ctx));
    for (int i = 0; i < j->n; i++) {
        if (i % 2 == 0) {
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, j->s, NULL, NULL));
        } else {
            CUlaunchConfig c;
            memset(&c, 0, sizeof c);
            c.gridDimX = c.gridDimY = c.gridDimZ = 1;
            c.blockDimX = 32;
            c.blockDimY = c.blockDimZ = 1;
            c.hStream = j->s;
            CHECK(cuLaunchKernelEx(&c, fn, NULL, NULL));
        }
        if (gap_us >= 0) {
            struct timespec ts = {gap_us / 1000000, (gap_us % 1000000) * 1000};
            CHECK(cuStreamSynchronize(j->s));
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, threads = argc > 2 && !strcmp(argv[2], "threads");
    const char *us = getenv("FAKE_CUDA_KERNEL_US");
    double kernel_ms = us ? atof(us) / 1000.0 : 0;
    CUdevice dev;
    CUmodule mod;
    CUevent a, b;
    struct job jobs[2];
    float ms = 0;
    if (argc > 1 && !strcmp(argv[1], "now")) {   /* marks a moment of the test in the kernel log's clock */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        printf("%.3f\n", now.tv_sec * 1e3 + now.tv_nsec / 1e6);
        return 0;
    }
    if (getenv("E2E_SML_GAP_US") != NULL)
        gap_us = atol(getenv("E2E_SML_GAP_US"));
    if (n <= 0 || kernel_ms <= 0) {
        fprintf(stderr, "usage: FAKE_CUDA_KERNEL_US=US e2e_smlimit N [threads]\n");
        return 2;
    }
    CHECK(cuInit(0));
    if (getenv("E2E_SML_SHOW_MPS") != NULL) {
        const char *m = getenv("CUDA_MPS_CLIENT_PRIORITY");
        printf("mps %s\n", m != NULL ? m : "(unset)");
    }
    CHECK(cuDeviceGet(&dev, getenv("E2E_SML_DEVICE") != NULL ? atoi(getenv("E2E_SML_DEVICE")) : 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, "fake image"));
    CHECK(cuModuleGetFunction(&fn, mod, "spin"));
    for (int t = 0; t < 2; t++) {
        CHECK(cuStreamCreate(&jobs[t].s, CU_STREAM_NON_BLOCKING));
        jobs[t].n = threads ? n / 2 : (t == 0 ? n : 0);
    }
    CHECK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    CHECK(cuEventRecord(a, jobs[0].s));
    if (threads) {
        pthread_t th;
        if (pthread_create(&th, NULL, launcher, &jobs[1]) != 0)
            return 1;
        launcher(&jobs[0]);
        pthread_join(th, NULL);
    } else {
        launcher(&jobs[0]);
    }
    CHECK(cuCtxSynchronize());
    CHECK(cuEventRecord(b, jobs[0].s));
    CHECK(cuEventSynchronize(b));
    CHECK(cuEventElapsedTime(&ms, a, b));
    /* with two streams the fake runs them concurrently: the busy time is the longer one */
    double busy = (threads ? n / 2 : n) * kernel_ms;
    printf("share %.4f\n", ms > 0 ? busy / ms : 0.0);
    return 0;
}
