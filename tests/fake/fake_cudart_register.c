/*
 * fake_cudart_register.c - what nvcc's generated code calls in the runtime: fat-binary, function and
 * variable registration from a program's constructors, and the <<<>>> call configuration.
 *
 * __cudaRegisterFatBinary gets the fat binary's wrapper ({magic 0x466243b1, version, data, ...}; 'data' is
 * the fatbin: magic 0xba55ed50, header size, payload size) and returns a handle; __cudaRegisterFunction maps
 * a host stub's address to the kernel's device name in that fat binary. A launch of a registered stub loads
 * the stub's fat binary as a module on the thread's device (once) and takes the function by its name, as the
 * real runtime does; an unregistered address falls back to fake_cudart.c's "kernel_<address>".
 * __cudaPushCallConfiguration/__cudaPopCallConfiguration keep a per-thread stack of launch configurations;
 * __cudaGetKernel/__cudaLaunchKernel[_ptsz] are CUDA 13's launch path (a kernel handle per stub).
 * The remoting's client replaces all of these with its own (plugins/remote/rc_cudart.c); the e2e programs
 * call them as nvcc's output would (tests/e2e/e2e_remote_rt.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "fake_cudart_internal.h"

#define FRR_MAX_BINARIES 64
#define FRR_MAX_FUNCTIONS 256
#define FRR_MAX_CONFIGS 16

typedef struct frr_wrapper {       /* the fat binary's wrapper, as nvcc emits it */
    int magic, version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} frr_wrapper;

typedef struct frr_binary {
    const frr_wrapper *wrapper;    /* NULL: free */
    int ended, unregistered;
} frr_binary;

typedef struct frr_function {
    const void *host;
    int binary;
    char name[256];
} frr_function;

static pthread_mutex_t frr_lock = PTHREAD_MUTEX_INITIALIZER;
static frr_binary frr_binaries[FRR_MAX_BINARIES];      /* under frr_lock */
static frr_function frr_functions[FRR_MAX_FUNCTIONS];  /* under frr_lock */
static int frr_nfunctions;

typedef struct frr_config {
    dim3 grid, block;
    size_t shmem;
    void *stream;
} frr_config;
static __thread frr_config frr_configs[FRR_MAX_CONFIGS];
static __thread int frr_nconfigs;

__attribute__((visibility("default"))) void **__cudaRegisterFatBinary(void *fatCubin);
__attribute__((visibility("default"))) void __cudaRegisterFatBinaryEnd(void **handle);
__attribute__((visibility("default"))) void __cudaUnregisterFatBinary(void **handle);
__attribute__((visibility("default"))) void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun,
                                                                   const char *deviceName, int thread_limit,
                                                                   uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim,
                                                                   int *wSize);
__attribute__((visibility("default"))) void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
                                                              const char *deviceName, int ext, size_t size,
                                                              int constant, int global);
__attribute__((visibility("default"))) unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                                                            size_t sharedMem, void *stream);
__attribute__((visibility("default"))) cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                                                               size_t *sharedMem, void *stream);

void **__cudaRegisterFatBinary(void *fatCubin)
{
    const frr_wrapper *w = fatCubin;
    void **h = NULL;
    if (w == NULL || w->magic != 0x466243b1 || w->data == NULL)
        return NULL;
    pthread_mutex_lock(&frr_lock);
    for (int i = 0; i < FRR_MAX_BINARIES && h == NULL; i++)
        if (frr_binaries[i].wrapper == NULL) {
            frr_binaries[i] = (frr_binary){ .wrapper = w };
            h = (void **)&frr_binaries[i].wrapper;
        }
    pthread_mutex_unlock(&frr_lock);
    return h;
}

static frr_binary *frr_binary_of(void **handle)
{
    for (int i = 0; i < FRR_MAX_BINARIES; i++)
        if (handle == (void **)&frr_binaries[i].wrapper && frr_binaries[i].wrapper != NULL)
            return &frr_binaries[i];
    return NULL;
}

void __cudaRegisterFatBinaryEnd(void **handle)
{
    pthread_mutex_lock(&frr_lock);
    frr_binary *b = frr_binary_of(handle);
    if (b != NULL)
        b->ended = 1;
    pthread_mutex_unlock(&frr_lock);
}

void __cudaUnregisterFatBinary(void **handle)
{
    pthread_mutex_lock(&frr_lock);
    frr_binary *b = frr_binary_of(handle);
    if (b != NULL)
        b->unregistered = 1;   /* its functions stop resolving; the slot is not reused (handles stay unique) */
    pthread_mutex_unlock(&frr_lock);
}

void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    pthread_mutex_lock(&frr_lock);
    frr_binary *b = frr_binary_of(handle);
    if (b != NULL && deviceName != NULL && strlen(deviceName) < sizeof frr_functions[0].name &&
        frr_nfunctions < FRR_MAX_FUNCTIONS) {
        frr_function *f = &frr_functions[frr_nfunctions++];
        f->host = hostFun;
        f->binary = (int)(b - frr_binaries);
        strcpy(f->name, deviceName);
    }
    pthread_mutex_unlock(&frr_lock);
}

void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    (void)handle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)ext, (void)size, (void)constant,
        (void)global;   /* the fake runtime has no symbol copies */
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream)
{
    if (frr_nconfigs == FRR_MAX_CONFIGS)
        return 1;
    frr_configs[frr_nconfigs++] = (frr_config){ gridDim, blockDim, sharedMem, stream };
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (frr_nconfigs == 0)
        return cudaErrorMissingConfiguration;
    frr_config c = frr_configs[--frr_nconfigs];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shmem;
    memcpy(stream, &c.stream, sizeof c.stream);
    return cudaSuccess;
}

/* CUDA 13's launch path (nvcc without __NV_LEGACY_LAUNCH): a kernel handle per stub, then a launch by it. Here
   the handle is the stub's address and the launch the stub's cudaLaunchKernel[_ptsz]. */
__attribute__((visibility("default"))) cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub);
__attribute__((visibility("default"))) cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args,
                                                                      size_t shmem, cudaStream_t stream);
__attribute__((visibility("default"))) cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b,
                                                                           void **args, size_t shmem,
                                                                           cudaStream_t stream);

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub)
{
    if (kernel == NULL)
        return cudaErrorInvalidValue;
    *kernel = (cudaKernel_t)(uintptr_t)stub;
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t stream)
{
    return cudaLaunchKernel((const void *)(uintptr_t)kernel, g, b, args, shmem, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem,
                                   cudaStream_t stream)
{
    return cudaLaunchKernel_ptsz((const void *)(uintptr_t)kernel, g, b, args, shmem, stream);
}

/* For fake_cudart.c: the fat binary image (the wrapper's data) and device name of a registered host stub.
   Returns 0 when 'host' is not registered. */
__attribute__((visibility("hidden"))) int frr_lookup(const void *host, const void **image, char *name, size_t cap)
{
    int found = 0;
    pthread_mutex_lock(&frr_lock);
    for (int i = 0; i < frr_nfunctions && !found; i++) {
        const frr_binary *b = &frr_binaries[frr_functions[i].binary];
        if (frr_functions[i].host == host && !b->unregistered && strlen(frr_functions[i].name) < cap) {
            *image = b->wrapper->data;
            strcpy(name, frr_functions[i].name);
            found = 1;
        }
    }
    pthread_mutex_unlock(&frr_lock);
    return found;
}
