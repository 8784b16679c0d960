/*
 * e2e_remote_ptrattr.c - pointer attributes end to end (run_remote_ptrattr.sh, docs/remote.md "Values sized by their
 * attribute"): what Triton's launcher, XLA and CuPy ask of a pointer. It prints what a program sees, with every
 * address given relative to the allocation it belongs to, so a run through cushim-serve can be compared with a
 * local one line by line.
 *
 *   For device memory (cuMemAlloc), pinned host memory (cuMemAllocHost) and pageable memory (malloc), at offset
 *   0 and 100: cuPointerGetAttribute of every attribute 1..22 and of 1000 (an attribute no table knows), each
 *   with its result, the bytes the call wrote (a 32-byte buffer filled twice with other canaries) and its value;
 *   cuPointerGetAttributes of nine attributes at once, one output NULL; cuPointerSetAttribute(SYNC_MEMOPS) on
 *   device memory, read back; the buffer ids of two allocations differ.
 *   cuLaunchKernelEx with launch attributes (a cluster of 2, cooperative 0, a priority): the kernel ran; a cluster
 *   that does not divide the grid: the driver's CUDA_ERROR_INVALID_CLUSTER_SIZE, at the launch or at the next
 *   synchronisation (a launch is asynchronous); cuOccupancyMaxActiveClusters with and without a cluster; an
 *   attribute whose value holds a pointer (DEVICE_UPDATABLE_KERNEL_NODE), printed apart ('updatable:').
 *   cuLinkCreate, two cuLinkAddData of PTX, cuLinkComplete: the linked image's size and bytes, loaded as a module;
 *   a link with a wall time (an option the driver writes back over the link's life: e2e_remote_jit checks the
 *   values). cuMemGetAllocationGranularity
 *   and cuMemCreate of a CUmemAllocationProp (XLA's allocator); one with win32HandleMetaData set printed apart
 *   ('win32:'). Not with
 *   the argument "attrs" (a real driver has no fk_add_i32__pii: tests/gpu/checks/remoteptrattr.sh).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                 \
    do {                                                                                      \
        CUresult r_ = (x);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                             \
            fprintf(stderr, "e2e_remote_ptrattr: %s: %d (line %d)\n", #x, (int)r_, __LINE__); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static CUcontext ctx;

/* A value as the program would use it: addresses relative to 'base', a context as "current" or not. */
static void show(int attr, const unsigned char *v, int n, unsigned long long base)
{
    unsigned long long u = 0;
    memcpy(&u, v, n > 8 ? 8 : (size_t)n);
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: printf(" %s", (CUcontext)(uintptr_t)u == ctx ? "current" : "other"); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        if (u == 0)
            printf(" NULL");
        else
            printf(" base%+lld", (long long)(u - base));
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: printf(" %s", u != 0 ? "id" : "0"); break;
    default:
        for (int i = 0; i < n; i++)
            printf(" %02x", v[i]);
    }
}

/* Bytes a call wrote into a buffer filled with 'canary'. */
static int written(const unsigned char *b, int size, unsigned char canary)
{
    int n = 0;
    for (int i = 0; i < size; i++)
        if (b[i] != canary)
            n = i + 1;
    return n;
}

static void one(const char *what, CUdeviceptr p, unsigned long long base, int attr)
{
    unsigned char b1[32], b2[32];
    memset(b1, 0xa5, sizeof b1);
    memset(b2, 0x5a, sizeof b2);
    CUresult r1 = cuPointerGetAttribute(b1, (CUpointer_attribute)attr, p);
    CUresult r2 = cuPointerGetAttribute(b2, (CUpointer_attribute)attr, p);
    int n1 = written(b1, sizeof b1, 0xa5), n2 = written(b2, sizeof b2, 0x5a), n = n1 > n2 ? n1 : n2;
    printf("%s attr %d: %d", what, attr, (int)r1);
    if (r1 != r2)
        printf(" (then %d)", (int)r2);
    if (r1 == CUDA_SUCCESS) {
        printf(" %d bytes", n);
        show(attr, b1, n, base);
    } else if (n != 0) {
        printf(" but %d bytes written", n);
    }
    printf("\n");
}

static void many(const char *what, CUdeviceptr p, unsigned long long base)
{
    CUpointer_attribute at[] = { CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 CU_POINTER_ATTRIBUTE_MAPPED };
    enum { N = sizeof at / sizeof at[0] };
    static const int size[N] = { 8, 4, 8, 8, 4, 4, 8, 8, 4 };   /* booleans: an int */
    unsigned char v[N][16];
    void *data[N];
    memset(v, 0xa5, sizeof v);
    for (int k = 0; k < N; k++)
        data[k] = k == 5 ? NULL : v[k];   /* one output not asked for */
    CUresult r = cuPointerGetAttributes(N, at, data, p);
    printf("%s all: %d", what, (int)r);
    for (int k = 0; r == CUDA_SUCCESS && k < N; k++) {
        int n = written(v[k], sizeof v[k], 0xa5);
        printf(" |%d", (int)at[k]);
        if (k == 5 && n != 0)
            printf(" written though NULL");
        if (k != 5 && n > size[k])
            printf(" %d bytes", n);
        if (k != 5)
            show(at[k], v[k], size[k], base);
    }
    printf("\n");
}

/* XLA's allocator: cuMemGetAllocationGranularity of a CUmemAllocationProp (its anonymous allocFlags), cuMemCreate */
static void vmm(void)
{
    CUmemAllocationProp prop;
    size_t g = 0;
    CUmemGenericAllocationHandle h;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.allocFlags.gpuDirectRDMACapable = 1;
    printf("granularity: %d", (int)cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    printf(" %zu\n", g);
    CUresult r = cuMemCreate(&h, g, &prop, 0);
    printf("create: %d, release: %d\n", (int)r, r == CUDA_SUCCESS ? (int)cuMemRelease(h) : -1);
    prop.location.id = 99;
    printf("granularity, device 99: %d\n", (int)cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    prop.location.id = 0;
    prop.win32HandleMetaData = &g;   /* a pointer the remoting cannot carry (refused 801; the fake says 1) */
    printf("win32: %d\n", (int)cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
}

/* cuLinkCreate/AddData/Complete: the linked image (the driver's buffer) read back, loaded, the link destroyed */
static void link_ptx(void)
{
    static const char a[] = ".version 7.0\n.target sm_50\n", b[] = ".address_size 64\n";
    CUlinkState st;
    void *cubin = NULL;
    size_t size = 0;
    CUmodule mod;
    CUfunction f;
    CK(cuLinkCreate(0, NULL, NULL, &st));
    CK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)a, sizeof a, "a.ptx", 0, NULL, NULL));
    CK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)b, sizeof b, "b.ptx", 0, NULL, NULL));
    CK(cuLinkComplete(st, &cubin, &size));
    printf("linked: %zu bytes, text '%.*s'\n", size, (int)(size ? size - 1 : 0), (const char *)cubin);
    CK(cuModuleLoadData(&mod, cubin));
    printf("linked module: %d\n", (int)cuModuleGetFunction(&f, mod, "fk_add_i32__pii"));
    CK(cuModuleUnload(mod));
    CK(cuLinkDestroy(st));
    CUjit_option opt = CU_JIT_WALL_TIME;
    float wall = 0;
    void *val = &wall;
    CUresult lr = cuLinkCreate(1, &opt, &val, &st);
    printf("link with options: %d\n", (int)lr);
    if (lr == CUDA_SUCCESS)
        CK(cuLinkDestroy(st));
}

/* fk_add_i32__pii (the fake driver's kernel: p, n, v adds v to n ints at p) launched with attributes */
static void launch_ex(CUdeviceptr d)
{
    CUmodule mod;
    CUfunction add;
    CK(cuModuleLoadData(&mod, ".version 7.0\n.target sm_50\n.address_size 64\n"));
    CK(cuModuleGetFunction(&add, mod, "fk_add_i32__pii"));
    CK(cuMemsetD32(d, 0, 64));
    int n = 64, v = 5;
    void *args[] = { &d, &n, &v };
    CUlaunchAttribute at[3];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[0].value.clusterDim.x = 2, at[0].value.clusterDim.y = 1, at[0].value.clusterDim.z = 1;
    at[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    at[1].value.cooperative = 0;
    at[2].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    at[2].value.priority = 1;
    CUlaunchConfig cfg = { .gridDimX = 4, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 16, .blockDimY = 1,
                           .blockDimZ = 1, .hStream = NULL, .attrs = at, .numAttrs = 3 };
    CUresult r = cuLaunchKernelEx(&cfg, add, args, NULL), s = cuCtxSynchronize();
    int h[64];
    CK(cuMemcpyDtoH(h, d, sizeof h));
    printf("launch ex: %d %d, %d %d\n", (int)r, (int)s, h[0], h[63]);
    at[0].value.clusterDim.x = 3;   /* does not divide 4 blocks */
    r = cuLaunchKernelEx(&cfg, add, args, NULL);
    s = cuCtxSynchronize();
    printf("launch ex, cluster of 3: %d\n", (int)(r != CUDA_SUCCESS ? r : s));
    CK(cuMemcpyDtoH(h, d, sizeof h));
    printf("after: %d\n", h[0]);
    int clusters = 0;
    at[0].value.clusterDim.x = 2;
    printf("clusters of 2: %d", (int)cuOccupancyMaxActiveClusters(&clusters, add, &cfg));
    printf(" %d\n", clusters);
    cfg.numAttrs = 0;
    cfg.attrs = NULL;
    printf("clusters, none: %d", (int)cuOccupancyMaxActiveClusters(&clusters, add, &cfg));
    printf(" %d\n", clusters);
    at[0].id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    r = cuLaunchKernelEx(&cfg, add, args, NULL);
    s = cuCtxSynchronize();
    printf("updatable: %d\n", (int)(r != CUDA_SUCCESS ? r : s));
    CK(cuModuleUnload(mod));
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUdeviceptr d, d2;
    void *pinned;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc(&d, 4096));
    CK(cuMemAlloc(&d2, 4096));
    CK(cuMemAllocHost(&pinned, 8192));
    char *pageable = malloc(4096);
    struct { const char *what; CUdeviceptr p; unsigned long long base; } ptrs[] = {
        { "device", d, d }, { "device+100", d + 100, d },
        { "pinned", (CUdeviceptr)(uintptr_t)pinned, (uintptr_t)pinned },
        { "pinned+100", (CUdeviceptr)(uintptr_t)pinned + 100, (uintptr_t)pinned },
        { "pageable", (CUdeviceptr)(uintptr_t)pageable, (uintptr_t)pageable },
    };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) {
        for (int attr = 1; attr <= 22; attr++)
            one(ptrs[i].what, ptrs[i].p, ptrs[i].base, attr);
        one(ptrs[i].what, ptrs[i].p, ptrs[i].base, 1000);
        many(ptrs[i].what, ptrs[i].p, ptrs[i].base);
    }
    int on = 1, got = 0;   /* a boolean attribute: the driver reads and writes an int */
    printf("set sync_memops device: %d\n", (int)cuPointerSetAttribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
    CK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
    printf("sync_memops device: %d\n", got);
    printf("set sync_memops pinned: %d\n",
           (int)cuPointerSetAttribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)(uintptr_t)pinned));
    unsigned long long id1 = 0, id2 = 0;
    CK(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, d));
    CK(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2));
    printf("buffer ids differ: %d\n", id1 != id2);
    /* the pinned memory is still the program's: written here, read back through a device copy */
    memset(pinned, 7, 8192);
    CK(cuMemcpyHtoD(d, pinned, 4096));
    unsigned char back[4] = { 0 };
    CK(cuMemcpyDtoH(back, d + 10, sizeof back));
    printf("pinned copy: %d %d\n", back[0], back[3]);
    if (argc < 2 || strcmp(argv[1], "attrs") != 0)   /* "attrs": no launch (the fake driver's kernel) */
        launch_ex(d), link_ptx(), vmm();
    free(pageable);
    CK(cuMemFreeHost(pinned));
    CK(cuMemFree(d));
    CK(cuMemFree(d2));
    return 0;
}
