/*
 * e2e_remote_managed.c - managed memory as teaching code and the CUDA samples use it, for the remoting's end-to-end
 * test (run_remote_managed.sh, docs/remote.md "Managed memory"): allocate, write on the host, run a kernel or a
 * copy on it, synchronise, read on the host.
 *
 *   e2e_remote_managed main    driver API (cuMemAllocManaged) and runtime API (cudaMallocManaged): the fake
 *                              driver's kernel "fk_add_i32__pii" (adds v to n ints) launched on the managed block
 *                              after host writes, read back after cuCtxSynchronize, cuStreamSynchronize, an event
 *                              query answering success, a synchronous copy; a memset, a copy from the device into
 *                              the block and one into it as host memory; cuPointerGetAttribute(IS_MANAGED); the
 *                              runtime's cudaMemcpyDefault from and to managed memory. Prints one line per check,
 *                              the same locally and remotely.
 *   e2e_remote_managed attr    the managed-access attributes (driver, runtime): 1 on the fake driver, 0 remotely.
 *   e2e_remote_managed taken   (remote, the server's fake with FAKE_CUDA_MANAGED_BASE) the mirror mapped at the
 *                              server's address and unmapped by cuMemFree; an address this process has mapped is
 *                              asked for again, and when every address the server offers is taken the allocation
 *                              fails with out of memory, the server's memory given back; a forked child reads its
 *                              parent's block and allocates one of its own through its own back end.
 * Driver functions are found as the program's own (the preloaded shim) or in libcuda.so.1 (a local run).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096   /* ints per block: 4 pieces of 4 KiB */

static void *drv(const char *name)
{
    static void *lib;
    void *f = dlsym(RTLD_DEFAULT, name);
    if (f == NULL && lib == NULL)
        lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (f == NULL && lib != NULL)
        f = dlsym(lib, name);
    if (f == NULL) {
        fprintf(stderr, "no %s\n", name);
        exit(1);
    }
    return f;
}
#define D(fn) ((__typeof__(&fn))drv(#fn))

static int failures;
static void check(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "WRONG");
    failures += !ok;
}

static int all(const int32_t *p, int n, int32_t base, int32_t step)
{
    for (int i = 0; i < n; i++)
        if (p[i] != base + step * i)
            return 0;
    return 1;
}

static CUfunction add;
static CUresult launch_add(void *p, int n, int v, CUstream s)
{
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)p;
    void *args[] = { &dp, &n, &v };
    return D(cuLaunchKernel)(add, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static int run_main(void)
{
    CUmodule mod;
    CUdeviceptr dm = 0, dd = 0;
    CUstream st;
    CUevent ev;
    int32_t host[N];
    if (cudaSetDevice(0) != cudaSuccess || cudaFree(NULL) != cudaSuccess)
        return 1;
    printf("cuModuleLoadData: %d\n", D(cuModuleLoadData)(&mod, ".version 7.0\n.target sm_50\n.address_size 64\n"));
    printf("cuModuleGetFunction: %d\n", D(cuModuleGetFunction)(&add, mod, "fk_add_i32__pii"));

    /* the driver API */
    printf("cuMemAllocManaged: %d\n", D(cuMemAllocManaged)(&dm, N * 4, CU_MEM_ATTACH_GLOBAL));
    int32_t *m = (int32_t *)(uintptr_t)dm;
    for (int i = 0; i < N; i++)
        m[i] = i;
    printf("launches: %d %d\n", launch_add(m, N, 5, NULL), launch_add(m, N, 5, NULL));
    printf("cuCtxSynchronize: %d\n", D(cuCtxSynchronize)());
    check("host writes, two launches, cuCtxSynchronize", all(m, N, 10, 1));
    m[7] = 1000;   /* one piece written */
    m[N - 1] = 2000;
    printf("cuStreamCreate: %d\n", D(cuStreamCreate)(&st, 0));
    printf("launch on a stream: %d\n", launch_add(m, N, 1, st));
    printf("cuStreamSynchronize: %d\n", D(cuStreamSynchronize)(st));
    check("a partial write, cuStreamSynchronize", m[7] == 1001 && m[N - 1] == 2001 && m[8] == 19 && m[0] == 11);
    for (int i = 0; i < N; i++)
        host[i] = 3 * i;
    printf("cuMemAlloc: %d\n", D(cuMemAlloc_v2)(&dd, N * 4));
    printf("cuMemcpyHtoD: %d\n", D(cuMemcpyHtoD_v2)(dd, host, N * 4));
    printf("cuMemcpyDtoD into managed: %d\n", D(cuMemcpyDtoD_v2)(dm, dd, N * 4));
    check("a device copy into the block, seen after the synchronous copy", all(m, N, 0, 3));
    printf("cuMemsetD32: %d\n", D(cuMemsetD32_v2)(dm, 7, N));
    printf("cuCtxSynchronize: %d\n", D(cuCtxSynchronize)());
    check("a memset, cuCtxSynchronize", all(m, N, 7, 0));
    printf("cuMemcpyDtoH into managed: %d\n", D(cuMemcpyDtoH_v2)(m, dd, N * 4));
    check("a copy to the block as host memory", all(m, N, 0, 3));
    printf("launch: %d\n", launch_add(m, N, 1, NULL));
    printf("cuEventCreate: %d\n", D(cuEventCreate)(&ev, 0));
    printf("cuEventRecord: %d\n", D(cuEventRecord)(ev, NULL));
    CUresult q;
    while ((q = D(cuEventQuery)(ev)) == CUDA_ERROR_NOT_READY)
        ;
    printf("cuEventQuery: %d\n", q);
    check("the launch after that copy, an event query", all(m, N, 1, 3));
    m[100] = -5;
    printf("cuMemcpyDtoH from managed: %d\n", D(cuMemcpyDtoH_v2)(host, dm, N * 4));
    check("host writes read by a copy from the block", host[100] == -5 && host[101] == 304);
    unsigned int is_managed = 0;
    CUresult pa = D(cuPointerGetAttribute)(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, dm + 64);
    printf("cuPointerGetAttribute(IS_MANAGED): %d %u\n", pa, is_managed);
    printf("cuMemFree: %d\n", D(cuMemFree_v2)(dm));

    /* the runtime API */
    int32_t *r = NULL;
    printf("cudaMallocManaged: %d\n", cudaMallocManaged((void **)&r, N * 4, cudaMemAttachGlobal));
    for (int i = 0; i < N; i++)
        r[i] = 2 * i;
    printf("launch: %d\n", launch_add(r, N, 3, NULL));
    printf("cudaDeviceSynchronize: %d\n", cudaDeviceSynchronize());
    check("cudaMallocManaged, host writes, a launch, cudaDeviceSynchronize", all(r, N, 3, 2));
    printf("cudaMemcpy default from managed: %d\n", cudaMemcpy(host, r, N * 4, cudaMemcpyDefault));
    check("cudaMemcpyDefault from the block", all(host, N, 3, 2));
    for (int i = 0; i < N; i++)
        host[i] = -i;
    printf("cudaMemcpy default to managed: %d\n", cudaMemcpy(r, host, N * 4, cudaMemcpyDefault));
    check("cudaMemcpyDefault to the block", all(r, N, 0, -1));
    r[1] = 41;
    printf("cudaMemcpy device to device from managed: %d\n",
           cudaMemcpy((void *)(uintptr_t)dd, r, N * 4, cudaMemcpyDeviceToDevice));
    printf("cudaStreamSynchronize: %d\n", cudaStreamSynchronize(NULL));
    printf("cuMemcpyDtoH: %d\n", D(cuMemcpyDtoH_v2)(host, dd, N * 4));
    check("host writes read by a device copy", host[1] == 41 && host[2] == -2);
#if CUDART_VERSION >= 13000
    struct cudaMemLocation dev0 = { .type = cudaMemLocationTypeDevice, .id = 0 };
    printf("cudaMemAdvise: %d\n", cudaMemAdvise(r, N * 4, cudaMemAdviseSetPreferredLocation, dev0));
    printf("cudaMemPrefetchAsync: %d\n", cudaMemPrefetchAsync(r, N * 4, dev0, 0, NULL));
    printf("cudaMemPrefetchAsync of memory not managed: %d\n", cudaMemPrefetchAsync(host, N * 4, dev0, 0, NULL));
    printf("cudaDeviceSynchronize: %d\n", cudaDeviceSynchronize());
    check("the block after advice and a prefetch", r[1] == 41 && r[2] == -2);
#endif
    printf("cudaFree: %d\n", cudaFree(r));
    printf("cuMemFree: %d\n", D(cuMemFree_v2)(dd));
    return failures != 0;
}

static int run_attr(void)
{
    int d = -1, rt = -1;
    if (cudaSetDevice(0) != cudaSuccess || cudaFree(NULL) != cudaSuccess)
        return 1;
    CUresult e = D(cuDeviceGetAttribute)(&d, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0);
    cudaError_t er = cudaDeviceGetAttribute(&rt, cudaDevAttrConcurrentManagedAccess, 0);
    int pageable = -1;
    CUresult ep = D(cuDeviceGetAttribute)(&pageable, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0);
    struct cudaDeviceProp prop;
    memset(&prop, 0xff, sizeof prop);
    cudaError_t eprop = cudaGetDeviceProperties(&prop, 0);
    printf("concurrent managed access: driver %d %d, runtime %d %d, properties %d %d; managed memory: %d %d\n", e, d,
           er, rt, eprop, prop.concurrentManagedAccess, ep, pageable);
    return 0;
}

static int mapped(uintptr_t p)
{
    unsigned char v;
    return mincore((void *)(p & ~(uintptr_t)4095), 4096, &v) == 0;
}

static int run_taken(void)
{
    CUdeviceptr a = 0, b = 0, c = 0;
    size_t free0 = 0, free1 = 0, total = 0;
    if (cudaSetDevice(0) != cudaSuccess || cudaFree(NULL) != cudaSuccess)
        return 1;
    printf("cuMemAllocManaged: %d\n", D(cuMemAllocManaged)(&a, 1 << 20, CU_MEM_ATTACH_GLOBAL));
    check("the mirror is mapped at the server's address", a != 0 && mapped(a) && mapped(a + (1 << 20) - 1));
    printf("cuMemFree: %d\n", D(cuMemFree_v2)(a));
    check("cuMemFree unmaps it", !mapped(a));
    /* the program's own mapping where the server's next block would be: asked again, past it */
    void *mine = mmap((void *)a, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                      -1, 0);
    if (mine != (void *)a) {
        printf("cannot map the freed range: %s\n", strerror(errno));
        return 1;
    }
    memset(mine, 0x5a, 2 << 20);
    D(cuMemGetInfo_v2)(&free0, &total);
    printf("cuMemAllocManaged: %d\n", D(cuMemAllocManaged)(&b, 1 << 20, CU_MEM_ATTACH_GLOBAL));
    check("another address, past the program's mapping", b >= a + (2 << 20));
    check("the program's mapping untouched", ((unsigned char *)mine)[0] == 0x5a && ((unsigned char *)mine)[(2 << 20) - 1] == 0x5a);
    printf("cuMemFree: %d\n", D(cuMemFree_v2)(b));
    /* every address the server offers is taken: out of memory, and the server's blocks given back */
    munmap(mine, 2 << 20);
    mine = mmap((void *)a, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (mine != (void *)a)
        return 1;
    D(cuMemGetInfo_v2)(&free0, &total);
    printf("cuMemAllocManaged, all taken: %d\n", D(cuMemAllocManaged)(&c, 1 << 20, CU_MEM_ATTACH_GLOBAL));
    void *rp = NULL;
    printf("cudaMallocManaged, all taken: %d\n", cudaMallocManaged(&rp, 1 << 20, cudaMemAttachGlobal));
    printf("cudaGetLastError: %d\n", cudaGetLastError());
    D(cuMemGetInfo_v2)(&free1, &total);
    check("the server's blocks given back", free1 == free0);
    munmap(mine, 64 << 20);
    /* fork: the child keeps its parent's block as memory and allocates through a back end of its own */
    int32_t *pm = NULL;
    printf("cudaMallocManaged: %d\n", cudaMallocManaged((void **)&pm, 4096 * 4, cudaMemAttachGlobal));
    for (int i = 0; i < 4096; i++)
        pm[i] = i;
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        int32_t *cm = NULL;
        int ok = pm[4095] == 4095 && cudaSetDevice(0) == cudaSuccess && cudaFree(NULL) == cudaSuccess &&
                 cudaMallocManaged((void **)&cm, 4096 * 4, cudaMemAttachGlobal) == cudaSuccess && cm != pm &&
                 D(cuMemsetD32_v2)((CUdeviceptr)(uintptr_t)cm, 9, 4096) == CUDA_SUCCESS &&
                 cudaDeviceSynchronize() == cudaSuccess && cm[0] == 9 && cm[4095] == 9 && cudaFree(cm) == cudaSuccess;
        printf("a forked child: its parent's block readable, one of its own: %s\n", ok ? "ok" : "WRONG");
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int st = -1;
    waitpid(child, &st, 0);
    failures += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("cudaFree: %d\n", cudaFree(pm));
    return failures != 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "main";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "main"))
        return run_main();
    if (!strcmp(mode, "attr"))
        return run_attr();
    if (!strcmp(mode, "taken"))
        return run_taken();
    fprintf(stderr, "usage: %s main|attr|taken\n", argv[0]);
    return 2;
}
