/*
 * e2e_usage_lib.c - a library that allocates device memory for its caller, built twice
 * (tests/e2e/memlimit.cmake): libe2e_usage_a.so through the driver (cuMemAlloc), libe2e_usage_b.so through the
 * runtime (cudaMalloc). memlimit must charge what each allocates to it by name (cushim usage --by-library).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stddef.h>

/* Not a tail call (the result is tested): this library's frame is on the stack during the allocation. */
__attribute__((visibility("default"), noinline)) int USAGE_LIB_FN(void **out, size_t n)
{
#if USAGE_LIB_RUNTIME
    if (cudaMalloc(out, n) != cudaSuccess)
        return -1;
#else
    CUdeviceptr d = 0;
    if (cuMemAlloc(&d, n) != CUDA_SUCCESS)
        return -1;
    *out = (void *)(uintptr_t)d;
#endif
    return 0;
}
