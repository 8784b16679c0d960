/*
 * fake_funcattr.c - a function's attributes and occupancy in the fake driver: cuFuncGetAttribute answers what a
 * small kernel on a 1024-thread device would (32 registers, no static shared memory, PTX and binary 9.0), with
 * the dynamic shared memory limit cuFuncSetAttribute set (48 KiB by default, at most 227 KiB);
 * cuOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags] divides 2048 threads and 228 KiB of shared memory
 * per multiprocessor among the blocks; cuOccupancyMaxPotentialBlockSize[WithFlags] tries every multiple of 32 up to
 * the limit (the callback, when given, says each one's dynamic shared memory) and takes the most threads per
 * multiprocessor (the largest block on a tie), its grid filling the 132 multiprocessors once;
 * cuOccupancyAvailableDynamicSMemPerBlock shares those 228 KiB among the blocks (at most the function's limit);
 * cuOccupancyMaxPotentialClusterSize is 8 (the portable size); cuFuncSetCacheConfig and cuFuncSetSharedMemConfig
 * check their value and change nothing the fake models.
 */
#include "fake_internal.h"

#define FF_DEFAULT_DYNAMIC (48 << 10)
#define FF_MAX_DYNAMIC (227 << 10)

static CUresult ff_func(CUfunction f)
{
    if (!atomic_load(&fk_initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    return f != NULL && f->magic == FK_MAGIC_FUNC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static int ff_dynamic(CUfunction f)
{
    return f->max_dynamic_shared ? f->max_dynamic_shared : FF_DEFAULT_DYNAMIC;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    FAKE_ENTER(cuFuncGetAttribute);
    CUresult r = ff_func(hfunc);
    if (r != CUDA_SUCCESS)
        return r;
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = ff_dynamic(hfunc); break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    default:
        if ((int)attrib < 0 || (int)attrib >= CU_FUNC_ATTRIBUTE_MAX)
            return CUDA_ERROR_INVALID_VALUE;
        *pi = 0;
    }
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    FAKE_ENTER(cuFuncSetAttribute);
    CUresult r = ff_func(hfunc);
    if (r != CUDA_SUCCESS)
        return r;
    if (attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        return (int)attrib >= 0 && (int)attrib < CU_FUNC_ATTRIBUTE_MAX ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (value < 0 || value > FF_MAX_DYNAMIC)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    hfunc->max_dynamic_shared = value;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

static CUresult ff_occupancy(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize)
{
    CUresult r = ff_func(func);
    if (r != CUDA_SUCCESS)
        return r;
    if (numBlocks == NULL || blockSize <= 0 || blockSize > 1024 || dynamicSMemSize > (size_t)ff_dynamic(func))
        return CUDA_ERROR_INVALID_VALUE;
    int by_threads = 2048 / blockSize, by_shared = dynamicSMemSize ? (int)((228u << 10) / dynamicSMemSize) : 32;
    *numBlocks = by_threads < by_shared ? by_threads : by_shared;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize)
{
    FAKE_ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor);
    return ff_occupancy(numBlocks, func, blockSize, dynamicSMemSize);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags)
{
    FAKE_ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
    if (flags > 1)
        return CUDA_ERROR_INVALID_VALUE;
    return ff_occupancy(numBlocks, func, blockSize, dynamicSMemSize);
}

static CUresult ff_potential(int *minGridSize, int *blockSize, CUfunction func, CUoccupancyB2DSize cb,
                             size_t dynamicSMemSize, int blockSizeLimit)
{
    CUresult r = ff_func(func);
    int best = 0, best_blocks = 0, best_size = 0;
    if (r != CUDA_SUCCESS)
        return r;
    if (minGridSize == NULL || blockSize == NULL || blockSizeLimit < 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (int bs = 32; bs <= (blockSizeLimit ? blockSizeLimit : 1024) && bs <= 1024; bs += 32) {
        int n;
        if (ff_occupancy(&n, func, bs, cb != NULL ? cb(bs) : dynamicSMemSize) != CUDA_SUCCESS)
            continue;
        if (n * bs >= best) {
            best = n * bs;
            best_blocks = n;
            best_size = bs;
        }
    }
    if (best_size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    *minGridSize = best_blocks * 132;
    *blockSize = best_size;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit)
{
    FAKE_ENTER(cuOccupancyMaxPotentialBlockSize);
    return ff_potential(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit);
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
    FAKE_ENTER(cuOccupancyMaxPotentialBlockSizeWithFlags);
    if (flags > 1)
        return CUDA_ERROR_INVALID_VALUE;
    return ff_potential(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit);
}

/* Clusters of a configuration's cluster size (1 without the attribute) that fit at once: 128 blocks' worth. */
CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
    FAKE_ENTER(cuOccupancyMaxActiveClusters);
    FK_REQUIRE_INIT();
    if (numClusters == NULL || func == NULL || config == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_launch_attrs(config);
    if (r != CUDA_SUCCESS)
        return r;
    unsigned size = 1;
    for (unsigned int k = 0; k < config->numAttrs; k++)
        if (config->attrs[k].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            size = config->attrs[k].value.clusterDim.x * config->attrs[k].value.clusterDim.y *
                   config->attrs[k].value.clusterDim.z;
    *numClusters = (int)(128 / size);
    return CUDA_SUCCESS;
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                                 int blockSize)
{
    FAKE_ENTER(cuOccupancyAvailableDynamicSMemPerBlock);
    CUresult r = ff_func(func);
    if (r != CUDA_SUCCESS)
        return r;
    if (dynamicSmemSize == NULL || numBlocks <= 0 || blockSize <= 0 || blockSize > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    size_t share = (size_t)numBlocks * (size_t)blockSize > 2048 ? 0 : (228u << 10) / (size_t)numBlocks;
    *dynamicSmemSize = share < (size_t)ff_dynamic(func) ? share : (size_t)ff_dynamic(func);
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func, const CUlaunchConfig *config)
{
    FAKE_ENTER(cuOccupancyMaxPotentialClusterSize);
    CUresult r = ff_func(func);
    if (r != CUDA_SUCCESS)
        return r;
    if (clusterSize == NULL || config == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = fk_launch_attrs(config)) != CUDA_SUCCESS)
        return r;
    *clusterSize = 8;
    return CUDA_SUCCESS;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    FAKE_ENTER(cuFuncSetCacheConfig);
    CUresult r = ff_func(hfunc);
    if (r != CUDA_SUCCESS)
        return r;
    return (int)config >= CU_FUNC_CACHE_PREFER_NONE && (int)config <= CU_FUNC_CACHE_PREFER_EQUAL
               ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    FAKE_ENTER(cuFuncSetSharedMemConfig);
    CUresult r = ff_func(hfunc);
    if (r != CUDA_SUCCESS)
        return r;
    return (int)config >= CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE && (int)config <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE
               ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
