/*
 * badptrs.c - the GPU check 'badptrs' (tests/gpu/checks/badptrs.sh): one call of the real driver with a pointer
 * into memory that cannot be read (a PROT_NONE page), or running into it, per case; prints "case K result R".
 * Run natively and under the shim with each plugin: the results must be the same, and where the driver answers
 * an error the plugins must not fault. Where the driver itself faults (it reads the pointer), so may they.
 *   0 cuModuleGetFunction(&f, NULL, name in the page)         4 cuMemCreate(NULL, 2 MiB, properties in it, 0)
 *   1 ... a name whose last 5 bytes ("vecad") end at the page  5 cuLaunchKernelEx(config in it, NULL, NULL, NULL)
 *   2 cuGraphAddEmptyNode(&n, NULL, dependencies in it, 3)      6 cuGraphAddKernelNode(&n, NULL, NULL, 0, params in it)
 *   3 cuModuleGetFunction(output in it, NULL, "vecadd")         7 cuModuleLoadDataEx(NULL, img, 3, options in it, ...)
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long pg = sysconf(_SC_PAGESIZE);
    int k = argc > 1 ? atoi(argv[1]) : -1;
    unsigned char *m, *hole, img[16] = {0};
    CUdevice dev;
    CUcontext ctx;
    CUfunction f = NULL;
    CUgraphNode n = NULL;
    CUresult r = CUDA_SUCCESS;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 3;
    m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + pg, (size_t)pg, PROT_NONE) != 0)
        return 3;
    hole = m + pg;
    memcpy(hole - 5, "vecad", 5);
    switch (k) {
    case 0: r = cuModuleGetFunction(&f, NULL, (const char *)hole); break;
    case 1: r = cuModuleGetFunction(&f, NULL, (const char *)hole - 5); break;
    case 2: r = cuGraphAddEmptyNode(&n, NULL, (const CUgraphNode *)(void *)hole, 3); break;
    case 3: r = cuModuleGetFunction((CUfunction *)(void *)hole, NULL, "vecadd"); break;
    case 4: r = cuMemCreate(NULL, (size_t)2 << 20, (const CUmemAllocationProp *)(void *)hole, 0); break;
    case 5: r = cuLaunchKernelEx((const CUlaunchConfig *)(void *)hole, NULL, NULL, NULL); break;
    case 6: r = cuGraphAddKernelNode(&n, NULL, NULL, 0, (const CUDA_KERNEL_NODE_PARAMS *)(void *)hole); break;
    case 7: r = cuModuleLoadDataEx(NULL, img, 3, (CUjit_option *)(void *)hole, (void **)(void *)hole); break;
    default: return 2;
    }
    printf("case %d result %d\n", k, (int)r);
    return 0;
}
