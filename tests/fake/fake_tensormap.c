/*
 * fake_tensormap.c - the fake driver's TMA descriptors (cuTensorMapEncodeTiled, Im2col, Im2colWide,
 * cuTensorMapReplaceAddress). A CUtensorMap is 128 opaque bytes; the fake lays out everything it was given in
 * them, so that a test comparing two runs' bytes sees every input that crossed (or did not):
 *   0..7 the global address, 8 the form (1 tiled, 2 im2col, 3 im2col wide), 9 the data type, 10 the rank,
 *   11 interleave, 12 swizzle, 13 L2 promotion, 14 OOB fill, 15 the wide mode; 16..55 globalDim[rank];
 *   56..87 globalStrides[rank - 1]; 88..107 boxDim[rank] (tiled) or, for im2col, the lower and upper corners
 *   (rank - 2 ints each as int16, or the wide form's two widths) and channelsPerPixel, pixelsPerColumn as
 *   uint32; 108..127 elementStrides[rank]. Elements past the rank stay zero.
 * Checks as cuda.h documents them: the map aligned to 64 bytes, a rank of 1..5 (im2col: 3..5), a global address
 * aligned to 16 bytes, every
 * array present; otherwise CUDA_ERROR_INVALID_VALUE and the map untouched.
 */
#include <string.h>

#include "fake_internal.h"

static CUresult fk_tmap_common(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                               const cuuint64_t *dim, const cuuint64_t *strides, const cuuint32_t *estrides,
                               unsigned form, unsigned min_rank, uint8_t b[128])
{
    if (!atomic_load(&fk_initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (map == NULL || ((uintptr_t)map & 63u) != 0 || rank < min_rank || rank > 5 || ((uintptr_t)addr & 15u) != 0 ||
        dim == NULL ||
        (rank > 1 && strides == NULL) || estrides == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(b, 0, 128);
    uint64_t a = (uint64_t)(uintptr_t)addr;
    memcpy(b, &a, 8);
    b[8] = (uint8_t)form;
    b[9] = (uint8_t)type;
    b[10] = (uint8_t)rank;
    memcpy(b + 16, dim, rank * sizeof *dim);
    memcpy(b + 56, strides, (rank - 1) * sizeof *strides);
    memcpy(b + 108, estrides, rank * sizeof *estrides);
    return CUDA_SUCCESS;
}

static void fk_tmap_modes(uint8_t b[128], unsigned il, unsigned sw, unsigned l2, unsigned oob, unsigned mode)
{
    b[11] = (uint8_t)il;
    b[12] = (uint8_t)sw;
    b[13] = (uint8_t)l2;
    b[14] = (uint8_t)oob;
    b[15] = (uint8_t)mode;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    FAKE_ENTER(cuTensorMapEncodeTiled);
    uint8_t b[128];
    CUresult r = fk_tmap_common(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                                elementStrides, 1, 1, b);
    if (r != CUDA_SUCCESS || boxDim == NULL)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
    memcpy(b + 88, boxDim, tensorRank * sizeof *boxDim);
    fk_tmap_modes(b, interleave, swizzle, l2Promotion, oobFill, 0);
    memcpy(tensorMap, b, 128);
    return CUDA_SUCCESS;
}

static void fk_tmap_pixels(uint8_t b[128], unsigned n, const int *lower, const int *upper, cuuint32_t cpp,
                           cuuint32_t ppc)
{
    for (unsigned k = 0; k < n; k++) {
        int16_t lo = (int16_t)lower[k], up = (int16_t)upper[k];
        memcpy(b + 88 + 2 * k, &lo, 2);
        memcpy(b + 94 + 2 * k, &up, 2);
    }
    memcpy(b + 100, &cpp, 4);
    memcpy(b + 104, &ppc, 4);
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                 void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                 const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner,
                                 cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                 const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                 CUtensorMapFloatOOBfill oobFill)
{
    FAKE_ENTER(cuTensorMapEncodeIm2col);
    uint8_t b[128];
    CUresult r = fk_tmap_common(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                                elementStrides, 2, 3, b);
    if (r != CUDA_SUCCESS || pixelBoxLowerCorner == NULL || pixelBoxUpperCorner == NULL)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
    fk_tmap_pixels(b, tensorRank - 2, pixelBoxLowerCorner, pixelBoxUpperCorner, channelsPerPixel, pixelsPerColumn);
    fk_tmap_modes(b, interleave, swizzle, l2Promotion, oobFill, 0);
    memcpy(tensorMap, b, 128);
    return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                     cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                     const cuuint64_t *globalStrides, int pixelBoxLowerCornerWidth,
                                     int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
                                     cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
                                     CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                     CUtensorMapFloatOOBfill oobFill)
{
    FAKE_ENTER(cuTensorMapEncodeIm2colWide);
    uint8_t b[128];
    CUresult r = fk_tmap_common(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                                elementStrides, 3, 3, b);
    if (r != CUDA_SUCCESS)
        return r;
    fk_tmap_pixels(b, 1, &pixelBoxLowerCornerWidth, &pixelBoxUpperCornerWidth, channelsPerPixel, pixelsPerColumn);
    fk_tmap_modes(b, interleave, swizzle, l2Promotion, oobFill, mode);
    memcpy(tensorMap, b, 128);
    return CUDA_SUCCESS;
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap, void *globalAddress)
{
    FAKE_ENTER(cuTensorMapReplaceAddress);
    FK_REQUIRE_INIT();
    uint8_t b[128];
    if (tensorMap == NULL || ((uintptr_t)tensorMap & 63u) != 0 || ((uintptr_t)globalAddress & 15u) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(b, tensorMap, 128);
    if (b[8] < 1 || b[8] > 3)   /* not a map this driver encoded */
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t a = (uint64_t)(uintptr_t)globalAddress;
    memcpy(b, &a, 8);
    memcpy(tensorMap, b, 128);
    return CUDA_SUCCESS;
}
