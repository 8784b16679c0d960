/*
 * e2e_remote_rt.c - a runtime-API program as nvcc builds one, for the remoting's end-to-end test
 * (run_remote_rt.sh, docs/remote.md "Runtime-API programs"): its output is compared between a local run on the
 * fake runtime and driver and a run whose every CUDA call is answered by cushim-serve.
 *
 * What nvcc would generate is written out by hand: a constructor registers the fat binary (its wrapper and a
 * fatbin header around a payload) and one kernel, 'scale__pfi' (the fake driver reads the argument sizes from
 * the name: a pointer, a float, an int), and the kernel's host stub pops the <<<>>> configuration and calls
 * cudaLaunchKernel; a second kernel is launched the CUDA 13 way (__cudaGetKernel, __cudaLaunchKernel), a third by
 * the function cudaGetFuncBySymbol gives, with the driver's cuLaunchKernel (XLA's way). The program
 * prints only what both runs must agree on. With E2E_NO_DRIVER=1 it also checks, at the end, that no
 * libcuda.so.1 was ever loaded in this process. 'e2e_remote_rt fork' (remote only) then forks a child that
 * allocates and launches: through cushim-serve it has a back end of its own. 'e2e_remote_rt hostfn' runs only
 * the host functions' part (docs/remote.md, "Host functions"): rounds of a copy in, a <<<>>> launch and a copy back
 * on two streams, each followed by cudaLaunchHostFunc or cudaStreamAddCallback, whose functions log what their
 * buffers hold, in their order; a NULL function is cudaErrorInvalidValue, reported by cudaGetLastError.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* what nvcc's code calls (crt/host_runtime.h, device_functions.h) */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t stream);
#if CUDART_VERSION >= 12000
/* the per-thread default stream's forms, which the header declares only under CUDA_API_PER_THREAD_DEFAULT_STREAM */
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream);
#endif

/* the fat binary: header (magic, version, header size, payload size) and a payload */
static const struct {
    unsigned magic;
    unsigned short version, header_size;
    unsigned long long size;
    char payload[48];
} fatbin = { 0xba55ed50u, 1, 16, 48, "cushim e2e_remote_rt fat binary payload" };
static const struct {
    int magic, version;
    const void *data;
    void *filename_or_fatbins;
} wrapper = { 0x466243b1, 1, &fatbin, NULL };
static void **handle;

/* the kernel's host stub, as nvcc writes it: pop the configuration, launch with the arguments' addresses */
static void scale(float *p, float f, int n)
{
    void *args[] = { &p, &f, &n };
    dim3 g, b;
    size_t shmem;
    cudaStream_t s;
    if (__cudaPopCallConfiguration(&g, &b, &shmem, &s) != cudaSuccess)
        return;
    (void)cudaLaunchKernel((const void *)scale, g, b, args, shmem, s);
}

/* the same stub as CUDA 13's nvcc writes it: a kernel handle taken once, the launch by the handle */
static void scale13(float *p, float f, int n)
{
    static cudaKernel_t handle;
    static int got;
    void *args[] = { &p, &f, &n };
    dim3 g, b;
    size_t shmem;
    cudaStream_t s;
    if (!got)
        got = __cudaGetKernel(&handle, (const void *)scale13) == cudaSuccess;
    if (__cudaPopCallConfiguration(&g, &b, &shmem, &s) != cudaSuccess)
        return;
    (void)__cudaLaunchKernel(handle, g, b, args, shmem, s);
}

/* a kernel the program never launches by its stub: XLA's way, its function taken by cudaGetFuncBySymbol and
   launched through the driver. The fake driver runs 'fk_add_i32__pii' (adds v to n ints at p). */
static void add_i32(int *p, int n, int v)
{
    (void)p, (void)n, (void)v;
}

__attribute__((constructor)) static void register_binary(void)
{
    handle = __cudaRegisterFatBinary((void *)&wrapper);
    __cudaRegisterFunction(handle, (const char *)scale, (char *)"scale__pfi", "scale__pfi", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(handle, (const char *)scale13, (char *)"scale13__pfi", "scale13__pfi", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFunction(handle, (const char *)add_i32, (char *)"fk_add_i32__pii", "fk_add_i32__pii", -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

__attribute__((destructor)) static void unregister_binary(void)
{
    __cudaUnregisterFatBinary(handle);
}

/* a thread whose first CUDA call is a launch (its server thread has no context yet) */
static void *thread_launch(void *arg)
{
    cudaError_t *e = arg;
    float *p = NULL;
    *e = cudaErrorUnknown;
    if (__cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, 0, NULL) == 0)
        scale(p, 1.0f, 0);
    *e = cudaGetLastError();
    if (*e == cudaSuccess)
        *e = cudaDeviceSynchronize();
    return NULL;
}

static int failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "e2e_remote_rt: FAIL: " __VA_ARGS__); \
            fprintf(stderr, "\n");                         \
            failures++;                                    \
        }                                                  \
    } while (0)

static void report(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
}

/* ---- 'hostfn': host functions ---- */
#define HF_WORDS 256
typedef struct hf_rec {
    int stream, round;
    unsigned expect;
    unsigned buf[HF_WORDS];
} hf_rec;
static char hf_log[4096];
static size_t hf_len;

static void hf_note(const hf_rec *r, const char *form, cudaError_t status)
{
    int ok = 1;
    for (int i = 0; i < HF_WORDS; i++)
        ok &= r->buf[i] == r->expect;
    hf_len += (size_t)snprintf(hf_log + hf_len, sizeof hf_log - hf_len, "%s stream %d round %d: data %s, %s\n",
                               form, r->stream, r->round, ok ? "as copied" : "WRONG", cudaGetErrorName(status));
}

static void CUDART_CB hf_fn(void *p)
{
    hf_note(p, "cudaLaunchHostFunc", cudaSuccess);
}

static void CUDART_CB hf_cb(cudaStream_t s, cudaError_t status, void *p)
{
    (void)s;
    hf_note(p, "cudaStreamAddCallback", status);
}

static int hostfn(void)
{
    static hf_rec recs[2][3];
    cudaStream_t s[2];
    unsigned *d[2];
    report("cudaSetDevice(0)", cudaSetDevice(0));
    for (int k = 0; k < 2; k++) {
        report("cudaStreamCreate", cudaStreamCreate(&s[k]));
        report("cudaMalloc", cudaMalloc((void **)&d[k], HF_WORDS * sizeof(unsigned)));
    }
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            hf_rec *r = &recs[k][i];
            unsigned src[HF_WORDS];
            r->stream = k, r->round = i, r->expect = 1000u * (unsigned)(k + 1) + (unsigned)i;
            for (int w = 0; w < HF_WORDS; w++)
                src[w] = r->expect;
            report("cudaMemcpyAsync HtoD", cudaMemcpyAsync(d[k], src, sizeof src, cudaMemcpyHostToDevice, s[k]));
            if (__cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, 0, s[k]) == 0)
                scale((float *)d[k], 1.0f, 0);
            report("launch", cudaGetLastError());
            report("cudaMemcpyAsync", cudaMemcpyAsync(r->buf, d[k], sizeof r->buf, cudaMemcpyDeviceToHost, s[k]));
            report(k == 0 ? "cudaLaunchHostFunc" : "cudaStreamAddCallback",
                   k == 0 ? cudaLaunchHostFunc(s[k], hf_fn, r) : cudaStreamAddCallback(s[k], hf_cb, r, 0));
        }
    report("cudaLaunchHostFunc(NULL)", cudaLaunchHostFunc(s[0], NULL, NULL));
    report("cudaGetLastError", cudaGetLastError());
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    fputs(hf_log, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "hostfn") == 0)
        return hostfn();
    int rv = 0, dv = 0, n = 0, dev = -1;
    report("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&rv));
    report("cudaDriverGetVersion", cudaDriverGetVersion(&dv));
    printf("versions: runtime %d driver %d\n", rv, dv);
    report("cudaGetDeviceCount", cudaGetDeviceCount(&n));
    printf("devices: %d\n", n);
    for (int i = 0; i < n; i++) {
        struct cudaDeviceProp prop;
        memset(&prop, 0xee, sizeof prop);
        report("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, i));
        printf("device %d: '%s' %zu bytes, compute %d.%d\n", i, prop.name, prop.totalGlobalMem, prop.major,
               prop.minor);
    }
    report("cudaSetDevice(7)", cudaSetDevice(7));
    report("cudaGetLastError", cudaGetLastError());
    report("cudaSetDevice(1)", cudaSetDevice(1));
    report("cudaGetDevice", cudaGetDevice(&dev));
    printf("device: %d\n", dev);
    printf("cudaGetErrorString(cudaErrorInvalidValue): %s\n", cudaGetErrorString(cudaErrorInvalidValue));

    enum { N = 9 << 20 };   /* 36 MiB of floats: a copy the client sends in two pieces (rc_cudart.c) */
    float *host = malloc(N * sizeof *host), *back = malloc(N * sizeof *back), *d = NULL, *d2 = NULL;
    if (host == NULL || back == NULL)
        return 1;
    for (int i = 0; i < N; i++)
        host[i] = (float)(i % 1000) * 0.5f;
    size_t free_b = 0, total_b = 0;
    report("cudaMalloc", cudaMalloc((void **)&d, N * sizeof *d));
    report("cudaMalloc", cudaMalloc((void **)&d2, N * sizeof *d2));
    CHECK(d != NULL && d2 != NULL && d != d2, "device addresses %p %p", (void *)d, (void *)d2);
    report("cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b));
    printf("memory: total %zu\n", total_b);
    report("cudaMemcpy HtoD", cudaMemcpy(d, host, N * sizeof *d, cudaMemcpyHostToDevice));
    report("cudaMemcpy DtoD", cudaMemcpy(d2, d, N * sizeof *d, cudaMemcpyDeviceToDevice));
    report("cudaMemset", cudaMemset(d2 + 16, 0, 16 * sizeof *d2));
    memset(back, 0xff, N * sizeof *back);
    report("cudaMemcpy DtoH", cudaMemcpy(back, d2, N * sizeof *back, cudaMemcpyDeviceToHost));
    int same = 1;
    for (int i = 0; i < N; i++)
        if (back[i] != (i >= 16 && i < 32 ? 0.0f : host[i]))
            same = 0;
    printf("round trip: %s\n", same ? "equal" : "differs");
    CHECK(same, "the bytes that came back differ");
    report("cudaMemcpy HtoH", cudaMemcpy(back, host, 64, cudaMemcpyHostToHost));
    /* cudaMemcpyDefault: each side found by what the pointer is */
    float small[256], small2[256];
    for (int i = 0; i < 256; i++)
        small[i] = (float)i, small2[i] = -1;
    report("cudaMemcpy Default HtoD", cudaMemcpy(d + 100, small, sizeof small, cudaMemcpyDefault));
    report("cudaMemcpy Default DtoD", cudaMemcpy(d2 + 100, d + 100, sizeof small, cudaMemcpyDefault));
    report("cudaMemcpy Default DtoH", cudaMemcpy(small2, d2 + 100, sizeof small2, cudaMemcpyDefault));
    report("cudaMemcpy Default HtoH", cudaMemcpy(small2 + 128, small, 64, cudaMemcpyDefault));
    printf("default copies: %s\n", memcmp(small, small2, 128 * sizeof(float)) == 0 && small2[128] == 0.0f &&
                                       small2[143] == 15.0f && small2[144] == 144.0f ? "equal" : "differ");
    struct cudaPointerAttributes pa;
    report("cudaPointerGetAttributes(device)", cudaPointerGetAttributes(&pa, d));
    printf("device pointer: type %d\n", (int)pa.type);
    report("cudaPointerGetAttributes(host)", cudaPointerGetAttributes(&pa, small));
    printf("host pointer: type %d\n", (int)pa.type);

    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    float ms = -1;
    report("cudaStreamCreate", cudaStreamCreate(&s));
    report("cudaEventCreate", cudaEventCreate(&a));
    report("cudaEventCreate", cudaEventCreate(&b));
    report("cudaEventRecord", cudaEventRecord(a, s));
    /* scale<<<N / 256, 256, 0, s>>>(d, 2.0f, N) */
    if (__cudaPushCallConfiguration((dim3){ N / 256, 1, 1 }, (dim3){ 256, 1, 1 }, 0, s) == 0)
        scale(d, 2.0f, N);
    report("launch", cudaGetLastError());
    if (__cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 128, 1, 1 }, 0, NULL) == 0)
        scale(d2, 0.5f, 128);
    report("launch on the default stream", cudaPeekAtLastError());
    if (__cudaPushCallConfiguration((dim3){ 4, 1, 1 }, (dim3){ 64, 1, 1 }, 0, s) == 0)
        scale13(d, 3.0f, 256);
    report("launch by kernel handle", cudaGetLastError());
    /* the kernel's attributes and occupancy */
    struct cudaFuncAttributes fa;
    int blocks = -1;
    memset(&fa, 0xee, sizeof fa);
    report("cudaFuncGetAttributes", cudaFuncGetAttributes(&fa, (const void *)scale));
    printf("attributes: %d threads, %d registers, ptx %d, dynamic shared %d, static shared %zu\n",
           fa.maxThreadsPerBlock, fa.numRegs, fa.ptxVersion, fa.maxDynamicSharedSizeBytes, fa.sharedSizeBytes);
    report("cudaFuncSetAttribute", cudaFuncSetAttribute((const void *)scale,
                                                        cudaFuncAttributeMaxDynamicSharedMemorySize, 96 << 10));
    report("cudaFuncGetAttributes", cudaFuncGetAttributes(&fa, (const void *)scale));
    printf("dynamic shared now %d\n", fa.maxDynamicSharedSizeBytes);
    report("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
           cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)scale, 256, 64 << 10));
    printf("occupancy: %d blocks\n", blocks);
    /* a launch the driver refuses (a block of 0 threads): the error reaches cudaGetLastError once */
    if (__cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 0, 1, 1 }, 0, s) == 0)
        scale(d, 1.0f, 1);
    report("bad launch, peek", cudaPeekAtLastError());
    report("bad launch", cudaGetLastError());
    report("after it", cudaGetLastError());
    /* the same by a kernel handle (CUDA 13's path); CUDA 13's runtime says cudaErrorInvalidValue for both */
    if (__cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 0, 1, 1 }, 0, s) == 0)
        scale13(d, 1.0f, 1);
    cudaError_t bad13 = cudaGetLastError();
    report("bad launch by a kernel handle", bad13);
    cudaError_t want_bad = CUDART_VERSION >= 13000 ? cudaErrorInvalidValue : cudaErrorInvalidConfiguration;
    CHECK(bad13 == want_bad, "a refused launch by a kernel handle gave %d, not %d\n", (int)bad13, (int)want_bad);
    /* a stub's function (cudaGetFuncBySymbol, as XLA's autotuner takes its kernels), used with the driver's
       cuFuncGetAttribute and cuLaunchKernel, taken through the runtime as the client has no libcuda: the kernel
       adds 5 to 64 ints, which come back so */
    {
        typedef int (*fattr_fn)(int *, int, cudaFunction_t);
        typedef int (*launch_fn)(cudaFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 cudaStream_t, void **, void **);
        enum cudaDriverEntryPointQueryResult st;
        void *fa_p = NULL, *launch_p = NULL;
        cudaFunction_t f = NULL, f2 = NULL;
        int ints[64], *di = NULL, n = 64, v = 5, threads = -1, ok = 1;
        cudaError_t e = cudaGetFuncBySymbol(&f, (const void *)add_i32);
        report("cudaGetFuncBySymbol", e);
        CHECK(e == cudaSuccess && f != NULL, "cudaGetFuncBySymbol of a registered stub: %d\n", (int)e);
        report("cudaGetFuncBySymbol again", cudaGetFuncBySymbol(&f2, (const void *)add_i32));
        printf("the same function: %s\n", f == f2 ? "yes" : "no");
        report("entry point cuFuncGetAttribute",
               cudaGetDriverEntryPoint("cuFuncGetAttribute", &fa_p, cudaEnableDefault, &st));
        report("entry point cuLaunchKernel",
               cudaGetDriverEntryPoint("cuLaunchKernel", &launch_p, cudaEnableDefault, &st));
        memset(ints, 0, sizeof ints);
        report("cudaMalloc", cudaMalloc((void **)&di, sizeof ints));
        report("cudaMemcpy HtoD", cudaMemcpy(di, ints, sizeof ints, cudaMemcpyHostToDevice));
        if (fa_p != NULL && launch_p != NULL && f != NULL) {
            int r = ((fattr_fn)fa_p)(&threads, 0 /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */, f);
            printf("cuFuncGetAttribute on it: %d, %d threads\n", r, threads);
            CHECK(r == 0 && threads > 0, "cuFuncGetAttribute on cudaGetFuncBySymbol's function: %d, %d\n", r, threads);
            void *args[] = { &di, &n, &v };
            r = ((launch_fn)launch_p)(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
            printf("cuLaunchKernel on it: %d\n", r);
            CHECK(r == 0, "cuLaunchKernel on cudaGetFuncBySymbol's function: %d\n", r);
        }
        report("cudaDeviceSynchronize", cudaDeviceSynchronize());
        report("cudaMemcpy DtoH", cudaMemcpy(ints, di, sizeof ints, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 64; i++)
            ok &= ints[i] == 5;
        printf("the kernel by its function: %s\n", ok ? "ran" : "did not run");
        CHECK(ok, "the kernel launched by cudaGetFuncBySymbol's function did not add 5\n");
        report("cudaFree", cudaFree(di));
#if CUDART_VERSION >= 12040
        /* its name and parameters through the runtime: the registered name, the server driver's layout */
        const char *name = NULL;
        report("cudaFuncGetName", cudaFuncGetName(&name, (const void *)add_i32));
        printf("name: %s\n", name ? name : "(none)");
        CHECK(name != NULL && strcmp(name, "fk_add_i32__pii") == 0, "cudaFuncGetName gave %s\n", name ? name : "NULL");
        for (size_t i = 0; i < 4; i++) {
            size_t off = 77, size = 77;
            e = cudaFuncGetParamInfo((const void *)add_i32, i, &off, &size);
            printf("parameter %zu: %s, offset %zu, size %zu\n", i, cudaGetErrorName(e), off, size);
            CHECK(i == 3 || (e == cudaSuccess && size == (i == 0 ? 8u : 4u)), "cudaFuncGetParamInfo(%zu): %d, %zu\n",
                  i, (int)e, size);
        }
        report("then cudaGetLastError", cudaGetLastError());
#endif
        /* what no fat binary registered: the runtime's word, kept for cudaGetLastError */
        static const char not_a_stub[16];
        f = (cudaFunction_t)1;
        e = cudaGetFuncBySymbol(&f, not_a_stub);
        report("cudaGetFuncBySymbol of an unregistered address", e);
        CHECK(e == cudaErrorInvalidDeviceFunction, "an unregistered address gave %d\n", (int)e);
        report("then cudaGetLastError", cudaGetLastError());
        e = cudaGetFuncBySymbol(&f, NULL);
        report("cudaGetFuncBySymbol(NULL)", e);
        CHECK(e == cudaErrorInvalidDeviceFunction, "a NULL symbol gave %d\n", (int)e);
        report("cudaGetFuncBySymbol to NULL", cudaGetFuncBySymbol(NULL, (const void *)add_i32));
        report("then cudaGetLastError", cudaGetLastError());
    }
#if CUDART_VERSION >= 12000
    /* the stub's kernel (cudaGetKernel, a CUkernel): the driver's cuKernelGetFunction on it launched with v=7, and
       the runtime's calls that take a stub taking it "as is" (attributes, a launch with v=9): 0 + 7 + 9 */
    {
        typedef int (*kfunc_fn)(cudaFunction_t *, cudaKernel_t);
        typedef int (*launch_fn)(cudaFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 cudaStream_t, void **, void **);
        enum cudaDriverEntryPointQueryResult st;
        void *kf_p = NULL, *launch_p = NULL;
        cudaKernel_t k = NULL, k2 = NULL;
        cudaFunction_t f = NULL;
        struct cudaFuncAttributes kfa;
        int ints[64], *di = NULL, n = 64, v = 7, ok = 1;
        void *args[] = { &di, &n, &v };
        cudaError_t e = cudaGetKernel(&k, (const void *)add_i32);
        report("cudaGetKernel", e);
        CHECK(e == cudaSuccess && k != NULL, "cudaGetKernel of a registered stub: %d\n", (int)e);
        report("cudaGetKernel again", cudaGetKernel(&k2, (const void *)add_i32));
        printf("the same kernel: %s\n", k == k2 ? "yes" : "no");
        report("entry point cuKernelGetFunction",
               cudaGetDriverEntryPoint("cuKernelGetFunction", &kf_p, cudaEnableDefault, &st));
        report("entry point cuLaunchKernel",
               cudaGetDriverEntryPoint("cuLaunchKernel", &launch_p, cudaEnableDefault, &st));
        memset(ints, 0, sizeof ints);
        report("cudaMalloc", cudaMalloc((void **)&di, sizeof ints));
        report("cudaMemcpy HtoD", cudaMemcpy(di, ints, sizeof ints, cudaMemcpyHostToDevice));
        if (kf_p != NULL && launch_p != NULL && k != NULL) {
            int r = ((kfunc_fn)kf_p)(&f, k);
            printf("cuKernelGetFunction on it: %d\n", r);
            CHECK(r == 0 && f != NULL, "cuKernelGetFunction on cudaGetKernel's kernel: %d\n", r);
            r = f != NULL ? ((launch_fn)launch_p)(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL) : -1;
            printf("cuLaunchKernel on its function: %d\n", r);
            CHECK(r == 0, "cuLaunchKernel on cudaGetKernel's function: %d\n", r);
        }
        memset(&kfa, 0xee, sizeof kfa);
        e = cudaFuncGetAttributes(&kfa, (const void *)k);
        report("cudaFuncGetAttributes of the kernel", e);
        printf("its attributes: %d threads\n", kfa.maxThreadsPerBlock);
        CHECK(e == cudaSuccess, "cudaFuncGetAttributes of cudaGetKernel's kernel: %d\n", (int)e);
        v = 9;
        report("cudaLaunchKernel of the kernel",
               cudaLaunchKernel((const void *)k, (dim3){ 1, 1, 1 }, (dim3){ 64, 1, 1 }, args, 0, NULL));
        report("cudaDeviceSynchronize", cudaDeviceSynchronize());
        report("cudaMemcpy DtoH", cudaMemcpy(ints, di, sizeof ints, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 64; i++)
            ok &= ints[i] == 16;
        printf("the kernel by its handle: %s\n", ok ? "ran twice" : "did not run twice");
        CHECK(ok, "the kernel by cudaGetKernel's handle did not add 7 and 9 (%d)\n", ints[0]);
        report("cudaFree", cudaFree(di));
        static const char not_a_stub[16];
        e = cudaGetKernel(&k, not_a_stub);
        report("cudaGetKernel of an unregistered address", e);
        CHECK(e == cudaErrorInvalidDeviceFunction, "cudaGetKernel of an unregistered address gave %d\n", (int)e);
        report("then cudaGetLastError", cudaGetLastError());
        report("cudaGetKernel to NULL", cudaGetKernel(NULL, (const void *)add_i32));
        report("then cudaGetLastError", cudaGetLastError());
    }
#endif
#if CUDART_VERSION >= 12000
    /* the other calls that take a stub, each the driver's form on its function (rc_launch.c, rc_func.c):
       cudaLaunchKernelExC with a cluster of 2 and a priority (v=3, and 100 by its _ptsz), cooperative (v=4, and 200
       by its _ptsz), the cache and shared memory configurations, the occupancy of dynamic shared memory and
       clusters, and kernel nodes (v=10, 20, 30): the ints come back 3 + 100 + 4 + 200 + 10 + 20 + 20 + 30 */
    {
        int ints[64], *di = NULL, n = 64, v = 0, ok = 1, cs = -1, nc = -1;
        size_t smem = 0;
        void *args[] = { &di, &n, &v };
        memset(ints, 0, sizeof ints);
        report("cudaMalloc", cudaMalloc((void **)&di, sizeof ints));
        report("cudaMemcpy HtoD", cudaMemcpy(di, ints, sizeof ints, cudaMemcpyHostToDevice));
        cudaLaunchAttribute at[2];
        memset(at, 0, sizeof at);
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = 2, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
        at[1].id = cudaLaunchAttributePriority;
        at[1].val.priority = 1;
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDim = (dim3){ 2, 1, 1 }, cfg.blockDim = (dim3){ 32, 1, 1 }, cfg.attrs = at, cfg.numAttrs = 2;
        v = 3;
        report("cudaLaunchKernelExC", cudaLaunchKernelExC(&cfg, (const void *)add_i32, args));
        report("then cudaGetLastError", cudaGetLastError());
        v = 100;
        report("cudaLaunchKernelExC_ptsz", cudaLaunchKernelExC_ptsz(&cfg, (const void *)add_i32, args));
        report("cudaOccupancyMaxPotentialClusterSize",
               cudaOccupancyMaxPotentialClusterSize(&cs, (const void *)add_i32, &cfg));
        report("cudaOccupancyMaxActiveClusters", cudaOccupancyMaxActiveClusters(&nc, (const void *)add_i32, &cfg));
        printf("clusters: size %d, %d at once\n", cs, nc);
        CHECK(cs == 8 && nc == 64, "the cluster occupancy calls gave %d and %d\n", cs, nc);
        at[1].id = (cudaLaunchAttributeID)99;   /* no such attribute: refused before the driver sees it */
        cudaError_t e = cudaLaunchKernelExC(&cfg, (const void *)add_i32, args);
        report("cudaLaunchKernelExC with attribute 99", e);
        CHECK(e == cudaErrorInvalidValue, "an unknown launch attribute gave %d\n", (int)e);
        report("then cudaGetLastError", cudaGetLastError());
        cfg.numAttrs = 1, cfg.blockDim = (dim3){ 0, 1, 1 };
        e = cudaLaunchKernelExC(&cfg, (const void *)add_i32, args);
        report("cudaLaunchKernelExC of 0 threads", e);
        report("then cudaGetLastError", cudaGetLastError());
        cfg.blockDim = (dim3){ 32, 1, 1 };
        report("cudaLaunchKernelExC of no stub", cudaLaunchKernelExC(&cfg, NULL, args));
        report("then cudaGetLastError", cudaGetLastError());
        v = 4;
        report("cudaLaunchCooperativeKernel",
               cudaLaunchCooperativeKernel((const void *)add_i32, (dim3){ 2, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, NULL));
        v = 200;
        report("cudaLaunchCooperativeKernel_ptsz", cudaLaunchCooperativeKernel_ptsz((const void *)add_i32, (dim3){ 2, 1, 1 },
                                                                                    (dim3){ 32, 1, 1 }, args, 0, NULL));
        e = cudaLaunchCooperativeKernel((const void *)add_i32, (dim3){ 1, 1, 1 }, (dim3){ 2048, 1, 1 }, args, 0, NULL);
        report("cudaLaunchCooperativeKernel of 2048 threads", e);
        report("then cudaGetLastError", cudaGetLastError());
        report("cudaFuncSetCacheConfig", cudaFuncSetCacheConfig((const void *)add_i32, cudaFuncCachePreferL1));
        report("cudaFuncSetCacheConfig(7)", cudaFuncSetCacheConfig((const void *)add_i32, (enum cudaFuncCache)7));
        report("then cudaGetLastError", cudaGetLastError());
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        report("cudaFuncSetSharedMemConfig",
               cudaFuncSetSharedMemConfig((const void *)add_i32, cudaSharedMemBankSizeEightByte));
#pragma GCC diagnostic pop
        report("cudaOccupancyAvailableDynamicSMemPerBlock",
               cudaOccupancyAvailableDynamicSMemPerBlock(&smem, (const void *)add_i32, 4, 256));
        printf("dynamic shared memory per block: %zu\n", smem);
        CHECK(smem == 49152, "cudaOccupancyAvailableDynamicSMemPerBlock gave %zu\n", smem);
        e = cudaOccupancyAvailableDynamicSMemPerBlock(&smem, NULL, 4, 256);
        report("cudaOccupancyAvailableDynamicSMemPerBlock of no stub", e);
        CHECK(e == cudaErrorInvalidDeviceFunction, "a NULL stub gave %d\n", (int)e);
        report("then cudaGetLastError", cudaGetLastError());
        /* kernel nodes: added with v=10, its instantiation set to 20, the graph to 30 (the instantiation keeps 20
           until instantiated again) */
        cudaGraph_t g = NULL;
        cudaGraphExec_t ge = NULL;
        cudaGraphNode_t node = NULL, bad_node = NULL;
        struct cudaKernelNodeParams kp;
        memset(&kp, 0, sizeof kp);
        kp.func = (void *)add_i32, kp.gridDim = (dim3){ 1, 1, 1 }, kp.blockDim = (dim3){ 64, 1, 1 };
        kp.kernelParams = args;
        v = 10;
        report("cudaGraphCreate", cudaGraphCreate(&g, 0));
        report("cudaGraphAddKernelNode", cudaGraphAddKernelNode(&node, g, NULL, 0, &kp));
        report("cudaGraphInstantiate", cudaGraphInstantiate(&ge, g, 0));
        report("cudaGraphLaunch", cudaGraphLaunch(ge, NULL));
        v = 20;
        report("cudaGraphExecKernelNodeSetParams", cudaGraphExecKernelNodeSetParams(ge, node, &kp));
        report("cudaGraphLaunch", cudaGraphLaunch(ge, NULL));
        v = 30;
        report("cudaGraphKernelNodeSetParams", cudaGraphKernelNodeSetParams(node, &kp));
        report("cudaGraphLaunch", cudaGraphLaunch(ge, NULL));
        report("cudaGraphExecDestroy", cudaGraphExecDestroy(ge));
        report("cudaGraphInstantiate", cudaGraphInstantiate(&ge, g, 0));
        report("cudaGraphLaunch", cudaGraphLaunch(ge, NULL));
        kp.func = NULL;
        e = cudaGraphAddKernelNode(&bad_node, g, NULL, 0, &kp);
        report("cudaGraphAddKernelNode of no stub", e);
        CHECK(e == cudaErrorInvalidDeviceFunction, "a kernel node of no stub gave %d\n", (int)e);
        report("then cudaGetLastError", cudaGetLastError());
        report("cudaDeviceSynchronize", cudaDeviceSynchronize());
        report("cudaGraphExecDestroy", cudaGraphExecDestroy(ge));
        report("cudaGraphDestroy", cudaGraphDestroy(g));
        report("cudaMemcpy DtoH", cudaMemcpy(ints, di, sizeof ints, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 64; i++)
            ok &= ints[i] == 3 + 100 + 4 + 200 + 10 + 20 + 20 + 30;
        printf("the launches by their driver forms: %s (%d)\n", ok ? "all ran" : "not all ran", ints[0]);
        CHECK(ok, "the launches by their driver forms gave %d, not 387\n", ints[0]);
        report("cudaFree", cudaFree(di));
    }
#endif
    /* driver entry points through the runtime (PyTorch's c10 takes its driver functions so): they must be this
       process's functions, callable here, not the server's addresses */
    {
        typedef int (*count_fn)(int *);
        void *fn = NULL;
        int n = -1;
        enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e = cudaGetDriverEntryPoint("cuDeviceGetCount", &fn, cudaEnableDefault, &st);
        printf("entry point cuDeviceGetCount: %s, status %d, %s\n", cudaGetErrorName(e), (int)st,
               fn ? "found" : "none");
        CHECK(e == cudaSuccess && st == cudaDriverEntryPointSuccess && fn != NULL, "no cuDeviceGetCount entry point\n");
        if (fn != NULL) {
            int r = ((count_fn)fn)(&n);
            printf("called: %d, %d devices\n", r, n);
            CHECK(r == 0 && n == 2, "the entry point's cuDeviceGetCount gave %d, %d devices\n", r, n);
        }
        fn = (void *)1;
        e = cudaGetDriverEntryPoint("cuNoSuchFunction", &fn, cudaEnableDefault, &st);
        printf("entry point cuNoSuchFunction: %s, status %d, %s\n", cudaGetErrorName(e), (int)st,
               fn ? "found" : "none");
        CHECK(fn == NULL && st == cudaDriverEntryPointSymbolNotFound, "an unknown entry point was found\n");
#if CUDART_VERSION >= 12050
        typedef int (*get_fn)(int *, int);
        int dev = -1;
        fn = NULL;
        e = cudaGetDriverEntryPointByVersion("cuDeviceGet", &fn, 12000, cudaEnableDefault, &st);
        printf("entry point cuDeviceGet by version: %s, status %d, %s\n", cudaGetErrorName(e), (int)st,
               fn ? "found" : "none");
        CHECK(e == cudaSuccess && fn != NULL, "no cuDeviceGet entry point by version\n");
        if (fn != NULL) {
            int r = ((get_fn)fn)(&dev, 1);
            printf("called: %d, device %d\n", r, dev);
            CHECK(r == 0 && dev == 1, "the entry point's cuDeviceGet gave %d, device %d\n", r, dev);
        }
#endif
    }
    report("cudaMemcpyAsync DtoH", cudaMemcpyAsync(back, d, 4096, cudaMemcpyDeviceToHost, s));
    report("cudaMemcpyAsync HtoD", cudaMemcpyAsync(d2, host, 4096, cudaMemcpyHostToDevice, s));
    /* pinned host memory both ways */
    unsigned char *pin = NULL, *pin2 = NULL;
    report("cudaMallocHost", cudaMallocHost((void **)&pin, 1 << 20));
    report("cudaHostAlloc", cudaHostAlloc((void **)&pin2, 1 << 20, cudaHostAllocDefault));
    if (pin != NULL && pin2 != NULL) {
        for (int i = 0; i < 1 << 20; i++)
            pin[i] = (unsigned char)(i * 7);
        memset(pin2, 0, 1 << 20);
        report("cudaMemcpyAsync from pinned", cudaMemcpyAsync(d2, pin, 1 << 20, cudaMemcpyHostToDevice, s));
        report("cudaMemcpyAsync to pinned", cudaMemcpyAsync(pin2, d2, 1 << 20, cudaMemcpyDeviceToHost, s));
        report("cudaStreamSynchronize", cudaStreamSynchronize(s));
        printf("pinned round trip: %s\n", memcmp(pin, pin2, 1 << 20) == 0 ? "equal" : "differs");
    }
    report("cudaFreeHost", cudaFreeHost(pin));
    report("cudaFreeHost", cudaFreeHost(pin2));
    report("cudaEventRecord", cudaEventRecord(b, s));
    report("cudaStreamSynchronize", cudaStreamSynchronize(s));
    report("cudaEventSynchronize", cudaEventSynchronize(b));
    report("cudaEventElapsedTime", cudaEventElapsedTime(&ms, a, b));
    printf("elapsed: %s\n", ms >= 0 ? "measured" : "not measured");
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    report("cudaEventDestroy", cudaEventDestroy(a));
    report("cudaEventDestroy", cudaEventDestroy(b));
    report("cudaStreamDestroy", cudaStreamDestroy(s));
    report("cudaFree", cudaFree(d));
    report("cudaFree", cudaFree(d2));
    report("cudaGetLastError", cudaGetLastError());
    /* the other device: the fat binary is loaded there too, once */
    float *d0 = NULL;
    report("cudaSetDevice(0)", cudaSetDevice(0));
    report("cudaMalloc on device 0", cudaMalloc((void **)&d0, 1024));
    for (int k = 0; k < 2; k++)
        if (__cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 256, 1, 1 }, 0, NULL) == 0)
            scale(d0, 1.5f, 256);
    report("launches on device 0", cudaGetLastError());
    pthread_t th;
    cudaError_t te = cudaErrorUnknown;
    if (pthread_create(&th, NULL, thread_launch, &te) == 0)
        pthread_join(th, NULL);
    report("a new thread's first call, a launch", te);
    report("cudaFree on device 0", cudaFree(d0));
    /* cudaGetDevice and cudaSetDevice of the device set: answered in the client (cudaSetDevice(0) succeeded), then
       after cudaDeviceReset, which may change the current context, asked of the server again (run_remote_rt.sh
       counts them) */
    report("cudaGetDevice", cudaGetDevice(&dev));
    printf("device: %d\n", dev);
    report("cudaSetDevice(0) again", cudaSetDevice(0));   /* unchanged: answered in the client too */
    report("cudaDeviceReset", cudaDeviceReset());
    report("cudaGetDevice", cudaGetDevice(&dev));
    printf("device: %d\n", dev);
    report("cudaSetDevice(0) after the reset", cudaSetDevice(0));
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        /* a child has a back end of its own when remote (a context does not survive fork locally) */
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            float *c = NULL;
            cudaError_t e = cudaMalloc((void **)&c, 4096);
            if (e == cudaSuccess && __cudaPushCallConfiguration((dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, 0, NULL) == 0) {
                scale(c, 2.0f, 32);
                e = cudaDeviceSynchronize();
                if (e == cudaSuccess)
                    e = cudaGetLastError();
            }
            printf("child: %s\n", cudaGetErrorName(e));
            fflush(stdout);
            _exit(e == cudaSuccess ? 0 : 1);
        }
        int st = 1;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed");
    }
    free(host);
    free(back);
    if (getenv("E2E_NO_DRIVER") && strcmp(getenv("E2E_NO_DRIVER"), "1") == 0)
        CHECK(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL, "a libcuda.so.1 is loaded in the client");
    return failures != 0;
}
