/*
 * fake_cudart_alloc.c - the fake runtime's other allocation paths (pitched and
 * 3D memory, arrays, mipmapped arrays, pools, page-locked host memory) and
 * cudaGetDeviceProperties, each made of the driver calls the real runtime
 * makes, reached through cuGetProcAddress like the rest of the fake runtime.
 */
#include <stdlib.h>
#include <string.h>

#include "fake_cudart_internal.h"

static size_t fra_chan_bytes(const struct cudaChannelFormatDesc *d)
{
    int bits = d->x + d->y + d->z + d->w;
    return bits > 0 ? (size_t)(bits + 7) / 8 : 4;
}

/* The driver array format and channels for a channel description (whole bytes per channel). */
static void fra_format(const struct cudaChannelFormatDesc *d, CUarray_format *f, unsigned *ch)
{
    size_t b = fra_chan_bytes(d);
    unsigned n = (d->x > 0) + (d->y > 0) + (d->z > 0) + (d->w > 0);
    *ch = n ? n : 1;
    b /= *ch;
    *f = b == 1 ? CU_AD_FORMAT_UNSIGNED_INT8 : b == 2 ? CU_AD_FORMAT_UNSIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT32;
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    FRT_ENTER(cudaMallocPitch);
    FRA_FN(__typeof__(&cuMemAllocPitch_v2), fn, "cuMemAllocPitch");
    CUdeviceptr p = 0;
    if (devPtr == NULL || pitch == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    CUresult r = fn(&p, pitch, width, height, 4);
    *devPtr = r == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
    return frt_ext_ret(r);
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    FRT_ENTER(cudaMalloc3D);
    FRA_FN(__typeof__(&cuMemAllocPitch_v2), fn, "cuMemAllocPitch");
    CUdeviceptr p = 0;
    size_t pitch = 0, rows = (extent.height ? extent.height : 1) * (extent.depth ? extent.depth : 1);
    if (pitchedDevPtr == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    CUresult r = fn(&p, &pitch, extent.width, rows, 4);
    if (r == CUDA_SUCCESS)
        *pitchedDevPtr = make_cudaPitchedPtr((void *)(uintptr_t)p, pitch, extent.width, extent.height);
    return frt_ext_ret(r);
}

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                            size_t height, unsigned int flags)
{
    FRT_ENTER(cudaMallocArray);
    FRA_FN(__typeof__(&cuArrayCreate_v2), fn, "cuArrayCreate");
    CUDA_ARRAY_DESCRIPTOR d;
    (void)flags;
    if (array == NULL || desc == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    memset(&d, 0, sizeof d);
    d.Width = width;
    d.Height = height;
    fra_format(desc, &d.Format, &d.NumChannels);
    return frt_ext_ret(fn((CUarray *)array, &d));
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
                              unsigned int flags)
{
    FRT_ENTER(cudaMalloc3DArray);
    FRA_FN(__typeof__(&cuArray3DCreate_v2), fn, "cuArray3DCreate");
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (array == NULL || desc == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    memset(&d, 0, sizeof d);
    d.Width = extent.width;
    d.Height = extent.height;
    d.Depth = extent.depth;
    d.Flags = flags;
    fra_format(desc, &d.Format, &d.NumChannels);
    return frt_ext_ret(fn((CUarray *)array, &d));
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned int numLevels, unsigned int flags)
{
    FRT_ENTER(cudaMallocMipmappedArray);
    FRA_FN(__typeof__(&cuMipmappedArrayCreate), fn, "cuMipmappedArrayCreate");
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (mipmappedArray == NULL || desc == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    memset(&d, 0, sizeof d);
    d.Width = extent.width;
    d.Height = extent.height;
    d.Depth = extent.depth;
    d.Flags = flags;
    fra_format(desc, &d.Format, &d.NumChannels);
    return frt_ext_ret(fn((CUmipmappedArray *)mipmappedArray, &d, numLevels));
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
    FRT_ENTER(cudaFreeArray);
    FRA_FN(__typeof__(&cuArrayDestroy), fn, "cuArrayDestroy");
    if (array == NULL)
        return cudaSuccess;
    return frt_ext_ret(fn((CUarray)array));
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t m)
{
    FRT_ENTER(cudaFreeMipmappedArray);
    FRA_FN(__typeof__(&cuMipmappedArrayDestroy), fn, "cuMipmappedArrayDestroy");
    if (m == NULL)
        return cudaSuccess;
    return frt_ext_ret(fn((CUmipmappedArray)m));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    FRT_ENTER(cudaHostAlloc);
    FRA_FN(__typeof__(&cuMemHostAlloc), fn, "cuMemHostAlloc");
    if (pHost == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    return frt_ext_ret(fn(pHost, size, flags));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    FRT_ENTER(cudaDeviceGetDefaultMemPool);
    FRA_FN(__typeof__(&cuDeviceGetDefaultMemPool), fn, "cuDeviceGetDefaultMemPool");
    return frt_ext_ret(fn((CUmemoryPool *)memPool, device));
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    FRT_ENTER(cudaMallocFromPoolAsync);
    FRA_FN(__typeof__(&cuMemAllocFromPoolAsync), fn, "cuMemAllocFromPoolAsync");
    CUdeviceptr p = 0;
    if (ptr == NULL)
        return cudaErrorInvalidValue;
    FRA_CTX();
    CUresult r = fn(&p, size, (CUmemoryPool)memPool, (CUstream)stream);
    *ptr = r == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
    return frt_ext_ret(r);
}

static cudaError_t fra_device_properties(struct cudaDeviceProp *prop, int device)
{
    FRA_FN(__typeof__(&cuDeviceTotalMem_v2), total, "cuDeviceTotalMem");
    FRA_FN(__typeof__(&cuDeviceGetName), name, "cuDeviceGetName");
    size_t t = 0;
    CUresult r;
    if (prop == NULL)
        return cudaErrorInvalidValue;
    memset(prop, 0, sizeof *prop);
    r = name(prop->name, (int)sizeof prop->name, device);
    if (r == CUDA_SUCCESS)
        r = total(&t, device);
    prop->totalGlobalMem = t;
    prop->major = 9;
    FRA_FN(__typeof__(&cuDeviceGetAttribute), attr, "cuDeviceGetAttribute");
    if (r == CUDA_SUCCESS)   /* as the driver says (the real runtime fills every field so) */
        r = attr(&prop->concurrentManagedAccess, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, device);
    return frt_ext_ret(r);
}

#if CUDART_VERSION >= 13000   /* CUDA 13's forms: a cudaMemLocation, the driver's _v2 calls */
/* Managed memory's placement: the driver's, with the location as the driver's struct (the same type and id). */
cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream)
{
    FRT_ENTER(cudaMemPrefetchAsync);
    FRA_FN(__typeof__(&cuMemPrefetchAsync_v2), fn, "cuMemPrefetchAsync");
    CUmemLocation loc = { .type = (CUmemLocationType)location.type, .id = location.id };
    return frt_ext_ret(fn((CUdeviceptr)(uintptr_t)devPtr, count, loc, flags, (CUstream)stream));
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location)
{
    FRT_ENTER(cudaMemAdvise);
    FRA_FN(__typeof__(&cuMemAdvise_v2), fn, "cuMemAdvise");
    CUmemLocation loc = { .type = (CUmemLocationType)location.type, .id = location.id };
    return frt_ext_ret(fn((CUdeviceptr)(uintptr_t)devPtr, count, (CUmem_advise)advice, loc));
}
#endif

/* The driver's attribute: the runtime's numbering is the driver's for the attributes the fake driver answers
   (cudaDevAttrConcurrentManagedAccess is CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 89). */
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    FRT_ENTER(cudaDeviceGetAttribute);
    FRA_FN(__typeof__(&cuDeviceGetAttribute), fn, "cuDeviceGetAttribute");
    if (value == NULL)
        return cudaErrorInvalidValue;
    return frt_ext_ret(fn(value, (CUdevice_attribute)attr, device));
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    FRT_ENTER(cudaGetDeviceProperties);
    return fra_device_properties(prop, device);
}

#if CUDART_VERSION < 13000   /* what cuda_runtime_api.h's cudaGetDeviceProperties is before 13.0 */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
    FRT_ENTER(cudaGetDeviceProperties_v2);
    return fra_device_properties(prop, device);
}
#endif
