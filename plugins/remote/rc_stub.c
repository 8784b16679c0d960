/*
 * rc_stub.c - nvcc's registrations and the stub table of the runtime part (docs/remote.md, "Runtime-API
 * programs"): the one owner of what a host stub is.
 *
 * nvcc's code registers each fat binary and kernel from the program's constructors (__cudaRegisterFatBinary,
 * __cudaRegisterFunction...). These are not public APIs (the shim does not wrap them), so this plugin exports them
 * itself and is preloaded for runtime programs (LD_PRELOAD=.../remote.so): a host stub's address then maps to its
 * fat binary and device name here, and the client's own libcudart never sees a registration. A stub becomes a
 * function of the server's driver once per device (rc_stub_function: cuModuleLoadData of its fat binary, sized
 * from its header, cuModuleGetFunction by name) and a kernel once per process (rc_stub_kernel: cuLibraryLoadData,
 * cuLibraryGetKernel); the kernels handed out are kept with their stub, so every call that takes a stub takes
 * them too.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rc_int.h"

#define RC_EXPORT __attribute__((visibility("default")))
#define RC_WRAPPER_MAGIC 0x466243b1 /* nvcc's fat binary wrapper */

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

/* the driver calls this file makes (rc_stub_init) */
static struct {
    rc_api load, getfn, fattr;
    rc_api libload, libkernel;         /* cuLibraryLoadData, cuLibraryGetKernel: CUDA 12 on (cudaGetKernel) */
} rs;

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

/* An image loaded on the server once (LOAD: cuModuleLoadData or cuLibraryLoadData into *container, when it is 0),
   then one entry of it by name (GET: cuModuleGetFunction or cuLibraryGetKernel into *out, when it is 0): the
   server's result. */
static int32_t rc_load_get(const rc_api *load, const rc_api *get, uint64_t *container, const void *image,
                           uint64_t *out, const char *name)
{
    uint8_t params[256];
    int32_t r = 0;
    if (*out == 0 && *container == 0) {
        memset(params, 0, sizeof params);
        rc_put(load, params, 0, &container, sizeof container);
        rc_put(load, params, 1, &image, sizeof image);
        r = rc_call(load, params);
    }
    if (r == 0 && *out == 0) {
        memset(params, 0, sizeof params);
        rc_put(get, params, 0, &out, sizeof out);
        rc_put(get, params, 1, container, sizeof *container);
        rc_put(get, params, 2, &name, sizeof name);
        r = rc_call(get, params);
    }
    return r;
}

/* The server's function for a stub (or a kernel rc_stub_kernel gave) on the thread's device: module and function
   resolved once; an unregistered address is cudaErrorInvalidDeviceFunction. */
int32_t rc_stub_function(const void *stub, uint64_t *f)
{
    int dev = rc_current_device();
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
    if (r == 0)
        r = rc_load_get(&rs.load, &rs.getfn, &mod, image, &fn, name);
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
int rc_stub_max_threads(const void *stub, uint64_t f)
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
    rc_put(&rs.fattr, params, 0, &pv, sizeof pv);
    rc_put(&rs.fattr, params, 1, &a, sizeof a);
    rc_put(&rs.fattr, params, 2, &f, sizeof f);
    if (rc_call(&rs.fattr, params) != 0 || v <= 0)
        return 0;
    pthread_mutex_lock(&rc_lock);
    if ((e = rc_find_any(stub)) != NULL)
        e->max_threads = v;
    pthread_mutex_unlock(&rc_lock);
    return v;
}

/* cudaGetKernel's answer: the stub's kernel as the server's CUkernel (a cudaKernel_t is one): its fat binary loaded
   once as a library there (cuLibraryLoadData: context-independent, so once per process, not per device),
   cuLibraryGetKernel by name, kept with its stub (rc_find_any). 0 or a runtime error (not kept: the caller's). */
int32_t rc_stub_kernel(const void *stub, uint64_t *out)
{
    if (rs.libload.a == NULL)
        return rc.e_notsup;
    int32_t r = rc_context();   /* the runtime's initialisation, as before any of its driver calls */
    if (r != 0)
        return r;
    pthread_mutex_lock(&rc_slow);
    pthread_mutex_lock(&rc_lock);
    rc_function *e = rc_find(stub);
    rc_binary *b = e != NULL ? rc_bins[e->binary] : NULL;
    uint64_t k = e != NULL ? e->kernel : 0, lib = b != NULL ? b->library : 0;
    const void *image = b != NULL ? b->image : NULL;
    const char *name = e != NULL ? e->name : NULL;
    r = e == NULL || b->dead ? rc.e_devfn : 0;
    pthread_mutex_unlock(&rc_lock);
    if (r == 0)
        r = rc_load_get(&rs.libload, &rs.libkernel, &lib, image, &k, name);
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
        return r == rc.drv[4] ? rc.e_oom : r;
    *out = k;
    return 0;
}

/* Everything learnt from the server, forgotten: a new back end (fork) or a device reset ('dev' < 0: all). */
void rc_stub_forget(int dev)
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
    pthread_mutex_unlock(&rc_lock);
}

void rc_stub_fork_child(void)
{
    pthread_mutex_init(&rc_lock, NULL);
    pthread_mutex_init(&rc_slow, NULL);
    rc_stub_forget(-1);
}

/* The driver calls a stub needs; *have_kernels: cudaGetKernel's (CUDA 12 on) are in this tree. */
int rc_stub_init(int *have_kernels)
{
    int bad = rc_api_of(&rs.load, "cuModuleLoadData") | rc_api_of(&rs.getfn, "cuModuleGetFunction") |
              rc_api_of(&rs.fattr, "cuFuncGetAttribute");
    *have_kernels = rc_api_maybe(&rs.libload, "cuLibraryLoadData") == 0 &&
                    rc_api_maybe(&rs.libkernel, "cuLibraryGetKernel") == 0;
    if (!*have_kernels)
        rs.libload.a = NULL;
    return bad ? -1 : 0;
}

/* The name the stub (or kernel) was registered with, kept for the process's life; NULL: none. */
const char *rc_stub_name(const void *p)
{
    pthread_mutex_lock(&rc_lock);
    rc_function *e = rc_find_any(p);
    const char *name = e != NULL ? e->name : NULL;
    pthread_mutex_unlock(&rc_lock);
    return name;
}
