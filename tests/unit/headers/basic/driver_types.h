/* Synthetic driver_types.h for the cushim-gen unit tests: like the real one, it
   holds enum cudaError outside the API headers, beside an enum that is not a result. */
#ifndef DRIVER_TYPES_H
#define DRIVER_TYPES_H
#define __device_builtin__
enum __device_builtin__ cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyDefault = 4 };
enum __device_builtin__ cudaError
{
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError,
    /** \deprecated */
    cudaErrorProfilerDisabled = 5,
    cudaErrorUnknown = 999,
    cudaErrorApiFailureBase = 10 * 1000
};
typedef __device_builtin__ enum cudaError cudaError_t;
#endif
