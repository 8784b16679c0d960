/*
 * fake_cudart_internal.h - shared by the files of the fake libcudart.so.13.
 */
#ifndef FAKE_CUDART_INTERNAL_H
#define FAKE_CUDART_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "cushim_cuda_headers.h"
#include "cushim_api_ids.h"

__attribute__((visibility("hidden"))) void frt_count(uint32_t id);
#define FRT_ENTER(name) frt_count(CUSHIM_API_##name)

/* fake_cudart_register.c: the fat binary and device name of a registered host stub; 0 if not registered. */
__attribute__((visibility("hidden"))) int frr_lookup(const void *host, const void **image, char *name, size_t cap);

/* fake_cudart.c, for fake_cudart_graph.c: the thread's context made current; a driver function looked up by name
   (NULL: none); a driver result as the runtime's, kept as the thread's last error. */
__attribute__((visibility("hidden"))) cudaError_t frt_context_for_graphs(void);
__attribute__((visibility("hidden"))) void *frt_resolve_late(const char *name);
__attribute__((visibility("hidden"))) cudaError_t frt_result(CUresult r);

/* fake_cudart.c, for the files of the other paths (fake_cudart_alloc.c, fake_cudart_ipc.c): the thread's context
   made current; a driver function by name (NULL: none); a driver result as the runtime's; the current device. */
__attribute__((visibility("hidden"))) cudaError_t frt_ext_context(void);
__attribute__((visibility("hidden"))) void *frt_ext_resolve(const char *name);
__attribute__((visibility("hidden"))) cudaError_t frt_ext_ret(CUresult r);
__attribute__((visibility("hidden"))) int frt_ext_device(void);
/* fake_cudart.c, for fake_cudart_launch.c: the stub's (or cudaGetKernel's kernel's) function on the thread's
   device, its context made current; a driver function by name, the per-thread default stream's form if asked. */
__attribute__((visibility("hidden"))) cudaError_t frt_ext_function(const void *func, CUfunction *f);
__attribute__((visibility("hidden"))) void *frt_ext_resolve_stream(const char *name, int per_thread);
/* a runtime error kept as the thread's last error, returned */
__attribute__((visibility("hidden"))) cudaError_t frt_ext_rt(cudaError_t e);
#define FRA_CTX()                           \
    do {                                    \
        cudaError_t e_ = frt_ext_context(); \
        if (e_ != cudaSuccess)              \
            return e_;                      \
    } while (0)
/* The driver function 'name' as a pointer of type 'type', or fail with cudaErrorInsufficientDriver. */
#define FRA_FN(type, var, name)                 \
    type var = (type)frt_ext_resolve(name);     \
    if (var == NULL)                            \
        return cudaErrorInsufficientDriver

/* Calls the fake runtime received under exported name 'name'. */
uint64_t fake_cudart_call_count(const char *name);
/* Calls this runtime made to the driver's cuGetProcAddress / cuGetProcAddress_v2. */
uint64_t fake_cudart_driver_lookups(void);

#endif /* FAKE_CUDART_INTERNAL_H */
