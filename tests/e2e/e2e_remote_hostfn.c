/*
 * e2e_remote_hostfn.c - host functions end to end (run_remote_hostfn.sh, docs/remote.md "Host functions"):
 *
 *   order [KERNEL_US]  two streams, each round: a memset and a kernel launch (both batched by the remoting), a
 *                      copy back into a host buffer of the round's own, then a host function on stream 0
 *                      (cuLaunchHostFunc) and a stream callback on stream 1 (cuStreamAddCallback), interleaved;
 *                      then the per-thread default stream's forms (_ptsz) and the legacy stream. Each function
 *                      checks that its buffer holds what its stream's copies produced and logs itself; the log
 *                      (the order of the calls, each one's data and status) is printed, the same locally and
 *                      remotely. KERNEL_US (the server's FAKE_CUDA_KERNEL_US, remote only): each function must
 *                      start no earlier than KERNEL_US after the launch before it on its stream (it ran after the
 *                      stream drained, not when the call was made). On a real driver functions of different
 *                      streams may run in another order than they were enqueued: compare per stream
 *                      (tests/gpu/checks/remotehostfn.sh).
 *   null               a NULL function or callback, and a callback with flags, are CUDA_ERROR_INVALID_VALUE.
 *   status             the server's cuStreamSynchronize fails (a server-side faultinject rule): the callback gets
 *                      its error as status and cuStreamAddCallback returns CUDA_SUCCESS; cuLaunchHostFunc returns
 *                      the error and its function is not called.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                      \
    do {                                                                           \
        CUresult r_ = (x);                                                         \
        if (r_ != CUDA_SUCCESS) {                                                  \
            fprintf(stderr, "e2e_remote_hostfn: %s: %d (line %d)\n", #x, (int)r_, __LINE__); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* the per-thread default stream's exports, as nvcc's --default-stream per-thread code calls them */
CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *data);
CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *data, unsigned int flags);

#define ROUNDS 6
#define WORDS 1024

typedef struct rec {
    int stream, round;
    unsigned expect;
    unsigned *buf;
    double launched_ms;   /* when the launch before it on its stream was made */
    double ran_ms;
} rec;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192];
static size_t log_len;
static int late;   /* functions that ran before their stream's kernel could have ended */
static double kernel_ms;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void note(const rec *r, const char *form, int status)
{
    int ok = 1;
    for (int i = 0; r->buf != NULL && i < WORDS; i++)
        ok &= r->buf[i] == r->expect;
    pthread_mutex_lock(&log_lock);
    if (r->launched_ms > 0 && r->ran_ms < r->launched_ms + kernel_ms)
        late++;
    log_len += (size_t)snprintf(log_text + log_len, sizeof log_text - log_len, "%s stream %d round %d: data %s, "
                                "status %d\n", form, r->stream, r->round, ok ? "as copied" : "WRONG", status);
    pthread_mutex_unlock(&log_lock);
}

static void CUDA_CB host_fn(void *p)
{
    rec *r = p;
    r->ran_ms = now_ms();
    note(r, "hostfn", 0);
}

static void CUDA_CB stream_cb(CUstream s, CUresult status, void *p)
{
    rec *r = p;
    (void)s;
    r->ran_ms = now_ms();
    note(r, "callback", (int)status);
}

static CUcontext setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    return ctx;
}

static int order(void)
{
    static unsigned bufs[2][ROUNDS + 1][WORDS];
    static rec recs[2][ROUNDS + 1];
    CUstream s[2];
    CUdeviceptr d[2];
    CUmodule mod;
    CUfunction fn;
    setup();
    /* a real kernel (the GPU check runs this program on a driver too; the fake loads any image) */
    CK(cuModuleLoadData(&mod, ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry noop()\n{\n\tret;\n}\n"));
    CK(cuModuleGetFunction(&fn, mod, "noop"));
    for (int k = 0; k < 2; k++) {
        CK(cuStreamCreate(&s[k], CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc(&d[k], WORDS * sizeof(unsigned)));
    }
    for (int i = 0; i < ROUNDS; i++)
        for (int k = 0; k < 2; k++) {
            rec *r = &recs[k][i];
            *r = (rec){ .stream = k, .round = i, .expect = 1000u * (k + 1) + i, .buf = bufs[k][i] };
            CK(cuMemsetD32Async(d[k], r->expect, WORDS, s[k]));
            r->launched_ms = now_ms();
            CK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s[k], NULL, NULL));
            CK(cuMemcpyDtoHAsync(r->buf, d[k], WORDS * sizeof(unsigned), s[k]));
            if (k == 0)
                CK(cuLaunchHostFunc(s[k], host_fn, r));
            else
                CK(cuStreamAddCallback(s[k], stream_cb, r, 0));
        }
    /* the per-thread default stream (_ptsz, as nvcc's --default-stream per-thread code calls) and the legacy one */
    rec *pt = &recs[0][ROUNDS], *legacy = &recs[1][ROUNDS];
    *pt = (rec){ .stream = 2, .round = 0, .expect = 7, .buf = bufs[0][ROUNDS] };
    *legacy = (rec){ .stream = 3, .round = 0, .expect = 8, .buf = bufs[1][ROUNDS] };
    CK(cuMemsetD32Async_ptsz(d[0], 7, WORDS, CU_STREAM_PER_THREAD));
    CK(cuMemcpyDtoHAsync_v2_ptsz(pt->buf, d[0], WORDS * sizeof(unsigned), CU_STREAM_PER_THREAD));
    CK(cuLaunchHostFunc_ptsz(CU_STREAM_PER_THREAD, host_fn, pt));
    CK(cuStreamAddCallback_ptsz(CU_STREAM_PER_THREAD, stream_cb, pt, 0));
    CK(cuMemsetD32Async(d[1], 8, WORDS, NULL));
    CK(cuMemcpyDtoHAsync(legacy->buf, d[1], WORDS * sizeof(unsigned), NULL));
    CK(cuLaunchHostFunc(NULL, host_fn, legacy));
    CK(cuCtxSynchronize());
    fputs(log_text, stdout);
    if (kernel_ms > 0)
        printf("late: %d\n", late);
    return 0;
}

static void CUDA_CB never(void *p)
{
    (void)p;
    printf("a host function ran that must not\n");
}

static void CUDA_CB never_cb(CUstream s, CUresult status, void *p)
{
    (void)s, (void)status, (void)p;
    printf("a callback ran that must not\n");
}

static int null_fn(void)
{
    CUstream s;
    setup();
    CK(cuStreamCreate(&s, 0));
    printf("cuLaunchHostFunc(NULL fn): %d\n", (int)cuLaunchHostFunc(s, NULL, NULL));
    printf("cuStreamAddCallback(NULL callback): %d\n", (int)cuStreamAddCallback(s, NULL, NULL, 0));
    printf("cuStreamAddCallback(flags 1): %d\n", (int)cuStreamAddCallback(s, never_cb, NULL, 1));
    CK(cuStreamSynchronize(s));
    return 0;
}

static int status(void)
{
    CUstream s;
    rec r = { .stream = 0, .round = 0 };
    setup();
    CK(cuStreamCreate(&s, 0));
    printf("cuStreamAddCallback: %d\n", (int)cuStreamAddCallback(s, stream_cb, &r, 0));
    printf("cuLaunchHostFunc: %d\n", (int)cuLaunchHostFunc(s, never, NULL));
    fputs(log_text, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "order";
    if (strcmp(mode, "order") == 0) {
        kernel_ms = argc > 2 ? atof(argv[2]) / 1000.0 : 0;
        return order();
    }
    if (strcmp(mode, "null") == 0)
        return null_fn();
    if (strcmp(mode, "status") == 0)
        return status();
    fprintf(stderr, "usage: e2e_remote_hostfn order [KERNEL_US] | null | status\n");
    return 2;
}
