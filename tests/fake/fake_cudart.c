/*
 * fake_cudart.c - the core of the fake libcudart.so.13: reaches the driver the way the real runtime does.
 *
 * It links no driver symbol. On first use it dlopen()s "libcuda.so.1", takes
 * cuGetProcAddress_v2 (else cuGetProcAddress) with dlsym, asks that for
 * "cuGetProcAddress" itself (cudaVersion 11030 and 12000, as the real runtime
 * does), and resolves every driver function it needs through the pointer it got
 * back, with cudaVersion 13000 and CU_GET_PROC_ADDRESS_DEFAULT. The _ptds/_ptsz
 * exports it implements resolve their driver functions with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, on first use.
 * Each thread has a current device (0 unless cudaSetDevice said otherwise)
 * whose primary context the runtime retains once and makes current in the
 * thread when it first needs it. Kernels are host addresses, mapped to
 * functions of one fake module per device by name ("kernel_<address>"), or registered stubs
 * (fake_cudart_register.c), whose function cudaGetFuncBySymbol gives and whose kernel cudaGetKernel gives (a
 * library per fat binary; the calls that take a stub take that kernel too).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "fake_cudart_internal.h"

#define FRT_HIDDEN __attribute__((visibility("hidden")))
#define FRT_RUNTIME_VERSION FAKE_CUDA_VERSION
/* What cudaRuntimeGetVersion answers: 12090 for the copy built as libcudart.so.12 (tests of several
   loaded copies, tests/fake/CMakeLists.txt), which tells the copies apart. */
#ifndef FRT_REPORTED_VERSION
#define FRT_REPORTED_VERSION FRT_RUNTIME_VERSION
#endif
#define FRT_MAX_DEVICES 8

#define FRT_PFN(name) __typeof__(&name)

/* Driver functions, resolved once; 'legacy' with flags 0, 'pt' with the per-thread flag. */
static struct {
    FRT_PFN(cuGetProcAddress) get_proc_v1;
    FRT_PFN(cuGetProcAddress_v2) get_proc;
    FRT_PFN(cuInit) init;
    FRT_PFN(cuDriverGetVersion) driver_version;
    FRT_PFN(cuDeviceGetCount) device_count;
    FRT_PFN(cuDeviceGet) device_get;
    FRT_PFN(cuDevicePrimaryCtxRetain) primary_retain;
    FRT_PFN(cuCtxSetCurrent) ctx_set_current;
#if CUDA_VERSION >= 13000
    FRT_PFN(cuCtxSynchronize_v2) ctx_sync;   /* what "cuCtxSynchronize" is at 13000 */
#else
    FRT_PFN(cuCtxSynchronize) ctx_sync;
#endif
    FRT_PFN(cuMemAlloc_v2) mem_alloc;
    FRT_PFN(cuMemFree_v2) mem_free;
    FRT_PFN(cuMemAllocHost_v2) mem_alloc_host;
    FRT_PFN(cuMemFreeHost) mem_free_host;
    FRT_PFN(cuMemAllocManaged) mem_alloc_managed;
    FRT_PFN(cuMemAllocAsync) mem_alloc_async;
    FRT_PFN(cuMemFreeAsync) mem_free_async;
    FRT_PFN(cuMemGetInfo_v2) mem_get_info;
    FRT_PFN(cuMemsetD8_v2) memset_d8;
    FRT_PFN(cuStreamCreate) stream_create;
    FRT_PFN(cuStreamDestroy_v2) stream_destroy;
    FRT_PFN(cuStreamSynchronize) stream_sync;
    FRT_PFN(cuEventCreate) event_create;
    FRT_PFN(cuEventRecord) event_record;
    FRT_PFN(cuEventSynchronize) event_sync;
    FRT_PFN(cuEventElapsedTime_v2) event_elapsed;
    FRT_PFN(cuEventDestroy_v2) event_destroy;
    FRT_PFN(cuModuleLoadData) module_load;
    FRT_PFN(cuModuleGetFunction) module_get_function;
    FRT_PFN(cuLaunchHostFunc) launch_host_func;
    FRT_PFN(cuStreamAddCallback) stream_add_callback;
} frt_drv;

/* The functions that have per-thread variants: one set per flag. */
struct frt_stream_fns {
    FRT_PFN(cuMemcpyHtoD_v2) htod;
    FRT_PFN(cuMemcpyDtoH_v2) dtoh;
    FRT_PFN(cuMemcpyDtoD_v2) dtod;
    FRT_PFN(cuMemcpy) copy;
    FRT_PFN(cuMemcpyHtoDAsync_v2) htod_async;
    FRT_PFN(cuMemcpyDtoHAsync_v2) dtoh_async;
    FRT_PFN(cuMemcpyDtoDAsync_v2) dtod_async;
    FRT_PFN(cuMemcpyAsync) copy_async;
    FRT_PFN(cuLaunchKernel) launch;
};
static struct frt_stream_fns frt_legacy, frt_pt;

static pthread_once_t frt_once = PTHREAD_ONCE_INIT;
static pthread_once_t frt_pt_once = PTHREAD_ONCE_INIT;
static cudaError_t frt_init_error = cudaSuccess;
static cudaError_t frt_pt_error = cudaSuccess;
static int frt_ndevices;

static pthread_mutex_t frt_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext frt_primary[FRT_MAX_DEVICES];   /* under frt_lock */
static CUmodule frt_module[FRT_MAX_DEVICES];     /* under frt_lock */

struct frt_kernel {
    const void *host;
    int device;
    CUfunction func;
};
static struct frt_kernel frt_kernels[256];       /* under frt_lock */
static int frt_nkernels;
struct frt_loaded {
    const void *image;
    int device;
    CUmodule module;
};
static struct frt_loaded frt_images[64];         /* under frt_lock: registered fat binaries loaded */
struct frt_kernel_handle {                       /* cudaGetKernel's: the driver's CUkernel of a registered stub */
    const void *image, *host;
    CUlibrary library;
    CUkernel kernel;
};
static struct frt_kernel_handle frt_handles[64];  /* under frt_lock */
static int frt_nhandles;
static int frt_nimages;

static __thread int frt_device;
static __thread CUcontext frt_bound;             /* context this thread made current */
static __thread cudaError_t frt_last_error;

static const char frt_image[] = "cushim fake fatbinary";

static cudaError_t frt_error(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_NOT_READY: return cudaErrorNotReady;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_ILLEGAL_STATE: return cudaErrorIllegalState;
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: return cudaErrorCooperativeLaunchTooLarge;
#if CUDA_VERSION >= 11080
    case CUDA_ERROR_INVALID_CLUSTER_SIZE: return cudaErrorInvalidClusterSize;
#endif
    default:   /* the stream-capture errors have the same numbers in both APIs */
        return r >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && r <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD ?
               (cudaError_t)r : cudaErrorUnknown;
    }
}

/* Record a non-success result as the thread's last error, and return it. */
static cudaError_t frt_ret(cudaError_t e)
{
    if (e != cudaSuccess)
        frt_last_error = e;
    return e;
}

/* Look-ups this runtime made through the driver's cuGetProcAddress (v1 or v2), for tests. */
static atomic_uint_fast64_t frt_lookups;

__attribute__((visibility("default"))) uint64_t fake_cudart_driver_lookups(void)
{
    return atomic_load(&frt_lookups);
}

static void *frt_resolve(const char *name, cuuint64_t flags)
{
    atomic_fetch_add(&frt_lookups, 1);
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (frt_drv.get_proc != NULL) {
        if (frt_drv.get_proc(name, &p, FRT_RUNTIME_VERSION, flags, &st) != CUDA_SUCCESS)
            p = NULL;
    } else if (frt_drv.get_proc_v1(name, &p, FRT_RUNTIME_VERSION, flags) != CUDA_SUCCESS) {
        p = NULL;
    }
    return p;
}

static int frt_resolve_stream_fns(struct frt_stream_fns *s, cuuint64_t flags)
{
    int ok = 1;
#define FRT_GET(field, name) ok &= (*(void **)&s->field = frt_resolve(name, flags)) != NULL
    FRT_GET(htod, "cuMemcpyHtoD");
    FRT_GET(dtoh, "cuMemcpyDtoH");
    FRT_GET(dtod, "cuMemcpyDtoD");
    FRT_GET(copy, "cuMemcpy");
    FRT_GET(htod_async, "cuMemcpyHtoDAsync");
    FRT_GET(dtoh_async, "cuMemcpyDtoHAsync");
    FRT_GET(dtod_async, "cuMemcpyDtoDAsync");
    FRT_GET(copy_async, "cuMemcpyAsync");
    FRT_GET(launch, "cuLaunchKernel");
#undef FRT_GET
    return ok;
}

static void frt_load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == NULL) {
        frt_init_error = cudaErrorInsufficientDriver;
        return;
    }
    void *gpa2 = dlsym(h, "cuGetProcAddress_v2");
    void *gpa1 = gpa2 ? NULL : dlsym(h, "cuGetProcAddress");
    if (gpa2 == NULL && gpa1 == NULL) {
        frt_init_error = cudaErrorInsufficientDriver;
        return;
    }
    /* Ask the driver for cuGetProcAddress itself, as the real runtime does. */
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    atomic_fetch_add(&frt_lookups, 2);
    if (gpa2 != NULL) {
        FRT_PFN(cuGetProcAddress_v2) g = (FRT_PFN(cuGetProcAddress_v2))gpa2;
        if (g("cuGetProcAddress", &p, 11030, CU_GET_PROC_ADDRESS_DEFAULT, &st) == CUDA_SUCCESS)
            frt_drv.get_proc_v1 = (FRT_PFN(cuGetProcAddress))p;
        if (g("cuGetProcAddress", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st) == CUDA_SUCCESS)
            frt_drv.get_proc = (FRT_PFN(cuGetProcAddress_v2))p;
    } else {
        FRT_PFN(cuGetProcAddress) g = (FRT_PFN(cuGetProcAddress))gpa1;
        if (g("cuGetProcAddress", &p, 11030, CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_SUCCESS)
            frt_drv.get_proc_v1 = (FRT_PFN(cuGetProcAddress))p;
    }
    if (frt_drv.get_proc == NULL && frt_drv.get_proc_v1 == NULL) {
        frt_init_error = cudaErrorInsufficientDriver;
        return;
    }
    int ok = 1;
#define FRT_GET(field, name) \
    ok &= (*(void **)&frt_drv.field = frt_resolve(name, CU_GET_PROC_ADDRESS_DEFAULT)) != NULL
    FRT_GET(init, "cuInit");
    FRT_GET(driver_version, "cuDriverGetVersion");
    FRT_GET(device_count, "cuDeviceGetCount");
    FRT_GET(device_get, "cuDeviceGet");
    FRT_GET(primary_retain, "cuDevicePrimaryCtxRetain");
    FRT_GET(ctx_set_current, "cuCtxSetCurrent");
    FRT_GET(ctx_sync, "cuCtxSynchronize");
    FRT_GET(mem_alloc, "cuMemAlloc");
    FRT_GET(mem_free, "cuMemFree");
    FRT_GET(mem_alloc_host, "cuMemAllocHost");
    FRT_GET(mem_free_host, "cuMemFreeHost");
    FRT_GET(mem_alloc_managed, "cuMemAllocManaged");
    FRT_GET(mem_alloc_async, "cuMemAllocAsync");
    FRT_GET(mem_free_async, "cuMemFreeAsync");
    FRT_GET(mem_get_info, "cuMemGetInfo");
    FRT_GET(memset_d8, "cuMemsetD8");
    FRT_GET(stream_create, "cuStreamCreate");
    FRT_GET(stream_destroy, "cuStreamDestroy");
    FRT_GET(stream_sync, "cuStreamSynchronize");
    FRT_GET(event_create, "cuEventCreate");
    FRT_GET(event_record, "cuEventRecord");
    FRT_GET(event_sync, "cuEventSynchronize");
    FRT_GET(event_elapsed, "cuEventElapsedTime");
    FRT_GET(event_destroy, "cuEventDestroy");
    FRT_GET(module_load, "cuModuleLoadData");
    FRT_GET(module_get_function, "cuModuleGetFunction");
    FRT_GET(launch_host_func, "cuLaunchHostFunc");
    FRT_GET(stream_add_callback, "cuStreamAddCallback");
#undef FRT_GET
    ok &= frt_resolve_stream_fns(&frt_legacy, CU_GET_PROC_ADDRESS_DEFAULT);
    if (!ok) {
        frt_init_error = cudaErrorInsufficientDriver;
        return;
    }
    CUresult r = frt_drv.init(0);
    if (r == CUDA_SUCCESS)
        r = frt_drv.device_count(&frt_ndevices);
    if (r != CUDA_SUCCESS)
        frt_init_error = frt_error(r);
    else if (frt_ndevices == 0)
        frt_init_error = cudaErrorNoDevice;
}

static cudaError_t frt_driver(void)
{
    pthread_once(&frt_once, frt_load_driver);
    return frt_init_error;
}

static void frt_load_pt(void)
{
    if (!frt_resolve_stream_fns(&frt_pt, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        frt_pt_error = cudaErrorInsufficientDriver;
}

static const struct frt_stream_fns *frt_fns(int per_thread, cudaError_t *err)
{
    *err = frt_driver();
    if (*err != cudaSuccess || !per_thread)
        return &frt_legacy;
    pthread_once(&frt_pt_once, frt_load_pt);
    *err = frt_pt_error;
    return &frt_pt;
}

/* Make the thread's device's primary context current, retaining it once per process. */
static cudaError_t frt_context(void)
{
    cudaError_t e = frt_driver();
    if (e != cudaSuccess)
        return e;
    int dev = frt_device;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&frt_lock);
    if (frt_primary[dev] == NULL) {
        CUdevice d;
        r = frt_drv.device_get(&d, dev);
        if (r == CUDA_SUCCESS)
            r = frt_drv.primary_retain(&frt_primary[dev], d);
    }
    CUcontext c = frt_primary[dev];
    pthread_mutex_unlock(&frt_lock);
    if (r == CUDA_SUCCESS && frt_bound != c) {
        r = frt_drv.ctx_set_current(c);
        if (r == CUDA_SUCCESS)
            frt_bound = c;
    }
    return frt_error(r);
}

/* For fake_cudart_graph.c: the calling thread's context made current (the runtime's device), and a driver
   function by name, looked up at its first use through cuGetProcAddress as the others. */
cudaError_t frt_context_for_graphs(void)
{
    return frt_context();
}

void *frt_resolve_late(const char *name)
{
    return frt_driver() == cudaSuccess ? frt_resolve(name, CU_GET_PROC_ADDRESS_DEFAULT) : NULL;
}

cudaError_t frt_result(CUresult r)
{
    return frt_ret(frt_error(r));
}

#define FRT_CTX()                              \
    do {                                       \
        cudaError_t e_ = frt_context();        \
        if (e_ != cudaSuccess)                 \
            return frt_ret(e_);                \
    } while (0)

/* ---- versions, devices, errors ----------------------------------------- */

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    FRT_ENTER(cudaDriverGetVersion);
    if (driverVersion == NULL)
        return frt_ret(cudaErrorInvalidValue);
    pthread_once(&frt_once, frt_load_driver);
    if (frt_drv.driver_version == NULL) {
        *driverVersion = 0;     /* no driver: the real runtime answers 0 */
        return cudaSuccess;
    }
    return frt_ret(frt_error(frt_drv.driver_version(driverVersion)));
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    FRT_ENTER(cudaRuntimeGetVersion);
    if (runtimeVersion == NULL)
        return frt_ret(cudaErrorInvalidValue);
    *runtimeVersion = FRT_REPORTED_VERSION;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    FRT_ENTER(cudaGetDeviceCount);
    if (count == NULL)
        return frt_ret(cudaErrorInvalidValue);
    cudaError_t e = frt_driver();
    *count = e == cudaSuccess ? frt_ndevices : 0;
    return frt_ret(e);
}

cudaError_t cudaSetDevice(int device)
{
    FRT_ENTER(cudaSetDevice);
    cudaError_t e = frt_driver();
    if (e != cudaSuccess)
        return frt_ret(e);
    if (device < 0 || device >= frt_ndevices || device >= FRT_MAX_DEVICES)
        return frt_ret(cudaErrorInvalidDevice);
    frt_device = device;
    return frt_ret(frt_context());
}

cudaError_t cudaGetDevice(int *device)
{
    FRT_ENTER(cudaGetDevice);
    if (device == NULL)
        return frt_ret(cudaErrorInvalidValue);
    cudaError_t e = frt_driver();
    if (e == cudaSuccess)
        *device = frt_device;
    return frt_ret(e);
}

cudaError_t cudaDeviceSynchronize(void)
{
    FRT_ENTER(cudaDeviceSynchronize);
    FRT_CTX();
#if CUDA_VERSION >= 13000
    return frt_ret(frt_error(frt_drv.ctx_sync(NULL)));
#else
    return frt_ret(frt_error(frt_drv.ctx_sync()));
#endif
}

#ifndef FRT_OTHER_SHAPE   /* that copy's cudaProfilerStart has another shape (fake_cudart_other_shape.c) */
/* The profiler API: the driver's, looked up at the first call (as the real runtime calls it, nested). */
static cudaError_t frt_profiler(const char *name, void *_Atomic *fn)
{
    CUresult (*f)(void) = (CUresult(*)(void))atomic_load(fn);
    if (f == NULL) {
        if ((f = (CUresult(*)(void))frt_resolve(name, CU_GET_PROC_ADDRESS_DEFAULT)) == NULL)
            return frt_ret(cudaErrorNotSupported);
        atomic_store(fn, (void *)f);
    }
    return frt_ret(frt_error(f()));
}

cudaError_t cudaProfilerStart(void)
{
    static void *_Atomic fn;
    FRT_ENTER(cudaProfilerStart);
    FRT_CTX();
    return frt_profiler("cuProfilerStart", &fn);
}

cudaError_t cudaProfilerStop(void)
{
    static void *_Atomic fn;
    FRT_ENTER(cudaProfilerStop);
    FRT_CTX();
    return frt_profiler("cuProfilerStop", &fn);
}
#endif

cudaError_t cudaGetLastError(void)
{
    FRT_ENTER(cudaGetLastError);
    cudaError_t e = frt_last_error;
    frt_last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    FRT_ENTER(cudaPeekAtLastError);
    return frt_last_error;
}

struct frt_err {
    cudaError_t code;
    const char *name;
};
#define FRT_ERR(c) {c, #c}
static const struct frt_err frt_errs[] = {
    FRT_ERR(cudaSuccess),
    FRT_ERR(cudaErrorInvalidValue),
    FRT_ERR(cudaErrorMemoryAllocation),
    FRT_ERR(cudaErrorInitializationError),
    FRT_ERR(cudaErrorCudartUnloading),
    FRT_ERR(cudaErrorProfilerDisabled),
    FRT_ERR(cudaErrorProfilerNotInitialized),
    FRT_ERR(cudaErrorProfilerAlreadyStarted),
    FRT_ERR(cudaErrorProfilerAlreadyStopped),
    FRT_ERR(cudaErrorInvalidConfiguration),
    FRT_ERR(cudaErrorInvalidPitchValue),
    FRT_ERR(cudaErrorInvalidSymbol),
    FRT_ERR(cudaErrorInvalidHostPointer),
    FRT_ERR(cudaErrorInvalidDevicePointer),
    FRT_ERR(cudaErrorInvalidTexture),
    FRT_ERR(cudaErrorInvalidTextureBinding),
    FRT_ERR(cudaErrorInvalidChannelDescriptor),
    FRT_ERR(cudaErrorInvalidMemcpyDirection),
    FRT_ERR(cudaErrorAddressOfConstant),
    FRT_ERR(cudaErrorTextureFetchFailed),
    FRT_ERR(cudaErrorTextureNotBound),
    FRT_ERR(cudaErrorSynchronizationError),
    FRT_ERR(cudaErrorInvalidFilterSetting),
    FRT_ERR(cudaErrorInvalidNormSetting),
    FRT_ERR(cudaErrorMixedDeviceExecution),
    FRT_ERR(cudaErrorNotYetImplemented),
    FRT_ERR(cudaErrorMemoryValueTooLarge),
    FRT_ERR(cudaErrorStubLibrary),
    FRT_ERR(cudaErrorInsufficientDriver),
    FRT_ERR(cudaErrorCallRequiresNewerDriver),
    FRT_ERR(cudaErrorInvalidSurface),
    FRT_ERR(cudaErrorDuplicateVariableName),
    FRT_ERR(cudaErrorDuplicateTextureName),
    FRT_ERR(cudaErrorDuplicateSurfaceName),
    FRT_ERR(cudaErrorDevicesUnavailable),
    FRT_ERR(cudaErrorIncompatibleDriverContext),
    FRT_ERR(cudaErrorMissingConfiguration),
    FRT_ERR(cudaErrorPriorLaunchFailure),
    FRT_ERR(cudaErrorLaunchMaxDepthExceeded),
    FRT_ERR(cudaErrorLaunchFileScopedTex),
    FRT_ERR(cudaErrorLaunchFileScopedSurf),
    FRT_ERR(cudaErrorSyncDepthExceeded),
    FRT_ERR(cudaErrorLaunchPendingCountExceeded),
    FRT_ERR(cudaErrorInvalidDeviceFunction),
    FRT_ERR(cudaErrorNoDevice),
    FRT_ERR(cudaErrorInvalidDevice),
    FRT_ERR(cudaErrorDeviceNotLicensed),
    FRT_ERR(cudaErrorSoftwareValidityNotEstablished),
    FRT_ERR(cudaErrorStartupFailure),
    FRT_ERR(cudaErrorInvalidKernelImage),
    FRT_ERR(cudaErrorDeviceUninitialized),
    FRT_ERR(cudaErrorMapBufferObjectFailed),
    FRT_ERR(cudaErrorUnmapBufferObjectFailed),
    FRT_ERR(cudaErrorArrayIsMapped),
    FRT_ERR(cudaErrorAlreadyMapped),
    FRT_ERR(cudaErrorNoKernelImageForDevice),
    FRT_ERR(cudaErrorAlreadyAcquired),
    FRT_ERR(cudaErrorNotMapped),
    FRT_ERR(cudaErrorNotMappedAsArray),
    FRT_ERR(cudaErrorNotMappedAsPointer),
    FRT_ERR(cudaErrorECCUncorrectable),
    FRT_ERR(cudaErrorUnsupportedLimit),
    FRT_ERR(cudaErrorDeviceAlreadyInUse),
    FRT_ERR(cudaErrorPeerAccessUnsupported),
    FRT_ERR(cudaErrorInvalidPtx),
    FRT_ERR(cudaErrorInvalidGraphicsContext),
    FRT_ERR(cudaErrorNvlinkUncorrectable),
    FRT_ERR(cudaErrorJitCompilerNotFound),
    FRT_ERR(cudaErrorUnsupportedPtxVersion),
    FRT_ERR(cudaErrorJitCompilationDisabled),
    FRT_ERR(cudaErrorUnsupportedExecAffinity),
    FRT_ERR(cudaErrorUnsupportedDevSideSync),
    FRT_ERR(cudaErrorContained),
    FRT_ERR(cudaErrorInvalidSource),
    FRT_ERR(cudaErrorFileNotFound),
    FRT_ERR(cudaErrorSharedObjectSymbolNotFound),
    FRT_ERR(cudaErrorSharedObjectInitFailed),
    FRT_ERR(cudaErrorOperatingSystem),
    FRT_ERR(cudaErrorInvalidResourceHandle),
    FRT_ERR(cudaErrorIllegalState),
    FRT_ERR(cudaErrorLossyQuery),
    FRT_ERR(cudaErrorSymbolNotFound),
    FRT_ERR(cudaErrorNotReady),
    FRT_ERR(cudaErrorIllegalAddress),
    FRT_ERR(cudaErrorLaunchOutOfResources),
    FRT_ERR(cudaErrorLaunchTimeout),
    FRT_ERR(cudaErrorLaunchIncompatibleTexturing),
    FRT_ERR(cudaErrorPeerAccessAlreadyEnabled),
    FRT_ERR(cudaErrorPeerAccessNotEnabled),
    FRT_ERR(cudaErrorSetOnActiveProcess),
    FRT_ERR(cudaErrorContextIsDestroyed),
    FRT_ERR(cudaErrorAssert),
    FRT_ERR(cudaErrorTooManyPeers),
    FRT_ERR(cudaErrorHostMemoryAlreadyRegistered),
    FRT_ERR(cudaErrorHostMemoryNotRegistered),
    FRT_ERR(cudaErrorHardwareStackError),
    FRT_ERR(cudaErrorIllegalInstruction),
    FRT_ERR(cudaErrorMisalignedAddress),
    FRT_ERR(cudaErrorInvalidAddressSpace),
    FRT_ERR(cudaErrorInvalidPc),
    FRT_ERR(cudaErrorLaunchFailure),
    FRT_ERR(cudaErrorCooperativeLaunchTooLarge),
    FRT_ERR(cudaErrorTensorMemoryLeak),
    FRT_ERR(cudaErrorNotPermitted),
    FRT_ERR(cudaErrorNotSupported),
    FRT_ERR(cudaErrorSystemNotReady),
    FRT_ERR(cudaErrorSystemDriverMismatch),
    FRT_ERR(cudaErrorCompatNotSupportedOnDevice),
    FRT_ERR(cudaErrorMpsConnectionFailed),
    FRT_ERR(cudaErrorMpsRpcFailure),
    FRT_ERR(cudaErrorMpsServerNotReady),
    FRT_ERR(cudaErrorMpsMaxClientsReached),
    FRT_ERR(cudaErrorMpsMaxConnectionsReached),
    FRT_ERR(cudaErrorMpsClientTerminated),
    FRT_ERR(cudaErrorCdpNotSupported),
    FRT_ERR(cudaErrorCdpVersionMismatch),
    FRT_ERR(cudaErrorStreamCaptureUnsupported),
    FRT_ERR(cudaErrorStreamCaptureInvalidated),
    FRT_ERR(cudaErrorStreamCaptureMerge),
    FRT_ERR(cudaErrorStreamCaptureUnmatched),
    FRT_ERR(cudaErrorStreamCaptureUnjoined),
    FRT_ERR(cudaErrorStreamCaptureIsolation),
    FRT_ERR(cudaErrorStreamCaptureImplicit),
    FRT_ERR(cudaErrorCapturedEvent),
    FRT_ERR(cudaErrorStreamCaptureWrongThread),
    FRT_ERR(cudaErrorTimeout),
    FRT_ERR(cudaErrorGraphExecUpdateFailure),
    FRT_ERR(cudaErrorExternalDevice),
    FRT_ERR(cudaErrorInvalidClusterSize),
    FRT_ERR(cudaErrorFunctionNotLoaded),
    FRT_ERR(cudaErrorInvalidResourceType),
    FRT_ERR(cudaErrorInvalidResourceConfiguration),
    FRT_ERR(cudaErrorUnknown),
};

static const char *frt_err_name(cudaError_t e)
{
    for (size_t i = 0; i < sizeof frt_errs / sizeof frt_errs[0]; i++)
        if (frt_errs[i].code == e)
            return frt_errs[i].name;
    return NULL;
}

const char *cudaGetErrorName(cudaError_t error)
{
    FRT_ENTER(cudaGetErrorName);
    const char *n = frt_err_name(error);
    return n ? n : "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
    FRT_ENTER(cudaGetErrorString);
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNotSupported: return "operation not supported";
    default: return frt_err_name(error) ? "fake runtime error" : "unrecognized error code";
    }
}

/* ---- memory ------------------------------------------------------------ */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    FRT_ENTER(cudaMalloc);
    if (devPtr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    FRT_CTX();
    if (size == 0) {            /* the runtime hands out NULL for 0 bytes */
        *devPtr = NULL;
        return cudaSuccess;
    }
    CUdeviceptr p = 0;
    CUresult r = frt_drv.mem_alloc(&p, size);
    *devPtr = r == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
    return frt_ret(frt_error(r));
}

cudaError_t cudaFree(void *devPtr)
{
    FRT_ENTER(cudaFree);
    FRT_CTX();
    if (devPtr == NULL)
        return cudaSuccess;
    return frt_ret(frt_error(frt_drv.mem_free((CUdeviceptr)(uintptr_t)devPtr)));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    FRT_ENTER(cudaMallocHost);
    if (ptr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.mem_alloc_host(ptr, size)));
}

cudaError_t cudaFreeHost(void *ptr)
{
    FRT_ENTER(cudaFreeHost);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.mem_free_host(ptr)));
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    FRT_ENTER(cudaMallocManaged);
    if (devPtr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    FRT_CTX();
    CUdeviceptr p = 0;
    CUresult r = frt_drv.mem_alloc_managed(&p, size, flags);
    *devPtr = r == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
    return frt_ret(frt_error(r));
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    FRT_ENTER(cudaMallocAsync);
    if (devPtr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    FRT_CTX();
    CUdeviceptr p = 0;
    CUresult r = frt_drv.mem_alloc_async(&p, size, hStream);
    *devPtr = r == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
    return frt_ret(frt_error(r));
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    FRT_ENTER(cudaFreeAsync);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.mem_free_async((CUdeviceptr)(uintptr_t)devPtr, hStream)));
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    FRT_ENTER(cudaMemGetInfo);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.mem_get_info(free_bytes, total)));
}

static cudaError_t frt_memcpy(const struct frt_stream_fns *f, void *dst, const void *src, size_t n,
                              enum cudaMemcpyKind kind, cudaStream_t s, int async)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, sp = (CUdeviceptr)(uintptr_t)src;
    CUresult r;
    switch (kind) {
    case cudaMemcpyHostToHost:
        memmove(dst, src, n);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        r = async ? f->htod_async(d, src, n, s) : f->htod(d, src, n);
        break;
    case cudaMemcpyDeviceToHost:
        r = async ? f->dtoh_async(dst, sp, n, s) : f->dtoh(dst, sp, n);
        break;
    case cudaMemcpyDeviceToDevice:
        r = async ? f->dtod_async(d, sp, n, s) : f->dtod(d, sp, n);
        break;
    case cudaMemcpyDefault:
        r = async ? f->copy_async(d, sp, n, s) : f->copy(d, sp, n);
        break;
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
    return frt_error(r);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    FRT_ENTER(cudaMemcpy);
    FRT_CTX();
    return frt_ret(frt_memcpy(&frt_legacy, dst, src, count, kind, NULL, 0));
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    FRT_ENTER(cudaMemcpy_ptds);
    FRT_CTX();
    cudaError_t e;
    const struct frt_stream_fns *f = frt_fns(1, &e);
    return frt_ret(e != cudaSuccess ? e : frt_memcpy(f, dst, src, count, kind, NULL, 0));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    FRT_ENTER(cudaMemcpyAsync);
    FRT_CTX();
    return frt_ret(frt_memcpy(&frt_legacy, dst, src, count, kind, stream, 1));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream)
{
    FRT_ENTER(cudaMemcpyAsync_ptsz);
    FRT_CTX();
    cudaError_t e;
    const struct frt_stream_fns *f = frt_fns(1, &e);
    return frt_ret(e != cudaSuccess ? e : frt_memcpy(f, dst, src, count, kind, stream, 1));
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    FRT_ENTER(cudaMemset);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.memset_d8((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count)));
}

/* ---- streams and events ------------------------------------------------ */

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    FRT_ENTER(cudaStreamCreate);
    if (pStream == NULL)
        return frt_ret(cudaErrorInvalidValue);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.stream_create(pStream, CU_STREAM_DEFAULT)));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    FRT_ENTER(cudaStreamDestroy);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.stream_destroy(stream)));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    FRT_ENTER(cudaStreamSynchronize);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.stream_sync(stream)));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    FRT_ENTER(cudaLaunchHostFunc);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.launch_host_func(stream, fn, userData)));
}

/* the callback's status is the driver's CUresult: the fake's streams never fail, so it is CUDA_SUCCESS (cudaSuccess) */
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData, unsigned int flags)
{
    FRT_ENTER(cudaStreamAddCallback);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.stream_add_callback(stream, (CUstreamCallback)(void (*)(void))callback, userData,
                                                         flags)));
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    FRT_ENTER(cudaEventCreate);
    if (event == NULL)
        return frt_ret(cudaErrorInvalidValue);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.event_create(event, CU_EVENT_DEFAULT)));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    FRT_ENTER(cudaEventRecord);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.event_record(event, stream)));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    FRT_ENTER(cudaEventSynchronize);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.event_sync(event)));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    FRT_ENTER(cudaEventElapsedTime);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.event_elapsed(ms, start, end)));
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    FRT_ENTER(cudaEventDestroy);
    FRT_CTX();
    return frt_ret(frt_error(frt_drv.event_destroy(event)));
}

/* ---- launches ---------------------------------------------------------- */

static cudaError_t frt_function(const void *host, CUfunction *out)
{
    int dev = frt_device;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&frt_lock);
    for (int i = 0; i < frt_nhandles; i++)   /* a cudaKernel_t "used as is": its stub's function */
        if ((const void *)frt_handles[i].kernel == host)
            host = frt_handles[i].host;
    for (int i = 0; i < frt_nkernels; i++) {
        if (frt_kernels[i].host == host && frt_kernels[i].device == dev) {
            *out = frt_kernels[i].func;
            pthread_mutex_unlock(&frt_lock);
            return cudaSuccess;
        }
    }
    const void *image = NULL;
    char name[256];
    if (frr_lookup(host, &image, name, sizeof name)) {
        /* a registered stub (fake_cudart_register.c): its fat binary, loaded once per device */
        CUmodule m = NULL;
        for (int i = 0; i < frt_nimages && m == NULL; i++)
            if (frt_images[i].image == image && frt_images[i].device == dev)
                m = frt_images[i].module;
        if (m == NULL && (r = frt_drv.module_load(&m, image)) == CUDA_SUCCESS &&
            frt_nimages < (int)(sizeof frt_images / sizeof frt_images[0]))
            frt_images[frt_nimages++] = (struct frt_loaded){image, dev, m};
        if (r == CUDA_SUCCESS)
            r = frt_drv.module_get_function(out, m, name);
    } else {
        if (frt_module[dev] == NULL)
            r = frt_drv.module_load(&frt_module[dev], frt_image);
        if (r == CUDA_SUCCESS) {
            snprintf(name, sizeof name, "kernel_%p", host);
            r = frt_drv.module_get_function(out, frt_module[dev], name);
        }
    }
    if (r == CUDA_SUCCESS && frt_nkernels < (int)(sizeof frt_kernels / sizeof frt_kernels[0]))
        frt_kernels[frt_nkernels++] = (struct frt_kernel){host, dev, *out};
    pthread_mutex_unlock(&frt_lock);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

static cudaError_t frt_launch(int per_thread, const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                              cudaStream_t s)
{
    if (func == NULL)
        return cudaErrorInvalidDeviceFunction;
    cudaError_t e = frt_context();
    if (e != cudaSuccess)
        return e;
    const struct frt_stream_fns *fns = frt_fns(per_thread, &e);
    if (e != cudaSuccess)
        return e;
    CUfunction f;
    e = frt_function(func, &f);
    if (e != cudaSuccess)
        return e;
    CUresult r = fns->launch(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned int)shmem, s, args, NULL);
    /* a configuration the driver refuses: CUDA 12's runtime says cudaErrorInvalidConfiguration, CUDA 13's passes
       the driver's word on, by either launch path (`<<<>>>` and cudaLaunchKernel with 4096 or 0 threads, 0
       blocks, too much shared memory on an H100 with CUDA 13.0: cudaErrorInvalidValue, journal 2026-12-07) */
    if (r == CUDA_ERROR_INVALID_VALUE)
        return FRT_RUNTIME_VERSION >= 13000 ? cudaErrorInvalidValue : cudaErrorInvalidConfiguration;
    return r == CUDA_SUCCESS ? cudaSuccess : frt_error(r);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    FRT_ENTER(cudaLaunchKernel);
    return frt_ret(frt_launch(0, func, gridDim, blockDim, args, sharedMem, stream));
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream)
{
    FRT_ENTER(cudaLaunchKernel_ptsz);
    return frt_ret(frt_launch(1, func, gridDim, blockDim, args, sharedMem, stream));
}

/* The function a launch of a registered stub uses on the thread's device, as the real runtime answers it: the
   driver's CUfunction; an address no fat binary registered is cudaErrorInvalidDeviceFunction (no "kernel_<address>"
   fallback here, unlike a launch). */
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    FRT_ENTER(cudaGetFuncBySymbol);
    const void *image;
    char name[256];
    CUfunction f;
    if (functionPtr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    if (symbolPtr == NULL || !frr_lookup(symbolPtr, &image, name, sizeof name))
        return frt_ret(cudaErrorInvalidDeviceFunction);
    cudaError_t e = frt_context();
    if (e == cudaSuccess)
        e = frt_function(symbolPtr, &f);
    if (e == cudaSuccess)
        *functionPtr = (cudaFunction_t)f;
    return frt_ret(e);
}

#if CUDART_VERSION >= 12000
/* A registered stub's kernel: its fat binary loaded once as a library (cuLibraryLoadData), the kernel by name
   (cuLibraryGetKernel). The runtime's calls that take a stub take it too (frt_function). */
cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    FRT_ENTER(cudaGetKernel);
    static void *_Atomic load, *_Atomic get;
    const void *image;
    char name[256];
    if (kernelPtr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    if (entryFuncAddr == NULL || !frr_lookup(entryFuncAddr, &image, name, sizeof name))
        return frt_ret(cudaErrorInvalidDeviceFunction);
    FRT_CTX();
    if (atomic_load(&load) == NULL)
        atomic_store(&load, frt_resolve("cuLibraryLoadData", CU_GET_PROC_ADDRESS_DEFAULT));
    if (atomic_load(&get) == NULL)
        atomic_store(&get, frt_resolve("cuLibraryGetKernel", CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*load_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **,
                        unsigned) = atomic_load(&load);
    CUresult (*get_fn)(CUkernel *, CUlibrary, const char *) = atomic_load(&get);
    if (load_fn == NULL || get_fn == NULL)
        return frt_ret(cudaErrorNotSupported);
    CUresult r = CUDA_SUCCESS;
    CUlibrary lib = NULL;
    CUkernel k = NULL;
    pthread_mutex_lock(&frt_lock);
    for (int i = 0; i < frt_nhandles; i++) {
        if (frt_handles[i].host == entryFuncAddr)
            k = frt_handles[i].kernel;
        if (frt_handles[i].image == image)
            lib = frt_handles[i].library;
    }
    int fresh = k == NULL;
    if (fresh && lib == NULL)
        r = load_fn(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
    if (fresh && r == CUDA_SUCCESS)
        r = get_fn(&k, lib, name);
    if (fresh && r == CUDA_SUCCESS && frt_nhandles < (int)(sizeof frt_handles / sizeof frt_handles[0]))
        frt_handles[frt_nhandles++] = (struct frt_kernel_handle){image, entryFuncAddr, lib, k};
    pthread_mutex_unlock(&frt_lock);
    if (r != CUDA_SUCCESS)
        return frt_ret(frt_error(r));
    *kernelPtr = (cudaKernel_t)k;
    return cudaSuccess;
}
#endif

/* What a pointer is: the driver's memory type and device; memory the driver does not know is unregistered
   host memory (cudaSuccess, as the runtime answers since CUDA 11). */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    FRT_ENTER(cudaPointerGetAttributes);
    static void *_Atomic get;
    if (attributes == NULL)
        return frt_ret(cudaErrorInvalidValue);
    cudaError_t e = frt_driver();
    if (e == cudaSuccess && atomic_load(&get) == NULL)
        atomic_store(&get, frt_resolve("cuPointerGetAttribute", CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*fn)(void *, CUpointer_attribute, CUdeviceptr) = atomic_load(&get);
    if (e != cudaSuccess || fn == NULL)
        return frt_ret(e != cudaSuccess ? e : cudaErrorNotSupported);
    unsigned int type = 0;
    int device = -1;
    memset(attributes, 0, sizeof *attributes);
    CUresult r = fn(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)ptr);
    if (r == CUDA_ERROR_INVALID_VALUE) {
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = -2;
        attributes->hostPointer = (void *)ptr;
        return cudaSuccess;
    }
    if (r == CUDA_SUCCESS)
        r = fn(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)ptr);
    if (r != CUDA_SUCCESS)
        return frt_ret(frt_error(r));
    attributes->type = type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
    attributes->device = device;
    attributes->devicePointer = (void *)ptr;
    if (type == CU_MEMORYTYPE_HOST)
        attributes->hostPointer = (void *)ptr;
    return cudaSuccess;
}

/* A function's attributes and occupancy: the driver's, for the stub's function on the thread's device. */
static cudaError_t frt_func_of(const void *func, CUfunction *f)
{
    if (func == NULL)
        return cudaErrorInvalidDeviceFunction;
    cudaError_t e = frt_context();
    return e != cudaSuccess ? e : frt_function(func, f);
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    static const struct {
        size_t offset, size;
        CUfunction_attribute a;
    } map[] = {
#define FRT_FA(field, attrib) { offsetof(struct cudaFuncAttributes, field), \
                                sizeof(((struct cudaFuncAttributes *)0)->field), attrib }
        FRT_FA(sharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
        FRT_FA(constSizeBytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
        FRT_FA(localSizeBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
        FRT_FA(maxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        FRT_FA(numRegs, CU_FUNC_ATTRIBUTE_NUM_REGS),
        FRT_FA(ptxVersion, CU_FUNC_ATTRIBUTE_PTX_VERSION),
        FRT_FA(binaryVersion, CU_FUNC_ATTRIBUTE_BINARY_VERSION),
        FRT_FA(cacheModeCA, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA),
        FRT_FA(maxDynamicSharedSizeBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
        FRT_FA(preferredShmemCarveout, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT),
#undef FRT_FA
    };
    FRT_ENTER(cudaFuncGetAttributes);
    static void *_Atomic get;
    CUfunction f;
    if (attr == NULL)
        return frt_ret(cudaErrorInvalidValue);
    cudaError_t e = frt_func_of(func, &f);
    if (e == cudaSuccess && atomic_load(&get) == NULL)
        atomic_store(&get, frt_resolve("cuFuncGetAttribute", CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*fn)(int *, CUfunction_attribute, CUfunction) = atomic_load(&get);
    if (e != cudaSuccess || fn == NULL)
        return frt_ret(e != cudaSuccess ? e : cudaErrorNotSupported);
    memset(attr, 0, sizeof *attr);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        int v = 0;
        CUresult r = fn(&v, map[i].a, f);
        if (r != CUDA_SUCCESS)
            return frt_ret(frt_error(r));
        if (map[i].size == sizeof(size_t)) {
            size_t z = (size_t)v;
            memcpy((char *)attr + map[i].offset, &z, sizeof z);
        } else {
            memcpy((char *)attr + map[i].offset, &v, sizeof v);
        }
    }
    return cudaSuccess;
}

#if CUDART_VERSION >= 12040
/* A function's name and parameters: the driver's, for the stub's function on the thread's device. */
cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    FRT_ENTER(cudaFuncGetName);
    static void *_Atomic get;
    CUfunction f;
    if (name == NULL)
        return frt_ret(cudaErrorInvalidValue);
    cudaError_t e = frt_func_of(func, &f);
    if (e == cudaSuccess && atomic_load(&get) == NULL)
        atomic_store(&get, frt_resolve("cuFuncGetName", CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*fn)(const char **, CUfunction) = atomic_load(&get);
    if (e != cudaSuccess || fn == NULL)
        return frt_ret(e != cudaSuccess ? e : cudaErrorNotSupported);
    return frt_ret(frt_error(fn(name, f)));
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    FRT_ENTER(cudaFuncGetParamInfo);
    static void *_Atomic get;
    CUfunction f;
    cudaError_t e = frt_func_of(func, &f);
    if (e == cudaSuccess && atomic_load(&get) == NULL)
        atomic_store(&get, frt_resolve("cuFuncGetParamInfo", CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*fn)(CUfunction, size_t, size_t *, size_t *) = atomic_load(&get);
    if (e != cudaSuccess || fn == NULL)
        return frt_ret(e != cudaSuccess ? e : cudaErrorNotSupported);
    return frt_ret(frt_error(fn(f, paramIndex, paramOffset, paramSize)));
}
#endif

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    FRT_ENTER(cudaFuncSetAttribute);
    static void *_Atomic set;
    CUfunction f;
    cudaError_t e = frt_func_of(func, &f);
    if (e == cudaSuccess && atomic_load(&set) == NULL)
        atomic_store(&set, frt_resolve("cuFuncSetAttribute", CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*fn)(CUfunction, CUfunction_attribute, int) = atomic_load(&set);
    if (e != cudaSuccess || fn == NULL)
        return frt_ret(e != cudaSuccess ? e : cudaErrorNotSupported);
    return frt_ret(frt_error(fn(f, (CUfunction_attribute)attr, value)));   /* the same numbers from 8 on */
}

static cudaError_t frt_occupancy(int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
                                 unsigned int flags)
{
    static void *_Atomic occ;
    CUfunction f;
    cudaError_t e = frt_func_of(func, &f);
    if (e == cudaSuccess && atomic_load(&occ) == NULL)
        atomic_store(&occ, frt_resolve("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                                       CU_GET_PROC_ADDRESS_DEFAULT));
    CUresult (*fn)(int *, CUfunction, int, size_t, unsigned int) = atomic_load(&occ);
    if (e != cudaSuccess || fn == NULL)
        return frt_ret(e != cudaSuccess ? e : cudaErrorNotSupported);
    return frt_ret(frt_error(fn(numBlocks, f, blockSize, dynamicSMemSize, flags)));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    FRT_ENTER(cudaOccupancyMaxActiveBlocksPerMultiprocessor);
    return frt_occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    FRT_ENTER(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
    return frt_occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags);
}

/* ---- driver entry points ----------------------------------------------- */

static cudaError_t frt_entry_point(const char *symbol, void **funcPtr, int version, unsigned long long flags,
                                   enum cudaDriverEntryPointQueryResult *driverStatus)
{
    if (symbol == NULL || funcPtr == NULL || (flags & ~3ull) != 0)
        return cudaErrorInvalidValue;
    cudaError_t e = frt_driver();
    if (e != cudaSuccess)
        return e;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r;
    atomic_fetch_add(&frt_lookups, 1);
    if (frt_drv.get_proc != NULL) {
        r = frt_drv.get_proc(symbol, funcPtr, version, flags, &st);
    } else {
        r = frt_drv.get_proc_v1(symbol, funcPtr, version, flags);
        st = r == CUDA_SUCCESS ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    if (r != CUDA_SUCCESS)
        *funcPtr = NULL;
    if (driverStatus != NULL) {
        *driverStatus = (enum cudaDriverEntryPointQueryResult)st;
        return cudaSuccess;
    }
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorSymbolNotFound;
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    FRT_ENTER(cudaGetDriverEntryPoint);
    return frt_ret(frt_entry_point(symbol, funcPtr, FRT_RUNTIME_VERSION, flags, driverStatus));
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    FRT_ENTER(cudaGetDriverEntryPointByVersion);
    return frt_ret(frt_entry_point(symbol, funcPtr, (int)cudaVersion, flags, driverStatus));
}

/* ---- for fake_cudart_alloc.c (the other allocation paths) ---------------- */
FRT_HIDDEN cudaError_t frt_ext_context(void)
{
    return frt_context();
}

FRT_HIDDEN void *frt_ext_resolve(const char *name)
{
    return frt_driver() == cudaSuccess ? frt_resolve(name, CU_GET_PROC_ADDRESS_DEFAULT) : NULL;
}

FRT_HIDDEN cudaError_t frt_ext_ret(CUresult r)
{
    return frt_ret(frt_error(r));
}

FRT_HIDDEN int frt_ext_device(void)
{
    return frt_device;
}

/* ---- for fake_cudart_launch.c (the other calls that take a stub) ------------------------------------------- */
FRT_HIDDEN cudaError_t frt_ext_function(const void *func, CUfunction *f)
{
    return frt_func_of(func, f);
}

FRT_HIDDEN void *frt_ext_resolve_stream(const char *name, int per_thread)
{
    return frt_driver() == cudaSuccess
               ? frt_resolve(name, per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT)
               : NULL;
}

FRT_HIDDEN cudaError_t frt_ext_rt(cudaError_t e)
{
    return frt_ret(e);
}
