/*
 * e2e_oversub_vmm.c - memlimit's oversubscription of VMM physical memory (cuMemCreate) end to end, against the
 * fake driver (run by tests/e2e/memlimit.cmake with the shim preloaded, on device 0). Self-checking: each failed
 * check prints "FAIL ..." and the exit status is 1. The fake's host locations: FAKE_CUDA_HOST_VMM.
 *
 *   e2e_oversub_vmm numa REGION     limit=8MiB,oversubscribe=2, both host locations supported: 6 MiB on the device,
 *                                   then 4 MiB past the quota created at CU_MEM_LOCATION_TYPE_HOST_NUMA (node 0, the
 *                                   program's shareable handle type kept), charged to the host-backed pool; the
 *                                   program reserves, maps, gives device 0 access, sets and reads it, retains and
 *                                   releases the handle, unmaps and releases: the region's device and host-backed
 *                                   figures and the fake's device and host bytes after each step; up to the bound
 *                                   (16 MiB) host-backed, past it refused with no driver call
 *   e2e_oversub_vmm host REGION     only CU_MEM_LOCATION_TYPE_HOST supported: past the quota a handle without
 *                                   shareable handle types is created there; one asking for a POSIX fd is refused
 *                                   (built from 12.x headers, a driver without that attribute: refused)
 *   e2e_oversub_vmm refused REGION  past the quota refused as without oversubscription (the device supports no
 *                                   host location, or oversubscribe is off)
 *   e2e_oversub_vmm gran REGION     the host granularity (FAKE_CUDA_HOST_VMM_GRANULARITY=4MiB) above the device's:
 *                                   2 MiB past the quota refused, 4 MiB host-backed
 *   e2e_oversub_vmm devfull REGION  no quota, oversubscribe=1.5 on a 16 MiB device: a cuMemCreate the driver refuses
 *                                   for want of device memory is created in host memory, bounded at 24 MiB
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "e2e_ml_common.h"
#include "ml_budget.h"

#define LOC_HOST 2        /* CU_MEM_LOCATION_TYPE_HOST (by number: 11.8's cuda.h has neither) */
#define LOC_HOST_NUMA 3   /* CU_MEM_LOCATION_TYPE_HOST_NUMA */

static const char *region;

/* The budget's figures on device 0 and the fake's: device-resident and host-backed bytes. */
static void expect(const char *what, size_t used, size_t spilled)
{
    uint64_t u, s;
    e2e_ml_region_figures(region, &u, &s);
    CHECK(u == used, "%s: the budget charges %llu device bytes, expected %zu", what, (unsigned long long)u, used);
    CHECK(s == spilled, "%s: the budget has %llu host-backed bytes, expected %zu", what, (unsigned long long)s,
          spilled);
    CHECK(fake_cuda_bytes_allocated(0) == used, "%s: the fake holds %zu device bytes, expected %zu", what,
          fake_cuda_bytes_allocated(0), used);
    CHECK(fake_cuda_vmm_host_bytes() == spilled, "%s: the fake holds %zu host-located VMM bytes, expected %zu", what,
          fake_cuda_vmm_host_bytes(), spilled);
}

/* cuMemCreate of 'bytes' on device 0, as a program asks for it. */
static CUresult create(CUmemGenericAllocationHandle *h, size_t bytes, int posix_fd)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = posix_fd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    *h = 0;
    return cuMemCreate(h, bytes, &prop, 0);
}

/* What the program reads back: the location the memory really has. */
static void expect_location(const char *what, CUmemGenericAllocationHandle h, int type, int posix_fd)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    CHECK(cuMemGetAllocationPropertiesFromHandle(&p, h) == CUDA_SUCCESS, "%s: properties", what);
    CHECK((int)p.location.type == type && p.location.id == 0, "%s: location %d:%d, expected %d:0", what,
          (int)p.location.type, p.location.id, type);
    CHECK(p.type == CU_MEM_ALLOCATION_TYPE_PINNED, "%s: pinned", what);
    CHECK((p.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == posix_fd,
          "%s: requested handle types %d", what, (int)p.requestedHandleTypes);
}

/* The program's own use of a handle: reserve, map, access for device 0, set and read back, retain and release
   the retained reference, unmap, free the range. The handle stays the program's to release. */
static void use(const char *what, CUmemGenericAllocationHandle h, size_t bytes, size_t used, size_t spilled)
{
    CUdeviceptr va = 0;
    CUmemAccessDesc acc;
    CUmemGenericAllocationHandle again = 0;
    unsigned char probe[3] = {0, 0, 0};
    memset(&acc, 0, sizeof acc);
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = 0;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemAddressReserve(&va, bytes, 0, 0, 0) == CUDA_SUCCESS, "%s: reserve", what);
    CHECK(cuMemMap(va, bytes, 0, h, 0) == CUDA_SUCCESS, "%s: map", what);
    CHECK(cuMemSetAccess(va, bytes, &acc, 1) == CUDA_SUCCESS, "%s: access for device 0", what);
    CHECK(cuMemsetD8(va, 0x5a, bytes) == CUDA_SUCCESS, "%s: set as device memory", what);
    CHECK(cuMemcpyDtoH(&probe[0], va, 1) == CUDA_SUCCESS && cuMemcpyDtoH(&probe[1], va + bytes / 2, 1) ==
          CUDA_SUCCESS && cuMemcpyDtoH(&probe[2], va + bytes - 1, 1) == CUDA_SUCCESS, "%s: read back", what);
    CHECK(probe[0] == 0x5a && probe[1] == 0x5a && probe[2] == 0x5a, "%s: read %#x %#x %#x", what, probe[0], probe[1],
          probe[2]);
    CHECK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)va) == CUDA_SUCCESS && again == h,
          "%s: retain by address", what);
    CHECK(cuMemRelease(again) == CUDA_SUCCESS, "%s: release the retained reference", what);
    expect(what, used, spilled);   /* a reference dropped, the memory still held */
    CHECK(cuMemUnmap(va, bytes) == CUDA_SUCCESS, "%s: unmap", what);
    CHECK(cuMemAddressFree(va, bytes) == CUDA_SUCCESS, "%s: free the range", what);
}

static int mode_numa(void)
{
    CUmemGenericAllocationHandle a = 0, b = 0, c = 0, x = 0;
    uint64_t creates;
    e2e_ml_init();
    CHECK(create(&a, 6 * MiB, 0) == CUDA_SUCCESS, "6 MiB within the quota");
    expect_location("within the quota", a, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    expect("6 MiB on the device", 6 * MiB, 0);

    CHECK(create(&b, 4 * MiB, 1) == CUDA_SUCCESS, "4 MiB past the 8 MiB quota: host-backed");
    expect_location("past the quota", b, LOC_HOST_NUMA, 1);
    expect("6 MiB on the device + 4 host-backed", 6 * MiB, 4 * MiB);
    use("host-backed", b, 4 * MiB, 6 * MiB, 4 * MiB);
    expect("unmapped, not released", 6 * MiB, 4 * MiB);
    CHECK(cuMemRelease(b) == CUDA_SUCCESS, "release the host-backed handle");
    expect("host-backed released", 6 * MiB, 0);

    CHECK(create(&c, 10 * MiB, 0) == CUDA_SUCCESS, "10 MiB more: host-backed up to the bound (6 + 10 = 16 MiB)");
    expect("at the bound", 6 * MiB, 10 * MiB);
    creates = fake_cuda_call_count("cuMemCreate");
    CHECK(create(&x, 4 * MiB, 0) == CUDA_ERROR_OUT_OF_MEMORY, "past the quota and past quota x 2: refused");
    CHECK(fake_cuda_call_count("cuMemCreate") == creates, "the refusal reached no driver call");
    expect("refused: unchanged", 6 * MiB, 10 * MiB);
    CHECK(cuMemRelease(a) == CUDA_SUCCESS, "release the device handle");
    expect("device released", 0, 10 * MiB);
    CHECK(create(&a, 8 * MiB, 0) == CUDA_SUCCESS, "8 MiB within the quota again");
    expect_location("within the quota again", a, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    expect("8 on the device, 10 host-backed", 8 * MiB, 10 * MiB);
    CHECK(cuMemRelease(c) == CUDA_SUCCESS && cuMemRelease(a) == CUDA_SUCCESS, "release all");
    expect("all released", 0, 0);
    return e2e_ml_verdict("numa");
}

static int mode_refused(void);

static int mode_host(void)
{
#if CUDA_VERSION < 13000
    /* the fake built from 12.x headers is a 12.x driver: no attribute 145, so no HOST location for VMM memory */
    return mode_refused();
#else
    CUmemGenericAllocationHandle a = 0, b = 0, x = 0;
    e2e_ml_init();
    CHECK(create(&a, 6 * MiB, 0) == CUDA_SUCCESS, "6 MiB within the quota");
    CHECK(create(&x, 4 * MiB, 1) == CUDA_ERROR_OUT_OF_MEMORY,
          "past the quota with a POSIX fd handle type: HOST memory takes none, refused");
    expect("refused", 6 * MiB, 0);
    CHECK(create(&b, 4 * MiB, 0) == CUDA_SUCCESS, "past the quota, no handle type: host-backed");
    expect_location("past the quota", b, LOC_HOST, 0);
    expect("6 + 4 host-backed", 6 * MiB, 4 * MiB);
    use("host-backed", b, 4 * MiB, 6 * MiB, 4 * MiB);
    CHECK(cuMemRelease(b) == CUDA_SUCCESS && cuMemRelease(a) == CUDA_SUCCESS, "release");
    expect("released", 0, 0);
    return e2e_ml_verdict("host");
#endif
}

static int mode_refused(void)
{
    CUmemGenericAllocationHandle a = 0, x = 0;
    e2e_ml_init();
    CHECK(create(&a, 6 * MiB, 0) == CUDA_SUCCESS, "6 MiB within the quota");
    CHECK(create(&x, 4 * MiB, 0) == CUDA_ERROR_OUT_OF_MEMORY, "past the quota: refused");
    expect("refused", 6 * MiB, 0);
    CHECK(cuMemRelease(a) == CUDA_SUCCESS, "release");
    expect("released", 0, 0);
    return e2e_ml_verdict("refused");
}

static int mode_gran(void)
{
    CUmemGenericAllocationHandle a = 0, b = 0, x = 0;
    e2e_ml_init();
    CHECK(create(&a, 8 * MiB, 0) == CUDA_SUCCESS, "8 MiB: the quota full");
    CHECK(create(&x, 2 * MiB, 0) == CUDA_ERROR_OUT_OF_MEMORY, "2 MiB past the quota, not a host granule: refused");
    expect("refused", 8 * MiB, 0);
    CHECK(create(&b, 4 * MiB, 0) == CUDA_SUCCESS, "4 MiB past the quota, one host granule: host-backed");
    expect("8 + 4 host-backed", 8 * MiB, 4 * MiB);
    CHECK(cuMemRelease(b) == CUDA_SUCCESS && cuMemRelease(a) == CUDA_SUCCESS, "release");
    expect("released", 0, 0);
    return e2e_ml_verdict("gran");
}

static int mode_devfull(void)
{
    CUmemGenericAllocationHandle a = 0, b = 0, x = 0;
    size_t total = 0;
    e2e_ml_init();
    CHECK(cuDeviceTotalMem(&total, 0) == CUDA_SUCCESS && total == 16 * MiB, "a 16 MiB device (FAKE_CUDA_MEM)");
    CHECK(create(&a, 12 * MiB, 0) == CUDA_SUCCESS, "12 MiB on the device");
    CHECK(create(&b, 8 * MiB, 0) == CUDA_SUCCESS, "8 MiB past the device's free memory: host-backed");
    expect_location("past the device's free memory", b, LOC_HOST_NUMA, 0);
    expect("12 + 8 host-backed", 12 * MiB, 8 * MiB);
    CHECK(create(&x, 6 * MiB, 0) == CUDA_ERROR_OUT_OF_MEMORY, "past 16 MiB x 1.5: refused");
    expect("refused", 12 * MiB, 8 * MiB);
    use("host-backed", b, 8 * MiB, 12 * MiB, 8 * MiB);
    CHECK(cuMemRelease(b) == CUDA_SUCCESS && cuMemRelease(a) == CUDA_SUCCESS, "release");
    expect("released", 0, 0);
    return e2e_ml_verdict("devfull");
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (argc != 3) {
        fprintf(stderr, "usage: e2e_oversub_vmm numa|host|refused|gran|devfull REGION\n");
        return 2;
    }
    region = argv[2];
    unlink(region);   /* a fresh budget: the shim opens it at the first allocation */
    if (!strcmp(m, "numa"))
        return mode_numa();
    if (!strcmp(m, "host"))
        return mode_host();
    if (!strcmp(m, "refused"))
        return mode_refused();
    if (!strcmp(m, "gran"))
        return mode_gran();
    if (!strcmp(m, "devfull"))
        return mode_devfull();
    fprintf(stderr, "e2e_oversub_vmm: unknown mode '%s'\n", m);
    return 2;
}
