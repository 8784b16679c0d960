/*
 * memlimit.c - the memlimit plugin: GPU memory quotas on every allocation
 * path, memory queries that report the quota, budgets shared by processes
 * (docs/plugins/memlimit.md).
 *
 *   cushim run --mem-limit=8GiB -- ./app
 *   CUSHIM_PLUGINS='memlimit:limit=0:8GiB\,1:4GiB,budget=tenant-a' ./app
 *   CUDA_DEVICE_MEMORY_LIMIT=4G ./app     (HAMi-core's variables: the shim
 *                                          loads memlimit by itself)
 *
 * Which APIs allocate and release, and how to read their device, size and
 * result, comes from the generated allocation roles (host->alloc_role), not
 * from a list here. One pre/post hook pair serves them all: the pre hook
 * charges the budget before the real call (past the quota the call is skipped
 * with the library's out-of-memory error), the post hook records the pointer
 * or handle, or gives the charge back when the call failed. A release takes
 * its record out before the call (so a concurrent allocation reusing the
 * address cannot be confused with it) and credits it when the call succeeded.
 * A call made inside another allocating call (cudaMalloc's cuMemAlloc) is not
 * counted again. Built on the public SDK headers and the generated headers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cushim/cushim.h>

#include "idsel.h"
#include "ml_budget.h"
#include "ml_caller.h"
#include "ml_limits.h"
#include "ml_oversub.h"
#include "ml_size.h"
#include "ml_table.h"

#include "cushim_params.h"

/* Pre/post slot: what the pre hook did, for the post hook.
   bit 63 set; bits 56-59 what; 52-55 category; 48-51 device; 0-47 bytes. */
#define ML_S_ON (1ull << 63)
#define ML_S_BYTES_MASK ((1ull << 48) - 1)
enum { ML_DO_CHARGED = 1, ML_DO_TAKEN = 2, ML_DO_REFDROP = 3, ML_DO_RECORD = 4 };

#define ML_NS_ADDR 0
#define ML_NS_HANDLE 1
#define ML_NS_POOL 2

typedef CUresult (*ml_cuCtxGetDevice_fn)(CUdevice *);
typedef CUresult (*ml_cuDeviceGetCount_fn)(int *);
typedef cudaError_t (*ml_cudaGetDevice_fn)(int *);
typedef int (*ml_nvmlDeviceGetIndex_fn)(void *, unsigned int *);

typedef struct ml_state {
    cushim_plugin *self;
    ml_limits lim;
    ml_budget budget;
    ml_table table;
    int charge_managed;
    int by_library;               /* memory by library: shared budgets only, by_library=true (off by default) */
    int32_t oom_driver, oom_runtime;
    uint8_t *handle_ref;          /* per API id: the released/produced value is a VMM handle */
    uint32_t id_limit;
    uint32_t id_ctx_dev, id_rt_dev, id_nvml_index, id_dev_count;   /* real functions, resolved at first use */
    int vis_map[ML_MAX_DEVICES];  /* CUDA_VISIBLE_DEVICES: host index of ordinal i */
    int vis_n;                    /* 0 identity, -1 not numeric                   */
    uint32_t id_getinfo, id_getinfo_v2, id_totalmem, id_totalmem_v2, id_rt_getinfo, id_rt_props,
        id_rt_props_v2, id_nvml_mem, id_nvml_mem_v2;
    _Atomic uint64_t untracked_releases;
} ml_state;

static const cushim_host *ml_host;
static ml_state ml_st;

/* The budget is opened at the first allocation or query, not at init: a process
   under the shim that never allocates (a shell, env, anything in a pod whose
   /etc/ld.so.preload names the shim) never opens the region nor takes a slot. */
static pthread_mutex_t ml_open_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ml_opened;          /* 0 not yet, 1 open, -1 could not even map a private one */
static char ml_region_path[256];       /* "" for a budget of this process */

static long ml_region_gid = -1;        /* budget_group=: the group the region is shared with */

/* ---- memory by library (ml_caller.h): what is charged to 'used' is also charged to the entry of the library
   that allocated it, in our slot; a record keeps the entry, so a free credits the same library ---- */
static pthread_mutex_t ml_lib_mu = PTHREAD_MUTEX_INITIALIZER;   /* serialises naming entries */

/* Charge 'bytes' on 'dev' to the calling library: its entry + 1 for the record, 0 when not attributed. */
static uint8_t ml_lib_charge(int dev, uint64_t bytes)
{
    const char *name;
    int idx;
    if (!ml_st.by_library || !ml_st.budget.shared)
        return 0;
    name = ml_caller_name(ml_caller());
    pthread_mutex_lock(&ml_lib_mu);
    idx = ml_budget_lib(&ml_st.budget, name, dev);
    pthread_mutex_unlock(&ml_lib_mu);
    if (idx < 0)
        return 0;
    ml_budget_lib_add(&ml_st.budget, idx, bytes);
    return (uint8_t)(idx + 1);
}

static void ml_lib_credit(const ml_rec *r)
{
    if (r->lib != 0)
        ml_budget_lib_sub(&ml_st.budget, r->lib - 1, r->bytes);
}

/* Does category 'cat' count in the budget's 'used' (what memory by library splits)? */
static int ml_in_used(int cat)
{
    return cat == ML_CAT_DEVICE || (cat == ML_CAT_MANAGED && ml_st.charge_managed);
}

/* Our live allocations, charged again to a budget that lost its file (ml_budget_lost). */
static void ml_recharge(const ml_rec *r, void *ctx)
{
    ml_slot *s = ctx;
    if (r->cat == ML_CAT_NONE || r->bytes == 0)
        return;
    if (r->cat == ML_CAT_HOST) {
        atomic_fetch_add(&s->host, r->bytes);
        return;
    }
    if (r->dev < 0 || r->dev >= ML_MAX_DEVICES)
        return;
    if (r->cat == ML_CAT_SPILL)
        atomic_fetch_add(&s->spilled[r->dev], r->bytes);
    if (r->cat == ML_CAT_MANAGED)
        atomic_fetch_add(&s->managed[r->dev], r->bytes);
    if (r->cat == ML_CAT_DEVICE || (r->cat == ML_CAT_MANAGED && ml_st.charge_managed))
        atomic_fetch_add(&s->used[r->dev], r->bytes);
}

/* The shared file was shrunk under us (its owner or root truncated it): the process lives on with a budget of
   its own, its live allocations charged to it again; one line says so. */
static void ml_lost_region(void)
{
    pthread_mutex_lock(&ml_open_mu);
    if (ml_budget_lost(&ml_st.budget)) {
        if (ml_st.budget.slot >= 0)
            ml_table_each(&ml_st.table, ml_recharge, &ml_st.budget.r->slots[ml_st.budget.slot]);
        for (int d = 0; d < ML_MAX_DEVICES; d++)
            atomic_store(&ml_st.budget.r->limit[d], ml_limit_of(&ml_st.lim, d));
        ml_host->log(ml_st.self, CUSHIM_LOG_WARN, "budget region '%s' was truncated under this process: it keeps a "
                     "budget of its own from now on", ml_region_path);
    }
    pthread_mutex_unlock(&ml_open_mu);
}

static ml_budget *ml_bud(void)
{
    int st = atomic_load_explicit(&ml_opened, memory_order_acquire);
    if (st == 1 && __builtin_expect(ml_budget_lost_flag(&ml_st.budget), 0))
        ml_lost_region();
    if (st == 0) {
        char err[512];
        pthread_mutex_lock(&ml_open_mu);
        st = atomic_load_explicit(&ml_opened, memory_order_relaxed);
        if (st == 0) {
            if (ml_budget_open_group(&ml_st.budget, ml_region_path[0] ? ml_region_path : NULL, ml_region_gid, err,
                                     sizeof err) != 0)
                ml_host->log(ml_st.self, ml_st.budget.r ? CUSHIM_LOG_WARN : CUSHIM_LOG_ERROR, "%s%s", err,
                             ml_st.budget.r ? ": this process keeps a budget of its own" : "");
            if (ml_st.budget.r != NULL)
                for (int d = 0; d < ML_MAX_DEVICES; d++)
                    atomic_store(&ml_st.budget.r->limit[d], ml_limit_of(&ml_st.lim, d));
            st = ml_st.budget.r != NULL ? 1 : -1;
            atomic_store_explicit(&ml_opened, st, memory_order_release);
        }
        pthread_mutex_unlock(&ml_open_mu);
    }
    return st == 1 ? &ml_st.budget : NULL;
}

/* ---- live limits ('cushim limit NAME --mem=...', ml_budget.h) ----
   The limit of a device is the budget's live limit when one is set, else this process's own. The allocation
   and query paths compare the region's generation with the last one applied (one relaxed load each, plus the
   local value): only when it moved is the region's live[] read, under a lock, and copied here. */
static pthread_mutex_t ml_live_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t ml_live_seen;                  /* the generation applied                    */
static _Atomic uint64_t ml_live_lim[ML_MAX_DEVICES];   /* 0: none; ML_LIVE_UNLIMITED; else bytes    */

static void ml_live_apply(ml_budget *b)
{
    pthread_mutex_lock(&ml_live_mu);
    uint32_t g = atomic_load_explicit(&b->r->live_gen, memory_order_acquire);
    if (g != atomic_load_explicit(&ml_live_seen, memory_order_relaxed)) {
        char line[ML_MAX_DEVICES * 32] = "";
        size_t len = 0;
        for (int d = 0; d < ML_MAX_DEVICES; d++) {
            uint64_t v = atomic_load_explicit(&b->r->live[d], memory_order_relaxed);
            if (v != atomic_load_explicit(&ml_live_lim[d], memory_order_relaxed) && len < sizeof line)
                len += (size_t)snprintf(line + len, sizeof line - len, " %d:%s", d,
                                        v == 0 ? "own" : v == ML_LIVE_UNLIMITED ? "none" : "");
            if (v != 0 && v != ML_LIVE_UNLIMITED && len < sizeof line &&
                v != atomic_load_explicit(&ml_live_lim[d], memory_order_relaxed))
                len += (size_t)snprintf(line + len, sizeof line - len, "%llu", (unsigned long long)v);
            atomic_store_explicit(&ml_live_lim[d], v, memory_order_relaxed);
        }
        atomic_store_explicit(&ml_live_seen, g, memory_order_release);
        ml_host->log(ml_st.self, CUSHIM_LOG_INFO, "live limits of budget '%s' (generation %u), device:bytes:%s",
                     ml_region_path, g, len ? line : " unchanged");
    }
    pthread_mutex_unlock(&ml_live_mu);
}

/* The limit in force on 'dev' (0: none), of the open budget 'b'. */
static inline uint64_t ml_limit_in(ml_budget *b, int dev)
{
    if (__builtin_expect(ml_budget_live_gen(b) != atomic_load_explicit(&ml_live_seen, memory_order_relaxed), 0))
        ml_live_apply(b);
    if (dev >= 0 && dev < ML_MAX_DEVICES) {
        uint64_t v = atomic_load_explicit(&ml_live_lim[dev], memory_order_relaxed);
        if (__builtin_expect(v != 0, 0))
            return v == ML_LIVE_UNLIMITED ? 0 : v;
    }
    return ml_limit_of(&ml_st.lim, dev);
}

/* The same, opening the budget first (the queries). */
static uint64_t ml_limit_now(int dev)
{
    ml_budget *b = ml_bud();
    return b != NULL ? ml_limit_in(b, dev) : ml_limit_of(&ml_st.lim, dev);
}

static int ml_opt_given_nonempty(const char *s)
{
    return s != NULL && *s != '\0';
}

static uint64_t ml_pack(int what, int cat, int dev, uint64_t bytes)
{
    if (bytes > ML_S_BYTES_MASK)
        bytes = ML_S_BYTES_MASK;
    return ML_S_ON | ((uint64_t)what << 56) | ((uint64_t)(cat & 0xf) << 52) | ((uint64_t)(dev & 0xf) << 48) | bytes;
}

static uint64_t ml_used(int dev)
{
    ml_budget *b = ml_bud();
    return b != NULL ? ml_budget_used(b, dev) : 0;
}

/* A real function, resolved at its first use (never in init: a process that never calls CUDA, which
   loads the plugin under /etc/ld.so.preload, must not load the driver because of us). */
static void *ml_real(uint32_t id, _Atomic(void *) *cache)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (f == NULL && id != UINT32_MAX && (f = ml_host->real(id)) != NULL)
        atomic_store_explicit(cache, f, memory_order_release);
    return f;
}

static _Atomic(void *) ml_ctx_dev_fn, ml_rt_dev_fn, ml_nvml_index_fn, ml_dev_count_fn;

/* The current device of the calling thread, as the library of 'call' sees it; -1 if none. */
static int ml_current_device(const cushim_call *call)
{
    if (call->info != NULL && call->info->library == CUSHIM_LIB_RUNTIME) {
        ml_cudaGetDevice_fn f = (ml_cudaGetDevice_fn)ml_real(ml_st.id_rt_dev, &ml_rt_dev_fn);
        int d = -1;
        if (f != NULL)
            return f(&d) == cudaSuccess ? d : -1;
    }
    {
        ml_cuCtxGetDevice_fn f = (ml_cuCtxGetDevice_fn)ml_real(ml_st.id_ctx_dev, &ml_ctx_dev_fn);
        CUdevice d = -1;
        return f != NULL && f(&d) == CUDA_SUCCESS ? (int)d : -1;
    }
}

/* With one device visible (a container given one GPU, a MIG instance) every context is on device 0: an
   allocation's device then needs no driver call (the cuCtxGetDevice that was the quota's only driver call per
   allocation, docs/benchmarks.md). 1: one device; -1: several, or no count (ask each time); 0: not known yet (the
   driver not initialised: asked again at the next allocation). The count is fixed at cuInit
   (CUDA_VISIBLE_DEVICES). */
static atomic_int ml_one_dev;

static int ml_single_device(void)
{
    int v = atomic_load_explicit(&ml_one_dev, memory_order_relaxed), n = 0;
    if (__builtin_expect(v != 0, 1))
        return v > 0;
    ml_cuDeviceGetCount_fn f = (ml_cuDeviceGetCount_fn)ml_real(ml_st.id_dev_count, &ml_dev_count_fn);
    if (f == NULL)
        v = -1;
    else if (f(&n) == CUDA_SUCCESS)
        v = n == 1 ? 1 : -1;
    else
        return 0;
    atomic_store_explicit(&ml_one_dev, v, memory_order_relaxed);
    return v > 0;
}

/* The device an allocation made now goes to: 0 without asking when only one is visible (*guessed = 1: whether
   there is a current context at all is then not known; a refusal asks, so a call without one still gets the
   driver's own error), else the current device as ml_current_device asks it; -1 if none. */
static int ml_alloc_device(const cushim_call *call, int *guessed)
{
    *guessed = ml_single_device();
    return *guessed ? 0 : ml_current_device(call);
}

/* The physical device (host/NVML index) of CUDA ordinal 'ord': the budget, its slots and every per-device limit
   (limit=, HAMi's CUDA_DEVICE_MEMORY_LIMIT_<i>, cushim limit) are by physical device, so processes that see the
   GPUs in other orders (CUDA_VISIBLE_DEVICES=1,0 beside 0,1) charge and read the same GPU's figures. A list of
   UUIDs or MIG names cannot be mapped by index: the ordinal then (docs/limitations.md). -1: none or beyond what
   we track. */
static int ml_phys(int ord)
{
    int p = ord;
    if (ord < 0)
        return -1;
    if (ml_st.vis_n > 0)
        p = ord < ml_st.vis_n ? ml_st.vis_map[ord] : -1;
    return p < ML_MAX_DEVICES ? p : -1;
}

/* NVML index -> CUDA ordinal by CUDA_VISIBLE_DEVICES; -1 if not visible/unknown. */
static int ml_nvml_ordinal(unsigned idx)
{
    if (ml_st.vis_n == 0)
        return (int)idx;
    for (int i = 0; i < ml_st.vis_n; i++)
        if (ml_st.vis_map[i] == (int)idx)
            return i;
    return -1;
}

/* The CUDA ordinal of physical device 'phys' (ml_phys's inverse), for a driver call made on it (the oversubscribed
   allocation's cuMemAdvise, cuDeviceTotalMem); -1 if this process does not see it. */
static int ml_ord(int phys)
{
    return ml_st.vis_n < 0 ? phys : ml_nvml_ordinal((unsigned)phys);
}

/* Inside another call that has an allocation role (cudaMalloc -> cuMemAlloc)? */
static int ml_nested(const cushim_call *call)
{
    const cushim_call *p = CUSHIM_HAS(call, cushim_call, parent) ? call->parent : NULL;
    for (; p != NULL; p = CUSHIM_HAS(p, cushim_call, parent) ? p->parent : NULL) {
        const cushim_alloc_role *r = ml_host->alloc_role(p->api_id);
        if (r != NULL && r->action != CUSHIM_ROLE_NONE)
            return 1;
    }
    return 0;
}

static ml_slot *ml_myslot(void)
{
    ml_budget *b = ml_bud();
    return b != NULL && b->slot >= 0 ? &b->r->slots[b->slot] : NULL;
}

static void ml_sub_clamped(_Atomic uint64_t *v, uint64_t n)
{
    uint64_t cur = atomic_load_explicit(v, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(v, &cur, cur > n ? cur - n : 0, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* Charge or count 'bytes' of category 'cat' on 'dev'. -1: over the quota. */
static int ml_take(int cat, int dev, uint64_t bytes)
{
    ml_slot *s = ml_myslot();
    if (s == NULL)
        return 0;
    switch (cat) {
    case ML_CAT_HOST:
        atomic_fetch_add_explicit(&s->host, bytes, memory_order_relaxed);
        return 0;
    case ML_CAT_MANAGED:
        if (dev >= 0 && dev < ML_MAX_DEVICES)
            atomic_fetch_add_explicit(&s->managed[dev], bytes, memory_order_relaxed);
        if (!ml_st.charge_managed)
            return 0;
        if (ml_budget_charge(&ml_st.budget, dev, bytes, ml_limit_in(&ml_st.budget, dev)) != 0) {
            if (dev >= 0 && dev < ML_MAX_DEVICES)
                ml_sub_clamped(&s->managed[dev], bytes);
            return -1;
        }
        return 0;
    default:
        return ml_budget_charge(&ml_st.budget, dev, bytes, ml_limit_in(&ml_st.budget, dev));
    }
}

static void ml_give(int cat, int dev, uint64_t bytes)
{
    ml_slot *s = ml_myslot();
    if (s == NULL || cat == (ML_CAT_NONE & 0xf))
        return;
    if (cat == ML_CAT_DEVICE) {   /* the common case first: the categories below cost it nothing */
        ml_budget_credit(&ml_st.budget, dev, bytes);
        return;
    }
    switch (cat) {
    case ML_CAT_HOST:
        ml_sub_clamped(&s->host, bytes);
        return;
    case ML_CAT_MANAGED:
        if (dev >= 0 && dev < ML_MAX_DEVICES)
            ml_sub_clamped(&s->managed[dev], bytes);
        if (ml_st.charge_managed)
            ml_budget_credit(&ml_st.budget, dev, bytes);
        return;
    case ML_CAT_SPILL:
        ml_budget_spill_credit(&ml_st.budget, dev, bytes);
        return;
    default:
        return;
    }
}

/* ---- an allocation that does not fit (ml_oversub.h): on_full=wait, oversubscribe ---- */
static struct {
    uint32_t milli;       /* oversubscribe: the ratio in thousandths, 0 off */
    uint32_t wait_ms;     /* on_full=wait:SEC, 0 fail at once */
    uint8_t *spillable;   /* per API id: ML_SPILL_MANAGED (ml_oversub_eligible), ML_SPILL_VMM, 0 */
} ml_ov;
enum { ML_SPILL_MANAGED = 1, ML_SPILL_VMM = 2 };

typedef struct ml_fit {
    int cat, dev;
    uint64_t bytes;
} ml_fit;

/* Poll the budget's use (loads only); charge once it looks as if it fits. */
static int ml_fit_try(void *ctx)
{
    ml_fit *f = ctx;
    uint64_t lim = ml_limit_in(&ml_st.budget, f->dev), u = ml_budget_used(&ml_st.budget, f->dev);
    if (lim != 0 && (u > lim || f->bytes > lim - u))
        return 0;
    return ml_take(f->cat, f->dev, f->bytes) == 0;
}

static int ml_spillable(uint32_t id)
{
    return ml_ov.milli != 0 && ml_ov.spillable != NULL && id < ml_st.id_limit && ml_ov.spillable[id];
}

/* Answer 'call' (an eligible allocation of 'bytes' on physical device 'dev') with host-backed memory - managed
   memory in host memory, or for cuMemCreate physical memory at a host location (the handle the program's) -
   charged to the host-backed pool: 0, or -1 past the bound or when the driver refuses (nothing charged). */
static int ml_spill(cushim_call *call, const cushim_alloc_role *r, int dev, uint64_t bytes)
{
    uint64_t quota = ml_limit_in(&ml_st.budget, dev), ptr = 0, bound;
    int runtime = call->info != NULL && call->info->library == CUSHIM_LIB_RUNTIME, ord = ml_ord(dev);
    int vmm = ml_ov.spillable[call->api_id] == ML_SPILL_VMM;
    char where[32] = "managed, preferred CPU";
    int32_t e;
    ml_rec rec, old;
    if (ord < 0)
        return -1;
    bound = ml_oversub_bound(quota, quota ? 0 : ml_oversub_device_total(ml_host, ord), ml_ov.milli);
    if (bound == 0 || ml_budget_spill_charge(&ml_st.budget, dev, bytes, bound) != 0)
        return -1;
    if (vmm)   /* cuMemCreate(handle *, size, const CUmemAllocationProp *, flags) */
        e = ml_oversub_back_vmm(ml_host, ord, bytes, (const void *)(uintptr_t)ml_arg(ml_host, call, r->dev_arg),
                                (unsigned long long)ml_arg(ml_host, call, 3), &ptr,
                                ml_host->log_enabled(CUSHIM_LOG_INFO) ? where : NULL, sizeof where);
    else
        e = ml_oversub_back(ml_host, runtime, ord, bytes, &ptr);
    if (e != 0) {
        /* the VMM path says why once (no host location on this device, a size off the host granularity, properties
           the driver refuses at a host location): a framework retrying after its OOM would repeat it each time */
        static atomic_int told_vmm;
        int quiet = vmm && atomic_exchange(&told_vmm, 1);
        ml_budget_spill_credit(&ml_st.budget, dev, bytes);
        ml_host->log(ml_st.self, quiet ? CUSHIM_LOG_DEBUG : CUSHIM_LOG_WARN, "%s: %llu bytes on device %d could not "
                     "be backed by %s (error %d): refused", call->info ? call->info->name : "?",
                     (unsigned long long)bytes, dev, vmm ? "host-located physical memory" : "managed memory", e);
        return -1;
    }
    memset(&rec, 0, sizeof rec);
    rec.key = ptr;
    rec.bytes = bytes;
    rec.refs = 1;
    rec.ns = vmm ? ML_NS_HANDLE : ML_NS_ADDR;
    rec.cat = ML_CAT_SPILL;
    rec.dev = (int16_t)dev;
    if (ml_table_put(&ml_st.table, &rec, &old) != 0)
        ml_budget_spill_credit(&ml_st.budget, dev, bytes);   /* untracked: its free will find no record */
    else if (old.key != 0 && old.cat != ML_CAT_NONE) {
        ml_lib_credit(&old);
        ml_give(old.cat, old.dev, old.bytes);
    }
    ml_arg_store(ml_host, call, r->out_arg, ptr);
    if (ml_host->log_enabled(CUSHIM_LOG_INFO))
        ml_host->log(ml_st.self, CUSHIM_LOG_INFO, "%s: %llu bytes on device %d backed by host memory (location %s; "
                     "%llu host-backed, %llu on the device, bound %llu)", call->info ? call->info->name : "?",
                     (unsigned long long)bytes, dev, where, (unsigned long long)ml_budget_spilled(&ml_st.budget, dev),
                     (unsigned long long)ml_budget_used(&ml_st.budget, dev), (unsigned long long)bound);
    return 0;
}

/* The pre hook's allocation did not fit: 0 when it is charged now (after a wait), 1 when 'call' is answered with
   host-backed memory (skipped with success), -1 to refuse it. */
static int ml_on_full(cushim_call *call, const cushim_alloc_role *r, int cat, int dev, uint64_t bytes)
{
    if (ml_ov.wait_ms != 0 && ml_st.budget.shared && cat != ML_CAT_HOST) {
        ml_fit f = {cat, dev, bytes};
        if (ml_wait_fit(ml_ov.wait_ms, ml_fit_try, &f))
            return 0;
    }
    if (cat == ML_CAT_DEVICE && ml_spillable(call->api_id) && ml_spill(call, r, dev, bytes) == 0) {
        cushim_call_set_result(call, 0);   /* the pre hook then skips the call */
        return 1;
    }
    return -1;
}

/* The driver refused an eligible allocation for want of device memory: host-backed memory instead. */
static void ml_oom_backed(cushim_call *call, const cushim_alloc_role *r, int dev, uint64_t bytes)
{
    int32_t res = cushim_call_result(call);
    if ((call->flags & CUSHIM_CALL_SKIPPED) || !ml_spillable(call->api_id) ||
        (res != ml_st.oom_driver && res != ml_st.oom_runtime) || ml_spill(call, r, dev, bytes) != 0)
        return;
    cushim_call_set_result(call, 0);
    if (call->info != NULL && call->info->library == CUSHIM_LIB_RUNTIME)
        ml_oversub_forget_error(ml_host);
}

static int ml_cat_of(uint8_t mem)
{
    switch (mem) {
    case CUSHIM_MEM_HOST: return ML_CAT_HOST;
    case CUSHIM_MEM_MANAGED: return ML_CAT_MANAGED;
    default: return ML_CAT_DEVICE;
    }
}

static int ml_pool_device(uint64_t pool)
{
    ml_rec r;
    return ml_table_get(&ml_st.table, ML_NS_POOL, pool, &r) ? r.dev : -1;
}

static int ml_alloc_pre(cushim_call *call, const cushim_alloc_role *r, uint64_t *slot)
{
    int cat = ml_cat_of(r->mem), dev = -1, guessed = 0, full;
    uint64_t bytes;
    if (!ml_role_readable(ml_host, call, r))
        return CUSHIM_CONTINUE;   /* a descriptor into unreadable memory: the driver refuses it, uncharged */
    switch (r->dev_rule) {
    case CUSHIM_DEV_PARAM:
        dev = (int)ml_arg(ml_host, call, r->dev_arg);
        break;
    case CUSHIM_DEV_PROP:
    case CUSHIM_DEV_NODE:
        dev = ml_role_prop_device(ml_host, call, r);
        if (dev == -2) {
            cat = ML_CAT_HOST;
            dev = 0;
        }
        break;
    case CUSHIM_DEV_POOL:
        dev = ml_pool_device(ml_arg(ml_host, call, r->dev_arg));
        if (dev < 0)
            dev = ml_current_device(call);
        break;
    default:
        dev = ml_alloc_device(call, &guessed);
    }
    if (cat == ML_CAT_HOST)
        dev = dev < 0 ? 0 : dev;
    else
        dev = ml_phys(dev);   /* an ordinal so far */
    if (dev < 0 || dev >= ML_MAX_DEVICES)
        return CUSHIM_CONTINUE;   /* no context (the call will fail) or beyond what we track */
    bytes = ml_role_size(ml_host, call, r, 0);
    if (bytes > ML_S_BYTES_MASK) {
        /* 256 TiB or more: no device has it. Past a quota: refused; else the driver says no, uncharged
           (the slot could not carry the amount back to the post hook) */
        if (cat == ML_CAT_HOST || ml_limit_now(dev) == 0 || (guessed && ml_current_device(call) < 0))
            return CUSHIM_CONTINUE;
        return cushim_call_skip(call, call->info && call->info->ret_kind == CUSHIM_RET_CUDAERROR ? ml_st.oom_runtime
                                                                                                 : ml_st.oom_driver);
    }
    if (ml_take(cat, dev, bytes) != 0) {
        int32_t oom;
        if (guessed && ml_current_device(call) < 0)
            return CUSHIM_CONTINUE;   /* the device taken as 0, but no context: the driver's own error, uncharged */
        if ((full = ml_on_full(call, r, cat, dev, bytes)) != 0) {
            oom = call->info && call->info->ret_kind == CUSHIM_RET_CUDAERROR ? ml_st.oom_runtime : ml_st.oom_driver;
            if (full > 0)
                return CUSHIM_SKIP;   /* answered with host-backed memory */
            if (ml_host->log_enabled(CUSHIM_LOG_INFO))
                ml_host->log(ml_st.self, CUSHIM_LOG_INFO, "%s: %llu bytes on device %d refused: %llu of %llu in use",
                             call->info ? call->info->name : "?", (unsigned long long)bytes, dev,
                             (unsigned long long)ml_used(dev), (unsigned long long)ml_limit_now(dev));
            return cushim_call_skip(call, oom);
        }
    }
    *slot = ml_pack(ML_DO_CHARGED, cat, dev, bytes);
    return CUSHIM_CONTINUE;
}

/* Whether the driver did what the call asks: it succeeded and no plugin skipped it - a call another plugin
   skipped, even with success, did not happen (nothing allocated, released or retained; a query answered by that
   plugin, not by the driver). */
static int ml_happened(const cushim_call *call)
{
    return cushim_call_result(call) == 0 && !(call->flags & CUSHIM_CALL_SKIPPED);
}

static void ml_alloc_post(cushim_call *call, const cushim_alloc_role *r, uint64_t slot)
{
    int cat = (int)((slot >> 52) & 0xf), dev = (int)((slot >> 48) & 0xf);
    uint64_t bytes = slot & ML_S_BYTES_MASK, final;
    ml_rec rec, old;
    if (!ml_happened(call)) {   /* nothing was allocated */
        ml_give(cat, dev, bytes);
        if (ml_ov.milli != 0 && cat == ML_CAT_DEVICE)
            ml_oom_backed(call, r, dev, bytes);
        return;
    }
    final = ml_role_size(ml_host, call, r, 1);
    if (final > bytes) {
        /* the pitch rounded up: charged unconditionally, the call has succeeded */
        uint64_t extra = final - bytes;
        if (cat == ML_CAT_DEVICE || (cat == ML_CAT_MANAGED && ml_st.charge_managed))
            ml_budget_charge(&ml_st.budget, dev, extra, 0);
        else
            ml_take(cat, dev, extra);
        bytes = final;
    }
    memset(&rec, 0, sizeof rec);
    rec.key = ml_role_out(ml_host, call, r);
    rec.bytes = bytes;
    rec.refs = 1;
    rec.ns = call->api_id < ml_st.id_limit && ml_st.handle_ref[call->api_id] ? ML_NS_HANDLE : ML_NS_ADDR;
    rec.cat = (uint8_t)cat;
    rec.dev = (int16_t)dev;
    if (rec.key != 0 && ml_in_used(cat))
        rec.lib = ml_lib_charge(dev, bytes);   /* the stack is the allocating call's: who made it */
    if (rec.key == 0 || ml_table_put(&ml_st.table, &rec, &old) != 0) {
        /* nothing to find it by later: do not keep it charged */
        ml_lib_credit(&rec);
        ml_give(cat, dev, bytes);
        return;
    }
    if (old.key != 0 && old.cat != ML_CAT_NONE) {
        ml_lib_credit(&old);
        ml_give(old.cat, old.dev, old.bytes);   /* an address we missed the release of */
    }
}

static int ml_pre(cushim_call *call, void *user, uint64_t *slot)
{
    const cushim_alloc_role *r = ml_host->alloc_role(call->api_id);
    (void)user;
    *slot = 0;
    if (r == NULL || ml_nested(call))
        return CUSHIM_CONTINUE;
    switch (r->action) {
    case CUSHIM_ROLE_ALLOC:
        return ml_alloc_pre(call, r, slot);
    case CUSHIM_ROLE_RELEASE:
    case CUSHIM_ROLE_UNIMPORT: {
        ml_rec rec;
        uint8_t ns = call->api_id < ml_st.id_limit && ml_st.handle_ref[call->api_id] ? ML_NS_HANDLE : ML_NS_ADDR;
        int got = ml_table_release(&ml_st.table, ns, ml_arg(ml_host, call, r->ref_arg), &rec);
        if (got == 1)
            *slot = ml_pack(ML_DO_REFDROP, 0, 0, 0);
        else if (got == 2) {
            ml_lib_credit(&rec);   /* put back under the releasing caller's library if the release fails */
            *slot = ml_pack(ML_DO_TAKEN, rec.cat == ML_CAT_NONE ? 0xf : rec.cat, rec.dev, rec.bytes);
        }
        else
            atomic_fetch_add_explicit(&ml_st.untracked_releases, 1, memory_order_relaxed);
        return CUSHIM_CONTINUE;
    }
    case CUSHIM_ROLE_IMPORT:
    case CUSHIM_ROLE_RETAIN:
        *slot = ml_pack(ML_DO_RECORD, 0, 0, 0);
        return CUSHIM_CONTINUE;
    default:
        return CUSHIM_CONTINUE;
    }
}

static void ml_post(cushim_call *call, void *user, uint64_t *slot)
{
    const cushim_alloc_role *r;
    uint64_t s = *slot;
    int ok = ml_happened(call);
    uint8_t ns = call->api_id < ml_st.id_limit && ml_st.handle_ref[call->api_id] ? ML_NS_HANDLE : ML_NS_ADDR;
    (void)user;
    if (!(s & ML_S_ON) || (r = ml_host->alloc_role(call->api_id)) == NULL)
        return;
    switch ((int)((s >> 56) & 0xf)) {
    case ML_DO_CHARGED:
        ml_alloc_post(call, r, s);
        return;
    case ML_DO_REFDROP:
        if (!ok)
            ml_table_retain(&ml_st.table, ns, ml_arg(ml_host, call, r->ref_arg), +1);
        return;
    case ML_DO_TAKEN: {
        int cat = (int)((s >> 52) & 0xf), dev = (int)((s >> 48) & 0xf);
        uint64_t bytes = s & ML_S_BYTES_MASK;
        if (ok) {
            ml_give(cat, dev, bytes);
        } else {
            ml_rec rec;
            memset(&rec, 0, sizeof rec);
            rec.key = ml_arg(ml_host, call, r->ref_arg);
            rec.bytes = bytes;
            rec.refs = 1;
            rec.ns = ns;
            rec.cat = cat == 0xf ? ML_CAT_NONE : (uint8_t)cat;
            rec.dev = (int16_t)dev;
            if (cat != 0xf && ml_in_used(cat))
                rec.lib = ml_lib_charge(dev, bytes);
            if (ml_table_put(&ml_st.table, &rec, NULL) != 0) {
                ml_lib_credit(&rec);
                ml_give(cat, dev, bytes);
            }
        }
        return;
    }
    case ML_DO_RECORD:
        if (!ok)
            return;
        if (r->action == CUSHIM_ROLE_RETAIN) {
            ml_table_retain(&ml_st.table, ns, ml_role_out(ml_host, call, r), +1);
        } else {
            ml_rec rec, old;
            memset(&rec, 0, sizeof rec);
            rec.key = ml_role_out(ml_host, call, r);
            rec.refs = 1;
            rec.ns = ns;
            rec.cat = ML_CAT_NONE;   /* imported: charged to its exporter, never here */
            if (ml_table_put(&ml_st.table, &rec, &old) == 0 && old.key != 0 && old.cat != ML_CAT_NONE) {
                ml_lib_credit(&old);
                ml_give(old.cat, old.dev, old.bytes);
            }
        }
        return;
    default:
        return;
    }
}

/* ---- pools: which device a pool allocates on (DEV_POOL) ---- */
static void ml_pool_post(cushim_call *call, void *user, uint64_t *slot)
{
    const char *n = call->info ? call->info->name : "";
    ml_rec rec;
    (void)user;
    (void)slot;
    if (!ml_happened(call))
        return;
    memset(&rec, 0, sizeof rec);
    rec.ns = ML_NS_POOL;
    rec.refs = 1;
    rec.cat = ML_CAT_NONE;
    rec.key = ml_arg_deref(ml_host, call, 0);
    if (strstr(n, "MemGetMemPool") != NULL || strstr(n, "MemGetDefaultMemPool") != NULL) {
        /* (pool *, CUmemLocation / cudaMemLocation *, type): the pool of a location (CUDA 13) */
        const CUmemLocation *l = (const CUmemLocation *)(uintptr_t)ml_arg(ml_host, call, 1);
        if (l == NULL || l->type != CU_MEM_LOCATION_TYPE_DEVICE)
            return;
        rec.dev = (int16_t)l->id;
    } else if (strstr(n, "PoolCreate") != NULL) {
        /* CUmemPoolProps / cudaMemPoolProps: location.type 1 is a device */
        const CUmemPoolProps *p = (const CUmemPoolProps *)(uintptr_t)ml_arg(ml_host, call, 1);
        if (p == NULL || p->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
            return;
        rec.dev = (int16_t)p->location.id;
    } else {
        rec.dev = (int16_t)ml_arg(ml_host, call, 1);   /* (pool *, device) */
    }
    if (rec.dev >= 0 && rec.dev < ML_MAX_DEVICES)
        ml_table_put(&ml_st.table, &rec, NULL);
}

/* ---- queries report the quota ---- */
/* What a query on CUDA ordinal 'ord' reports: the quota of its physical device as its total, what is left as free. */
static void ml_report(int ord, uint64_t *free_b, uint64_t *total)
{
    int dev = ml_phys(ord);
    uint64_t lim = dev >= 0 ? ml_limit_now(dev) : 0, used, left;
    if (lim == 0)
        return;
    used = ml_used(dev);
    left = used < lim ? lim - used : 0;
    if (total != NULL && *total > lim)
        *total = lim;
    if (free_b != NULL && *free_b > left)
        *free_b = left;
}

static void ml_query_post(cushim_call *call, void *user, uint64_t *slot)
{
    uint32_t id = call->api_id;
    (void)user;
    (void)slot;
    if (!ml_happened(call))
        return;
    if (id == ml_st.id_getinfo || id == ml_st.id_getinfo_v2 || id == ml_st.id_rt_getinfo) {
        int dev = ml_current_device(call);
        uint64_t f = ml_arg_deref(ml_host, call, 0), t = ml_arg_deref(ml_host, call, 1);
        if (dev < 0)
            return;
        ml_report(dev, &f, &t);
        ml_arg_store(ml_host, call, 0, f);
        ml_arg_store(ml_host, call, 1, t);
    } else if (id == ml_st.id_totalmem || id == ml_st.id_totalmem_v2) {
        uint64_t t = ml_arg_deref(ml_host, call, 0);
        ml_report((int)ml_arg(ml_host, call, 1), NULL, &t);
        ml_arg_store(ml_host, call, 0, t);
    } else if (id == ml_st.id_rt_props || id == ml_st.id_rt_props_v2) {
        struct cudaDeviceProp *p = (struct cudaDeviceProp *)(uintptr_t)ml_arg(ml_host, call, 0);
        uint64_t t;
        if (p == NULL)
            return;
        t = p->totalGlobalMem;
        ml_report((int)ml_arg(ml_host, call, 1), NULL, &t);
        p->totalGlobalMem = (size_t)t;
    } else if ((id == ml_st.id_nvml_mem || id == ml_st.id_nvml_mem_v2) &&
               ml_real(ml_st.id_nvml_index, &ml_nvml_index_fn) != NULL) {
        ml_nvmlDeviceGetIndex_fn nvml_index = (ml_nvmlDeviceGetIndex_fn)ml_real(ml_st.id_nvml_index, &ml_nvml_index_fn);
        /* nvmlMemory_t {total, free, used}; nvmlMemory_v2_t {version, total, reserved, free, used}
           (nvml.h, documented layouts; NVML's return type is an int, 0 = NVML_SUCCESS) */
        unsigned idx = 0;
        int dev;
        unsigned long long *m = (unsigned long long *)(uintptr_t)ml_arg(ml_host, call, 1);
        uint64_t lim, used;
        if (m == NULL || nvml_index((void *)(uintptr_t)ml_arg(ml_host, call, 0), &idx) != 0 ||
            (dev = ml_phys(ml_nvml_ordinal(idx))) < 0 || (lim = ml_limit_now(dev)) == 0)
            return;
        used = ml_used(dev);
        if (id == ml_st.id_nvml_mem) {
            m[0] = m[0] < lim ? m[0] : lim;                  /* total */
            m[2] = used;                                     /* used  */
            m[1] = m[0] > used ? m[0] - used : 0;            /* free  */
        } else {
            m[1] = m[1] < lim ? m[1] : lim;                  /* total (m[0] holds the version) */
            m[4] = used;                                     /* used                           */
            m[3] = m[1] > used + m[2] ? m[1] - used - m[2] : 0; /* free, less 'reserved'        */
        }
    }
}

/* ---- configuration ---- */
static const char *ml_env(const char *name)
{
    return ml_host->env(name);
}

static uint32_t ml_id(const char *name)
{
    const cushim_api_info *a = ml_host->api_by_name(name);
    return a ? a->id : UINT32_MAX;
}

static int ml_add(const char *sel, cushim_pre_fn pre, cushim_post_fn post, int quiet_nomatch)
{
    cushim_hook_spec spec;
    uint64_t group;
    int rc;
    memset(&spec, 0, sizeof spec);
    spec.size = sizeof spec;
    spec.select = sel;
    spec.pre = pre;
    spec.post = post;
    spec.priority = -100;   /* before faultinject (1000) and the default 0: a refused call is never counted twice */
    rc = ml_host->hooks_add(ml_st.self, &spec, &group);
    if (rc == CUSHIM_ENOMATCH && quiet_nomatch)
        return 0;
    if (rc != CUSHIM_OK)
        ml_host->log(ml_st.self, CUSHIM_LOG_ERROR, "cannot hook '%.200s': error %d", sel, rc);
    return rc == CUSHIM_OK ? 0 : -1;
}

/* A group by name or number. */
static int ml_group_id(const char *s, long *gid)
{
    char *end = NULL, buf[4096];
    struct group gr, *res = NULL;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno == 0 && end != s && *end == '\0' && v >= 0 && v < (long)UINT32_MAX) {
        *gid = v;
        return 0;
    }
    if (getgrnam_r(s, &gr, buf, sizeof buf, &res) != 0 || res == NULL)
        return -1;
    *gid = (long)gr.gr_gid;
    return 0;
}

/* oversubscribe= (or HAMi's CUDA_OVERSUBSCRIBE=true: ratio 1, HAMi's limit being the whole) and on_full=. */
static int ml_ov_config(const cushim_host *host, cushim_plugin *self)
{
    const char *ov = host->opt_string(self, "oversubscribe"), *full = host->opt_string(self, "on_full");
    memset(&ml_ov, 0, sizeof ml_ov);
    if (ov != NULL) {
        if (ml_oversub_parse_ratio(ov, &ml_ov.milli) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "oversubscribe=%.100s: want a ratio from 1 to 64 (1.5), true or false",
                      ov);
            return -1;
        }
    } else if (host->opt_bool(self, "hami") && ml_oversub_hami(host->env("CUDA_OVERSUBSCRIBE"))) {
        ml_ov.milli = 1000;
    }
    if (ml_oversub_parse_wait(full, &ml_ov.wait_ms) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "on_full=%.100s: want 'fail', 'wait' or 'wait:SECONDS' (at most 86400)",
                  full);
        return -1;
    }
    if (ml_ov.milli != 0 || ml_ov.wait_ms != 0)
        host->log(self, CUSHIM_LOG_INFO, "an allocation over a shared budget waits up to %u ms; oversubscription "
                  "ratio %.3f (0: off)", ml_ov.wait_ms, ml_ov.milli / 1000.0);
    return 0;
}

static int ml_init(const cushim_host *host, cushim_plugin *self)
{
    char err[512], path[256];
    const char *spec, *budget, *managed;
    idsel sel = {0};
    uint32_t kind;
    int got_hami = 0;
    static _Atomic int active;
    /* One instance per process: the plugin's state is its own (a second CUSHIM_PLUGINS entry naming it
       would otherwise charge every allocation twice). */
    if (atomic_exchange(&active, 1) != 0) {
        host->log(self, CUSHIM_LOG_WARN, "memlimit is already active in this process: this instance (and its "
                  "options) does nothing");
        return 0;
    }
    ml_host = host;
    memset(&ml_st, 0, sizeof ml_st);
    ml_st.self = self;
    if (!CUSHIM_HOST_HAS(host, alloc_role) || host->alloc_role == NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "this shim has no allocation roles (SDK older than memlimit needs)");
        return -1;
    }
    ml_table_init(&ml_st.table);
    spec = host->opt_string(self, "limit");
    if (ml_opt_given_nonempty(spec)) {
        if (ml_parse_spec(spec, &ml_st.lim, err, sizeof err) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "limit=%.200s: %s", spec, err);
            return -1;
        }
    } else if (host->opt_bool(self, "hami")) {
        got_hami = ml_from_hami_env(ml_env, &ml_st.lim, err, sizeof err);
        if (got_hami < 0) {
            host->log(self, CUSHIM_LOG_ERROR, "%s", err);
            return -1;
        }
    }
    managed = host->opt_string(self, "managed");
    if (managed != NULL && strcmp(managed, "charge") && strcmp(managed, "count")) {
        host->log(self, CUSHIM_LOG_ERROR, "managed=%.100s: want 'charge' or 'count'", managed);
        return -1;
    }
    ml_st.charge_managed = managed == NULL || !strcmp(managed, "charge");
    ml_st.vis_n = ml_visible_devices(host->env("CUDA_VISIBLE_DEVICES"), ml_st.vis_map, ML_MAX_DEVICES);
    if (ml_ov_config(host, self) != 0)
        return -1;

    budget = host->opt_string(self, "budget");
    if (!ml_opt_given_nonempty(budget) && host->opt_bool(self, "hami"))
        budget = host->env_path("CUDA_DEVICE_MEMORY_SHARED_CACHE");   /* NULL in secure mode */
    path[0] = '\0';
    if (ml_opt_given_nonempty(budget) && ml_budget_path(budget, path, sizeof path) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "budget=%.200s: a name of [A-Za-z0-9_.-] or an absolute path", budget);
        return -1;
    }
    snprintf(ml_region_path, sizeof ml_region_path, "%s", path);
    ml_region_gid = -1;
    {
        const char *grp = host->opt_string(self, "budget_group");
        if (ml_opt_given_nonempty(grp) && ml_group_id(grp, &ml_region_gid) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "budget_group=%.100s: no such group (a name or a number)", grp);
            return -1;
        }
    }
    atomic_store(&ml_opened, 0);
    ml_st.budget.slot = -1;
    /* memory by library: only where someone can read it (a shared budget); the unwinder primed now */
    ml_st.by_library = ml_region_path[0] != '\0' && host->opt_bool(self, "by_library");
    if (ml_st.by_library) {
        const void *mine[2] = {(const void *)host->log, (const void *)&ml_st};
        ml_caller_init(mine, 2);
    }

    if (host->result_by_name("CUDA_ERROR_OUT_OF_MEMORY", &kind, &ml_st.oom_driver) != CUSHIM_OK)
        ml_st.oom_driver = 2;
    if (host->result_by_name("cudaErrorMemoryAllocation", &kind, &ml_st.oom_runtime) != CUSHIM_OK)
        ml_st.oom_runtime = 2;
    ml_st.id_ctx_dev = ml_id("cuCtxGetDevice");
    ml_st.id_rt_dev = ml_id("cudaGetDevice");
    ml_st.id_nvml_index = ml_id("nvmlDeviceGetIndex");
    ml_st.id_dev_count = ml_id("cuDeviceGetCount");

    /* every API with a role that moves memory, as one selector "id:N,id:M,..." */
    ml_st.id_limit = host->api_id_limit();
    ml_st.handle_ref = calloc(ml_st.id_limit ? ml_st.id_limit : 1, 1);
    if (ml_st.handle_ref == NULL)
        return -1;
    if (ml_ov.milli != 0 && (ml_ov.spillable = calloc(ml_st.id_limit ? ml_st.id_limit : 1, 1)) == NULL)
        return -1;
    for (uint32_t i = 0; i < host->api_count(); i++) {
        const cushim_api_info *a = host->api_at(i);
        const cushim_alloc_role *r = host->alloc_role(a->id);
        if (r == NULL || r->action == CUSHIM_ROLE_NONE)
            continue;
        ml_st.handle_ref[a->id] = (uint8_t)ml_arg_is_handle(host, a, r->action == CUSHIM_ROLE_RELEASE ||
                                                                             r->action == CUSHIM_ROLE_UNIMPORT
                                                                         ? r->ref_arg
                                                                         : r->out_arg);
        if (a->id < ml_st.id_limit && r->size_rule == CUSHIM_SIZE_NODE)
            ml_st.handle_ref[a->id] = 0;
        if (ml_ov.spillable != NULL && a->id < ml_st.id_limit)
            ml_ov.spillable[a->id] = !ml_st.handle_ref[a->id] ? (ml_oversub_eligible(a, r) ? ML_SPILL_MANAGED : 0)
                                     : ml_oversub_vmm_eligible(a, r) ? ML_SPILL_VMM : 0;
        if (idsel_add(&sel, a->id) != 0) {
            idsel_free(&sel);
            return -1;
        }
    }
    if (sel.s == NULL || ml_add(sel.s, ml_pre, ml_post, 0) != 0) {
        idsel_free(&sel);
        return -1;
    }
    idsel_free(&sel);
    ml_add("cuMemPoolCreate,cudaMemPoolCreate,cuDeviceGetDefaultMemPool,cuDeviceGetMemPool,"
           "cudaDeviceGetDefaultMemPool,cudaDeviceGetMemPool", NULL, ml_pool_post, 1);
    ml_add("cuMemGetMemPool,cuMemGetDefaultMemPool,cudaMemGetMemPool,cudaMemGetDefaultMemPool", NULL, ml_pool_post,
           1);   /* CUDA 13.0 and later */

    ml_st.id_getinfo = ml_id("cuMemGetInfo");
    ml_st.id_getinfo_v2 = ml_id("cuMemGetInfo_v2");
    ml_st.id_totalmem = ml_id("cuDeviceTotalMem");
    ml_st.id_totalmem_v2 = ml_id("cuDeviceTotalMem_v2");
    ml_st.id_rt_getinfo = ml_id("cudaMemGetInfo");
    ml_st.id_rt_props = ml_id("cudaGetDeviceProperties");
    ml_st.id_rt_props_v2 = ml_id("cudaGetDeviceProperties_v2");
    ml_st.id_nvml_mem = ml_id("nvmlDeviceGetMemoryInfo");
    ml_st.id_nvml_mem_v2 = ml_id("nvmlDeviceGetMemoryInfo_v2");
    if (ml_add("name:cuMemGetInfo,name:cuMemGetInfo_v2,name:cuDeviceTotalMem,name:cuDeviceTotalMem_v2,"
               "name:cudaMemGetInfo,base:cudaGetDeviceProperties", NULL, ml_query_post, 1) != 0)
        return -1;
    /* NVML, where this build interposes it; quietly nothing where it does not */
    ml_add("name:nvmlDeviceGetMemoryInfo,name:nvmlDeviceGetMemoryInfo_v2", NULL, ml_query_post, 1);

    if (host->log_enabled(CUSHIM_LOG_INFO)) {
        char lims[256];
        size_t o = (size_t)snprintf(lims, sizeof lims, "all=%llu", (unsigned long long)ml_st.lim.all);
        for (int d = 0; d < ML_MAX_DEVICES && o < sizeof lims; d++)
            if (ml_st.lim.dev[d])
                o += (size_t)snprintf(lims + o, sizeof lims - o, " %d=%llu", d, (unsigned long long)ml_st.lim.dev[d]);
        host->log(self, CUSHIM_LOG_INFO, "limits (bytes, 0 none): %s%s; budget %s; managed memory %s", lims,
                  got_hami ? " (from HAMi's CUDA_DEVICE_MEMORY_LIMIT*)" : "",
                  ml_region_path[0] ? ml_region_path : "of this process",
                  ml_st.charge_managed ? "charged" : "counted, not charged");
    }
    return 0;
}

static void ml_flush(cushim_plugin *self)
{
    if (self != ml_st.self)
        return;   /* a second instance, which does nothing */
    pthread_mutex_lock(&ml_open_mu);
    if (atomic_load(&ml_opened) == 1)
        ml_budget_close(&ml_st.budget);
    atomic_store(&ml_opened, -1);   /* nothing is charged any more: hooks no longer run */
    pthread_mutex_unlock(&ml_open_mu);
}

static void ml_fork_child(cushim_plugin *self)
{
    if (self != ml_st.self)
        return;
    /* the parent's allocations are not the child's; another thread may have held the mutex */
    free(ml_st.table.cells);
    ml_table_init(&ml_st.table);
    pthread_mutex_init(&ml_open_mu, NULL);
    pthread_mutex_init(&ml_live_mu, NULL);
    pthread_mutex_init(&ml_lib_mu, NULL);
    ml_caller_fork_child();
    if (atomic_load(&ml_opened) == 1 && ml_budget_reopen_child(&ml_st.budget) != 0 && ml_host != NULL) {
        ml_host->log(ml_st.self, CUSHIM_LOG_WARN, "child %d: no slot in the shared budget: a budget of its own",
                     (int)getpid());
        if (ml_st.budget.r == NULL)
            atomic_store(&ml_opened, -1);
    }
}

static const cushim_option ml_options[] = {
    {"limit", CUSHIM_OPT_STRING, NULL,
     "quota: 8GiB for every device, or per physical device (CUDA_VISIBLE_DEVICES's numbers) 0:8GiB,1:4GiB "
     "(*:N for the rest)"},
    {"budget", CUSHIM_OPT_STRING, NULL,
     "share the quota with every process naming this budget (/dev/shm/cushim-budget-NAME, or an absolute path)"},
    {"budget_group", CUSHIM_OPT_STRING, NULL,
     "share the budget's file with this group's users (default: this user alone may write it)"},
    {"managed", CUSHIM_OPT_STRING, "charge", "managed memory: 'charge' it to the current device, or only 'count' it"},
    {"by_library", CUSHIM_OPT_BOOL, "false",
     "in a shared budget, publish memory by the library that allocated it (cushim usage --by-library; about 1 us "
     "an allocation: the stack walk)"},
    {"oversubscribe", CUSHIM_OPT_STRING, NULL,
     "past the quota or the device's free memory, back cuMemAlloc/cudaMalloc with managed memory in host memory and "
     "cuMemCreate with host-located physical memory; "
     "RATIO (default 2) bounds the total at quota x RATIO (true, false, or a ratio 1-64)"},
    {"on_full", CUSHIM_OPT_STRING, "fail",
     "an allocation over a shared budget: 'fail' at once, or 'wait[:SEC]' (default 30 s) for other processes to free"},
    {"hami", CUSHIM_OPT_BOOL, "true",
     "read HAMi-core's CUDA_DEVICE_MEMORY_LIMIT[_<i>] and CUDA_DEVICE_MEMORY_SHARED_CACHE"},
    {NULL, 0, NULL, NULL},
};

static const cushim_plugin_def ml_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "memlimit",
    .version = "0.1.0",
    .description = "GPU memory quotas on every allocation path, queries that report them, budgets shared by processes",
    .options = ml_options,
    .init = ml_init,
    .flush = ml_flush,
    .fork_child = ml_fork_child,
};

CUSHIM_PLUGIN(ml_def)
