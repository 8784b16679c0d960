/*
 * e2e_layer_hami.c - a HAMi-core-like interposer (GPU memory quota), for the stacking tests.
 *
 * Written for these tests after the behaviour of HAMi-core's src/libvgpu.c and src/cuda/hook.c
 * (no code taken), the parts that decide how two interposers stack:
 *   - it exports dlsym; its "real" dlsym is dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
 *   - its dlsym: RTLD_NEXT -> real_dlsym(RTLD_NEXT, name) (relative to this library, as HAMi);
 *     a name starting with "cu" -> real_dlsym(<this library's own handle>, name) if found there
 *     (HAMi opens $CUDA_REDIRECT or /usr/local/vgpu/libvgpu.so, its own file; here: its own path);
 *     else real_dlsym(handle, name);
 *   - it exports its own hooks (cuInit, cuDriverGetVersion, cuDeviceGetCount, cuMemAlloc_v2,
 *     cuMemFree_v2, cuGetProcAddress, cuGetProcAddress_v2); their real functions come from
 *     dlopen("libcuda.so.1", RTLD_NOW | RTLD_NODELETE) + real_dlsym(table, name), loaded once on
 *     the first cu* look-up or hook call;
 *   - cuGetProcAddress(_v2) returns its own hook for a base name it hooks (the _v2 one also calls
 *     the real function for the status), else asks the real one;
 *   - it links libcuda (its own handle's scope includes the driver);
 *   - its dlsym answers nvml* names itself (HAMi hooks NVML that way): here one,
 *     nvmlDeviceGetCount_v2, with a function it does not export (e2e_layer_nvml_hook() tells it);
 *   - cuMemAlloc_v2 past E2E_LAYER_LIMIT bytes in use returns CUDA_ERROR_OUT_OF_MEMORY without
 *     calling the driver (HAMi: CUDA_DEVICE_MEMORY_LIMIT).
 * Counts: e2e_layer_calls(name) (entries into a hook), e2e_layer_forwarded(name) (calls it made to
 * its real function, its own status look-ups included); E2E_LAYER_COUNTS=<file> gets
 * 'name<TAB>calls' lines at exit. Built without sanitizers: like HAMi, its dlsym can run inside a
 * sanitizer runtime's start-up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __CUDA_API_VERSION_INTERNAL 1   /* declare the exported names (cuMemAlloc_v2, cuGetProcAddress) */
#include <cuda.h>

#define LX __attribute__((visibility("default")))
#define LY_HOOKED LY_N   /* all of ly_names */

#include "e2e_layer_common.h"

typedef void *(*lh_dlsym_fn)(void *, const char *);
static lh_dlsym_fn lh_real_dlsym;
static pthread_once_t lh_dlsym_once = PTHREAD_ONCE_INIT;
static pthread_once_t lh_init_once = PTHREAD_ONCE_INIT;
static void *lh_self;   /* this library's own handle */

static void lh_find_dlsym(void)
{
    lh_real_dlsym = (lh_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (lh_real_dlsym == NULL)
        lh_real_dlsym = (lh_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
}

/* HAMi's preInit/load_cuda_libraries: the real functions, from libcuda.so.1's handle. */
static void lh_init(void)
{
    pthread_once(&lh_dlsym_once, lh_find_dlsym);
    Dl_info di;
    const char *redirect = getenv("CUDA_REDIRECT");
    if (redirect != NULL && redirect[0] != '\0')
        lh_self = dlopen(redirect, RTLD_LAZY);
    else if (dladdr((void *)lh_init, &di) != 0 && di.dli_fname != NULL)
        lh_self = dlopen(di.dli_fname, RTLD_LAZY);
    void *table = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NODELETE);
    for (int i = 0; i < LY_N && table != NULL && lh_real_dlsym != NULL; i++)
        ly_real[i] = lh_real_dlsym(table, ly_names[i]);
    if (table != NULL)
        dlclose(table);
    ly_write_at_exit();
}

static void *lh_real(int i)
{
    pthread_once(&lh_init_once, lh_init);
    atomic_fetch_add(&ly_fwd[i], 1);
    return ly_real[i];
}

/* Stands for HAMi's NVML hooks: reachable only through its dlsym. */
static int lh_nvml_count(unsigned int *n)
{
    *n = 1;
    return 0;
}

LX void *e2e_layer_nvml_hook(void)
{
    return (void *)lh_nvml_count;
}

LX void *dlsym(void *handle, const char *symbol)
{
    pthread_once(&lh_dlsym_once, lh_find_dlsym);
    if (lh_real_dlsym == NULL)
        return NULL;
    if (handle == RTLD_NEXT)
        return lh_real_dlsym(RTLD_NEXT, symbol);
    if (symbol[0] == 'c' && symbol[1] == 'u') {
        pthread_once(&lh_init_once, lh_init);
        void *f = lh_self ? lh_real_dlsym(lh_self, symbol) : NULL;
        if (f != NULL)
            return f;
    }
    if (strcmp(symbol, "nvmlDeviceGetCount_v2") == 0)
        return (void *)lh_nvml_count;
    return lh_real_dlsym(handle, symbol);
}

LY_COMMON_HOOKS(lh_real)

/* Its own hook for a base name it hooks (HAMi: find_symbols_in_table_by_cudaversion). */
static void *lh_own(const char *symbol, int version)
{
    if (strcmp(symbol, "cuInit") == 0)
        return (void *)cuInit;
    if (strcmp(symbol, "cuDriverGetVersion") == 0)
        return (void *)cuDriverGetVersion;
    if (strcmp(symbol, "cuDeviceGetCount") == 0)
        return (void *)cuDeviceGetCount;
    if (strcmp(symbol, "cuMemAlloc") == 0 && version >= 3020)
        return (void *)cuMemAlloc_v2;
    if (strcmp(symbol, "cuMemFree") == 0 && version >= 3020)
        return (void *)cuMemFree_v2;
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        return version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    return NULL;
}

LX CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    atomic_fetch_add(&ly_calls[LY_cuGetProcAddress], 1);
    void *own = symbol ? lh_own(symbol, cudaVersion) : NULL;
    if (own != NULL && pfn != NULL) {
        *pfn = own;
        return CUDA_SUCCESS;
    }
    CUresult (*real)(const char *, void **, int, cuuint64_t) =
        (CUresult(*)(const char *, void **, int, cuuint64_t))lh_real(LY_cuGetProcAddress);
    return real ? real(symbol, pfn, cudaVersion, flags) : CUDA_ERROR_NOT_FOUND;
}

LX CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *status)
{
    atomic_fetch_add(&ly_calls[LY_cuGetProcAddress_v2], 1);
    CUresult (*real)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        (CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))lh_real(
            LY_cuGetProcAddress_v2);
    if (real == NULL)
        return CUDA_ERROR_NOT_FOUND;
    void *own = symbol ? lh_own(symbol, cudaVersion) : NULL;
    if (own == NULL)
        return real(symbol, pfn, cudaVersion, flags, status);
    void *unused = NULL;   /* as HAMi: the real one is asked too, for the result and status */
    CUresult r = real(symbol, &unused, cudaVersion, flags, status);
    if (r == CUDA_SUCCESS && pfn != NULL)
        *pfn = own;
    return r;
}
