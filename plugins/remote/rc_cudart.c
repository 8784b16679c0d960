/*
 * rc_cudart.c - runtime-API programs over remoting: the part of the remote plugin that knows the CUDA
 * runtime (docs/remote.md, "Runtime-API programs").
 *
 * Runtime calls are forwarded at the runtime level (remote.c's hooks on lib:runtime, answered by the
 * server's own libcudart in the same back end as the driver calls), except what only the client can do:
 *
 *   - Registration. nvcc's code registers each fat binary and kernel from the program's constructors
 *     (__cudaRegisterFatBinary, __cudaRegisterFunction...) and launches through __cudaPushCallConfiguration /
 *     __cudaPopCallConfiguration and cudaLaunchKernel (CUDA 13: __cudaGetKernel and __cudaLaunchKernel).
 *     These are not public APIs (the shim does not wrap them), so this plugin exports them itself and is
 *     preloaded for runtime programs (LD_PRELOAD=.../remote.so): a host stub's address then maps to its fat
 *     binary and device name here, and the client's own libcudart never sees a registration.
 *   - Launches. A stub becomes a function of the server's driver once per device: cudaFree(NULL) (the
 *     runtime's context made current in the back end), cuModuleLoadData of its fat binary (sized from its
 *     header), cuModuleGetFunction by name; the launch is cuLaunchKernel[_ptsz], whose argument sizes the
 *     driver path asks of the server (cuFuncGetParamInfo). cudaGetFuncBySymbol returns that function (the server's
 *     CUfunction, as the client's cuModuleGetFunction gives it); cudaGetKernel the stub's kernel (its fat binary
 *     loaded once as a library there, cuLibraryGetKernel), which the calls that take a stub take too.
 *   - Copies. cudaMemcpy[Async][_ptds/_ptsz] by their kind: cuMemcpyHtoD/DtoH/DtoD[Async] (the host side is
 *     this process's memory, carried in the message), in pieces of at most RC_CHUNK bytes; host to host here.
 *     cudaMemcpyDefault: each side is what the server's cudaPointerGetAttributes says it is (device or managed
 *     memory: the server's; anything else: this process's), refused when a "device" address is also mapped
 *     here (two address spaces, one number: which one the program meant is unknown).
 *   - Pinned host memory (cudaMallocHost, cudaHostAlloc, cudaFreeHost) is remote.c's (rp_shm.c): a region
 *     shared with the back end on the same host, which registers it with its driver, so that a copy from or to
 *     it is one DMA; this process's own page-aligned memory otherwise (TCP), copied through the socket.
 *   - Errors of those translated calls are kept per thread and reported by cudaGetLastError and
 *     cudaPeekAtLastError after the server's own (the server's runtime never saw them).
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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rc_cudart.h"
#include "rp_cublas.h"
#include "rp_managed.h"
#include "rp_nccl.h"
#include "rm_names.h"

#define RC_EXPORT __attribute__((visibility("default")))
#define RC_MAX_DEVICES 64
#define RC_MAX_CONFIGS 16
#define RC_CHUNK (32u << 20)        /* bytes per copy message (the wire's bound is RM_MAX_PAYLOAD) */
#define RC_WRAPPER_MAGIC 0x466243b1 /* nvcc's fat binary wrapper */

typedef struct rc_dim3 {
    unsigned x, y, z;
} rc_dim3;

/* ---- the registry: filled from the program's constructors, before the plugin's init ---- */
typedef struct rc_wrapper {          /* the fat binary's wrapper as nvcc emits it */
    int magic, version;
    const void *data;                /* the fat binary */
    void *filename_or_fatbins;
} rc_wrapper;

typedef struct rc_binary {
    const void *image;
    int dead;                        /* unregistered */
    int version;                     /* the wrapper's: 2 is relocatable device code, linked by the runtime */
    uint64_t module[RC_MAX_DEVICES]; /* the server's CUmodule per device, 0: not loaded */
    uint64_t library;                /* the server's CUlibrary (cudaGetKernel), 0: not loaded */
} rc_binary;

typedef struct rc_function {
    const void *host;                /* NULL: free slot */
    uint32_t binary;
    char *name;
    uint64_t *func;                  /* RC_MAX_DEVICES server CUfunctions, allocated at the first launch */
    int max_threads;                 /* its threads per block (cuFuncGetAttribute), 0: not asked yet */
    uint64_t kernel;                 /* the server's CUkernel (cudaGetKernel), 0: not asked yet */
} rc_function;

static pthread_mutex_t rc_lock = PTHREAD_MUTEX_INITIALIZER;   /* the registry and the caches */
static pthread_mutex_t rc_slow = PTHREAD_MUTEX_INITIALIZER;   /* one stub resolved at a time */
static rc_binary **rc_bins;
static uint32_t rc_nbins, rc_capbins;
static rc_function *rc_funcs;        /* open addressing on the stub's address */
static uint32_t rc_nfuncs, rc_capfuncs;
/* The kernels cudaGetKernel handed out, each with its stub: the runtime's calls that take a stub take such a
   cudaKernel_t too ("assumed to be a cudaKernel_t and used as is"). Few: only those a program asked for. */
typedef struct rc_kernel {
    uint64_t kernel;
    const void *host;
} rc_kernel;
static rc_kernel *rc_kernels;
static uint32_t rc_nkernels, rc_capkernels;

typedef struct rc_config {
    rc_dim3 grid, block;
    size_t shmem;
    void *stream;
} rc_config;
static __thread rc_config rc_configs[RC_MAX_CONFIGS];
static __thread int rc_nconfigs;
static __thread int32_t rc_last;     /* the last error of a translated call, for cudaGetLastError */
/* The client thread's current device (cudaSetDevice), as the runtime keeps one per thread; the server runs each
   client thread's calls on a thread of its own, where the runtime keeps the same. */
static __thread int rc_device;
/* cudaGetDevice's answer for this thread, valid while rc.dev_gen is rc_gdev_gen (rc_note_api); rc_gdev_set: it
   is the device this thread's last cudaSetDevice made current, with its primary context */
static __thread int rc_gdev, rc_gdev_known, rc_gdev_set;
static __thread uint64_t rc_gdev_gen;
static __thread uint64_t rc_sets;    /* cudaSetDevice calls this thread forwarded (rc_device_epoch) */
/* The devices whose runtime context this client thread's server thread was made to take (cudaFree(NULL)), as
   of generation rc_ctx_seen of rc.ctx_gen. */
static __thread uint64_t rc_ctx_mask, rc_ctx_seen;

/* ---- the plugin's side (rc_init) ---- */
typedef struct rc_api {
    const cushim_api_info *a;
    const rm_plan *pl;
} rc_api;

enum { RC_HTOD, RC_DTOH, RC_DTOD, RC_NCOPY };

static struct {
    const cushim_host *host;
    cushim_plugin *self;
    const rm_plans *plans;
    rc_forward_fn forward;
    rc_host_alloc_fn halloc;
    rc_host_free_fn hfree;
    void *user;
    _Atomic uint64_t ctx_gen;          /* bumped when contexts go (a device reset): rc_ctx_mask starts over */
    _Atomic uint64_t dev_gen;          /* bumped by a call that may change a thread's current context */
    _Atomic uint64_t local_answers;    /* cudaGetDevice answered here */
    uint8_t *ctx_api;                  /* per API id: 1 when it bumps dev_gen */
    uint32_t nctx_api, id_get_device;
    rc_api load, getfn, launch[2], cfree, copy[2][2][RC_NCOPY];   /* copy[async][per_thread][kind] */
    rc_api fattr, fsetattr, occupancy, ptrattr;
    rc_api libload, libkernel;         /* cuLibraryLoadData, cuLibraryGetKernel: CUDA 12 on (cudaGetKernel) */
    rc_api paraminfo;                  /* cuFuncGetParamInfo: CUDA 12.4 on (cudaFuncGetParamInfo) */
    uint32_t id_fattr, id_fsetattr, id_occ[2], id_host_alloc[2], id_host_free, id_funcsym, id_getkernel;
    uint32_t id_fname, id_fparam;      /* cudaFuncGetName, cudaFuncGetParamInfo */
    int32_t e_oom;
    int32_t e_inval, e_devfn, e_kind, e_missing_config, e_config;
    uint32_t id_set_device, id_reset, id_last, id_peek, id_launch[2], id_copy[2][2];
    uint32_t id_entry[2][2];           /* cudaGetDriverEntryPoint[ByVersion][_ptsz]: [by_version][per_thread] */
    uint32_t id_getproc[2];            /* cuGetProcAddress, cuGetProcAddress_v2 */
    int32_t e_symbol;
    int32_t drv[6], rt[6], nvml[6];   /* rc_lib_error's table */
} rc;

static uint32_t rc_hash(const void *p, uint32_t cap)
{
    return (uint32_t)(((uintptr_t)p >> 4) * 2654435761u) & (cap - 1);
}

static rc_function *rc_find(const void *host)
{
    if (rc_capfuncs == 0 || host == NULL)   /* NULL marks a free slot: never a stub */
        return NULL;
    for (uint32_t i = rc_hash(host, rc_capfuncs), k = 0; k < rc_capfuncs; k++, i = (i + 1) & (rc_capfuncs - 1)) {
        if (rc_funcs[i].host == host)
            return &rc_funcs[i];
        if (rc_funcs[i].host == NULL)
            return NULL;
    }
    return NULL;
}

/* The registered stub 'p' is, or whose kernel it is (cudaGetKernel's handle); NULL: neither. Under rc_lock. */
static rc_function *rc_find_any(const void *p)
{
    rc_function *e = rc_find(p);
    for (uint32_t i = 0; e == NULL && p != NULL && i < rc_nkernels; i++)
        if (rc_kernels[i].kernel == (uint64_t)(uintptr_t)p)
            e = rc_find(rc_kernels[i].host);
    return e;
}

static int rc_grow(void)
{
    uint32_t cap = rc_capfuncs ? rc_capfuncs * 2 : 1024;
    rc_function *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return -1;
    for (uint32_t k = 0; k < rc_capfuncs; k++) {
        if (rc_funcs[k].host == NULL)
            continue;
        uint32_t i = rc_hash(rc_funcs[k].host, cap);
        while (t[i].host != NULL)
            i = (i + 1) & (cap - 1);
        t[i] = rc_funcs[k];
    }
    free(rc_funcs);
    rc_funcs = t;
    rc_capfuncs = cap;
    return 0;
}

/* The handle nvcc's code keeps for a fat binary: the address of its slot (stable: slots are never moved). */
RC_EXPORT void **__cudaRegisterFatBinary(void *fatCubin);
void **__cudaRegisterFatBinary(void *fatCubin)
{
    const rc_wrapper *w = fatCubin;
    void **h = NULL;
    if (w == NULL || w->magic != RC_WRAPPER_MAGIC || w->data == NULL)
        return NULL;
    pthread_mutex_lock(&rc_lock);
    if (rc_nbins == rc_capbins) {
        uint32_t cap = rc_capbins ? rc_capbins * 2 : 64;
        rc_binary **t = realloc(rc_bins, cap * sizeof *t);
        if (t != NULL) {
            rc_bins = t;
            rc_capbins = cap;
        }
    }
    rc_binary *b = rc_nbins < rc_capbins ? calloc(1, sizeof *b) : NULL;
    if (b != NULL) {
        b->image = w->data;
        b->version = w->version;
        rc_bins[rc_nbins++] = b;
        h = (void **)b;
    }
    pthread_mutex_unlock(&rc_lock);
    return h;
}

static int rc_binary_index(void **handle, uint32_t *index)
{
    /* a binary's functions are registered right after it (PyTorch: thousands of binaries): the last one first */
    if (rc_nbins != 0 && (void **)rc_bins[rc_nbins - 1] == handle) {
        *index = rc_nbins - 1;
        return 1;
    }
    for (uint32_t i = 0; i < rc_nbins; i++)
        if ((void **)rc_bins[i] == handle) {
            *index = i;
            return 1;
        }
    return 0;
}

RC_EXPORT void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;   /* the binary is loaded on the server at its first launch */
}

RC_EXPORT void __cudaUnregisterFatBinary(void **handle);
void __cudaUnregisterFatBinary(void **handle)
{
    uint32_t i;
    pthread_mutex_lock(&rc_lock);
    if (rc_binary_index(handle, &i))
        rc_bins[i]->dead = 1;   /* its modules live in the back end, which ends with the connection */
    pthread_mutex_unlock(&rc_lock);
}

RC_EXPORT char __cudaInitModule(void **handle);
char __cudaInitModule(void **handle)
{
    (void)handle;
    return 1;
}

RC_EXPORT void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                                      int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize);
void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize)
{
    uint32_t b;
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    if (hostFun == NULL || deviceName == NULL)
        return;
    pthread_mutex_lock(&rc_lock);
    if (rc_binary_index(handle, &b) && rc_find(hostFun) == NULL &&
        ((rc_nfuncs + 1) * 2 <= rc_capfuncs || rc_grow() == 0)) {
        char *name = strdup(deviceName);
        if (name != NULL) {
            uint32_t i = rc_hash(hostFun, rc_capfuncs);
            while (rc_funcs[i].host != NULL)
                i = (i + 1) & (rc_capfuncs - 1);
            rc_funcs[i] = (rc_function){ .host = hostFun, .binary = b, .name = name };
            rc_nfuncs++;
        }
    }
    pthread_mutex_unlock(&rc_lock);
}

/* Variables, textures and surfaces: accepted (their symbol APIs are not forwarded: docs/limitations.md). */
RC_EXPORT void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                                 size_t size, int constant, int global);
void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    (void)handle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)ext, (void)size, (void)constant,
        (void)global;
}

RC_EXPORT void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress,
                                        const char *deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global)
{
    (void)handle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext, (void)size,
        (void)constant, (void)global;
}

RC_EXPORT void __cudaRegisterTexture(void **handle, const void *hostVar, const void **deviceAddress,
                                     const char *deviceName, int dim, int norm, int ext);
void __cudaRegisterTexture(void **handle, const void *hostVar, const void **deviceAddress, const char *deviceName,
                           int dim, int norm, int ext)
{
    (void)handle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)dim, (void)norm, (void)ext;
}

RC_EXPORT void __cudaRegisterSurface(void **handle, const void *hostVar, const void **deviceAddress,
                                     const char *deviceName, int dim, int ext);
void __cudaRegisterSurface(void **handle, const void *hostVar, const void **deviceAddress, const char *deviceName,
                           int dim, int ext)
{
    (void)handle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)dim, (void)ext;
}

/* <<<grid, block, shmem, stream>>>: pushed by the caller, popped by the stub before it launches. */
RC_EXPORT unsigned __cudaPushCallConfiguration(rc_dim3 gridDim, rc_dim3 blockDim, size_t sharedMem, void *stream);
unsigned __cudaPushCallConfiguration(rc_dim3 gridDim, rc_dim3 blockDim, size_t sharedMem, void *stream)
{
    if (rc_nconfigs == RC_MAX_CONFIGS)
        return 1;
    rc_configs[rc_nconfigs++] = (rc_config){ gridDim, blockDim, sharedMem, stream };
    return 0;
}

RC_EXPORT int __cudaPopCallConfiguration(rc_dim3 *gridDim, rc_dim3 *blockDim, size_t *sharedMem, void *stream);
int __cudaPopCallConfiguration(rc_dim3 *gridDim, rc_dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (rc_nconfigs == 0)
        return rc.host ? rc.e_missing_config : 52;   /* cudaErrorMissingConfiguration */
    rc_config c = rc_configs[--rc_nconfigs];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shmem;
    memcpy(stream, &c.stream, sizeof c.stream);
    return 0;
}

/* ---- calls of the server's driver and runtime, by metadata (parameters by index) ---- */
static int rc_api_of(rc_api *api, const char *name)
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

static void rc_put(const rc_api *api, uint8_t *params, uint32_t index, const void *v, size_t n)
{
    const cushim_param_info *p = rc.host->api_param(api->a, index);
    if (p != NULL && p->size == n)
        memcpy(params + p->offset, v, n);
}

static void rc_get(const cushim_call *call, const char *name, void *v, size_t n)
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
static int32_t rc_call(const rc_api *api, uint8_t *params)
{
    int32_t ret = -1;
    int answered;
    int32_t r = rc.forward(rc.user, api->pl, params, &ret, &answered);
    return answered ? ret : r;
}

static int32_t rc_fail(int32_t r)
{
    if (r != 0)
        rc_last = r;
    return r;
}

static int32_t rc_context(void);

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
static int32_t rc_context(void)
{
    int dev = rc_device;
    uint64_t gen = atomic_load(&rc.ctx_gen);
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
    rc_put(&rc.cfree, params, 0, &null, sizeof null);
    int32_t r = rc_call(&rc.cfree, params);
    if (r == 0)
        rc_ctx_mask |= 1ull << dev;
    return r;
}

/* The server's function for a stub on the current device: module and function resolved once. */
static int32_t rc_resolve(const void *stub, uint64_t *f)
{
    int dev = rc_device;
    int32_t r = rc_context();
    if (r != 0)
        return r;
    if (dev < 0 || dev >= RC_MAX_DEVICES)
        return rc.e_inval;
    pthread_mutex_lock(&rc_lock);
    rc_function *e = rc_find_any(stub);
    if (e != NULL)
        stub = e->host;   /* a cudaGetKernel handle: its stub's function */
    if (e != NULL && e->func != NULL && e->func[dev] != 0) {
        *f = e->func[dev];
        pthread_mutex_unlock(&rc_lock);
        return 0;
    }
    pthread_mutex_unlock(&rc_lock);
    if (e == NULL)
        return rc.e_devfn;
    pthread_mutex_lock(&rc_slow);
    pthread_mutex_lock(&rc_lock);
    e = rc_find(stub);
    rc_binary *b = rc_bins[e->binary];
    const void *image = b->image;
    const char *name = e->name;
    uint64_t mod = b->module[dev], fn = e->func ? e->func[dev] : 0;
    int dead = b->dead, version = b->version;
    pthread_mutex_unlock(&rc_lock);
    static _Atomic int warned_link;
    if (version != 1 && mod == 0 && atomic_exchange(&warned_link, 1) == 0)
        rc.host->log(rc.self, CUSHIM_LOG_WARN, "kernel %s: its fat binary's wrapper is version %d (relocatable device "
                     "code, which the runtime links with other files' code): loaded as it is, it fails when it "
                     "calls device functions of other files", name, version);
    r = dead ? rc.e_devfn : 0;
    uint8_t params[256];
    if (r == 0 && fn == 0 && mod == 0) {
        uint64_t *pm = &mod;
        memset(params, 0, sizeof params);
        rc_put(&rc.load, params, 0, &pm, sizeof pm);
        rc_put(&rc.load, params, 1, &image, sizeof image);
        r = rc_call(&rc.load, params);
    }
    if (r == 0 && fn == 0) {
        uint64_t *pf = &fn;
        memset(params, 0, sizeof params);
        rc_put(&rc.getfn, params, 0, &pf, sizeof pf);
        rc_put(&rc.getfn, params, 1, &mod, sizeof mod);
        rc_put(&rc.getfn, params, 2, &name, sizeof name);
        r = rc_call(&rc.getfn, params);
    }
    if (r == 0) {
        pthread_mutex_lock(&rc_lock);
        e = rc_find(stub);
        b->module[dev] = mod;
        if (e->func == NULL)
            e->func = calloc(RC_MAX_DEVICES, sizeof *e->func);
        if (e->func != NULL)
            e->func[dev] = fn;
        pthread_mutex_unlock(&rc_lock);
        *f = fn;
    }
    pthread_mutex_unlock(&rc_slow);
    return r;
}

/* A function's threads per block, asked of the server once (0: unknown). */
static int rc_max_threads(const void *stub, uint64_t f)
{
    pthread_mutex_lock(&rc_lock);
    rc_function *e = rc_find_any(stub);
    int max = e ? e->max_threads : 0;
    pthread_mutex_unlock(&rc_lock);
    if (max != 0)
        return max;
    uint8_t params[256] = {0};
    int v = 0, *pv = &v;
    uint32_t a = 0;   /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    rc_put(&rc.fattr, params, 0, &pv, sizeof pv);
    rc_put(&rc.fattr, params, 1, &a, sizeof a);
    rc_put(&rc.fattr, params, 2, &f, sizeof f);
    if (rc_call(&rc.fattr, params) != 0 || v <= 0)
        return 0;
    pthread_mutex_lock(&rc_lock);
    if ((e = rc_find_any(stub)) != NULL)
        e->max_threads = v;
    pthread_mutex_unlock(&rc_lock);
    return v;
}

static int32_t rc_launch(const void *stub, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream,
                         int per_thread)
{
    uint64_t f = 0;
    if (rc.host == NULL)
        return 3;   /* cudaErrorInitializationError: the plugin was preloaded but not loaded as a plugin */
    if (shmem > UINT32_MAX)
        return rc_fail(rc.e_inval);
    int32_t r = rc_resolve(stub, &f);
    if (r != 0)
        return rc_fail(r);
    /* the configuration, checked here as the runtime does before the driver sees it: launches may be batched
       (remote.c), and a batched call's error would come back later, from another call */
    int max = rc_max_threads(stub, f);
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0 ||
        (max > 0 && (uint64_t)b.x * b.y * b.z > (uint64_t)max))
        return rc_fail(rc.e_config);
    const rc_api *api = &rc.launch[per_thread];
    uint8_t params[256] = {0};
    unsigned v[6] = { g.x, g.y, g.z, b.x, b.y, b.z }, sh = (unsigned)shmem;
    void *extra = NULL;
    rc_put(api, params, 0, &f, sizeof f);
    for (uint32_t i = 0; i < 6; i++)
        rc_put(api, params, 1 + i, &v[i], sizeof v[i]);
    rc_put(api, params, 7, &sh, sizeof sh);
    rc_put(api, params, 8, &stream, sizeof stream);
    rc_put(api, params, 9, &args, sizeof args);
    rc_put(api, params, 10, &extra, sizeof extra);
    r = rc_call(api, params);
    return rc_fail(r == rc.drv[1] ? rc.e_config : r);   /* the runtime's word for a launch the driver refuses */
}

/* CUDA 13's launch path (nvcc without __NV_LEGACY_LAUNCH): a kernel handle per stub, then a launch by it. */
RC_EXPORT int __cudaGetKernel(void **kernel, const void *stub);
int __cudaGetKernel(void **kernel, const void *stub)
{
    if (kernel == NULL)
        return 1;   /* cudaErrorInvalidValue */
    *kernel = (void *)stub;   /* this client's kernel handle is the stub's address */
    return 0;
}

RC_EXPORT int __cudaLaunchKernel(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream);
int __cudaLaunchKernel(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream)
{
    return rc_launch(kernel, g, b, args, shmem, stream, 0);
}

RC_EXPORT int __cudaLaunchKernel_ptsz(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream);
int __cudaLaunchKernel_ptsz(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream)
{
    return rc_launch(kernel, g, b, args, shmem, stream, 1);
}

/* cudaFuncGetAttributes: struct cudaFuncAttributes (CUDA 11 to 13: three size_t, then ints), field by field from
   cuFuncGetAttribute; the attribute numbers 0-9 name the fields in this order but for the first five. */
static int32_t rc_func_attributes(const cushim_call *call)
{
    static const struct {
        uint16_t offset, size, attrib;
    } map[] = { { 0, 8, 1 }, { 8, 8, 2 }, { 16, 8, 3 }, { 24, 4, 0 }, { 28, 4, 4 }, { 32, 4, 5 }, { 36, 4, 6 },
                { 40, 4, 7 }, { 44, 4, 8 }, { 48, 4, 9 } };
    uint8_t *attr;
    const void *func;
    uint64_t f;
    rc_get(call, "attr", &attr, sizeof attr);
    rc_get(call, "func", &func, sizeof func);
    if (attr == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc_resolve(func, &f);
    if (r != 0)
        return rc_fail(r);
    memset(attr, 0, 144);   /* rc_init checked the struct's size */
    for (size_t i = 0; i < sizeof map / sizeof map[0] && r == 0; i++) {
        uint8_t params[256] = {0};
        int v = 0, *pv = &v;
        uint32_t a = map[i].attrib;
        rc_put(&rc.fattr, params, 0, &pv, sizeof pv);
        rc_put(&rc.fattr, params, 1, &a, sizeof a);
        rc_put(&rc.fattr, params, 2, &f, sizeof f);
        if ((r = rc_call(&rc.fattr, params)) == 0) {
            int64_t wide = v;
            memcpy(attr + map[i].offset, map[i].size == 8 ? (const void *)&wide : (const void *)&v, map[i].size);
        }
    }
    return rc_fail(r);
}

/* cudaFuncSetAttribute and the occupancy calculator: the stub's function, then the driver's call (the runtime's
   attribute numbers are the driver's) */
static int32_t rc_func_call(const cushim_call *call, int occupancy)
{
    const void *func;
    uint64_t f;
    uint8_t params[256] = {0};
    rc_get(call, "func", &func, sizeof func);
    int32_t r = rc_resolve(func, &f);
    if (r != 0)
        return rc_fail(r);
    if (occupancy) {
        int *nb;
        int bs;
        size_t dyn;
        unsigned flags = 0;
        rc_get(call, "numBlocks", &nb, sizeof nb);
        rc_get(call, "blockSize", &bs, sizeof bs);
        rc_get(call, "dynamicSMemSize", &dyn, sizeof dyn);
        rc_get(call, "flags", &flags, sizeof flags);
        rc_put(&rc.occupancy, params, 0, &nb, sizeof nb);
        rc_put(&rc.occupancy, params, 1, &f, sizeof f);
        rc_put(&rc.occupancy, params, 2, &bs, sizeof bs);
        rc_put(&rc.occupancy, params, 3, &dyn, sizeof dyn);
        rc_put(&rc.occupancy, params, 4, &flags, sizeof flags);
        return rc_fail(rc_call(&rc.occupancy, params));
    }
    int32_t attr, value;
    rc_get(call, "attr", &attr, sizeof attr);
    rc_get(call, "value", &value, sizeof value);
    rc_put(&rc.fsetattr, params, 0, &f, sizeof f);
    rc_put(&rc.fsetattr, params, 1, &attr, sizeof attr);
    rc_put(&rc.fsetattr, params, 2, &value, sizeof value);
    return rc_fail(rc_call(&rc.fsetattr, params));
}

/* cudaGetFuncBySymbol: the function a launch of the stub uses on the thread's device (rc_resolve: its module loaded
   on the server if not yet, cuModuleGetFunction), as the server's CUfunction - the value the program's own
   cuModuleGetFunction gives here (driver handles cross as they are), so cuFuncGetAttribute, cuLaunchKernel... on
   it are forwarded like any. An unregistered address: cudaErrorInvalidDeviceFunction, as for its launch. */
static int32_t rc_func_by_symbol(const cushim_call *call)
{
    void **out;
    const void *stub;
    uint64_t f = 0;
    rc_get(call, "functionPtr", &out, sizeof out);
    rc_get(call, "symbolPtr", &stub, sizeof stub);
    if (out == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc_resolve(stub, &f);
    if (r != 0)
        return rc_fail(r);
    *out = (void *)(uintptr_t)f;
    return 0;
}

/* cudaGetKernel: the stub's kernel as the server's CUkernel (a cudaKernel_t is one): its fat binary loaded once as a
   library there (cuLibraryLoadData: context-independent, so once per process, not per device), cuLibraryGetKernel
   by name. The driver's calls on it (cuKernelGetFunction, cuKernelGetAttribute...) are forwarded as they are; the
   runtime's calls that take a stub take it too (rc_find_any). An unregistered address:
   cudaErrorInvalidDeviceFunction. */
static int32_t rc_get_kernel(const cushim_call *call)
{
    void **out;
    const void *stub;
    rc_get(call, "kernelPtr", &out, sizeof out);
    rc_get(call, "entryFuncAddr", &stub, sizeof stub);
    if (out == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc_context();   /* the runtime's initialisation, as before any of its driver calls */
    if (r != 0)
        return rc_fail(r);
    pthread_mutex_lock(&rc_slow);
    pthread_mutex_lock(&rc_lock);
    rc_function *e = rc_find(stub);
    rc_binary *b = e != NULL ? rc_bins[e->binary] : NULL;
    uint64_t k = e != NULL ? e->kernel : 0, lib = b != NULL ? b->library : 0;
    const void *image = b != NULL ? b->image : NULL;
    const char *name = e != NULL ? e->name : NULL;
    r = e == NULL || b->dead ? rc.e_devfn : 0;
    pthread_mutex_unlock(&rc_lock);
    uint8_t params[256];
    if (r == 0 && k == 0 && lib == 0) {
        uint64_t *pl = &lib;
        memset(params, 0, sizeof params);
        rc_put(&rc.libload, params, 0, &pl, sizeof pl);
        rc_put(&rc.libload, params, 1, &image, sizeof image);
        r = rc_call(&rc.libload, params);
    }
    if (r == 0 && k == 0) {
        uint64_t *pk = &k;
        memset(params, 0, sizeof params);
        rc_put(&rc.libkernel, params, 0, &pk, sizeof pk);
        rc_put(&rc.libkernel, params, 1, &lib, sizeof lib);
        rc_put(&rc.libkernel, params, 2, &name, sizeof name);
        r = rc_call(&rc.libkernel, params);
    }
    if (r == 0) {
        pthread_mutex_lock(&rc_lock);
        e = rc_find(stub);   /* the table may have grown meanwhile (a registration on another thread) */
        b->library = lib;
        if (e->kernel != k && rc_nkernels == rc_capkernels) {
            uint32_t cap = rc_capkernels ? rc_capkernels * 2 : 16;
            rc_kernel *t = realloc(rc_kernels, cap * sizeof *t);
            if (t != NULL) {
                rc_kernels = t;
                rc_capkernels = cap;
            }
        }
        if (e->kernel != k && rc_nkernels < rc_capkernels) {
            rc_kernels[rc_nkernels++] = (rc_kernel){ .kernel = k, .host = stub };
            e->kernel = k;
        } else if (e->kernel != k) {
            r = rc.e_oom;   /* not kept: the runtime's calls could not take it */
        }
        pthread_mutex_unlock(&rc_lock);
    }
    pthread_mutex_unlock(&rc_slow);
    if (r != 0)
        return rc_fail(r == rc.drv[4] ? rc.e_oom : r);
    *out = (void *)(uintptr_t)k;
    return 0;
}

/* cudaFuncGetName: the name the stub was registered with (nvcc's device name, which the driver's cuFuncGetName
   gives too), kept here for the process's life; cudaFuncGetParamInfo: the server's cuFuncGetParamInfo on the
   stub's function (its outputs carried back as that driver call's). */
static int32_t rc_func_name(const cushim_call *call)
{
    const char **out;
    const void *func;
    uint64_t f;
    rc_get(call, "name", &out, sizeof out);
    rc_get(call, "func", &func, sizeof func);
    if (out == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc_resolve(func, &f);   /* registered and loadable, as the runtime's answer needs */
    if (r != 0)
        return rc_fail(r);
    pthread_mutex_lock(&rc_lock);
    rc_function *e = rc_find_any(func);
    const char *name = e != NULL ? e->name : NULL;
    pthread_mutex_unlock(&rc_lock);
    if (name == NULL)
        return rc_fail(rc.e_devfn);
    *out = name;
    return 0;
}

static int32_t rc_func_param_info(const cushim_call *call)
{
    const void *func;
    size_t index, *offset, *size;
    uint64_t f;
    uint8_t params[256] = {0};
    rc_get(call, "func", &func, sizeof func);
    rc_get(call, "paramIndex", &index, sizeof index);
    rc_get(call, "paramOffset", &offset, sizeof offset);
    rc_get(call, "paramSize", &size, sizeof size);
    int32_t r = rc_resolve(func, &f);
    if (r != 0)
        return rc_fail(r);
    rc_put(&rc.paraminfo, params, 0, &f, sizeof f);
    rc_put(&rc.paraminfo, params, 1, &index, sizeof index);
    rc_put(&rc.paraminfo, params, 2, &offset, sizeof offset);
    rc_put(&rc.paraminfo, params, 3, &size, sizeof size);
    return rc_fail(rc_call(&rc.paraminfo, params));
}

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
    rc_put(&rc.ptrattr, params, 0, &pa, sizeof pa);
    rc_put(&rc.ptrattr, params, 1, &p, sizeof p);
    if (rc_call(&rc.ptrattr, params) != 0)
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
    const rc_api *api = &rc.copy[async][per_thread][kind - 1];
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
    void *v2 = rc.id_getproc[1] != UINT32_MAX ? rc.host->real(rc.id_getproc[1]) : NULL;
    void *v1 = rc.id_getproc[0] != UINT32_MAX ? rc.host->real(rc.id_getproc[0]) : NULL;
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
    pthread_mutex_lock(&rc_lock);
    for (int d = 0; d < RC_MAX_DEVICES; d++) {
        if (dev >= 0 && d != dev)
            continue;
        for (uint32_t i = 0; i < rc_nbins; i++)
            rc_bins[i]->module[d] = 0;
        for (uint32_t i = 0; i < rc_capfuncs; i++)
            if (rc_funcs[i].func != NULL)
                rc_funcs[i].func[d] = 0;
    }
    if (dev < 0) {   /* a new back end: its libraries and kernels are not the old one's (a device reset keeps
                        them: a library is context-independent) */
        for (uint32_t i = 0; i < rc_nbins; i++)
            rc_bins[i]->library = 0;
        for (uint32_t i = 0; i < rc_capfuncs; i++)
            rc_funcs[i].kernel = 0;
        rc_nkernels = 0;
    }
    atomic_fetch_add(&rc.ctx_gen, 1);
    pthread_mutex_unlock(&rc_lock);
}

void rc_fork_child(void)
{
    pthread_mutex_init(&rc_lock, NULL);
    pthread_mutex_init(&rc_slow, NULL);
    rc_forget(-1);
    rc_ctx_mask = 0;   /* the child's one thread: the one that forked */
    atomic_fetch_add(&rc.dev_gen, 1);   /* its back end has its own current device */
}

void rc_note_api(uint32_t id)
{
    if (id < rc.nctx_api && rc.ctx_api[id])
        atomic_fetch_add(&rc.dev_gen, 1);
}

void rc_device_epoch(uint64_t epoch[2])
{
    epoch[0] = atomic_load(&rc.dev_gen);
    epoch[1] = rc_sets;
}

uint64_t rc_local_answers(void)
{
    return atomic_load(&rc.local_answers);
}

/* The APIs after which cudaGetDevice is asked again (rc_note_api). */
static void rc_ctx_apis(void)
{
    static const char *const rt[] = { "cudaDeviceReset", "cudaThreadExit", "cudaSetValidDevices", "cudaInitDevice" };
    rc.nctx_api = rc.plans->id_limit;
    if ((rc.ctx_api = calloc(rc.nctx_api ? rc.nctx_api : 1, 1)) == NULL) {
        rc.nctx_api = 0;
        rc.id_get_device = UINT32_MAX;   /* nothing followed: always asked */
        return;
    }
    for (uint32_t id = 0; id < rc.nctx_api; id++) {
        const rm_plan *pl = rm_plan_of(rc.plans, id);
        const char *n = pl != NULL ? pl->info->name : NULL;
        if (n == NULL)
            continue;
        if ((pl->info->library == CUSHIM_LIB_DRIVER || pl->info->library == CUSHIM_LIB_RUNTIME) &&
            strstr(n, "Ctx") != NULL && strstr(n, "Get") == NULL)
            rc.ctx_api[id] = 1;
        for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
            if (pl->info->library == CUSHIM_LIB_RUNTIME && strcmp(n, rt[i]) == 0)
                rc.ctx_api[id] = 1;
    }
}

int rc_pre(cushim_call *call, const rm_plan *pl, int32_t *result)
{
    uint32_t id = call->api_id;
    int answered;
    if (rc.host == NULL)
        return 0;
    for (int pt = 0; pt < 2; pt++) {
        if (id == rc.id_launch[pt]) {
            const void *func;
            rc_dim3 g, b;
            void **args;
            size_t shmem;
            void *stream;
            rc_get(call, "func", &func, sizeof func);
            rc_get(call, "gridDim", &g, sizeof g);
            rc_get(call, "blockDim", &b, sizeof b);
            rc_get(call, "args", &args, sizeof args);
            rc_get(call, "sharedMem", &shmem, sizeof shmem);
            rc_get(call, "stream", &stream, sizeof stream);
            *result = rc_launch(func, g, b, args, shmem, stream, pt);
            return 1;
        }
        for (int async = 0; async < 2; async++)
            if (id == rc.id_copy[async][pt]) {
                *result = rc_memcpy(call, async, pt);
                return 1;
            }
    }
    if (id == rc.id_host_alloc[0] || id == rc.id_host_alloc[1] || id == rc.id_host_free) {
        *result = id == rc.id_host_free ? rc_host_free(call)
                                        : rc_host_alloc(call, id == rc.id_host_alloc[0] ? "ptr" : "pHost");
        return 1;
    }
    for (int v = 0; v < 2; v++)
        for (int pt = 0; pt < 2; pt++)
            if (id == rc.id_entry[v][pt]) {
                *result = rc_entry_point(call, v);
                return 1;
            }
    if (id == rc.id_fname || id == rc.id_fparam) {
        *result = id == rc.id_fname ? rc_func_name(call) : rc_func_param_info(call);
        return 1;
    }
    if (id == rc.id_funcsym || id == rc.id_getkernel) {
        *result = id == rc.id_funcsym ? rc_func_by_symbol(call) : rc_get_kernel(call);
        return 1;
    }
    if (id == rc.id_fattr || id == rc.id_fsetattr || id == rc.id_occ[0] || id == rc.id_occ[1]) {
        *result = id == rc.id_fattr ? rc_func_attributes(call) : rc_func_call(call, id != rc.id_fsetattr);
        return 1;
    }
    if (id != rc.id_set_device && id != rc.id_reset && id != rc.id_last && id != rc.id_peek &&
        id != rc.id_get_device)
        return 0;
    uint64_t gen = atomic_load(&rc.dev_gen);   /* before the call: a change meanwhile voids its answer */
    int *dev_out = NULL;
    if (id == rc.id_get_device) {
        rc_get(call, "device", &dev_out, sizeof dev_out);
        if (dev_out != NULL && rc_gdev_known && rc_gdev_gen == gen) {
            *dev_out = rc_gdev;
            atomic_fetch_add_explicit(&rc.local_answers, 1, memory_order_relaxed);
            *result = 0;
            return 1;
        }
    } else if (id == rc.id_set_device && rc_gdev_known && rc_gdev_set && rc_gdev_gen == gen) {
        int dev;
        rc_get(call, "device", &dev, sizeof dev);
        if (dev == rc_gdev) {   /* already current, its context too: setting it again changes nothing */
            atomic_fetch_add_explicit(&rc.local_answers, 1, memory_order_relaxed);
            *result = 0;
            return 1;
        }
    }
    int32_t r = rc.forward(rc.user, pl, call->params, call->retval, &answered);
    if (!answered)
        r = rc_lib_error(CUSHIM_LIB_RUNTIME, r);
    if (id == rc.id_get_device) {
        rc_gdev_known = r == 0 && dev_out != NULL;
        rc_gdev_set = rc_gdev_set && rc_gdev_known && *dev_out == rc_gdev && rc_gdev_gen == gen;
        if (rc_gdev_known) {
            rc_gdev = *dev_out;
            rc_gdev_gen = gen;
        }
    } else if (id == rc.id_set_device) {
        int dev;
        rc_sets++;
        rc_get(call, "device", &dev, sizeof dev);
        if (r == 0)
            rc_device = dev;
        rc_gdev_known = rc_gdev_set = r == 0;   /* a failed set: the device is what it was, but asked again */
        rc_gdev = dev;
        rc_gdev_gen = gen;
    } else if (id == rc.id_reset && r == 0) {
        int dev = rc_device;   /* its context is gone, and the modules with it */
        if (dev >= 0 && dev < RC_MAX_DEVICES)
            rc_forget(dev);
    } else if ((id == rc.id_last || id == rc.id_peek) && r == 0 && rc_last != 0) {
        r = rc_last;   /* a translated call failed since: the server's runtime never saw it */
        if (id == rc.id_last)
            rc_last = 0;
    } else if (id == rc.id_last) {
        rc_last = 0;
    } else if (id == rc.id_peek && r != 0) {
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
    static const char *const copies[RC_NCOPY] = { "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD" };
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
    int bad = rc_api_of(&rc.load, "cuModuleLoadData") | rc_api_of(&rc.getfn, "cuModuleGetFunction") |
              rc_api_of(&rc.launch[0], "cuLaunchKernel") | rc_api_of(&rc.launch[1], "cuLaunchKernel_ptsz") |
              rc_api_of(&rc.cfree, "cudaFree") | rc_api_of(&rc.fattr, "cuFuncGetAttribute") |
              rc_api_of(&rc.fsetattr, "cuFuncSetAttribute") |
              rc_api_of(&rc.occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags") |
              rc_api_of(&rc.ptrattr, "cudaPointerGetAttributes");
    for (int k = 0; k < RC_NCOPY; k++) {
        char name[64];
        for (int async = 0; async < 2; async++)
            for (int pt = 0; pt < 2; pt++) {
                snprintf(name, sizeof name, "%s%s_v2%s", copies[k], async ? "Async" : "",
                         pt ? (async ? "_ptsz" : "_ptds") : "");
                bad |= rc_api_of(&rc.copy[async][pt][k], name);
            }
    }
    rc.id_set_device = rm_api_id(rc.host, "cudaSetDevice", UINT32_MAX);
    rc.id_get_device = rm_api_id(rc.host, "cudaGetDevice", UINT32_MAX);
    rc_ctx_apis();
    rc.id_reset = rm_api_id(rc.host, "cudaDeviceReset", UINT32_MAX);
    rc.id_last = rm_api_id(rc.host, "cudaGetLastError", UINT32_MAX);
    rc.id_peek = rm_api_id(rc.host, "cudaPeekAtLastError", UINT32_MAX);
    rc.id_launch[0] = rm_api_id(rc.host, "cudaLaunchKernel", UINT32_MAX);
    rc.id_launch[1] = rm_api_id(rc.host, "cudaLaunchKernel_ptsz", UINT32_MAX);
    rc.id_copy[0][0] = rm_api_id(rc.host, "cudaMemcpy", UINT32_MAX);
    rc.id_copy[0][1] = rm_api_id(rc.host, "cudaMemcpy_ptds", UINT32_MAX);
    rc.id_copy[1][0] = rm_api_id(rc.host, "cudaMemcpyAsync", UINT32_MAX);
    rc.id_copy[1][1] = rm_api_id(rc.host, "cudaMemcpyAsync_ptsz", UINT32_MAX);
    rc.id_fsetattr = rm_api_id(rc.host, "cudaFuncSetAttribute", UINT32_MAX);
    rc.id_host_alloc[0] = rm_api_id(rc.host, "cudaMallocHost", UINT32_MAX);
    rc.id_host_alloc[1] = rm_api_id(rc.host, "cudaHostAlloc", UINT32_MAX);
    rc.id_host_free = rm_api_id(rc.host, "cudaFreeHost", UINT32_MAX);
    rc.e_oom = rm_result_code(rc.host, "cudaErrorMemoryAllocation", 2);
    rc.id_occ[0] = rm_api_id(rc.host, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", UINT32_MAX);
    rc.id_occ[1] = rm_api_id(rc.host, "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", UINT32_MAX);
    rc.id_fattr = rm_api_id(rc.host, "cudaFuncGetAttributes", UINT32_MAX);
    rc.id_funcsym = rm_api_id(rc.host, "cudaGetFuncBySymbol", UINT32_MAX);
    rc.id_getkernel = UINT32_MAX;   /* CUDA 12 on: with the driver's library calls it needs */
    if (host->api_by_name("cudaGetKernel") != NULL && host->api_by_name("cuLibraryLoadData") != NULL &&
        host->api_by_name("cuLibraryGetKernel") != NULL && rc_api_of(&rc.libload, "cuLibraryLoadData") == 0 &&
        rc_api_of(&rc.libkernel, "cuLibraryGetKernel") == 0)
        rc.id_getkernel = rm_api_id(rc.host, "cudaGetKernel", UINT32_MAX);
    rc.id_fname = rm_api_id(rc.host, "cudaFuncGetName", UINT32_MAX);
    rc.id_fparam = UINT32_MAX;   /* CUDA 12.4 on, with the driver's */
    if (host->api_by_name("cudaFuncGetParamInfo") != NULL && host->api_by_name("cuFuncGetParamInfo") != NULL &&
        rc_api_of(&rc.paraminfo, "cuFuncGetParamInfo") == 0)
        rc.id_fparam = rm_api_id(rc.host, "cudaFuncGetParamInfo", UINT32_MAX);
    rc.id_entry[0][0] = rm_api_id(rc.host, "cudaGetDriverEntryPoint", UINT32_MAX);
    rc.id_entry[0][1] = rm_api_id(rc.host, "cudaGetDriverEntryPoint_ptsz", UINT32_MAX);
    rc.id_entry[1][0] = rm_api_id(rc.host, "cudaGetDriverEntryPointByVersion", UINT32_MAX);
    rc.id_entry[1][1] = rm_api_id(rc.host, "cudaGetDriverEntryPointByVersion_ptsz", UINT32_MAX);
    rc.id_getproc[0] = rm_api_id(rc.host, "cuGetProcAddress", UINT32_MAX);
    rc.id_getproc[1] = rm_api_id(rc.host, "cuGetProcAddress_v2", UINT32_MAX);
    rc.e_symbol = rm_result_code(rc.host, "cudaErrorSymbolNotFound", 500);
    const cushim_api_info *fa = host->api_by_name("cudaFuncGetAttributes");
    const cushim_param_info *fp = fa ? host->api_param(fa, 0) : NULL;
    if (fp == NULL || fp->elem_size != 144)   /* another layout of struct cudaFuncAttributes: not translated */
        rc.id_fattr = UINT32_MAX;
    fp = host->api_param(rc.ptrattr.a, 0);
    if (fp == NULL || fp->elem_size < 24 || fp->elem_size > 256) {   /* cudaPointerAttributes: 'type' first */
        host->log(self, CUSHIM_LOG_ERROR, "struct cudaPointerAttributes has %u bytes, not 24 to 256",
                  fp ? fp->elem_size : 0);
        bad = 1;
    }
    if (bad) {
        free(rc.ctx_api);
        rc.ctx_api = NULL;
        rc.nctx_api = 0;
        rc.host = NULL;
        return -1;
    }
    return 0;
}
