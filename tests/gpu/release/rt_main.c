/*
 * rt_main.c - a program of an earlier CUDA release for the GPU checks 'release12' and 'release11'
 * (tests/gpu/checks/release.sh): built against the 12.9 (11.8) headers and linked against the PyPI wheel's
 * libcudart.so.12 (libcudart.so.11.0); the shim built from generated/cuda-12.9 (11.8) must see its runtime
 * calls on the real driver; a shim of the 13.0 tree must not (they bind past it to their own copy, README
 * "One CUDA release per build").
 *
 * Runtime calls only through that cudart, and one kernel: the PTX in argv[1] (nvcc -ptx of scale.cu on the
 * GPU machine) loaded and launched through driver functions the program gets from
 * cudaGetDriverEntryPoint, as programs of those releases do. Prints "calls NAME N" for each runtime function it
 * called (what a counter must find), then "PASS" or "FAIL what".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

static int failed;
#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            printf("FAIL %s: %s\n", #call, cudaGetErrorName(e_));                                       \
            failed = 1;                                                                                 \
        }                                                                                               \
    } while (0)
#define CHECK_CU(call)                                                                                  \
    do {                                                                                                \
        CUresult r_ = (call);                                                                           \
        if (r_ != CUDA_SUCCESS) {                                                                       \
            printf("FAIL %s: %d\n", #call, (int)r_);                                                    \
            failed = 1;                                                                                 \
        }                                                                                               \
    } while (0)

typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*getfn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*unload_fn)(CUmodule);

static void *entry(const char *name)
{
    void *p = NULL;
#if CUDART_VERSION >= 12000
    enum cudaDriverEntryPointQueryResult st;
    CHECK(cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &st));
    if (p == NULL || st != cudaDriverEntryPointSuccess) {
#else   /* no status before 12.0 */
    CHECK(cudaGetDriverEntryPoint(name, &p, cudaEnableDefault));
    if (p == NULL) {
#endif
        printf("FAIL cudaGetDriverEntryPoint(%s)\n", name);
        failed = 1;
    }
    return p;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL && fread(s, 1, (size_t)n, f) == (size_t)n)
        s[n] = '\0';
    else {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    enum { N = 1 << 20 };
    char *ptx = argc == 2 ? read_file(argv[1]) : NULL;
    if (ptx == NULL) {
        printf("FAIL usage: rt_main scale.ptx\n");
        return 2;
    }
    int rv = 0, dv = 0, n = 0;
    CHECK(cudaRuntimeGetVersion(&rv));
    CHECK(cudaDriverGetVersion(&dv));
    CHECK(cudaGetDeviceCount(&n));
    CHECK(cudaSetDevice(0));
    printf("runtime %d driver %d devices %d\n", rv, dv, n);
    if (rv / 1000 != CUDART_VERSION / 1000) {
        printf("FAIL not a CUDA %d runtime: %d\n", CUDART_VERSION / 1000, rv);
        failed = 1;
    }

    float *host = malloc(N * sizeof *host), *back = malloc(N * sizeof *back);
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    float *d = NULL;
    cudaStream_t s;
    cudaEvent_t a, b;
    CHECK(cudaMalloc((void **)&d, N * sizeof *d));
    CHECK(cudaMemcpy(d, host, N * sizeof *d, cudaMemcpyHostToDevice));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));

    load_fn load = (load_fn)entry("cuModuleLoadData");
    getfn_fn getfn = (getfn_fn)entry("cuModuleGetFunction");
    launch_fn launch = (launch_fn)entry("cuLaunchKernel");
    unload_fn unload = (unload_fn)entry("cuModuleUnload");
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    if (load && getfn && launch && unload) {
        CHECK_CU(load(&mod, ptx));
        CHECK_CU(getfn(&fn, mod, "scale"));
    }
    CHECK(cudaEventRecord(a, s));
    if (fn != NULL) {
        CUdeviceptr dp = (CUdeviceptr)(uintptr_t)d;
        float k = 2.0f;
        int count = N;
        void *args[] = {&dp, &k, &count};
        CHECK_CU(launch(fn, N / 256, 1, 1, 256, 1, 1, 0, (CUstream)s, args, NULL));
    }
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaStreamSynchronize(s));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    CHECK(cudaMemcpy(back, d, N * sizeof *d, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += back[i] != 2.0f * (float)i;
    if (wrong) {
        printf("FAIL %d of %d values wrong after the kernel\n", wrong, N);
        failed = 1;
    }
    CHECK(cudaMemset(d, 0, N * sizeof *d));
    CHECK(cudaDeviceSynchronize());
    if (mod != NULL)
        CHECK_CU(unload(mod));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));

    /* what this program called, once each unless said */
    static const char *const once[] = {"cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaGetDeviceCount",
                                       "cudaSetDevice", "cudaMalloc", "cudaStreamCreate", "cudaEventElapsedTime",
                                       "cudaStreamSynchronize", "cudaMemset", "cudaDeviceSynchronize",
                                       "cudaStreamDestroy", "cudaFree"};
    for (size_t i = 0; i < sizeof once / sizeof once[0]; i++)
        printf("calls %s 1\n", once[i]);
    printf("calls cudaMemcpy 2\ncalls cudaEventCreate 2\ncalls cudaEventRecord 2\ncalls cudaEventDestroy 2\n");
    printf("calls cudaGetDriverEntryPoint 4\n");
    printf("kernel %.3f ms\n", ms);
    printf(failed ? "FAIL\n" : "PASS\n");
    free(host);
    free(back);
    free(ptx);
    return failed;
}
