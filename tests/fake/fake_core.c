/*
 * fake_core.c - initialisation, devices, contexts, error strings and
 * cuGetProcAddress of the fake driver.
 *
 * Environment: FAKE_CUDA_DEVICES (device count, default 2, 0..8),
 * FAKE_CUDA_MEM (bytes of memory per device, default 16 GiB), FAKE_CUDA_COUNTS
 * (file the fake writes its per-name call counts to at exit; a forked or exec'd
 * descendant writes '<file>.<pid>', its counts starting from zero).
 * FAKE_CUDA_SYNC_BLOCK_MS=N: every cuCtxSynchronize blocks N milliseconds
 * first (a hung synchronisation, for the flight recorder's watchdog).
 * cuGetProcAddress follows the variant table of the generated
 * cushim_procaddr.inc through runtime/procaddr.c, the code the shim uses too,
 * and hands out the fake's own addresses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_internal.h"

pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_int fk_initialized;

static int fk_ndevices = -1;
static size_t fk_mem_per_device;
static struct CUctx_st fk_primary[FK_MAX_DEVICES];

/* The calling thread's context stack. */
static __thread CUcontext fk_stack[32];
static __thread int fk_depth;

/* From runtime/procaddr.c, shared with the shim. */
int cushim_pa_lookup(const char *symbol, int cuda_version, uint64_t flags, uint32_t *api_id, int *status);
FK_HIDDEN void *fk_export_addr(uint32_t id);

static size_t fk_env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    return *end == '\0' ? (size_t)v : dflt;
}

/* Under fk_lock. */
static void fk_read_config(void)
{
    if (fk_ndevices >= 0)
        return;
    size_t n = fk_env_size("FAKE_CUDA_DEVICES", 2);
    fk_ndevices = n > FK_MAX_DEVICES ? FK_MAX_DEVICES : (int)n;
    fk_mem_per_device = fk_env_size("FAKE_CUDA_MEM", (size_t)16 << 30);
    for (int i = 0; i < FK_MAX_DEVICES; i++) {
        fk_primary[i].magic = FK_MAGIC_CTX;
        fk_primary[i].device = i;
        fk_primary[i].primary = 1;
    }
}

int fk_device_count(void)
{
    return fk_ndevices < 0 ? 0 : fk_ndevices;
}

size_t fk_device_total_mem(void)
{
    return fk_mem_per_device;
}

double fk_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct fk_obj {
    struct fk_obj *next;
    _Alignas(16) unsigned char data[];
};
static pthread_mutex_t fk_obj_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fk_obj *fk_objs;

void *fk_obj_alloc(size_t size)
{
    struct fk_obj *o = calloc(1, sizeof *o + size);
    if (o == NULL)
        return NULL;
    pthread_mutex_lock(&fk_obj_lock);
    o->next = fk_objs;
    fk_objs = o;
    pthread_mutex_unlock(&fk_obj_lock);
    return o->data;
}

/* ---- counts at exit ---------------------------------------------------- */

static pid_t fk_first_pid;

static void fk_write_counts_at_exit(void)
{
    const char *path = getenv("FAKE_CUDA_COUNTS");
    if (path == NULL || *path == '\0')
        return;
    char buf[4096];
    if (getpid() != fk_first_pid)
        snprintf(buf, sizeof buf, "%s.%ld", path, (long)getpid());
    else
        snprintf(buf, sizeof buf, "%s", path);
    fake_cuda_dump_counts(buf);
}

FK_HIDDEN void fk_counts_reset(void);

static void fk_atfork_prepare(void) { pthread_mutex_lock(&fk_lock); }
static void fk_atfork_parent(void) { pthread_mutex_unlock(&fk_lock); }
static void fk_atfork_child(void)
{
    pthread_mutex_unlock(&fk_lock);
    fk_counts_reset();   /* a child's counts file holds the child's calls only */
}

/* The process that first saw FAKE_CUDA_COUNTS writes '<file>'; forked or exec'd descendants
   '<file>.<pid>' (the environment carries the owner's pid, as the shim's CUSHIM_COUNTS does). */
FK_HIDDEN pid_t fk_counts_owner(void)
{
    const char *s = getenv("FAKE_CUDA_COUNTS_OWNER_PID");
    if (s != NULL && *s != '\0')
        return (pid_t)atol(s);
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", (long)getpid());
    setenv("FAKE_CUDA_COUNTS_OWNER_PID", buf, 0);
    return getpid();
}

__attribute__((constructor)) static void fk_core_init(void)
{
    fk_first_pid = fk_counts_owner();
    atexit(fk_write_counts_at_exit);
    pthread_atfork(fk_atfork_prepare, fk_atfork_parent, fk_atfork_child);
}

/* ---- initialisation and version --------------------------------------- */

CUresult cuInit(unsigned int Flags)
{
    FAKE_ENTER(cuInit);
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_read_config();
    int n = fk_ndevices;
    pthread_mutex_unlock(&fk_lock);
    if (n == 0)
        return CUDA_ERROR_NO_DEVICE;
    atomic_store(&fk_initialized, 1);
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    FAKE_ENTER(cuDriverGetVersion);
    if (driverVersion == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = FAKE_CUDA_VERSION;
    return CUDA_SUCCESS;
}

/* ---- devices ----------------------------------------------------------- */

static CUresult fk_device_check(CUdevice dev)
{
    if (!atomic_load(&fk_initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    return dev >= 0 && dev < fk_ndevices ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetCount(int *count)
{
    FAKE_ENTER(cuDeviceGetCount);
    FK_REQUIRE_INIT();
    if (count == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fk_ndevices;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    FAKE_ENTER(cuDeviceGet);
    FK_REQUIRE_INIT();
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= fk_ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FAKE_ENTER(cuDeviceGetName);
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (name == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "cushim fake device %d", dev);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    FAKE_ENTER(cuDeviceGetUuid_v2);
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (uuid == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(uuid->bytes, 0, sizeof uuid->bytes);
    memcpy(uuid->bytes, "cushimfake", 10);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FAKE_ENTER(cuDeviceTotalMem_v2);
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (bytes == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = fk_mem_per_device;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FAKE_ENTER(cuDeviceGetAttribute);
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (pi == NULL || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    int v = fk_host_vmm_attr((int)attrib);
    if (v >= 0) {   /* by number: 11.8's cuda.h names neither */
        *pi = v;
        return CUDA_SUCCESS;
    }
    v = 0;
    switch (attrib) {   /* an H100-like device */
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = dev; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1980000; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

/* ---- contexts ---------------------------------------------------------- */

CUcontext fk_current_ctx(void)
{
    return fk_depth > 0 ? fk_stack[fk_depth - 1] : NULL;
}

int fk_ctx_valid(CUcontext ctx)
{
    return ctx != NULL && ctx->magic == FK_MAGIC_CTX;
}

static CUresult fk_primary_retain(CUcontext *pctx, CUdevice dev)
{
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_primary[dev].refcount++;
    pthread_mutex_unlock(&fk_lock);
    *pctx = &fk_primary[dev];
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FAKE_ENTER(cuDevicePrimaryCtxRetain);
    return fk_primary_retain(pctx, dev);
}

static CUresult fk_primary_release(CUdevice dev)
{
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fk_lock);
    if (fk_primary[dev].refcount <= 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else
        fk_primary[dev].refcount--;
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FAKE_ENTER(cuDevicePrimaryCtxRelease_v2);
    return fk_primary_release(dev);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    FAKE_ENTER(cuDevicePrimaryCtxRelease);
    return fk_primary_release(dev);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FAKE_ENTER(cuDevicePrimaryCtxGetState);
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags == NULL || active == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    *flags = fk_primary[dev].flags;
    *active = fk_primary[dev].refcount > 0;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

static CUresult fk_ctx_push(CUcontext ctx)
{
    if ((size_t)fk_depth >= sizeof fk_stack / sizeof fk_stack[0])
        return CUDA_ERROR_OUT_OF_MEMORY;
    fk_stack[fk_depth++] = ctx;
    return CUDA_SUCCESS;
}

static CUresult fk_ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CUresult r = fk_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = fk_obj_alloc(sizeof *c);
    if (c == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = FK_MAGIC_CTX;
    c->device = dev;
    c->flags = flags;
    r = fk_ctx_push(c);
    if (r != CUDA_SUCCESS) {
        c->magic = FK_MAGIC_DEAD;
        return r;
    }
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FAKE_ENTER(cuCtxCreate_v2);
    return fk_ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                        CUdevice dev)
{
    FAKE_ENTER(cuCtxCreate_v3);
    if (numParams < 0 || (numParams > 0 && paramsArray == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    return fk_ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    FAKE_ENTER(cuCtxCreate_v4);
    (void)ctxCreateParams;
    return fk_ctx_create(pctx, flags, dev);
}

static CUresult fk_ctx_destroy(CUcontext ctx)
{
    FK_REQUIRE_INIT();
    if (!fk_ctx_valid(ctx) || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* Remove it from this thread's stack, as the driver does. */
    for (int i = 0; i < fk_depth; i++) {
        if (fk_stack[i] == ctx) {
            memmove(&fk_stack[i], &fk_stack[i + 1], (size_t)(fk_depth - i - 1) * sizeof fk_stack[0]);
            fk_depth--;
            i--;
        }
    }
    ctx->magic = FK_MAGIC_DEAD;   /* kept, so later use is caught, never reused */
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    FAKE_ENTER(cuCtxDestroy_v2);
    return fk_ctx_destroy(ctx);
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    FAKE_ENTER(cuCtxDestroy);
    return fk_ctx_destroy(ctx);
}

static CUresult fk_ctx_push_checked(CUcontext ctx)
{
    FK_REQUIRE_INIT();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return fk_ctx_push(ctx);
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    FAKE_ENTER(cuCtxPushCurrent_v2);
    return fk_ctx_push_checked(ctx);
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
    FAKE_ENTER(cuCtxPushCurrent);
    return fk_ctx_push_checked(ctx);
}

static CUresult fk_ctx_pop(CUcontext *pctx)
{
    FK_REQUIRE_INIT();
    if (fk_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = fk_stack[--fk_depth];
    if (pctx != NULL)
        *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FAKE_ENTER(cuCtxPopCurrent_v2);
    return fk_ctx_pop(pctx);
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    FAKE_ENTER(cuCtxPopCurrent);
    return fk_ctx_pop(pctx);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    FAKE_ENTER(cuCtxSetCurrent);
    FK_REQUIRE_INIT();
    if (ctx == NULL) {           /* unbinds: pops the top, if any */
        if (fk_depth > 0)
            fk_depth--;
        return CUDA_SUCCESS;
    }
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fk_depth == 0)
        return fk_ctx_push(ctx);
    fk_stack[fk_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    FAKE_ENTER(cuCtxGetCurrent);
    FK_REQUIRE_INIT();
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fk_current_ctx();
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    FAKE_ENTER(cuCtxGetDevice);
    FK_REQUIRE_INIT();
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext c = fk_current_ctx();
    if (!fk_ctx_valid(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = c->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    FAKE_ENTER(cuCtxGetApiVersion);
    FK_REQUIRE_INIT();
    if (version == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (ctx == NULL)
        ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;
    return CUDA_SUCCESS;
}

/* The profiler API: no profiler here; what the real driver checks (a current context). */
CUresult cuProfilerStart(void)
{
    FAKE_ENTER(cuProfilerStart);
    FK_REQUIRE_INIT();
    return fk_ctx_valid(fk_current_ctx()) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuProfilerStop(void)
{
    FAKE_ENTER(cuProfilerStop);
    FK_REQUIRE_INIT();
    return fk_ctx_valid(fk_current_ctx()) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* FAKE_CUDA_SYNC_BLOCK_MS: a synchronisation that hangs for that long. */
static void fk_sync_block(void)
{
    size_t ms = fk_env_size("FAKE_CUDA_SYNC_BLOCK_MS", 0);
    if (ms > 0)
        fk_wait_until_ms(fk_now_ms() + (double)ms);
}

CUresult cuCtxSynchronize(void)
{
    FAKE_ENTER(cuCtxSynchronize);
    FK_REQUIRE_INIT();
    if (!fk_ctx_valid(fk_current_ctx()))
        return CUDA_ERROR_INVALID_CONTEXT;
    fk_sync_block();
    fk_wait_until_ms(fk_all_done_ms());
    fk_hostfn_drain(NULL);
    return CUDA_SUCCESS;
}

#if CUDA_VERSION >= 13000   /* new in 13.0: a fake built from an older release's headers has none */
CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    FAKE_ENTER(cuCtxSynchronize_v2);
    FK_REQUIRE_INIT();
    if (ctx == NULL)
        ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    fk_sync_block();
    fk_wait_until_ms(fk_all_done_ms());
    fk_hostfn_drain(NULL);
    return CUDA_SUCCESS;
}
#endif

/* ---- errors ------------------------------------------------------------ */

struct fk_err {
    CUresult code;
    const char *name;
    const char *text;
};

#define FK_ERR(code, text) {code, #code, text}
static const struct fk_err fk_errs[] = {
    FK_ERR(CUDA_SUCCESS, "success"),
    FK_ERR(CUDA_ERROR_INVALID_VALUE, "invalid value"),
    FK_ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    FK_ERR(CUDA_ERROR_NOT_INITIALIZED, "not initialized"),
    FK_ERR(CUDA_ERROR_DEINITIALIZED, "deinitialized"),
    FK_ERR(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled"),
    FK_ERR(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized"),
    FK_ERR(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started"),
    FK_ERR(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped"),
    FK_ERR(CUDA_ERROR_STUB_LIBRARY, "stub library"),
#if CUDA_VERSION >= 13000
    FK_ERR(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "call requires newer driver"),
#endif
    FK_ERR(CUDA_ERROR_DEVICE_UNAVAILABLE, "device unavailable"),
    FK_ERR(CUDA_ERROR_NO_DEVICE, "no device"),
    FK_ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device"),
    FK_ERR(CUDA_ERROR_DEVICE_NOT_LICENSED, "device not licensed"),
    FK_ERR(CUDA_ERROR_INVALID_IMAGE, "invalid image"),
    FK_ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid context"),
    FK_ERR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
    FK_ERR(CUDA_ERROR_MAP_FAILED, "map failed"),
    FK_ERR(CUDA_ERROR_UNMAP_FAILED, "unmap failed"),
    FK_ERR(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped"),
    FK_ERR(CUDA_ERROR_ALREADY_MAPPED, "already mapped"),
    FK_ERR(CUDA_ERROR_NO_BINARY_FOR_GPU, "no binary for gpu"),
    FK_ERR(CUDA_ERROR_ALREADY_ACQUIRED, "already acquired"),
    FK_ERR(CUDA_ERROR_NOT_MAPPED, "not mapped"),
    FK_ERR(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "not mapped as array"),
    FK_ERR(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "not mapped as pointer"),
    FK_ERR(CUDA_ERROR_ECC_UNCORRECTABLE, "ecc uncorrectable"),
    FK_ERR(CUDA_ERROR_UNSUPPORTED_LIMIT, "unsupported limit"),
    FK_ERR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context already in use"),
    FK_ERR(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access unsupported"),
    FK_ERR(CUDA_ERROR_INVALID_PTX, "invalid ptx"),
    FK_ERR(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid graphics context"),
    FK_ERR(CUDA_ERROR_NVLINK_UNCORRECTABLE, "nvlink uncorrectable"),
    FK_ERR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "jit compiler not found"),
    FK_ERR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "unsupported ptx version"),
    FK_ERR(CUDA_ERROR_JIT_COMPILATION_DISABLED, "jit compilation disabled"),
    FK_ERR(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "unsupported exec affinity"),
    FK_ERR(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "unsupported devside sync"),
    FK_ERR(CUDA_ERROR_CONTAINED, "contained"),
    FK_ERR(CUDA_ERROR_INVALID_SOURCE, "invalid source"),
    FK_ERR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    FK_ERR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
    FK_ERR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object init failed"),
    FK_ERR(CUDA_ERROR_OPERATING_SYSTEM, "operating system"),
    FK_ERR(CUDA_ERROR_INVALID_HANDLE, "invalid handle"),
    FK_ERR(CUDA_ERROR_ILLEGAL_STATE, "illegal state"),
    FK_ERR(CUDA_ERROR_LOSSY_QUERY, "lossy query"),
    FK_ERR(CUDA_ERROR_NOT_FOUND, "not found"),
    FK_ERR(CUDA_ERROR_NOT_READY, "not ready"),
    FK_ERR(CUDA_ERROR_ILLEGAL_ADDRESS, "illegal address"),
    FK_ERR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "launch out of resources"),
    FK_ERR(CUDA_ERROR_LAUNCH_TIMEOUT, "launch timeout"),
    FK_ERR(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "launch incompatible texturing"),
    FK_ERR(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access already enabled"),
    FK_ERR(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access not enabled"),
    FK_ERR(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active"),
    FK_ERR(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    FK_ERR(CUDA_ERROR_ASSERT, "assert"),
    FK_ERR(CUDA_ERROR_TOO_MANY_PEERS, "too many peers"),
    FK_ERR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "host memory already registered"),
    FK_ERR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "host memory not registered"),
    FK_ERR(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error"),
    FK_ERR(CUDA_ERROR_ILLEGAL_INSTRUCTION, "illegal instruction"),
    FK_ERR(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
    FK_ERR(CUDA_ERROR_INVALID_ADDRESS_SPACE, "invalid address space"),
    FK_ERR(CUDA_ERROR_INVALID_PC, "invalid pc"),
    FK_ERR(CUDA_ERROR_LAUNCH_FAILED, "launch failed"),
    FK_ERR(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "cooperative launch too large"),
    FK_ERR(CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory leak"),
    FK_ERR(CUDA_ERROR_NOT_PERMITTED, "not permitted"),
    FK_ERR(CUDA_ERROR_NOT_SUPPORTED, "not supported"),
    FK_ERR(CUDA_ERROR_SYSTEM_NOT_READY, "system not ready"),
    FK_ERR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system driver mismatch"),
    FK_ERR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "compat not supported on device"),
    FK_ERR(CUDA_ERROR_MPS_CONNECTION_FAILED, "mps connection failed"),
    FK_ERR(CUDA_ERROR_MPS_RPC_FAILURE, "mps rpc failure"),
    FK_ERR(CUDA_ERROR_MPS_SERVER_NOT_READY, "mps server not ready"),
    FK_ERR(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "mps max clients reached"),
    FK_ERR(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "mps max connections reached"),
    FK_ERR(CUDA_ERROR_MPS_CLIENT_TERMINATED, "mps client terminated"),
    FK_ERR(CUDA_ERROR_CDP_NOT_SUPPORTED, "cdp not supported"),
    FK_ERR(CUDA_ERROR_CDP_VERSION_MISMATCH, "cdp version mismatch"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "stream capture unsupported"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "stream capture invalidated"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_MERGE, "stream capture merge"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "stream capture unmatched"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "stream capture unjoined"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "stream capture isolation"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "stream capture implicit"),
    FK_ERR(CUDA_ERROR_CAPTURED_EVENT, "captured event"),
    FK_ERR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "stream capture wrong thread"),
    FK_ERR(CUDA_ERROR_TIMEOUT, "timeout"),
    FK_ERR(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "graph exec update failure"),
    FK_ERR(CUDA_ERROR_EXTERNAL_DEVICE, "external device"),
    FK_ERR(CUDA_ERROR_INVALID_CLUSTER_SIZE, "invalid cluster size"),
    FK_ERR(CUDA_ERROR_FUNCTION_NOT_LOADED, "function not loaded"),
    FK_ERR(CUDA_ERROR_INVALID_RESOURCE_TYPE, "invalid resource type"),
    FK_ERR(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "invalid resource configuration"),
    FK_ERR(CUDA_ERROR_KEY_ROTATION, "key rotation"),
    FK_ERR(CUDA_ERROR_UNKNOWN, "unknown"),
};

static const struct fk_err *fk_err_find(CUresult e)
{
    for (size_t i = 0; i < sizeof fk_errs / sizeof fk_errs[0]; i++)
        if (fk_errs[i].code == e)
            return &fk_errs[i];
    return NULL;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    FAKE_ENTER(cuGetErrorName);
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const struct fk_err *e = fk_err_find(error);
    *pStr = e ? e->name : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    FAKE_ENTER(cuGetErrorString);
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const struct fk_err *e = fk_err_find(error);
    *pStr = e ? e->text : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- entry points ------------------------------------------------------ */

/*
 * What the real driver answers (tests/gpu/fixtures/procaddr-oracle.tsv, driver 580): a cudaVersion above
 * the driver's own is CUDA_ERROR_INVALID_VALUE with the status left alone; an unknown name, or a known one
 * whose variants are all newer than cudaVersion, is CUDA_SUCCESS with a NULL pointer and the status
 * saying which. cuGetProcAddress (no status) reports those as CUDA_ERROR_NOT_FOUND, as documented.
 */
static CUresult fk_get_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status, int v2)
{
    if (symbol == NULL || pfn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (cudaVersion > FAKE_CUDA_VERSION)
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t id = 0;
    int st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *p = NULL;
    /* The real driver (580) does not hand this one out although cudaTypedefs.h has its PFN. */
    if (strcmp(symbol, "cuEventCreateFromEGLSync") == 0) {
        if (status != NULL)
            *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return v2 ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
    }
    int r = cushim_pa_lookup(symbol, cudaVersion, flags, &id, &st);
    if (r == CUDA_ERROR_INVALID_VALUE)
        return CUDA_ERROR_INVALID_VALUE;
    if (st == CU_GET_PROC_ADDRESS_SUCCESS) {
        p = fk_export_addr(id);
        if (p == NULL)        /* the table names an API this build lacks */
            st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    *pfn = p;
    if (status != NULL)
        *status = (CUdriverProcAddressQueryResult)st;
    return p != NULL || v2 ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    FAKE_ENTER(cuGetProcAddress);
    return fk_get_proc(symbol, pfn, cudaVersion, flags, NULL, 0);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    FAKE_ENTER(cuGetProcAddress_v2);
    return fk_get_proc(symbol, pfn, cudaVersion, flags, symbolStatus, 1);
}

CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    FAKE_ENTER(cuGetExportTable);
    (void)pExportTableId;
    if (ppExportTable != NULL)
        *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
