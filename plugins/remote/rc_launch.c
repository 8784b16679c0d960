/*
 * rc_launch.c - the runtime's launches over remoting (docs/remote.md, "Runtime-API programs"): nvcc's <<<>>>
 * configurations (__cudaPushCallConfiguration / __cudaPopCallConfiguration, per thread), cudaLaunchKernel[_ptsz]
 * and CUDA 13's __cudaGetKernel / __cudaLaunchKernel[_ptsz], each a driver launch on the stub's server function
 * (rc_stub.c). A launch may be batched (remote.c), so its configuration is checked here first, as the runtime does
 * before the driver sees it: a batched call's error would come back later, from another call.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "rc_int.h"
#include "rm_names.h"

#define RC_EXPORT __attribute__((visibility("default")))
#define RC_MAX_CONFIGS 16

typedef struct rc_config {
    rc_dim3 grid, block;
    size_t shmem;
    void *stream;
} rc_config;
static __thread rc_config rc_configs[RC_MAX_CONFIGS];
static __thread int rc_nconfigs;

/* the driver calls and runtime APIs this file takes (rc_launch_init) */
static struct {
    rc_api launch[2];                  /* cuLaunchKernel[_ptsz] */
    uint32_t id_launch[2];             /* cudaLaunchKernel[_ptsz] */
} rl;

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

static int32_t rc_launch(const void *stub, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream,
                         int per_thread)
{
    uint64_t f = 0;
    if (rc.host == NULL)
        return 3;   /* cudaErrorInitializationError: the plugin was preloaded but not loaded as a plugin */
    if (shmem > UINT32_MAX)
        return rc_fail(rc.e_inval);
    int32_t r = rc_stub_function(stub, &f);
    if (r != 0)
        return rc_fail(r);
    /* the configuration, checked here as the runtime does before the driver sees it: launches may be batched
       (remote.c), and a batched call's error would come back later, from another call */
    int max = rc_stub_max_threads(stub, f);
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0 ||
        (max > 0 && (uint64_t)b.x * b.y * b.z > (uint64_t)max))
        return rc_fail(rc.e_config);
    const rc_api *api = &rl.launch[per_thread];
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

int rc_launch_pre(cushim_call *call, int32_t *result)
{
    for (int pt = 0; pt < 2; pt++)
        if (call->api_id == rl.id_launch[pt]) {
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
    return 0;
}

int rc_launch_init(void)
{
    rl.id_launch[0] = rm_api_id(rc.host, "cudaLaunchKernel", UINT32_MAX);
    rl.id_launch[1] = rm_api_id(rc.host, "cudaLaunchKernel_ptsz", UINT32_MAX);
    return rc_api_of(&rl.launch[0], "cuLaunchKernel") | rc_api_of(&rl.launch[1], "cuLaunchKernel_ptsz") ? -1 : 0;
}
