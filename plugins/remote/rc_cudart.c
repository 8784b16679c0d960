/*
 * rc_cudart.c - runtime-API programs over remoting: the runtime part's own state and its dispatch
 * (docs/remote.md, "Runtime-API programs"; the other files of the part: rc_int.h).
 *
 * Runtime calls are forwarded at the runtime level (remote.c's hooks on lib:runtime, answered by the server's own
 * libcudart in the same back end as the driver calls), except what only the client can do, which rc_pre hands to
 * the part's files: registrations and stubs (rc_stub.c), launches (rc_launch.c), the other calls that take a stub
 * (rc_func.c), copies and pinned memory (rc_copy.c), and here the driver entry points. This file owns:
 *   - the plugin's side ('rc', set by rc_init) and the calls by metadata the other files make;
 *   - the thread's device and the runtime context made current for it on the server (rc_context: cudaFree(NULL)
 *     once per client thread and device, before the first driver call the part makes for it);
 *   - errors of the translated calls, kept per thread and reported by cudaGetLastError and cudaPeekAtLastError
 *     after the server's own (the server's runtime never saw them).
 * The current device is the one the last successful cudaSetDevice chose (one connection: the back end has
 * one thread, whose device is the last one any client thread set).
 * cudaGetDevice is answered in the client with the device this thread last set (cudaSetDevice returned success)
 * or the server last gave it, until a call that may change a thread's current context or device is made by any
 * thread (rc_note_api: a driver API with 'Ctx' in its name but not 'Get', cudaDeviceReset, cudaThreadExit,
 * cudaSetValidDevices, cudaInitDevice, a runtime API with 'Ctx') or the process forks: exact, as cudaGetDevice
 * returns the device of the thread's current context, which only those change. In the same window a
 * cudaSetDevice of the device this thread's last successful cudaSetDevice chose returns success here: that device
 * and its primary context are current already.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_int.h"
#include "rp_cublas.h"
#include "rp_nccl.h"
#include "rm_names.h"

rc_env rc;

static __thread int32_t rc_last;     /* the last error of a translated call, for cudaGetLastError */
/* The client thread's current device (cudaSetDevice), as the runtime keeps one per thread; the server runs each
   client thread's calls on a thread of its own, where the runtime keeps the same. */
static __thread int rc_device;
/* cudaGetDevice's answer for this thread, valid while rcs.dev_gen is rc_gdev_gen (rc_note_api); rc_gdev_set: it
   is the device this thread's last cudaSetDevice made current, with its primary context */
static __thread int rc_gdev, rc_gdev_known, rc_gdev_set;
static __thread uint64_t rc_gdev_gen;
static __thread uint64_t rc_sets;    /* cudaSetDevice calls this thread forwarded (rc_device_epoch) */
/* The devices whose runtime context this client thread's server thread was made to take (cudaFree(NULL)), as
   of generation rc_ctx_seen of rcs.ctx_gen. */
static __thread uint64_t rc_ctx_mask, rc_ctx_seen;

/* what this file alone uses */
static struct {
    _Atomic uint64_t ctx_gen;          /* bumped when contexts go (a device reset): rc_ctx_mask starts over */
    _Atomic uint64_t dev_gen;          /* bumped by a call that may change a thread's current context */
    _Atomic uint64_t local_answers;    /* cudaGetDevice answered here */
    uint8_t *ctx_api;                  /* per API id: 1 when it bumps dev_gen */
    uint32_t nctx_api, id_get_device;
    rc_api cfree;
    uint32_t id_set_device, id_reset, id_last, id_peek;
    uint32_t id_entry[2][2];           /* cudaGetDriverEntryPoint[ByVersion][_ptsz]: [by_version][per_thread] */
    uint32_t id_getproc[2];            /* cuGetProcAddress, cuGetProcAddress_v2 */
} rcs;

/* ---- calls of the server's driver and runtime, by metadata (parameters by index) ---- */
int rc_api_of(rc_api *api, const char *name)
{
    api->a = rc.host->api_by_name(name);
    api->pl = api->a ? rm_plan_of(rc.plans, api->a->id) : NULL;
    if (api->pl == NULL || api->a->params_size > 256) {
        rc.host->log(rc.self, CUSHIM_LOG_ERROR, "%s is not in this build's tree: runtime programs cannot be "
                     "forwarded", name);
        return -1;
    }
    return 0;
}

/* The same for an API this tree may not have (a newer CUDA's): -1 without a word. */
int rc_api_maybe(rc_api *api, const char *name)
{
    api->a = rc.host->api_by_name(name);
    api->pl = api->a ? rm_plan_of(rc.plans, api->a->id) : NULL;
    if (api->pl == NULL || api->a->params_size > 256) {
        api->a = NULL;
        return -1;
    }
    return 0;
}

void rc_log_once(_Atomic int *flag, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (atomic_exchange(flag, 1) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rc.host->log(rc.self, CUSHIM_LOG_WARN, "%s", msg);
}

int rc_layout(const cushim_struct_info *s, size_t size, const rc_field *fields, size_t n)
{
    if (s == NULL || s->size != size)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (uint32_t k = 0; k < s->nfields && !found; k++) {
            const cushim_field_info *f = cushim_struct_field(rc.host, s, k);
            found = f != NULL && strcmp(f->name, fields[i].name) == 0 && f->offset == fields[i].offset;
        }
        if (!found)
            return 0;
    }
    return 1;
}

int rc_current_device(void)
{
    return rc_device;
}

void rc_put(const rc_api *api, uint8_t *params, uint32_t index, const void *v, size_t n)
{
    const cushim_param_info *p = rc.host->api_param(api->a, index);
    if (p != NULL && p->size == n)
        memcpy(params + p->offset, v, n);
}

void rc_get(const cushim_call *call, const char *name, void *v, size_t n)
{
    memset(v, 0, n);
    for (uint32_t i = 0; i < call->info->nparams; i++) {
        const cushim_param_info *p = rc.host->api_param(call->info, i);
        if (strcmp(p->name, name) == 0 && p->size == n) {
            memcpy(v, (const uint8_t *)call->params + p->offset, n);
            return;
        }
    }
}

/* A driver call: its CUresult (the server's, or remote.c's error). */
int32_t rc_call(const rc_api *api, uint8_t *params)
{
    int32_t ret = -1;
    int answered;
    int32_t r = rc.forward(rc.user, api->pl, params, &ret, &answered);
    return answered ? ret : r;
}

int32_t rc_fail(int32_t r)
{
    if (r != 0)
        rc_last = r;
    return r;
}

int32_t rc_note_error(int32_t r)
{
    return rc_fail(r);
}

int32_t rc_driver_context(void)
{
    return rc.host != NULL ? rc_context() : 3;   /* cudaErrorInitializationError: rc_init failed */
}

/* The runtime's context of the thread's device made current on the server's thread for it, before a driver call
   the runtime part makes for the program (a thread whose first call is a launch or a copy has none yet):
   cudaFree(NULL), once per client thread and device. */
int32_t rc_context(void)
{
    int dev = rc_device;
    uint64_t gen = atomic_load(&rcs.ctx_gen);
    if (dev < 0 || dev >= RC_MAX_DEVICES)
        return rc.e_inval;
    if (rc_ctx_seen != gen) {
        rc_ctx_mask = 0;
        rc_ctx_seen = gen;
    }
    if (rc_ctx_mask & (1ull << dev))
        return 0;
    uint8_t params[256] = {0};
    void *null = NULL;
    rc_put(&rcs.cfree, params, 0, &null, sizeof null);
    int32_t r = rc_call(&rcs.cfree, params);
    if (r == 0)
        rc_ctx_mask |= 1ull << dev;
    return r;
}

/* cudaGetDriverEntryPoint[ByVersion][_ptsz], answered in the client: the driver functions a program gets must be
   this process's (the shim's exports, which the remoting serves), never the server's addresses (PyTorch's c10
   takes its driver functions so). Asked of the shim's own cuGetProcAddress handler (host->real: its answer maps
   to the shim's exports; with no driver here it answers from the shim's table, runtime/getproc.c), with the
   runtime's conventions (the fake runtime's frt_entry_point): flags past the two stream bits and NULL arguments
   are cudaErrorInvalidValue; with a status pointer the driver's status and cudaSuccess, without one
   cudaErrorSymbolNotFound for a failed look-up; the entry point without a version asks with the tree's. */
typedef int (*rc_getproc_v1_fn)(const char *, void **, int, uint64_t);
typedef int (*rc_getproc_v2_fn)(const char *, void **, int, uint64_t, int *);
static int32_t rc_entry_point(const cushim_call *call, int by_version)
{
    const char *symbol;
    void **fp;
    unsigned long long flags;
    int *status;
    unsigned int version = rc.plans->cuda_version;
    rc_get(call, "symbol", &symbol, sizeof symbol);
    rc_get(call, "funcPtr", &fp, sizeof fp);
    rc_get(call, "flags", &flags, sizeof flags);
    rc_get(call, "driverStatus", &status, sizeof status);
    if (by_version)
        rc_get(call, "cudaVersion", &version, sizeof version);
    if (symbol == NULL || fp == NULL || (flags & ~3ull) != 0)
        return rc_fail(rc.e_inval);
    int st = 1, r;   /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    void *v2 = rcs.id_getproc[1] != UINT32_MAX ? rc.host->real(rcs.id_getproc[1]) : NULL;
    void *v1 = rcs.id_getproc[0] != UINT32_MAX ? rc.host->real(rcs.id_getproc[0]) : NULL;
    if (v2 != NULL) {
        r = ((rc_getproc_v2_fn)v2)(symbol, fp, (int)version, flags, &st);
    } else if (v1 != NULL) {
        r = ((rc_getproc_v1_fn)v1)(symbol, fp, (int)version, flags);
        st = r == 0 ? 0 : 1;
    } else {
        r = rc.drv[2];   /* CUDA_ERROR_NOT_FOUND */
    }
    if (r != 0)
        *fp = NULL;
    if (status != NULL) {
        *status = st;
        return 0;
    }
    return rc_fail(r == 0 ? 0 : rc.e_symbol);
}

/* Everything learnt from the server, forgotten: a new back end (fork_child) or a device reset ('dev' < 0: all). */
static void rc_forget(int dev)
{
    rc_stub_forget(dev);
    atomic_fetch_add(&rcs.ctx_gen, 1);
}

void rc_fork_child(void)
{
    rc_stub_fork_child();
    atomic_fetch_add(&rcs.ctx_gen, 1);
    rc_ctx_mask = 0;   /* the child's one thread: the one that forked */
    atomic_fetch_add(&rcs.dev_gen, 1);   /* its back end has its own current device */
}

void rc_note_api(uint32_t id)
{
    if (id < rcs.nctx_api && rcs.ctx_api[id])
        atomic_fetch_add(&rcs.dev_gen, 1);
}

void rc_device_epoch(uint64_t epoch[2])
{
    epoch[0] = atomic_load(&rcs.dev_gen);
    epoch[1] = rc_sets;
}

uint64_t rc_local_answers(void)
{
    return atomic_load(&rcs.local_answers);
}

/* The APIs after which cudaGetDevice is asked again (rc_note_api). */
static void rc_ctx_apis(void)
{
    static const char *const rt[] = { "cudaDeviceReset", "cudaThreadExit", "cudaSetValidDevices", "cudaInitDevice" };
    rcs.nctx_api = rc.plans->id_limit;
    if ((rcs.ctx_api = calloc(rcs.nctx_api ? rcs.nctx_api : 1, 1)) == NULL) {
        rcs.nctx_api = 0;
        rcs.id_get_device = UINT32_MAX;   /* nothing followed: always asked */
        return;
    }
    for (uint32_t id = 0; id < rcs.nctx_api; id++) {
        const rm_plan *pl = rm_plan_of(rc.plans, id);
        const char *n = pl != NULL ? pl->info->name : NULL;
        if (n == NULL)
            continue;
        if ((pl->info->library == CUSHIM_LIB_DRIVER || pl->info->library == CUSHIM_LIB_RUNTIME) &&
            strstr(n, "Ctx") != NULL && strstr(n, "Get") == NULL)
            rcs.ctx_api[id] = 1;
        for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
            if (pl->info->library == CUSHIM_LIB_RUNTIME && strcmp(n, rt[i]) == 0)
                rcs.ctx_api[id] = 1;
    }
}

int rc_pre(cushim_call *call, const rm_plan *pl, int32_t *result)
{
    uint32_t id = call->api_id;
    int answered;
    if (rc.host == NULL)
        return 0;
    if (rc_launch_pre(call, result) || rc_copy_pre(call, result) || rc_func_pre(call, result))
        return 1;
    for (int v = 0; v < 2; v++)
        for (int pt = 0; pt < 2; pt++)
            if (id == rcs.id_entry[v][pt]) {
                *result = rc_entry_point(call, v);
                return 1;
            }
    if (id != rcs.id_set_device && id != rcs.id_reset && id != rcs.id_last && id != rcs.id_peek &&
        id != rcs.id_get_device)
        return 0;
    uint64_t gen = atomic_load(&rcs.dev_gen);   /* before the call: a change meanwhile voids its answer */
    int *dev_out = NULL;
    if (id == rcs.id_get_device) {
        rc_get(call, "device", &dev_out, sizeof dev_out);
        if (dev_out != NULL && rc_gdev_known && rc_gdev_gen == gen) {
            *dev_out = rc_gdev;
            atomic_fetch_add_explicit(&rcs.local_answers, 1, memory_order_relaxed);
            *result = 0;
            return 1;
        }
    } else if (id == rcs.id_set_device && rc_gdev_known && rc_gdev_set && rc_gdev_gen == gen) {
        int dev;
        rc_get(call, "device", &dev, sizeof dev);
        if (dev == rc_gdev) {   /* already current, its context too: setting it again changes nothing */
            atomic_fetch_add_explicit(&rcs.local_answers, 1, memory_order_relaxed);
            *result = 0;
            return 1;
        }
    }
    int32_t r = rc.forward(rc.user, pl, call->params, call->retval, &answered);
    if (!answered)
        r = rc_lib_error(CUSHIM_LIB_RUNTIME, r);
    if (id == rcs.id_get_device) {
        rc_gdev_known = r == 0 && dev_out != NULL;
        rc_gdev_set = rc_gdev_set && rc_gdev_known && *dev_out == rc_gdev && rc_gdev_gen == gen;
        if (rc_gdev_known) {
            rc_gdev = *dev_out;
            rc_gdev_gen = gen;
        }
    } else if (id == rcs.id_set_device) {
        int dev;
        rc_sets++;
        rc_get(call, "device", &dev, sizeof dev);
        if (r == 0)
            rc_device = dev;
        rc_gdev_known = rc_gdev_set = r == 0;   /* a failed set: the device is what it was, but asked again */
        rc_gdev = dev;
        rc_gdev_gen = gen;
    } else if (id == rcs.id_reset && r == 0) {
        int dev = rc_device;   /* its context is gone, and the modules with it */
        if (dev >= 0 && dev < RC_MAX_DEVICES)
            rc_forget(dev);
    } else if ((id == rcs.id_last || id == rcs.id_peek) && r == 0 && rc_last != 0) {
        r = rc_last;   /* a translated call failed since: the server's runtime never saw it */
        if (id == rcs.id_last)
            rc_last = 0;
    } else if (id == rcs.id_last) {
        rc_last = 0;
    } else if (id == rcs.id_peek && r != 0) {
        rc_last = r;   /* perhaps a batched call's error, which this answer took: cudaGetLastError gives it too */
    }
    *result = r;
    return 1;
}

/* ---- error codes by library ---- */
static const char *const rc_err_names[6][3] = {
    { "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported", "NVML_ERROR_NOT_SUPPORTED" },
    { "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidValue", "NVML_ERROR_INVALID_ARGUMENT" },
    { "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", "NVML_ERROR_FUNCTION_NOT_FOUND" },
    { "CUDA_ERROR_DEVICE_UNAVAILABLE", "cudaErrorDevicesUnavailable", "NVML_ERROR_GPU_IS_LOST" },
    { "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "NVML_ERROR_MEMORY" },
    { "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown", "NVML_ERROR_UNKNOWN" },
};

int32_t rc_lib_error(uint32_t library, int32_t driver_code)
{
    if (library == CUSHIM_LIB_CUBLAS || library == CUSHIM_LIB_CUBLASLT)
        return rp_cublas_error(driver_code);   /* cuBLAS's words (rp_blaserr.c) */
    if (library == CUSHIM_LIB_NCCL)
        return rp_nccl_error(driver_code);     /* NCCL's (rp_nccl.c) */
    if (rc.host == NULL || (library != CUSHIM_LIB_RUNTIME && library != CUSHIM_LIB_NVML))
        return driver_code;
    const int32_t *to = library == CUSHIM_LIB_RUNTIME ? rc.rt : rc.nvml;
    for (int i = 0; i < 6; i++)
        if (rc.drv[i] == driver_code)
            return to[i];
    return to[5];
}

int rc_init(const cushim_host *host, cushim_plugin *self, const rm_plans *plans, rc_forward_fn forward,
            rc_host_alloc_fn host_alloc, rc_host_free_fn host_free, void *user)
{
    rc.host = host;
    rc.self = self;
    rc.plans = plans;
    rc.forward = forward;
    rc.halloc = host_alloc;
    rc.hfree = host_free;
    rc.user = user;
    for (int i = 0; i < 6; i++) {
        rc.drv[i] = rm_result_code(rc.host, rc_err_names[i][0], -1);
        rc.rt[i] = rm_result_code(rc.host, rc_err_names[i][1], 999);
        rc.nvml[i] = rm_result_code(rc.host, rc_err_names[i][2], 999);
    }
    rc.e_inval = rm_result_code(rc.host, "cudaErrorInvalidValue", 1);
    rc.e_devfn = rm_result_code(rc.host, "cudaErrorInvalidDeviceFunction", 98);
    rc.e_kind = rm_result_code(rc.host, "cudaErrorInvalidMemcpyDirection", 21);
    rc.e_missing_config = rm_result_code(rc.host, "cudaErrorMissingConfiguration", 52);
    /* a launch configuration the driver refuses: CUDA 12's runtime says cudaErrorInvalidConfiguration, CUDA 13's
       passes the driver's word on by either launch path (an H100 with CUDA 13.0: 4096 or 0 threads, 0 blocks,
       too much shared memory, journal 2026-12-07) */
    rc.e_config = plans->cuda_version >= 13000 ? rc.e_inval : rm_result_code(rc.host, "cudaErrorInvalidConfiguration", 9);
    rc.e_oom = rm_result_code(rc.host, "cudaErrorMemoryAllocation", 2);
    rc.e_symbol = rm_result_code(rc.host, "cudaErrorSymbolNotFound", 500);
    rc.e_notsup = rm_result_code(rc.host, "cudaErrorNotSupported", 801);
    int have_kernels = 0;
    int bad = rc_api_of(&rcs.cfree, "cudaFree");
    bad |= rc_stub_init(&have_kernels);
    bad |= rc_launch_init();
    bad |= rc_func_init(have_kernels);   /* after rc_launch_init: it asks rc_launch_configs */
    bad |= rc_copy_init();
    rcs.id_set_device = rm_api_id(rc.host, "cudaSetDevice", UINT32_MAX);
    rcs.id_get_device = rm_api_id(rc.host, "cudaGetDevice", UINT32_MAX);
    rc_ctx_apis();
    rcs.id_reset = rm_api_id(rc.host, "cudaDeviceReset", UINT32_MAX);
    rcs.id_last = rm_api_id(rc.host, "cudaGetLastError", UINT32_MAX);
    rcs.id_peek = rm_api_id(rc.host, "cudaPeekAtLastError", UINT32_MAX);
    rcs.id_entry[0][0] = rm_api_id(rc.host, "cudaGetDriverEntryPoint", UINT32_MAX);
    rcs.id_entry[0][1] = rm_api_id(rc.host, "cudaGetDriverEntryPoint_ptsz", UINT32_MAX);
    rcs.id_entry[1][0] = rm_api_id(rc.host, "cudaGetDriverEntryPointByVersion", UINT32_MAX);
    rcs.id_entry[1][1] = rm_api_id(rc.host, "cudaGetDriverEntryPointByVersion_ptsz", UINT32_MAX);
    rcs.id_getproc[0] = rm_api_id(rc.host, "cuGetProcAddress", UINT32_MAX);
    rcs.id_getproc[1] = rm_api_id(rc.host, "cuGetProcAddress_v2", UINT32_MAX);
    if (bad) {
        free(rcs.ctx_api);
        rcs.ctx_api = NULL;
        rcs.nctx_api = 0;
        rc.host = NULL;
        return -1;
    }
    return 0;
}
