/*
 * rp_cublas.c - what the client knows of cuBLAS and cuBLASLt calls that it forwards (docs/remote.md, "cuBLAS
 * and cuBLASLt"): the pointer-mode scalars' way and size (rm_ctx.scalar), the state that decides them (each
 * cuBLAS handle's pointer mode, each cuBLASLt matmul descriptor's scale type and pointer mode, followed through
 * the calls that set them, in rp_blasobj.c's table), and the way of each call (rp_cublas_route). cuBLAS's words
 * for the remoting's errors are rp_blaserr.c's.
 *
 * The server runs the real libraries; a handle or descriptor is a number its back end gave (remote/rm_num.h),
 * opaque here. A scalar in host mode is read here (its size by its type: the pointee, or for a 'void *' the call's
 * compute type, data type or the descriptor's scale type) and sent as bytes; in device mode it is a device address
 * and never read here. A scalar whose size or mode cannot be told (an untracked descriptor, an unknown compute
 * type) is refused: the call returns CUBLAS_STATUS_NOT_SUPPORTED and its name is logged once (remote.c).
 * The fast paths (rp_cublas_route, before a call is dispatched): the handles and descriptors the client saw
 * created, and the values the library accepted on them, make a setter of the value a handle has and a getter of a
 * value set answerable here; a heuristic asked before with the same key (the thread, its device epoch, and the
 * full content of the descriptor, layouts and preference) answered from rp_heur.c; and a setter, a destroy, a
 * cuBLASLt Create, an SGEMM, DGEMM, CGEMM, ZGEMM or GemmEx (strided batched too; S/DGEMM pointer-array batched) that passes the library's own checks
 * (rp_blasargs.c), or a cuBLASLt matmul on objects created here (its handle a cuBLASLt one, or a cuBLAS one cast
 * as cuBLAS allows), batchable (remote.c queues it and calls rp_cublas_after as for an answered call). Anything not
 * known goes as before.
 * Everything is read through the SDK's metadata (parameters and enum constants by name), never from headers,
 * but the sizes of cuBLASLt's attributes (rpb_*_attrs), which only the header's documentation gives.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rp_cublas.h"
#include "rp_blasargs.h"
#include "rp_blaserr.h"
#include "rp_blasobj.h"
#include "rp_heur.h"
#include "rm_names.h"

/* The APIs rp_cublas_route and rp_cublas_after know, by name. */
enum {
    RPB_CREATE, RPB_DESTROY, RPB_SET_STREAM, RPB_GET_STREAM, RPB_SET_WS, RPB_SET_MATH, RPB_GET_MATH, RPB_SET_PMODE,
    RPB_GET_PMODE, RPB_SET_ATOMICS, RPB_GET_ATOMICS, RPB_DESC_CREATE, RPB_DESC_SET, RPB_DESC_DESTROY,
    RPB_LAYOUT_CREATE, RPB_LAYOUT_SET, RPB_LAYOUT_DESTROY, RPB_PREF_CREATE, RPB_PREF_SET, RPB_PREF_DESTROY,
    RPB_SGEMM, RPB_SGEMM_SB, RPB_DGEMM, RPB_DGEMM_SB, RPB_CGEMM, RPB_CGEMM_SB, RPB_ZGEMM, RPB_ZGEMM_SB, RPB_SGEMM_B,
    RPB_DGEMM_B,     RPB_GEMMEX, RPB_GEMMEX_SB, RPB_LT_CREATE, RPB_LT_DESTROY,
    RPB_LT_MATMUL, RPB_HEUR, RPB_NAPI
};
static const char *const rpb_api_names[RPB_NAPI] = {
    "cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasGetStream_v2", "cublasSetWorkspace_v2",
    "cublasSetMathMode", "cublasGetMathMode", "cublasSetPointerMode_v2", "cublasGetPointerMode_v2",
    "cublasSetAtomicsMode", "cublasGetAtomicsMode", "cublasLtMatmulDescCreate", "cublasLtMatmulDescSetAttribute",
    "cublasLtMatmulDescDestroy", "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutSetAttribute",
    "cublasLtMatrixLayoutDestroy", "cublasLtMatmulPreferenceCreate", "cublasLtMatmulPreferenceSetAttribute",
    "cublasLtMatmulPreferenceDestroy", "cublasSgemm_v2", "cublasSgemmStridedBatched", "cublasDgemm_v2",
    "cublasDgemmStridedBatched", "cublasCgemm_v2", "cublasCgemmStridedBatched", "cublasZgemm_v2",
    "cublasZgemmStridedBatched", "cublasSgemmBatched", "cublasDgemmBatched", "cublasGemmEx",
    "cublasGemmStridedBatchedEx", "cublasLtCreate", "cublasLtDestroy", "cublasLtMatmul",
    "cublasLtMatmulAlgoGetHeuristic",
};

/* The cuBLASLt attributes whose setter is batched, with the bytes each takes (cublasLt.h's documentation of each
   attribute: int32_t, uint32_t, int64_t, uint64_t, a pointer, float, int8_t). A name the tree's enums lack is
   left out (its setter stays synchronous), as is every attribute not listed. */
typedef struct rpb_attr_def {
    const char *name;
    uint8_t size;
} rpb_attr_def;
static const rpb_attr_def rpb_desc_attrs[] = {
    { "CUBLASLT_MATMUL_DESC_COMPUTE_TYPE", 4 }, { "CUBLASLT_MATMUL_DESC_SCALE_TYPE", 4 },
    { "CUBLASLT_MATMUL_DESC_POINTER_MODE", 4 }, { "CUBLASLT_MATMUL_DESC_TRANSA", 4 },
    { "CUBLASLT_MATMUL_DESC_TRANSB", 4 }, { "CUBLASLT_MATMUL_DESC_TRANSC", 4 },
    { "CUBLASLT_MATMUL_DESC_FILL_MODE", 4 }, { "CUBLASLT_MATMUL_DESC_EPILOGUE", 4 },
    { "CUBLASLT_MATMUL_DESC_BIAS_POINTER", 8 }, { "CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE", 8 },
    { "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER", 8 }, { "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD", 8 },
    { "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE", 8 }, { "CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE", 8 },
    { "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET", 4 }, { "CUBLASLT_MATMUL_DESC_A_SCALE_POINTER", 8 },
    { "CUBLASLT_MATMUL_DESC_B_SCALE_POINTER", 8 }, { "CUBLASLT_MATMUL_DESC_C_SCALE_POINTER", 8 },
    { "CUBLASLT_MATMUL_DESC_D_SCALE_POINTER", 8 }, { "CUBLASLT_MATMUL_DESC_AMAX_D_POINTER", 8 },
    { "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE", 4 }, { "CUBLASLT_MATMUL_DESC_FAST_ACCUM", 1 },
    { "CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE", 4 },
};
static const rpb_attr_def rpb_layout_attrs[] = {
    { "CUBLASLT_MATRIX_LAYOUT_TYPE", 4 }, { "CUBLASLT_MATRIX_LAYOUT_ORDER", 4 },
    { "CUBLASLT_MATRIX_LAYOUT_ROWS", 8 }, { "CUBLASLT_MATRIX_LAYOUT_COLS", 8 },
    { "CUBLASLT_MATRIX_LAYOUT_LD", 8 }, { "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT", 4 },
    { "CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET", 8 }, { "CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET", 8 },
};
static const rpb_attr_def rpb_pref_attrs[] = {
    { "CUBLASLT_MATMUL_PREF_SEARCH_MODE", 4 }, { "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES", 8 },
    { "CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK", 4 }, { "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES", 4 },
    { "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES", 4 }, { "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES", 4 },
    { "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES", 4 }, { "CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT", 4 },
    { "CUBLASLT_MATMUL_PREF_IMPL_MASK", 8 },
};
#define RPB_NATTR (sizeof rpb_desc_attrs / sizeof rpb_desc_attrs[0])
typedef struct rpb_attr {
    int64_t value;
    uint32_t size;       /* 0: not in the tree */
} rpb_attr;

static struct {
    const cushim_host *host;
    uint32_t id[RPB_NAPI];                   /* API ids, UINT32_MAX where the tree lacks one */
    rpb_attr attrs[3][RPB_NATTR];            /* descriptor, layout, preference attributes batched */
    /* enum values, by name from the metadata */
    int64_t pm_device;                       /* CUBLAS_POINTER_MODE_DEVICE */
    int64_t lt_attr_scale, lt_attr_mode;     /* CUBLASLT_MATMUL_DESC_SCALE_TYPE, _POINTER_MODE */
    int64_t lt_pm_host, lt_pm_alpha_beta_host; /* CUBLASLT_POINTER_MODE_HOST, _ALPHA_DEVICE_VECTOR_BETA_HOST */
    const cushim_param_info *scale_param;    /* cublasLtMatmulDescCreate's scaleType: its enum names the types */
    int ok;                                  /* every name above was found */
} rpb;


static int rpb_const(const char *name, int64_t *v)
{
    return CUSHIM_HOST_HAS(rpb.host, enum_constant) && rpb.host->enum_constant(name, v, NULL) == CUSHIM_OK;
}

void rp_cublas_init(const cushim_host *host)
{
    static const rpb_attr_def *const defs[3] = { rpb_desc_attrs, rpb_layout_attrs, rpb_pref_attrs };
    static const size_t ndefs[3] = { sizeof rpb_desc_attrs / sizeof rpb_desc_attrs[0],
                                     sizeof rpb_layout_attrs / sizeof rpb_layout_attrs[0],
                                     sizeof rpb_pref_attrs / sizeof rpb_pref_attrs[0] };
    _Static_assert(sizeof rpb_layout_attrs <= sizeof rpb_desc_attrs && sizeof rpb_pref_attrs <= sizeof rpb_desc_attrs,
                   "rpb.attrs is sized by the longest table");
    rpb.host = host;
    rba_init(host);
    for (int i = 0; i < RPB_NAPI; i++)
        rpb.id[i] = rm_api_id(rpb.host, rpb_api_names[i], UINT32_MAX);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < ndefs[k]; i++)
            if (rpb_const(defs[k][i].name, &rpb.attrs[k][i].value))
                rpb.attrs[k][i].size = defs[k][i].size;
    const cushim_api_info *dc = host->api_by_name("cublasLtMatmulDescCreate");
    rpb.scale_param = dc != NULL ? rba_param(dc, "scaleType", NULL) : NULL;
    rpb.ok = rpb_const("CUBLAS_POINTER_MODE_DEVICE", &rpb.pm_device) &
            rpb_const("CUBLASLT_MATMUL_DESC_SCALE_TYPE", &rpb.lt_attr_scale) &
            rpb_const("CUBLASLT_MATMUL_DESC_POINTER_MODE", &rpb.lt_attr_mode) &
            rpb_const("CUBLASLT_POINTER_MODE_HOST", &rpb.lt_pm_host) &
            rpb_const("CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST", &rpb.lt_pm_alpha_beta_host);
    rp_blaserr_init(host);
}

int rp_cublas_scalar(void *user, const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes)
{
    const cushim_api_info *a = pl->info;
    const cushim_param_info *p = rpb.host->api_param(a, param);
    int64_t key = 0, mode = 0, scale = 0, type;
    int found = 0;
    (void)user;
    if (!rpb.ok || p == NULL)
        return RM_EUNSUPPORTED;
    if (a->library == CUSHIM_LIB_CUBLAS) {
        if (rba_value(a, params, "handle", &key)) {
            rbo_lock();
            rpb_entry *e = rbo_find_locked((uint64_t)key, RPB_HANDLE);
            mode = e != NULL ? e->mode : 0;   /* a new handle's mode is host */
            rbo_unlock();
        }
        if (mode == rpb.pm_device)
            return RM_SCALAR_DEVICE;
        *bytes = pl->p[param].elem;
        if (*bytes == 0)   /* void *: by the call's types */
            *bytes = rba_param(a, "computeType", NULL) != NULL ? rba_compute_bytes(a, params) :
                     strcmp(p->name, "result") == 0 && rba_value(a, params, "resultType", &type) ?
                         rba_dtype_bytes(rba_param(a, "resultType", NULL), type) :
                     rba_value(a, params, "alphaType", &type) ? rba_dtype_bytes(rba_param(a, "alphaType", NULL), type) : 0;
        return *bytes != 0 && *bytes <= RM_SCALAR_MAX ? RM_SCALAR_HOST : RM_EUNSUPPORTED;
    }
    /* cuBLASLt: cublasLtMatmul, by its descriptor */
    if (!rba_value(a, params, "computeDesc", &key))
        return RM_EUNSUPPORTED;
    rbo_lock();
    rpb_entry *e = rbo_find_locked((uint64_t)key, RPB_DESC);
    if (e != NULL) {
        found = 1;
        mode = e->mode;
        scale = e->scale;
    }
    rbo_unlock();
    if (!found)
        return RM_EUNSUPPORTED;
    /* HOST: both host values; ALPHA_DEVICE_VECTOR_BETA_HOST: beta only; every other mode: device addresses
       (BETA_ZERO's beta is not read) */
    if (mode != rpb.lt_pm_host && !(mode == rpb.lt_pm_alpha_beta_host && strcmp(p->name, "beta") == 0))
        return RM_SCALAR_DEVICE;
    *bytes = rpb.scale_param != NULL ? rba_dtype_bytes(rpb.scale_param, scale) : 0;
    return *bytes != 0 && *bytes <= RM_SCALAR_MAX ? RM_SCALAR_HOST : RM_EUNSUPPORTED;
}

/* Which of rpb_api_names 'id' is; -1: none. */
static int rpb_which(uint32_t id)
{
    for (int i = 0; i < RPB_NAPI; i++)
        if (rpb.id[i] == id)
            return i;
    return -1;
}

/* A cuBLASLt setter's attribute is one batched, with the bytes it takes. */
static int rpb_attr_ok(int kind, int64_t attr, int64_t size)
{
    const rpb_attr *t = rpb.attrs[kind - RPB_DESC];
    for (size_t i = 0; i < RPB_NATTR; i++)
        if (t[i].size != 0 && t[i].value == attr)
            return size == t[i].size;
    return 0;
}

/* The cuBLASLt handle of number 'key': one cublasLtCreate made, or a cuBLAS handle's (cuBLAS's documentation allows
   a cublasHandle_t in place of a cublasLtHandle_t with a cast, and PyTorch takes its cuBLASLt handle so; the back
   end takes the number as that cuBLAS handle's object: rm_numbereds). NULL: neither. (rbo_lock held) */
static rpb_entry *rpb_lt_handle_locked(uint64_t key)
{
    rpb_entry *e = rbo_find_locked(key, RPB_LTHANDLE);
    return e != NULL ? e : rbo_find_locked(key, RPB_HANDLE);
}

/* cublasLtMatmul on objects the client created and has not destroyed (its handle, a cuBLASLt or a cuBLAS one; the
   descriptor, whose scale type and pointer mode size the scalars; the four layouts), its scalars and matrices
   given, a workspace given when a size is. Whether the algorithm and workspace fit the problem the library
   decides: a refusal is a batched error, as a launch's is. (rbo_lock held) */
static int rpb_matmul_ok_locked(const cushim_api_info *a, const void *params)
{
    static const char *const layouts[4] = { "Adesc", "Bdesc", "Cdesc", "Ddesc" };
    static const char *const given[6] = { "alpha", "beta", "A", "B", "C", "D" };
    int64_t key, wsize;
    rpb_entry *e;
    if (!rba_value(a, params, "lightHandle", &key) || (e = rpb_lt_handle_locked((uint64_t)key)) == NULL ||
        !e->created || !rba_value(a, params, "computeDesc", &key) ||
        (e = rbo_find_locked((uint64_t)key, RPB_DESC)) == NULL || !e->created ||
        rba_dtype_bytes(rpb.scale_param, e->scale) == 0)
        return 0;
    for (int i = 0; i < 4; i++)
        if (!rba_value(a, params, layouts[i], &key) || (e = rbo_find_locked((uint64_t)key, RPB_LAYOUT)) == NULL ||
            !e->created)
            return 0;
    for (int i = 0; i < 6; i++)
        if (rba_ptr(a, params, given[i]) == NULL)
            return 0;
    return rba_value(a, params, "workspaceSizeInBytes", &wsize) &&
           (wsize == 0 || rba_ptr(a, params, "workspace") != NULL);
}

/* ---- cublasLtMatmulAlgoGetHeuristic's answers (rp_heur.c) ---- */
/* The calling thread, as a number no other thread of the process ever had (a pthread_t can be reused). */
static uint64_t rpb_thread_uid(void)
{
    static _Atomic uint64_t next = 1;
    static __thread uint64_t uid;
    if (uid == 0)
        uid = atomic_fetch_add(&next, 1);
    return uid;
}

/* The key of a heuristic call: everything its answer depends on (docs/remote.md): the thread and its device epoch
   (which device is current), the cuBLASLt handle (its number and kind: a cuBLAS handle cast to one is one too), the
   requested count, and the full content - never the numbers: PyTorch makes new ones for every matmul - of the
   descriptor, the four layouts and the preference. 0 when one of them is not a live object the client created whose
   every value it knows (or the key does not fit). (rbo_lock) */
static size_t rpb_heur_key_locked(const cushim_api_info *a, const void *params, const uint64_t epoch[2],
                                  uint8_t *key, size_t cap)
{
    static const char *const objs[6] = { "operationDesc", "Adesc", "Bdesc", "Cdesc", "Ddesc", "preference" };
    static const uint8_t kinds[6] = { RPB_DESC, RPB_LAYOUT, RPB_LAYOUT, RPB_LAYOUT, RPB_LAYOUT, RPB_PREF };
    int64_t lh, req, v;
    rpb_entry *e;
    size_t n = 0;
    if (!rba_value(a, params, "lightHandle", &lh) || (e = rpb_lt_handle_locked((uint64_t)lh)) == NULL ||
        !e->created || !rba_value(a, params, "requestedAlgoCount", &req))
        return 0;
    /* the handle by its number and kind: a cuBLAS handle's cuBLASLt context is not a cublasLtCreate'd handle's */
    uint64_t head[6] = { rpb_thread_uid(), epoch[0], epoch[1], (uint64_t)lh, e->kind, (uint64_t)req };
    if (cap < sizeof head)
        return 0;
    memcpy(key, head, sizeof head);
    n = sizeof head;
    for (int i = 0; i < 6; i++) {
        size_t len;
        if (!rba_value(a, params, objs[i], &v) || (e = rbo_find_locked((uint64_t)v, kinds[i])) == NULL ||
            (len = rbo_content_locked(e, key + n, cap - n)) == 0)
            return 0;
        n += len;
    }
    return n;
}

/* The results array's element size (cublasLtMatmulHeuristicResult_t, from the metadata); 0: unknown. */
static size_t rpb_heur_elem(const cushim_api_info *a)
{
    const cushim_param_info *p = rba_param(a, "heuristicResultsArray", NULL);
    return p != NULL && p->elem_size != 0 && p->elem_size <= 1024 ? p->elem_size : 0;
}

/* A heuristic answered from an earlier answer to the same key: 1 (results and count written). */
static int rpb_heur_local_locked(const cushim_api_info *a, const void *params, const uint64_t epoch[2])
{
    uint8_t key[RP_HEUR_KEY];
    int64_t req;
    void *results = rba_ptr(a, params, "heuristicResultsArray");
    int *count = rba_ptr(a, params, "returnAlgoCount"), returned = 0;
    size_t elem = rpb_heur_elem(a), klen;
    if (epoch == NULL || results == NULL || count == NULL || elem == 0 ||
        !rba_value(a, params, "requestedAlgoCount", &req) || req < 1 || req > RP_HEUR_RESULTS ||
        (klen = rpb_heur_key_locked(a, params, epoch, key, sizeof key)) == 0 ||
        !rp_heur_find(key, klen, results, elem, (int)req, &returned))
        return 0;
    *count = returned;
    return 1;
}

/* After the server answered one: kept for its key. */
static void rpb_heur_keep_locked(const cushim_api_info *a, const void *params, const uint64_t epoch[2])
{
    uint8_t key[RP_HEUR_KEY];
    int64_t req;
    const void *results = rba_ptr(a, params, "heuristicResultsArray");
    const int *count = rba_ptr(a, params, "returnAlgoCount");
    size_t elem = rpb_heur_elem(a), klen;
    if (epoch == NULL || results == NULL || count == NULL || elem == 0 ||
        !rba_value(a, params, "requestedAlgoCount", &req) || req < 1 || req > RP_HEUR_RESULTS || *count < 0 ||
        *count > req || (klen = rpb_heur_key_locked(a, params, epoch, key, sizeof key)) == 0)
        return;
    rp_heur_put(key, klen, results, elem, *count);
}

int rp_cublas_route(const cushim_call *call, int32_t *status, const uint64_t epoch[2])
{
    static const uint8_t kind_of[RPB_NAPI] = {
        [RPB_DESC_SET] = RPB_DESC, [RPB_DESC_DESTROY] = RPB_DESC, [RPB_LAYOUT_SET] = RPB_LAYOUT,
        [RPB_LAYOUT_DESTROY] = RPB_LAYOUT, [RPB_PREF_SET] = RPB_PREF, [RPB_PREF_DESTROY] = RPB_PREF,
    };
    static const char *const key_of[3] = { "matmulDesc", "matLayout", "pref" };
    const cushim_api_info *a = call->info;
    int which = rpb.host != NULL ? rpb_which(call->api_id) : -1, how = RP_BLAS_FORWARD;
    int64_t key = 0, v = 0, w = 0;
    if (which < 0 || which == RPB_CREATE || which == RPB_DESTROY || which == RPB_LT_CREATE || which == RPB_LT_DESTROY)
        return RP_BLAS_FORWARD;
    if (which == RPB_DESC_CREATE || which == RPB_LAYOUT_CREATE || which == RPB_PREF_CREATE)
        return rba_create_ok(a, call->params, which == RPB_DESC_CREATE ? RBA_DESC : which == RPB_LAYOUT_CREATE ?
                             RBA_LAYOUT : RBA_PREF) ? RP_BLAS_CREATE : RP_BLAS_FORWARD;
    *status = 0;
    rbo_lock();
    if (which >= RPB_SGEMM && which <= RPB_GEMMEX_SB) {   /* S/D/C/ZGEMM, GemmEx, strided batched, S/DGEMM pointer-array */
        rpb_entry *e = rba_value(a, call->params, "handle", &key) ? rbo_find_locked((uint64_t)key, RPB_HANDLE) : NULL;
        int batched = which == RPB_SGEMM_SB || which == RPB_DGEMM_SB || which == RPB_CGEMM_SB ||
                      which == RPB_ZGEMM_SB || which == RPB_SGEMM_B || which == RPB_DGEMM_B ||
                      which == RPB_GEMMEX_SB;
        if (e != NULL && e->created && (which == RPB_GEMMEX || which == RPB_GEMMEX_SB ?
                                        rba_gemm_ex_ok(a, call->params, batched) : rba_gemm_ok(a, call->params, batched)))
            how = RP_BLAS_BATCH;
    } else if (which == RPB_LT_MATMUL) {
        if (rpb_matmul_ok_locked(a, call->params))
            how = RP_BLAS_BATCH;
    } else if (which == RPB_HEUR) {
        if (rpb_heur_local_locked(a, call->params, epoch))
            how = RP_BLAS_LOCAL;
    } else if (which <= RPB_GET_ATOMICS) {   /* a cuBLAS handle's setter or getter */
        rpb_entry *e = rba_value(a, call->params, "handle", &key) ? rbo_find_locked((uint64_t)key, RPB_HANDLE) : NULL;
        void *out = NULL;
        if (e == NULL)
            goto out;
        switch (which) {
        case RPB_SET_STREAM:   /* the same stream, and the library's workspace still: nothing to change */
            if (rba_value(a, call->params, "streamId", &v) && (e->known & RPB_K_STREAM) && e->stream == (uint64_t)v &&
                (e->known & RPB_K_WS_DEFAULT))
                how = RP_BLAS_LOCAL;
            else if (e->created)
                how = RP_BLAS_BATCH;   /* it resets the workspace, so it changes something: sent, batched */
            break;
        case RPB_SET_WS:
            if (!rba_value(a, call->params, "workspace", &v) || !rba_value(a, call->params, "workspaceSizeInBytes", &w))
                break;
            if ((e->known & RPB_K_WS) && e->ws == (uint64_t)v && e->ws_size == (uint64_t)w)
                how = RP_BLAS_LOCAL;
            else if (e->created && v != 0 && w != 0 && (uint64_t)v % 256 == 0)   /* the library's own checks */
                how = RP_BLAS_BATCH;
            break;
        case RPB_SET_MATH:
            if (rba_value(a, call->params, "mode", &v) && (e->known & RPB_K_MATH) && e->math == v)
                how = RP_BLAS_LOCAL;
            break;
        case RPB_SET_PMODE:
            if (rba_value(a, call->params, "mode", &v) && (e->known & RPB_K_PMODE) && e->mode == v)
                how = RP_BLAS_LOCAL;
            break;
        case RPB_SET_ATOMICS:
            if (rba_value(a, call->params, "mode", &v) && (e->known & RPB_K_ATOMICS) && e->atomics == v)
                how = RP_BLAS_LOCAL;
            break;
        case RPB_GET_STREAM:   /* what the library was told last, and accepted */
            if ((e->known & RPB_K_STREAM) && (out = rba_ptr(a, call->params, "streamId")) != NULL) {
                memcpy(out, &e->stream, sizeof e->stream);   /* cudaStream_t: a pointer */
                how = RP_BLAS_LOCAL;
            }
            break;
        default: {   /* the modes: enums, 4 bytes */
            uint8_t bit = which == RPB_GET_MATH ? RPB_K_MATH : which == RPB_GET_PMODE ? RPB_K_PMODE : RPB_K_ATOMICS;
            int32_t m = (int32_t)(which == RPB_GET_MATH ? e->math : which == RPB_GET_PMODE ? e->mode : e->atomics);
            if ((e->known & bit) && (out = rba_ptr(a, call->params, "mode")) != NULL) {
                memcpy(out, &m, sizeof m);
                how = RP_BLAS_LOCAL;
            }
            break;
        }
        }
    } else {   /* a cuBLASLt descriptor's, layout's or preference's setter or destroy */
        int kind = kind_of[which];
        rpb_entry *e = rba_value(a, call->params, key_of[kind - RPB_DESC], &key) ?
                       rbo_find_locked((uint64_t)key, kind) : NULL;
        if (e == NULL || !e->created)
            goto out;
        if (which == RPB_DESC_DESTROY || which == RPB_LAYOUT_DESTROY || which == RPB_PREF_DESTROY)
            how = RP_BLAS_BATCH;
        else if (rba_ptr(a, call->params, "buf") != NULL && rba_value(a, call->params, "attr", &v) &&
                 rba_value(a, call->params, "sizeInBytes", &w) && rpb_attr_ok(kind, v, w))
            how = RP_BLAS_BATCH;
    }
out:
    rbo_unlock();
    return how;
}

/* The object a Create returned through its pointer parameter 'name'. */
static uint64_t rpb_created(const cushim_api_info *a, const void *params, const char *name)
{
    void *out = rba_ptr(a, params, name);
    uint64_t key = 0;
    if (out != NULL)
        memcpy(&key, out, sizeof key);
    return key;
}

void rp_cublas_after(const cushim_call *call, int32_t status, const uint64_t epoch[2])
{
    const cushim_api_info *a = call->info;
    int which = status == 0 ? rpb_which(call->api_id) : -1;
    int64_t key = 0, v = 0, w = 0;
    rpb_entry *e = NULL;
    if (which < 0)
        return;
    rbo_lock();
    switch (which) {
    case RPB_CREATE:
    case RPB_LAYOUT_CREATE:
    case RPB_PREF_CREATE:
    case RPB_LT_CREATE:
        e = rbo_add_locked(rpb_created(a, call->params, which == RPB_CREATE ? "handle" : which == RPB_LAYOUT_CREATE ?
                                       "matLayout" : which == RPB_LT_CREATE ? "lightHandle" : "pref"),
                           which == RPB_CREATE ? RPB_HANDLE : which == RPB_LAYOUT_CREATE ? RPB_LAYOUT :
                           which == RPB_LT_CREATE ? RPB_LTHANDLE : RPB_PREF, 1);
        if (e != NULL) {
            static const char *const largs[4] = { "type", "rows", "cols", "ld" };
            e->created = 1;
            e->exact = 1;   /* a layout's content: its Create's arguments; a preference's: none yet */
            for (int i = 0; which == RPB_LAYOUT_CREATE && i < 4; i++)
                e->exact &= (uint8_t)rba_value(a, call->params, largs[i], &e->cargs[i]);
        }
        break;
    case RPB_DESC_CREATE:
        if (rba_value(a, call->params, "scaleType", &v) &&
            (e = rbo_add_locked(rpb_created(a, call->params, "matmulDesc"), RPB_DESC, 1)) != NULL) {
            e->created = 1;
            e->scale = v;
            e->mode = rpb.lt_pm_host;
            e->cargs[1] = v;
            e->exact = (uint8_t)rba_value(a, call->params, "computeType", &e->cargs[0]);
        }
        break;
    case RPB_SET_STREAM:
    case RPB_SET_WS:
    case RPB_SET_MATH:
    case RPB_SET_PMODE:
    case RPB_SET_ATOMICS:
        if (!rba_value(a, call->params, "handle", &key) || (e = rbo_add_locked((uint64_t)key, RPB_HANDLE, 0)) == NULL)
            break;
        if (which == RPB_SET_STREAM && rba_value(a, call->params, "streamId", &v)) {
            e->stream = (uint64_t)v;
            e->known = (uint8_t)((e->known & ~RPB_K_WS) | RPB_K_STREAM | RPB_K_WS_DEFAULT);
        } else if (which == RPB_SET_WS && rba_value(a, call->params, "workspace", &v) &&
                   rba_value(a, call->params, "workspaceSizeInBytes", &w)) {
            e->ws = (uint64_t)v;
            e->ws_size = (uint64_t)w;
            e->known = (uint8_t)((e->known & ~RPB_K_WS_DEFAULT) | RPB_K_WS);
        } else if (which != RPB_SET_STREAM && which != RPB_SET_WS && rba_value(a, call->params, "mode", &v)) {
            if (which == RPB_SET_MATH)
                e->math = v, e->known |= RPB_K_MATH;
            else if (which == RPB_SET_PMODE)
                e->mode = v, e->known |= RPB_K_PMODE;
            else
                e->atomics = v, e->known |= RPB_K_ATOMICS;
        }
        break;
    case RPB_LAYOUT_SET:
    case RPB_PREF_SET:
        if (rba_value(a, call->params, which == RPB_LAYOUT_SET ? "matLayout" : "pref", &key) &&
            rba_value(a, call->params, "attr", &v) && rba_value(a, call->params, "sizeInBytes", &w) &&
            (e = rbo_find_locked((uint64_t)key, which == RPB_LAYOUT_SET ? RPB_LAYOUT : RPB_PREF)) != NULL)
            rbo_keep_attr_locked(e, v, rba_ptr(a, call->params, "buf"), w);
        break;
    case RPB_HEUR:
        rpb_heur_keep_locked(a, call->params, epoch);
        break;
    case RPB_DESC_SET:
        if (rba_value(a, call->params, "matmulDesc", &key) && rba_value(a, call->params, "attr", &v) &&
            rba_value(a, call->params, "sizeInBytes", &w) && (e = rbo_find_locked((uint64_t)key, RPB_DESC)) != NULL)
            rbo_keep_attr_locked(e, v, rba_ptr(a, call->params, "buf"), w);
        if (rba_value(a, call->params, "matmulDesc", &key) && rba_value(a, call->params, "attr", &v) &&
            (v == rpb.lt_attr_scale || v == rpb.lt_attr_mode)) {
            const void *buf = rba_ptr(a, call->params, "buf");
            int64_t size = 0;
            int32_t val;
            e = rbo_find_locked((uint64_t)key, RPB_DESC);
            if (e != NULL && buf != NULL && rba_value(a, call->params, "sizeInBytes", &size) && size == 4) {
                memcpy(&val, buf, 4);   /* both attributes are 32-bit enums */
                if (v == rpb.lt_attr_scale)
                    e->scale = val;
                else
                    e->mode = val;
            }
        }
        break;
    case RPB_DESTROY:
    case RPB_DESC_DESTROY:
    case RPB_LAYOUT_DESTROY:
    case RPB_PREF_DESTROY:
    case RPB_LT_DESTROY: {
        static const char *const key_name[] = { "handle", "matmulDesc", "matLayout", "pref", "lightHandle" };
        int kind = which == RPB_DESTROY ? RPB_HANDLE : which == RPB_DESC_DESTROY ? RPB_DESC :
                   which == RPB_LAYOUT_DESTROY ? RPB_LAYOUT : which == RPB_LT_DESTROY ? RPB_LTHANDLE : RPB_PREF;
        if (rba_value(a, call->params, key_name[kind], &key) && (e = rbo_find_locked((uint64_t)key, kind)) != NULL)
            e->key = 0;   /* dropped: its address may come back for another */
        break;
    }
    default:
        break;
    }
    rbo_unlock();
}

void rp_cublas_fork_child(void)
{
    rbo_fork_child();   /* the parent's handles were its back end's */
}
