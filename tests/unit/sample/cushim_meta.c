/* DO NOT EDIT: hand-written sample in the shape of cushim-gen output (tests/unit/sample, runtime development). */
#include <stddef.h>
#include "cushim_params.h"
#include "cushim_api_ids.h"
#include "cushim/cushim_meta.h"

static const cushim_param_info params_cuInit[] = {
    { "Flags", "unsigned int", "unsigned int", 1, 1, offsetof(cushim_params_cuInit, Flags), sizeof(((cushim_params_cuInit *)0)->Flags), -1, 0, 0 },
};
static const cushim_param_info params_cuDriverGetVersion[] = {
    { "driverVersion", "int *", "int *", 4, 2, offsetof(cushim_params_cuDriverGetVersion, driverVersion), sizeof(((cushim_params_cuDriverGetVersion *)0)->driverVersion), -1, 0, 0 },
};
static const cushim_param_info params_cuCtxGetCurrent[] = {
    { "pctx", "CUcontext *", "CUcontext *", 4, 2, offsetof(cushim_params_cuCtxGetCurrent, pctx), sizeof(((cushim_params_cuCtxGetCurrent *)0)->pctx), -1, 0, 0 },
};
static const cushim_param_info params_cuMemAlloc[] = {
    { "dptr", "CUdeviceptr_v1 *", "CUdeviceptr_v1 *", 4, 2, offsetof(cushim_params_cuMemAlloc, dptr), sizeof(((cushim_params_cuMemAlloc *)0)->dptr), -1, 0, 0 },
    { "bytesize", "unsigned int", "unsigned int", 1, 1, offsetof(cushim_params_cuMemAlloc, bytesize), sizeof(((cushim_params_cuMemAlloc *)0)->bytesize), -1, 0, 0 },
};
static const cushim_param_info params_cuMemAlloc_v2[] = {
    { "dptr", "CUdeviceptr *", "CUdeviceptr *", 4, 2, offsetof(cushim_params_cuMemAlloc_v2, dptr), sizeof(((cushim_params_cuMemAlloc_v2 *)0)->dptr), -1, 0, 0 },
    { "bytesize", "size_t", "size_t", 1, 1, offsetof(cushim_params_cuMemAlloc_v2, bytesize), sizeof(((cushim_params_cuMemAlloc_v2 *)0)->bytesize), -1, 0, 0 },
};
static const cushim_param_info params_cuMemFree_v2[] = {
    { "dptr", "CUdeviceptr", "CUdeviceptr", 1, 1, offsetof(cushim_params_cuMemFree_v2, dptr), sizeof(((cushim_params_cuMemFree_v2 *)0)->dptr), -1, 0, 0 },
};
static const cushim_param_info params_cuGetErrorString[] = {
    { "error", "CUresult", "CUresult", 1, 1, offsetof(cushim_params_cuGetErrorString, error), sizeof(((cushim_params_cuGetErrorString *)0)->error), -1, 0, 0 },
    { "pStr", "const char **", "const char **", 4, 1, offsetof(cushim_params_cuGetErrorString, pStr), sizeof(((cushim_params_cuGetErrorString *)0)->pStr), -1, 0, 0 },
};
static const cushim_param_info params_cuMemcpy[] = {
    { "dst", "CUdeviceptr", "CUdeviceptr", 1, 1, offsetof(cushim_params_cuMemcpy, dst), sizeof(((cushim_params_cuMemcpy *)0)->dst), -1, 0, 0 },
    { "src", "CUdeviceptr", "CUdeviceptr", 1, 1, offsetof(cushim_params_cuMemcpy, src), sizeof(((cushim_params_cuMemcpy *)0)->src), -1, 0, 0 },
    { "ByteCount", "size_t", "size_t", 1, 1, offsetof(cushim_params_cuMemcpy, ByteCount), sizeof(((cushim_params_cuMemcpy *)0)->ByteCount), -1, 0, 0 },
};
static const cushim_param_info params_cuMemcpy_ptds[] = {
    { "dst", "CUdeviceptr", "CUdeviceptr", 1, 1, offsetof(cushim_params_cuMemcpy_ptds, dst), sizeof(((cushim_params_cuMemcpy_ptds *)0)->dst), -1, 0, 0 },
    { "src", "CUdeviceptr", "CUdeviceptr", 1, 1, offsetof(cushim_params_cuMemcpy_ptds, src), sizeof(((cushim_params_cuMemcpy_ptds *)0)->src), -1, 0, 0 },
    { "ByteCount", "size_t", "size_t", 1, 1, offsetof(cushim_params_cuMemcpy_ptds, ByteCount), sizeof(((cushim_params_cuMemcpy_ptds *)0)->ByteCount), -1, 0, 0 },
};
static const cushim_param_info params_cuGetExportTable[] = {
    { "ppExportTable", "const void **", "const void **", 4, 1, offsetof(cushim_params_cuGetExportTable, ppExportTable), sizeof(((cushim_params_cuGetExportTable *)0)->ppExportTable), -1, 0, 0 },
    { "pExportTableId", "const CUuuid *", "const CUuuid *", 4, 1, offsetof(cushim_params_cuGetExportTable, pExportTableId), sizeof(((cushim_params_cuGetExportTable *)0)->pExportTableId), -1, 0, 0 },
};
static const cushim_param_info params_cuGetProcAddress[] = {
    { "symbol", "const char *", "const char *", 5, 1, offsetof(cushim_params_cuGetProcAddress, symbol), sizeof(((cushim_params_cuGetProcAddress *)0)->symbol), -1, 0, 0 },
    { "pfn", "void **", "void **", 4, 2, offsetof(cushim_params_cuGetProcAddress, pfn), sizeof(((cushim_params_cuGetProcAddress *)0)->pfn), -1, 0, 0 },
    { "cudaVersion", "int", "int", 1, 1, offsetof(cushim_params_cuGetProcAddress, cudaVersion), sizeof(((cushim_params_cuGetProcAddress *)0)->cudaVersion), -1, 0, 0 },
    { "flags", "cuuint64_t", "cuuint64_t", 1, 1, offsetof(cushim_params_cuGetProcAddress, flags), sizeof(((cushim_params_cuGetProcAddress *)0)->flags), -1, 0, 0 },
};
static const cushim_param_info params_cuGetProcAddress_v2[] = {
    { "symbol", "const char *", "const char *", 5, 1, offsetof(cushim_params_cuGetProcAddress_v2, symbol), sizeof(((cushim_params_cuGetProcAddress_v2 *)0)->symbol), -1, 0, 0 },
    { "pfn", "void **", "void **", 4, 2, offsetof(cushim_params_cuGetProcAddress_v2, pfn), sizeof(((cushim_params_cuGetProcAddress_v2 *)0)->pfn), -1, 0, 0 },
    { "cudaVersion", "int", "int", 1, 1, offsetof(cushim_params_cuGetProcAddress_v2, cudaVersion), sizeof(((cushim_params_cuGetProcAddress_v2 *)0)->cudaVersion), -1, 0, 0 },
    { "flags", "cuuint64_t", "cuuint64_t", 1, 1, offsetof(cushim_params_cuGetProcAddress_v2, flags), sizeof(((cushim_params_cuGetProcAddress_v2 *)0)->flags), -1, 0, 0 },
    { "symbolStatus", "CUdriverProcAddressQueryResult *", "CUdriverProcAddressQueryResult *", 4, 2, offsetof(cushim_params_cuGetProcAddress_v2, symbolStatus), sizeof(((cushim_params_cuGetProcAddress_v2 *)0)->symbolStatus), -1, 0, 0 },
};
static const cushim_param_info params_cudaMalloc[] = {
    { "devPtr", "void **", "void **", 4, 2, offsetof(cushim_params_cudaMalloc, devPtr), sizeof(((cushim_params_cudaMalloc *)0)->devPtr), -1, 0, 0 },
    { "size", "size_t", "size_t", 1, 1, offsetof(cushim_params_cudaMalloc, size), sizeof(((cushim_params_cudaMalloc *)0)->size), -1, 0, 0 },
};
static const cushim_param_info params_cudaGetErrorString[] = {
    { "error", "cudaError_t", "cudaError_t", 1, 1, offsetof(cushim_params_cudaGetErrorString, error), sizeof(((cushim_params_cudaGetErrorString *)0)->error), -1, 0, 0 },
};
static const cushim_param_info params_cudaCreateChannelDesc[] = {
    { "x", "int", "int", 1, 1, offsetof(cushim_params_cudaCreateChannelDesc, x), sizeof(((cushim_params_cudaCreateChannelDesc *)0)->x), -1, 0, 0 },
    { "y", "int", "int", 1, 1, offsetof(cushim_params_cudaCreateChannelDesc, y), sizeof(((cushim_params_cudaCreateChannelDesc *)0)->y), -1, 0, 0 },
    { "z", "int", "int", 1, 1, offsetof(cushim_params_cudaCreateChannelDesc, z), sizeof(((cushim_params_cudaCreateChannelDesc *)0)->z), -1, 0, 0 },
    { "w", "int", "int", 1, 1, offsetof(cushim_params_cudaCreateChannelDesc, w), sizeof(((cushim_params_cudaCreateChannelDesc *)0)->w), -1, 0, 0 },
    { "f", "enum cudaChannelFormatKind", "enum cudaChannelFormatKind", 1, 1, offsetof(cushim_params_cudaCreateChannelDesc, f), sizeof(((cushim_params_cudaCreateChannelDesc *)0)->f), -1, 0, 0 },
};
static const cushim_param_info params_cudaGetDriverEntryPoint[] = {
    { "symbol", "const char *", "const char *", 5, 1, offsetof(cushim_params_cudaGetDriverEntryPoint, symbol), sizeof(((cushim_params_cudaGetDriverEntryPoint *)0)->symbol), -1, 0, 0 },
    { "funcPtr", "void **", "void **", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPoint, funcPtr), sizeof(((cushim_params_cudaGetDriverEntryPoint *)0)->funcPtr), -1, 0, 0 },
    { "flags", "unsigned long long", "unsigned long long", 1, 1, offsetof(cushim_params_cudaGetDriverEntryPoint, flags), sizeof(((cushim_params_cudaGetDriverEntryPoint *)0)->flags), -1, 0, 0 },
    { "driverStatus", "enum cudaDriverEntryPointQueryResult *", "enum cudaDriverEntryPointQueryResult *", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPoint, driverStatus), sizeof(((cushim_params_cudaGetDriverEntryPoint *)0)->driverStatus), -1, 0, 0 },
};
static const cushim_param_info params_cudaGetDriverEntryPointByVersion[] = {
    { "symbol", "const char *", "const char *", 5, 1, offsetof(cushim_params_cudaGetDriverEntryPointByVersion, symbol), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion *)0)->symbol), -1, 0, 0 },
    { "funcPtr", "void **", "void **", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPointByVersion, funcPtr), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion *)0)->funcPtr), -1, 0, 0 },
    { "cudaVersion", "unsigned int", "unsigned int", 1, 1, offsetof(cushim_params_cudaGetDriverEntryPointByVersion, cudaVersion), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion *)0)->cudaVersion), -1, 0, 0 },
    { "flags", "unsigned long long", "unsigned long long", 1, 1, offsetof(cushim_params_cudaGetDriverEntryPointByVersion, flags), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion *)0)->flags), -1, 0, 0 },
    { "driverStatus", "enum cudaDriverEntryPointQueryResult *", "enum cudaDriverEntryPointQueryResult *", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPointByVersion, driverStatus), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion *)0)->driverStatus), -1, 0, 0 },
};
static const cushim_param_info params_cudaGetDriverEntryPoint_ptsz[] = {
    { "symbol", "const char *", "const char *", 5, 1, offsetof(cushim_params_cudaGetDriverEntryPoint_ptsz, symbol), sizeof(((cushim_params_cudaGetDriverEntryPoint_ptsz *)0)->symbol), -1, 0, 0 },
    { "funcPtr", "void **", "void **", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPoint_ptsz, funcPtr), sizeof(((cushim_params_cudaGetDriverEntryPoint_ptsz *)0)->funcPtr), -1, 0, 0 },
    { "flags", "unsigned long long", "unsigned long long", 1, 1, offsetof(cushim_params_cudaGetDriverEntryPoint_ptsz, flags), sizeof(((cushim_params_cudaGetDriverEntryPoint_ptsz *)0)->flags), -1, 0, 0 },
    { "driverStatus", "enum cudaDriverEntryPointQueryResult *", "enum cudaDriverEntryPointQueryResult *", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPoint_ptsz, driverStatus), sizeof(((cushim_params_cudaGetDriverEntryPoint_ptsz *)0)->driverStatus), -1, 0, 0 },
};
static const cushim_param_info params_cudaGetDriverEntryPointByVersion_ptsz[] = {
    { "symbol", "const char *", "const char *", 5, 1, offsetof(cushim_params_cudaGetDriverEntryPointByVersion_ptsz, symbol), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion_ptsz *)0)->symbol), -1, 0, 0 },
    { "funcPtr", "void **", "void **", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPointByVersion_ptsz, funcPtr), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion_ptsz *)0)->funcPtr), -1, 0, 0 },
    { "cudaVersion", "unsigned int", "unsigned int", 1, 1, offsetof(cushim_params_cudaGetDriverEntryPointByVersion_ptsz, cudaVersion), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion_ptsz *)0)->cudaVersion), -1, 0, 0 },
    { "flags", "unsigned long long", "unsigned long long", 1, 1, offsetof(cushim_params_cudaGetDriverEntryPointByVersion_ptsz, flags), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion_ptsz *)0)->flags), -1, 0, 0 },
    { "driverStatus", "enum cudaDriverEntryPointQueryResult *", "enum cudaDriverEntryPointQueryResult *", 4, 2, offsetof(cushim_params_cudaGetDriverEntryPointByVersion_ptsz, driverStatus), sizeof(((cushim_params_cudaGetDriverEntryPointByVersion_ptsz *)0)->driverStatus), -1, 0, 0 },
};
const cushim_api_info cushim_gen_apis[] = {
    { 1, "cuInit", "cuInit", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuInit), sizeof(CUresult), 1, params_cuInit },
    { 2, "cuDriverGetVersion", "cuDriverGetVersion", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuDriverGetVersion), sizeof(CUresult), 1, params_cuDriverGetVersion },
    { 3, "cuCtxGetCurrent", "cuCtxGetCurrent", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuCtxGetCurrent), sizeof(CUresult), 1, params_cuCtxGetCurrent },
    { 4, "cuMemAlloc", "cuMemAlloc", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuMemAlloc), sizeof(CUresult), 2, params_cuMemAlloc },
    { 5, "cuMemAlloc_v2", "cuMemAlloc", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuMemAlloc_v2), sizeof(CUresult), 2, params_cuMemAlloc_v2 },
    { 6, "cuMemFree_v2", "cuMemFree", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuMemFree_v2), sizeof(CUresult), 1, params_cuMemFree_v2 },
    { 7, "cuGetErrorString", "cuGetErrorString", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuGetErrorString), sizeof(CUresult), 2, params_cuGetErrorString },
    { 8, "cuMemcpy", "cuMemcpy", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuMemcpy), sizeof(CUresult), 3, params_cuMemcpy },
    { 9, "cuMemcpy_ptds", "cuMemcpy", 0, 1, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuMemcpy_ptds), sizeof(CUresult), 3, params_cuMemcpy_ptds },
    { 10, "cuGetExportTable", "cuGetExportTable", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuGetExportTable), sizeof(CUresult), 2, params_cuGetExportTable },
    { 11, "cuGetProcAddress", "cuGetProcAddress", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuGetProcAddress), sizeof(CUresult), 4, params_cuGetProcAddress },
    { 12, "cuGetProcAddress_v2", "cuGetProcAddress", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuGetProcAddress_v2), sizeof(CUresult), 5, params_cuGetProcAddress_v2 },
    { 13, "cuProfilerStart", "cuProfilerStart", 0, 0, 1, CUSHIM_RET_CURESULT, 0, 0, "CUresult", "cuda.h", 0, sizeof(cushim_params_cuProfilerStart), sizeof(CUresult), 0, NULL },
    { 14, "cudaDeviceSynchronize", "cudaDeviceSynchronize", 0, 0, 2, CUSHIM_RET_CUDAERROR, 0, 0, "cudaError_t", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaDeviceSynchronize), sizeof(cudaError_t), 0, NULL },
    { 15, "cudaMalloc", "cudaMalloc", 0, 0, 2, CUSHIM_RET_CUDAERROR, 0, 0, "cudaError_t", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaMalloc), sizeof(cudaError_t), 2, params_cudaMalloc },
    { 16, "cudaGetErrorString", "cudaGetErrorString", 0, 0, 2, CUSHIM_RET_OTHER, 0, 0, "const char *", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaGetErrorString), sizeof(const char *), 1, params_cudaGetErrorString },
    { 17, "cudaCreateChannelDesc", "cudaCreateChannelDesc", 0, 0, 2, CUSHIM_RET_OTHER, 0, 0, "struct cudaChannelFormatDesc", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaCreateChannelDesc), sizeof(struct cudaChannelFormatDesc), 5, params_cudaCreateChannelDesc },
    { 18, "cudaGetDriverEntryPoint", "cudaGetDriverEntryPoint", 0, 0, 2, CUSHIM_RET_CUDAERROR, 0, 0, "cudaError_t", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaGetDriverEntryPoint), sizeof(cudaError_t), 4, params_cudaGetDriverEntryPoint },
    { 19, "cudaGetDriverEntryPointByVersion", "cudaGetDriverEntryPointByVersion", 0, 0, 2, CUSHIM_RET_CUDAERROR, 0, 0, "cudaError_t", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaGetDriverEntryPointByVersion), sizeof(cudaError_t), 5, params_cudaGetDriverEntryPointByVersion },
    { 20, "cudaGetDriverEntryPoint_ptsz", "cudaGetDriverEntryPoint", 0, 2, 2, CUSHIM_RET_CUDAERROR, 0, 0, "cudaError_t", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaGetDriverEntryPoint_ptsz), sizeof(cudaError_t), 4, params_cudaGetDriverEntryPoint_ptsz },
    { 21, "cudaGetDriverEntryPointByVersion_ptsz", "cudaGetDriverEntryPointByVersion", 0, 2, 2, CUSHIM_RET_CUDAERROR, 0, 0, "cudaError_t", "cuda_runtime_api.h", 0, sizeof(cushim_params_cudaGetDriverEntryPointByVersion_ptsz), sizeof(cudaError_t), 5, params_cudaGetDriverEntryPointByVersion_ptsz },
};
const uint32_t cushim_gen_api_count = 21;
const uint16_t cushim_gen_by_name[] = { 2, 1, 6, 9, 10, 11, 0, 3, 4, 5, 7, 8, 12, 16, 13, 17, 18, 20, 19, 15, 14 };
const int16_t cushim_gen_index_of_id[CUSHIM_API_ID_LIMIT] = { -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
