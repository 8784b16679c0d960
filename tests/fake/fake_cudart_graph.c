/*
 * fake_cudart_graph.c - the fake runtime's stream capture and graphs: each call is the fake driver's (fake_graph.c),
 * reached through cuGetProcAddress at its first use, as the real runtime reaches its driver, on the runtime's
 * context of the thread's device. A cudaStream_t, cudaGraph_t and cudaGraphExec_t are the driver's handles.
 */
#include <stdatomic.h>
#include <stddef.h>

#include "fake_cudart_internal.h"

/* The driver function 'name', looked up once ('slot' caches it). */
static void *frt_graph_fn(_Atomic(void *) *slot, const char *name)
{
    void *p = atomic_load(slot);
    if (p == NULL && (p = frt_resolve_late(name)) != NULL)
        atomic_store(slot, p);
    return p;
}

/* 'var': the driver's 'name', of the type of the export 'proto' (the ABI variant cuGetProcAddress gives). */
#define FRT_GRAPH_FN(var, proto, name)                             \
    static _Atomic(void *) var##_slot;                             \
    cudaError_t e_ = frt_context_for_graphs();                     \
    if (e_ != cudaSuccess)                                         \
        return e_;                                                 \
    __typeof__(&proto) var = (__typeof__(&proto))frt_graph_fn(&var##_slot, name); \
    if (var == NULL)                                               \
        return frt_result(CUDA_ERROR_NOT_SUPPORTED)

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    FRT_ENTER(cudaStreamBeginCapture);
    FRT_GRAPH_FN(fn, cuStreamBeginCapture_v2, "cuStreamBeginCapture");
    return frt_result(fn((CUstream)stream, (CUstreamCaptureMode)mode));
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    FRT_ENTER(cudaStreamEndCapture);
    FRT_GRAPH_FN(fn, cuStreamEndCapture, "cuStreamEndCapture");
    return frt_result(fn((CUstream)stream, (CUgraph *)pGraph));
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    FRT_ENTER(cudaStreamIsCapturing);
    FRT_GRAPH_FN(fn, cuStreamIsCapturing, "cuStreamIsCapturing");
    return frt_result(fn((CUstream)stream, (CUstreamCaptureStatus *)pCaptureStatus));
}

#if CUDART_VERSION >= 13000
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out, cudaGraph_t *graph_out,
                                     const cudaGraphNode_t **dependencies_out, const cudaGraphEdgeData **edgeData_out,
                                     size_t *numDependencies_out)
{
    FRT_ENTER(cudaStreamGetCaptureInfo);
    FRT_GRAPH_FN(fn, cuStreamGetCaptureInfo_v3, "cuStreamGetCaptureInfo");
    return frt_result(fn((CUstream)stream, (CUstreamCaptureStatus *)captureStatus_out, (cuuint64_t *)id_out,
                         (CUgraph *)graph_out, (const CUgraphNode **)dependencies_out,
                         (const CUgraphEdgeData **)edgeData_out, numDependencies_out));
}
#endif

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    FRT_ENTER(cudaGraphInstantiate);
    FRT_GRAPH_FN(fn, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    return frt_result(fn((CUgraphExec *)pGraphExec, (CUgraph)graph, flags));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    FRT_ENTER(cudaGraphInstantiateWithFlags);
    FRT_GRAPH_FN(fn, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    return frt_result(fn((CUgraphExec *)pGraphExec, (CUgraph)graph, flags));
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    FRT_ENTER(cudaGraphLaunch);
    FRT_GRAPH_FN(fn, cuGraphLaunch, "cuGraphLaunch");
    return frt_result(fn((CUgraphExec)graphExec, (CUstream)stream));
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    FRT_ENTER(cudaGraphUpload);
    FRT_GRAPH_FN(fn, cuGraphUpload, "cuGraphUpload");
    return frt_result(fn((CUgraphExec)graphExec, (CUstream)stream));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    FRT_ENTER(cudaGraphExecDestroy);
    FRT_GRAPH_FN(fn, cuGraphExecDestroy, "cuGraphExecDestroy");
    return frt_result(fn((CUgraphExec)graphExec));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    FRT_ENTER(cudaGraphDestroy);
    FRT_GRAPH_FN(fn, cuGraphDestroy, "cuGraphDestroy");
    return frt_result(fn((CUgraph)graph));
}

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    FRT_ENTER(cudaGraphCreate);
    FRT_GRAPH_FN(fn, cuGraphCreate, "cuGraphCreate");
    return frt_result(fn((CUgraph *)pGraph, flags));
}
