/*
 * libs_main.c - a CUDA 12 program that uses NVML, cuBLAS and NCCL, for the GPU check 'release12 libs'
 * (tests/gpu/checks/release.sh): built against the 12.9 headers (cuda_runtime_api.h, nvml.h, cublas_api.h,
 * nccl.h, as tools/fetch-cuda-headers.sh pins them) and linked against the wheel's libcudart.so.12, as
 * rt_main.c. The shim built from generated/cuda-12.9 interposes every one of these libraries (its descriptors
 * of CUDA 12.9's NVML, cuBLAS 12.9 and NCCL 2.27): the check compares what this program says it called with
 * the shim's counts, and NVML's total memory with the memlimit quota.
 *
 *   libs_main            NVML (libnvidia-ml.so.1, the driver's) always;
 *   LIBS_CUBLAS=PATH     also cuBLAS: a libcublas.so.12 (opened by path: the GPU machine has none on its
 *                        library path), a 64x64 SGEMM checked against the host;
 *   LIBS_NCCL=PATH       also NCCL: a libnccl.so.2, one rank on device 0, an all-reduce checked.
 * The libraries are opened with dlopen and their functions taken with dlsym, as frameworks do.
 * Prints "nvml_total_mib N", "calls NAME N" for each library function it called (what a counter must find),
 * "skip LIB why" for a library not given, then "PASS" or "FAIL what".
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#ifndef CUBLASAPI
#define CUBLASAPI
#endif
#include <cublas_api.h>
#include <nccl.h>
#include <nvml.h>

static int failed;
#define FAIL(...)                                                                                                \
    do {                                                                                                         \
        printf("FAIL " __VA_ARGS__);                                                                             \
        printf("\n");                                                                                            \
        failed = 1;                                                                                              \
    } while (0)
#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudaError_t e_ = (call);                                                                                 \
        if (e_ != cudaSuccess)                                                                                   \
            FAIL("%s: %s", #call, cudaGetErrorName(e_));                                                         \
    } while (0)

/* a function of a dlopen'ed library, typed as the header declares it */
#define SYM(h, name) ((__typeof__(&name))sym((h), #name))
static void *sym(void *h, const char *name)
{
    void *p = h != NULL ? dlsym(h, name) : NULL;
    if (p == NULL)
        FAIL("dlsym %s: %s", name, dlerror());
    return p;
}

static void *lib_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        FAIL("dlopen %s: %s", path, dlerror());
    return h;
}

static void nvml(void)
{
    void *h = lib_open("libnvidia-ml.so.1");
    if (h == NULL)
        return;
    __typeof__(&nvmlInit_v2) init = SYM(h, nvmlInit_v2);
    __typeof__(&nvmlDeviceGetHandleByIndex_v2) byindex = SYM(h, nvmlDeviceGetHandleByIndex_v2);
    __typeof__(&nvmlDeviceGetMemoryInfo) meminfo = SYM(h, nvmlDeviceGetMemoryInfo);
    __typeof__(&nvmlShutdown) shutdown = SYM(h, nvmlShutdown);
    nvmlDevice_t dev;
    nvmlMemory_t m;
    if (!init || !byindex || !meminfo || !shutdown)
        return;
    if (init() != NVML_SUCCESS || byindex(0, &dev) != NVML_SUCCESS || meminfo(dev, &m) != NVML_SUCCESS) {
        FAIL("NVML: init, device 0 or its memory info");
        return;
    }
    printf("nvml_total_mib %llu\n", (unsigned long long)(m.total >> 20));
    shutdown();
    printf("calls nvmlInit_v2 1\ncalls nvmlDeviceGetHandleByIndex_v2 1\ncalls nvmlDeviceGetMemoryInfo 1\n"
           "calls nvmlShutdown 1\n");
}

static void cublas(const char *path)
{
    enum { N = 64 };
    void *h = lib_open(path);
    if (h == NULL)
        return;
    __typeof__(&cublasCreate_v2) create = SYM(h, cublasCreate_v2);
    __typeof__(&cublasGetVersion_v2) version = SYM(h, cublasGetVersion_v2);
    __typeof__(&cublasSgemm_v2) sgemm = SYM(h, cublasSgemm_v2);
    __typeof__(&cublasDestroy_v2) destroy = SYM(h, cublasDestroy_v2);
    if (!create || !version || !sgemm || !destroy)
        return;
    cublasHandle_t b;
    int v = 0;
    if (create(&b) != CUBLAS_STATUS_SUCCESS || version(b, &v) != CUBLAS_STATUS_SUCCESS) {
        FAIL("cublasCreate_v2 / cublasGetVersion_v2");
        return;
    }
    printf("cublas_version %d\n", v);
    if (v / 10000 != 12)
        FAIL("not a cuBLAS 12: %d", v);
    static float a[N * N], x[N * N], c[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = (float)(i % 7) - 3.0f, x[i] = (float)(i % 5) - 2.0f;
    float *da = NULL, *dx = NULL, *dc = NULL, one = 1.0f, zero = 0.0f;
    CHECK(cudaMalloc((void **)&da, sizeof a));
    CHECK(cudaMalloc((void **)&dx, sizeof x));
    CHECK(cudaMalloc((void **)&dc, sizeof c));
    CHECK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    if (sgemm(b, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, da, N, dx, N, &zero, dc, N) != CUBLAS_STATUS_SUCCESS)
        FAIL("cublasSgemm_v2");
    CHECK(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int j = 0; j < N; j++)   /* column-major: c = a * x, small integers: exact in float */
        for (int i = 0; i < N; i++) {
            float s = 0;
            for (int k = 0; k < N; k++)
                s += a[k * N + i] * x[j * N + k];
            wrong += c[j * N + i] != s;
        }
    if (wrong)
        FAIL("%d of %d SGEMM results wrong", wrong, N * N);
    CHECK(cudaFree(da));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dc));
    if (destroy(b) != CUBLAS_STATUS_SUCCESS)
        FAIL("cublasDestroy_v2");
    printf("calls cublasCreate_v2 1\ncalls cublasGetVersion_v2 1\ncalls cublasSgemm_v2 1\ncalls cublasDestroy_v2 1\n");
}

static void nccl(const char *path)
{
    enum { N = 1024 };
    void *h = lib_open(path);
    if (h == NULL)
        return;
    __typeof__(&ncclGetVersion) version = SYM(h, ncclGetVersion);
    __typeof__(&ncclCommInitAll) initall = SYM(h, ncclCommInitAll);
    __typeof__(&ncclAllReduce) allreduce = SYM(h, ncclAllReduce);
    __typeof__(&ncclCommDestroy) destroy = SYM(h, ncclCommDestroy);
    if (!version || !initall || !allreduce || !destroy)
        return;
    int v = 0, dev = 0;
    ncclComm_t comm;
    if (version(&v) != ncclSuccess || initall(&comm, 1, &dev) != ncclSuccess) {
        FAIL("ncclGetVersion / ncclCommInitAll");
        return;
    }
    printf("nccl_version %d\n", v);
    static float host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    float *d = NULL;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMalloc((void **)&d, sizeof host));
    CHECK(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice));
    if (allreduce(d, d, N, ncclFloat, ncclSum, comm, s) != ncclSuccess)   /* one rank: in place, unchanged */
        FAIL("ncclAllReduce");
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost));
    if (memcmp(host, back, sizeof host) != 0)
        FAIL("the one-rank all-reduce changed the data");
    if (destroy(comm) != ncclSuccess)
        FAIL("ncclCommDestroy");
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    printf("calls ncclGetVersion 1\ncalls ncclCommInitAll 1\ncalls ncclAllReduce 1\ncalls ncclCommDestroy 1\n");
}

int main(void)
{
    const char *cb = getenv("LIBS_CUBLAS"), *nc = getenv("LIBS_NCCL");
    int rv = 0;
    CHECK(cudaRuntimeGetVersion(&rv));
    CHECK(cudaSetDevice(0));
    printf("runtime %d\n", rv);
    if (rv / 1000 != CUDART_VERSION / 1000)
        FAIL("not a CUDA %d runtime: %d", CUDART_VERSION / 1000, rv);
    nvml();
    if (cb != NULL && *cb)
        cublas(cb);
    else
        printf("skip cublas LIBS_CUBLAS not set\n");
    if (nc != NULL && *nc)
        nccl(nc);
    else
        printf("skip nccl LIBS_NCCL not set\n");
    printf(failed ? "FAIL\n" : "PASS\n");
    return failed;
}
