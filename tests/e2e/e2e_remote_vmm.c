/*
 * e2e_remote_vmm.c - virtual memory management as JAX's allocator uses it (run_remote_vmm.sh, docs/remote.md,
 * "Virtual memory management").
 *
 * Usage: e2e_remote_vmm map|export|quota
 *   map: the granularity, cuMemCreate, the handle's properties, cuMemAddressReserve, cuMemMap, cuMemSetAccess,
 *        a memset, copies in and within the mapped range, read back and checked; the handle retained by its
 *        address; cuMemUnmap, cuMemAddressFree, cuMemRelease. Prints each call's result and what it saw (no
 *        addresses), so a remote run's output equals a local run's.
 *   export: cuMemCreate with an exportable handle type (a POSIX fd, a fabric handle), then with none.
 *   quota: cuMemCreate of 2 MiB handles until one fails (at most 8): "created N then R".
 * Exits 0 when every step ran (the results are for the script to compare), 1 without a device.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static int step(const char *what, CUresult r)
{
    printf("%s: %d\n", what, (int)r);
    return r == CUDA_SUCCESS;
}

static void base_prop(CUmemAllocationProp *prop)
{
    memset(prop, 0, sizeof *prop);
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = 0;
    prop->allocFlags.gpuDirectRDMACapable = 0;
    prop->allocFlags.usage = 0;
}

static int vmm_map(void)
{
    CUmemAllocationProp prop, got;
    size_t gran = 0;
    CUmemGenericAllocationHandle h = 0, h2 = 0;
    CUdeviceptr va = 0;
    static unsigned host[1024], back[1024];
    base_prop(&prop);
    if (!step("cuMemGetAllocationGranularity", cuMemGetAllocationGranularity(&gran, &prop,
                                                                             CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
        return 0;
    printf("granularity %zu\n", gran);
    size_t size = 2 * gran;
    if (!step("cuMemCreate", cuMemCreate(&h, size, &prop, 0)))
        return 0;
    memset(&got, 0xa5, sizeof got);
    if (step("cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle(&got, h)))
        printf("properties: type %d location %d/%d handle types %d win32 %s usage %u\n", (int)got.type,
               (int)got.location.type, got.location.id, (int)got.requestedHandleTypes,
               got.win32HandleMetaData ? "set" : "NULL", (unsigned)got.allocFlags.usage);
    if (!step("cuMemAddressReserve", cuMemAddressReserve(&va, size, 0, 0, 0)))
        return 0;
    printf("reserved aligned: %d\n", va % gran == 0);
    if (!step("cuMemMap", cuMemMap(va, size, 0, h, 0)))
        return 0;
    CUmemAccessDesc access[1];
    memset(access, 0, sizeof access);
    access[0].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[0].location.id = 0;
    access[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (!step("cuMemSetAccess", cuMemSetAccess(va, size, access, 1)))
        return 0;
    /* the whole range set, a block copied in at its end, that block copied to its start, read back */
    step("cuMemsetD32", cuMemsetD32(va, 0x5a5a5a5au, size / 4));
    for (unsigned i = 0; i < 1024; i++)
        host[i] = i * 2654435761u;
    step("cuMemcpyHtoD", cuMemcpyHtoD(va + size - sizeof host, host, sizeof host));
    step("cuMemcpyDtoD", cuMemcpyDtoD(va, va + size - sizeof host, sizeof host));
    step("cuCtxSynchronize", cuCtxSynchronize());
    memset(back, 0, sizeof back);
    step("cuMemcpyDtoH start", cuMemcpyDtoH(back, va, sizeof back));
    printf("start equals the copied block: %d\n", memcmp(back, host, sizeof host) == 0);
    step("cuMemcpyDtoH middle", cuMemcpyDtoH(back, va + gran, sizeof back));
    int set = 1;
    for (unsigned i = 0; i < 1024; i++)
        set &= back[i] == 0x5a5a5a5au;
    printf("middle holds the memset: %d\n", set);
    if (step("cuMemRetainAllocationHandle", cuMemRetainAllocationHandle(&h2, (void *)(va + 4096)))) {
        printf("retained the mapped handle: %d\n", h2 == h);
        step("cuMemRelease retained", cuMemRelease(h2));
    }
    step("cuMemUnmap", cuMemUnmap(va, size));
    step("cuMemcpyDtoH after unmap", cuMemcpyDtoH(back, va, 4) == CUDA_SUCCESS ? CUDA_SUCCESS
                                                                                : CUDA_ERROR_INVALID_VALUE);
    step("cuMemAddressFree", cuMemAddressFree(va, size));
    step("cuMemRelease", cuMemRelease(h));
    return 1;
}

static int vmm_export(void)
{
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h = 0;
    base_prop(&prop);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUresult r = cuMemCreate(&h, 2u << 20, &prop, 0);
    step("cuMemCreate posix fd", r);
    if (r == CUDA_SUCCESS)
        cuMemRelease(h);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    r = cuMemCreate(&h, 2u << 20, &prop, 0);
    step("cuMemCreate fabric", r);
    if (r == CUDA_SUCCESS)
        cuMemRelease(h);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    if (step("cuMemCreate none", cuMemCreate(&h, 2u << 20, &prop, 0)))
        step("cuMemRelease", cuMemRelease(h));
    return 1;
}

static int vmm_quota(void)
{
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h[8];
    CUresult r = CUDA_SUCCESS;
    int n = 0;
    base_prop(&prop);
    while (n < 8 && (r = cuMemCreate(&h[n], 2u << 20, &prop, 0)) == CUDA_SUCCESS)
        n++;
    printf("created %d then %d\n", n, (int)r);
    for (int i = 0; i < n; i++)
        cuMemRelease(h[i]);
    return 1;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    const char *mode = argc > 1 ? argv[1] : "map";
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_remote_vmm: no device\n");
        return 1;
    }
    int ok = !strcmp(mode, "export") ? vmm_export() : !strcmp(mode, "quota") ? vmm_quota() : vmm_map();
    cuDevicePrimaryCtxRelease(dev);
    return ok ? 0 : 1;
}
