/*
 * rp_blasargs.c - a cuBLAS or cuBLASLt call's parameters read by name from the metadata, and the checks cuBLAS
 * makes of a GEMM's or a cuBLASLt Create's arguments before it runs, made in the client (docs/remote.md, "cuBLAS
 * and cuBLASLt", fast paths): what decides that a call can be batched whatever the server's state. Used by
 * rp_cublas.c.
 */
#include <stdlib.h>
#include <string.h>

#include "rp_blasargs.h"

static const cushim_host *rba_host;

void rba_init(const cushim_host *host)
{
    rba_host = host;
}

const cushim_param_info *rba_param(const cushim_api_info *a, const char *name, uint32_t *index)
{
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = rba_host->api_param(a, i);
        if (p != NULL && strcmp(p->name, name) == 0) {
            if (index != NULL)
                *index = i;
            return p;
        }
    }
    return NULL;
}

/* A by-value parameter (at most 8 bytes, sign-extended from 4). 1 when the API has it. */
int rba_value(const cushim_api_info *a, const void *params, const char *name, int64_t *v)
{
    const cushim_param_info *p = rba_param(a, name, NULL);
    if (p == NULL || p->size > 8)
        return 0;
    if (p->size == 4) {
        int32_t w;
        memcpy(&w, (const uint8_t *)params + p->offset, 4);
        *v = w;
    } else {
        uint64_t w = 0;
        memcpy(&w, (const uint8_t *)params + p->offset, p->size);
        *v = (int64_t)w;
    }
    return 1;
}

/* The bytes of a scalar of cudaDataType 'type' (from its name: CUDA_R_16F 2, CUDA_C_64F 16...); 0: unknown. */
uint32_t rba_dtype_bytes(const cushim_param_info *p, int64_t type)
{
    const char *name = p != NULL && p->enum_type != NULL && CUSHIM_HOST_HAS(rba_host, enum_value_name) ?
                       rba_host->enum_value_name(p->enum_type, type) : NULL;
    if (name == NULL || strncmp(name, "CUDA_", 5) != 0 || (name[5] != 'R' && name[5] != 'C') || name[6] != '_')
        return 0;
    unsigned bits = (unsigned)strtoul(name + 7, NULL, 10);
    if (bits < 8 || bits % 8 != 0)
        return 0;
    return bits / 8 * (name[5] == 'C' ? 2u : 1u);
}

/* The scalar of cublasGemmEx and its batched forms: the compute type's real type, complex when C is. */
uint32_t rba_compute_bytes(const cushim_api_info *a, const void *params)
{
    const cushim_param_info *p = rba_param(a, "computeType", NULL);
    int64_t ct, ctype;
    const char *name;
    uint32_t n = 0;
    if (p == NULL || p->enum_type == NULL || !rba_value(a, params, "computeType", &ct) ||
        !CUSHIM_HOST_HAS(rba_host, enum_value_name) || (name = rba_host->enum_value_name(p->enum_type, ct)) == NULL)
        return 0;
    if (strncmp(name, "CUBLAS_COMPUTE_16F", 18) == 0)
        n = 2;
    else if (strncmp(name, "CUBLAS_COMPUTE_32F", 18) == 0 || strncmp(name, "CUBLAS_COMPUTE_32I", 18) == 0)
        n = 4;
    else if (strncmp(name, "CUBLAS_COMPUTE_64F", 18) == 0)
        n = 8;
    const cushim_param_info *cp = rba_param(a, "Ctype", NULL);
    if (n != 0 && cp != NULL && rba_value(a, params, "Ctype", &ctype)) {
        uint32_t cb = rba_dtype_bytes(cp, ctype);
        const char *cn = cp->enum_type != NULL ? rba_host->enum_value_name(cp->enum_type, ctype) : NULL;
        if (cb == 0)
            return 0;
        if (cn != NULL && strncmp(cn, "CUDA_C_", 7) == 0)
            n *= 2;
    }
    return n;
}

/* A pointer parameter's value. */
void *rba_ptr(const cushim_api_info *a, const void *params, const char *name)
{
    const cushim_param_info *p = rba_param(a, name, NULL);
    void *v = NULL;
    if (p != NULL && p->size == sizeof v)
        memcpy(&v, (const uint8_t *)params + p->offset, sizeof v);
    return v;
}

/* An SGEMM (or its strided batched form) whose arguments pass every check cuBLAS makes before it launches (those
   of the reference BLAS: the operations, m, n, k and the batch count not negative, each leading dimension at
   least the rows it holds) on a handle the client created, with its scalars and matrices given. 1: it can be
   batched. The pointers are not checked, as cuBLAS does not check them either: a bad one faults on the device,
   an asynchronous error in both. */
int rba_gemm_ok(const cushim_api_info *a, const void *params, int batched)
{
    int64_t ta, tb, m, n, k, lda, ldb, ldc, count = 1;
    if (!rba_value(a, params, "transa", &ta) || !rba_value(a, params, "transb", &tb) ||
        !rba_value(a, params, "m", &m) || !rba_value(a, params, "n", &n) || !rba_value(a, params, "k", &k) ||
        !rba_value(a, params, "lda", &lda) || !rba_value(a, params, "ldb", &ldb) ||
        !rba_value(a, params, "ldc", &ldc) || (batched && !rba_value(a, params, "batchCount", &count)))
        return 0;
    if (ta < 0 || ta > 2 || tb < 0 || tb > 2 || m < 0 || n < 0 || k < 0 || count < 0)   /* CUBLAS_OP_N, _T, _C */
        return 0;
    int64_t arows = ta == 0 ? m : k, brows = tb == 0 ? k : n;
    if (lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1))
        return 0;
    /* the pointer-array forms' Aarray, Barray, Carray: device addresses, given, never dereferenced here */
    int arr = rba_param(a, "A", NULL) == NULL;
    return rba_ptr(a, params, "alpha") != NULL && rba_ptr(a, params, "beta") != NULL &&
           rba_ptr(a, params, arr ? "Aarray" : "A") != NULL && rba_ptr(a, params, arr ? "Barray" : "B") != NULL &&
           rba_ptr(a, params, arr ? "Carray" : "C") != NULL;
}

/* A cuBLASLt Create whose arguments pass what the client can check: an output given, each enum a value of its type
   (compute type, scale type, data type: named in the metadata), a layout's leading dimension at least its rows.
   Memory, or a combination the library refuses, is then a batched error (and the number is refused at each use). */
int rba_create_ok(const cushim_api_info *a, const void *params, int what)
{
    static const char *const enums[2][2] = { { "computeType", "scaleType" }, { "type", NULL } };
    if (a->nparams == 0 || rba_ptr(a, params, rba_host->api_param(a, 0)->name) == NULL)
        return 0;
    if (what == RBA_PREF)
        return 1;
    const char *const *e = enums[what == RBA_DESC ? 0 : 1];
    for (int i = 0; i < 2 && e[i] != NULL; i++) {
        const cushim_param_info *p = rba_param(a, e[i], NULL);
        int64_t v;
        if (p == NULL || p->enum_type == NULL || !rba_value(a, params, e[i], &v) ||
            !CUSHIM_HOST_HAS(rba_host, enum_value_name) || rba_host->enum_value_name(p->enum_type, v) == NULL)
            return 0;
    }
    int64_t rows, ld;
    if (what == RBA_LAYOUT &&
        (!rba_value(a, params, "rows", &rows) || !rba_value(a, params, "ld", &ld) || ld < rows))
        return 0;
    return 1;
}

/* GemmEx and its strided batched form: beyond the reference BLAS's checks (rba_gemm_ok), each data type a value of
   cudaDataType and the compute type one of cublasComputeType_t whose scalar size is known (rba_compute_bytes), so
   the scalars go as the library reads them. Which combinations the library supports the client cannot tell: one
   it refuses is a batched error, reported by the next synchronous cuBLAS call. */
int rba_gemm_ex_ok(const cushim_api_info *a, const void *params, int batched)
{
    static const char *const types[3] = { "Atype", "Btype", "Ctype" };
    for (int i = 0; i < 3; i++) {
        int64_t t;
        if (!rba_value(a, params, types[i], &t) || rba_dtype_bytes(rba_param(a, types[i], NULL), t) == 0)
            return 0;
    }
    return rba_compute_bytes(a, params) != 0 && rba_gemm_ok(a, params, batched);
}

