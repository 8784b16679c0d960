/* Synthetic cuda_runtime_api.h for the cushim-gen unit tests. */
#ifndef CUDA_RUNTIME_API_H
#define CUDA_RUNTIME_API_H
#include <stddef.h>

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || defined(__CUDA_API_VERSION_INTERNAL)
#define __CUDART_API_PER_THREAD_DEFAULT_STREAM
#endif
#if defined(__CUDART_API_PER_THREAD_DEFAULT_STREAM)
#define cudaMemcpy cudaMemcpy_ptds
#endif

#include "driver_types.h"
struct cudaChannelFormatDesc {
    int x, y, z, w;
};

/**
 * \param dst   - Destination memory address
 * \param src   - Source memory address
 * \param count - Size in bytes to copy
 */
extern cudaError_t cudaMemcpy(void *dst, const void *src, size_t count);
extern struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w);
extern cudaError_t cudaGetDeviceCount(int *count);

#if defined(__CUDART_API_PER_THREAD_DEFAULT_STREAM)
static inline cudaError_t cudaGetDeviceCount2(int *count)
{
    return cudaGetDeviceCount(count);
}
#endif
#endif
