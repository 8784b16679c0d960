/* Synthetic cudaTypedefs.h: text-scanned by cushim-gen, never compiled. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
#define PFN_cuInit PFN_cuInit_v2000
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v3020)(CUdeviceptr_v2 *dptr, size_t bytesize);
typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v3020)(CUdeviceptr_v2 dstDevice, const void *srcHost, size_t ByteCount);
typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v7000_ptds)(CUdeviceptr_v2 dstDevice, const void *srcHost, size_t ByteCount);
typedef CUresult (CUDAAPI *PFN_cuGetDesc_v11000)(CUDA_DESC *desc, void *buf);
#if defined(__CUDA_API_VERSION_INTERNAL)
    typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v2000)(unsigned int *dptr, unsigned int bytesize);
    typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v2000)(unsigned int dstDevice, const void *srcHost, unsigned int ByteCount);
#endif
#if 0
/* an inactive branch still names an exported variant */
typedef CUresult (CUDAAPI *PFN_cuLaunchHostFunc_v10000)(CUstream hStream, CUhostFn fn, void *userData);
#endif
#endif
