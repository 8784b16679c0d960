/*
 * app_driver.cu - an ordinary CUDA program that the GPU suite runs natively,
 * under LD_PRELOAD=libcushim.so and through the drop-in libcuda.so.1.
 *
 * USAGE: app_driver KERN.cubin KERN.ptx
 *
 * It mixes the runtime API (static or shared cudart, as nvcc was told) and the
 * driver API (linked with -lcuda): memory, copies (H2D, D2H, D2D, async),
 * streams, events, a <<<>>> launch, cuModuleLoadData of a cubin and of PTX
 * plus cuLaunchKernel, graphs (runtime and driver stream capture), virtual
 * memory management and stream-ordered allocation. Every return code is
 * checked and every result verified numerically. Prints "app_driver: OK"
 * and exits 0 only when everything passed.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static int checks;

#define CK(call) ck_drv((call), #call, __LINE__)
#define CR(call) ck_rt((call), #call, __LINE__)
#define EXPECT(cond, ...) expect_((cond), #cond, __LINE__, __VA_ARGS__)

static int ck_drv(CUresult r, const char *what, int line)
{
    checks++;
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        fprintf(stderr, "app_driver:%d: %s failed: %d (%s)\n", line, what, (int)r, name ? name : "?");
        failures++;
        return 1;
    }
    return 0;
}

static int ck_rt(cudaError_t r, const char *what, int line)
{
    checks++;
    if (r != cudaSuccess) {
        fprintf(stderr, "app_driver:%d: %s failed: %d (%s)\n", line, what, (int)r, cudaGetErrorName(r));
        failures++;
        return 1;
    }
    return 0;
}

static void expect_(int ok, const char *what, int line, const char *fmt, ...)
{
    checks++;
    if (!ok) {
        fprintf(stderr, "app_driver:%d: check '%s' failed: %s\n", line, what, fmt);
        failures++;
    }
}

__global__ void add_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

static char *read_file(const char *path, size_t *len, int nul)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "app_driver: cannot open '%s'\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        *len = (size_t)n + (nul ? 1 : 0);
    }
    return buf;
}

enum { N = 1 << 16 };

/* Memory and copies through both APIs, and a <<<>>> launch. */
static void test_memory_and_copies(void)
{
    int *h = (int *)malloc(N * sizeof(int));
    int *pinned = NULL;
    int *d_rt = NULL;
    CUdeviceptr d_drv = 0, d_drv2 = 0;
    for (int i = 0; i < N; i++)
        h[i] = i * 3;
    CR(cudaMalloc((void **)&d_rt, N * sizeof(int)));
    CK(cuMemAlloc(&d_drv, N * sizeof(int)));
    CK(cuMemAlloc(&d_drv2, N * sizeof(int)));
    CR(cudaMallocHost((void **)&pinned, N * sizeof(int)));

    CR(cudaMemcpy(d_rt, h, N * sizeof(int), cudaMemcpyHostToDevice));
    add_one<<<(N + 255) / 256, 256>>>(d_rt, N);
    CR(cudaGetLastError());
    CK(cuMemcpyDtoD(d_drv, (CUdeviceptr)d_rt, N * sizeof(int)));
    CR(cudaMemcpy((void *)d_drv2, (void *)d_drv, N * sizeof(int), cudaMemcpyDeviceToDevice));
    memset(pinned, 0, N * sizeof(int));
    CK(cuMemcpyDtoH(pinned, d_drv2, N * sizeof(int)));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += pinned[i] != i * 3 + 1;
    EXPECT(bad == 0, "sync copies: wrong values");

    /* async copies on a runtime stream and on a driver stream */
    cudaStream_t s;
    CUstream ds;
    CR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cuStreamCreate(&ds, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < N; i++)
        pinned[i] = 7 * i;
    CR(cudaMemcpyAsync(d_rt, pinned, N * sizeof(int), cudaMemcpyHostToDevice, s));
    add_one<<<(N + 255) / 256, 256, 0, s>>>(d_rt, N);
    CR(cudaGetLastError());
    CR(cudaStreamSynchronize(s));
    CK(cuMemcpyDtoDAsync(d_drv, (CUdeviceptr)d_rt, N * sizeof(int), ds));
    CK(cuMemsetD32Async(d_drv2, 0, N, ds));
    CK(cuMemcpyHtoDAsync(d_drv2, pinned, 16 * sizeof(int), ds));
    CK(cuStreamSynchronize(ds));
    CK(cuMemcpyDtoHAsync(pinned, d_drv, N * sizeof(int), ds));
    CK(cuStreamSynchronize(ds));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += pinned[i] != 7 * i + 1;
    EXPECT(bad == 0, "async copies: wrong values");
    CR(cudaMemcpy(h, (void *)d_drv2, N * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[i] != (i < 16 ? 7 * i : 0);   /* pinned held 7*i when copied */
    EXPECT(bad == 0, "memset + partial async copy: wrong values");

    CR(cudaStreamDestroy(s));
    CK(cuStreamDestroy(ds));
    CR(cudaFreeHost(pinned));
    CR(cudaFree(d_rt));
    CK(cuMemFree(d_drv));
    CK(cuMemFree(d_drv2));
    free(h);
}

/* Streams and events: ordering across streams, elapsed time, queries. */
static void test_streams_events(void)
{
    cudaStream_t a, b;
    cudaEvent_t e0, e1;
    CUevent de;
    int *d = NULL;
    int host[256];
    CR(cudaStreamCreate(&a));
    CR(cudaStreamCreate(&b));
    CR(cudaEventCreate(&e0));
    CR(cudaEventCreate(&e1));
    CK(cuEventCreate(&de, CU_EVENT_DEFAULT));
    CR(cudaMalloc((void **)&d, 256 * sizeof(int)));
    CR(cudaMemsetAsync(d, 0, 256 * sizeof(int), a));
    CR(cudaEventRecord(e0, a));
    for (int k = 0; k < 10; k++)
        add_one<<<1, 256, 0, a>>>(d, 256);
    CK(cuEventRecord(de, (CUstream)a));
    CK(cuStreamWaitEvent((CUstream)b, de, 0));
    for (int k = 0; k < 5; k++)
        add_one<<<1, 256, 0, b>>>(d, 256);
    CR(cudaEventRecord(e1, b));
    CR(cudaEventSynchronize(e1));
    CK(cuEventSynchronize(de));
    CK(cuEventQuery(de));
    CR(cudaEventQuery(e1));
    float ms = -1.0f;
    CR(cudaEventElapsedTime(&ms, e0, e1));
    EXPECT(ms >= 0.0f, "event elapsed time negative");
    CR(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 256; i++)
        bad += host[i] != 15;
    EXPECT(bad == 0, "stream/event ordering: wrong values");
    CR(cudaFree(d));
    CK(cuEventDestroy(de));
    CR(cudaEventDestroy(e0));
    CR(cudaEventDestroy(e1));
    CR(cudaStreamDestroy(a));
    CR(cudaStreamDestroy(b));
}

/* cuModuleLoadData of a cubin and of PTX, cuLaunchKernel. */
static void test_modules(const char *cubin_path, const char *ptx_path)
{
    const char *paths[2] = { cubin_path, ptx_path };
    for (int m = 0; m < 2; m++) {
        size_t len = 0;
        char *image = read_file(paths[m], &len, m == 1);
        EXPECT(image != NULL, "cannot read module image");
        if (!image)
            continue;
        CUmodule mod;
        CUfunction fn;
        if (CK(cuModuleLoadData(&mod, image))) {
            free(image);
            continue;
        }
        CK(cuModuleGetFunction(&fn, mod, "saxpy"));
        float hx[N], hy[N];
        static float out[N];
        for (int i = 0; i < N; i++) {
            hx[i] = (float)i;
            hy[i] = 1.0f;
        }
        CUdeviceptr dx, dy;
        CK(cuMemAlloc(&dx, sizeof hx));
        CK(cuMemAlloc(&dy, sizeof hy));
        CK(cuMemcpyHtoD(dx, hx, sizeof hx));
        CK(cuMemcpyHtoD(dy, hy, sizeof hy));
        float a = 2.0f;
        int n = N;
        void *args[] = { &a, &dx, &dy, &n };
        CK(cuLaunchKernel(fn, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
        CK(cuCtxSynchronize());
        CK(cuMemcpyDtoH(out, dy, sizeof out));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += out[i] != 2.0f * (float)i + 1.0f;
        EXPECT(bad == 0, m == 0 ? "cubin saxpy: wrong values" : "ptx saxpy: wrong values");
        CK(cuMemFree(dx));
        CK(cuMemFree(dy));
        CK(cuModuleUnload(mod));
        free(image);
    }
}

/* Graphs: runtime stream capture and driver stream capture. */
static void test_graphs(const char *cubin_path)
{
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    int *d = NULL;
    int host[1024];
    CR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CR(cudaMalloc((void **)&d, sizeof host));
    CR(cudaMemset(d, 0, sizeof host));
    CR(cudaDeviceSynchronize());   /* 's' is non-blocking: no implicit order with the memset */
    CR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; k++)
        add_one<<<4, 256, 0, s>>>(d, 1024);
    CR(cudaStreamEndCapture(s, &g));
    CR(cudaGraphInstantiate(&ge, g, 0));
    CR(cudaGraphLaunch(ge, s));
    CR(cudaGraphLaunch(ge, s));
    CR(cudaStreamSynchronize(s));
    CR(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 1024; i++)
        bad += host[i] != 6;
    EXPECT(bad == 0, "runtime graph: wrong values");
    CR(cudaGraphExecDestroy(ge));
    CR(cudaGraphDestroy(g));

    /* driver capture of a cuLaunchKernel from a loaded cubin */
    size_t len = 0;
    char *image = read_file(cubin_path, &len, 0);
    CUmodule mod;
    CUfunction fn;
    CUgraph dg;
    CUgraphExec dge;
    if (image && !CK(cuModuleLoadData(&mod, image))) {
        CK(cuModuleGetFunction(&fn, mod, "add_u32"));
        CUdeviceptr p = (CUdeviceptr)d;
        unsigned v = 5;
        int n = 1024;
        void *args[] = { &p, &v, &n };
        CK(cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, (CUstream)s, args, NULL));
        CK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, (CUstream)s, args, NULL));
        CK(cuStreamEndCapture((CUstream)s, &dg));
        CK(cuGraphInstantiate(&dge, dg, 0));
        CK(cuGraphLaunch(dge, (CUstream)s));
        CK(cuStreamSynchronize((CUstream)s));
        CR(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
        bad = 0;
        for (int i = 0; i < 1024; i++)
            bad += host[i] != 16;
        EXPECT(bad == 0, "driver graph: wrong values");
        CK(cuGraphExecDestroy(dge));
        CK(cuGraphDestroy(dg));
        CK(cuModuleUnload(mod));
    } else {
        EXPECT(0, "driver graph: cannot load cubin");
    }
    free(image);
    CR(cudaFree(d));
    CR(cudaStreamDestroy(s));
}

/* Virtual memory management: create, reserve, map, set access, use, undo. */
static void test_vmm(CUdevice dev)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)dev;
    size_t gran = 0;
    if (CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
        return;
    size_t size = gran * 2;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = 0;
    if (CK(cuMemCreate(&h, size, &prop, 0)))
        return;
    CK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CK(cuMemMap(va, size, 0, h, 0));
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, size, &acc, 1));
    size_t n = size / sizeof(int);
    CK(cuMemsetD32(va, 41, n));
    add_one<<<(unsigned)((n + 255) / 256), 256>>>((int *)va, (int)n);
    CR(cudaGetLastError());
    CR(cudaDeviceSynchronize());
    int *host = (int *)malloc(size);
    CK(cuMemcpyDtoH(host, va, size));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += host[i] != 42;
    EXPECT(bad == 0, "vmm: wrong values");
    free(host);
    CK(cuMemUnmap(va, size));
    CK(cuMemAddressFree(va, size));
    CK(cuMemRelease(h));
}

/* Stream-ordered allocation through both APIs. */
static void test_stream_ordered(void)
{
    cudaStream_t s;
    int *d = NULL;
    CUdeviceptr dd = 0;
    int host[4096];
    CR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CR(cudaMallocAsync((void **)&d, sizeof host, s));
    CR(cudaMemsetAsync(d, 0, sizeof host, s));
    add_one<<<16, 256, 0, s>>>(d, 4096);
    CR(cudaGetLastError());
    CK(cuMemAllocAsync(&dd, sizeof host, (CUstream)s));
    CK(cuMemcpyDtoDAsync(dd, (CUdeviceptr)d, sizeof host, (CUstream)s));
    CR(cudaFreeAsync(d, s));
    add_one<<<16, 256, 0, s>>>((int *)dd, 4096);
    CR(cudaMemcpyAsync(host, (void *)dd, sizeof host, cudaMemcpyDeviceToHost, s));
    CK(cuMemFreeAsync(dd, (CUstream)s));
    CR(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < 4096; i++)
        bad += host[i] != 2;
    EXPECT(bad == 0, "stream-ordered allocation: wrong values");
    CR(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s KERN.cubin KERN.ptx\n", argv[0]);
        return 2;
    }
    int ndev = 0;
    CR(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        fprintf(stderr, "app_driver: no CUDA device\n");
        return 1;
    }
    CR(cudaSetDevice(0));
    CR(cudaFree(0));
    CK(cuInit(0));
    CUcontext ctx = NULL;
    CUdevice dev = 0;
    CK(cuCtxGetCurrent(&ctx));
    EXPECT(ctx != NULL, "no current context after cudaFree(0)");
    CK(cuCtxGetDevice(&dev));
    int drv = 0, rt = 0;
    CK(cuDriverGetVersion(&drv));
    CR(cudaRuntimeGetVersion(&rt));
    char name[128] = "";
    CK(cuDeviceGetName(name, sizeof name, dev));

    test_memory_and_copies();
    test_streams_events();
    test_modules(argv[1], argv[2]);
    test_graphs(argv[1]);
    test_vmm(dev);
    test_stream_ordered();
    CR(cudaDeviceSynchronize());

    if (failures) {
        printf("app_driver: FAIL %d of %d checks (driver %d, runtime %d, %s)\n", failures, checks, drv, rt, name);
        return 1;
    }
    printf("app_driver: OK %d checks (driver %d, runtime %d, %s)\n", checks, drv, rt, name);
    return 0;
}
