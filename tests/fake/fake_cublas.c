/*
 * fake_cublas.c - a small fake cuBLAS (libcublas.so.13) and, built with
 * FAKE_CUBLASLT, cuBLASLt (libcublasLt.so.13) for the CPU tests: handles with
 * their stream, workspace, math and pointer modes; SGEMM, DGEMM, CGEMM and
 * ZGEMM (and strided batched), GemmEx and GemmStridedBatchedEx in float or double by the compute
 * type; cuBLASLt's descriptors, layouts, preferences, their attributes, a
 * heuristic and a float/double matmul. Matrices live in the fake driver's
 * device memory, which is this process's heap: the routines compute on it.
 * As the real cuBLAS, cublasSetStream_v2 resets the handle's workspace to the
 * library's own. Every call that changes a handle's state (a setter of another
 * value, a stream set, every cuBLASLt attribute setter and destroy, with its
 * status) is logged too, in order, so a test sees that none was lost.
 * Counts in FAKE_CUBLAS_COUNTS / FAKE_CUBLASLT_COUNTS; each computing call
 * appends what it received (pointer mode, scalar values, shapes, whether a
 * stream and workspace were set) to FAKE_CUBLAS_LOG / FAKE_CUBLASLT_LOG, so a
 * test can compare what the library saw through the remoting with a local
 * run. Every other export is absent.
 * A cuBLAS handle holds a cuBLASLt context, first (struct cublasContext's
 * 'lt'): cuBLAS's documentation allows a cublasHandle_t cast to a
 * cublasLtHandle_t, and PyTorch takes its cuBLASLt handle so; the fake
 * cuBLASLt takes any handle whose context carries FL_LT_MAGIC, and logs
 * whether it was its own or a cuBLAS handle's.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FL_LT_MAGIC 0x17   /* a cuBLASLt context: the library's own, or the one each cuBLAS handle holds */
#define FL_LT_OWN 0x1       /* the library's own context's 'own' */

/* One line appended to the file $ENVVAR names (no file: nothing). */
static void fl_log(const char *envvar, const char *fmt, ...)
{
    const char *path = getenv(envvar);
    FILE *f = path != NULL && *path != '\0' ? fopen(path, "a") : NULL;
    va_list ap;
    if (f == NULL)
        return;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

/* A column-major GEMM on doubles read from float or double matrices: D = alpha*op(A)*op(B) + beta*C. */
static double fl_get(const void *p, int dbl, int64_t i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void fl_gemm(int ta, int tb, int m, int n, int k, double alpha, const void *A, int64_t lda, const void *B,
                    int64_t ldb, double beta, const void *C, int64_t ldc, void *D, int64_t ldd, int dbl)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += fl_get(A, dbl, ta ? l + (int64_t)i * lda : i + (int64_t)l * lda) *
                     fl_get(B, dbl, tb ? j + (int64_t)l * ldb : l + (int64_t)j * ldb);
            double v = alpha * s + (beta != 0 ? beta * fl_get(C, dbl, i + (int64_t)j * ldc) : 0);
            if (dbl)
                ((double *)D)[i + (int64_t)j * ldd] = v;
            else
                ((float *)D)[i + (int64_t)j * ldd] = (float)v;
        }
}

#ifdef FAKE_CUBLASLT
#include <cublasLt.h>

#include "fake_libcount.h"

static const char *const fl_names[] = {"cublasLtCreate", "cublasLtDestroy", "cublasLtGetVersion",
                                       "cublasLtMatmulDescCreate", "cublasLtMatmulDescDestroy",
                                       "cublasLtMatmulDescSetAttribute", "cublasLtMatmulDescGetAttribute",
                                       "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutDestroy",
                                       "cublasLtMatrixLayoutSetAttribute", "cublasLtMatmulPreferenceCreate",
                                       "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute",
                                       "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul"};
FL_COUNTING("FAKE_CUBLASLT_COUNTS", fake_cublaslt_count)

#define FL_ALGO 0x5eed0a1ull   /* the heuristic's algorithm: cublasLtMatmul checks it came back whole */

struct cublasLtContext {   /* the layout of fake cuBLAS's handle's 'lt' too */
    int magic;
    int own;
};
static struct cublasLtContext fl_lt = {FL_LT_MAGIC, FL_LT_OWN};

/* A cuBLASLt handle: the library's own, or a cuBLAS handle's (cast). */
static int fl_lt_ok(cublasLtHandle_t h)
{
    return h != NULL && h->magic == FL_LT_MAGIC;
}
static const char *fl_lt_which(cublasLtHandle_t h)
{
    return h->own == FL_LT_OWN ? "lt" : "cublas";
}

/* What the header's opaque descriptors hold here (the handles point to these) */
typedef struct fl_desc {
    int magic;
    int32_t compute, scale, pmode, transa, transb;
} fl_desc;
typedef struct fl_layout {
    int magic;
    int32_t type, batch;
    uint64_t rows, cols;
    int64_t ld;
} fl_layout;
typedef struct fl_pref {
    int magic;
    uint64_t max_ws;
} fl_pref;
#define FL_D(x) ((fl_desc *)(void *)(x))
#define FL_L(x) ((fl_layout *)(void *)(x))
#define FL_P(x) ((fl_pref *)(void *)(x))

/* Destroys a descriptor, a layout or a preference (each begins with its 'magic'): CUBLAS_STATUS_INVALID_VALUE for
   NULL or one of another kind. */
static cublasStatus_t fl_lt_destroy(const char *api, void *obj, int magic)
{
    int *m = obj;
    int ok = m != NULL && *m == magic;
    fl_log("FAKE_CUBLASLT_LOG", "%s %s", api, ok ? "ok" : "invalid");
    if (!ok)
        return CUBLAS_STATUS_INVALID_VALUE;
    *m = 0;
    free(obj);
    return CUBLAS_STATUS_SUCCESS;
}

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
    /* a cuBLAS handle's context is its cuBLAS handle's to end (what the real library does with one is not
       documented): refused */
    return h == &fl_lt ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
FL_EXPORT size_t cublasLtGetVersion(void)
{
    FK_COUNT(2);
    return CUBLAS_VERSION;
}

FL_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                                  cudaDataType_t scale)
{
    FK_COUNT(3);
    fl_desc *n = d != NULL ? calloc(1, sizeof *n) : NULL;
    if (n == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    n->magic = 0x1d;
    n->compute = (int32_t)compute;
    n->scale = (int32_t)scale;
    *d = (cublasLtMatmulDesc_t)(void *)n;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t dh)
{
    FK_COUNT(4);
    return fl_lt_destroy("cublasLtMatmulDescDestroy", dh, 0x1d);
}
static int32_t *fl_desc_field(fl_desc *d, cublasLtMatmulDescAttributes_t a)
{
    switch (a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return &d->compute;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return &d->scale;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return &d->pmode;
    case CUBLASLT_MATMUL_DESC_TRANSA: return &d->transa;
    case CUBLASLT_MATMUL_DESC_TRANSB: return &d->transb;
    default: return NULL;
    }
}
FL_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t dh, cublasLtMatmulDescAttributes_t a,
                                                        const void *buf, size_t size)
{
    fl_desc *d = FL_D(dh);
    FK_COUNT(5);
    int32_t *f = d != NULL && d->magic == 0x1d ? fl_desc_field(d, a) : NULL;
    int ok = f != NULL && buf != NULL && size == sizeof *f;
    fl_log("FAKE_CUBLASLT_LOG", "cublasLtMatmulDescSetAttribute attr=%d size=%zu value=%d %s", (int)a, size,
           ok ? *(const int32_t *)buf : 0, ok ? "ok" : "invalid");
    if (!ok)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(f, buf, sizeof *f);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t dh, cublasLtMatmulDescAttributes_t a,
                                                        void *buf, size_t size, size_t *written)
{
    fl_desc *d = FL_D(dh);
    FK_COUNT(6);
    int32_t *f = d != NULL && d->magic == 0x1d ? fl_desc_field(d, a) : NULL;
    if (f == NULL || written == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *written = sizeof *f;   /* asked with no buffer: the size it needs */
    if (buf == NULL && size == 0)
        return CUBLAS_STATUS_SUCCESS;
    if (buf == NULL || size < sizeof *f)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, f, sizeof *f);
    return CUBLAS_STATUS_SUCCESS;
}

FL_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
                                                    uint64_t cols, int64_t ld)
{
    FK_COUNT(7);
    fl_layout *n = l != NULL ? calloc(1, sizeof *n) : NULL;
    if (n == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *n = (fl_layout){ .magic = 0x1a, .type = (int32_t)type, .batch = 1, .rows = rows, .cols = cols, .ld = ld };
    *l = (cublasLtMatrixLayout_t)(void *)n;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t lh)
{
    FK_COUNT(8);
    return fl_lt_destroy("cublasLtMatrixLayoutDestroy", lh, 0x1a);
}
FL_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t lh, cublasLtMatrixLayoutAttribute_t a,
                                                          const void *buf, size_t size)
{
    fl_layout *l = FL_L(lh);
    FK_COUNT(9);
    int ok = l != NULL && l->magic == 0x1a && buf != NULL && a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
             size == sizeof l->batch;
    fl_log("FAKE_CUBLASLT_LOG", "cublasLtMatrixLayoutSetAttribute attr=%d size=%zu value=%d %s", (int)a, size,
           ok ? *(const int32_t *)buf : 0, ok ? "ok" : "invalid");
    if (!ok)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&l->batch, buf, sizeof l->batch);
    return CUBLAS_STATUS_SUCCESS;
}

FL_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    FK_COUNT(10);
    fl_pref *n = p != NULL ? calloc(1, sizeof *n) : NULL;
    if (n == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    n->magic = 0x1b;
    *p = (cublasLtMatmulPreference_t)(void *)n;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t ph)
{
    FK_COUNT(11);
    return fl_lt_destroy("cublasLtMatmulPreferenceDestroy", ph, 0x1b);
}
FL_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t ph,
                                                              cublasLtMatmulPreferenceAttributes_t a, const void *buf,
                                                              size_t size)
{
    fl_pref *p = FL_P(ph);
    FK_COUNT(12);
    int ok = p != NULL && p->magic == 0x1b && buf != NULL && a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES &&
             size == sizeof p->max_ws;
    fl_log("FAKE_CUBLASLT_LOG", "cublasLtMatmulPreferenceSetAttribute attr=%d size=%zu value=%llu %s", (int)a, size,
           ok ? (unsigned long long)*(const uint64_t *)buf : 0ull, ok ? "ok" : "invalid");
    if (!ok)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&p->max_ws, buf, sizeof p->max_ws);
    return CUBLAS_STATUS_SUCCESS;
}

/* One algorithm for float or double layouts that agree, whatever is asked. */
FL_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t dh,
                                                        cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                        cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                                        cublasLtMatmulPreference_t ph, int requested,
                                                        cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    fl_desc *d = FL_D(dh);
    fl_pref *p = FL_P(ph);
    FK_COUNT(13);
    if (!fl_lt_ok(h) || d == NULL || d->magic != 0x1d || a == NULL || b == NULL || c == NULL || dd == NULL ||
        p == NULL || p->magic != 0x1b || requested < 1 || results == NULL || returned == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(&results[0], 0, sizeof results[0]);
    results[0].algo.data[0] = FL_ALGO;
    results[0].algo.data[7] = p->max_ws;
    results[0].workspaceSize = 0;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    fl_log("FAKE_CUBLASLT_LOG", "cublasLtMatmulAlgoGetHeuristic handle=%s requested=%d max_ws=%llu", fl_lt_which(h),
           requested, (unsigned long long)p->max_ws);
    return CUBLAS_STATUS_SUCCESS;
}

/* D = alpha*op(A)*op(B) + beta*C in float or double (the layouts' type), the scalars of the scale type read from
   host or device memory by the pointer mode (this fake's device memory is its heap: both are read alike). */
FL_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t dh, const void *alpha,
                                        const void *A, cublasLtMatrixLayout_t alh, const void *B,
                                        cublasLtMatrixLayout_t blh, const void *beta, const void *C,
                                        cublasLtMatrixLayout_t clh, void *D, cublasLtMatrixLayout_t dlh,
                                        const cublasLtMatmulAlgo_t *algo, void *ws, size_t wssize, cudaStream_t stream)
{
    fl_desc *d = FL_D(dh);
    fl_layout *al = FL_L(alh), *bl = FL_L(blh), *cl = FL_L(clh), *dl = FL_L(dlh);
    FK_COUNT(14);
    if (!fl_lt_ok(h) || d == NULL || d->magic != 0x1d || al == NULL || bl == NULL || cl == NULL || dl == NULL ||
        alpha == NULL || beta == NULL || A == NULL || B == NULL || C == NULL || D == NULL ||
        (algo != NULL && algo->data[0] != FL_ALGO))
        return CUBLAS_STATUS_INVALID_VALUE;
    int dbl = al->type == CUDA_R_64F;
    if ((al->type != CUDA_R_32F && !dbl) || bl->type != al->type || cl->type != al->type || dl->type != al->type ||
        (d->scale != CUDA_R_32F && d->scale != CUDA_R_64F))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    double a = d->scale == CUDA_R_64F ? *(const double *)alpha : *(const float *)alpha;
    double b = d->scale == CUDA_R_64F ? *(const double *)beta : *(const float *)beta;
    int m = (int)dl->rows, n = (int)dl->cols, k = (int)(d->transa ? al->rows : al->cols);
    fl_gemm(d->transa != 0, d->transb != 0, m, n, k, a, A, al->ld, B, bl->ld, b, C, cl->ld, D, dl->ld, dbl);
    fl_log("FAKE_CUBLASLT_LOG", "cublasLtMatmul pointer_mode=%d scale=%d alpha=%g beta=%g m=%d n=%d k=%d algo=%s "
           "ws=%zu stream=%s handle=%s", d->pmode, d->scale, a, b, m, n, k, algo ? "given" : "none", ws ? wssize : 0,
           stream ? "set" : "default", fl_lt_which(h));
    return CUBLAS_STATUS_SUCCESS;
}
#else
#ifndef CUBLASAPI   /* CUDA 12's cublas_api.h wants it (cublas_v2.h defines it empty for host code) */
#define CUBLASAPI
#endif
#include <cublas_api.h>

#include "fake_libcount.h"

static const char *const fl_names[] = {"cublasCreate_v2", "cublasDestroy_v2", "cublasGetVersion_v2",
                                       "cublasSgemm_v2", "cublasSetStream_v2", "cublasGetStream_v2",
                                       "cublasSetWorkspace_v2", "cublasSetMathMode", "cublasGetMathMode",
                                       "cublasSetPointerMode_v2", "cublasGetPointerMode_v2",
                                       "cublasSgemmStridedBatched", "cublasGemmEx", "cublasGemmStridedBatchedEx",
                                       "cublasDgemm_v2", "cublasDgemmStridedBatched",
                                       "cublasCgemm_v2", "cublasCgemmStridedBatched", "cublasZgemm_v2",
                                       "cublasZgemmStridedBatched", "cublasSgemmBatched", "cublasDgemmBatched"};
FL_COUNTING("FAKE_CUBLAS_COUNTS", fake_cublas_count)

struct cublasContext {
    struct {   /* the cuBLASLt context it holds, first: what a cast to cublasLtHandle_t points to */
        int magic, own;
    } lt;
    int magic;
    cudaStream_t stream;
    void *ws;
    size_t ws_size;
    cublasMath_t math;
    cublasPointerMode_t pmode;
};

static int fl_ok(cublasHandle_t h)
{
    return h != NULL && h->magic == 0x42;
}

/* A getter of one of the handle's settings: CUBLAS_STATUS_INVALID_VALUE for a bad handle or a NULL 'out'. */
#define FL_GETTER(api, id, type, field)                                                                              \
    FL_EXPORT cublasStatus_t api(cublasHandle_t h, type *out)                                                        \
    {                                                                                                                \
        FK_COUNT(id);                                                                                                \
        if (!fl_ok(h) || out == NULL)                                                                                \
            return CUBLAS_STATUS_INVALID_VALUE;                                                                      \
        *out = h->field;                                                                                             \
        return CUBLAS_STATUS_SUCCESS;                                                                                \
    }

FL_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    FK_COUNT(0);
    if (h == NULL || (*h = calloc(1, sizeof **h)) == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    (*h)->magic = 0x42;
    (*h)->lt.magic = FL_LT_MAGIC;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    FK_COUNT(1);
    if (!fl_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    fl_log("FAKE_CUBLAS_LOG", "cublasDestroy_v2");
    h->magic = 0;
    h->lt.magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *version)
{
    FK_COUNT(2);
    if (!fl_ok(h) || version == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    FK_COUNT(4);
    if (!fl_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (h->stream != s || h->ws != NULL)
        fl_log("FAKE_CUBLAS_LOG", "cublasSetStream_v2 stream=%s%s", s ? "set" : "default",
               h->ws != NULL ? ", workspace reset" : "");
    h->stream = s;
    h->ws = NULL;   /* the real library's too: "unconditionally resets the workspace to the default pool" */
    h->ws_size = 0;
    return CUBLAS_STATUS_SUCCESS;
}
FL_GETTER(cublasGetStream_v2, 5, cudaStream_t, stream)
FL_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t size)
{
    FK_COUNT(6);
    if (!fl_ok(h) || (ws == NULL) != (size == 0))
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(ws, 0, size);   /* device memory of the fake driver: this process's heap, writable */
    if (h->ws != ws || h->ws_size != size)
        fl_log("FAKE_CUBLAS_LOG", "cublasSetWorkspace_v2 size=%zu", size);
    h->ws = ws;
    h->ws_size = size;
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    FK_COUNT(7);
    if (!fl_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (h->math != mode)
        fl_log("FAKE_CUBLAS_LOG", "cublasSetMathMode %d", (int)mode);
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}
FL_GETTER(cublasGetMathMode, 8, cublasMath_t, math)
FL_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode)
{
    FK_COUNT(9);
    if (!fl_ok(h) || (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (h->pmode != mode)
        fl_log("FAKE_CUBLAS_LOG", "cublasSetPointerMode_v2 %d", (int)mode);
    h->pmode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
FL_GETTER(cublasGetPointerMode_v2, 10, cublasPointerMode_t, pmode)

static void fl_note(const char *api, cublasHandle_t h, double alpha, double beta, int m, int n, int k, int batch)
{
    fl_log("FAKE_CUBLAS_LOG", "%s pointer_mode=%d alpha=%g beta=%g m=%d n=%d k=%d batch=%d stream=%s ws=%zu math=%d",
           api, (int)h->pmode, alpha, beta, m, n, k, batch, h->stream ? "set" : "default", h->ws_size, (int)h->math);
}

/* cuBLAS's checks before a GEMM runs (the reference BLAS's): the operations (CUBLAS_OP_C is CUBLAS_OP_T for real
   matrices), m, n, k not negative, each leading dimension at least the rows it holds, the scalars and matrices
   given. */
static int fl_args(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                   const void *alpha, const void *A, int lda, const void *B, int ldb, const void *beta, const void *C,
                   int ldc)
{
    int arows = ta == CUBLAS_OP_N ? m : k, brows = tb == CUBLAS_OP_N ? k : n;
    return fl_ok(h) && (ta == CUBLAS_OP_N || ta == CUBLAS_OP_T || ta == CUBLAS_OP_C) &&
           (tb == CUBLAS_OP_N || tb == CUBLAS_OP_T || tb == CUBLAS_OP_C) && m >= 0 && n >= 0 && k >= 0 &&
           lda >= (arows > 1 ? arows : 1) && ldb >= (brows > 1 ? brows : 1) && ldc >= (m > 1 ? m : 1) &&
           alpha != NULL && beta != NULL && A != NULL && B != NULL && C != NULL;
}

/* Column-major C = alpha*op(A)*op(B) + beta*C (the scalars read alike in both pointer modes: this fake's
   device memory is its heap). */
static cublasStatus_t fl_sgemm(const char *api, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                               int n, int k, const float *alpha, const float *A, int lda, long long sa, const float *B,
                               int ldb, long long sb, const float *beta, float *C, int ldc, long long sc, int batch)
{
    if (!fl_args(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++)
        fl_gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta,
                C + i * sc, ldc, C + i * sc, ldc, 0);
    fl_note(api, h, *alpha, *beta, m, n, k, batch);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                        int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                        const float *beta, float *C, int ldc)
{
    FK_COUNT(3);
    return fl_sgemm("cublasSgemm_v2", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
FL_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                   int n, int k, const float *alpha, const float *A, int lda,
                                                   long long sa, const float *B, int ldb, long long sb,
                                                   const float *beta, float *C, int ldc, long long sc, int batch)
{
    FK_COUNT(11);
    return fl_sgemm("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                    batch);
}

/* DGEMM (and strided batched): the same in double. */
static cublasStatus_t fl_dgemm(const char *api, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                               int n, int k, const double *alpha, const double *A, int lda, long long sa,
                               const double *B, int ldb, long long sb, const double *beta, double *C, int ldc,
                               long long sc, int batch)
{
    if (!fl_args(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++)
        fl_gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta,
                C + i * sc, ldc, C + i * sc, ldc, 1);
    fl_note(api, h, *alpha, *beta, m, n, k, batch);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                        int k, const double *alpha, const double *A, int lda, const double *B, int ldb,
                                        const double *beta, double *C, int ldc)
{
    FK_COUNT(14);
    return fl_dgemm("cublasDgemm_v2", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
FL_EXPORT cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                   int n, int k, const double *alpha, const double *A, int lda,
                                                   long long sa, const double *B, int ldb, long long sb,
                                                   const double *beta, double *C, int ldc, long long sc, int batch)
{
    FK_COUNT(15);
    return fl_dgemm("cublasDgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                    batch);
}

/* CGEMM and ZGEMM (and strided batched): complex matrices of float or double pairs, CUBLAS_OP_C conjugating. */
static cublasStatus_t fl_zgemm(const char *api, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                               int n, int k, const void *alpha, const void *A, int lda, long long sa, const void *B,
                               int ldb, long long sb, const void *beta, void *C, int ldc, long long sc, int batch,
                               int dbl)
{
    if (!fl_args(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    double ar = fl_get(alpha, dbl, 0), ai = fl_get(alpha, dbl, 1), br = fl_get(beta, dbl, 0), bi = fl_get(beta, dbl, 1);
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double sr = 0, si = 0;
                for (int l = 0; l < k; l++) {
                    int64_t ia = 2 * (b * sa + (ta != CUBLAS_OP_N ? l + (int64_t)i * lda : i + (int64_t)l * lda));
                    int64_t ib = 2 * (b * sb + (tb != CUBLAS_OP_N ? j + (int64_t)l * ldb : l + (int64_t)j * ldb));
                    double xr = fl_get(A, dbl, ia), xi = fl_get(A, dbl, ia + 1) * (ta == CUBLAS_OP_C ? -1 : 1);
                    double yr = fl_get(B, dbl, ib), yi = fl_get(B, dbl, ib + 1) * (tb == CUBLAS_OP_C ? -1 : 1);
                    sr += xr * yr - xi * yi;
                    si += xr * yi + xi * yr;
                }
                int64_t ic = 2 * (b * sc + i + (int64_t)j * ldc);
                double cr = fl_get(C, dbl, ic), ci = fl_get(C, dbl, ic + 1);
                double dr = ar * sr - ai * si + br * cr - bi * ci, di = ar * si + ai * sr + br * ci + bi * cr;
                if (dbl)
                    ((double *)C)[ic] = dr, ((double *)C)[ic + 1] = di;
                else
                    ((float *)C)[ic] = (float)dr, ((float *)C)[ic + 1] = (float)di;
            }
    fl_note(api, h, ar, br, m, n, k, batch);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasCgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                        int k, const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B,
                                        int ldb, const cuComplex *beta, cuComplex *C, int ldc)
{
    FK_COUNT(16);
    return fl_zgemm("cublasCgemm_v2", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, 0);
}
FL_EXPORT cublasStatus_t cublasCgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                   int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
                                                   long long sa, const cuComplex *B, int ldb, long long sb,
                                                   const cuComplex *beta, cuComplex *C, int ldc, long long sc,
                                                   int batch)
{
    FK_COUNT(17);
    return fl_zgemm("cublasCgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                    batch, 0);
}
FL_EXPORT cublasStatus_t cublasZgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                        int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
                                        const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta,
                                        cuDoubleComplex *C, int ldc)
{
    FK_COUNT(18);
    return fl_zgemm("cublasZgemm_v2", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, 1);
}
FL_EXPORT cublasStatus_t cublasZgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                   int n, int k, const cuDoubleComplex *alpha,
                                                   const cuDoubleComplex *A, int lda, long long sa,
                                                   const cuDoubleComplex *B, int ldb, long long sb,
                                                   const cuDoubleComplex *beta, cuDoubleComplex *C, int ldc,
                                                   long long sc, int batch)
{
    FK_COUNT(19);
    return fl_zgemm("cublasZgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                    batch, 1);
}

/* SGEMM and DGEMM batched by arrays of matrix pointers (in device memory: this fake's heap). */
static cublasStatus_t fl_gemm_b(const char *api, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                int n, int k, const void *alpha, const void *const *A, int lda, const void *const *B,
                                int ldb, const void *beta, void *const *C, int ldc, int batch, int dbl)
{
    if (!fl_args(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    double al = fl_get(alpha, dbl, 0), be = fl_get(beta, dbl, 0);
    for (int i = 0; i < batch; i++)
        fl_gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, al, A[i], lda, B[i], ldb, be, C[i], ldc, C[i], ldc, dbl);
    fl_note(api, h, al, be, m, n, k, batch);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                            int k, const float *alpha, const float *const A[], int lda,
                                            const float *const B[], int ldb, const float *beta, float *const C[],
                                            int ldc, int batch)
{
    FK_COUNT(20);
    return fl_gemm_b("cublasSgemmBatched", h, ta, tb, m, n, k, alpha, (const void *const *)A, lda,
                     (const void *const *)B, ldb, beta, (void *const *)C, ldc, batch, 0);
}
FL_EXPORT cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                            int k, const double *alpha, const double *const A[], int lda,
                                            const double *const B[], int ldb, const double *beta, double *const C[],
                                            int ldc, int batch)
{
    FK_COUNT(21);
    return fl_gemm_b("cublasDgemmBatched", h, ta, tb, m, n, k, alpha, (const void *const *)A, lda,
                     (const void *const *)B, ldb, beta, (void *const *)C, ldc, batch, 1);
}

/* GemmEx: float matrices with a 32F compute type (float scalars), double with 64F (double scalars). */
static cublasStatus_t fl_gemm_ex(const char *api, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                 int n, int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                 long long sa, const void *B, cudaDataType bt, int ldb, long long sb, const void *beta,
                                 void *C, cudaDataType ct, int ldc, long long sc, int batch,
                                 cublasComputeType_t compute)
{
    if (!fl_args(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    int dbl = compute == CUBLAS_COMPUTE_64F;
    if ((compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32 && !dbl) || at != bt || at != ct ||
        at != (dbl ? CUDA_R_64F : CUDA_R_32F))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    double a = dbl ? *(const double *)alpha : *(const float *)alpha;
    double b = dbl ? *(const double *)beta : *(const float *)beta;
    size_t e = dbl ? sizeof(double) : sizeof(float);
    for (int i = 0; i < batch; i++)
        fl_gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, a, (const char *)A + i * sa * e, lda,
                (const char *)B + i * sb * e, ldb, b, (char *)C + i * sc * e, ldc, (char *)C + i * sc * e, ldc, dbl);
    fl_note(api, h, a, b, m, n, k, batch);
    return CUBLAS_STATUS_SUCCESS;
}
FL_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                      int k, const void *alpha, const void *A, cudaDataType at, int lda, const void *B,
                                      cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                                      cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    FK_COUNT(12);
    (void)algo;
    return fl_gemm_ex("cublasGemmEx", h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct, ldc, 0, 1,
                      compute);
}
FL_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                    int m, int n, int k, const void *alpha, const void *A,
                                                    cudaDataType at, int lda, long long sa, const void *B,
                                                    cudaDataType bt, int ldb, long long sb, const void *beta, void *C,
                                                    cudaDataType ct, int ldc, long long sc, int batch,
                                                    cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    FK_COUNT(13);
    (void)algo;
    return fl_gemm_ex("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta,
                      C, ct, ldc, sc, batch, compute);
}
#endif
