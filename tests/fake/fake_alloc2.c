/*
 * fake_alloc2.c - the fake driver's other allocation paths, for the quota
 * plugin's tests: pitched memory, memory pools (cuMemAllocFromPoolAsync,
 * default pools), arrays and mipmapped arrays (sized from their descriptors),
 * graph memory nodes and IPC handles (VMM: fake_vmm.c). All device memory
 * goes through fake_mem.c, so FAKE_CUDA_MEM bounds it and
 * fake_cuda_bytes_allocated() tells what is live.
 *
 * IPC mappings of another process's memory with FAKE_CUDA_IPC=1, else a range of their own holding no memory.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_internal.h"

struct CUmemPoolHandle_st {
    uint32_t magic;
    int device;
};

#define FK_MAGIC_POOL 0x706f6f6cu

static struct CUmemPoolHandle_st fk_default_pools[FK_MAX_DEVICES];

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    FAKE_ENTER(cuMemAllocPitch_v2);
    void *p = NULL;
    size_t pitch;
    if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    pitch = (WidthInBytes + 511) / 512 * 512;
    CUresult r = fk_mem_alloc_on(&p, pitch * Height, -1);
    if (r == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr)(uintptr_t)p;
        *pPitch = pitch;
    }
    return r;
}

/* ---- pools --------------------------------------------------------------- */
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    FAKE_ENTER(cuDeviceGetDefaultMemPool);
    FK_REQUIRE_INIT();
    if (pool_out == NULL || dev < 0 || dev >= fk_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    fk_default_pools[dev].magic = FK_MAGIC_POOL;
    fk_default_pools[dev].device = dev;
    *pool_out = &fk_default_pools[dev];
    return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    FAKE_ENTER(cuMemPoolCreate);
    FK_REQUIRE_INIT();
    if (pool == NULL || poolProps == NULL || poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        poolProps->location.id < 0 || poolProps->location.id >= fk_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmemPoolHandle_st *p = fk_obj_alloc(sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->magic = FK_MAGIC_POOL;
    p->device = poolProps->location.id;
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    FAKE_ENTER(cuMemPoolDestroy);
    if (pool == NULL || pool->magic != FK_MAGIC_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    pool->magic = 0;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FAKE_ENTER(cuMemPoolTrimTo);
    (void)minBytesToKeep;
    return pool != NULL && pool->magic == FK_MAGIC_POOL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fk_from_pool(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
    void *p = NULL;
    CUresult r;
    if (dptr == NULL || pool == NULL || pool->magic != FK_MAGIC_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = fk_stream_check(s)) != CUDA_SUCCESS)
        return r;
    r = fk_mem_alloc_on(&p, bytesize, pool->device);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    FAKE_ENTER(cuMemAllocFromPoolAsync);
    return fk_from_pool(dptr, bytesize, pool, hStream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    FAKE_ENTER(cuMemAllocFromPoolAsync_ptsz);
    return fk_from_pool(dptr, bytesize, pool, hStream);
}

/* ---- IPC. With FAKE_CUDA_IPC=1 device memory is a memfd per allocation (fake_mem.c): a handle names the exporting
   process, its memfd, the offset and the size, and another process maps it through /proc/PID/fd (as the real
   driver's handle lets another process of the host map the memory; opening one's own handle is
   CUDA_ERROR_INVALID_CONTEXT there too). Otherwise a mapping is a small block of its own, holding no device memory.
   Event handles open as a new event of this process, complete until recorded. ---- */
#define FK_IPC_MAGIC "fake-ipc-mem"
#define FK_IPC_EVENT_MAGIC "fake-ipc-event"
typedef struct fk_ipc_handle {
    char magic[16];
    int32_t pid, fd;
    uint64_t off, size;
} fk_ipc_handle;
_Static_assert(sizeof(fk_ipc_handle) <= sizeof(CUipcMemHandle), "an IPC handle's 64 bytes");

#define FK_IPC_OPEN 64
static struct { uintptr_t map, dptr; size_t len; } fk_ipc_opened[FK_IPC_OPEN];
static pthread_mutex_t fk_ipc_lock = PTHREAD_MUTEX_INITIALIZER;

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    FAKE_ENTER(cuIpcGetMemHandle);
    if (pHandle == NULL || dptr == 0)
        return CUDA_ERROR_INVALID_VALUE;
    memset(pHandle, 0, sizeof *pHandle);
    fk_ipc_handle h = { .magic = FK_IPC_MAGIC, .pid = (int32_t)getpid() };
    int fd;
    if (fk_mem_ipc_export((uintptr_t)dptr, &fd, &h.off, &h.size) == 0) {
        h.fd = fd;
        memcpy(pHandle->reserved, &h, sizeof h);
    } else {
        memcpy(pHandle->reserved, &dptr, sizeof dptr);
    }
    return CUDA_SUCCESS;
}

static CUresult fk_ipc_open(CUdeviceptr *pdptr, const fk_ipc_handle *h)
{
    char path[64];
    if (h->pid == (int32_t)getpid())
        return CUDA_ERROR_INVALID_CONTEXT;   /* the real driver's answer for a handle of one's own */
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h->pid, (int)h->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;    /* its process or allocation is gone */
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)(h->size + pg - 1) / pg * pg;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fk_mem_ipc_track((uintptr_t)m, (size_t)h->size);
    int slot = -1;
    pthread_mutex_lock(&fk_ipc_lock);
    for (int i = 0; i < FK_IPC_OPEN && slot < 0 && r == CUDA_SUCCESS; i++)
        if (fk_ipc_opened[i].map == 0) {
            slot = i;
            fk_ipc_opened[i].map = (uintptr_t)m, fk_ipc_opened[i].len = len;
            fk_ipc_opened[i].dptr = (uintptr_t)m + (uintptr_t)h->off;
        }
    pthread_mutex_unlock(&fk_ipc_lock);
    if (r == CUDA_SUCCESS && slot < 0) {
        fk_mem_untrack_mapped((uintptr_t)m);
        r = CUDA_ERROR_TOO_MANY_PEERS;
    }
    if (r != CUDA_SUCCESS) {
        munmap(m, len);
        return r;
    }
    *pdptr = (CUdeviceptr)((uintptr_t)m + (uintptr_t)h->off);
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    FAKE_ENTER(cuIpcOpenMemHandle_v2);
    fk_ipc_handle h;
    (void)Flags;
    if (pdptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&h, handle.reserved, sizeof h);
    if (memcmp(h.magic, FK_IPC_MAGIC, sizeof FK_IPC_MAGIC) == 0)
        return fk_ipc_open(pdptr, &h);
    void *m = malloc(64);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pdptr = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    FAKE_ENTER(cuIpcCloseMemHandle);
    if (dptr == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t map = 0;
    size_t len = 0;
    pthread_mutex_lock(&fk_ipc_lock);
    for (int i = 0; i < FK_IPC_OPEN && map == 0; i++)
        if (fk_ipc_opened[i].map != 0 && fk_ipc_opened[i].dptr == (uintptr_t)dptr) {
            map = fk_ipc_opened[i].map, len = fk_ipc_opened[i].len;
            fk_ipc_opened[i].map = 0;
        }
    pthread_mutex_unlock(&fk_ipc_lock);
    if (map != 0) {
        fk_mem_untrack_mapped(map);
        munmap((void *)map, len);
        return CUDA_SUCCESS;
    }
    free((void *)(uintptr_t)dptr);
    return CUDA_SUCCESS;
}

CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    FAKE_ENTER(cuIpcGetEventHandle);
    if (pHandle == NULL || event == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(pHandle, 0, sizeof *pHandle);
    fk_ipc_handle h = { .magic = FK_IPC_EVENT_MAGIC, .pid = (int32_t)getpid() };
    memcpy(&h.off, &event, sizeof event);
    memcpy(pHandle->reserved, &h, sizeof h);
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    FAKE_ENTER(cuIpcOpenEventHandle);
    fk_ipc_handle h;
    if (phEvent == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&h, handle.reserved, sizeof h);
    if (memcmp(h.magic, FK_IPC_EVENT_MAGIC, sizeof FK_IPC_EVENT_MAGIC) != 0)
        return CUDA_ERROR_INVALID_HANDLE;
    if (h.pid == (int32_t)getpid())
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuEventCreate(phEvent, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS);
}

/* ---- arrays: the memory the descriptor asks for, one element per channel byte size ---- */
static size_t fk_fmt_bytes(CUarray_format f)
{
    switch ((int)f) {
    case 0x01: case 0x08: return 1;
    case 0x02: case 0x09: case 0x10: return 2;
    default: return 4;
    }
}

static CUresult fk_array(CUarray *out, size_t w, size_t h, size_t d, CUarray_format f, unsigned ch, unsigned levels)
{
    size_t bytes = 0;
    void *p = NULL;
    if (out == NULL || w == 0 || ch == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned l = 0; l < (levels ? levels : 1); l++) {
        size_t lw = w >> l ? w >> l : 1, lh = h ? (h >> l ? h >> l : 1) : 1, ld = d ? (d >> l ? d >> l : 1) : 1;
        bytes += lw * lh * ld * ch * fk_fmt_bytes(f);
    }
    CUresult r = fk_mem_alloc_on(&p, bytes, -1);
    if (r == CUDA_SUCCESS)
        *out = (CUarray)p;
    return r;
}

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    FAKE_ENTER(cuArrayCreate_v2);
    if (d == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_array(pHandle, d->Width, d->Height, 0, d->Format, d->NumChannels, 1);
}

/* The legacy export: 32-bit fields (CUDA_ARRAY_DESCRIPTOR_v1). */
CUresult cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *d)
{
    FAKE_ENTER(cuArrayCreate);
    if (d == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_array(pHandle, d->Width, d->Height, 0, d->Format, d->NumChannels, 1);
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    FAKE_ENTER(cuArray3DCreate_v2);
    if (d == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_array(pHandle, d->Width, d->Height, d->Depth, d->Format, d->NumChannels, 1);
}

CUresult cuArrayDestroy(CUarray hArray)
{
    FAKE_ENTER(cuArrayDestroy);
    return fk_mem_free_dev((uintptr_t)hArray);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int levels)
{
    FAKE_ENTER(cuMipmappedArrayCreate);
    if (d == NULL || levels == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_array((CUarray *)pHandle, d->Width, d->Height, d->Depth, d->Format, d->NumChannels, levels);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray h)
{
    FAKE_ENTER(cuMipmappedArrayDestroy);
    return fk_mem_free_dev((uintptr_t)h);
}

/* ---- graph memory nodes: allocated when the node is added (the fake runs no graphs) ---- */
CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    FAKE_ENTER(cuGraphAddMemAllocNode);
    void *p = NULL;
    (void)hGraph;
    (void)dependencies;
    (void)numDependencies;
    if (phGraphNode == NULL || nodeParams == NULL ||
        nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_mem_alloc_on(&p, nodeParams->bytesize, nodeParams->poolProps.location.id);
    if (r != CUDA_SUCCESS)
        return r;
    nodeParams->dptr = (CUdeviceptr)(uintptr_t)p;
    *phGraphNode = fk_obj_alloc(16);
    return CUDA_SUCCESS;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                               size_t numDependencies, CUdeviceptr dptr)
{
    FAKE_ENTER(cuGraphAddMemFreeNode);
    (void)hGraph;
    (void)dependencies;
    (void)numDependencies;
    if (phGraphNode == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_mem_free_dev((uintptr_t)dptr);
    if (r == CUDA_SUCCESS)
        *phGraphNode = fk_obj_alloc(16);
    return r;
}
