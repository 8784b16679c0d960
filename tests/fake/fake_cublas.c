/*
 * fake_cublas.c - a small fake cuBLAS (libcublas.so.13) and, built with
 * FAKE_CUBLASLT, cuBLASLt (libcublasLt.so.13) for the CPU tests: handles,
 * version queries and an SGEMM on host memory. Counts in FAKE_CUBLAS_COUNTS /
 * FAKE_CUBLASLT_COUNTS. Every other export is absent.
 */
#ifdef FAKE_CUBLASLT
#include <cublasLt.h>

#include "fake_libcount.h"

static const char *const fl_names[] = {"cublasLtCreate", "cublasLtDestroy", "cublasLtGetVersion"};
FL_COUNTING("FAKE_CUBLASLT_COUNTS", fake_cublaslt_count)

struct cublasLtContext {
    int magic;
};
static struct cublasLtContext fl_lt = {0x17};

FL_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    FK_COUNT(0);
    if (h == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *h = &fl_lt;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    FK_COUNT(1);
    return h == &fl_lt ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
FL_EXPORT size_t cublasLtGetVersion(void)
{
    FK_COUNT(2);
    return CUBLAS_VERSION;
}
#else
#ifndef CUBLASAPI   /* CUDA 12's cublas_api.h wants it (cublas_v2.h defines it empty for host code) */
#define CUBLASAPI
#endif
#include <cublas_api.h>

#include "fake_libcount.h"

static const char *const fl_names[] = {"cublasCreate_v2", "cublasDestroy_v2", "cublasGetVersion_v2",
                                       "cublasSgemm_v2"};
FL_COUNTING("FAKE_CUBLAS_COUNTS", fake_cublas_count)

struct cublasContext {
    int magic;
};
static struct cublasContext fl_h = {0x42};

FL_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    FK_COUNT(0);
    if (h == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *h = &fl_h;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    FK_COUNT(1);
    return h == &fl_h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
FL_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *version)
{
    FK_COUNT(2);
    if (h != &fl_h || version == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}
/* Column-major C = alpha*op(A)*op(B) + beta*C on host memory (no transposes). */
FL_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                        int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                        const float *beta, float *C, int ldc)
{
    FK_COUNT(3);
    if (h != &fl_h || ta != CUBLAS_OP_N || tb != CUBLAS_OP_N || m < 0 || n < 0 || k < 0 || alpha == NULL ||
        beta == NULL || A == NULL || B == NULL || C == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float s = 0;
            for (int l = 0; l < k; l++)
                s += A[i + l * lda] * B[l + j * ldb];
            C[i + j * ldc] = *alpha * s + *beta * C[i + j * ldc];
        }
    return CUBLAS_STATUS_SUCCESS;
}
#endif
