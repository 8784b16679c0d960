/* DO NOT EDIT: hand-written sample in the shape of cushim-gen output (tests/unit/sample, runtime development). */
#ifndef CUSHIM_API_IDS_H
#define CUSHIM_API_IDS_H
#define CUSHIM_GEN_CUDA_VERSION 13000
#define CUSHIM_GEN_CUDA_VERSION_STRING "13.0"
enum cushim_api_id {
    CUSHIM_API_cuInit = 1,
    CUSHIM_API_cuDriverGetVersion = 2,
    CUSHIM_API_cuCtxGetCurrent = 3,
    CUSHIM_API_cuMemAlloc = 4,
    CUSHIM_API_cuMemAlloc_v2 = 5,
    CUSHIM_API_cuMemFree_v2 = 6,
    CUSHIM_API_cuGetErrorString = 7,
    CUSHIM_API_cuMemcpy = 8,
    CUSHIM_API_cuMemcpy_ptds = 9,
    CUSHIM_API_cuGetExportTable = 10,
    CUSHIM_API_cuGetProcAddress = 11,
    CUSHIM_API_cuGetProcAddress_v2 = 12,
    CUSHIM_API_cuProfilerStart = 13,
    CUSHIM_API_cudaDeviceSynchronize = 14,
    CUSHIM_API_cudaMalloc = 15,
    CUSHIM_API_cudaGetErrorString = 16,
    CUSHIM_API_cudaCreateChannelDesc = 17,
    CUSHIM_API_cudaGetDriverEntryPoint = 18,
    CUSHIM_API_cudaGetDriverEntryPointByVersion = 19,
    CUSHIM_API_cudaGetDriverEntryPoint_ptsz = 20,
    CUSHIM_API_cudaGetDriverEntryPointByVersion_ptsz = 21,
};
#define CUSHIM_API_ID_LIMIT 22
#endif
