/*
 * fake_mem.c - device, host and managed memory of the fake driver, from the host heap.
 *
 * Device addresses are host addresses (every allocation is host memory), so
 * copies and sets are plain memcpy/memset after the device side has been checked
 * against the table of live allocations, as the real driver rejects addresses it
 * did not hand out. Each device has FAKE_CUDA_MEM bytes; device allocations past
 * that fail with CUDA_ERROR_OUT_OF_MEMORY and cuMemGetInfo reports what is left, so a
 * quota plugin can be tested against it. Managed memory past it is resident in host
 * memory instead (as the real driver oversubscribes it), and cuMemAdvise's preferred
 * location and cuMemPrefetchAsync move an allocation between the two.
 *
 * FAKE_CUDA_MANAGED_BASE=0xADDR (opt-in): managed memory is mapped in a virtual range of its own from that address
 * upward instead of the heap, page-aligned and first fit (a block freed is handed out again), as the real driver
 * hands managed memory out of the unified address range it reserves: the remoting's tests map the same addresses
 * in a client (docs/remote.md, "Managed memory").
 *
 * With FAKE_CUDA_IPC=1 device memory is a memfd per allocation, mapped shared, so that another process can map it
 * (cuIpcGetMemHandle / cuIpcOpenMemHandle, fake_alloc2.c): IPC between two processes, as the real driver does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_internal.h"

enum fk_mem_kind { FK_MEM_DEVICE, FK_MEM_HOST, FK_MEM_MANAGED, FK_MEM_MAPPED /* a VMM mapping (fake_vmm.c) */ };

struct fk_alloc {
    uintptr_t base;
    size_t size;
    int kind;
    int device;
    int host_backed;        /* managed memory resident in host memory: not in fk_used (fake_mem_managed below) */
    int preferred;          /* managed: cuMemAdvise's preferred location, FK_PREF_NONE, CU_DEVICE_CPU or a device */
    unsigned accessed_by;   /* managed: devices given CU_MEM_ADVISE_SET_ACCESSED_BY, one bit each */
    CUcontext ctx;          /* the context current at the allocation (CU_POINTER_ATTRIBUTE_CONTEXT)          */
    unsigned long long id;  /* CU_POINTER_ATTRIBUTE_BUFFER_ID: unique over the process's life               */
    int registered;         /* host memory of the caller's (cuMemHostRegister): never freed here             */
    unsigned char sync_memops; /* CU_POINTER_ATTRIBUTE_SYNC_MEMOPS                                          */
    size_t mapped;          /* managed under FAKE_CUDA_MANAGED_BASE: the bytes mmap'ed at 'base' (munmap'ed)  */
    int memfd;              /* FAKE_CUDA_IPC: the memfd + 1 of device memory mapped shared; 0: heap memory     */
};
#define FK_PREF_NONE (-2)

/* All under fk_lock. */
static struct fk_alloc *fk_allocs;
static size_t fk_nallocs, fk_cap;
static size_t fk_used[FK_MAX_DEVICES];
static size_t fk_last_size;
static unsigned long long fk_next_id;

static CUresult fk_track(void *p, size_t size, int kind, int device)
{
    if (fk_nallocs == fk_cap) {
        size_t cap = fk_cap ? fk_cap * 2 : 64;
        struct fk_alloc *n = realloc(fk_allocs, cap * sizeof *n);
        if (n == NULL)
            return CUDA_ERROR_OUT_OF_MEMORY;
        fk_allocs = n;
        fk_cap = cap;
    }
    /* managed memory that does not fit on the device is resident in host memory, as the real driver
       oversubscribes it (Linux, Pascal and later): it succeeds and is not device memory in use */
    int host_backed = kind == FK_MEM_MANAGED && size > fk_device_total_mem() - fk_used[device];
    fk_allocs[fk_nallocs++] = (struct fk_alloc){ .base = (uintptr_t)p, .size = size, .kind = kind, .device = device,
                                                 .host_backed = host_backed, .preferred = FK_PREF_NONE,
                                                 .ctx = fk_current_ctx(), .id = ++fk_next_id };
    if (kind != FK_MEM_HOST && kind != FK_MEM_MAPPED && !host_backed)
        fk_used[device] += size;
    return CUDA_SUCCESS;
}

/* Index of the allocation holding [p, p+n), or -1. */
static long fk_find(uintptr_t p, size_t n)
{
    for (size_t i = 0; i < fk_nallocs; i++) {
        const struct fk_alloc *a = &fk_allocs[i];
        if (p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base))
            return (long)i;
    }
    return -1;
}

/* FAKE_CUDA_MANAGED_BASE: the range managed memory is placed in (0: the heap, as before). */
static uintptr_t fk_managed_base(void)
{
    static uintptr_t base = 1;   /* 1: not read yet (under fk_lock) */
    if (base == 1) {
        const char *e = getenv("FAKE_CUDA_MANAGED_BASE");
        char *end = NULL;
        unsigned long long v = e != NULL ? strtoull(e, &end, 0) : 0;
        base = e != NULL && end != e && *end == '\0' && v % 4096 == 0 ? (uintptr_t)v : 0;
    }
    return base;
}

/* Managed memory mapped in its range: the lowest page-aligned address past 'base' where no managed block lives
   and the kernel maps it without replacing anything. NULL when none (under fk_lock). */
static void *fk_managed_map(size_t size, size_t *mapped)
{
    uintptr_t base = fk_managed_base(), at = base;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size + page - 1) / page * page;
    for (int tries = 0; tries < 4096; tries++) {
        int moved = 0;
        for (size_t i = 0; i < fk_nallocs; i++) {
            const struct fk_alloc *a = &fk_allocs[i];
            if (a->mapped != 0 && at < a->base + a->mapped && a->base < at + len) {
                at = a->base + a->mapped;
                moved = 1;
            }
        }
        if (moved)
            continue;
        void *p = mmap((void *)at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (p == (void *)at) {
            *mapped = len;
            return p;
        }
        if (p != MAP_FAILED)
            munmap(p, len);   /* an old kernel took the flag as a hint and mapped elsewhere */
        if (p == MAP_FAILED && errno != EEXIST)
            return NULL;
        at += page;   /* something of this process's lives there: further up */
    }
    return NULL;
}

static int fk_ipc_on(void)
{
    const char *v = getenv("FAKE_CUDA_IPC");
    return v != NULL && strcmp(v, "1") == 0;
}

static size_t fk_page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

/* Zeroed shared memory of a memfd of its own (FAKE_CUDA_IPC), or NULL. */
static void *fk_ipc_map(size_t size, int *fd)
{
    size_t n = fk_page_round(size);
    *fd = memfd_create("fake-cuda-device", MFD_CLOEXEC);
    void *p = *fd >= 0 && ftruncate(*fd, (off_t)n) == 0 ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)
                                                         : MAP_FAILED;
    if (p == MAP_FAILED) {
        if (*fd >= 0)
            close(*fd);
        return NULL;
    }
    return p;
}

static void fk_ipc_unmap(void *p, size_t size, int fd)
{
    munmap(p, fk_page_round(size));
    close(fd);
}

static CUresult fk_alloc(void **out, size_t size, int kind)
{
    FK_REQUIRE_INIT();
    if (out == NULL || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    int dev = ctx->device;
    pthread_mutex_lock(&fk_lock);
    CUresult r = CUDA_SUCCESS;
    void *p = NULL;
    size_t mapped = 0;
    if (kind == FK_MEM_DEVICE && size > fk_device_total_mem() - fk_used[dev])
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (kind == FK_MEM_DEVICE && fk_ipc_on()) {
        int fd = -1;
        if ((p = fk_ipc_map(size, &fd)) == NULL)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else if ((r = fk_track(p, size, kind, dev)) != CUDA_SUCCESS)
            fk_ipc_unmap(p, size, fd);
        else
            fk_allocs[fk_nallocs - 1].memfd = fd + 1;
    } else if (kind == FK_MEM_MANAGED && fk_managed_base() != 0 ? (p = fk_managed_map(size, &mapped)) == NULL :
               (p = calloc(1, size)) == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((r = fk_track(p, size, kind, dev)) != CUDA_SUCCESS)
        mapped != 0 ? (void)munmap(p, mapped) : free(p);
    else
        fk_allocs[fk_nallocs - 1].mapped = mapped;
    if (r == CUDA_SUCCESS && kind != FK_MEM_HOST)
        fk_last_size = size;
    pthread_mutex_unlock(&fk_lock);
    if (r == CUDA_SUCCESS)
        *out = p;
    return r;
}

static CUresult fk_free(uintptr_t p, int host)
{
    FK_REQUIRE_INIT();
    if (p == 0)
        return CUDA_SUCCESS;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_nallocs; i++) {
        struct fk_alloc *a = &fk_allocs[i];
        if (a->base != p || (a->kind == FK_MEM_HOST) != host || a->kind == FK_MEM_MAPPED || a->registered)
            continue;
        if (a->kind != FK_MEM_HOST && !a->host_backed)
            fk_used[a->device] -= a->size;
        if (a->mapped != 0)
            munmap((void *)a->base, a->mapped);
        else if (a->memfd != 0)
            fk_ipc_unmap((void *)a->base, a->size, a->memfd - 1);
        else
            free((void *)a->base);
        *a = fk_allocs[--fk_nallocs];
        r = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

static CUresult fk_dev_alloc(CUdeviceptr *dptr, size_t size, int kind)
{
    void *p = NULL;
    if (dptr == NULL)   /* the driver's answer, not a crash */
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_alloc(&p, size, kind);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FAKE_ENTER(cuMemAlloc_v2);
    return fk_dev_alloc(dptr, bytesize, FK_MEM_DEVICE);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    FAKE_ENTER(cuMemFree_v2);
    return fk_free((uintptr_t)dptr, 0);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    FAKE_ENTER(cuMemAllocManaged);
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_dev_alloc(dptr, bytesize, FK_MEM_MANAGED);
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    FAKE_ENTER(cuMemAllocHost_v2);
    return fk_alloc(pp, bytesize, FK_MEM_HOST);
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    FAKE_ENTER(cuMemHostAlloc);
    (void)Flags;
    return fk_alloc(pp, bytesize, FK_MEM_HOST);
}

/* Unified addressing, as on every 64-bit platform CUDA supports: the device address of page-locked host memory
   is its host address. Memory this fake did not allocate as host memory: CUDA_ERROR_INVALID_VALUE. */
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    FAKE_ENTER(cuMemHostGetDevicePointer_v2);
    FK_REQUIRE_INIT();
    if (pdptr == NULL || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    long i = fk_find((uintptr_t)p, 1);
    int host = i >= 0 && fk_allocs[i].kind == FK_MEM_HOST;
    pthread_mutex_unlock(&fk_lock);
    if (!host)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p)
{
    FAKE_ENTER(cuMemFreeHost);
    return fk_free((uintptr_t)p, 1);
}

static CUresult fk_alloc_async(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
    CUresult r = fk_stream_check(s);
    return r != CUDA_SUCCESS ? r : fk_dev_alloc(dptr, bytesize, FK_MEM_DEVICE);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FAKE_ENTER(cuMemAllocAsync);
    return fk_alloc_async(dptr, bytesize, hStream);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FAKE_ENTER(cuMemAllocAsync_ptsz);
    return fk_alloc_async(dptr, bytesize, hStream);
}

static CUresult fk_free_async(CUdeviceptr dptr, CUstream s)
{
    CUresult r = fk_stream_check(s);
    return r != CUDA_SUCCESS ? r : fk_free((uintptr_t)dptr, 0);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    FAKE_ENTER(cuMemFreeAsync);
    return fk_free_async(dptr, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    FAKE_ENTER(cuMemFreeAsync_ptsz);
    return fk_free_async(dptr, hStream);
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    FAKE_ENTER(cuMemGetInfo_v2);
    FK_REQUIRE_INIT();
    if (free_bytes == NULL || total == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk_lock);
    *total = fk_device_total_mem();
    *free_bytes = *total - fk_used[ctx->device];
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    FAKE_ENTER(cuMemGetAddressRange_v2);
    FK_REQUIRE_INIT();
    pthread_mutex_lock(&fk_lock);
    long i = fk_find((uintptr_t)dptr, 0);
    if (i >= 0) {
        if (pbase != NULL)
            *pbase = (CUdeviceptr)fk_allocs[i].base;
        if (psize != NULL)
            *psize = fk_allocs[i].size;
    }
    pthread_mutex_unlock(&fk_lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* ---- copies and sets --------------------------------------------------- */

/* 'dev_dst'/'dev_src': which sides must be memory the fake handed out. */
static CUresult fk_copy(uintptr_t dst, int dev_dst, uintptr_t src, int dev_src, size_t n, CUstream s, int check_s)
{
    FK_REQUIRE_INIT();
    if (check_s) {
        CUresult r = fk_stream_check(s);
        if (r != CUDA_SUCCESS)
            return r;
    }
    if (n == 0)
        return CUDA_SUCCESS;
    if (dst == 0 || src == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    int ok = (!dev_dst || fk_find(dst, n) >= 0) && (!dev_src || fk_find(src, n) >= 0);
    pthread_mutex_unlock(&fk_lock);
    if (!ok) {
        if (check_s)
            fk_capture_fail(s);
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult r;
    fk_work w = { .kind = FK_WORK_COPY, .dst = dst, .src = src, .n = n };
    if (check_s && fk_capture(s, &w, &r))   /* a stream being captured: recorded (fake_graph.c) */
        return r;
    fk_work_run(&w, s, "stream");
    return CUDA_SUCCESS;
}

int fk_dev_range(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&fk_lock);
    int ok = fk_find(p, n) >= 0;
    pthread_mutex_unlock(&fk_lock);
    return ok;
}

#define FK_HTOD(name, sync)                                                                 \
    CUresult name(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)             \
    {                                                                                       \
        FAKE_ENTER(name);                                                                   \
        return fk_copy((uintptr_t)dstDevice, 1, (uintptr_t)srcHost, 0, ByteCount, NULL, 0); \
    }
#define FK_DTOH(name)                                                                       \
    CUresult name(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)                   \
    {                                                                                       \
        FAKE_ENTER(name);                                                                   \
        return fk_copy((uintptr_t)dstHost, 0, (uintptr_t)srcDevice, 1, ByteCount, NULL, 0); \
    }
#define FK_DTOD(name)                                                                       \
    CUresult name(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)           \
    {                                                                                       \
        FAKE_ENTER(name);                                                                   \
        return fk_copy((uintptr_t)dstDevice, 1, (uintptr_t)srcDevice, 1, ByteCount, NULL, 0); \
    }
#define FK_ANY(name)                                                                        \
    CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)                       \
    {                                                                                       \
        FAKE_ENTER(name);                                                                   \
        return fk_copy((uintptr_t)dst, 0, (uintptr_t)src, 0, ByteCount, NULL, 0);          \
    }
#define FK_HTOD_ASYNC(name)                                                                          \
    CUresult name(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)   \
    {                                                                                                \
        FAKE_ENTER(name);                                                                            \
        return fk_copy((uintptr_t)dstDevice, 1, (uintptr_t)srcHost, 0, ByteCount, hStream, 1);      \
    }
#define FK_DTOH_ASYNC(name)                                                                          \
    CUresult name(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)         \
    {                                                                                                \
        FAKE_ENTER(name);                                                                            \
        return fk_copy((uintptr_t)dstHost, 0, (uintptr_t)srcDevice, 1, ByteCount, hStream, 1);      \
    }
#define FK_DTOD_ASYNC(name)                                                                          \
    CUresult name(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) \
    {                                                                                                \
        FAKE_ENTER(name);                                                                            \
        return fk_copy((uintptr_t)dstDevice, 1, (uintptr_t)srcDevice, 1, ByteCount, hStream, 1);    \
    }
#define FK_ANY_ASYNC(name)                                                                           \
    CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)             \
    {                                                                                                \
        FAKE_ENTER(name);                                                                            \
        return fk_copy((uintptr_t)dst, 0, (uintptr_t)src, 0, ByteCount, hStream, 1);                \
    }

FK_HTOD(cuMemcpyHtoD_v2, 1)
FK_HTOD(cuMemcpyHtoD_v2_ptds, 1)
FK_DTOH(cuMemcpyDtoH_v2)
FK_DTOH(cuMemcpyDtoH_v2_ptds)
FK_DTOD(cuMemcpyDtoD_v2)
FK_DTOD(cuMemcpyDtoD_v2_ptds)
FK_ANY(cuMemcpy)
FK_ANY(cuMemcpy_ptds)
FK_HTOD_ASYNC(cuMemcpyHtoDAsync_v2)
FK_HTOD_ASYNC(cuMemcpyHtoDAsync_v2_ptsz)
FK_DTOH_ASYNC(cuMemcpyDtoHAsync_v2)
FK_DTOH_ASYNC(cuMemcpyDtoHAsync_v2_ptsz)
FK_DTOD_ASYNC(cuMemcpyDtoDAsync_v2)
FK_DTOD_ASYNC(cuMemcpyDtoDAsync_v2_ptsz)
FK_ANY_ASYNC(cuMemcpyAsync)
FK_ANY_ASYNC(cuMemcpyAsync_ptsz)

static CUresult fk_set(CUdeviceptr dst, unsigned int value, size_t elem, size_t n, CUstream s, int check_s)
{
    FK_REQUIRE_INIT();
    if (check_s) {
        CUresult r = fk_stream_check(s);
        if (r != CUDA_SUCCESS)
            return r;
    }
    if (n == 0)
        return CUDA_SUCCESS;
    if (n > SIZE_MAX / elem || (uintptr_t)dst % elem != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    int ok = fk_find((uintptr_t)dst, n * elem) >= 0;
    pthread_mutex_unlock(&fk_lock);
    if (!ok) {
        if (check_s)
            fk_capture_fail(s);
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult r;
    fk_work w = { .kind = FK_WORK_SET, .dst = (uintptr_t)dst, .value = value, .elem = elem, .n = n };
    if (check_s && fk_capture(s, &w, &r))   /* a stream being captured: recorded (fake_graph.c) */
        return r;
    fk_work_run(&w, s, "stream");
    return CUDA_SUCCESS;
}

void fk_set_run(uintptr_t dst, unsigned int value, size_t elem, size_t n)
{
    unsigned char *p = (unsigned char *)dst;
    if (elem == 1) {
        memset(p, (int)(value & 0xff), n);
    } else {
        for (size_t i = 0; i < n; i++)
            memcpy(p + i * elem, elem == 2 ? (const void *)&(uint16_t){(uint16_t)value}
                                           : (const void *)&(uint32_t){(uint32_t)value}, elem);
    }
}

#define FK_SET(name, T, arg, elem)                         \
    CUresult name(CUdeviceptr dstDevice, T arg, size_t N)  \
    {                                                      \
        FAKE_ENTER(name);                                  \
        return fk_set(dstDevice, arg, elem, N, NULL, 0);   \
    }
#define FK_SET_ASYNC(name, T, arg, elem)                                    \
    CUresult name(CUdeviceptr dstDevice, T arg, size_t N, CUstream hStream) \
    {                                                                       \
        FAKE_ENTER(name);                                                   \
        return fk_set(dstDevice, arg, elem, N, hStream, 1);                 \
    }

FK_SET(cuMemsetD8_v2, unsigned char, uc, 1)
FK_SET(cuMemsetD8_v2_ptds, unsigned char, uc, 1)
FK_SET(cuMemsetD16_v2, unsigned short, us, 2)
FK_SET(cuMemsetD16_v2_ptds, unsigned short, us, 2)
FK_SET(cuMemsetD32_v2, unsigned int, ui, 4)
FK_SET(cuMemsetD32_v2_ptds, unsigned int, ui, 4)
FK_SET_ASYNC(cuMemsetD8Async, unsigned char, uc, 1)
FK_SET_ASYNC(cuMemsetD8Async_ptsz, unsigned char, uc, 1)
FK_SET_ASYNC(cuMemsetD16Async, unsigned short, us, 2)
FK_SET_ASYNC(cuMemsetD16Async_ptsz, unsigned short, us, 2)
FK_SET_ASYNC(cuMemsetD32Async, unsigned int, ui, 4)
FK_SET_ASYNC(cuMemsetD32Async_ptsz, unsigned int, ui, 4)

/* ---- inspection -------------------------------------------------------- */

FK_EXPORT size_t fake_cuda_bytes_allocated(int dev)
{
    if (dev < 0 || dev >= FK_MAX_DEVICES)
        return 0;
    pthread_mutex_lock(&fk_lock);
    size_t n = fk_used[dev];
    pthread_mutex_unlock(&fk_lock);
    return n;
}

FK_EXPORT size_t fake_cuda_live_allocations(void)
{
    pthread_mutex_lock(&fk_lock);
    size_t n = fk_nallocs;
    pthread_mutex_unlock(&fk_lock);
    return n;
}

FK_EXPORT size_t fake_cuda_last_alloc_size(void)
{
    pthread_mutex_lock(&fk_lock);
    size_t n = fk_last_size;
    pthread_mutex_unlock(&fk_lock);
    return n;
}

/* ---- for fake_alloc2.c (pitch, pools, VMM, arrays, graph nodes) --------- */

/* Device memory on device 'dev' (-1: the current context's), checked and tracked
   like cuMemAlloc's. */
CUresult fk_mem_alloc_on(void **out, size_t size, int dev)
{
    FK_REQUIRE_INIT();
    if (out == NULL || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0) {
        CUcontext ctx = fk_current_ctx();
        if (!fk_ctx_valid(ctx))
            return CUDA_ERROR_INVALID_CONTEXT;
        dev = ctx->device;
    }
    if (dev >= fk_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fk_lock);
    CUresult r = CUDA_SUCCESS;
    void *p = NULL;
    if (size > fk_device_total_mem() - fk_used[dev])
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((p = calloc(1, size)) == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((r = fk_track(p, size, FK_MEM_DEVICE, dev)) != CUDA_SUCCESS)
        free(p);
    pthread_mutex_unlock(&fk_lock);
    if (r == CUDA_SUCCESS)
        *out = p;
    return r;
}

CUresult fk_mem_free_dev(uintptr_t p)
{
    return fk_free(p, 0);
}

/* A VMM mapping made accessible (fake_vmm.c): device memory for copies, sets and kernels, charged at cuMemCreate
   already (not in fk_used). */
CUresult fk_mem_track_mapped(uintptr_t p, size_t n, int dev)
{
    pthread_mutex_lock(&fk_lock);
    CUresult r = fk_track((void *)p, n, FK_MEM_MAPPED, dev);
    pthread_mutex_unlock(&fk_lock);
    return r;
}

int fk_mem_ipc_export(uintptr_t p, int *fd, uint64_t *off, uint64_t *size)
{
    int r = -1;
    pthread_mutex_lock(&fk_lock);
    long i = fk_find(p, 1);
    if (i >= 0 && fk_allocs[i].memfd != 0) {
        *fd = fk_allocs[i].memfd - 1;
        *off = p - fk_allocs[i].base;
        *size = fk_allocs[i].size;
        r = 0;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult fk_mem_ipc_track(uintptr_t p, size_t n)
{
    CUcontext ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return fk_mem_track_mapped(p, n, ctx->device);
}

void fk_mem_untrack_mapped(uintptr_t p)
{
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (fk_allocs[i].base == p && fk_allocs[i].kind == FK_MEM_MAPPED) {
            fk_allocs[i] = fk_allocs[--fk_nallocs];
            break;
        }
    pthread_mutex_unlock(&fk_lock);
}

/* Pointer attributes, as the driver knows its allocations and writes them (driver 580 on an H100, GPU check
   `remoteptrattr sizes`): booleans an int (4 bytes), P2P tokens the struct's two members (12 bytes: its tail
   padding left as it was); anything else is not a CUDA pointer (CUDA_ERROR_INVALID_VALUE, as the real driver
   answers for pageable memory). The attributes the fake does not model: CUDA_ERROR_NOT_SUPPORTED. */
static CUresult fk_ptr_attr(void *data, int attribute, const struct fk_alloc *a, uintptr_t ptr)
{
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = a->ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = a->kind == FK_MEM_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = (CUdeviceptr)ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a->kind == FK_MEM_DEVICE || a->kind == FK_MEM_MAPPED) {
            *(void **)data = NULL;   /* as driver 580: an error, yet the 8 bytes written (NULL) */
            return CUDA_ERROR_INVALID_VALUE;
        }
        *(void **)data = (void *)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: {
        CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = { 0x1000 + a->id, (unsigned int)a->id };
        memcpy(data, &t, offsetof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS, vaSpaceToken) + sizeof t.vaSpaceToken);
        break;
    }
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(int *)data = a->sync_memops; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = a->id; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = a->kind == FK_MEM_MANAGED; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->device; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = (CUdeviceptr)a->base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = a->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; break;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
}

/* Bytes the driver writes of an attribute's value (0: not modelled). */
static size_t fk_ptr_attr_size(int attribute)
{
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return 12;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return 4;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: return 8;
    default: return 0;
    }
}

/* The allocation holding 'ptr', copied out, or -1. */
static long fk_ptr_find(uintptr_t ptr, struct fk_alloc *out)
{
    pthread_mutex_lock(&fk_lock);
    long i = fk_find(ptr, 1);
    if (i >= 0)
        *out = fk_allocs[i];
    pthread_mutex_unlock(&fk_lock);
    return i;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FAKE_ENTER(cuPointerGetAttribute);
    FK_REQUIRE_INIT();
    struct fk_alloc a;
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_ptr_attr_size(attribute) == 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (fk_ptr_find((uintptr_t)ptr, &a) < 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_ptr_attr(data, attribute, &a, (uintptr_t)ptr);
}

/* As the driver: no error for a pointer it does not know, each value then zero (a context NULL, a memory type 0). */
CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
    FAKE_ENTER(cuPointerGetAttributes);
    FK_REQUIRE_INIT();
    struct fk_alloc a = { 0 };
    if (numAttributes == 0 || attributes == NULL || data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int known = fk_ptr_find((uintptr_t)ptr, &a) >= 0;
    for (unsigned int k = 0; k < numAttributes; k++) {
        size_t n = fk_ptr_attr_size(attributes[k]);
        if (n == 0)
            return CUDA_ERROR_INVALID_VALUE;
        if (data[k] == NULL)
            continue;
        memset(data[k], 0, n);
        if (known)
            (void)fk_ptr_attr(data[k], attributes[k], &a, (uintptr_t)ptr);   /* a failure leaves the zeros */
    }
    return CUDA_SUCCESS;
}

/* CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, a bool, is the one attribute that can be set. */
CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FAKE_ENTER(cuPointerSetAttribute);
    FK_REQUIRE_INIT();
    if (value == NULL || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    long i = fk_find((uintptr_t)ptr, 1);
    if (i >= 0 && fk_allocs[i].kind != FK_MEM_HOST) {
        fk_allocs[i].sync_memops = *(const unsigned char *)value != 0;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

/* Registered host memory: the caller's, known as host memory until unregistered. Only with
   FAKE_CUDA_HOST_REGISTER=1 (else NOT_SUPPORTED, as the fake always answered: a back end then leaves its shared
   regions pageable, and the tests that count its calls see no cuMemHostUnregister). */
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    FAKE_ENTER(cuMemHostRegister_v2);
    FK_REQUIRE_INIT();
    const char *on = getenv("FAKE_CUDA_HOST_REGISTER");
    (void)Flags;
    if (on == NULL || strcmp(on, "1") != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (p == NULL || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk_lock);
    CUresult r = fk_find((uintptr_t)p, 1) >= 0 ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
                                               : fk_track(p, bytesize, FK_MEM_HOST, ctx->device);
    if (r == CUDA_SUCCESS)
        fk_allocs[fk_nallocs - 1].registered = 1;
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuMemHostUnregister(void *p)
{
    FAKE_ENTER(cuMemHostUnregister);
    FK_REQUIRE_INIT();
    CUresult r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (fk_allocs[i].base == (uintptr_t)p && fk_allocs[i].registered) {
            fk_allocs[i] = fk_allocs[--fk_nallocs];
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

/* ---- managed memory's placement: cuMemAdvise, cuMemPrefetchAsync ------- */
/* Residency is per allocation (the real driver's is per page): a preferred location or a prefetch moves the
   whole allocation holding the range - into host memory, or onto its device when it fits there. Tests read it
   with fake_cuda_managed_bytes and fake_cuda_mem_advice. */

/* Under fk_lock: make allocation 'a' host-resident (to_host) or device-resident when it fits. */
static void fk_managed_place(struct fk_alloc *a, int to_host)
{
    if (to_host && !a->host_backed) {
        fk_used[a->device] -= a->size;
        a->host_backed = 1;
    } else if (!to_host && a->host_backed && a->size <= fk_device_total_mem() - fk_used[a->device]) {
        fk_used[a->device] += a->size;
        a->host_backed = 0;
    }
}

/* 'dev': a device ordinal or CU_DEVICE_CPU. */
static CUresult fk_advise(CUdeviceptr p, size_t count, int advice, int dev)
{
    FK_REQUIRE_INIT();
    if (count == 0 || (dev != CU_DEVICE_CPU && (dev < 0 || dev >= fk_device_count())))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    long i = fk_find((uintptr_t)p, count);
    if (i < 0 || fk_allocs[i].kind != FK_MEM_MANAGED) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        struct fk_alloc *a = &fk_allocs[i];
        switch (advice) {
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
            a->preferred = dev;
            fk_managed_place(a, dev == CU_DEVICE_CPU);
            break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
            a->preferred = FK_PREF_NONE;
            break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY:
        case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
            if (dev == CU_DEVICE_CPU)
                break;
            if (advice == CU_MEM_ADVISE_SET_ACCESSED_BY)
                a->accessed_by |= 1u << dev;
            else
                a->accessed_by &= ~(1u << dev);
            break;
        case CU_MEM_ADVISE_SET_READ_MOSTLY:
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
            break;
        default:
            r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

static CUresult fk_prefetch(CUdeviceptr p, size_t count, int dev, CUstream s)
{
    FK_REQUIRE_INIT();
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    if (count == 0 || (dev != CU_DEVICE_CPU && (dev < 0 || dev >= fk_device_count())))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    long i = fk_find((uintptr_t)p, count);
    if (i < 0 || fk_allocs[i].kind != FK_MEM_MANAGED)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        fk_managed_place(&fk_allocs[i], dev == CU_DEVICE_CPU);
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
    FAKE_ENTER(cuMemAdvise);
    return fk_advise(devPtr, count, (int)advice, (int)device);
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
    FAKE_ENTER(cuMemPrefetchAsync);
    return fk_prefetch(devPtr, count, (int)dstDevice, hStream);
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
    FAKE_ENTER(cuMemPrefetchAsync_ptsz);
    return fk_prefetch(devPtr, count, (int)dstDevice, hStream);
}

#if CUDA_VERSION >= 12020   /* the _v2 advice and prefetch; CUmemLocation's host NUMA types */
/* A CUmemLocation as a device ordinal or CU_DEVICE_CPU (host and host NUMA locations); -3 for another type. */
static int fk_loc_dev(CUmemLocation loc)
{
    if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return loc.id;
    return loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
                   loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
               ? CU_DEVICE_CPU
               : -3;
}

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    FAKE_ENTER(cuMemAdvise_v2);
    return fk_advise(devPtr, count, (int)advice, fk_loc_dev(location));
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                               CUstream hStream)
{
    FAKE_ENTER(cuMemPrefetchAsync_v2);
    return flags != 0 ? CUDA_ERROR_INVALID_VALUE : fk_prefetch(devPtr, count, fk_loc_dev(location), hStream);
}

CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                                    CUstream hStream)
{
    FAKE_ENTER(cuMemPrefetchAsync_v2_ptsz);
    return flags != 0 ? CUDA_ERROR_INVALID_VALUE : fk_prefetch(devPtr, count, fk_loc_dev(location), hStream);
}
#endif

FK_EXPORT size_t fake_cuda_managed_bytes(int dev, int host_backed)
{
    size_t n = 0;
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (fk_allocs[i].kind == FK_MEM_MANAGED && fk_allocs[i].device == dev &&
            (fk_allocs[i].host_backed != 0) == (host_backed != 0))
            n += fk_allocs[i].size;
    pthread_mutex_unlock(&fk_lock);
    return n;
}

FK_EXPORT int fake_cuda_mem_advice(const void *p, int *preferred, unsigned *accessed_by)
{
    int r = -1;
    pthread_mutex_lock(&fk_lock);
    long i = fk_find((uintptr_t)p, 1);
    if (i >= 0 && fk_allocs[i].kind == FK_MEM_MANAGED) {
        *preferred = fk_allocs[i].preferred;
        *accessed_by = fk_allocs[i].accessed_by;
        r = 0;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}
