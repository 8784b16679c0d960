/*
 * bench_remote_calls.c - what a forwarded call costs (bench/remote/run.sh): ROUNDS synchronous calls of
 * cuStreamQuery (a round trip, never cached) and cuDeviceGetCount (an immutable query: answered from the
 * client's cache after the first), empty kernel launches (ROUNDS launches then cuCtxSynchronize, 15 times:
 * the time per launch), and COPIES cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2 of SIZE bytes; prints the median and
 * 10th/90th percentiles. Run it against the fake driver locally and through the remote plugin to cushim-serve.
 * With 'pinned' the host buffer is pinned memory (cuMemAllocHost): locally the DMA's own speed; through
 * cushim-serve on the same host a region shared with the back end (zero copy, docs/remote.md "Shared memory").
 * With 'thread' the synchronous round trip is measured on a second thread too (a back end runs a client's threads
 * after the first on worker threads: a hand-off each call).
 * With 'step LAUNCHES SPIN_US' only ROUNDS training-like steps are timed: LAUNCHES launches of a kernel that
 * spins SPIN_US microseconds on the GPU (%globaltimer; 0: returns at once), then cuStreamSynchronize. A
 * launch-bound step is 'step 100 0'; a compute-bound one e.g. 'step 10 5000' (50 ms of kernels). The fake
 * driver runs no kernel: its FAKE_CUDA_KERNEL_US=N makes every launch take N us (set it where the driver is:
 * the program locally, cushim-serve remotely).
 *   bench_remote_calls [ROUNDS=20000] [SIZE=1048576] [COPIES=ROUNDS/20] [pinned|thread|step LAUNCHES SPIN_US]
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct bench_thread {
    CUcontext ctx;
    double *t;
    int rounds;
};

/* The synchronous round trips again, from another thread. */
static void *bench_queries(void *p)
{
    struct bench_thread *a = p;
    cuCtxSetCurrent(a->ctx);
    for (int i = 0; i < a->rounds; i++) {
        double t0 = now_us();
        cuStreamQuery(NULL);
        a->t[i] = now_us() - t0;
    }
    return NULL;
}

static void report(const char *what, double *t, int n, size_t bytes)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%-22s median %8.2f us (p10 %8.2f, p90 %8.2f)", what, t[n / 2], t[n / 10], t[n * 9 / 10]);
    if (bytes)
        printf("  %.2f GB/s", (double)bytes / (t[n / 2] * 1e3));
    printf("\n");
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000, count = 0;
    size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 1 << 20;
    int big = argc > 3 ? atoi(argv[3]) : rounds / 20 > 0 ? rounds / 20 : 1;
    int pinned = argc > 4 && strcmp(argv[4], "pinned") == 0, thread = argc > 4 && strcmp(argv[4], "thread") == 0;
    int step = argc > 6 && strcmp(argv[4], "step") == 0;
    static const char ptx[] = ".version 9.0\n.target sm_75\n.address_size 64\n"
                              ".visible .entry empty(\n\t.param .u32 empty_param_0\n)\n{\n\tret;\n}\n"
                              ".visible .entry spin(\n\t.param .u64 spin_param_0\n)\n{\n"
                              "\t.reg .pred %p<2>;\n\t.reg .b64 %rd<5>;\n"
                              "\tld.param.u64 %rd1, [spin_param_0];\n\tmov.u64 %rd2, %globaltimer;\n"
                              "$L_spin:\n\tmov.u64 %rd3, %globaltimer;\n\tsub.s64 %rd4, %rd3, %rd2;\n"
                              "\tsetp.lt.s64 %p1, %rd4, %rd1;\n\t@%p1 bra $L_spin;\n\tret;\n}\n";
    CUmodule mod;
    CUfunction fn, spin;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr d;
    char *host = NULL;
    double *t = malloc(sizeof *t * (size_t)rounds);
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemAlloc(&d, size) || cuModuleLoadData(&mod, ptx) || cuModuleGetFunction(&fn, mod, "empty") ||
        cuModuleGetFunction(&spin, mod, "spin") ||
        (pinned ? cuMemAllocHost((void **)&host, size) : (host = calloc(1, size)) == NULL)) {
        fprintf(stderr, "bench_remote_calls: set-up failed\n");
        return 1;
    }
    memset(host, 1, size);
    if (big > rounds)
        t = realloc(t, sizeof *t * (size_t)big);
    if (step) {   /* LAUNCHES spinning kernels, then a synchronisation: ROUNDS times, after one to warm up */
        int launches = atoi(argv[5]);
        unsigned long long ns = strtoull(argv[6], NULL, 0) * 1000ull;
        void *sargs[] = { &ns };
        char what[64];
        for (int r = -1; r < rounds; r++) {
            double t0 = now_us();
            for (int i = 0; i < launches; i++)
                cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, NULL, sargs, NULL);
            if (cuStreamSynchronize(NULL) != CUDA_SUCCESS) {
                fprintf(stderr, "bench_remote_calls: the step's launches failed\n");
                return 1;
            }
            if (r >= 0)
                t[r] = now_us() - t0;
        }
        snprintf(what, sizeof what, "step %dx%s us", launches, argv[6]);
        report(what, t, rounds, 0);
        return 0;
    }
    for (int i = 0; i < rounds; i++) {
        double t0 = now_us();
        cuStreamQuery(NULL);
        t[i] = now_us() - t0;
    }
    report("cuStreamQuery", t, rounds, 0);
    if (thread) {
        pthread_t th;
        struct bench_thread a = { .ctx = ctx, .t = t, .rounds = rounds };
        if (pthread_create(&th, NULL, bench_queries, &a) != 0 || pthread_join(th, NULL) != 0)
            return 1;
        report("cuStreamQuery (thread 2)", t, rounds, 0);
    }
    for (int i = 0; i < rounds; i++) {
        double t0 = now_us();
        cuDeviceGetCount(&count);
        t[i] = now_us() - t0;
    }
    report("cuDeviceGetCount", t, rounds, 0);
    int arg = 0, reps = 15;
    void *args[] = { &arg };
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        for (int i = 0; i < rounds; i++)
            cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        if (cuCtxSynchronize() != CUDA_SUCCESS) {
            fprintf(stderr, "bench_remote_calls: the launches failed\n");
            return 1;
        }
        t[r] = (now_us() - t0) / rounds;
    }
    report("cuLaunchKernel (empty)", t, reps, 0);
    const char *hto = pinned ? "cuMemcpyHtoD pinned" : "cuMemcpyHtoD", *dto = pinned ? "cuMemcpyDtoH pinned" : "cuMemcpyDtoH";
    CUresult bad = CUDA_SUCCESS;
    for (int i = 0; i < big; i++) {
        double t0 = now_us();
        CUresult r = cuMemcpyHtoD(d, host, size);
        t[i] = now_us() - t0;
        bad = bad ? bad : r;
    }
    if (bad != CUDA_SUCCESS)
        printf("cuMemcpyHtoD           of %zu bytes failed: %d\n", size, (int)bad);
    else
        report(hto, t, big, size);
    for (int i = 0; i < big; i++) {
        double t0 = now_us();
        CUresult r = cuMemcpyDtoH(host, d, size);
        t[i] = now_us() - t0;
        bad = bad ? bad : r;
    }
    if (bad != CUDA_SUCCESS)
        printf("cuMemcpyDtoH           of %zu bytes failed: %d\n", size, (int)bad);
    else
        report(dto, t, big, size);
    cuMemFree(d);
    if (pinned)
        cuMemFreeHost(host);
    else
        free(host);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
