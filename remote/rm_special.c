/*
 * rm_special.c - the one place where the remoting knows APIs by name: what the
 * metadata cannot say (docs/remote.md, "Classification").
 *
 * Each row overrides the class rm_plan.c derived from the metadata:
 *   - HAND: one parameter is carried by a hand-written operation of the codec
 *     (RM_OP_IMAGE: a module image sized from its content; RM_OP_KPARAMS: kernel
 *     arguments sized by the function's parameter info; RM_OP_KNODE: a graph kernel
 *     node's parameters, its arguments as KPARAMS; RM_OP_OWNED_OUT: an array the
 *     callee owns, returned by pointer). The rest of the API is still carried by
 *     metadata.
 *   - NEEDS_HAND / UNSUPPORTED: not forwarded, with the reason users see
 *     (`CUDA_ERROR_NOT_SUPPORTED`, logged once).
 * Whatever can be said as metadata goes into codegen/overlay.txt instead (a
 * count, a direction, a struct's fields): every tool then reads it.
 * The first matching row wins; categories: interop is never forwarded.
 */
#include <fnmatch.h>
#include <stddef.h>
#include <string.h>

#include "rm_plan.h"

static const rm_special rm_specials[] = {
    /* module images: a cubin, fatbin or PTX, sized from their content */
    { "cuModuleLoadData", RM_CLASS_HAND, RM_OP_IMAGE, "image", NULL, "module image sized from its content" },
    { "cuModuleLoadDataEx", RM_CLASS_HAND, RM_OP_IMAGE, "image", NULL, "module image sized from its content" },
    { "cuModuleLoadFatBinary", RM_CLASS_HAND, RM_OP_IMAGE, "fatCubin", NULL, "fat binary sized from its header" },
    { "cuLibraryLoadData", RM_CLASS_HAND, RM_OP_IMAGE, "code", NULL, "library image sized from its content" },
    /* kernel arguments: an array of pointers to values whose sizes the function's parameter info gives */
    { "cuLaunchKernel*", RM_CLASS_HAND, RM_OP_KPARAMS, "kernelParams", "f", "kernel arguments sized by cuFuncGetParamInfo" },
    { "cuLaunchCooperativeKernel", RM_CLASS_HAND, RM_OP_KPARAMS, "kernelParams", "f", "kernel arguments sized by cuFuncGetParamInfo" },
    { "cuLaunchCooperativeKernel_ptsz", RM_CLASS_HAND, RM_OP_KPARAMS, "kernelParams", "f", "kernel arguments sized by cuFuncGetParamInfo" },
    /* graphs (docs/remote.md, "Graphs"): a kernel node's arguments are marshalled as a launch's */
    { "cuGraphAddKernelNode*", RM_CLASS_HAND, RM_OP_KNODE, "nodeParams", NULL, "kernel node: arguments sized by cuFuncGetParamInfo" },
    { "cuGraphKernelNodeSetParams*", RM_CLASS_HAND, RM_OP_KNODE, "nodeParams", NULL, "kernel node: arguments sized by cuFuncGetParamInfo" },
    { "cuGraphExecKernelNodeSetParams*", RM_CLASS_HAND, RM_OP_KNODE, "nodeParams", NULL, "kernel node: arguments sized by cuFuncGetParamInfo" },
    /* capture dependencies: an array the driver owns, copied back and kept in the client per thread (the v3
       forms' edgeData_out stays NULL-only) */
    { "cuStreamGetCaptureInfo_v[23]*", RM_CLASS_HAND, RM_OP_OWNED_OUT, "dependencies_out", "numDependencies_out",
      "capture dependencies: the driver's array copied, kept in the client per thread" },
    { "cudaStreamGetCaptureInfo*", RM_CLASS_HAND, RM_OP_OWNED_OUT, "dependencies_out", "numDependencies_out",
      "capture dependencies: the driver's array copied, kept in the client per thread" },
    /* the linked image: a buffer of the driver's (until cuLinkDestroy), its bytes copied back and kept per thread */
    { "cuLinkComplete", RM_CLASS_HAND, RM_OP_OWNED_OUT, "cubinOut", "sizeOut",
      "the linked cubin: the driver's buffer copied back, kept in the client per thread" },
    { "cuGraphKernelNodeGetParams*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL,
      "kernel node read back: its kernelParams would be the server's addresses (set the node's parameters instead)" },
    { "cudaGraphKernelNodeGetParams", RM_CLASS_UNSUPPORTED, 0, NULL, NULL,
      "kernel node read back: its kernelParams would be the server's addresses (set the node's parameters instead)" },
    { "cu*Graph*HostNode*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL,
      "host node: a function of the client, which the server's graph cannot call at each launch" },
    { "cuda*Graph*HostNode*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL,
      "host node: a function of the client, which the server's graph cannot call at each launch" },
    { "cudaGraph*KernelNodeSetParams", RM_CLASS_HAND, RM_OP_CLIENT, "pNodeParams", NULL,
      "runtime kernel node: host stub mapped to a function: cuGraph[Exec]KernelNodeSetParams_v2" },
    { "cudaGraphAddKernelNode", RM_CLASS_HAND, RM_OP_CLIENT, "pNodeParams", NULL,
      "runtime kernel node: host stub mapped to a function: cuGraphAddKernelNode_v2" },

    /* values sized by their attribute (rm_attr_tables below); the pointer looked up is RM_OP_ADDR (rm_addrs) */
    { "cuPointerGetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "data", "attribute", "the value sized by its attribute (CUpointer_attribute)" },
    { "cuPointerSetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attribute", "the value sized by its attribute (CUpointer_attribute)" },
    { "cuPointerGetAttributes", RM_CLASS_HAND, RM_OP_ATTRS, "data", "attributes", "each value sized by its attribute (CUpointer_attribute)" },
    { "cuMemPoolGetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "the value sized by its attribute (CUmemPool_attribute)" },
    { "cuMemPoolSetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "the value sized by its attribute (CUmemPool_attribute)" },
    { "cudaMemPool[GS]etAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "the value sized by its attribute (cudaMemPoolAttr)" },
    { "cuDevice[GS]etGraphMemAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "the value sized by its attribute (CUgraphMem_attribute)" },
    { "cudaDevice[GS]etGraphMemAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "the value sized by its attribute (cudaGraphMemAttributeType)" },
    { "cuStreamGetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "a launch attribute's value union, its ids checked (CUlaunchAttributeID)" },
    { "cuStreamGetAttribute_ptsz", RM_CLASS_HAND, RM_OP_ATTR, "value_out", "attr", "a launch attribute's value union, its ids checked (CUlaunchAttributeID)" },
    { "cuStreamSetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "param", "attr", "a launch attribute's value union, its ids checked (CUlaunchAttributeID)" },
    { "cuStreamSetAttribute_ptsz", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "a launch attribute's value union, its ids checked (CUlaunchAttributeID)" },
    { "cuGraphKernelNodeGetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value_out", "attr", "a launch attribute's value union, its ids checked (CUlaunchAttributeID)" },
    { "cuGraphKernelNodeSetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "a launch attribute's value union, its ids checked (CUlaunchAttributeID)" },
    { "cudaStreamGetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "a launch attribute's value union, its ids checked (cudaLaunchAttributeID)" },
    { "cudaStreamGetAttribute_ptsz", RM_CLASS_HAND, RM_OP_ATTR, "value_out", "attr", "a launch attribute's value union, its ids checked (cudaLaunchAttributeID)" },
    { "cudaStreamSetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "param", "attr", "a launch attribute's value union, its ids checked (cudaLaunchAttributeID)" },
    { "cudaStreamSetAttribute_ptsz", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "a launch attribute's value union, its ids checked (cudaLaunchAttributeID)" },
    { "cudaGraphKernelNodeGetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value_out", "attr", "a launch attribute's value union, its ids checked (cudaLaunchAttributeID)" },
    { "cudaGraphKernelNodeSetAttribute", RM_CLASS_HAND, RM_OP_ATTR, "value", "attr", "a launch attribute's value union, its ids checked (cudaLaunchAttributeID)" },

    /* runtime API (docs/remote.md, "Runtime-API programs"). A device address or a struct without pointers
       returned through a pointer: one element of the pointee's size (RM_OP_ARRAY, in and out). */
    { "cudaMalloc", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", NULL, "device address returned: one pointer-sized element" },
    { "cudaMallocPitch", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", NULL, "device address returned: one pointer-sized element" },
    /* managed memory (docs/remote.md, "Managed memory"): the server's block, mirrored by the client at the same
       address (plugins/remote/rp_managed.c) and made coherent at synchronisation points */
    { "cuMemAllocManaged", RM_CLASS_HAND, RM_OP_ARRAY, "dptr", NULL, "managed memory: mirrored in the client at the server's address, coherent at synchronisation points" },
    { "cudaMallocManaged", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", NULL, "managed memory: mirrored in the client at the server's address, coherent at synchronisation points" },
    { "cudaMemPrefetchAsync*", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", "devPtr", "a managed address, never read: its value" },
    { "cudaMemAdvise*", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", "devPtr", "a managed address, never read: its value" },
    { "cudaMallocAsync*", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", NULL, "device address returned: one pointer-sized element" },
    { "cudaMallocFromPoolAsync*", RM_CLASS_HAND, RM_OP_ARRAY, "ptr", NULL, "device address returned: one pointer-sized element" },
    { "cudaGetDeviceProperties*", RM_CLASS_HAND, RM_OP_ARRAY, "prop", NULL, "cudaDeviceProp holds no pointer: its bytes" },
    { "cudaIpcOpenMemHandle", RM_CLASS_HAND, RM_OP_ARRAY, "devPtr", NULL, "device address returned: one pointer-sized element" },
    { "cudaPointerGetAttributes", RM_CLASS_HAND, RM_OP_ARRAY, "attributes", "ptr", "the server's view of an address: 'ptr' and the pointers returned are values" },
    /* NVML: structs without pointers, returned through a pointer */
    { "nvmlDeviceGetMemoryInfo*", RM_CLASS_HAND, RM_OP_ARRAY, "memory", NULL, "nvmlMemory_t holds no pointer: its bytes" },
    /* a host stub or client host memory: the client turns them into driver calls (plugins/remote/rc_cudart.c) */
    { "cudaLaunchKernel", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuLaunchKernel" },
    { "cudaLaunchKernel_ptsz", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuLaunchKernel_ptsz" },
    { "cudaMallocHost", RM_CLASS_HAND, RM_OP_CLIENT, "ptr", NULL, "pinned host memory: this process's own" },
    { "cudaHostAlloc", RM_CLASS_HAND, RM_OP_CLIENT, "pHost", NULL, "pinned host memory: this process's own" },
    { "cudaFreeHost", RM_CLASS_HAND, RM_OP_CLIENT, "ptr", NULL, "pinned host memory: this process's own" },
    { "cudaFuncGetAttributes", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuFuncGetAttribute" },
    { "cudaFuncSetAttribute", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuFuncSetAttribute" },
    { "cudaOccupancyMaxActiveBlocksPerMultiprocessor*", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuOccupancy..." },
    { "cudaLaunchKernelExC*", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function, the configuration's attributes to the driver's: cuLaunchKernelEx" },
    { "cudaLaunchCooperativeKernel*", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuLaunchCooperativeKernel" },
    { "cudaFuncSetCacheConfig", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuFuncSetCacheConfig" },
    { "cudaFuncSetSharedMemConfig", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuFuncSetSharedMemConfig" },
    { "cudaOccupancyAvailableDynamicSMemPerBlock", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuOccupancyAvailableDynamicSMemPerBlock" },
    { "cudaOccupancyMaxPotentialClusterSize", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function, the configuration to the driver's: cuOccupancyMaxPotentialClusterSize" },
    { "cudaOccupancyMaxActiveClusters", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function, the configuration to the driver's: cuOccupancyMaxActiveClusters" },
    { "cudaGetFuncBySymbol", RM_CLASS_HAND, RM_OP_CLIENT, "symbolPtr", NULL, "host stub mapped to a function: the server's CUfunction (cuModuleGetFunction)" },
    { "cudaGetKernel", RM_CLASS_HAND, RM_OP_CLIENT, "entryFuncAddr", NULL, "host stub mapped to a kernel: the server's CUkernel (cuLibraryGetKernel)" },
    { "cudaFuncGetName", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub: the name it was registered with" },
    { "cudaFuncGetParamInfo", RM_CLASS_HAND, RM_OP_CLIENT, "func", NULL, "host stub mapped to a function: cuFuncGetParamInfo" },
    { "cudaGetDriverEntryPoint*", RM_CLASS_HAND, RM_OP_CLIENT, "funcPtr", NULL, "driver functions: this process's (the shim's exports), from its cuGetProcAddress" },
    { "cudaMemcpy", RM_CLASS_HAND, RM_OP_CLIENT, "dst", NULL, "by its kind: cuMemcpyHtoD/DtoH/DtoD" },
    { "cudaMemcpy_ptds", RM_CLASS_HAND, RM_OP_CLIENT, "dst", NULL, "by its kind: cuMemcpyHtoD/DtoH/DtoD_ptds" },
    { "cudaMemcpyAsync", RM_CLASS_HAND, RM_OP_CLIENT, "dst", NULL, "by its kind: cuMemcpyHtoD/DtoH/DtoDAsync" },
    { "cudaMemcpyAsync_ptsz", RM_CLASS_HAND, RM_OP_CLIENT, "dst", NULL, "by its kind: cuMemcpyHtoD/DtoH/DtoDAsync_ptsz" },
    /* host functions: the client's code and data, run in the client once the stream drained on the server
       (plugins/remote/rp_hostfn.c); a server decodes the function only as absent, so never calls a pointer */
    { "cuLaunchHostFunc*", RM_CLASS_HAND, RM_OP_CLIENT, "fn", NULL, "host function: run in the client after cuStreamSynchronize (synchronous)" },
    { "cuStreamAddCallback*", RM_CLASS_HAND, RM_OP_CLIENT, "callback", NULL, "stream callback: run in the client after cuStreamSynchronize (synchronous)" },
    { "cudaLaunchHostFunc*", RM_CLASS_HAND, RM_OP_CLIENT, "fn", NULL, "host function: run in the client after cuStreamSynchronize (synchronous)" },
    { "cudaStreamAddCallback*", RM_CLASS_HAND, RM_OP_CLIENT, "callback", NULL, "stream callback: run in the client after cuStreamSynchronize (synchronous)" },

    /* cuBLAS and cuBLASLt (docs/remote.md, "cuBLAS and cuBLASLt"): matrices are device addresses (the
       overlay), alpha/beta/result by the pointer mode (rm_scalars below); what they cannot carry: */
    { "cublasLtMatmul", RM_CLASS_HAND, RM_OP_ARRAY, "algo", NULL, "cublasLtMatmulAlgo_t holds no pointer: its bytes" },
    { "cublasLtMatmulAlgoGetHeuristic", RM_CLASS_HAND, RM_OP_ARRAY, "heuristicResultsArray", NULL, "cublasLtMatmulHeuristicResult_t holds no pointer: requestedAlgoCount of them" },
    { "cublasLtMatmulAlgoInit", RM_CLASS_HAND, RM_OP_ARRAY, "algo", NULL, "cublasLtMatmulAlgo_t holds no pointer: its bytes" },
    { "cublasLtMatmulAlgoCapGetAttribute", RM_CLASS_HAND, RM_OP_ARRAY, "algo", NULL, "cublasLtMatmulAlgo_t holds no pointer: its bytes" },
    { "cublasLtMatmulAlgoConfig?etAttribute", RM_CLASS_HAND, RM_OP_ARRAY, "algo", NULL, "cublasLtMatmulAlgo_t holds no pointer: its bytes" },
    { "cublasLtMatmulDescCreate", RM_CLASS_HAND, RM_OP_ARRAY, "matmulDesc", NULL, "a descriptor returned: the back end's number for it (rm_num.h)" },
    { "cublasLtMatrixLayoutCreate", RM_CLASS_HAND, RM_OP_ARRAY, "matLayout", NULL, "a descriptor returned: the back end's number for it (rm_num.h)" },
    { "cublasLtMatmulPreferenceCreate", RM_CLASS_HAND, RM_OP_ARRAY, "pref", NULL, "a descriptor returned: the back end's number for it (rm_num.h)" },
    { "cublasLtMatrixTransformDescCreate", RM_CLASS_HAND, RM_OP_ARRAY, "transformDesc", NULL, "a descriptor returned: the back end's number for it (rm_num.h)" },
    { "cublasLtEmulationDescCreate", RM_CLASS_HAND, RM_OP_ARRAY, "emulationDesc", NULL, "a descriptor returned: the back end's number for it (rm_num.h)" },
    { "*ncclMemAlloc", RM_CLASS_HAND, RM_OP_ARRAY, "ptr", NULL, "device address returned: one pointer-sized element" },
    { "*ncclMemFree", RM_CLASS_HAND, RM_OP_ARRAY, "ptr", "ptr", "a device address, never read: its value" },
    { "*ncclCommRegister", RM_CLASS_HAND, RM_OP_ARRAY, "handle", "buff", "a device buffer (its value) registered: the handle is the back end's number for it (rm_num.h)" },
    { "*ncclCommDeregister", RM_CLASS_HAND, RM_OP_ARRAY, "handle", "handle", "a registration handle: the back end's number (rm_num.h)" },
    { "*ncclCommWindowRegister", RM_CLASS_HAND, RM_OP_ARRAY, "win", "buff", "a device buffer (its value) registered: the window is the back end's number for it (rm_num.h)" },
    { "*ncclCommInitAll", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "ndev communicators at once, not numbered (rm_num.h): ncclCommInitRank per device in a group is the carried way" },
    { "cublasLt*Init_internal", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "initialises a descriptor in the caller's memory: use the Create function" },
    { "cublas[SG]etVector*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "host<->device copy: the host side sized by elemSize and strides" },
    { "cublas[SG]etMatrix*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "host<->device copy: the host side sized by elemSize and strides" },
    { "cublasRot*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "pointer-mode scalars other than alpha, beta and result (c, s, param...)" },
    { "cublas*rot*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "pointer-mode scalars other than alpha, beta and result (c, s, param...)" },
    { "cublas*GroupedBatched*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "per-group host arrays counted by group_count" },
    { "cublas*LoggerConfigure", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "a log file of the client's machine" },
    { "cublasLtLogger*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "a log file or callback of the client's machine" },

    /* the occupancy calculator's size callback would run in the client: carried while NULL (CuPy passes NULL and a
       fixed dynamic shared memory size) */
    { "cuOccupancyMaxPotentialBlockSize*", RM_CLASS_HAND, RM_OP_NULL_ONLY, "blockSizeToDynamicSMemSize", NULL,
      "carried while blockSizeToDynamicSMemSize is NULL (a callback would run in the client)" },
    /* TMA descriptors (Triton): the CUtensorMap is 128 opaque bytes holding a device address of the server's; the
       arrays are counted by tensorRank (rm_ranks below) */
    { "cuTensorMapEncode*", RM_CLASS_HAND, RM_OP_ARRAY, "tensorMap", NULL,
      "a CUtensorMap's 128 opaque bytes back; the arrays counted by tensorRank (globalStrides: tensorRank - 1)" },
    { "cuTensorMapReplaceAddress", RM_CLASS_HAND, RM_OP_ARRAY, "tensorMap", NULL,
      "a CUtensorMap's 128 opaque bytes in and back" },
    /* the file is the client's: read there and sent as cuLinkAddData (plugins/remote/rp_jit.c); a server decodes
       the path only as absent, so never opens a path a client names */
    { "cuLinkAddFile*", RM_CLASS_HAND, RM_OP_CLIENT, "path", NULL,
      "the client's file: read in the client and sent as cuLinkAddData of its bytes" },
    { "cuModuleLoad", RM_CLASS_HAND, RM_OP_CLIENT, "fname", NULL,
      "the client's file: read in the client and sent as cuModuleLoadData of its bytes" },
    { "cuLibraryLoadFromFile", RM_CLASS_HAND, RM_OP_CLIENT, "fileName", NULL,
      "the client's file: read in the client and sent as cuLibraryLoadData of its bytes" },

    /* answered by the client's shim, never by the server */
    { "cuGetProcAddress*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "entry points are the client shim's own (getproc.c)" },
    { "cu*GetExportTable", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "hidden export tables: one hand-written forwarder per table id" },
    /* host memory the device reads and writes asynchronously: mirrored at synchronisation (issue 43) */
    { "cuMemHostAlloc", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "pinned host memory: a client buffer mirrored at synchronisation" },
    { "cuMemAllocHost*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "pinned host memory: a client buffer mirrored at synchronisation" },
    { "cuMemFreeHost", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "pinned host memory: a client buffer mirrored at synchronisation" },
    { "cuMemHostRegister*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "registered host memory: mirrored at synchronisation" },
    { "cuMemHostUnregister", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "registered host memory: mirrored at synchronisation" },
    { "cuMemHostGetDevicePointer*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "pinned host memory: a client buffer mirrored at synchronisation" },
    /* a host pointer the driver maps: meaningless on another machine */
    { "cuMemcpy", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "unified addressing: either side may be host memory of the client" },
    { "cuMemcpyAsync*", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "unified addressing: either side may be host memory of the client" },
    { "cuMemcpy_ptds", RM_CLASS_NEEDS_HAND, 0, NULL, NULL, "unified addressing: either side may be host memory of the client" },
    /* another process's objects. CUDA IPC handles (cuIpc*, cudaIpc*) are forwarded by metadata: 64 opaque bytes
       of the server's driver, which another client's back end may open when both clients have the same identity
       (remote/rb_ipc.c, docs/remote.md "IPC") */
    /* a shareable handle (PyTorch's expandable segments share so) is a file descriptor of the back end's, passed
       between processes of the server's machine: no process of the client's can receive or use it */
#define RM_SHAREABLE_WHY "a shareable handle is a file descriptor (or fabric handle) of the server's back end, which no " \
                         "process of the client's machine can use: share device memory with CUDA IPC handles " \
                         "(cudaIpcGetMemHandle, cuIpcGetMemHandle) instead"
    { "cuMemExportToShareableHandle", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, RM_SHAREABLE_WHY },
    { "cuMemImportFromShareableHandle", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, RM_SHAREABLE_WHY },
    { "cu*MemPool*ShareableHandle", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, RM_SHAREABLE_WHY },
    { "cuImportExternal*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "external memory and semaphores are the client's resources" },
    { "cuCheckpointProcess*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL, "checkpoints name a process of the server's machine" },
};

/* Timing and answers. The asynchronous class is decided from the metadata (rm_plan.c: stream-ordered work
   whose parameters are all values); these rows add what it cannot see. Cached answers are the queries whose
   result cannot change while the process lives (docs/remote.md, "Answers kept by the client"). */
static const rm_trait rm_traits[] = {
    /* the arguments are host memory, but read at call time: the client copies them into the batch */
    { "cuLaunchKernel*", RM_TRAIT_ASYNC, NULL, NULL, "kernel launch: arguments copied at call time" },
    { "cuLaunchCooperativeKernel", RM_TRAIT_ASYNC, NULL, NULL, "kernel launch: arguments copied at call time" },
    { "cuLaunchCooperativeKernel_ptsz", RM_TRAIT_ASYNC, NULL, NULL, "kernel launch: arguments copied at call time" },
    /* 'sync' by category, but it only enqueues a wait on the stream: the host does not wait */
    { "cuStreamWaitEvent*", RM_TRAIT_ASYNC, NULL, NULL, "enqueues a wait on the stream; the host does not wait" },
    /* immutable for the process's life once answered with CUDA_SUCCESS (cuInit cannot be undone) */
    { "cuDriverGetVersion", RM_TRAIT_CACHE, NULL, NULL, "the server's driver version" },
    { "cuDeviceGetCount", RM_TRAIT_CACHE, NULL, NULL, "devices are fixed at cuInit" },
    { "cuDeviceGet", RM_TRAIT_CACHE, NULL, NULL, "device handles are fixed at cuInit" },
    { "cuDeviceGetAttribute", RM_TRAIT_CACHE, "attrib", "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE",
      "device properties; the compute mode can be changed by nvidia-smi while the process runs" },
    { "cuDeviceGetName", RM_TRAIT_CACHE, NULL, NULL, "device name" },
    { "cuDeviceGetUuid*", RM_TRAIT_CACHE, NULL, NULL, "device UUID" },
    { "cuDeviceTotalMem*", RM_TRAIT_CACHE, NULL, NULL, "total device memory" },
    { "cuDeviceComputeCapability", RM_TRAIT_CACHE, NULL, NULL, "compute capability" },
    { "cuDeviceGetProperties", RM_TRAIT_CACHE, NULL, NULL, "device properties" },
    { "cuDeviceGetPCIBusId", RM_TRAIT_CACHE, NULL, NULL, "PCI address" },
    { "cuDeviceGetByPCIBusId", RM_TRAIT_CACHE, NULL, NULL, "PCI address" },
    { "cuGetErrorName", RM_TRAIT_CACHE, NULL, NULL, "static strings of the driver" },
    { "cuGetErrorString", RM_TRAIT_CACHE, NULL, NULL, "static strings of the driver" },
    /* a function's attributes: fixed until set, or until its module goes (a handle may come back) */
    { "cuFuncGetAttribute", RM_TRAIT_CACHE_FUNC, NULL, NULL, "function attributes until set or unloaded" },
    { "cuKernelGetAttribute", RM_TRAIT_CACHE_FUNC, NULL, NULL, "kernel attributes until set or unloaded" },
    { "cuFuncSetAttribute", RM_TRAIT_FORGET, NULL, NULL, "changes function attributes" },
    { "cuFuncSetCacheConfig", RM_TRAIT_FORGET, NULL, NULL, "changes function attributes" },
    { "cuFuncSetSharedMemConfig", RM_TRAIT_FORGET, NULL, NULL, "changes function attributes" },
    { "cuKernelSetAttribute", RM_TRAIT_FORGET, NULL, NULL, "changes kernel attributes" },
    { "cuKernelSetCacheConfig", RM_TRAIT_FORGET, NULL, NULL, "changes kernel attributes" },
    { "cuModuleUnload", RM_TRAIT_FORGET, NULL, NULL, "function handles may be reused" },
    { "cuLibraryUnload", RM_TRAIT_FORGET, NULL, NULL, "kernel handles may be reused" },
    /* stream capture (docs/remote.md, "Graphs"): while one is open the client sends nothing in batches, so an
       error in a captured call surfaces at that call, and refuses host copies the graph would replay */
    { "cuStreamBeginCapture*", RM_TRAIT_CAPTURE_BEGIN, NULL, NULL, "begins a stream capture" },
    { "cudaStreamBeginCapture*", RM_TRAIT_CAPTURE_BEGIN, NULL, NULL, "begins a stream capture" },
    { "cuStreamEndCapture*", RM_TRAIT_CAPTURE_END, NULL, NULL, "ends a stream capture" },
    { "cudaStreamEndCapture*", RM_TRAIT_CAPTURE_END, NULL, NULL, "ends a stream capture" },
    /* NCCL (docs/remote.md, "NCCL"): between ncclGroupStart and ncclGroupEnd a collective only joins the group,
       which ncclGroupEnd launches and whose errors it returns; outside a group each is answered (a blocking
       communicator returns a collective's error at its call). ncclGroupStart opens a group; a nested
       ncclGroupEnd only closes one level (the client counts the depth per thread, rp_nccl.c) */
    { "*ncclAllReduce", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclBroadcast", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclBcast", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclReduce", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclReduceScatter", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclAllGather", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclAlltoAll", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclGather", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclScatter", RM_TRAIT_GROUP, NULL, NULL, "a collective inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclSend", RM_TRAIT_GROUP, NULL, NULL, "a point-to-point call inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclRecv", RM_TRAIT_GROUP, NULL, NULL, "a point-to-point call inside an NCCL group: ncclGroupEnd reports its error" },
    { "*ncclGroupStart", RM_TRAIT_GROUP, NULL, NULL, "opens an NCCL group: its end is answered" },
    { "*ncclGroupEnd", RM_TRAIT_GROUP, NULL, NULL, "a nested NCCL group's end: the outermost end is answered" },
    /* a memcpy node's host memory would be the client's: device and array copies only */
    { "cuGraphAddMemcpyNode", RM_TRAIT_DEVCOPY, "copyParams", NULL, "memcpy node: device memory only" },
    { "cuGraphMemcpyNodeSetParams", RM_TRAIT_DEVCOPY, "nodeParams", NULL, "memcpy node: device memory only" },
    { "cuGraphExecMemcpyNodeSetParams", RM_TRAIT_DEVCOPY, "copyParams", NULL, "memcpy node: device memory only" },
};

/* Pointer-mode scalars: a host value or a device address, as the handle's pointer mode (cuBLAS) or the
   matmul descriptor's (cuBLASLt) says at the call; the client decides (rm_ctx.scalar), the server stages a host
   value in RM_SCALAR_MAX bytes whatever size the client gave. Only scalar or void pointees. */
static const rm_scalar rm_scalars[] = {
    { "cublas*", "alpha" },
    { "cublas*", "beta" },
    { "cublas*", "result" },
    { "*ncclRedOpCreatePreMulSum", "scalar" },   /* by 'residence': host (sized by 'datatype') or device */
};

/* Sizes of values by attribute, from cuda.h's documentation of each (the type it names for *data) and what the
   driver writes (GPU check `remoteptrattr sizes`): booleans 4 bytes (cuda.h says bool, NVIDIA's Python bindings
   one byte, driver 580 writes an int), P2P tokens the 16-byte struct (the driver writes its 12 bytes of members,
   not its tail padding). The client sends the program's bytes of a value read back and the server stages them
   (rm_codec.c, RM_ATTR_SENT), so the bytes a driver leaves untouched - a padding, an int's upper bytes from a
   driver that writes a byte - come back as they were. A name this tree's enum lacks is not known here
   (NOT_SUPPORTED), nor is an attribute missing from a table: add it with its type. */
static const rm_attr_size rm_pointer_attrs[] = {
    { "CU_POINTER_ATTRIBUTE_CONTEXT", 8, RM_ATTR_BYTES },                    /* CUcontext                  */
    { "CU_POINTER_ATTRIBUTE_MEMORY_TYPE", 4, RM_ATTR_BYTES },                /* unsigned int (CUmemorytype) */
    { "CU_POINTER_ATTRIBUTE_DEVICE_POINTER", 8, RM_ATTR_ADDR },             /* CUdeviceptr                */
    { "CU_POINTER_ATTRIBUTE_HOST_POINTER", 8, RM_ATTR_HOSTPTR },             /* void *                     */
    { "CU_POINTER_ATTRIBUTE_P2P_TOKENS", 16, RM_ATTR_BYTES },                /* CUDA_POINTER_ATTRIBUTE_P2P_TOKENS */
    { "CU_POINTER_ATTRIBUTE_SYNC_MEMOPS", 4, RM_ATTR_BYTES },                /* bool, written as an int    */
    { "CU_POINTER_ATTRIBUTE_BUFFER_ID", 8, RM_ATTR_BYTES },                  /* unsigned long long         */
    { "CU_POINTER_ATTRIBUTE_IS_MANAGED", 4, RM_ATTR_BYTES },                 /* bool, written as an int    */
    { "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", 4, RM_ATTR_BYTES },             /* int                        */
    { "CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE", 4, RM_ATTR_BYTES }, /* bool, written as an int    */
    { "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR", 8, RM_ATTR_ADDR },           /* CUdeviceptr                */
    { "CU_POINTER_ATTRIBUTE_RANGE_SIZE", 8, RM_ATTR_BYTES },                 /* size_t                     */
    { "CU_POINTER_ATTRIBUTE_MAPPED", 4, RM_ATTR_BYTES },                     /* bool, written as an int    */
    { "CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES", 8, RM_ATTR_BYTES },       /* unsigned long long bitmask */
    { "CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE", 4, RM_ATTR_BYTES }, /* bool, written as an int    */
    { "CU_POINTER_ATTRIBUTE_ACCESS_FLAGS", 4, RM_ATTR_BYTES },               /* CUpointer_attribute_access_flags */
    { "CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE", 8, RM_ATTR_BYTES },             /* CUmemoryPool               */
    { "CU_POINTER_ATTRIBUTE_MAPPING_SIZE", 8, RM_ATTR_BYTES },               /* size_t                     */
    { "CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR", 8, RM_ATTR_ADDR },          /* CUdeviceptr (a device range) */
    { "CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID", 8, RM_ATTR_BYTES },            /* unsigned long long         */
    { "CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE", 4, RM_ATTR_BYTES },   /* bool (13.x), as an int     */
    { "CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL", 4, RM_ATTR_BYTES },    /* int (13.5)                 */
};

/* cuda.h: "(value type = ...)" before each enumerator */
static const rm_attr_size rm_mempool_attrs[] = {
    { "CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES", 4, RM_ATTR_BYTES },  /* int                        */
    { "CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC", 4, RM_ATTR_BYTES },        /* int                        */
    { "CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES", 4, RM_ATTR_BYTES }, /* int                       */
    { "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD", 8, RM_ATTR_BYTES },                /* cuuint64_t                 */
    { "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT", 8, RM_ATTR_BYTES },             /* cuuint64_t                 */
    { "CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH", 8, RM_ATTR_BYTES },                /* cuuint64_t                 */
    { "CU_MEMPOOL_ATTR_USED_MEM_CURRENT", 8, RM_ATTR_BYTES },                 /* cuuint64_t                 */
    { "CU_MEMPOOL_ATTR_USED_MEM_HIGH", 8, RM_ATTR_BYTES },                    /* cuuint64_t                 */
    { "CU_MEMPOOL_ATTR_ALLOCATION_TYPE", 4, RM_ATTR_BYTES },                  /* CUmemAllocationType        */
    { "CU_MEMPOOL_ATTR_EXPORT_HANDLE_TYPES", 4, RM_ATTR_BYTES },              /* CUmemAllocationHandleType  */
    { "CU_MEMPOOL_ATTR_LOCATION_ID", 4, RM_ATTR_BYTES },                      /* int                        */
    { "CU_MEMPOOL_ATTR_LOCATION_TYPE", 4, RM_ATTR_BYTES },                    /* CUmemLocationType          */
    { "CU_MEMPOOL_ATTR_MAX_POOL_SIZE", 8, RM_ATTR_BYTES },                    /* cuuint64_t                 */
};

static const rm_attr_size rm_rt_mempool_attrs[] = {   /* driver_types.h: the same types as the driver's */
    { "cudaMemPoolReuseFollowEventDependencies", 4, RM_ATTR_BYTES },   /* int        */
    { "cudaMemPoolReuseAllowOpportunistic", 4, RM_ATTR_BYTES },        /* int        */
    { "cudaMemPoolReuseAllowInternalDependencies", 4, RM_ATTR_BYTES }, /* int        */
    { "cudaMemPoolAttrReleaseThreshold", 8, RM_ATTR_BYTES },           /* cuuint64_t */
    { "cudaMemPoolAttrReservedMemCurrent", 8, RM_ATTR_BYTES },         /* cuuint64_t */
    { "cudaMemPoolAttrReservedMemHigh", 8, RM_ATTR_BYTES },            /* cuuint64_t */
    { "cudaMemPoolAttrUsedMemCurrent", 8, RM_ATTR_BYTES },             /* cuuint64_t */
    { "cudaMemPoolAttrUsedMemHigh", 8, RM_ATTR_BYTES },                /* cuuint64_t */
};

static const rm_attr_size rm_graphmem_attrs[] = {   /* every one a cuuint64_t */
    { "CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT", 8, RM_ATTR_BYTES },
    { "CU_GRAPH_MEM_ATTR_USED_MEM_HIGH", 8, RM_ATTR_BYTES },
    { "CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT", 8, RM_ATTR_BYTES },
    { "CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH", 8, RM_ATTR_BYTES },
    { "cudaGraphMemAttrUsedMemCurrent", 8, RM_ATTR_BYTES },
    { "cudaGraphMemAttrUsedMemHigh", 8, RM_ATTR_BYTES },
    { "cudaGraphMemAttrReservedMemCurrent", 8, RM_ATTR_BYTES },
    { "cudaGraphMemAttrReservedMemHigh", 8, RM_ATTR_BYTES },
};

/* Launch attributes of streams and kernel nodes: the value union whole (its size is the tree's), every id whose
   value holds no pointer of the caller's (DEVICE_UPDATABLE_KERNEL_NODE's devNode is one: absent, so refused). */
static const rm_attr_size rm_launch_attrs[] = {
    { "CU_LAUNCH_ATTRIBUTE_IGNORE", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW", 0, RM_ATTR_POINTEE },   /* base_ptr: a device address */
    { "CU_LAUNCH_ATTRIBUTE_COOPERATIVE", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT", 0, RM_ATTR_POINTEE },     /* a CUevent: the server's handle */
    { "CU_LAUNCH_ATTRIBUTE_PRIORITY", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", 0, RM_ATTR_POINTEE },
    { "CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeIgnore", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeAccessPolicyWindow", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeCooperative", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeSynchronizationPolicy", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeClusterDimension", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeClusterSchedulingPolicyPreference", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeProgrammaticStreamSerialization", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeProgrammaticEvent", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributePriority", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeMemSyncDomainMap", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeMemSyncDomain", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributePreferredClusterDimension", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeLaunchCompletionEvent", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributePreferredSharedMemoryCarveout", 0, RM_ATTR_POINTEE },
    { "cudaLaunchAttributeNvlinkUtilCentricScheduling", 0, RM_ATTR_POINTEE },
};

static const rm_attr_table rm_attr_tables[] = {
    { "CUpointer_attribute", rm_pointer_attrs, sizeof rm_pointer_attrs / sizeof rm_pointer_attrs[0] },
    { "CUmemPool_attribute", rm_mempool_attrs, sizeof rm_mempool_attrs / sizeof rm_mempool_attrs[0] },
    { "cudaMemPoolAttr", rm_rt_mempool_attrs, sizeof rm_rt_mempool_attrs / sizeof rm_rt_mempool_attrs[0] },
    { "CUgraphMem_attribute", rm_graphmem_attrs, sizeof rm_graphmem_attrs / sizeof rm_graphmem_attrs[0] },
    { "cudaGraphMemAttributeType", rm_graphmem_attrs, sizeof rm_graphmem_attrs / sizeof rm_graphmem_attrs[0] },
    { "CUlaunchAttributeID", rm_launch_attrs, sizeof rm_launch_attrs / sizeof rm_launch_attrs[0] },
    { "cudaLaunchAttributeID", rm_launch_attrs, sizeof rm_launch_attrs / sizeof rm_launch_attrs[0] },
};

/* Arrays counted by a rank (cuda.h: cuTensorMapEncodeTiled's globalDim, boxDim and elementStrides have tensorRank
   elements, globalStrides tensorRank - 1; Im2col's pixel box corners tensorRank - 2, its spatial dimensions). The
   driver takes ranks up to 5 and refuses others before reading them: then no element is sent. */
static const rm_rank rm_ranks[] = {
    { "cuTensorMapEncode*", "globalDim", "tensorRank", 0, 5 },
    { "cuTensorMapEncode*", "globalStrides", "tensorRank", 1, 5 },
    { "cuTensorMapEncode*", "boxDim", "tensorRank", 0, 5 },
    { "cuTensorMapEncode*", "elementStrides", "tensorRank", 0, 5 },
    { "cuTensorMapEncodeIm2col", "pixelBoxLowerCorner", "tensorRank", 2, 5 },
    { "cuTensorMapEncodeIm2col", "pixelBoxUpperCorner", "tensorRank", 2, 5 },
};

const rm_rank *rm_rank_find(const char *api, const char *param)
{
    for (size_t i = 0; i < sizeof rm_ranks / sizeof rm_ranks[0]; i++)
        if (fnmatch(rm_ranks[i].glob, api, 0) == 0 && strcmp(rm_ranks[i].param, param) == 0)
            return &rm_ranks[i];
    return NULL;
}

/* A link's later calls: the driver writes cuLinkCreate's logs, log sizes and wall time into its buffers over the
   link's life (cuda.h: they "accumulate data until the CUlinkState is destroyed"), so each reply carries them. */
static const struct {
    const char *glob, *param;
    uint8_t drop;
} rm_links[] = {
    { "cuLinkAddData*", "state", 0 },
    { "cuLinkAddFile*", "state", 0 },
    { "cuLinkComplete", "state", 0 },
    { "cuLinkDestroy", "state", 1 },
};

int rm_link_find(const char *api, const char *param, uint8_t *drop)
{
    for (size_t i = 0; i < sizeof rm_links / sizeof rm_links[0]; i++)
        if (fnmatch(rm_links[i].glob, api, 0) == 0 && strcmp(rm_links[i].param, param) == 0) {
            *drop = rm_links[i].drop;
            return 1;
        }
    return 0;
}

/* Buffers the callee requires aligned (the arena's blocks are 16-aligned): a CUtensorMap "must be aligned to 64
   bytes" (cuda.h), and its type is aligned to 128. */
static const struct {
    const char *glob, *param;
    uint32_t align;
} rm_aligns[] = {
    { "cuTensorMap*", "tensorMap", 128 },
};

uint32_t rm_align_find(const char *api, const char *param)
{
    for (size_t i = 0; i < sizeof rm_aligns / sizeof rm_aligns[0]; i++)
        if (fnmatch(rm_aligns[i].glob, api, 0) == 0 && strcmp(rm_aligns[i].param, param) == 0)
            return rm_aligns[i].align;
    return 0;
}

/* Addresses the callee only looks up (RM_OP_ADDR): a client's shared pinned memory goes as region and offset. */
static const rm_scalar rm_addrs[] = {
    { "cuPointerGetAttribute", "ptr" },
    { "cuPointerSetAttribute", "ptr" },
    { "cuPointerGetAttributes", "ptr" },
};

/* Objects by number (rm_num.h): a value of one of these types by value is a number the back end gave, mapped to the
   library's pointer before the call runs; any other is refused. Kind: index + 1. */
static const rm_numbered rm_numbereds[RM_NUM_KINDS] = {
    { .type = "cublasHandle_t", .handle = 1 },
    /* cuBLAS's documentation: a valid cublasHandle_t may be used in place of a cublasLtHandle_t with a cast (PyTorch
       does); not the reverse. cublasLtDestroy of a cuBLAS handle's number is a bad handle: the cuBLAS handle lives. */
    { .type = "cublasLtHandle_t", .handle = 1, .also = "cublasHandle_t" },
    { .type = "cublasLtMatmulDesc_t", .handle = 0 },
    { .type = "cublasLtMatrixLayout_t", .handle = 0 },
    { .type = "cublasLtMatmulPreference_t", .handle = 0 },
    { .type = "cublasLtMatrixTransformDesc_t", .handle = 0 },
    { .type = "cublasLtEmulationDesc_t", .handle = 0 },
    /* NCCL's: an object that is not a live number is ncclInvalidArgument (a malformed call in NCCL's words) */
    { .type = "ncclComm_t", .handle = 0 },
    { .type = "ncclWindow_t", .handle = 0 },
    /* a 'void *': no C type names it, so its APIs name the parameter */
    { .type = "ncclCommRegister's handle", .handle = 0 },
};

/* The APIs that make one (through the output parameter named) or end one. NCCL's communicators: every
   ncclCommInit* of one communicator, a split or shrink's new one; ncclCommAbort ends one as ncclCommDestroy does.
   ncclCommInitAll's ndev communicators are not numbered here (rm_special's table refuses it). A buffer
   registration's handle and a window: made by the Register, ended by the Deregister. */
static const rm_num_api rm_num_apis[] = {
    { "cublasCreate_v2", "cublasHandle_t", "handle", RM_NUM_MAKE },
    { "cublasDestroy_v2", "cublasHandle_t", NULL, RM_NUM_END },
    { "cublasLtCreate", "cublasLtHandle_t", "lightHandle", RM_NUM_MAKE },
    { "cublasLtDestroy", "cublasLtHandle_t", NULL, RM_NUM_END },
    { "cublasLtMatmulDescCreate", "cublasLtMatmulDesc_t", "matmulDesc", RM_NUM_MAKE },
    { "cublasLtMatmulDescDestroy", "cublasLtMatmulDesc_t", NULL, RM_NUM_END },
    { "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayout_t", "matLayout", RM_NUM_MAKE },
    { "cublasLtMatrixLayoutDestroy", "cublasLtMatrixLayout_t", NULL, RM_NUM_END },
    { "cublasLtMatmulPreferenceCreate", "cublasLtMatmulPreference_t", "pref", RM_NUM_MAKE },
    { "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreference_t", NULL, RM_NUM_END },
    { "cublasLtMatrixTransformDescCreate", "cublasLtMatrixTransformDesc_t", "transformDesc", RM_NUM_MAKE },
    { "cublasLtMatrixTransformDescDestroy", "cublasLtMatrixTransformDesc_t", NULL, RM_NUM_END },
    { "cublasLtEmulationDescCreate", "cublasLtEmulationDesc_t", "emulationDesc", RM_NUM_MAKE },
    { "cublasLtEmulationDescDestroy", "cublasLtEmulationDesc_t", NULL, RM_NUM_END },
    { "*ncclCommInitRank", "ncclComm_t", "comm", RM_NUM_MAKE },
    { "*ncclCommInitRankConfig", "ncclComm_t", "comm", RM_NUM_MAKE },
    { "*ncclCommInitRankScalable", "ncclComm_t", "newcomm", RM_NUM_MAKE },
    { "*ncclCommSplit", "ncclComm_t", "newcomm", RM_NUM_MAKE },
    { "*ncclCommShrink", "ncclComm_t", "newcomm", RM_NUM_MAKE },
    { "*ncclCommDestroy", "ncclComm_t", NULL, RM_NUM_END },
    { "*ncclCommAbort", "ncclComm_t", NULL, RM_NUM_END },
    { "*ncclCommRegister", "ncclCommRegister's handle", "handle", RM_NUM_MAKE },
    { "*ncclCommDeregister", "ncclCommRegister's handle", "handle", RM_NUM_END },
    { "*ncclCommWindowRegister", "ncclWindow_t", "win", RM_NUM_MAKE },
    { "*ncclCommWindowDeregister", "ncclWindow_t", NULL, RM_NUM_END },
};

const rm_numbered *rm_numbered_at(int kind)
{
    return kind >= 1 && kind <= RM_NUM_KINDS ? &rm_numbereds[kind - 1] : NULL;
}

const rm_num_api *rm_num_api_at(size_t i)
{
    return i < sizeof rm_num_apis / sizeof rm_num_apis[0] ? &rm_num_apis[i] : NULL;
}

int rm_numbered_type(const char *type)
{
    for (int k = 0; type != NULL && k < RM_NUM_KINDS; k++)
        if (strcmp(type, rm_numbereds[k].type) == 0)
            return k + 1;
    return 0;
}

/* Attribute values that hold such an object (cublasLt.h: "CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR ...
   cublasLtEmulationDesc_t"). */
static const rm_num_attr rm_num_attrs[] = {
    { "cublasLtMatmulDescSetAttribute", "CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR", "cublasLtEmulationDesc_t" },
    { "cublasLtMatmulDescGetAttribute", "CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR", "cublasLtEmulationDesc_t" },
};

/* Functions returning a text the callee owns (const char *) whose text is the server's to give: NCCL's last error
   is set by the server's libnccl (the error texts of status codes are the client library's own: remote.c). */
static const char *const rm_ret_strings[] = { "*ncclGetLastError" };

int rm_ret_string_find(const char *api)
{
    for (size_t i = 0; i < sizeof rm_ret_strings / sizeof rm_ret_strings[0]; i++)
        if (fnmatch(rm_ret_strings[i], api, 0) == 0)
            return 1;
    return 0;
}

const rm_num_attr *rm_num_attr_find(const char *api)
{
    for (size_t i = 0; i < sizeof rm_num_attrs / sizeof rm_num_attrs[0]; i++)
        if (strcmp(api, rm_num_attrs[i].api) == 0)
            return &rm_num_attrs[i];
    return NULL;
}

const rm_attr_table *rm_attr_table_find(const char *enum_name)
{
    if (enum_name != NULL && strncmp(enum_name, "enum ", 5) == 0)   /* the runtime's enums have no typedef */
        enum_name += 5;
    for (size_t i = 0; enum_name != NULL && i < sizeof rm_attr_tables / sizeof rm_attr_tables[0]; i++)
        if (strcmp(rm_attr_tables[i].enum_name, enum_name) == 0)
            return &rm_attr_tables[i];
    return NULL;
}

uint32_t rm_attr_size_of(const rm_pplan *pp, int64_t value, uint8_t *kind)
{
    const rm_attr_table *t = pp->attrs;
    const cushim_enum_info *e = pp->attr_enum;
    if (t == NULL || e == NULL)
        return 0;
    for (uint32_t k = 0; k < e->nvalues; k++) {
        if (e->values[k].value != value)
            continue;
        for (uint32_t j = 0; j < t->n; j++)
            if (strcmp(t->rows[j].name, e->values[k].name) == 0) {
                *kind = t->rows[j].kind;
                return t->rows[j].kind == RM_ATTR_POINTEE ? pp->elem : t->rows[j].size;
            }
    }
    return 0;
}

uint32_t rm_attr_hash(const rm_attr_table *t, const cushim_enum_info *e)
{
    uint32_t h = 2166136261u;
    for (uint32_t k = 0; t != NULL && e != NULL && k < e->nvalues; k++)
        for (uint32_t j = 0; j < t->n; j++)
            if (strcmp(t->rows[j].name, e->values[k].name) == 0) {
                uint32_t w[3] = { (uint32_t)e->values[k].value, t->rows[j].size, t->rows[j].kind };
                for (size_t b = 0; b < sizeof w; b++)
                    h = (h ^ ((const uint8_t *)w)[b]) * 16777619u;
            }
    return h;
}

/* Launch attributes whose value holds a pointer of the caller's (RM_OP_LCONFIG refuses them: NOT_SUPPORTED). */
static const char *const rm_lattrs_refused[] = {
    "CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE",   /* deviceUpdatableKernelNode.devNode: written by the driver */
};

int rm_lattr_refused(const char *name)
{
    for (size_t i = 0; i < sizeof rm_lattrs_refused / sizeof rm_lattrs_refused[0]; i++)
        if (strcmp(rm_lattrs_refused[i], name) == 0)
            return 1;
    return 0;
}

int rm_addr_find(const char *api, const char *param)
{
    for (size_t i = 0; i < sizeof rm_addrs / sizeof rm_addrs[0]; i++)
        if (fnmatch(rm_addrs[i].glob, api, 0) == 0 && strcmp(rm_addrs[i].param, param) == 0)
            return 1;
    return 0;
}

int rm_scalar_find(const char *api, const char *param)
{
    for (size_t i = 0; i < sizeof rm_scalars / sizeof rm_scalars[0]; i++)
        if (fnmatch(rm_scalars[i].glob, api, 0) == 0 && strcmp(rm_scalars[i].param, param) == 0)
            return 1;
    return 0;
}

/* Struct fields that must be 0 (rm_plan.h, rm_zero_field). */
static const rm_zero_field rm_zero_fields[] = {
    { "cuMemCreate", "prop", "requestedHandleTypes",
      "'prop': carried while requestedHandleTypes is CU_MEM_HANDLE_TYPE_NONE and win32HandleMetaData NULL "
      "(an exportable handle would be the server's file descriptor or fabric handle)" },
};

const rm_zero_field *rm_zero_field_find(const char *api, const char *param)
{
    for (size_t i = 0; i < sizeof rm_zero_fields / sizeof rm_zero_fields[0]; i++)
        if (fnmatch(rm_zero_fields[i].glob, api, 0) == 0 && strcmp(rm_zero_fields[i].param, param) == 0)
            return &rm_zero_fields[i];
    return NULL;
}

const rm_trait *rm_trait_find(const char *name)
{
    for (size_t i = 0; i < sizeof rm_traits / sizeof rm_traits[0]; i++)
        if (fnmatch(rm_traits[i].glob, name, 0) == 0)
            return &rm_traits[i];
    return NULL;
}

const rm_special *rm_special_find(const char *name, uint32_t categories)
{
    static const rm_special interop = { "*", RM_CLASS_UNSUPPORTED, 0, NULL, NULL,
                                        "graphics and external-resource interop: the resource lives on the client" };
    for (size_t i = 0; i < sizeof rm_specials / sizeof rm_specials[0]; i++)
        if (fnmatch(rm_specials[i].glob, name, 0) == 0)
            return &rm_specials[i];
    if (categories & CUSHIM_CAT_INTEROP)
        return &interop;
    return NULL;
}

/* ---- module images ---- */
static uint64_t rm_rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rm_rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t rm_rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* An ELF64 image: the end of its headers, tables and every section that has bytes in the file. */
static uint64_t rm_elf_size(const uint8_t *b, uint64_t avail)
{
    if (avail < 64 || b[4] != 2 /* ELFCLASS64 */ || b[5] != 1 /* little-endian */)
        return 0;
    uint64_t phoff = rm_rd64(b + 32), shoff = rm_rd64(b + 40);
    uint16_t phentsize = rm_rd16(b + 54), phnum = rm_rd16(b + 56), shentsize = rm_rd16(b + 58), shnum = rm_rd16(b + 60);
    uint64_t end = 64;
    if (phnum != 0 && phoff + (uint64_t)phentsize * phnum > end)
        end = phoff + (uint64_t)phentsize * phnum;
    if (shnum != 0) {
        if (shentsize < 64 || shoff > avail || (uint64_t)shentsize * shnum > avail - shoff)
            return 0;   /* the section table lies outside what may be read */
        if (shoff + (uint64_t)shentsize * shnum > end)
            end = shoff + (uint64_t)shentsize * shnum;
        for (uint16_t i = 0; i < shnum; i++) {
            const uint8_t *sh = b + shoff + (uint64_t)shentsize * i;
            uint32_t type = rm_rd32(sh + 4);
            uint64_t off = rm_rd64(sh + 24), size = rm_rd64(sh + 32);
            if (type == 8 /* SHT_NOBITS */ || off > UINT64_MAX - size)
                continue;
            if (off + size > end)
                end = off + size;
        }
    }
    return end <= avail ? end : 0;
}

/* Does the image start with 'magic'? Byte by byte, never past the first byte that differs (a text shorter
   than a magic, "\x7f" and its NUL, is not read past its NUL: the magics hold no NUL). */
static int rm_has_magic(const uint8_t *b, uint64_t avail, const uint8_t magic[4])
{
    for (int i = 0; i < 4; i++)
        if ((uint64_t)i >= avail || b[i] != magic[i])
            return 0;
    return 1;
}

uint64_t rm_image_size(const void *image, uint64_t avail)
{
    static const uint8_t elf[4] = { 0x7f, 'E', 'L', 'F' }, fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
    const uint8_t *b = image;
    if (rm_has_magic(b, avail, elf))
        return rm_elf_size(b, avail);
    if (rm_has_magic(b, avail, fatbin)) {   /* the magic decides, whatever 'avail' is */
        if (avail < 16)
            return 0;
        uint64_t hsize = rm_rd16(b + 6), fsize = rm_rd64(b + 8);
        if (hsize < 16 || fsize > avail || hsize > avail - fsize)
            return 0;
        return hsize + fsize;
    }
    /* text (PTX): up to and with its NUL */
    for (uint64_t i = 0; i < avail; i++)
        if (b[i] == '\0')
            return i + 1;
    return 0;
}
