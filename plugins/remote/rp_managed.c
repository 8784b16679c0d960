/*
 * rp_managed.c - managed memory over remoting (docs/remote.md, "Managed memory").
 *
 * cuMemAllocManaged and cudaMallocManaged run on the server's driver, which returns an address of its unified
 * range; a kernel gets that number and the program dereferences it on the host, so the client maps anonymous
 * memory (the mirror) at that very address, with MAP_FIXED_NOREPLACE: never over a mapping of the program's. A
 * range taken here is asked for again (the server keeps the refused block meanwhile, so it answers another
 * address), RP_MANAGED_TRIES times at most; then the blocks are freed on the server and the call fails with
 * CUDA_ERROR_OUT_OF_MEMORY (cudaErrorMemoryAllocation), the reason logged.
 *
 * Coherence is CUDA's for a device without concurrent managed access, which the client reports
 * (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS 0, and the pageable-access attributes 0: rp_managed_answer):
 * the host does not touch managed memory while GPU work is outstanding, and a synchronisation makes it coherent.
 *   push  before a call that may run GPU work (a launch, copy, memset, prefetch, graph launch, a cuBLAS call) or
 *         a synchronising one, while the host may have written (since the last pull): each block is compared
 *         with its shadow (the bytes the client last exchanged with the server) in RP_MANAGED_PAGE pieces, and
 *         the runs of pieces that differ are copied to the server (cuMemcpyHtoD). Exact: only what the host
 *         wrote goes, so GPU results the host has not seen yet are never overwritten with stale bytes.
 *         A launch, copy or memset then starts the GPU phase: no more pushes until the next pull.
 *   pull  after a synchronising call returned success (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize,
 *         a stream or event query answering success, a synchronous copy, and the runtime's forms): what the host
 *         wrote meanwhile is pushed (a copy from the device into managed memory lands in the mirror), then every
 *         block is copied back (cuMemcpyDtoH) into the mirror and the shadow; the host phase begins.
 * Nothing is exchanged while a stream capture is open (the captured work runs at the graph's launch, a push point)
 * or when the process has no managed memory (one relaxed load per call). The copies are the client's own: they
 * never report a batched call's error, which stays for the program's next synchronous call.
 * State: the blocks (under rp_mm.lock, taken outside the connection's lock: the copies take that one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rc_cudart.h"
#include "rp.h"
#include "rp_managed.h"
#include "rm_names.h"

#define RP_MANAGED_TRIES 4      /* addresses asked of the server for one allocation before giving up        */
#define RP_MANAGED_PAGE 4096u   /* pieces compared with the shadow: a run of differing pieces is one copy    */

enum { RP_MM_GPU = 1, RP_MM_PUSH = 2, RP_MM_SYNC = 4, RP_MM_FREE = 8 };

typedef struct rp_mblock {
    uintptr_t addr;             /* the server's address, and the mirror's                              */
    size_t size;
    uintptr_t map;              /* the mirror's mapping: the pages covering [addr, addr + size)        */
    size_t maplen;
    uint8_t *shadow;            /* the bytes last exchanged with the server                            */
} rp_mblock;

static struct {
    pthread_mutex_t lock;
    rp_mblock *b;
    uint32_t n, cap;
    _Atomic uint32_t count;     /* blocks alive: 0 skips everything                                    */
    int gpu_phase;              /* GPU work sent since the last pull: the host does not write          */
    uint8_t *flags;             /* per API id: RP_MM_*                                                 */
    uint32_t id_limit;
    const rm_plan *htod, *dtoh, *free_v2;
    uint32_t id_alloc, id_rt_alloc, id_attr, id_rt_attr, id_props[2];
    int64_t attrs[4], rt_attrs[4];
    uint32_t prop_off[2][4];    /* cudaDeviceProp's fields per id_props, UINT32_MAX: unknown           */
    _Atomic uint64_t pushes, pushed, pulls, pulled;
} rp_mm = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void rp_mm_put(const rm_plan *pl, void *params, uint32_t i, uint64_t v)
{
    memcpy((uint8_t *)params + pl->p[i].offset, &v, pl->p[i].size < 8 ? pl->p[i].size : 8);
}

static uint64_t rp_mm_get(const rm_plan *pl, const void *params, uint32_t i)
{
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)params + pl->p[i].offset, pl->p[i].size < 8 ? pl->p[i].size : 8);
    return v;
}

/* A call of the client's own (cuMemcpyHtoD_v2, cuMemcpyDtoH_v2, cuMemFree_v2) with 'n' values: the error a batched
   call left is kept aside meanwhile, so that it stays the program's. 0 or the call's error. */
static int32_t rp_mm_call(rp_state *s, const rm_plan *pl, const uint64_t *v, uint32_t n)
{
    uint8_t params[64] = {0}, ret[8] = {0};
    int answered;
    pthread_mutex_lock(&s->lock);
    int32_t kept = s->async_err;
    s->async_err = 0;
    pthread_mutex_unlock(&s->lock);
    for (uint32_t i = 0; i < n && i < pl->nparams; i++)
        rp_mm_put(pl, params, i, v[i]);
    int32_t r = s->route(s, pl, params, ret, &answered);
    pthread_mutex_lock(&s->lock);
    if (kept != 0)
        s->async_err = kept;   /* the first one is kept, as rp_conn.c keeps one at a time */
    pthread_mutex_unlock(&s->lock);
    return r;
}

static int32_t rp_mm_copy(rp_state *s, const rm_plan *pl, uintptr_t dst, uintptr_t src, size_t n)
{
    const uint64_t v[3] = { dst, src, n };
    return rp_mm_call(s, pl, v, 3);
}

/* The host's writes since the last exchange, to the server. Under rp_mm.lock. */
static int32_t rp_mm_push_locked(rp_state *s)
{
    for (uint32_t k = 0; k < rp_mm.n; k++) {
        rp_mblock *b = &rp_mm.b[k];
        const uint8_t *m = (const uint8_t *)b->addr;
        for (size_t off = 0; off < b->size;) {
            size_t n = b->size - off < RP_MANAGED_PAGE ? b->size - off : RP_MANAGED_PAGE;
            if (memcmp(m + off, b->shadow + off, n) == 0) {
                off += n;
                continue;
            }
            size_t end = off + n;   /* the run of differing pieces */
            while (end < b->size) {
                size_t q = b->size - end < RP_MANAGED_PAGE ? b->size - end : RP_MANAGED_PAGE;
                if (memcmp(m + end, b->shadow + end, q) == 0)
                    break;
                end += q;
            }
            int32_t r = rp_mm_copy(s, rp_mm.htod, b->addr + off, b->addr + off, end - off);
            if (r != 0) {
                s->host->log(s->self, CUSHIM_LOG_ERROR, "managed memory %#lx: %zu bytes the host wrote not copied "
                             "to the server (%d): the GPU work that follows does not see them",
                             (unsigned long)(b->addr + off), end - off, r);
                return r;
            }
            memcpy(b->shadow + off, m + off, end - off);
            atomic_fetch_add_explicit(&rp_mm.pushes, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&rp_mm.pushed, end - off, memory_order_relaxed);
            off = end;
        }
    }
    return 0;
}

static int32_t rp_mm_pull_locked(rp_state *s)
{
    for (uint32_t k = 0; k < rp_mm.n; k++) {
        rp_mblock *b = &rp_mm.b[k];
        int32_t r = rp_mm_copy(s, rp_mm.dtoh, b->addr, b->addr, b->size);
        if (r != 0) {
            s->host->log(s->self, CUSHIM_LOG_ERROR, "managed memory %#lx: %zu bytes not copied back from the server "
                         "(%d): the host does not see the GPU's results", (unsigned long)b->addr, b->size, r);
            return r;
        }
        memcpy(b->shadow, (const void *)b->addr, b->size);
        atomic_fetch_add_explicit(&rp_mm.pulls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&rp_mm.pulled, b->size, memory_order_relaxed);
    }
    return 0;
}

static int rp_mm_idle(rp_state *s)
{
    return atomic_load_explicit(&rp_mm.count, memory_order_relaxed) == 0 || rp_capturing(s) ||
           atomic_load_explicit(&s->dead, memory_order_relaxed);
}

int32_t rp_managed_before(rp_state *s, const rm_plan *pl)
{
    if (rp_mm_idle(s) || pl->info->id >= rp_mm.id_limit)
        return 0;
    uint8_t f = rp_mm.flags[pl->info->id];
    int32_t r = 0;
    if ((f & (RP_MM_GPU | RP_MM_PUSH | RP_MM_SYNC)) == 0)
        return 0;
    pthread_mutex_lock(&rp_mm.lock);
    if (!rp_mm.gpu_phase)
        r = rp_mm_push_locked(s);
    if (r == 0 && (f & RP_MM_GPU))
        rp_mm.gpu_phase = 1;
    pthread_mutex_unlock(&rp_mm.lock);
    return r;
}

/* Forgets block k (under rp_mm.lock): the mirror unmapped, the shadow freed. */
static void rp_mm_drop_locked(uint32_t k)
{
    rp_mblock *b = &rp_mm.b[k];
    munmap((void *)b->map, b->maplen);
    free(b->shadow);
    rp_mm.b[k] = rp_mm.b[--rp_mm.n];
    atomic_store_explicit(&rp_mm.count, rp_mm.n, memory_order_relaxed);
}

int32_t rp_managed_after(rp_state *s, const rm_plan *pl, const void *params, int32_t result)
{
    if (rp_mm_idle(s) || pl->info->id >= rp_mm.id_limit || result != 0)
        return result;
    uint8_t f = rp_mm.flags[pl->info->id];
    int32_t r = 0;
    if (f & RP_MM_FREE) {   /* cuMemFree, cudaFree of a managed block: its mirror goes too */
        uintptr_t p = (uintptr_t)rp_mm_get(pl, params, 0);
        pthread_mutex_lock(&rp_mm.lock);
        for (uint32_t k = 0; k < rp_mm.n; k++)
            if (rp_mm.b[k].addr == p) {
                rp_mm_drop_locked(k);
                break;
            }
        pthread_mutex_unlock(&rp_mm.lock);
    }
    if (f & RP_MM_SYNC) {
        pthread_mutex_lock(&rp_mm.lock);
        r = rp_mm_push_locked(s);
        if (r == 0)
            r = rp_mm_pull_locked(s);
        if (r == 0)
            rp_mm.gpu_phase = 0;
        pthread_mutex_unlock(&rp_mm.lock);
    }
    return r;
}

/* The mirror of [addr, addr + size) mapped here: 0, or -1 when the range is not free (*why says what). */
static int rp_mm_map(uintptr_t addr, size_t size, uintptr_t *map, size_t *maplen, const char **why)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = addr & ~(uintptr_t)(page - 1), end = addr + size;
    if (size == 0 || end < addr || end > UINTPTR_MAX - page) {
        *why = "the range wraps";
        return -1;
    }
    end = (end + page - 1) & ~(uintptr_t)(page - 1);
    void *p = mmap((void *)start, end - start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                   MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) {
        *why = errno == EEXIST ? "the range is mapped in this process" : "mmap failed";
        return -1;
    }
    if (p != (void *)start) {   /* a kernel before 4.17 takes the flag as a hint */
        munmap(p, end - start);
        *why = "the range is mapped in this process";
        return -1;
    }
    *map = start;
    *maplen = end - start;
    return 0;
}

/* cuMemAllocManaged / cudaMallocManaged: the server's block, mirrored here. The result in the call's library. */
static int32_t rp_mm_alloc(rp_state *s, cushim_call *call, const rm_plan *pl)
{
    uint64_t out = rp_mm_get(pl, call->params, 0), size = rp_mm_get(pl, call->params, 1);
    uint64_t flags = rp_mm_get(pl, call->params, 2), held[RP_MANAGED_TRIES];
    uint32_t lib = call->info->library, nheld = 0;
    const char *why = "";
    int32_t r = 0;
    uintptr_t got = 0, map = 0;
    size_t maplen = 0;
    if (out == 0)
        return rc_lib_error(lib, s->e_invalid);
    pthread_mutex_lock(&rp_mm.lock);
    uint8_t *shadow = calloc(1, size ? size : 1);   /* a new block's bytes are zero, as the driver's fresh pages */
    rp_mblock *nb = rp_mm.n < rp_mm.cap ? rp_mm.b : realloc(rp_mm.b, (rp_mm.cap * 2 + 16) * sizeof *nb);
    if (shadow == NULL || nb == NULL) {
        free(shadow);
        pthread_mutex_unlock(&rp_mm.lock);
        return rc_lib_error(lib, s->e_oom);
    }
    if (nb != rp_mm.b) {
        rp_mm.b = nb;
        rp_mm.cap = rp_mm.cap * 2 + 16;
    }
    while (nheld < RP_MANAGED_TRIES) {
        uint8_t params[64] = {0}, ret[8] = {0};
        uint64_t addr = 0;
        int answered;
        rp_mm_put(pl, params, 0, (uint64_t)(uintptr_t)&addr);
        rp_mm_put(pl, params, 1, size);
        rp_mm_put(pl, params, 2, flags);
        r = s->route(s, pl, params, ret, &answered);
        if (!answered) {
            r = rc_lib_error(lib, r);
            break;
        }
        if (r != 0)
            break;   /* the server's answer, in its library's words */
        if (rp_mm_map((uintptr_t)addr, size, &map, &maplen, &why) == 0) {
            got = (uintptr_t)addr;
            break;
        }
        s->host->log(s->self, CUSHIM_LOG_DEBUG, "%s: the server's block %#llx (%llu bytes): %s; asking again",
                     call->info->name, (unsigned long long)addr, (unsigned long long)size, why);
        held[nheld++] = addr;   /* kept on the server until the end: it answers another address */
    }
    for (uint32_t k = 0; k < nheld; k++)
        rp_mm_call(s, rp_mm.free_v2, &held[k], 1);
    if (r == 0 && got == 0) {
        s->host->log(s->self, CUSHIM_LOG_WARN, "%s(%llu bytes): the %u addresses the server gave are taken in "
                     "this process (%s): returns out of memory", call->info->name, (unsigned long long)size,
                     (unsigned)nheld, why);
        r = rc_lib_error(lib, s->e_oom);
    }
    if (got != 0) {
        rp_mm.b[rp_mm.n++] = (rp_mblock){ .addr = got, .size = size, .map = map, .maplen = maplen, .shadow = shadow };
        atomic_store_explicit(&rp_mm.count, rp_mm.n, memory_order_relaxed);
        memcpy((void *)(uintptr_t)out, &got, sizeof got);
        shadow = NULL;
    }
    pthread_mutex_unlock(&rp_mm.lock);
    free(shadow);
    return r;
}

int rp_managed_pre(rp_state *s, cushim_call *call, int32_t *r)
{
    if (call->api_id == 0 || (call->api_id != rp_mm.id_alloc && call->api_id != rp_mm.id_rt_alloc))
        return 0;
    const rm_plan *pl = rm_plan_of(s->plans, call->api_id);
    if (pl == NULL || pl->nparams != 3)
        return 0;
    *r = rp_mm_alloc(s, call, pl);
    if (*r != 0 && call->info->library == CUSHIM_LIB_RUNTIME)
        rc_note_error(*r);
    return 1;
}

/* What the program is told of the device: no concurrent managed access, no access to pageable memory (the
   program's pages are on another machine), no direct host access to device-resident managed memory. */
void rp_managed_answer(rp_state *s, cushim_call *call)
{
    uint32_t id = call->api_id;
    int32_t res;
    if (id == 0 || (id != rp_mm.id_attr && id != rp_mm.id_rt_attr && id != rp_mm.id_props[0] &&
                    id != rp_mm.id_props[1]))
        return;
    memcpy(&res, call->retval, sizeof res);   /* these four return a status */
    if (res != 0)
        return;
    if (id == rp_mm.id_attr || id == rp_mm.id_rt_attr) {
        const rm_plan *pl = rm_plan_of(s->plans, id);
        const int64_t *set = id == rp_mm.id_attr ? rp_mm.attrs : rp_mm.rt_attrs;
        int *pi = (int *)(uintptr_t)rp_mm_get(pl, call->params, 0);
        int64_t attr = (int32_t)rp_mm_get(pl, call->params, 1);
        for (int k = 0; k < 4 && pi != NULL; k++)
            if (set[k] >= 0 && attr == set[k])
                *pi = 0;
    } else if (id == rp_mm.id_props[0] || id == rp_mm.id_props[1]) {
        const rm_plan *pl = rm_plan_of(s->plans, id);
        uint8_t *prop = (uint8_t *)(uintptr_t)rp_mm_get(pl, call->params, 0);
        const uint32_t *off = rp_mm.prop_off[id == rp_mm.id_props[0] ? 0 : 1];
        for (int k = 0; k < 4 && prop != NULL; k++)
            if (off[k] != UINT32_MAX)
                memset(prop + off[k], 0, sizeof(int));
    }
}

int rp_managed_holds(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    int in = 0;
    if (atomic_load_explicit(&rp_mm.count, memory_order_relaxed) == 0)
        return 0;
    pthread_mutex_lock(&rp_mm.lock);
    for (uint32_t k = 0; k < rp_mm.n && !in; k++)
        in = a >= rp_mm.b[k].addr && a - rp_mm.b[k].addr < rp_mm.b[k].size;
    pthread_mutex_unlock(&rp_mm.lock);
    return in;
}

static int64_t rp_mm_enum(const cushim_host *h, const char *name)
{
    int64_t v;
    return CUSHIM_HOST_HAS(h, enum_constant) && h->enum_constant(name, &v, NULL) == CUSHIM_OK ? v : -1;
}

int rp_managed_init(rp_state *s)
{
    const cushim_host *h = s->host;
    rp_mm.id_limit = s->plans->id_limit;
    rp_mm.flags = calloc(rp_mm.id_limit ? rp_mm.id_limit : 1, 1);
    if (rp_mm.flags == NULL)
        return -1;
    for (uint32_t id = 0; id < rp_mm.id_limit; id++) {
        const rm_plan *pl = rm_plan_of(s->plans, id);
        if (pl == NULL)
            continue;
        const char *name = pl->info->name;
        uint32_t c = pl->info->categories, f = 0;
        if (pl->info->library == CUSHIM_LIB_CUBLAS || pl->info->library == CUSHIM_LIB_CUBLASLT)
            f |= RP_MM_PUSH;   /* GPU work among handle setters: pushed before, no phase change */
        if ((c & (CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET)) &&
            (!(c & CUSHIM_CAT_GRAPH) || strstr(name, "Launch") != NULL))
            f |= RP_MM_GPU;    /* a graph's node setters build, they do not run */
        if (strstr(name, "Prefetch") != NULL)
            f |= RP_MM_GPU;
        if ((c & CUSHIM_CAT_SYNC) && !(c & CUSHIM_CAT_INTEROP) && strstr(name, "WaitEvent") == NULL)
            f |= RP_MM_SYNC;   /* a query: only when it answers success (rp_managed_after) */
        if ((c & CUSHIM_CAT_COPY) && !(c & CUSHIM_CAT_GRAPH) && strstr(name, "Async") == NULL)
            f |= RP_MM_SYNC;   /* a synchronous copy */
        if (!strcmp(name, "cuMemFree") || !strcmp(name, "cuMemFree_v2") || !strcmp(name, "cudaFree"))
            f |= RP_MM_FREE;
        rp_mm.flags[id] = (uint8_t)f;
    }
    rp_mm.htod = rm_plan_of(s->plans, rm_api_id(h, "cuMemcpyHtoD_v2", 0));
    rp_mm.dtoh = rm_plan_of(s->plans, rm_api_id(h, "cuMemcpyDtoH_v2", 0));
    rp_mm.free_v2 = rm_plan_of(s->plans, rm_api_id(h, "cuMemFree_v2", 0));
    if (rp_mm.htod == NULL || rp_mm.dtoh == NULL || rp_mm.free_v2 == NULL || rp_mm.htod->nparams != 3 ||
        rp_mm.dtoh->nparams != 3)
        return 0;   /* no managed memory: the allocations stay refused (their rows say why) */
    rp_mm.id_alloc = rm_api_id(h, "cuMemAllocManaged", 0);
    rp_mm.id_rt_alloc = rm_api_id(h, "cudaMallocManaged", 0);
    rp_mm.id_attr = rm_api_id(h, "cuDeviceGetAttribute", 0);
    rp_mm.id_rt_attr = rm_api_id(h, "cudaDeviceGetAttribute", 0);
    rp_mm.id_props[0] = rm_api_id(h, "cudaGetDeviceProperties", 0);
    rp_mm.id_props[1] = rm_api_id(h, "cudaGetDeviceProperties_v2", 0);
    static const char *const drv[4] = { "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS",
                                        "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS",
                                        "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
                                        "CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST" };
    static const char *const rt[4] = { "cudaDevAttrConcurrentManagedAccess", "cudaDevAttrPageableMemoryAccess",
                                       "cudaDevAttrPageableMemoryAccessUsesHostPageTables",
                                       "cudaDevAttrDirectManagedMemAccessFromHost" };
    for (int k = 0; k < 4; k++) {
        rp_mm.attrs[k] = rp_mm_enum(h, drv[k]);
        rp_mm.rt_attrs[k] = rp_mm_enum(h, rt[k]);
    }
    /* struct cudaDeviceProp's concurrentManagedAccess, pageableMemoryAccess, pageableMemoryAccessUsesHostPageTables
       and directManagedMemAccessFromHost (ints), by the struct's size in this tree (the metadata describes no field
       of it): CUDA 11 (728 bytes) and 12 (1032) at 676, 672, 704, 708; CUDA 13 (1008) at 656, 652, 680, 684. Another
       size: left as the server's (logged at debug level). */
    for (int j = 0; j < 2; j++) {
        const cushim_api_info *a = rp_mm.id_props[j] != 0 ? h->api_by_id(rp_mm.id_props[j]) : NULL;
        const cushim_param_info *p = a != NULL && a->nparams > 0 ? h->api_param(a, 0) : NULL;
        static const uint32_t old[4] = { 676, 672, 704, 708 }, v13[4] = { 656, 652, 680, 684 };
        const uint32_t *off = p == NULL ? NULL : p->elem_size == 728 || p->elem_size == 1032 ? old :
                              p->elem_size == 1008 ? v13 : NULL;
        for (int k = 0; k < 4; k++)
            rp_mm.prop_off[j][k] = off != NULL ? off[k] : UINT32_MAX;
        if (a != NULL && off == NULL)
            h->log(s->self, CUSHIM_LOG_DEBUG, "%s: struct cudaDeviceProp of %u bytes: its managed-access fields "
                   "are the server's", a->name, p != NULL ? p->elem_size : 0);
    }
    return 0;
}

void rp_managed_fork_child(void)
{
    /* the parent's blocks live in its back end: the child's mirrors stay as plain memory, unknown to its own */
    pthread_mutex_init(&rp_mm.lock, NULL);
    for (uint32_t k = 0; k < rp_mm.n; k++)
        free(rp_mm.b[k].shadow);
    rp_mm.n = 0;
    rp_mm.gpu_phase = 0;
    atomic_store(&rp_mm.count, 0);
    atomic_store(&rp_mm.pushes, 0);
    atomic_store(&rp_mm.pushed, 0);
    atomic_store(&rp_mm.pulls, 0);
    atomic_store(&rp_mm.pulled, 0);
}

void rp_managed_stats(FILE *f)
{
    if (atomic_load(&rp_mm.pushes) + atomic_load(&rp_mm.pulls) == 0)
        return;
    fprintf(f, "remote: pid %d: managed memory: %llu pushes (%llu bytes), %llu pulls (%llu bytes)\n", (int)getpid(),
            (unsigned long long)atomic_load(&rp_mm.pushes), (unsigned long long)atomic_load(&rp_mm.pushed),
            (unsigned long long)atomic_load(&rp_mm.pulls), (unsigned long long)atomic_load(&rp_mm.pulled));
}
