/* Synthetic cuda.h for the cushim-gen unit tests: the shapes of the real one, few functions. */
#ifndef CUDA_H
#define CUDA_H
#include <stddef.h>

#define CUDA_VERSION 12345
#define CUDAAPI

#if defined(__CUDA_API_VERSION_INTERNAL) || defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __CUDA_API_PTDS(api) api##_ptds
#else
#define __CUDA_API_PTDS(api) api
#endif
#define cuMemAlloc cuMemAlloc_v2
#define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2)

typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NOT_FOUND = 0x1f4, CUDA_ERROR_NOT_FOUND_ALIAS = CUDA_ERROR_NOT_FOUND, CUDA_ERROR_UNKNOWN = 999 } CUresult;
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUdesc_st {
    int w, h;
} CUDA_DESC;
/* anonymous member types (listed as "CUDA_ANON.<field>"): a struct, a plain union, a union with a pointer, and a
   nested anonymous struct */
typedef struct CUanon_st {
    int kind;
    struct { unsigned char a; unsigned short b; struct { int deep; } inner; } flags;
    union { int i; CUstream s; unsigned char bytes[8]; } plain;
    union { int i; void *p; } ptrs;
} CUDA_ANON;
typedef void(CUDAAPI *CUhostFn)(void *userData);

/**
 * \brief Initialize
 * \param Flags - Initialization flags
 */
CUresult CUDAAPI cuInit(unsigned int Flags);

/**
 * \param dptr     - Returned device pointer
 * \param bytesize - Requested allocation size in bytes
 */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);

/**
 * \param[out] desc the descriptor
 * \param[in,out] buf a buffer
 */
CUresult CUDAAPI cuGetDesc(CUDA_DESC *desc, void *buf);

/** \deprecated use something else */
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuRawCallback(void (*cb)(int, void *), int arr[4], void *unknown);
CUresult CUDAAPI cuNoParams(void);
const char *CUDAAPI cuName(int);
CUresult CUDAAPI cuGetHandles(CUstream *streams, unsigned int numStreams);

static inline CUresult cuHelper(void)
{
    return CUDA_SUCCESS;
}

#if defined(__CUDA_API_VERSION_INTERNAL)
#undef cuMemAlloc
#undef cuMemcpyHtoD
CUresult CUDAAPI cuMemAlloc(unsigned int *dptr, unsigned int bytesize);
CUresult CUDAAPI cuMemcpyHtoD(unsigned int dstDevice, const void *srcHost, unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
#endif

#endif
