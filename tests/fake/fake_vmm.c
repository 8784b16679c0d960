/*
 * fake_vmm.c - the fake driver's virtual memory management: cuMemCreate (on the
 * device its properties name), cuMemRelease, retain, shareable-handle import,
 * the granularity, address reservations, mappings, access and the properties of
 * a handle - enough for a program (JAX's allocator, the remoting's e2e) to
 * really map memory and use it.
 *
 * A handle is its memory's address in fake_mem.c (charged there, so FAKE_CUDA_MEM
 * and the quota tests see it) with the top bit set, never equal to a device
 * pointer; its bytes live in a memfd, which cuMemMap maps at the reserved address
 * (MAP_SHARED: two mappings of one handle see the same bytes). A mapping is device
 * memory for copies, sets and kernels once cuMemSetAccess made it read-write, as
 * the real driver faults on it before. Imported handles hold no memory.
 *
 * Host-located physical memory (CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_LOCATION_TYPE_HOST) only where
 * FAKE_CUDA_HOST_VMM says the device supports it ("1" or "both", "numa", "host"; unset or "0": neither, as the
 * fake always answered): the device attributes HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED (141) and
 * HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED (145) say the same. Such a handle is charged to no device (its bytes
 * are counted by fake_cuda_vmm_host_bytes); its granularity is FAKE_CUDA_HOST_VMM_GRANULARITY bytes (default
 * 2 MiB); a HOST handle takes no shareable handle types, as the driver documents; a device given access by
 * cuMemSetAccess uses the mapping as device memory. The location types by number: 11.8's cuda.h has neither.
 */
#define _GNU_SOURCE   /* memfd_create */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_internal.h"

#define FK_VMM_BIT (1ull << 63)
#define FK_IMPORT_BITS (3ull << 61)
#define FK_GRANULARITY (2u << 20)
#define FK_VMM_MAX 64
#define FK_LOC_HOST 2        /* CU_MEM_LOCATION_TYPE_HOST      */
#define FK_LOC_HOST_NUMA 3   /* CU_MEM_LOCATION_TYPE_HOST_NUMA */

/* All under fk_lock. */
static struct fk_handle {
    uint64_t h;          /* 0: free slot */
    size_t size;
    int fd, device, refs;   /* refs: 1 + cuMemRetainAllocationHandle's; device -1: host-located */
    CUmemAllocationProp prop;
    void *token;            /* host-located: the heap byte whose address makes the handle unique */
} fk_handles[FK_VMM_MAX];
static struct fk_range { uintptr_t base; size_t size; } fk_reserved[FK_VMM_MAX];
static struct fk_mapping {
    uintptr_t base;      /* 0: free slot */
    size_t size;
    uint64_t h;
    int device, accessible;
} fk_maps[FK_VMM_MAX];
static _Atomic uint64_t fk_import_seq;
static size_t fk_host_bytes;   /* host-located handles' bytes, under fk_lock */

/* Whether FAKE_CUDA_HOST_VMM lets physical memory be created at location type 'type' (FK_LOC_*). */
static int fk_host_vmm(int type)
{
    const char *s = getenv("FAKE_CUDA_HOST_VMM");
    if (s == NULL)
        return 0;
    if (!strcmp(s, "1") || !strcmp(s, "both"))
        return type == FK_LOC_HOST || type == FK_LOC_HOST_NUMA;
    return (!strcmp(s, "numa") && type == FK_LOC_HOST_NUMA) || (!strcmp(s, "host") && type == FK_LOC_HOST);
}

/* cuDeviceGetAttribute's answer for the host VMM attributes (fake_core.c); -1 for any other attribute. */
int fk_host_vmm_attr(int attrib)
{
    if (attrib == 141)   /* CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
        return fk_host_vmm(FK_LOC_HOST_NUMA);
    if (attrib == 145)   /* CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
        return fk_host_vmm(FK_LOC_HOST);
    return -1;
}

static size_t fk_host_granularity(void)
{
    const char *s = getenv("FAKE_CUDA_HOST_VMM_GRANULARITY");
    char *end = NULL;
    unsigned long long v = s != NULL ? strtoull(s, &end, 0) : 0;
    return s != NULL && *s != '\0' && *end == '\0' && v != 0 ? (size_t)v : FK_GRANULARITY;
}

static int fk_prop_host(const CUmemAllocationProp *prop)
{
    return (int)prop->location.type == FK_LOC_HOST || (int)prop->location.type == FK_LOC_HOST_NUMA;
}

static struct fk_handle *fk_handle_of(uint64_t h)
{
    for (int i = 0; i < FK_VMM_MAX; i++)
        if (fk_handles[i].h == h && h != 0)
            return &fk_handles[i];
    return NULL;
}

static int fk_reserved_holds(uintptr_t p, size_t n)
{
    for (int i = 0; i < FK_VMM_MAX; i++)
        if (fk_reserved[i].size && p >= fk_reserved[i].base && n <= fk_reserved[i].size &&
            p - fk_reserved[i].base <= fk_reserved[i].size - n)
            return 1;
    return 0;
}

static int fk_prop_ok(const CUmemAllocationProp *prop)
{
    if (prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return 0;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return 1;
    /* a host location where the device supports it; one NUMA node (0); HOST: id ignored, no shareable handles */
    if (!fk_prop_host(prop) || !fk_host_vmm((int)prop->location.type))
        return 0;
    if ((int)prop->location.type == FK_LOC_HOST_NUMA)
        return prop->location.id == 0;
    return prop->requestedHandleTypes == 0;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    FAKE_ENTER(cuMemGetAllocationGranularity);
    FK_REQUIRE_INIT();
    if (granularity == NULL || !fk_prop_ok(prop) || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                                                     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_prop_host(prop)) {
        *granularity = fk_host_granularity();
        return CUDA_SUCCESS;
    }
    if (prop->location.id < 0 || prop->location.id >= fk_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *granularity = FK_GRANULARITY;
    return CUDA_SUCCESS;
}

/* A handle of host-located physical memory: its bytes in a memfd, no device charged. */
static CUresult fk_create_host(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop)
{
    FK_REQUIRE_INIT();
    if (size % fk_host_granularity())
        return CUDA_ERROR_INVALID_VALUE;
    void *token = malloc(1);
    int fd = memfd_create("fake-cuda-vmm-host", MFD_CLOEXEC);
    if (token == NULL || fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        free(token);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uint64_t h = (CUmemGenericAllocationHandle)(uintptr_t)token | FK_VMM_BIT;
    struct fk_handle *e = NULL;
    pthread_mutex_lock(&fk_lock);
    for (int i = 0; i < FK_VMM_MAX && e == NULL; i++)
        if (fk_handles[i].h == 0)
            e = &fk_handles[i];
    if (e != NULL) {
        *e = (struct fk_handle){ .h = h, .size = size, .fd = fd, .device = -1, .refs = 1, .prop = *prop,
                                 .token = token };
        fk_host_bytes += size;
    }
    pthread_mutex_unlock(&fk_lock);
    if (e == NULL) {
        close(fd);
        free(token);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *handle = h;
    return CUDA_SUCCESS;
}

FK_EXPORT size_t fake_cuda_vmm_host_bytes(void)
{
    pthread_mutex_lock(&fk_lock);
    size_t n = fk_host_bytes;
    pthread_mutex_unlock(&fk_lock);
    return n;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    FAKE_ENTER(cuMemCreate);
    void *p = NULL;
    (void)flags;
    if (handle == NULL || !fk_prop_ok(prop) || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_prop_host(prop))
        return fk_create_host(handle, size, prop);
    if (size % FK_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.id < 0 || prop->location.id >= fk_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    int fd = memfd_create("fake-cuda-vmm", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult r = fk_mem_alloc_on(&p, size, prop->location.id);
    if (r != CUDA_SUCCESS) {
        close(fd);
        return r;
    }
    uint64_t h = (CUmemGenericAllocationHandle)(uintptr_t)p | FK_VMM_BIT;
    pthread_mutex_lock(&fk_lock);
    struct fk_handle *e = NULL;
    for (int i = 0; i < FK_VMM_MAX && e == NULL; i++)
        if (fk_handles[i].h == 0)
            e = &fk_handles[i];
    if (e != NULL)
        *e = (struct fk_handle){ .h = h, .size = size, .fd = fd, .device = prop->location.id, .refs = 1,
                                 .prop = *prop };
    pthread_mutex_unlock(&fk_lock);
    if (e == NULL) {
        close(fd);
        fk_mem_free_dev((uintptr_t)p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *handle = h;
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    FAKE_ENTER(cuMemRelease);
    if ((handle & FK_IMPORT_BITS) == FK_IMPORT_BITS)
        return CUDA_SUCCESS;   /* an imported handle holds no memory of ours */
    if (!(handle & FK_VMM_BIT))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_handle *e = fk_handle_of(handle);
    int last = e != NULL && --e->refs == 0, fd = -1;
    void *token = NULL;
    if (last) {   /* a mapping keeps its bytes (the memfd stays mapped) until it is unmapped */
        fd = e->fd;
        e->h = 0;
        if ((token = e->token) != NULL)
            fk_host_bytes -= e->size;
        e->token = NULL;
    }
    pthread_mutex_unlock(&fk_lock);
    if (e == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!last)
        return CUDA_SUCCESS;
    close(fd);
    if (token != NULL) {   /* host-located: no device memory behind it */
        free(token);
        return CUDA_SUCCESS;
    }
    return fk_mem_free_dev((uintptr_t)(handle & ~FK_VMM_BIT));
}

/* The handle mapped at 'addr'; for an address that no mapping holds, the handle whose memory it is (the quota
   tests retain by the handle's own address). */
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    FAKE_ENTER(cuMemRetainAllocationHandle);
    if (handle == NULL || addr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a = (uintptr_t)addr;
    uint64_t h = (CUmemGenericAllocationHandle)a | FK_VMM_BIT;
    pthread_mutex_lock(&fk_lock);
    for (int i = 0; i < FK_VMM_MAX; i++)
        if (fk_maps[i].base && a >= fk_maps[i].base && a - fk_maps[i].base < fk_maps[i].size)
            h = fk_maps[i].h;
    struct fk_handle *e = fk_handle_of(h);
    if (e != NULL)
        e->refs++;
    pthread_mutex_unlock(&fk_lock);
    if (e == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *handle = h;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
    FAKE_ENTER(cuMemGetAllocationPropertiesFromHandle);
    if (prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_handle *e = fk_handle_of(handle);
    if (e != NULL)
        *prop = e->prop;
    pthread_mutex_unlock(&fk_lock);
    return e != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                        CUmemAllocationHandleType shHandleType)
{
    FAKE_ENTER(cuMemImportFromShareableHandle);
    (void)osHandle;
    (void)shHandleType;
    if (handle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *handle = FK_IMPORT_BITS | (atomic_fetch_add(&fk_import_seq, 1) + 1);
    return CUDA_SUCCESS;
}

/* ---- address ranges ------------------------------------------------------ */
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    FAKE_ENTER(cuMemAddressReserve);
    FK_REQUIRE_INIT();
    (void)addr;   /* a hint */
    if (ptr == NULL || size == 0 || size % FK_GRANULARITY || flags != 0 ||
        (alignment != 0 && (alignment & (alignment - 1))))
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = alignment > FK_GRANULARITY ? alignment : FK_GRANULARITY;
    uint8_t *m = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t base = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
    if (base > (uintptr_t)m)
        munmap(m, base - (uintptr_t)m);
    if ((uintptr_t)m + size + align > base + size)
        munmap((void *)(base + size), (uintptr_t)m + size + align - (base + size));
    int i;
    pthread_mutex_lock(&fk_lock);
    for (i = 0; i < FK_VMM_MAX && fk_reserved[i].size; i++)
        ;
    if (i < FK_VMM_MAX)
        fk_reserved[i] = (struct fk_range){ base, size };
    pthread_mutex_unlock(&fk_lock);
    if (i == FK_VMM_MAX) {
        munmap((void *)base, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    FAKE_ENTER(cuMemAddressFree);
    int found = 0, mapped = 0;
    pthread_mutex_lock(&fk_lock);
    for (int i = 0; i < FK_VMM_MAX; i++)
        mapped |= fk_maps[i].base && fk_maps[i].base >= ptr && fk_maps[i].base - ptr < size;
    for (int i = 0; i < FK_VMM_MAX && !found && !mapped; i++)
        if (fk_reserved[i].size && fk_reserved[i].base == ptr && fk_reserved[i].size == size) {
            fk_reserved[i].size = 0;
            found = 1;
        }
    pthread_mutex_unlock(&fk_lock);
    if (!found)   /* not a reservation, or still mapped (the driver asks for cuMemUnmap first) */
        return CUDA_ERROR_INVALID_VALUE;
    munmap((void *)(uintptr_t)ptr, size);
    return CUDA_SUCCESS;
}

/* ---- mappings ------------------------------------------------------------ */
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    FAKE_ENTER(cuMemMap);
    if (size == 0 || flags != 0 || ptr % FK_GRANULARITY || size % FK_GRANULARITY || offset % FK_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    int slot = -1;
    pthread_mutex_lock(&fk_lock);
    struct fk_handle *e = fk_handle_of(handle);
    if (e == NULL || offset > e->size || size > e->size - offset || !fk_reserved_holds(ptr, size))
        r = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < FK_VMM_MAX && r == CUDA_SUCCESS; i++) {
        if (fk_maps[i].base == 0 && slot < 0)
            slot = i;
        if (fk_maps[i].base && ptr < fk_maps[i].base + fk_maps[i].size && fk_maps[i].base < ptr + size)
            r = CUDA_ERROR_ALREADY_MAPPED;
    }
    if (r == CUDA_SUCCESS && slot < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS &&
        mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, e->fd, (off_t)offset) ==
            MAP_FAILED)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        fk_maps[slot] = (struct fk_mapping){ (uintptr_t)ptr, size, handle, e->device, 0 };
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FAKE_ENTER(cuMemUnmap);
    int found = 0, accessible = 0;
    pthread_mutex_lock(&fk_lock);
    for (int i = 0; i < FK_VMM_MAX && !found; i++)
        if (fk_maps[i].base && fk_maps[i].base == ptr && fk_maps[i].size == size) {
            accessible = fk_maps[i].accessible;
            fk_maps[i].base = 0;
            found = 1;
        }
    pthread_mutex_unlock(&fk_lock);
    if (!found)
        return CUDA_ERROR_INVALID_VALUE;
    if (accessible)
        fk_mem_untrack_mapped((uintptr_t)ptr);
    /* the range stays reserved: inaccessible again */
    mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    return CUDA_SUCCESS;
}

/* Read-write access for devices: the mappings inside [ptr, ptr+size) become device memory. */
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    FAKE_ENTER(cuMemSetAccess);
    int rw = 0, rwdev = -1;
    if (desc == NULL || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < count; k++) {
        if (desc[k].location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc[k].location.id < 0 ||
            desc[k].location.id >= fk_device_count())
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
        rw |= desc[k].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (desc[k].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE && rwdev < 0)
            rwdev = desc[k].location.id;   /* the device a host-located mapping is device memory of */
    }
    struct fk_mapping todo[FK_VMM_MAX];
    int n = 0, covered = 0;
    pthread_mutex_lock(&fk_lock);
    for (int i = 0; i < FK_VMM_MAX; i++)
        if (fk_maps[i].base && fk_maps[i].base >= ptr && fk_maps[i].base - ptr < size) {
            covered = 1;
            if (rw && !fk_maps[i].accessible) {
                fk_maps[i].accessible = 1;
                todo[n++] = fk_maps[i];
            }
        }
    pthread_mutex_unlock(&fk_lock);
    if (!covered)   /* nothing mapped there */
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < n; i++)
        if (fk_mem_track_mapped(todo[i].base, todo[i].size, todo[i].device >= 0 ? todo[i].device : rwdev) !=
            CUDA_SUCCESS)
            return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}
