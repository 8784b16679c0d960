/* DO NOT EDIT: hand-written sample in the shape of cushim-gen output (tests/unit/sample, runtime development). */
#ifndef CUSHIM_CUDA_HEADERS_H
#define CUSHIM_CUDA_HEADERS_H
#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL
#endif
#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_runtime_api.h>
#include <cuda_profiler_api.h>
#endif
