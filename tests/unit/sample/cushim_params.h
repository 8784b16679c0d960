/* DO NOT EDIT: hand-written sample in the shape of cushim-gen output (tests/unit/sample, runtime development). */
#ifndef CUSHIM_PARAMS_H
#define CUSHIM_PARAMS_H
#include "cushim_cuda_headers.h"
typedef struct cushim_params_cuInit { unsigned int Flags; } cushim_params_cuInit;
typedef struct cushim_params_cuDriverGetVersion { int * driverVersion; } cushim_params_cuDriverGetVersion;
typedef struct cushim_params_cuCtxGetCurrent { CUcontext * pctx; } cushim_params_cuCtxGetCurrent;
typedef struct cushim_params_cuMemAlloc { CUdeviceptr_v1 * dptr; unsigned int bytesize; } cushim_params_cuMemAlloc;
typedef struct cushim_params_cuMemAlloc_v2 { CUdeviceptr * dptr; size_t bytesize; } cushim_params_cuMemAlloc_v2;
typedef struct cushim_params_cuMemFree_v2 { CUdeviceptr dptr; } cushim_params_cuMemFree_v2;
typedef struct cushim_params_cuGetErrorString { CUresult error; const char ** pStr; } cushim_params_cuGetErrorString;
typedef struct cushim_params_cuMemcpy { CUdeviceptr dst; CUdeviceptr src; size_t ByteCount; } cushim_params_cuMemcpy;
typedef struct cushim_params_cuMemcpy_ptds { CUdeviceptr dst; CUdeviceptr src; size_t ByteCount; } cushim_params_cuMemcpy_ptds;
typedef struct cushim_params_cuGetExportTable { const void ** ppExportTable; const CUuuid * pExportTableId; } cushim_params_cuGetExportTable;
typedef struct cushim_params_cuGetProcAddress { const char * symbol; void ** pfn; int cudaVersion; cuuint64_t flags; } cushim_params_cuGetProcAddress;
typedef struct cushim_params_cuGetProcAddress_v2 { const char * symbol; void ** pfn; int cudaVersion; cuuint64_t flags; CUdriverProcAddressQueryResult * symbolStatus; } cushim_params_cuGetProcAddress_v2;
typedef struct cushim_params_cuProfilerStart { char cushim_unused_;  } cushim_params_cuProfilerStart;
typedef struct cushim_params_cudaDeviceSynchronize { char cushim_unused_;  } cushim_params_cudaDeviceSynchronize;
typedef struct cushim_params_cudaMalloc { void ** devPtr; size_t size; } cushim_params_cudaMalloc;
typedef struct cushim_params_cudaGetErrorString { cudaError_t error; } cushim_params_cudaGetErrorString;
typedef struct cushim_params_cudaCreateChannelDesc { int x; int y; int z; int w; enum cudaChannelFormatKind f; } cushim_params_cudaCreateChannelDesc;
typedef struct cushim_params_cudaGetDriverEntryPoint { const char * symbol; void ** funcPtr; unsigned long long flags; enum cudaDriverEntryPointQueryResult * driverStatus; } cushim_params_cudaGetDriverEntryPoint;
typedef struct cushim_params_cudaGetDriverEntryPointByVersion { const char * symbol; void ** funcPtr; unsigned int cudaVersion; unsigned long long flags; enum cudaDriverEntryPointQueryResult * driverStatus; } cushim_params_cudaGetDriverEntryPointByVersion;
typedef struct cushim_params_cudaGetDriverEntryPoint_ptsz { const char * symbol; void ** funcPtr; unsigned long long flags; enum cudaDriverEntryPointQueryResult * driverStatus; } cushim_params_cudaGetDriverEntryPoint_ptsz;
typedef struct cushim_params_cudaGetDriverEntryPointByVersion_ptsz { const char * symbol; void ** funcPtr; unsigned int cudaVersion; unsigned long long flags; enum cudaDriverEntryPointQueryResult * driverStatus; } cushim_params_cudaGetDriverEntryPointByVersion_ptsz;
#endif
