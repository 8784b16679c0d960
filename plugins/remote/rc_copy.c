/*
 * rc_copy.c - the runtime's copies and pinned host memory over remoting (docs/remote.md, "Runtime-API programs"):
 *   - cudaMemcpy[Async][_ptds/_ptsz] by their kind: cuMemcpyHtoD/DtoH/DtoD[Async] (the host side is this process's
 *     memory, carried in the message), in pieces of at most RC_CHUNK bytes; host to host here. cudaMemcpyDefault:
 *     each side is what the server's cudaPointerGetAttributes says it is (device or managed memory: the server's;
 *     anything else: this process's), refused when a "device" address is also mapped here (two address spaces,
 *     one number: which one the program meant is unknown).
 *   - Pinned host memory (cudaMallocHost, cudaHostAlloc, cudaFreeHost) is remote.c's (rp_shm.c): a region shared
 *     with the back end on the same host, which registers it with its driver, so that a copy from or to it is one
 *     DMA; this process's own page-aligned memory otherwise (TCP), copied through the socket.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rc_int.h"
#include "rm_names.h"
#include "rp_managed.h"

#define RC_CHUNK (32u << 20)        /* bytes per copy message (the wire's bound is RM_MAX_PAYLOAD) */

enum { RC_HTOD, RC_DTOH, RC_DTOD, RC_NCOPY };

/* the driver calls and runtime APIs this file takes (rc_copy_init) */
static struct {
    rc_api copy[2][2][RC_NCOPY];       /* [async][per_thread][kind] */
    rc_api ptrattr;                    /* cudaPointerGetAttributes: cudaMemcpyDefault's question */
    uint32_t id_copy[2][2];            /* cudaMemcpy[Async][_ptds/_ptsz]: [async][per_thread] */
    uint32_t id_host_alloc[2], id_host_free;
} rp;

/* Pinned host memory: remote.c's (rp_host_alloc), which frees only the blocks it gave. */
static int32_t rc_host_alloc(const cushim_call *call, const char *out_name)
{
    void **out, *p = NULL;
    size_t size;
    rc_get(call, out_name, &out, sizeof out);
    rc_get(call, "size", &size, sizeof size);
    if (out == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc.halloc(rc.user, size, &p);
    *out = p;
    return r == 0 ? 0 : rc_fail(rc_lib_error(CUSHIM_LIB_RUNTIME, r));
}

static int32_t rc_host_free(const cushim_call *call)
{
    void *p;
    rc_get(call, "ptr", &p, sizeof p);
    int32_t r = rc.hfree(rc.user, p);
    return r == 0 ? 0 : rc_fail(rc_lib_error(CUSHIM_LIB_RUNTIME, r));
}

/* cudaMemcpyDefault: is 'p' the server's device memory (1) or this process's host memory (0)? -1: unknown. */
static int rc_side(const void *p)
{
    uint8_t attr[256] = {0};         /* struct cudaPointerAttributes: 'type' first (its size checked in rc_init) */
    void *pa = attr;
    int32_t type;
    uint8_t params[256] = {0};
    unsigned char vec;
    rc_put(&rp.ptrattr, params, 0, &pa, sizeof pa);
    rc_put(&rp.ptrattr, params, 1, &p, sizeof p);
    if (rc_call(&rp.ptrattr, params) != 0)
        return -1;
    memcpy(&type, attr, sizeof type);
    long page = sysconf(_SC_PAGESIZE);
    void *at = (void *)((uintptr_t)p & ~(uintptr_t)(page - 1));
    int mapped_here = mincore(at, (size_t)page, &vec) == 0;
    if ((type == 2 || type == 3) && rp_managed_holds(p))   /* managed memory mirrored here: the server's */
        return 1;
    if (type == 2 || type == 3)    /* cudaMemoryTypeDevice, cudaMemoryTypeManaged */
        return mapped_here ? -1 : 1;
    return mapped_here ? 0 : -1;
}

/* cudaMemcpy*: by kind, in pieces. */
static int32_t rc_memcpy(const cushim_call *call, int async, int per_thread)
{
    uint8_t *dst, *src;
    size_t count;
    int32_t kind;   /* enum cudaMemcpyKind */
    void *stream = NULL;
    rc_get(call, "dst", &dst, sizeof dst);
    rc_get(call, "src", &src, sizeof src);
    rc_get(call, "count", &count, sizeof count);
    rc_get(call, "kind", &kind, sizeof kind);
    if (async)
        rc_get(call, "stream", &stream, sizeof stream);
    if (kind == 4 && count != 0) {   /* cudaMemcpyDefault: which side is which, asked of the server */
        int d = rc_side(dst), sr = rc_side(src);
        if (d < 0 || sr < 0) {
            rc.host->log(rc.self, CUSHIM_LOG_WARN, "%s(%p, %p, cudaMemcpyDefault): %p is %s: returns "
                         "cudaErrorInvalidValue", call->info->name, (void *)dst, (void *)src,
                         d < 0 ? (void *)dst : (void *)src, "neither the server's device memory nor memory of this "
                         "process, or both");
            return rc_fail(rc.e_inval);
        }
        kind = sr ? (d ? 3 : 2) : (d ? 1 : 0);
    }
    if (kind == 0 || (kind == 4 && count == 0)) {   /* host to host: both sides are this process's */
        if (count != 0)
            memmove(dst, src, count);
        return 0;
    }
    if (kind < 1 || kind > 3)
        return rc_fail(rc.e_kind);
    const rc_api *api = &rp.copy[async][per_thread][kind - 1];
    int32_t r = rc_context();
    for (size_t off = 0; r == 0 && (off < count || count == 0); off += RC_CHUNK) {
        size_t n = count - off < RC_CHUNK ? count - off : RC_CHUNK;
        uint8_t params[256] = {0};
        uint8_t *d = dst + off, *s = src + off;
        rc_put(api, params, 0, &d, sizeof d);
        rc_put(api, params, 1, &s, sizeof s);
        rc_put(api, params, 2, &n, sizeof n);
        if (async)
            rc_put(api, params, 3, &stream, sizeof stream);
        r = rc_call(api, params);
        if (count == 0)
            break;
    }
    return rc_fail(r);
}

int rc_copy_pre(cushim_call *call, int32_t *result)
{
    uint32_t id = call->api_id;
    for (int pt = 0; pt < 2; pt++)
        for (int async = 0; async < 2; async++)
            if (id == rp.id_copy[async][pt]) {
                *result = rc_memcpy(call, async, pt);
                return 1;
            }
    if (id == rp.id_host_alloc[0] || id == rp.id_host_alloc[1] || id == rp.id_host_free) {
        *result = id == rp.id_host_free ? rc_host_free(call)
                                        : rc_host_alloc(call, id == rp.id_host_alloc[0] ? "ptr" : "pHost");
        return 1;
    }
    return 0;
}

int rc_copy_init(void)
{
    static const char *const copies[RC_NCOPY] = { "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD" };
    const cushim_host *host = rc.host;
    int bad = rc_api_of(&rp.ptrattr, "cudaPointerGetAttributes");
    for (int k = 0; k < RC_NCOPY; k++) {
        char name[64];
        for (int async = 0; async < 2; async++)
            for (int pt = 0; pt < 2; pt++) {
                snprintf(name, sizeof name, "%s%s_v2%s", copies[k], async ? "Async" : "",
                         pt ? (async ? "_ptsz" : "_ptds") : "");
                bad |= rc_api_of(&rp.copy[async][pt][k], name);
            }
    }
    rp.id_copy[0][0] = rm_api_id(host, "cudaMemcpy", UINT32_MAX);
    rp.id_copy[0][1] = rm_api_id(host, "cudaMemcpy_ptds", UINT32_MAX);
    rp.id_copy[1][0] = rm_api_id(host, "cudaMemcpyAsync", UINT32_MAX);
    rp.id_copy[1][1] = rm_api_id(host, "cudaMemcpyAsync_ptsz", UINT32_MAX);
    rp.id_host_alloc[0] = rm_api_id(host, "cudaMallocHost", UINT32_MAX);
    rp.id_host_alloc[1] = rm_api_id(host, "cudaHostAlloc", UINT32_MAX);
    rp.id_host_free = rm_api_id(host, "cudaFreeHost", UINT32_MAX);
    const cushim_param_info *fp = bad ? NULL : host->api_param(rp.ptrattr.a, 0);
    if (!bad && (fp == NULL || fp->elem_size < 24 || fp->elem_size > 256)) {   /* 'type' first */
        host->log(rc.self, CUSHIM_LOG_ERROR, "struct cudaPointerAttributes has %u bytes, not 24 to 256",
                  fp ? fp->elem_size : 0);
        bad = 1;
    }
    return bad ? -1 : 0;
}
