/*
 * fake_cudart_launch.c - the fake runtime's other calls that take a kernel's host stub, each through its driver form
 * on the stub's function (fake_cudart.c's frt_ext_function), as the real runtime does: cudaLaunchKernelExC[_ptsz]
 * (cuLaunchKernelEx[_ptsz], the attributes copied: the two enums and unions have the same numbers and layout),
 * cudaLaunchCooperativeKernel[_ptsz], cudaFuncSetCacheConfig, cudaFuncSetSharedMemConfig, the occupancy calls
 * cudaOccupancyAvailableDynamicSMemPerBlock, cudaOccupancyMaxPotentialClusterSize and cudaOccupancyMaxActiveClusters,
 * and the kernel nodes (cudaGraphAddKernelNode, cudaGraph[Exec]KernelNodeSetParams: CUDA_KERNEL_NODE_PARAMS with
 * the stub's function).
 */
#include <stddef.h>
#include <string.h>

#include "fake_cudart_internal.h"

#define FRL_MAX_ATTRS 64

_Static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "launch attributes differ in size");
_Static_assert(offsetof(cudaLaunchAttribute, val) == offsetof(CUlaunchAttribute, value), "launch attribute layout");

/* A launch configuration as the driver's; an attribute id no CUDA release has: cudaErrorInvalidValue. */
static cudaError_t frl_config(const cudaLaunchConfig_t *c, CUlaunchConfig *d, CUlaunchAttribute *attrs)
{
    if (c == NULL || (c->numAttrs != 0 && c->attrs == NULL) || c->numAttrs > FRL_MAX_ATTRS ||
        c->dynamicSmemBytes > 0xffffffffu)
        return cudaErrorInvalidValue;
    for (unsigned k = 0; k < c->numAttrs; k++) {
        if ((int)c->attrs[k].id < 0 || (int)c->attrs[k].id > 16 || (int)c->attrs[k].id == 15)
            return cudaErrorInvalidValue;
        memcpy(&attrs[k], &c->attrs[k], sizeof attrs[k]);
    }
    *d = (CUlaunchConfig){ .gridDimX = c->gridDim.x, .gridDimY = c->gridDim.y, .gridDimZ = c->gridDim.z,
                           .blockDimX = c->blockDim.x, .blockDimY = c->blockDim.y, .blockDimZ = c->blockDim.z,
                           .sharedMemBytes = (unsigned)c->dynamicSmemBytes, .hStream = (CUstream)c->stream,
                           .attrs = c->numAttrs ? attrs : NULL, .numAttrs = c->numAttrs };
    return cudaSuccess;
}

/* a refused launch configuration, as fake_cudart.c's frt_launch says it */
static cudaError_t frl_launch_result(CUresult r)
{
    if (r == CUDA_ERROR_INVALID_VALUE)
        return frt_ext_rt(CUDART_VERSION >= 13000 ? cudaErrorInvalidValue : cudaErrorInvalidConfiguration);
    return frt_ext_ret(r);
}

static cudaError_t frl_launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args, int per_thread)
{
    CUlaunchConfig d;
    CUlaunchAttribute attrs[FRL_MAX_ATTRS];
    CUfunction f;
    cudaError_t e = frl_config(config, &d, attrs);
    if (e == cudaSuccess)
        e = frt_ext_function(func, &f);
    if (e != cudaSuccess)
        return frt_ext_rt(e);
    CUresult (*fn)(const CUlaunchConfig *, CUfunction, void **, void **) =
        (CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))frt_ext_resolve_stream("cuLaunchKernelEx",
                                                                                                  per_thread);
    if (fn == NULL)
        return frt_ext_ret(CUDA_ERROR_NOT_SUPPORTED);
    return frl_launch_result(fn(&d, f, args, NULL));
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    FRT_ENTER(cudaLaunchKernelExC);
    return frl_launch_ex(config, func, args, 0);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    FRT_ENTER(cudaLaunchKernelExC_ptsz);
    return frl_launch_ex(config, func, args, 1);
}

static cudaError_t frl_coop(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s,
                            int per_thread)
{
    CUfunction f;
    cudaError_t e = shmem > 0xffffffffu ? cudaErrorInvalidValue : frt_ext_function(func, &f);
    if (e != cudaSuccess)
        return frt_ext_rt(e);
    CUresult (*fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                   void **) = (CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, CUstream, void **))frt_ext_resolve_stream("cuLaunchCooperativeKernel",
                                                                                              per_thread);
    if (fn == NULL)
        return frt_ext_ret(CUDA_ERROR_NOT_SUPPORTED);
    return frl_launch_result(fn(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, (CUstream)s, args));
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream)
{
    FRT_ENTER(cudaLaunchCooperativeKernel);
    return frl_coop(func, gridDim, blockDim, args, sharedMem, stream, 0);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream)
{
    FRT_ENTER(cudaLaunchCooperativeKernel_ptsz);
    return frl_coop(func, gridDim, blockDim, args, sharedMem, stream, 1);
}

/* The stub's function, then the driver's 'name' of type 'type' as 'var'; the runtime's error otherwise. */
#define FRL_FUNC(func, f, type, var, name)                                          \
    CUfunction f;                                                                   \
    cudaError_t e_ = frt_ext_function(func, &f);                                    \
    if (e_ != cudaSuccess)                                                          \
        return frt_ext_rt(e_);                                           \
    __typeof__(type) var = (__typeof__(type))frt_ext_resolve(name);                 \
    if (var == NULL)                                                                \
        return frt_ext_ret(CUDA_ERROR_NOT_SUPPORTED)

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    FRT_ENTER(cudaFuncSetCacheConfig);
    FRL_FUNC(func, f, CUresult(*)(CUfunction, CUfunc_cache), fn, "cuFuncSetCacheConfig");
    return frt_ext_ret(fn(f, (CUfunc_cache)cacheConfig));   /* the same numbers */
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    FRT_ENTER(cudaFuncSetSharedMemConfig);
    FRL_FUNC(func, f, CUresult(*)(CUfunction, CUsharedconfig), fn, "cuFuncSetSharedMemConfig");
    return frt_ext_ret(fn(f, (CUsharedconfig)config));   /* the same numbers */
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func, int numBlocks,
                                                      int blockSize)
{
    FRT_ENTER(cudaOccupancyAvailableDynamicSMemPerBlock);
    FRL_FUNC(func, f, CUresult(*)(size_t *, CUfunction, int, int), fn, "cuOccupancyAvailableDynamicSMemPerBlock");
    return frt_ext_ret(fn(dynamicSmemSize, f, numBlocks, blockSize));
}

static cudaError_t frl_clusters(int *out, const void *func, const cudaLaunchConfig_t *config, const char *name)
{
    CUlaunchConfig d;
    CUlaunchAttribute attrs[FRL_MAX_ATTRS];
    FRL_FUNC(func, f, CUresult(*)(int *, CUfunction, const CUlaunchConfig *), fn, name);
    cudaError_t e = frl_config(config, &d, attrs);
    if (e != cudaSuccess)
        return frt_ext_rt(e);
    return frt_ext_ret(fn(out, f, &d));
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                 const cudaLaunchConfig_t *launchConfig)
{
    FRT_ENTER(cudaOccupancyMaxPotentialClusterSize);
    return frl_clusters(clusterSize, func, launchConfig, "cuOccupancyMaxPotentialClusterSize");
}

cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func, const cudaLaunchConfig_t *launchConfig)
{
    FRT_ENTER(cudaOccupancyMaxActiveClusters);
    return frl_clusters(numClusters, func, launchConfig, "cuOccupancyMaxActiveClusters");
}

/* ---- kernel nodes: the driver's with the stub's function ---- */
static cudaError_t frl_node(const struct cudaKernelNodeParams *p, CUDA_KERNEL_NODE_PARAMS *d)
{
    CUfunction f;
    if (p == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = frt_ext_function(p->func, &f);
    if (e != cudaSuccess)
        return e;
    memset(d, 0, sizeof *d);
    d->func = f;
    d->gridDimX = p->gridDim.x, d->gridDimY = p->gridDim.y, d->gridDimZ = p->gridDim.z;
    d->blockDimX = p->blockDim.x, d->blockDimY = p->blockDim.y, d->blockDimZ = p->blockDim.z;
    d->sharedMemBytes = p->sharedMemBytes;
    d->kernelParams = p->kernelParams;
    d->extra = p->extra;
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaKernelNodeParams *pNodeParams)
{
    FRT_ENTER(cudaGraphAddKernelNode);
    CUDA_KERNEL_NODE_PARAMS d;
    cudaError_t e = frl_node(pNodeParams, &d);
    if (e != cudaSuccess)
        return frt_ext_rt(e);
    typedef CUresult (*add_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *);
    FRA_FN(add_fn, fn, "cuGraphAddKernelNode");
    return frt_ext_ret(fn((CUgraphNode *)pGraphNode, (CUgraph)graph, (const CUgraphNode *)pDependencies,
                          numDependencies, &d));
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
    FRT_ENTER(cudaGraphKernelNodeSetParams);
    CUDA_KERNEL_NODE_PARAMS d;
    cudaError_t e = frl_node(pNodeParams, &d);
    if (e != cudaSuccess)
        return frt_ext_rt(e);
    typedef CUresult (*set_fn)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
    FRA_FN(set_fn, fn, "cuGraphKernelNodeSetParams");
    return frt_ext_ret(fn((CUgraphNode)node, &d));
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *pNodeParams)
{
    FRT_ENTER(cudaGraphExecKernelNodeSetParams);
    CUDA_KERNEL_NODE_PARAMS d;
    cudaError_t e = frl_node(pNodeParams, &d);
    if (e != cudaSuccess)
        return frt_ext_rt(e);
    typedef CUresult (*set_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
    FRA_FN(set_fn, fn, "cuGraphExecKernelNodeSetParams");
    return frt_ext_ret(fn((CUgraphExec)hGraphExec, (CUgraphNode)node, &d));
}
