/*
 * e2e_memlimit.c - the memlimit plugin end to end, against the fake driver and
 * runtime (run by tests/e2e/memlimit.cmake with the shim preloaded and
 * CUSHIM_PLUGINS or HAMi's variables set). Self-checking: each failed check
 * prints "FAIL ..." and the exit status is 1.
 *
 *   e2e_memlimit table LIMIT        every allocation path of the roles, driver and runtime: charged
 *                                   by the size the fake allocated, on the right device, credited on
 *                                   release; imports not charged; failed calls not charged; queries
 *                                   report LIMIT; past it out-of-memory without reaching the driver
 *   e2e_memlimit churn N THREADS    N async alloc/free pairs over THREADS threads: nothing leaks
 *                                   and nothing underflows (usage 0 after, and every byte usable)
 *   e2e_memlimit underflow          releases of unknown, double-freed and foreign pointers
 *   e2e_memlimit hold LIMIT BYTES   allocate BYTES on device 0, print "held", sleep until killed
 *   e2e_memlimit hami LIMIT         queries report LIMIT with no CUSHIM_PLUGINS (HAMi variables)
 *   e2e_memlimit closed             the shim failed closed: cuInit and cuMemAlloc are refused
 *   e2e_memlimit shrink LIMIT REGION the budget region's file is truncated under the process: it lives on,
 *                                   its allocations charged to a budget of its own
 *   e2e_memlimit nvml T0 T1 A       NVML (the fake libnvidia-ml.so.1, through dlopen/dlsym as nvidia-smi
 *                                   and frameworks reach it): nvmlDeviceGetMemoryInfo and its _v2 report
 *                                   total T0 and T1 for NVML devices 0 and 1 (the quota of the CUDA
 *                                   device each is, by CUDA_VISIBLE_DEVICES; the fake's 16 GiB where
 *                                   none applies); after 256 MiB allocated on CUDA device 0 (NVML
 *                                   device A) its used and free are the quota's
 *   e2e_memlimit live LIMIT DIR     live limits (run_memlimit_live.sh changes them with 'cushim limit'
 *                                   between steps, each step a file in DIR): 32 MiB held under LIMIT
 *                                   (64 MiB); lowered to 16 MiB: nothing more, the queries say 16 MiB,
 *                                   nothing freed behind the program's back; freed by the program: 8 MiB
 *                                   more but not 16; the live limit dropped: LIMIT again
 *   e2e_memlimit devmap T0 F0 T1 F1 CUDA ordinals 0 and 1 under a reordered CUDA_VISIBLE_DEVICES (run by
 *                                   run_memlimit_devmap.sh beside a holder of the same budget): cuMemGetInfo
 *                                   and cuDeviceTotalMem report total Ti and free Fi (the quota of the
 *                                   physical device the ordinal is, less what the budget's processes hold
 *                                   there); Fi + 1 MiB is refused, Fi is allocated
 *   e2e_memlimit killloop REGION LIMIT WORKERS KILLS
 *                                   WORKERS forked processes allocate and free on one shared budget;
 *                                   the parent SIGKILLs one at a random instant KILLS times and starts
 *                                   another; the budget never exceeds LIMIT, and afterwards every
 *                                   dead slot is reclaimed and the whole LIMIT can be allocated
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "e2e_ml_common.h"
#include "ml_budget.h"


static struct cudaExtent extent(size_t w, size_t h, size_t d)
{
    struct cudaExtent e;
    e.width = w;
    e.height = h;
    e.depth = d;
    return e;
}

static CUcontext ctx[2];
static size_t limit;

static void init(void)
{
    CUdevice d;
    CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
    for (int i = 0; i < 2; i++) {
        CHECK(cuDeviceGet(&d, i) == CUDA_SUCCESS, "cuDeviceGet %d", i);
        CHECK(cuDevicePrimaryCtxRetain(&ctx[i], d) == CUDA_SUCCESS, "retain %d", i);
    }
    CHECK(cuCtxSetCurrent(ctx[0]) == CUDA_SUCCESS, "set current");
}

/* What the quota says is charged on 'dev': LIMIT minus the free memory cuMemGetInfo reports. */
static size_t quota_used(int dev)
{
    size_t f = 0, t = 0;
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    cuCtxSetCurrent(ctx[dev]);
    CHECK(cuMemGetInfo(&f, &t) == CUDA_SUCCESS, "cuMemGetInfo");
    cuCtxSetCurrent(cur);
    CHECK(t == limit, "cuMemGetInfo total %zu, the quota is %zu", t, limit);
    return limit - f;
}

typedef struct snap {
    size_t q[2], f[2];
} snap;

static snap take(void)
{
    snap s;
    for (int d = 0; d < 2; d++) {
        s.q[d] = quota_used(d);
        s.f[d] = fake_cuda_bytes_allocated(d);
    }
    return s;
}

/* Device 'dev' grew by what the fake allocated (charged == allocated), the other not at all. */
static void expect_charged(const char *what, snap a, int dev, int charged)
{
    snap b = take();
    for (int d = 0; d < 2; d++) {
        size_t dq = b.q[d] - a.q[d], df = b.f[d] - a.f[d];
        if (d == dev && charged) {
            CHECK(df > 0, "%s: the fake allocated nothing on device %d", what, d);
            CHECK(dq == df, "%s: device %d charged %zu, the fake allocated %zu", what, d, dq, df);
        } else {
            CHECK(dq == 0, "%s: device %d charged %zu, expected 0", what, d, dq);
        }
    }
}

static void expect_same(const char *what, snap a)
{
    snap b = take();
    for (int d = 0; d < 2; d++) {
        CHECK(b.q[d] == a.q[d], "%s: device %d quota use %zu, was %zu", what, d, b.q[d], a.q[d]);
        CHECK(b.f[d] == a.f[d], "%s: device %d fake use %zu, was %zu", what, d, b.f[d], a.f[d]);
    }
}

static void table_driver(void)
{
    snap s0 = take(), s;
    CUdeviceptr p = 0;
    size_t pitch = 0;
    void *h = NULL;

    s = take();
    CHECK(cuMemAlloc(&p, 3 * MiB) == CUDA_SUCCESS, "cuMemAlloc");
    expect_charged("cuMemAlloc", s, 0, 1);
    CHECK(cuMemFree(p) == CUDA_SUCCESS, "cuMemFree");
    expect_same("cuMemFree", s);

    CHECK(cuMemAllocPitch(&p, &pitch, 1000, 100, 4) == CUDA_SUCCESS, "cuMemAllocPitch");
    expect_charged("cuMemAllocPitch (pitch x height)", s, 0, 1);
    CHECK(cuMemFree(p) == CUDA_SUCCESS, "cuMemFree pitched");
    expect_same("cuMemFree pitched", s);
    /* a failed call is not charged */
    CHECK(cuMemAllocPitch(&p, &pitch, 1000, 100, 3) == CUDA_ERROR_INVALID_VALUE, "bad pitch element size");
    expect_same("failed cuMemAllocPitch", s);

    CHECK(cuMemAllocManaged(&p, 2 * MiB, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS, "cuMemAllocManaged");
    expect_charged("cuMemAllocManaged (charged by default)", s, 0, 1);
    CHECK(cuMemFree(p) == CUDA_SUCCESS, "cuMemFree managed");
    expect_same("cuMemFree managed", s);

    CHECK(cuMemAllocHost(&h, 4 * MiB) == CUDA_SUCCESS, "cuMemAllocHost");
    expect_same("cuMemAllocHost (host memory: not charged)", s);
    CHECK(cuMemFreeHost(h) == CUDA_SUCCESS, "cuMemFreeHost");
    CHECK(cuMemHostAlloc(&h, 4 * MiB, 0) == CUDA_SUCCESS, "cuMemHostAlloc");
    expect_same("cuMemHostAlloc", s);
    CHECK(cuMemFreeHost(h) == CUDA_SUCCESS, "cuMemFreeHost 2");

    CHECK(cuMemAllocAsync(&p, 5 * MiB, NULL) == CUDA_SUCCESS, "cuMemAllocAsync");
    expect_charged("cuMemAllocAsync", s, 0, 1);
    CHECK(cuMemFreeAsync(p, NULL) == CUDA_SUCCESS, "cuMemFreeAsync");
    expect_same("cuMemFreeAsync", s);

    /* a pool of device 1, used with device 0's context current: charged on device 1 */
    {
        CUmemPoolProps pp;
        CUmemoryPool pool = NULL, dflt = NULL;
        memset(&pp, 0, sizeof pp);
        pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pp.location.id = 1;
        CHECK(cuMemPoolCreate(&pool, &pp) == CUDA_SUCCESS, "cuMemPoolCreate");
        CHECK(cuMemAllocFromPoolAsync(&p, 6 * MiB, pool, NULL) == CUDA_SUCCESS, "cuMemAllocFromPoolAsync");
        expect_charged("cuMemAllocFromPoolAsync (pool of device 1)", s, 1, 1);
        CHECK(cuMemFreeAsync(p, NULL) == CUDA_SUCCESS, "cuMemFreeAsync pool");
        expect_same("cuMemFreeAsync pool", s);
        CHECK(cuMemPoolTrimTo(pool, 0) == CUDA_SUCCESS, "cuMemPoolTrimTo");
        expect_same("cuMemPoolTrimTo", s);
        CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS, "cuMemPoolDestroy");
        CHECK(cuDeviceGetDefaultMemPool(&dflt, 1) == CUDA_SUCCESS, "cuDeviceGetDefaultMemPool");
        CHECK(cuMemAllocFromPoolAsync(&p, 1 * MiB, dflt, NULL) == CUDA_SUCCESS, "from the default pool");
        expect_charged("cuMemAllocFromPoolAsync (device 1's default pool)", s, 1, 1);
        CHECK(cuMemFreeAsync(p, NULL) == CUDA_SUCCESS, "cuMemFreeAsync default pool");
        expect_same("free default pool", s);
    }

    /* VMM: the device the properties name, never the current context's */
    {
        CUmemAllocationProp prop;
        CUmemGenericAllocationHandle hd = 0, hr = 0, hi = 0;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 1;
        CHECK(cuMemCreate(&hd, 8 * MiB, &prop, 0) == CUDA_SUCCESS, "cuMemCreate");
        expect_charged("cuMemCreate on device 1 from device 0's context", s, 1, 1);
        snap mid = take();
        /* one more reference: released twice, credited once, at the last */
        CHECK(cuMemRetainAllocationHandle(&hr, (void *)(uintptr_t)(hd & ~(1ull << 63))) == CUDA_SUCCESS, "retain");
        CHECK(hr == hd, "retain gave another handle");
        CHECK(cuMemRelease(hd) == CUDA_SUCCESS, "release 1");
        expect_same("cuMemRelease of a retained handle (one reference left)", mid);
        CHECK(cuMemRelease(hr) == CUDA_SUCCESS, "release 2");
        expect_same("cuMemRelease of the last reference", s);
        CHECK(cuMemImportFromShareableHandle(&hi, (void *)(uintptr_t)7, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) ==
                  CUDA_SUCCESS, "import");
        CHECK(quota_used(0) == s.q[0] && quota_used(1) == s.q[1], "an imported handle was charged");
        CHECK(cuMemRelease(hi) == CUDA_SUCCESS, "release imported");
        CHECK(quota_used(0) == s.q[0] && quota_used(1) == s.q[1], "releasing an import credited something");
        /* past the quota on device 1: refused before the driver */
        uint64_t before = fake_cuda_call_count("cuMemCreate");
        CHECK(cuMemCreate(&hd, (limit / (2 * MiB) + 1) * 2 * MiB, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY,
              "cuMemCreate past the quota");
        CHECK(fake_cuda_call_count("cuMemCreate") == before, "the refused cuMemCreate reached the driver");
    }
    s = take();

    /* IPC mappings are the exporter's memory: not charged, and closing credits nothing */
    {
        CUipcMemHandle ih;
        CUdeviceptr src = 0, m = 0;
        CHECK(cuMemAlloc(&src, 1 * MiB) == CUDA_SUCCESS, "ipc source");
        snap t = take();
        CHECK(cuIpcGetMemHandle(&ih, src) == CUDA_SUCCESS, "cuIpcGetMemHandle");
        CHECK(cuIpcOpenMemHandle(&m, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS, "cuIpcOpenMemHandle");
        expect_same("cuIpcOpenMemHandle", t);
        CHECK(cuIpcCloseMemHandle(m) == CUDA_SUCCESS, "cuIpcCloseMemHandle");
        expect_same("cuIpcCloseMemHandle", t);
        CHECK(cuMemFree(src) == CUDA_SUCCESS, "ipc source free");
        expect_same("ipc source freed", s);
    }

    /* arrays, sized from their descriptors */
    {
        CUDA_ARRAY_DESCRIPTOR d2;
        CUDA_ARRAY3D_DESCRIPTOR d3;
        CUarray a = NULL;
        CUmipmappedArray mm = NULL;
        memset(&d2, 0, sizeof d2);
        d2.Width = 1024;
        d2.Height = 512;
        d2.Format = CU_AD_FORMAT_FLOAT;
        d2.NumChannels = 2;
        CHECK(cuArrayCreate(&a, &d2) == CUDA_SUCCESS, "cuArrayCreate");
        expect_charged("cuArrayCreate", s, 0, 1);
        CHECK(cuArrayDestroy(a) == CUDA_SUCCESS, "cuArrayDestroy");
        expect_same("cuArrayDestroy", s);
        /* the legacy export takes the 32-bit CUDA_ARRAY_DESCRIPTOR_v1: read through the struct metadata */
        {
            struct { unsigned int Width, Height; CUarray_format Format; unsigned int NumChannels; } v1 = {
                768, 300, CU_AD_FORMAT_UNSIGNED_INT16, 4};
            CUresult (*legacy)(CUarray *, const void *);
            *(void **)&legacy = dlsym(RTLD_DEFAULT, "cuArrayCreate");
            CHECK(legacy != NULL, "no legacy cuArrayCreate");
            if (legacy != NULL) {
                CHECK(legacy(&a, &v1) == CUDA_SUCCESS, "legacy cuArrayCreate");
                expect_charged("legacy cuArrayCreate (CUDA_ARRAY_DESCRIPTOR_v1)", s, 0, 1);
                CHECK(cuArrayDestroy(a) == CUDA_SUCCESS, "cuArrayDestroy legacy");
                expect_same("cuArrayDestroy legacy", s);
            }
        }
        memset(&d3, 0, sizeof d3);
        d3.Width = 256;
        d3.Height = 128;
        d3.Depth = 16;
        d3.Format = CU_AD_FORMAT_HALF;
        d3.NumChannels = 4;
        CHECK(cuArray3DCreate(&a, &d3) == CUDA_SUCCESS, "cuArray3DCreate");
        expect_charged("cuArray3DCreate", s, 0, 1);
        CHECK(cuArrayDestroy(a) == CUDA_SUCCESS, "cuArrayDestroy 3D");
        d3.Depth = 0;
        CHECK(cuMipmappedArrayCreate(&mm, &d3, 5) == CUDA_SUCCESS, "cuMipmappedArrayCreate");
        expect_charged("cuMipmappedArrayCreate (5 levels)", s, 0, 1);
        CHECK(cuMipmappedArrayDestroy(mm) == CUDA_SUCCESS, "cuMipmappedArrayDestroy");
        expect_same("cuMipmappedArrayDestroy", s);
    }

    /* graph memory nodes: on the device the node's pool properties name */
    {
        CUDA_MEM_ALLOC_NODE_PARAMS np;
        CUgraphNode n1 = NULL, n2 = NULL;
        memset(&np, 0, sizeof np);
        np.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        np.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        np.poolProps.location.id = 1;
        np.bytesize = 3 * MiB;
        CHECK(cuGraphAddMemAllocNode(&n1, NULL, NULL, 0, &np) == CUDA_SUCCESS, "cuGraphAddMemAllocNode");
        expect_charged("cuGraphAddMemAllocNode (device 1)", s, 1, 1);
        CHECK(cuGraphAddMemFreeNode(&n2, NULL, NULL, 0, np.dptr) == CUDA_SUCCESS, "cuGraphAddMemFreeNode");
        expect_same("cuGraphAddMemFreeNode", s);
    }

    /* past the quota: the driver's out-of-memory, the driver never called */
    {
        uint64_t before = fake_cuda_call_count("cuMemAlloc_v2");
        CHECK(cuMemAlloc(&p, limit + 1) == CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc past the quota");
        CHECK(fake_cuda_call_count("cuMemAlloc_v2") == before, "the refused cuMemAlloc reached the driver");
        CHECK(cuMemAlloc(&p, limit) == CUDA_SUCCESS, "the whole quota in one allocation");
        CHECK(cuMemFree(p) == CUDA_SUCCESS, "free the whole quota");
    }
    {
        size_t t = 0;
        CHECK(cuDeviceTotalMem(&t, 1) == CUDA_SUCCESS && t == limit, "cuDeviceTotalMem %zu", t);
    }
    expect_same("driver paths, all released", s0);
}

static void table_runtime(void)
{
    snap s = take();
    void *p = NULL;
    size_t pitch = 0, f = 0, t = 0;
    struct cudaChannelFormatDesc cd = {32, 32, 0, 0, cudaChannelFormatKindFloat};
    cudaArray_t a = NULL;
    cudaMipmappedArray_t mm = NULL;
    struct cudaPitchedPtr pp;
    struct cudaDeviceProp prop;
    cudaMemPool_t pool = NULL;

    CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice");
    CHECK(cudaMalloc(&p, 3 * MiB) == cudaSuccess, "cudaMalloc");
    expect_charged("cudaMalloc (charged once, not again by its cuMemAlloc)", s, 0, 1);
    CHECK(cudaFree(p) == cudaSuccess, "cudaFree");
    expect_same("cudaFree", s);
    CHECK(cudaMallocPitch(&p, &pitch, 1000, 300) == cudaSuccess, "cudaMallocPitch");
    expect_charged("cudaMallocPitch", s, 0, 1);
    CHECK(cudaFree(p) == cudaSuccess, "cudaFree pitch");
    CHECK(cudaMalloc3D(&pp, extent(1000, 30, 10)) == cudaSuccess, "cudaMalloc3D");
    expect_charged("cudaMalloc3D", s, 0, 1);
    CHECK(cudaFree(pp.ptr) == cudaSuccess, "cudaFree 3D");
    CHECK(cudaMallocArray(&a, &cd, 640, 480, 0) == cudaSuccess, "cudaMallocArray");
    expect_charged("cudaMallocArray", s, 0, 1);
    CHECK(cudaFreeArray(a) == cudaSuccess, "cudaFreeArray");
    CHECK(cudaMalloc3DArray(&a, &cd, extent(64, 64, 8), 0) == cudaSuccess, "cudaMalloc3DArray");
    expect_charged("cudaMalloc3DArray", s, 0, 1);
    CHECK(cudaFreeArray(a) == cudaSuccess, "cudaFreeArray 3D");
    CHECK(cudaMallocMipmappedArray(&mm, &cd, extent(256, 256, 0), 4, 0) == cudaSuccess,
          "cudaMallocMipmappedArray");
    expect_charged("cudaMallocMipmappedArray", s, 0, 1);
    CHECK(cudaFreeMipmappedArray(mm) == cudaSuccess, "cudaFreeMipmappedArray");
    CHECK(cudaMallocManaged(&p, 2 * MiB, cudaMemAttachGlobal) == cudaSuccess, "cudaMallocManaged");
    expect_charged("cudaMallocManaged", s, 0, 1);
    CHECK(cudaFree(p) == cudaSuccess, "cudaFree managed");
    CHECK(cudaMallocHost(&p, 2 * MiB) == cudaSuccess, "cudaMallocHost");
    expect_same("cudaMallocHost", s);
    CHECK(cudaFreeHost(p) == cudaSuccess, "cudaFreeHost");
    CHECK(cudaHostAlloc(&p, 2 * MiB, 0) == cudaSuccess, "cudaHostAlloc");
    expect_same("cudaHostAlloc", s);
    CHECK(cudaFreeHost(p) == cudaSuccess, "cudaFreeHost 2");
    CHECK(cudaMallocAsync(&p, 4 * MiB, NULL) == cudaSuccess, "cudaMallocAsync");
    expect_charged("cudaMallocAsync", s, 0, 1);
    CHECK(cudaFreeAsync(p, NULL) == cudaSuccess, "cudaFreeAsync");
    expect_same("cudaFreeAsync", s);
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 1) == cudaSuccess, "cudaDeviceGetDefaultMemPool");
    CHECK(cudaMallocFromPoolAsync(&p, 4 * MiB, pool, NULL) == cudaSuccess, "cudaMallocFromPoolAsync");
    expect_charged("cudaMallocFromPoolAsync (device 1's pool)", s, 1, 1);
    CHECK(cudaFreeAsync(p, NULL) == cudaSuccess, "cudaFreeAsync pool");
    expect_same("runtime paths, all released", s);

    /* past the quota: the runtime's own error */
    {
        uint64_t before = fake_cuda_call_count("cuMemAlloc_v2");
        CHECK(cudaMalloc(&p, limit + 1) == cudaErrorMemoryAllocation, "cudaMalloc past the quota");
        CHECK(fake_cuda_call_count("cuMemAlloc_v2") == before, "the refused cudaMalloc reached the driver");
    }
    CHECK(cudaMemGetInfo(&f, &t) == cudaSuccess && t == limit && f == limit - s.q[0], "cudaMemGetInfo %zu %zu", f,
          t);
    CHECK(cudaGetDeviceProperties(&prop, 1) == cudaSuccess && prop.totalGlobalMem == limit,
          "cudaGetDeviceProperties totalGlobalMem %zu", prop.totalGlobalMem);
}

/* ---- churn ---- */
static atomic_int churn_failures;
static long churn_n;

static void *churn_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    CUdeviceptr live[8] = {0};
    cuCtxSetCurrent(ctx[0]);
    for (long i = 0; i < churn_n; i++) {
        int k = (int)(rand_r(&seed) % 8);
        if (live[k]) {
            if (cuMemFreeAsync(live[k], NULL) != CUDA_SUCCESS)
                atomic_fetch_add(&churn_failures, 1);
            live[k] = 0;
        }
        /* sizes up to 4 KiB (the fake's heap, no mmap per call): 8 live per thread stay below the quota */
        if (cuMemAllocAsync(&live[k], 1 + rand_r(&seed) % 4096, NULL) != CUDA_SUCCESS) {
            atomic_fetch_add(&churn_failures, 1);
            live[k] = 0;
        }
    }
    for (int k = 0; k < 8; k++)
        if (live[k] && cuMemFreeAsync(live[k], NULL) != CUDA_SUCCESS)
            atomic_fetch_add(&churn_failures, 1);
    return NULL;
}

static void churn(long n, int threads)
{
    pthread_t t[64];
    CUdeviceptr p = 0;
    if (threads < 1 || threads > 64)
        threads = 1;
    churn_n = n / threads;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, churn_thread, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&churn_failures) == 0, "%d calls failed during the churn", atomic_load(&churn_failures));
    CHECK(quota_used(0) == 0, "after %ld alloc/free pairs the quota says %zu in use", n, quota_used(0));
    CHECK(fake_cuda_bytes_allocated(0) == 0, "the fake has %zu in use", fake_cuda_bytes_allocated(0));
    /* no false out-of-memory: the whole quota is still there */
    CHECK(cuMemAlloc(&p, limit) == CUDA_SUCCESS, "the whole quota after the churn");
    cuMemFree(p);
}

static void underflow(void)
{
    CUdeviceptr p = 0, q = 0;
    void *hp = malloc(64);
    CHECK(cuMemAlloc(&p, 2 * MiB) == CUDA_SUCCESS, "alloc");
    CHECK(cuMemFree(p) == CUDA_SUCCESS, "free");
    CHECK(cuMemFree(p) != CUDA_SUCCESS, "double free accepted by the fake?");
    CHECK(cuMemFree((CUdeviceptr)(uintptr_t)hp) != CUDA_SUCCESS, "foreign free accepted by the fake?");
    CHECK(cuMemFreeAsync(12345, NULL) != CUDA_SUCCESS, "unknown cuMemFreeAsync accepted by the fake?");
    CHECK(cudaFree((void *)(uintptr_t)0xdead0000) != cudaSuccess, "unknown cudaFree accepted by the fake?");
    CHECK(quota_used(0) == 0, "quota use %zu after bad releases (underflow shows as a huge number)", quota_used(0));
    /* absurd sizes: refused past the quota, never charged, nothing leaks */
    CHECK(cuMemAlloc(&q, (size_t)1 << 62) == CUDA_ERROR_OUT_OF_MEMORY, "2^62 bytes");
    CHECK(cuMemAlloc(&q, SIZE_MAX) == CUDA_ERROR_OUT_OF_MEMORY, "SIZE_MAX bytes");
    CHECK(quota_used(0) == 0, "quota use %zu after absurd sizes", quota_used(0));
    CHECK(cuMemAlloc(&q, limit) == CUDA_SUCCESS, "the whole quota after bad releases");
    CHECK(cuMemAlloc(&p, 1) == CUDA_ERROR_OUT_OF_MEMORY, "one byte past the quota after bad releases");
    cuMemFree(q);
    free(hp);
}

/* ---- kill loop ---- */
static void worker(unsigned seed)
{
    CUdeviceptr live[4] = {0};
    cuCtxSetCurrent(ctx[0]);
    for (unsigned n = 1;; n++) {
        int k = (int)(rand_r(&seed) % 4);
        /* bursts with pauses: 16 workers on 2 cores leave the parent (and the dying) room to run */
        if (n % 32 == 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        if (live[k]) {
            cuMemFree(live[k]);
            live[k] = 0;
        }
        if (cuMemAlloc(&live[k], (1 + rand_r(&seed) % 64) * 1024) != CUDA_SUCCESS)
            live[k] = 0;
    }
}

static void killloop(const char *region, int workers, int kills)
{
    pid_t pids[64];
    ml_budget b;
    char err[256];
    unsigned seed = 12345;
    CUdeviceptr p = 0;
    int over = 0, held = 0;
    /* The sampled sum may include allocations in flight (charged, then backed out when over) and is
       read slot by slot, not as one snapshot: bounded by the limit plus what the workers can hold
       or have in flight (4 live + 1 of at most 64 KiB each). A leak of a killed worker's charge
       would break it within a few kills. */
    size_t bound = limit + (size_t)workers * 5 * 64 * 1024;
    if (workers > 64)
        workers = 64;
    /* the plugin opens the budget at the first allocation or query: make it (main removed any old one) */
    (void)quota_used(0);
    if (ml_budget_attach(&b, region, err, sizeof err) != 0) {
        CHECK(0, "attach %s: %s", region, err);
        return;
    }
    for (int i = 0; i < workers; i++)
        if ((pids[i] = fork()) == 0)
            worker((unsigned)i + 1);
    for (int k = 0; k < kills; k++) {
        int i = (int)(rand_r(&seed) % (unsigned)workers);
        struct timespec ts = {0, (long)(rand_r(&seed) % 1000) * 1000};
        nanosleep(&ts, NULL);
        if (ml_budget_used(&b, 0) > bound)
            over++;
        for (uint32_t j = 0; j < atomic_load(&b.r->hiwater) && j < ML_BUDGET_SLOTS; j++)
            if (atomic_load(&b.r->slots[j].pid) == (uint64_t)pids[i] && atomic_load(&b.r->slots[j].used[0]) != 0)
                held++;   /* killed holding charges: only reclaim can give them back */
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
        if ((pids[i] = fork()) == 0)
            worker((unsigned)(k + workers + 1));
    }
    for (int i = 0; i < workers; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
    CHECK(over == 0, "the shared budget was over its limit %d times", over);
    CHECK(held >= kills / 10, "only %d of %d kills hit a worker holding charges: the reclaim path was not exercised",
          held, kills);
    printf("killloop: %d of %d kills hit a worker holding charges\n", held, kills);
    /* every worker is dead: this process (which holds a slot of its own) can have the whole budget */
    CHECK(cuMemAlloc(&p, limit) == CUDA_SUCCESS, "the whole budget after %d kills", kills);
    CHECK(ml_budget_used(&b, 0) == limit, "region says %llu in use, expected only ours (%zu)",
          (unsigned long long)ml_budget_used(&b, 0), limit);
    cuMemFree(p);
    {
        int live = 0;
        for (uint32_t i = 0; i < atomic_load(&b.r->hiwater); i++)
            if (atomic_load(&b.r->slots[i].pid) != 0) {
                live++;
                CHECK(ml_budget_slot_alive(&b, (int)i), "slot %u names a dead process", i);
            }
        CHECK(live == 1, "%d slots in use after the kill loop, expected 1 (ours)", live);
    }
    ml_budget_close(&b);
}

#ifdef E2E_MEMLIMIT_NVML
#include <nvml.h>

#define FAKE_NVML_TOTAL ((size_t)16 << 30)   /* tests/fake/fake_nvml.c */
#define FAKE_NVML_USED ((size_t)1 << 30)

/* NVML device i's memory by both queries: total 'want', and (when the quota applies) used 'used'. */
static void nvml_expect(void *h, unsigned i, size_t want, size_t used, const char *when)
{
    nvmlReturn_t (*byindex)(unsigned, nvmlDevice_t *) =
        (nvmlReturn_t(*)(unsigned, nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *) =
        (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_t *))dlsym(h, "nvmlDeviceGetMemoryInfo");
    nvmlReturn_t (*mem2)(nvmlDevice_t, nvmlMemory_v2_t *) =
        (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_v2_t *))dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
    nvmlDevice_t d;
    nvmlMemory_t m;
    nvmlMemory_v2_t m2;
    int limited = want != FAKE_NVML_TOTAL;
    size_t u = limited ? used : FAKE_NVML_USED;
    CHECK(byindex && mem && mem2, "nvml: dlsym");
    if (!byindex || !mem || !mem2 || byindex(i, &d) != NVML_SUCCESS) {
        CHECK(0, "nvml: device %u", i);
        return;
    }
    memset(&m, 0, sizeof m);
    CHECK(mem(d, &m) == NVML_SUCCESS, "nvmlDeviceGetMemoryInfo %u", i);
    CHECK(m.total == want && m.used == u && m.free == want - u,
          "%s: NVML device %u: total %llu used %llu free %llu, want %zu, %zu, %zu", when, i, m.total, m.used, m.free,
          want, u, want - u);
    memset(&m2, 0, sizeof m2);
    m2.version = nvmlMemory_v2;
    CHECK(mem2(d, &m2) == NVML_SUCCESS, "nvmlDeviceGetMemoryInfo_v2 %u", i);
    CHECK(m2.version == nvmlMemory_v2 && m2.total == want && m2.used == u && m2.free == want - u - m2.reserved,
          "%s: NVML device %u (_v2): total %llu used %llu free %llu reserved %llu, want %zu, %zu", when, i, m2.total,
          m2.used, m2.free, m2.reserved, want, u);
}

static void nvml(size_t t0, size_t t1, unsigned a)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    nvmlReturn_t (*init)(void) = h ? (nvmlReturn_t(*)(void))dlsym(h, "nvmlInit_v2") : NULL;
    size_t t[2] = {t0, t1};
    CUdeviceptr p = 0;
    CHECK(init != NULL && init() == NVML_SUCCESS, "nvml: dlopen or nvmlInit_v2: %s", dlerror());
    if (init == NULL)
        return;
    for (unsigned i = 0; i < 2; i++)
        nvml_expect(h, i, t[i], 0, "before");
    CHECK(cuMemAlloc(&p, 256 * MiB) == CUDA_SUCCESS, "nvml: cuMemAlloc on device 0");
    for (unsigned i = 0; i < 2; i++)
        nvml_expect(h, i, t[i], i == a ? 256 * MiB : 0, "256 MiB on CUDA device 0");
    CHECK(cuMemFree(p) == CUDA_SUCCESS, "nvml: cuMemFree");
    for (unsigned i = 0; i < 2; i++)
        nvml_expect(h, i, t[i], 0, "freed");
}
#endif

/* run_memlimit_live.sh's steps: files in 'dir' */
static void live_touch(const char *dir, const char *name)
{
    char p[512];
    FILE *f;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if ((f = fopen(p, "w")) != NULL)
        fclose(f);
}

static int live_wait(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    for (int i = 0; i < 3000; i++) {   /* 30 s */
        if (access(p, F_OK) == 0)
            return 0;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    CHECK(0, "live: step '%s' never came", name);
    return -1;
}

static void live(const char *dir)
{
    CUdeviceptr a = 0, b = 0, c = 0;
    size_t fr = 0, tot = 0;
    CHECK(cuMemAlloc(&a, 32 * MiB) == CUDA_SUCCESS, "live: 32 MiB under the configured limit");
    live_touch(dir, "held");
    if (live_wait(dir, "lowered") != 0)
        return;
    /* 'cushim limit NAME --mem=16MiB' has returned: in force at this very allocation */
    CHECK(cuMemAlloc(&b, MiB) == CUDA_ERROR_OUT_OF_MEMORY, "live: 1 MiB more past the lowered limit was not refused");
    CHECK(cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS && tot == 16 * MiB && fr == 0,
          "live: cuMemGetInfo %zu free of %zu, not 0 of 16 MiB", fr, tot);
    CHECK(cuMemFree(a) == CUDA_SUCCESS, "live: cuMemFree");
    CHECK(cuMemAlloc(&b, 8 * MiB) == CUDA_SUCCESS, "live: 8 MiB under the lowered limit once freed");
    CHECK(cuMemAlloc(&c, 16 * MiB) == CUDA_ERROR_OUT_OF_MEMORY, "live: 8 + 16 MiB past the lowered 16 MiB");
    live_touch(dir, "checked");
    if (live_wait(dir, "dropped") != 0)
        return;
    CHECK(cuMemAlloc(&c, 40 * MiB) == CUDA_SUCCESS, "live: 8 + 40 MiB under the process's own %zu", limit);
    CHECK(cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS && tot == limit, "live: cuMemGetInfo total %zu, not %zu", tot,
          limit);
    CHECK(cuMemFree(b) == CUDA_SUCCESS && cuMemFree(c) == CUDA_SUCCESS, "live: cuMemFree");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2)
        limit = (size_t)strtoull(argv[2], NULL, 0);
    if (!strcmp(argv[1], "killloop") && argc == 6)
        unlink(argv[2]);   /* a fresh region: before the first CUDA call, which would open it */
    if (!strcmp(argv[1], "closed") && argc == 2) {
        /* a quota that cannot be read (or a required plugin that failed) fails closed: cuInit and the
           allocation are refused, nothing reaches the driver */
        CUdeviceptr p = 0;
        CHECK(cuInit(0) != CUDA_SUCCESS, "closed: cuInit succeeded");
        CHECK(cuMemAlloc(&p, 64 * MiB) != CUDA_SUCCESS, "closed: cuMemAlloc succeeded");
        printf("%s: %d failures\n", argv[1], failures);
        return failures ? 1 : 0;
    }
    if (!strcmp(argv[1], "nocontext") && argc == 3) {
        /* one device visible: memlimit takes an allocation's device as 0 without asking the driver; with no
           context current the call still gets the driver's own error, past the quota or not, and nothing stays
           charged */
        CUdeviceptr p = 0;
        CUdevice d;
        CUresult r;
        size_t f = 0, t = 0;
        CHECK(cuInit(0) == CUDA_SUCCESS, "nocontext: cuInit");
        r = cuMemAlloc(&p, limit + MiB);
        CHECK(r == CUDA_ERROR_INVALID_CONTEXT, "nocontext: past the quota without a context: %d, want %d", (int)r,
              (int)CUDA_ERROR_INVALID_CONTEXT);
        r = cuMemAlloc(&p, MiB);
        CHECK(r == CUDA_ERROR_INVALID_CONTEXT, "nocontext: within the quota without a context: %d, want %d", (int)r,
              (int)CUDA_ERROR_INVALID_CONTEXT);
        CHECK(cuDeviceGet(&d, 0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&ctx[0], d) == CUDA_SUCCESS &&
                  cuCtxSetCurrent(ctx[0]) == CUDA_SUCCESS, "nocontext: a context");
        CHECK(cuMemGetInfo(&f, &t) == CUDA_SUCCESS && t == limit && f == limit,
              "nocontext: free %zu of %zu after the failed calls, want all of %zu", f, t, limit);
        CHECK(cuMemAlloc(&p, limit + MiB) == CUDA_ERROR_OUT_OF_MEMORY, "nocontext: past the quota not refused");
        CHECK(cuMemAlloc(&p, MiB) == CUDA_SUCCESS, "nocontext: cuMemAlloc");
        CHECK(cuMemGetInfo(&f, &t) == CUDA_SUCCESS && limit - f == MiB, "nocontext: %zu charged, want 1 MiB",
              limit - f);
        CHECK(cuMemFree(p) == CUDA_SUCCESS, "nocontext: cuMemFree");
        printf("%s: %d failures\n", argv[1], failures);
        return failures ? 1 : 0;
    }
    init();
    if (!strcmp(argv[1], "table") && argc == 3) {
        table_driver();
        table_runtime();
    } else if (!strcmp(argv[1], "churn") && argc == 5) {
        limit = (size_t)strtoull(argv[2], NULL, 0);
        churn(strtol(argv[3], NULL, 10), atoi(argv[4]));
    } else if (!strcmp(argv[1], "underflow") && argc == 3) {
        underflow();
    } else if (!strcmp(argv[1], "hold") && argc == 4) {
        CUdeviceptr p = 0;
        CHECK(cuMemAlloc(&p, (size_t)strtoull(argv[3], NULL, 0)) == CUDA_SUCCESS, "hold: cuMemAlloc");
        printf("held\n");
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(argv[1], "skipped") && argc == 3) {
        /* a policy answers cuMemAlloc and cuMemFree itself with success (tests/e2e/lua/memskip.lua): nothing
           charged, nothing recorded under the address the program's variable held */
        snap s = take();
        CUdeviceptr p = 0x1234000;
        CHECK(cuMemAlloc(&p, 64 * MiB) == CUDA_SUCCESS, "skipped: cuMemAlloc");
        CHECK(p == 0x1234000, "skipped: the output changed");
        expect_same("a cuMemAlloc a plugin answered with success", s);
        CHECK(cuMemFree(p) == CUDA_SUCCESS, "skipped: cuMemFree");
        expect_same("a cuMemFree a plugin answered with success", s);
    } else if (!strcmp(argv[1], "shrink") && argc == 4) {
        /* the shared region's file is truncated under the process (by its owner): the next charge would fault
           with SIGBUS; the process lives on with a budget of its own holding what it allocated */
        CUdeviceptr p1 = 0, p2 = 0, p = 0;
        CHECK(quota_used(0) == 0, "shrink: use at start");
        CHECK(cuMemAlloc(&p1, MiB) == CUDA_SUCCESS, "shrink: first cuMemAlloc");
        CHECK(truncate(argv[3], 0) == 0, "shrink: truncate %s", argv[3]);
        CHECK(cuMemAlloc(&p2, MiB) == CUDA_SUCCESS, "shrink: cuMemAlloc after the truncation");
        CHECK(quota_used(0) == 2 * MiB, "shrink: %zu charged after the truncation, not the 2 MiB held",
              quota_used(0));
        CHECK(cuMemAlloc(&p, limit) != CUDA_SUCCESS, "shrink: the quota no longer holds");
        CHECK(cuMemFree(p1) == CUDA_SUCCESS && cuMemFree(p2) == CUDA_SUCCESS, "shrink: cuMemFree");
        CHECK(quota_used(0) == 0, "shrink: %zu still charged after freeing all", quota_used(0));
    } else if (!strcmp(argv[1], "hami") && argc == 3) {
        size_t t = 0;
        CHECK(quota_used(0) == 0, "hami: use");
        CHECK(cuDeviceTotalMem(&t, 0) == CUDA_SUCCESS && t == limit, "cuDeviceTotalMem %zu", t);
#ifdef E2E_MEMLIMIT_NVML
    } else if (!strcmp(argv[1], "nvml") && argc == 5) {
        nvml((size_t)strtoull(argv[2], NULL, 0), (size_t)strtoull(argv[3], NULL, 0), (unsigned)atoi(argv[4]));
#endif
    } else if (!strcmp(argv[1], "devmap") && argc == 6) {
        for (int i = 0; i < 2; i++) {
            size_t t = 0, f = 0, tt = 0, want_t = (size_t)strtoull(argv[2 + 2 * i], NULL, 0),
                   want_f = (size_t)strtoull(argv[3 + 2 * i], NULL, 0);
            CUdeviceptr p = 0;
            CUdevice d;
            CHECK(cuCtxSetCurrent(ctx[i]) == CUDA_SUCCESS, "devmap: set ordinal %d current", i);
            CHECK(cuMemGetInfo(&f, &t) == CUDA_SUCCESS && t == want_t && f == want_f,
                  "devmap: ordinal %d: cuMemGetInfo total %zu free %zu, want %zu and %zu", i, t, f, want_t, want_f);
            CHECK(cuDeviceGet(&d, i) == CUDA_SUCCESS && cuDeviceTotalMem(&tt, d) == CUDA_SUCCESS && tt == want_t,
                  "devmap: ordinal %d: cuDeviceTotalMem %zu, want %zu", i, tt, want_t);
            CHECK(cuMemAlloc(&p, want_f + MiB) == CUDA_ERROR_OUT_OF_MEMORY,
                  "devmap: ordinal %d: %zu bytes not refused (%zu free)", i, want_f + MiB, want_f);
            if (want_f > 0) {
                CHECK(cuMemAlloc(&p, want_f) == CUDA_SUCCESS, "devmap: ordinal %d: %zu bytes refused", i, want_f);
                CHECK(cuMemFree(p) == CUDA_SUCCESS, "devmap: ordinal %d: cuMemFree", i);
            }
        }
    } else if (!strcmp(argv[1], "live") && argc == 4) {
        live(argv[3]);
    } else if (!strcmp(argv[1], "killloop") && argc == 6) {
        limit = (size_t)strtoull(argv[3], NULL, 0);
        killloop(argv[2], atoi(argv[4]), atoi(argv[5]));
    } else {
        fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
        return 2;
    }
    printf("%s: %d failures\n", argv[1], failures);
    return failures ? 1 : 0;
}
