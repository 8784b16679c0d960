/*
 * getproc.c - interposition of cuGetProcAddress(_v2) and
 * cudaGetDriverEntryPoint(ByVersion)(_ptsz).
 *
 * Their generated wrappers stay (hooks observe them), but the slot's "real"
 * is one of the handlers below: call the real function (the next layer's, when
 * another interposer is loaded after us, else the library's), then replace the
 * returned pointer by our wrapper of the same export:
 *   1. the variant the table predicts (procaddr.c), if that slot's real (resolved
 *      first) is the returned pointer;
 *   2. else an address -> id map of every driver export we wrap (built once):
 *      the driver's function and, where another interposer is loaded after us,
 *      the next layer's (our real); either maps to our wrapper, which calls
 *      the real, so a driver pointer handed out by a layer below us that does
 *      not interpose cuGetProcAddress still goes through that layer;
 *   3. else, for a predicted variant whose real is still unknown (no definition
 *      anywhere), a function of an interposer loaded after us becomes that real;
 *   4. else (an export newer than our headers, or another interposer's private
 *      function) the pointer passes through, counted and logged once per name.
 * Results and status codes are the library's own. Asked for
 * "cuGetProcAddress", the driver returns its own, which maps to our wrapper.
 * cuGetExportTable is not touched: hidden export tables cannot be interposed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cushim_params.h"
#include "procaddr.h"
#include "api.h"
#include "config.h"
#include "dispatch.h"
#include "driver.h"
#include "elfsym.h"
#include "getproc.h"
#include "log.h"
#include "module.h"
#include "objects.h"
#include "realdl.h"
#include "slots.h"
#include "wrapper_table.h"

typedef struct gp_ent {
    uintptr_t addr;
    uint32_t id;
} gp_ent;

typedef struct gp_addr_map {
    uint32_t n;
    gp_ent e[];
} gp_addr_map;

static pthread_mutex_t gp_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(gp_addr_map *) gp_map_p;
static _Atomic uint64_t gp_passthrough;
#define GP_LOGGED_MAX 512
static uint64_t gp_logged[GP_LOGGED_MAX];   /* name hashes, under gp_mu */
static uint32_t gp_nlogged;

/* fork() child: the lock guards only the log-once list; made new. */
static void gp_fork_child(uint32_t parent_tid)
{
    (void)parent_tid;
    pthread_mutex_init(&gp_mu, NULL);
}

uint64_t gp_passthrough_count(void)
{
    return atomic_load_explicit(&gp_passthrough, memory_order_relaxed);
}

static int gp_cmp(const void *a, const void *b)
{
    uintptr_t x = ((const gp_ent *)a)->addr, y = ((const gp_ent *)b)->addr;
    return (x > y) - (x < y);
}

/* Built without a lock (it calls dlsym, which takes the loader lock: no lock
   of ours may be held then); a racing builder's map is discarded. */
static const gp_addr_map *gp_build_map(void)
{
    gp_addr_map *m = atomic_load_explicit(&gp_map_p, memory_order_acquire);
    if (m != NULL)
        return m;
    void *h = drv_handle();
    if (h == NULL)
        return NULL;
    m = malloc(sizeof *m + 2 * cushim_gen_api_count * sizeof m->e[0]);
    if (m == NULL)
        return NULL;
    m->n = 0;
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        const cushim_api_info *a = &cushim_gen_apis[i];
        if (a->library != CUSHIM_LIB_DRIVER)
            continue;
        void *r = rt_lib_real(a->id);
        void *d = rd_dlsym(h, a->name);   /* the driver's own, when r is the next layer's */
        if (r != NULL)
            m->e[m->n++] = (gp_ent){ (uintptr_t)r, a->id };
        if (d != NULL && d != r)
            m->e[m->n++] = (gp_ent){ (uintptr_t)d, a->id };
    }
    qsort(m->e, m->n, sizeof m->e[0], gp_cmp);
    gp_addr_map *expected = NULL;
    if (!atomic_compare_exchange_strong(&gp_map_p, &expected, m)) {
        free(m);
        return expected;
    }
    log_debug("address map of %u driver exports built", m->n);
    return m;
}

static uint32_t gp_id_of_addr(const void *ptr)
{
    const gp_addr_map *m = gp_build_map();
    if (m == NULL)
        return 0;
    uint32_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].addr == (uintptr_t)ptr)
            return m->e[mid].id;
        if (m->e[mid].addr < (uintptr_t)ptr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void gp_log_passthrough(const char *symbol)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = symbol; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    int fresh = 1;
    /* trylock: a signal handler whose thread is inside this very block must not
       wait for itself; then the line may be logged twice, never hang. */
    if (pthread_mutex_trylock(&gp_mu) == 0) {
        for (uint32_t i = 0; i < gp_nlogged; i++)
            if (gp_logged[i] == h)
                fresh = 0;
        if (fresh && gp_nlogged < GP_LOGGED_MAX)
            gp_logged[gp_nlogged++] = h;
        pthread_mutex_unlock(&gp_mu);
    }
    if (fresh)
        log_info("cuGetProcAddress(\"%s\"): the driver's function is not one we wrap (newer than "
                 "our headers?); passed through uninterposed", symbol);
}

/* 'ptr' lies in an object loaded after the shim (an interposer below us). */
static int gp_after_us(const void *ptr)
{
    uintptr_t base;
    return elf_object_of(ptr, &base, NULL, 0) && base != ob_self_base() && elf_loaded_after(base, ob_self_base());
}

/* The pointer 'ptr' returned for 'symbol' -> the pointer the caller gets. */
static void *gp_map(const char *symbol, void *ptr, int cuda_version, uint64_t flags)
{
    /* A drop-in standing aside for a copy loaded first (config.c: peer) still hands
       out its own exports, like the driver it stands in for: that copy, whose driver
       it is, maps them to its wrappers. */
    int stand_in = cfg_get()->disable == CFG_DISABLE_PEER && ob_is_dropin();
    if (ptr == NULL || symbol == NULL || (cfg_get()->disable && !stand_in))
        return ptr;
    uint32_t id = 0, predicted = 0;
    void *slot_real = NULL;
    if (cushim_pa_lookup(symbol, cuda_version, flags, &id, NULL) == CUSHIM_PA_RESULT_SUCCESS &&
        id != 0 && api_info(id) != NULL) {
        predicted = id;
        slot_real = rt_lib_real(id);
        if (slot_real == ptr)
            return rt_wrapper_of[id];
    }
    id = gp_id_of_addr(ptr);
    if (id != 0)
        return rt_wrapper_of[id];
    if (stand_in)
        return ptr;
    int cls = ob_classify(ptr);
    if (cls == OB_SELF)   /* already ours (e.g. cudart asked our wrapper) */
        return ptr;
    if (predicted != 0 && slot_real == NULL && cls == OB_OTHER && gp_after_us(ptr)) {
        ob_pin(ptr);
        rt_record_real(predicted, ptr);
        if (rt_lib_real(predicted) == ptr)
            return rt_wrapper_of[predicted];
    }
    atomic_fetch_add_explicit(&gp_passthrough, 1, memory_order_relaxed);
    gp_log_passthrough(symbol);
    return ptr;
}

/* The shapes by release (the tree's headers): cuGetProcAddress_v2 and the entry points' status came with 12.0,
   cudaGetDriverEntryPointByVersion with 12.5; an 11.8 tree has cuGetProcAddress and the three-argument
   cudaGetDriverEntryPoint(_ptsz) only. */
#define GP_HAVE_STATUS (CUSHIM_GEN_CUDA_VERSION >= 12000)
#define GP_HAVE_BY_VERSION (CUSHIM_GEN_CUDA_VERSION >= 12050)

/* The entry points' last parameter, and its argument: the status, where the release has it. */
#if GP_HAVE_STATUS
#define GP_EP_STATUS , enum cudaDriverEntryPointQueryResult *status
#define GP_EP_STATUS_ARG , status
#else
#define GP_EP_STATUS
#define GP_EP_STATUS_ARG
#endif

typedef CUresult (*gp_pa_v1)(const char *, void **, int, cuuint64_t);
#if GP_HAVE_STATUS
typedef CUresult (*gp_pa_v2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
#endif
typedef cudaError_t (*gp_ep)(const char *, void **, unsigned long long GP_EP_STATUS);

/* No driver function behind the shim (no libcuda on this machine: the remoting's client, whose calls a plugin
   serves): the shim is the process's libcuda and answers as the driver does (the fake driver's fk_get_proc), with
   its own export of the variant the driver would give (cushim_pa_lookup, which follows the recorded driver):
   CUDA_ERROR_INVALID_VALUE for a version past the tree's; a name with no export: NULL, status SYMBOL_NOT_FOUND or
   VERSION_NOT_SUFFICIENT, CUDA_SUCCESS from _v2 and CUDA_ERROR_NOT_FOUND from the first version. Calling such an
   export with no driver and no serving plugin fails as any call then does. Reached through host->real (host.c),
   and by the program's own call when it has no driver by declaration (CUSHIM_REAL_LIBCUDA=none: dispatch.c
   rt_own_answer; a static cudart asks so); with a driver only not found, that call fails as any call does. */
static CUresult gp_own(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, int *status, int v2)
{
    uint32_t id = 0;
    int st = CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND;
    if (symbol == NULL || pfn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (cushim_pa_lookup(symbol, cudaVersion, flags, &id, &st) != CUSHIM_PA_RESULT_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    if (st == CUSHIM_PA_STATUS_SUCCESS) {
        if (id != 0 && id < CUSHIM_API_ID_LIMIT && api_info(id) != NULL)
            *pfn = rt_wrapper_of[id];
        if (*pfn == NULL)
            st = CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND;
    }
    if (status != NULL)
        *status = st;
    return *pfn != NULL || v2 ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static CUresult gp_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    gp_pa_v1 real = (gp_pa_v1)rt_lib_real(CUSHIM_API_cuGetProcAddress);
    if (real == NULL)
        return gp_own(symbol, pfn, cudaVersion, flags, NULL, 0);
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && pfn != NULL)
        *pfn = gp_map(symbol, *pfn, cudaVersion, flags);
    return r;
}

#if GP_HAVE_STATUS
static CUresult gp_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    gp_pa_v2 real = (gp_pa_v2)rt_lib_real(CUSHIM_API_cuGetProcAddress_v2);
    if (real == NULL) {
        int st = CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND;
        CUresult r = gp_own(symbol, pfn, cudaVersion, flags, &st, 1);
        if (status != NULL && r == CUDA_SUCCESS)
            *status = (CUdriverProcAddressQueryResult)st;
        return r;
    }
    CUresult r = real(symbol, pfn, cudaVersion, flags, status);
    if (r == CUDA_SUCCESS && pfn != NULL)
        *pfn = gp_map(symbol, *pfn, cudaVersion, flags);
    return r;
}
#endif

#define GP_ENTRY_POINT(NAME)                                                                      \
    static cudaError_t gp_##NAME(const char *symbol, void **funcPtr,                              \
                                 unsigned long long flags GP_EP_STATUS)                           \
    {                                                                                             \
        gp_ep real = (gp_ep)rt_lib_real(CUSHIM_API_##NAME);                                       \
        if (real == NULL)                                                                         \
            return cudaErrorSymbolNotFound;                                                       \
        cudaError_t r = real(symbol, funcPtr, flags GP_EP_STATUS_ARG);                            \
        if (r == cudaSuccess && funcPtr != NULL)                                                  \
            *funcPtr = gp_map(symbol, *funcPtr, CUDART_VERSION, flags);                           \
        return r;                                                                                 \
    }

#if GP_HAVE_BY_VERSION
typedef cudaError_t (*gp_ep_ver)(const char *, void **, unsigned int, unsigned long long,
                                 enum cudaDriverEntryPointQueryResult *);
#define GP_ENTRY_POINT_VER(NAME)                                                                  \
    static cudaError_t gp_##NAME(const char *symbol, void **funcPtr, unsigned int cudaVersion,    \
                                 unsigned long long flags,                                        \
                                 enum cudaDriverEntryPointQueryResult *status)                    \
    {                                                                                             \
        gp_ep_ver real = (gp_ep_ver)rt_lib_real(CUSHIM_API_##NAME);                               \
        if (real == NULL)                                                                         \
            return cudaErrorSymbolNotFound;                                                       \
        cudaError_t r = real(symbol, funcPtr, cudaVersion, flags, status);                        \
        if (r == cudaSuccess && funcPtr != NULL)                                                  \
            *funcPtr = gp_map(symbol, *funcPtr, (int)cudaVersion, flags);                         \
        return r;                                                                                 \
    }
#endif

GP_ENTRY_POINT(cudaGetDriverEntryPoint)
GP_ENTRY_POINT(cudaGetDriverEntryPoint_ptsz)
#if GP_HAVE_BY_VERSION
GP_ENTRY_POINT_VER(cudaGetDriverEntryPointByVersion)
GP_ENTRY_POINT_VER(cudaGetDriverEntryPointByVersion_ptsz)
#endif

/* The slots of the family get these handlers as their real functions (slots.c). */
static void gp_init(void)
{
    static const uint32_t ids[] = {
        CUSHIM_API_cuGetProcAddress, CUSHIM_API_cudaGetDriverEntryPoint, CUSHIM_API_cudaGetDriverEntryPoint_ptsz,
#if GP_HAVE_STATUS
        CUSHIM_API_cuGetProcAddress_v2,
#endif
#if GP_HAVE_BY_VERSION
        CUSHIM_API_cudaGetDriverEntryPointByVersion, CUSHIM_API_cudaGetDriverEntryPointByVersion_ptsz,
#endif
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        sl_set_handler(ids[i], gp_handler_for(ids[i]));
}

void *gp_handler_for(uint32_t id)
{
    switch (id) {
    case CUSHIM_API_cuGetProcAddress: return (void *)gp_cuGetProcAddress;
    case CUSHIM_API_cudaGetDriverEntryPoint: return (void *)gp_cudaGetDriverEntryPoint;
    case CUSHIM_API_cudaGetDriverEntryPoint_ptsz: return (void *)gp_cudaGetDriverEntryPoint_ptsz;
#if GP_HAVE_STATUS
    case CUSHIM_API_cuGetProcAddress_v2: return (void *)gp_cuGetProcAddress_v2;
#endif
#if GP_HAVE_BY_VERSION
    case CUSHIM_API_cudaGetDriverEntryPointByVersion: return (void *)gp_cudaGetDriverEntryPointByVersion;
    case CUSHIM_API_cudaGetDriverEntryPointByVersion_ptsz:
        return (void *)gp_cudaGetDriverEntryPointByVersion_ptsz;
#endif
    default: return NULL;
    }
}

LC_MODULE(getproc, .level = LC_TABLES, .init = gp_init, .fork_child = gp_fork_child);
