/*
 * e2e_remote_cublas.c - the cuBLAS and cuBLASLt calls PyTorch makes, with matrices in device memory
 * (docs/remote.md, "cuBLAS and cuBLASLt"): run locally on the fakes and through cushim-serve
 * (run_remote_cublas.sh), it must print the same. Linked against the runtime, cuBLAS and cuBLASLt (the fakes).
 *
 *   - a handle: versions, its stream, a workspace, the math mode, set and read back;
 *   - SGEMM with host scalars, then with the scalars in device memory (CUBLAS_POINTER_MODE_DEVICE: never read
 *     by the client), then host again; SGEMM strided batched;
 *   - GemmEx with a 32F compute type (float scalars) and a 64F one (double scalars: 8 bytes), GemmStridedBatchedEx
 *     in double, DGEMM and its strided batched form, and GemmEx with a compute type no fake supports (refused: CUBLAS_STATUS_NOT_SUPPORTED both ways);
 *   - cuBLASLt: a matmul descriptor, its scale type read back (asked for its size first), layouts, a preference
 *     with a workspace bound, the heuristic (4 asked, 1 returned, its algorithm carried whole into the matmul),
 *     a matmul with host scalars, then with device scalars (CUBLASLT_MATMUL_DESC_POINTER_MODE), destroyed.
 *   - PyTorch's pattern per GEMM, E2E_LOOP times (default 4): a handle's stream, workspace and math mode set to
 *     the same values, an SGEMM, a GemmEx and a DGEMM; a cuBLASLt descriptor, layouts and preference created, their attributes set, the
 *     heuristic, a matmul, all destroyed; then SGEMMs and setters the library refuses (a leading dimension too
 *     small, a negative k, an attribute it does not know, a size it does not take): their statuses printed;
 *   - E2E_HEUR=1 instead: cublasLtMatmulAlgoGetHeuristic asked again with the same and other content, device and
 *     thread (heur_cache), each answer printed;
 *   - E2E_CAST=1 instead: PyTorch's cuBLASLt handle, its cuBLAS handle cast (cast_handle): E2E_LOOP matmuls on it,
 *     cublasLtDestroy of it refused, the cuBLAS handle used after;
 *   - E2E_ASYNC_ERR=1 instead: a batched setter the server's library refuses (the fake knows no epilogue), then a
 *     driver call (success: cuBLAS's error is not the driver's) and a cuBLAS call (returns the setter's status).
 * Every result is printed; with E2E_NO_DRIVER=1 it checks that no libcuda.so.1 was loaded in this process.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#ifndef CUBLASAPI   /* CUDA 12's cublas_api.h wants it (cublas_v2.h defines it empty for host code) */
#define CUBLASAPI
#endif
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "e2e_remote_cublas: FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            failures++;                                                           \
        }                                                                         \
    } while (0)
#define BLAS(call)                                                                \
    do {                                                                          \
        cublasStatus_t s_ = (call);                                               \
        CHECK(s_ == CUBLAS_STATUS_SUCCESS, "%s: status %d", #call, (int)s_);      \
    } while (0)

static void *dev(const void *host, size_t n)
{
    void *d = NULL;
    CHECK(cudaMalloc(&d, n) == cudaSuccess, "cudaMalloc(%zu)", n);
    if (d != NULL && host != NULL)
        CHECK(cudaMemcpy(d, host, n, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy to the device");
    return d;
}

static void show_f(const char *what, const void *d, int n)
{
    float h[64];
    CHECK(cudaMemcpy(h, d, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy back");
    printf("%s:", what);
    for (int i = 0; i < n; i++)
        printf(" %g", h[i]);
    printf("\n");
}

static void show_d(const char *what, const void *d, int n)
{
    double h[64];
    CHECK(cudaMemcpy(h, d, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy back");
    printf("%s:", what);
    for (int i = 0; i < n; i++)
        printf(" %.17g", h[i]);
    printf("\n");
}

/* A (2x3), B (3x2), C (2x2), column-major */
static const float fa[6] = { 1, 2, 3, 4, 5, 6 }, fb[6] = { 7, 8, 9, 10, 11, 12 }, fc[4] = { 1, -1, 2, -2 };
static const double da[6] = { 0.5, 1.5, -2, 3, 4.25, -1 }, db[6] = { 2, 1, 0.125, -3, 5, 7 }, dc[4] = { 1, 2, 3, 4 };

static void blas(void)
{
    cublasHandle_t h = NULL;
    cudaStream_t st = NULL, got = NULL;
    int version = 0;
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    BLAS(cublasCreate_v2(&h));
    BLAS(cublasGetVersion_v2(h, &version));
    printf("cublas version %d, cublasLt version %zu\n", version, cublasLtGetVersion());
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "cudaStreamCreate");
    BLAS(cublasSetStream_v2(h, st));
    BLAS(cublasGetStream_v2(h, &got));
    printf("stream read back: %s\n", got == st ? "the one set" : "another");
    void *ws = dev(NULL, 1 << 20);
    BLAS(cublasSetWorkspace_v2(h, ws, 1 << 20));
    BLAS(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    BLAS(cublasGetMathMode(h, &math));
    printf("math mode %d\n", (int)math);

    float *A = dev(fa, sizeof fa), *B = dev(fb, sizeof fb), *C = dev(fc, sizeof fc);
    float alpha = 2, beta = 0.5f;
    BLAS(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, A, 2, B, 3, &beta, C, 2));
    show_f("sgemm host scalars", C, 4);
    {   /* against the host's own product: local == remote alone would pass a wrong fake or a garbled argument */
        float got[4], want[4];
        CHECK(cudaMemcpy(got, C, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy back");
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                float acc = 0;
                for (int l = 0; l < 3; l++)
                    acc += fa[i + 2 * l] * fb[l + 3 * j];
                want[i + 2 * j] = alpha * acc + beta * fc[i + 2 * j];
            }
        for (int i = 0; i < 4; i++)
            CHECK(got[i] == want[i], "sgemm host scalars: C[%d] = %g, the host's product %g", i, got[i], want[i]);
    }
    /* device scalars: the library reads them on the device; the client never does */
    const float dscal[2] = { -1, 3 };
    float *ds = dev(dscal, sizeof dscal);
    BLAS(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    BLAS(cublasGetPointerMode_v2(h, &pm));
    printf("pointer mode %d\n", (int)pm);
    BLAS(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_T, 2, 2, 3, ds, B, 3, A, 2, ds + 1, C, 2));
    show_f("sgemm device scalars", C, 4);
    BLAS(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    alpha = 0.25f;
    beta = 1;
    BLAS(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, A, 2, B, 3, &beta, C, 2));
    show_f("sgemm host again", C, 4);

    /* two batches of the same shapes, strided */
    float ba[12], bb[12], bc[8];
    for (int i = 0; i < 12; i++)
        ba[i] = (float)(i % 5) - 1, bb[i] = (float)(i % 3) + 0.5f;
    for (int i = 0; i < 8; i++)
        bc[i] = (float)i;
    float *BA = dev(ba, sizeof ba), *BB = dev(bb, sizeof bb), *BC = dev(bc, sizeof bc);
    alpha = 1.5f;
    beta = -1;
    BLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, BA, 2, 6, BB, 3, 6, &beta, BC, 2, 4,
                                   2));
    show_f("sgemm strided batched", BC, 8);

    /* GemmEx: the scalars' size is the compute type's - 4 bytes for 32F, 8 for 64F */
    float fx = 1.5f, fy = -0.5f;
    BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &fx, A, CUDA_R_32F, 2, B, CUDA_R_32F, 3, &fy, C,
                      CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    show_f("gemmex 32F", C, 4);
    double *DA = dev(da, sizeof da), *DB = dev(db, sizeof db), *DC = dev(dc, sizeof dc);
    double dx = 0.1, dy = 1.0 / 3;   /* not representable as floats: a 4-byte scalar would change them */
    BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &dx, DA, CUDA_R_64F, 2, DB, CUDA_R_64F, 3, &dy, DC,
                      CUDA_R_64F, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    show_d("gemmex 64F", DC, 4);
    double bda[12], bdb[12], bdc[8];
    for (int i = 0; i < 12; i++)
        bda[i] = i * 0.3 - 1, bdb[i] = 1.0 / (i + 1);
    for (int i = 0; i < 8; i++)
        bdc[i] = i * 0.7;
    double *BDA = dev(bda, sizeof bda), *BDB = dev(bdb, sizeof bdb), *BDC = dev(bdc, sizeof bdc);
    dx = 1.0 / 7;
    dy = -0.1;
    BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &dx, BDA, CUDA_R_64F, 3, 6, BDB,
                                    CUDA_R_64F, 3, 6, &dy, BDC, CUDA_R_64F, 2, 4, 2, CUBLAS_COMPUTE_64F,
                                    CUBLAS_GEMM_DEFAULT));
    show_d("gemm strided batched ex 64F", BDC, 8);
    /* DGEMM and its strided batched form: 8-byte scalars by their pointee */
    dx = 0.3;
    dy = -2.0 / 3;
    BLAS(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, 2, 2, 3, &dx, DA, 2, DB, 2, &dy, DC, 2));
    show_d("dgemm", DC, 4);
    BLAS(cublasDgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &dx, BDA, 3, 6, BDB, 3, 6, &dy, BDC, 2, 4, 2));
    show_d("dgemm strided batched", BDC, 8);
    /* a compute type neither the fake nor the remoting's sizing knows: refused, C untouched */
    cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &fx, A, CUDA_R_32F, 2, B, CUDA_R_32F, 3, &fy,
                                    C, CUDA_R_32F, 2, (cublasComputeType_t)99, CUBLAS_GEMM_DEFAULT);
    printf("gemmex unknown compute type: status %d\n", (int)s);
    /* complex GEMMs the library refuses (a negative m, an lda too small): not batched, the error comes back */
    cuDoubleComplex z1 = { 1, 0 };
    cuComplex c1 = { 1, 0 };
    printf("zgemm m=-1: status %d\n", (int)cublasZgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 1, 1, &z1,
                                                           (const cuDoubleComplex *)DA, 1, (const cuDoubleComplex *)DB,
                                                           1, &z1, (cuDoubleComplex *)DC, 1));
    printf("sgemm batched NULL Aarray: status %d\n",
           (int)cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &fx, NULL, 2, (const float *const *)B, 3,
                                   &fy, (float *const *)C, 2, 1));
    printf("dgemm batched batchCount -1: status %d\n",
           (int)cublasDgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &dx, (const double *const *)DA, 2,
                                   (const double *const *)DB, 3, &dy, (double *const *)DC, 2, -1));
    printf("cgemm strided batched lda<m: status %d\n",
           (int)cublasCgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 1, &c1, (const cuComplex *)A, 1, 0,
                                          (const cuComplex *)B, 1, 0, &c1, (cuComplex *)C, 2, 0, 1));
    show_f("gemmex refused left C", C, 4);

    void *ptrs[] = { A, B, C, ds, BA, BB, BC, DA, DB, DC, BDA, BDB, BDC, ws };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        CHECK(cudaFree(ptrs[i]) == cudaSuccess, "cudaFree");
    BLAS(cublasDestroy_v2(h));
    CHECK(cudaStreamDestroy(st) == cudaSuccess, "cudaStreamDestroy");
}

static void lt(void)
{
    cublasLtHandle_t h = NULL;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res[4];
    int returned = 0;
    int32_t scale = -1, trans = CUBLAS_OP_N;
    size_t written = 0;
    uint64_t max_ws = 1 << 16;
    BLAS(cublasLtCreate(&h));
    BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
    BLAS(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, NULL, 0, &written));
    BLAS(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale, &written));
    printf("lt scale type %d (%zu bytes)\n", (int)scale, written);
    BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 2, 3, 2));
    BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 3, 2, 3));
    BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 2, 2, 2));
    int32_t one = 1;
    BLAS(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &one, sizeof one));
    BLAS(cublasLtMatmulPreferenceCreate(&pref));
    BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws));
    memset(res, 0x5a, sizeof res);
    BLAS(cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref, 4, res, &returned));
    printf("lt heuristic: %d returned, state %d, workspace %zu, waves %g\n", returned, (int)res[0].state,
           res[0].workspaceSize, (double)res[0].wavesCount);
    float *A = dev(fa, sizeof fa), *B = dev(fb, sizeof fb), *C = dev(fc, sizeof fc), *D = dev(NULL, sizeof fc);
    void *ws = dev(NULL, 1 << 16);
    cudaStream_t st = NULL;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "cudaStreamCreate");
    float alpha = 3, beta = -2;
    BLAS(cublasLtMatmul(h, desc, &alpha, A, la, B, lb, &beta, C, lc, D, lc, &res[0].algo, ws, 1 << 16, st));
    show_f("lt matmul host scalars", D, 4);
    const float dscal[2] = { 0.5f, 4 };
    float *ds = dev(dscal, sizeof dscal);
    int32_t mode = CUBLASLT_POINTER_MODE_DEVICE;
    BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof mode));
    BLAS(cublasLtMatmul(h, desc, ds, A, la, B, lb, ds + 1, C, lc, D, lc, &res[0].algo, ws, 1 << 16, st));
    show_f("lt matmul device scalars", D, 4);
    BLAS(cublasLtMatmulPreferenceDestroy(pref));
    BLAS(cublasLtMatrixLayoutDestroy(la));
    BLAS(cublasLtMatrixLayoutDestroy(lb));
    BLAS(cublasLtMatrixLayoutDestroy(lc));
    BLAS(cublasLtMatmulDescDestroy(desc));
    BLAS(cublasLtDestroy(h));
    void *ptrs[] = { A, B, C, D, ws, ds };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        CHECK(cudaFree(ptrs[i]) == cudaSuccess, "cudaFree");
    CHECK(cudaStreamDestroy(st) == cudaSuccess, "cudaStreamDestroy");
}

/* What PyTorch does per Linear: cublasSetStream_v2, cublasSetWorkspace_v2, cublasSetMathMode (the same values each
   time) around a GEMM, and the cuBLASLt path with descriptors made and destroyed per call. */
static void torch_like(int n)
{
    cublasHandle_t h = NULL;
    cublasLtHandle_t lh = NULL;
    cudaStream_t st = NULL;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "cudaStreamCreate");
    BLAS(cublasCreate_v2(&h));
    BLAS(cublasLtCreate(&lh));
    float *A = dev(fa, sizeof fa), *B = dev(fb, sizeof fb), *C = dev(fc, sizeof fc), *D = dev(NULL, sizeof fc);
    double *DA = dev(da, sizeof da), *DB = dev(db, sizeof db), *DC = dev(dc, sizeof dc), *DZ = dev(dc, 2 * sizeof dc[0]);
    float *BC2 = dev(fc, sizeof fc);
    const float *pa[2] = { A, A }, *pb[2] = { B, B + 3 };
    float *pc[2] = { BC2, BC2 + 2 };
    void *PA = dev(pa, sizeof pa), *PB = dev(pb, sizeof pb), *PC = dev(pc, sizeof pc);
    /* the workspace 256-byte aligned, as cuBLAS wants it and the real driver's allocations are (the fake driver's
       are the heap's): PyTorch's caching allocator hands out such a block inside a larger one */
    void *ws_block = dev(NULL, (1 << 16) + 256);
    void *ws = (void *)(((uintptr_t)ws_block + 255) & ~(uintptr_t)255);
    for (int it = 0; it < n; it++) {
        cublasMath_t math = CUBLAS_DEFAULT_MATH;
        cudaStream_t got = NULL;
        float alpha = 1.0f + (float)it, beta = 0.5f;
        BLAS(cublasSetStream_v2(h, st));
        BLAS(cublasSetWorkspace_v2(h, ws, 1 << 16));
        BLAS(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
        BLAS(cublasGetMathMode(h, &math));
        BLAS(cublasGetStream_v2(h, &got));
        CHECK(math == CUBLAS_TF32_TENSOR_OP_MATH && got == st, "iteration %d: math mode %d, stream %s", it, (int)math,
              got == st ? "the one set" : "another");
        BLAS(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, A, 2, B, 3, &beta, C, 2));
        BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, A, CUDA_R_32F, 2, B, CUDA_R_32F, 3, &beta, C,
                          CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        double dalpha = 0.5 + it, dbeta = -0.25;
        BLAS(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &dalpha, DA, 2, DB, 3, &dbeta, DC, 2));
        /* ZGEMM: a 16-byte scalar by its pointee, B conjugated (A: 1x2, B: 1x2 read as its conjugate transpose) */
        cuDoubleComplex zalpha = { 0.5, (double)it }, zbeta = { -0.25, 0.125 };
        BLAS(cublasZgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_C, 1, 1, 2, &zalpha, (const cuDoubleComplex *)DA, 1,
                            (const cuDoubleComplex *)DB, 1, &zbeta, (cuDoubleComplex *)DZ, 1));
        /* SGEMM by device arrays of matrix pointers: batch 2, the second C the first's next column */
        BLAS(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 3, &alpha, (const float *const *)PA, 2,
                                (const float *const *)PB, 3, &beta, (float *const *)PC, 2, 2));

        cublasLtMatmulDesc_t desc = NULL;
        cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
        cublasLtMatmulPreference_t pref = NULL;
        cublasLtMatmulHeuristicResult_t res;
        int returned = 0;
        int32_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N, one = 1;
        uint64_t max_ws = 1 << 16;
        BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 2, 3, 2));
        BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 3, 2, 3));
        BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 2, 2, 2));
        BLAS(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &one, sizeof one));
        BLAS(cublasLtMatmulPreferenceCreate(&pref));
        BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                                  sizeof max_ws));
        BLAS(cublasLtMatmulAlgoGetHeuristic(lh, desc, la, lb, lc, lc, pref, 1, &res, &returned));
        float la_alpha = 2, la_beta = -1.0f * (float)it;
        BLAS(cublasLtMatmul(lh, desc, &la_alpha, A, la, B, lb, &la_beta, C, lc, D, lc, &res.algo, ws, 1 << 16, st));
        if (it == n - 1) {   /* what the library refuses stays its answer */
            int32_t bad = 1;
            int64_t wide = 1;
            printf("sgemm with lda below m: status %d\n",
                   (int)cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, A, 1, B, 3, &beta, C, 2));
            printf("sgemm with a negative k: status %d\n",
                   (int)cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, -3, &alpha, A, 2, B, 3, &beta, C, 2));
            printf("lt set unknown attribute: status %d\n",
                   (int)cublasLtMatmulDescSetAttribute(desc, (cublasLtMatmulDescAttributes_t)9999, &bad, sizeof bad));
            printf("lt set attribute of another size: status %d\n",
                   (int)cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &wide, sizeof wide));
            printf("lt set layout attribute of another size: status %d\n",
                   (int)cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &wide, sizeof wide));
        }
        BLAS(cublasLtMatmulPreferenceDestroy(pref));
        BLAS(cublasLtMatrixLayoutDestroy(la));
        BLAS(cublasLtMatrixLayoutDestroy(lb));
        BLAS(cublasLtMatrixLayoutDestroy(lc));
        BLAS(cublasLtMatmulDescDestroy(desc));
    }
    show_f("torch-like sgemm", C, 4);
    show_f("torch-like lt matmul", D, 4);
    show_d("torch-like dgemm", DC, 4);
    show_d("torch-like zgemm", DZ, 2);
    show_f("torch-like sgemm batched", BC2, 4);
    BLAS(cublasLtDestroy(lh));
    BLAS(cublasDestroy_v2(h));
    void *ptrs[] = { A, B, C, D, DA, DB, DC, DZ, BC2, PA, PB, PC, ws_block };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        CHECK(cudaFree(ptrs[i]) == cudaSuccess, "cudaFree");
    CHECK(cudaStreamDestroy(st) == cudaSuccess, "cudaStreamDestroy");
}

/* A batched setter the server's library refuses: its status comes back from the next synchronous cuBLAS call,
   never from a driver or runtime call. */
static void async_err(void)
{
    cublasLtMatmulDesc_t desc = NULL;
    uint32_t epi = 1;   /* CUBLASLT_EPILOGUE_DEFAULT: the fake keeps no epilogue and refuses it */
    int32_t scale = 0;
    size_t written = 0;
    void *p = NULL;
    BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasStatus_t set = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    cudaError_t drv = cudaMalloc(&p, 256);
    cublasStatus_t next = cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale,
                                                         &written);
    cublasStatus_t after = cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale,
                                                          &written);
    printf("async error: set %d, cudaMalloc %d, next cuBLAS call %d, the one after %d\n", (int)set, (int)drv,
           (int)next, (int)after);
    CHECK(cudaFree(p) == cudaSuccess, "cudaFree");
    BLAS(cublasLtMatmulDescDestroy(desc));
}

/* cublasLtMatmulAlgoGetHeuristic asked 9 times, each answer printed (the fake's algorithm carries the preference's
   workspace bound in data[7]): the remoting's client answers a question it was answered before - same thread,
   same current device, same handle and count, same content of the descriptor, layouts and preference, whatever
   their numbers - and asks the server otherwise (run_remote_cublas.sh counts the server's). */
static void heur_ask(const char *what, cublasLtHandle_t lh, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t l,
                     cublasLtMatmulPreference_t p)
{
    cublasLtMatmulHeuristicResult_t res[2];
    int returned = 0;
    memset(res, 0, sizeof res);
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lh, d, l, l, l, l, p, 2, res, &returned);
    printf("heuristic %s: status %d, %d returned, max_ws %llu, workspace %zu\n", what, (int)st, returned,
           (unsigned long long)res[0].algo.data[7], res[0].workspaceSize);
}

typedef struct heur_thread_arg {
    cublasLtHandle_t lh;
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t l;
    cublasLtMatmulPreference_t p;
} heur_thread_arg;

static void *heur_thread(void *arg)
{
    heur_thread_arg *a = arg;
    heur_ask("H8 on another thread", a->lh, a->d, a->l, a->p);
    return NULL;
}

static void heur_cache(void)
{
    cublasLtHandle_t lh = NULL;
    cublasLtMatmulDesc_t d = NULL, d2 = NULL;
    cublasLtMatrixLayout_t l = NULL;
    cublasLtMatmulPreference_t p = NULL;
    uint64_t ws = 1 << 16, small = 1 << 15;
    int32_t ta = CUBLAS_OP_N;
    BLAS(cublasLtCreate(&lh));
    BLAS(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    BLAS(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    BLAS(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 2, 2, 2));
    BLAS(cublasLtMatmulPreferenceCreate(&p));
    BLAS(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    heur_ask("H1", lh, d, l, p);                                   /* asked */
    heur_ask("H2 the same", lh, d, l, p);                          /* answered in the client */
    BLAS(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &small, sizeof small));
    heur_ask("H3 another workspace bound", lh, d, l, p);           /* asked */
    BLAS(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    heur_ask("H4 the bound set back", lh, d, l, p);                /* H1's content: answered in the client */
    CHECK(cudaSetDevice(1) == cudaSuccess, "cudaSetDevice(1)");
    heur_ask("H5 on device 1", lh, d, l, p);                       /* asked */
    CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice(0)");
    heur_ask("H6 on device 0 again", lh, d, l, p);                 /* asked: the device may have changed */
    heur_ask("H7 the same", lh, d, l, p);                          /* answered in the client */
    pthread_t t;
    heur_thread_arg arg = { lh, d, l, p };
    CHECK(pthread_create(&t, NULL, heur_thread, &arg) == 0 && pthread_join(t, NULL) == 0, "thread");  /* asked */
    BLAS(cublasLtMatmulDescCreate(&d2, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    BLAS(cublasLtMatmulDescSetAttribute(d2, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    heur_ask("H9 a new descriptor of the same content", lh, d2, l, p);   /* answered in the client */
    BLAS(cublasLtMatmulDescDestroy(d2));
    BLAS(cublasLtMatmulPreferenceDestroy(p));
    BLAS(cublasLtMatrixLayoutDestroy(l));
    BLAS(cublasLtMatmulDescDestroy(d));
    BLAS(cublasLtDestroy(lh));
}

/* PyTorch's cuBLASLt handle: its cuBLAS handle cast (cuBLAS's documentation allows a cublasHandle_t in place of a
   cublasLtHandle_t). E2E_LOOP matmuls on it as PyTorch makes them (descriptor, layouts, preference, the heuristic,
   the matmul, all destroyed), D printed; then cublasLtDestroy of the cast handle (refused:
   CUBLAS_STATUS_NOT_INITIALIZED, the cuBLAS handle's context is not a cuBLASLt handle's to end) and the cuBLAS handle
   used after it. */
static void cast_handle(int n)
{
    cublasHandle_t h = NULL;
    cudaStream_t st = NULL;
    int version = 0;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "cudaStreamCreate");
    BLAS(cublasCreate_v2(&h));
    BLAS(cublasSetStream_v2(h, st));
    cublasLtHandle_t lh = (cublasLtHandle_t)(void *)h;
    float *A = dev(fa, sizeof fa), *B = dev(fb, sizeof fb), *C = dev(fc, sizeof fc), *D = dev(NULL, sizeof fc);
    void *ws = dev(NULL, 1 << 16);
    for (int it = 0; it < n; it++) {
        cublasLtMatmulDesc_t desc = NULL;
        cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
        cublasLtMatmulPreference_t pref = NULL;
        cublasLtMatmulHeuristicResult_t res;
        int returned = 0;
        int32_t ta = CUBLAS_OP_N;
        uint64_t max_ws = 1 << 16;
        float alpha = 1.0f + (float)it, beta = 0.5f;
        memset(&res, 0, sizeof res);
        BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 2, 3, 2));
        BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 3, 2, 3));
        BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 2, 2, 2));
        BLAS(cublasLtMatmulPreferenceCreate(&pref));
        BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                                  sizeof max_ws));
        BLAS(cublasLtMatmulAlgoGetHeuristic(lh, desc, la, lb, lc, lc, pref, 1, &res, &returned));
        CHECK(returned == 1, "iteration %d: %d algorithms returned", it, returned);
        BLAS(cublasLtMatmul(lh, desc, &alpha, A, la, B, lb, &beta, C, lc, D, lc, &res.algo, ws, 1 << 16, st));
        BLAS(cublasLtMatmulPreferenceDestroy(pref));
        BLAS(cublasLtMatrixLayoutDestroy(la));
        BLAS(cublasLtMatrixLayoutDestroy(lb));
        BLAS(cublasLtMatrixLayoutDestroy(lc));
        BLAS(cublasLtMatmulDescDestroy(desc));
    }
    show_f("cast handle lt matmul", D, 4);
    printf("cublasLtDestroy of the cast handle: status %d\n", (int)cublasLtDestroy(lh));
    printf("the cuBLAS handle after it: status %d\n", (int)cublasGetVersion_v2(h, &version));
    float alpha = 1, beta = 0;
    BLAS(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, A, 2, B, 3, &beta, C, 2));
    show_f("cast handle sgemm after", C, 4);
    BLAS(cublasDestroy_v2(h));
    void *ptrs[] = { A, B, C, D, ws };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        CHECK(cudaFree(ptrs[i]) == cudaSuccess, "cudaFree");
    CHECK(cudaStreamDestroy(st) == cudaSuccess, "cudaStreamDestroy");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (getenv("E2E_CAST") && strcmp(getenv("E2E_CAST"), "1") == 0) {
        cast_handle(getenv("E2E_LOOP") ? atoi(getenv("E2E_LOOP")) : 4);
        printf("%s\n", failures ? "FAILED" : "done");
        return failures != 0;
    }
    if (getenv("E2E_HEUR") && strcmp(getenv("E2E_HEUR"), "1") == 0) {
        heur_cache();
        printf("%s\n", failures ? "FAILED" : "done");
        return failures != 0;
    }
    if (getenv("E2E_ASYNC_ERR") && strcmp(getenv("E2E_ASYNC_ERR"), "1") == 0) {
        async_err();
        printf("%s\n", failures ? "FAILED" : "done");
        return failures != 0;
    }
    blas();
    lt();
    torch_like(getenv("E2E_LOOP") ? atoi(getenv("E2E_LOOP")) : 4);
    if (getenv("E2E_NO_DRIVER") && strcmp(getenv("E2E_NO_DRIVER"), "1") == 0)
        CHECK(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL, "a libcuda.so.1 is loaded in the client");
    printf("%s\n", failures ? "FAILED" : "done");
    return failures != 0;
}
