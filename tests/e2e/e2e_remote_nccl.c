/*
 * e2e_remote_nccl.c - one rank of an NCCL program as torch.distributed's NCCL back end makes it (docs/remote.md,
 * "NCCL"): run as NRANKS processes locally on the fakes and as NRANKS clients of one cushim-serve
 * (run_remote_nccl.sh), each rank must print the same.
 *
 *   usage: e2e_remote_nccl RANK NRANKS IDFILE
 *
 * Rank 0 asks for the unique id and writes it to IDFILE (written whole, then renamed); the others read it from
 * there. Every rank then: inits its communicator (which waits for all ranks), asks its count and rank; fills
 * device buffers (the runtime API: cudaMalloc, cudaMemcpy) with data of its own; an all-reduce outside a group
 * (float sum); a group of two (an int32 max in place, a float sum); a group whose first call has a datatype the
 * fake does not take (the group's first error, and the end's) and NCCL's text of it (ncclGetLastError); synchronises; reads the buffers back and prints
 * their values; the communicator's asynchronous error; ncclGetErrorString; destroys the communicator; then a
 * second one by ncclCommInitRankConfig, non-blocking (ncclInProgress until ncclCommGetAsyncError says it is
 * ready), its configuration named (commName), and an all-reduce on it, then one
 * in place in memory from ncclMemAlloc (a group of two ended by ncclGroupSimulateEnd, which runs nothing; and one with a pre-multiplied sum, its scalar on the host), registered (ncclCommRegister, ncclCommDeregister) and freed
 * (ncclMemFree).
 * With E2E_HOSTILE=1 (a client of a server only: locally these calls would reach freed memory) it also names a
 * made-up and the destroyed communicator, and made-up, wrong-kind and deregistered registration handles, which
 * must be refused (ncclInvalidArgument) before they reach NCCL.
 * With E2E_NO_DRIVER=1 it checks that no libcuda.so.1 was loaded in this process.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 1000

static int failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "e2e_remote_nccl: FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            failures++;                                                           \
        }                                                                         \
    } while (0)
#define NCCL(call)                                                                \
    do {                                                                          \
        ncclResult_t r_ = (call);                                                 \
        CHECK(r_ == ncclSuccess, "%s: %d", #call, (int)r_);                       \
    } while (0)

static int share_id(int rank, const char *file, ncclUniqueId *id)
{
    if (rank == 0) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", file);
        FILE *f = fopen(tmp, "wb");
        if (f == NULL || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, file) != 0)
            return -1;
        return 0;
    }
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(file, "rb");
        if (f != NULL) {
            size_t got = fread(id, sizeof *id, 1, f);
            fclose(f);
            return got == 1 ? 0 : -1;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: e2e_remote_nccl RANK NRANKS IDFILE\n");
        return 2;
    }
    int rank = atoi(argv[1]), nranks = atoi(argv[2]), v = 0, n = 0, me = -1;
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    memset(&id, 0, sizeof id);
    NCCL(ncclGetVersion(&v));
    printf("version %d\n", v);
    if (rank == 0)
        NCCL(ncclGetUniqueId(&id));
    if (share_id(rank, argv[3], &id) != 0) {
        fprintf(stderr, "e2e_remote_nccl: rank %d: no unique id in %s\n", rank, argv[3]);
        return 1;
    }
    NCCL(ncclCommInitRank(&comm, nranks, id, rank));
    NCCL(ncclCommCount(comm, &n));
    NCCL(ncclCommUserRank(comm, &me));
    printf("rank %d of %d\n", me, n);

    static float fa[N], fb[N];
    static int ic[N];
    for (int i = 0; i < N; i++) {
        fa[i] = (float)(rank + 1) * (float)i * 0.5f;
        ic[i] = (i % 7 == rank % 7) ? 100000 + rank * 1000 + i : rank * 1000 + i;
    }
    void *a = NULL, *b = NULL, *c = NULL;
    CHECK(cudaMalloc(&a, sizeof fa) == cudaSuccess, "cudaMalloc a");
    CHECK(cudaMalloc(&b, sizeof fb) == cudaSuccess, "cudaMalloc b");
    CHECK(cudaMalloc(&c, sizeof ic) == cudaSuccess, "cudaMalloc c");
    CHECK(cudaMemcpy(a, fa, sizeof fa, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy a");
    CHECK(cudaMemcpy(c, ic, sizeof ic, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy c");

    /* outside a group: answered at the call */
    NCCL(ncclAllReduce(a, b, N, ncclFloat32, ncclSum, comm, NULL));
    /* a group of two: launched by ncclGroupEnd, in order */
    NCCL(ncclGroupStart());
    NCCL(ncclAllReduce(c, c, N, ncclInt32, ncclMax, comm, NULL));
    NCCL(ncclAllReduce(b, a, N, ncclFloat32, ncclSum, comm, NULL));
    NCCL(ncclGroupEnd());
    /* a group with a call NCCL refuses: its error comes back at the latest from ncclGroupEnd */
    NCCL(ncclGroupStart());
    ncclResult_t bad = ncclAllReduce(a, b, N, ncclFloat64, ncclSum, comm, NULL);
    ncclResult_t end = ncclGroupEnd();
    printf("group error %d, end %d\n", (int)(bad != ncclSuccess ? bad : end), (int)end);
    CHECK(end == ncclInvalidArgument, "ncclGroupEnd of a failed group: %d", (int)end);
    /* NCCL's text of that error: its library's (over remoting, the server's) */
    char last[1100];
    const char *le = ncclGetLastError(comm);
    snprintf(last, sizeof last, "%s", le != NULL ? le : "(null)");
    printf("last error '%s'\n", last);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "cudaDeviceSynchronize");

    CHECK(cudaMemcpy(fb, b, sizeof fb, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy b back");
    CHECK(cudaMemcpy(fa, a, sizeof fa, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy a back");
    CHECK(cudaMemcpy(ic, c, sizeof ic, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy c back");
    double sa = 0, sb = 0;
    long long sc = 0;
    for (int i = 0; i < N; i++)
        sa += fa[i], sb += fb[i], sc += ic[i];
    printf("sum %.1f: b[1] %.2f b[999] %.2f\n", sb, fb[1], fb[999]);
    printf("group sum %.1f: a[1] %.2f a[999] %.2f\n", sa, fa[1], fa[999]);
    printf("max %lld: c[0] %d c[1] %d c[998] %d\n", sc, ic[0], ic[1], ic[998]);
    ncclResult_t async = ncclInternalError;
    NCCL(ncclCommGetAsyncError(comm, &async));
    printf("async error %d\n", (int)async);
    const char *es = ncclGetErrorString(ncclSystemError);
    printf("error string '%s'\n", es != NULL ? es : "(null)");
    NCCL(ncclCommDestroy(comm));
    if (getenv("E2E_HOSTILE") != NULL) {
        /* a client of a server (run_remote_nccl.sh): a made-up and a destroyed communicator are refused before the
           server's NCCL sees them (its counts show none of these calls), and its back end goes on */
        int k = -1;
        CHECK(ncclCommCount((ncclComm_t)(uintptr_t)0x7f0000001000ull, &k) == ncclInvalidArgument,
              "a made-up communicator was not refused");
        CHECK(ncclCommCount(comm, &k) == ncclInvalidArgument, "a destroyed communicator was not refused");
        CHECK(ncclAllReduce(a, b, N, ncclFloat32, ncclSum, comm, NULL) == ncclInvalidArgument,
              "an all-reduce on a destroyed communicator was not refused");
        CHECK(ncclCommDestroy(comm) == ncclInvalidArgument, "a communicator destroyed twice");
        CHECK(k == -1, "a refused call wrote its output: %d", k);
        const char *again = ncclGetLastError(comm);   /* NCCL does not use its communicator: still the text */
        CHECK(again != NULL && strcmp(again, last) == 0, "ncclGetLastError of a destroyed communicator: '%s'",
              again != NULL ? again : "(null)");
    }

    /* a communicator with a configuration, named (PyTorch names split communicators): an all-reduce on it */
    char idfile[4096];
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;   /* non-blocking: made at once, initialised in the background (ncclInProgress) */
    config.commName = "e2e-config";
    snprintf(idfile, sizeof idfile, "%s.config", argv[3]);
    memset(&id, 0, sizeof id);
    if (rank == 0)
        NCCL(ncclGetUniqueId(&id));
    CHECK(share_id(rank, idfile, &id) == 0, "no second unique id");
    ncclResult_t ir = ncclCommInitRankConfig(&comm, nranks, id, rank, &config), st = ncclInProgress;
    CHECK(ir == ncclSuccess || ir == ncclInProgress, "ncclCommInitRankConfig: %d", (int)ir);
    for (int i = 0; i < 10000 && st == ncclInProgress; i++)
        if (ncclCommGetAsyncError(comm, &st) != ncclSuccess) {
            CHECK(0, "ncclCommGetAsyncError of the new communicator");
            break;
        }
    printf("non-blocking init: %d, then %d\n", (int)ir, (int)st);
    NCCL(ncclAllReduce(c, c, N, ncclInt32, ncclMin, comm, NULL));
    CHECK(cudaMemcpy(ic, c, sizeof ic, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy c back");
    sc = 0;
    for (int i = 0; i < N; i++)
        sc += ic[i];
    printf("config: min of the maxima %lld\n", sc);
    /* NCCL's own device memory (ncclMemAlloc: over remoting a device address of the server's), reduced in place */
    void *m = NULL;
    void *reg = NULL;
    NCCL(ncclMemAlloc(&m, sizeof fa));
    NCCL(ncclCommRegister(comm, m, sizeof fa, &reg));   /* over remoting: the back end's number */
    CHECK(m != NULL && cudaMemcpy(m, fb, sizeof fb, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy to ncclMemAlloc's");
    NCCL(ncclAllReduce(m, m, N, ncclFloat32, ncclMax, comm, NULL));
    CHECK(cudaMemcpy(fa, m, sizeof fa, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy from ncclMemAlloc's");
    sa = 0;
    for (int i = 0; i < N; i++)
        sa += fa[i];
    printf("ncclMemAlloc: max %.1f\n", sa);
    /* a simulated group end: nothing runs (the buffer keeps the maxima), the estimate comes back */
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    NCCL(ncclGroupStart());
    NCCL(ncclAllReduce(m, m, N, ncclFloat32, ncclSum, comm, NULL));
    NCCL(ncclAllReduce(m, m, N, ncclFloat32, ncclSum, comm, NULL));
    NCCL(ncclGroupSimulateEnd(&sim));
    CHECK(cudaMemcpy(fa, m, sizeof fa, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy from ncclMemAlloc's");
    double sm = 0;
    for (int i = 0; i < N; i++)
        sm += fa[i];
    printf("simulated: %.1f us, unchanged %d\n", (double)sim.estimatedTime, sm == sa);
    /* a pre-multiplied sum: each rank's data times its host scalar (float32: 4 bytes), summed */
    ncclRedOp_t premul;
    float factor = 0.5f * (float)(rank + 1);
    NCCL(ncclRedOpCreatePreMulSum(&premul, &factor, ncclFloat32, ncclScalarHostImmediate, comm));
    CHECK(cudaMemcpy(m, fb, sizeof fb, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy to ncclMemAlloc's");
    NCCL(ncclAllReduce(m, m, N, ncclFloat32, premul, comm, NULL));
    NCCL(ncclRedOpDestroy(premul, comm));
    CHECK(cudaMemcpy(fa, m, sizeof fa, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy from ncclMemAlloc's");
    sa = 0;
    for (int i = 0; i < N; i++)
        sa += fa[i];
    printf("premulsum: %.1f\n", sa);
    if (getenv("E2E_HOSTILE") != NULL) {   /* handles it was not given: refused before NCCL sees them */
        CHECK(ncclCommDeregister(comm, (void *)(uintptr_t)0x7f0000002000ull) == ncclInvalidArgument,
              "a made-up registration handle was not refused");
        CHECK(ncclCommDeregister(comm, (void *)comm) == ncclInvalidArgument, "a communicator taken as a handle");
    }
    NCCL(ncclCommDeregister(comm, reg));
    if (getenv("E2E_HOSTILE") != NULL)
        CHECK(ncclCommDeregister(comm, reg) == ncclInvalidArgument, "a handle deregistered twice was not refused");
    NCCL(ncclMemFree(m));
    NCCL(ncclCommDestroy(comm));
    cudaFree(a), cudaFree(b), cudaFree(c);
    if (getenv("E2E_NO_DRIVER") != NULL)
        CHECK(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL, "a libcuda.so.1 was loaded");
    printf("done\n");
    return failures != 0;
}
