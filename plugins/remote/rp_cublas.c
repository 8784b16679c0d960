/*
 * rp_cublas.c - what the client knows of cuBLAS and cuBLASLt calls that it forwards (docs/remote.md, "cuBLAS
 * and cuBLASLt"): the pointer-mode scalars' way and size (rm_ctx.scalar), the state that decides them (each
 * cuBLAS handle's pointer mode, each cuBLASLt matmul descriptor's scale type and pointer mode, followed through
 * the calls that set them), and cuBLAS's words for the remoting's errors.
 *
 * The server runs the real libraries; a handle or descriptor is the server's pointer, an opaque number here.
 * A scalar in host mode is read here (its size by its type: the pointee, or for a 'void *' the call's compute
 * type, data type or the descriptor's scale type) and sent as bytes; in device mode it is a device address and
 * never read here. A scalar whose size or mode cannot be told (an untracked descriptor, an unknown compute type)
 * is refused: the call returns CUBLAS_STATUS_NOT_SUPPORTED and its name is logged once (remote.c).
 * Everything is read through the SDK's metadata (parameters and enum constants by name), never from headers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rp_cublas.h"

/* A handle's or descriptor's state; a linear scan: a program keeps few alive at once (PyTorch: a handle per
   thread and device, a descriptor per matmul call, destroyed after it). */
typedef struct rpb_entry {
    uint64_t key;        /* the server's handle or descriptor; 0: free */
    int64_t scale;       /* Lt descriptor: its scale type (cudaDataType) */
    int64_t mode;        /* cuBLAS: cublasPointerMode_t; Lt: cublasLtPointerMode_t */
    uint8_t lt;          /* 1: a cuBLASLt matmul descriptor */
} rpb_entry;

static struct {
    const cushim_host *host;
    pthread_mutex_t lock;
    rpb_entry *e;
    uint32_t n, cap;
    /* API ids followed after success */
    uint32_t id_set_mode, id_destroy, id_desc_create, id_desc_set, id_desc_destroy;
    /* enum values, by name from the metadata */
    int64_t pm_device;                       /* CUBLAS_POINTER_MODE_DEVICE */
    int64_t lt_attr_scale, lt_attr_mode;     /* CUBLASLT_MATMUL_DESC_SCALE_TYPE, _POINTER_MODE */
    int64_t lt_pm_host, lt_pm_alpha_beta_host; /* CUBLASLT_POINTER_MODE_HOST, _ALPHA_DEVICE_VECTOR_BETA_HOST */
    const cushim_param_info *scale_param;    /* cublasLtMatmulDescCreate's scaleType: its enum names the types */
    int ok;                                  /* every name above was found */
    int32_t st[6];                           /* cuBLAS statuses for rp_cublas_error */
    int32_t drv[6];                          /* ... of these driver codes */
} rpb = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const cushim_param_info *rpb_param(const cushim_api_info *a, const char *name, uint32_t *index);

static uint32_t rpb_id(const char *name)
{
    const cushim_api_info *a = rpb.host->api_by_name(name);
    return a != NULL ? a->id : UINT32_MAX;
}

static int rpb_const(const char *name, int64_t *v)
{
    return CUSHIM_HOST_HAS(rpb.host, enum_constant) && rpb.host->enum_constant(name, v, NULL) == CUSHIM_OK;
}

static int32_t rpb_result(const char *name, int32_t dflt)
{
    uint32_t kind;
    int32_t code = dflt;
    if (rpb.host->result_by_name(name, &kind, &code) != CUSHIM_OK)
        code = dflt;
    return code;
}

void rp_cublas_init(const cushim_host *host)
{
    static const char *const names[6][2] = {
        { "CUDA_ERROR_NOT_SUPPORTED", "CUBLAS_STATUS_NOT_SUPPORTED" },
        { "CUDA_ERROR_INVALID_VALUE", "CUBLAS_STATUS_INVALID_VALUE" },
        { "CUDA_ERROR_NOT_FOUND", "CUBLAS_STATUS_NOT_SUPPORTED" },          /* the server has no such function */
        { "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUBLAS_STATUS_NOT_INITIALIZED" }, /* the server is gone */
        { "CUDA_ERROR_OUT_OF_MEMORY", "CUBLAS_STATUS_ALLOC_FAILED" },
        { "CUDA_ERROR_UNKNOWN", "CUBLAS_STATUS_INTERNAL_ERROR" },
    };
    rpb.host = host;
    rpb.id_set_mode = rpb_id("cublasSetPointerMode_v2");
    rpb.id_destroy = rpb_id("cublasDestroy_v2");
    rpb.id_desc_create = rpb_id("cublasLtMatmulDescCreate");
    rpb.id_desc_set = rpb_id("cublasLtMatmulDescSetAttribute");
    rpb.id_desc_destroy = rpb_id("cublasLtMatmulDescDestroy");
    const cushim_api_info *dc = host->api_by_name("cublasLtMatmulDescCreate");
    rpb.scale_param = dc != NULL ? rpb_param(dc, "scaleType", NULL) : NULL;
    rpb.ok = rpb_const("CUBLAS_POINTER_MODE_DEVICE", &rpb.pm_device) &
            rpb_const("CUBLASLT_MATMUL_DESC_SCALE_TYPE", &rpb.lt_attr_scale) &
            rpb_const("CUBLASLT_MATMUL_DESC_POINTER_MODE", &rpb.lt_attr_mode) &
            rpb_const("CUBLASLT_POINTER_MODE_HOST", &rpb.lt_pm_host) &
            rpb_const("CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST", &rpb.lt_pm_alpha_beta_host);
    for (int i = 0; i < 6; i++) {
        rpb.drv[i] = rpb_result(names[i][0], -1);
        rpb.st[i] = rpb_result(names[i][1], 14 /* CUBLAS_STATUS_INTERNAL_ERROR */);
    }
}

int32_t rp_cublas_error(int32_t driver_code)
{
    if (driver_code == 0 || rpb.host == NULL)
        return driver_code;   /* before rp_cublas_init: no table yet (never the case for a forwarded call) */
    for (int i = 0; i < 6; i++)
        if (rpb.drv[i] == driver_code)
            return rpb.st[i];
    return rpb.st[5];
}

/* ---- the table (rpb.lock) ---- */
static rpb_entry *rpb_find_locked(uint64_t key, int lt)
{
    for (uint32_t i = 0; i < rpb.n; i++)
        if (rpb.e[i].key == key && rpb.e[i].lt == lt)
            return &rpb.e[i];
    return NULL;
}

static rpb_entry *rpb_add_locked(uint64_t key, int lt)
{
    rpb_entry *e = rpb_find_locked(key, lt);
    if (e != NULL)
        return e;
    for (uint32_t i = 0; i < rpb.n; i++)
        if (rpb.e[i].key == 0) {
            e = &rpb.e[i];
            break;
        }
    if (e == NULL) {
        if (rpb.n == rpb.cap) {
            uint32_t cap = rpb.cap ? rpb.cap * 2 : 64;
            rpb_entry *t = realloc(rpb.e, cap * sizeof *t);
            if (t == NULL)
                return NULL;
            rpb.e = t;
            rpb.cap = cap;
        }
        e = &rpb.e[rpb.n++];
    }
    memset(e, 0, sizeof *e);
    e->key = key;
    e->lt = (uint8_t)lt;
    return e;
}

/* ---- parameters by name ---- */
static const cushim_param_info *rpb_param(const cushim_api_info *a, const char *name, uint32_t *index)
{
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = rpb.host->api_param(a, i);
        if (p != NULL && strcmp(p->name, name) == 0) {
            if (index != NULL)
                *index = i;
            return p;
        }
    }
    return NULL;
}

/* A by-value parameter (at most 8 bytes, sign-extended from 4). 1 when the API has it. */
static int rpb_value(const cushim_api_info *a, const void *params, const char *name, int64_t *v)
{
    const cushim_param_info *p = rpb_param(a, name, NULL);
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
static uint32_t rpb_dtype_bytes(const cushim_param_info *p, int64_t type)
{
    const char *name = p != NULL && p->enum_type != NULL && CUSHIM_HOST_HAS(rpb.host, enum_value_name) ?
                       rpb.host->enum_value_name(p->enum_type, type) : NULL;
    if (name == NULL || strncmp(name, "CUDA_", 5) != 0 || (name[5] != 'R' && name[5] != 'C') || name[6] != '_')
        return 0;
    unsigned bits = (unsigned)strtoul(name + 7, NULL, 10);
    if (bits < 8 || bits % 8 != 0)
        return 0;
    return bits / 8 * (name[5] == 'C' ? 2u : 1u);
}

/* The scalar of cublasGemmEx and its batched forms: the compute type's real type, complex when C is. */
static uint32_t rpb_compute_bytes(const cushim_api_info *a, const void *params)
{
    const cushim_param_info *p = rpb_param(a, "computeType", NULL);
    int64_t ct, ctype;
    const char *name;
    uint32_t n = 0;
    if (p == NULL || p->enum_type == NULL || !rpb_value(a, params, "computeType", &ct) ||
        !CUSHIM_HOST_HAS(rpb.host, enum_value_name) || (name = rpb.host->enum_value_name(p->enum_type, ct)) == NULL)
        return 0;
    if (strncmp(name, "CUBLAS_COMPUTE_16F", 18) == 0)
        n = 2;
    else if (strncmp(name, "CUBLAS_COMPUTE_32F", 18) == 0 || strncmp(name, "CUBLAS_COMPUTE_32I", 18) == 0)
        n = 4;
    else if (strncmp(name, "CUBLAS_COMPUTE_64F", 18) == 0)
        n = 8;
    const cushim_param_info *cp = rpb_param(a, "Ctype", NULL);
    if (n != 0 && cp != NULL && rpb_value(a, params, "Ctype", &ctype)) {
        uint32_t cb = rpb_dtype_bytes(cp, ctype);
        const char *cn = cp->enum_type != NULL ? rpb.host->enum_value_name(cp->enum_type, ctype) : NULL;
        if (cb == 0)
            return 0;
        if (cn != NULL && strncmp(cn, "CUDA_C_", 7) == 0)
            n *= 2;
    }
    return n;
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
        if (rpb_value(a, params, "handle", &key)) {
            pthread_mutex_lock(&rpb.lock);
            rpb_entry *e = rpb_find_locked((uint64_t)key, 0);
            mode = e != NULL ? e->mode : 0;   /* a new handle's mode is host */
            pthread_mutex_unlock(&rpb.lock);
        }
        if (mode == rpb.pm_device)
            return RM_SCALAR_DEVICE;
        *bytes = pl->p[param].elem;
        if (*bytes == 0)   /* void *: by the call's types */
            *bytes = rpb_param(a, "computeType", NULL) != NULL ? rpb_compute_bytes(a, params) :
                     strcmp(p->name, "result") == 0 && rpb_value(a, params, "resultType", &type) ?
                         rpb_dtype_bytes(rpb_param(a, "resultType", NULL), type) :
                     rpb_value(a, params, "alphaType", &type) ? rpb_dtype_bytes(rpb_param(a, "alphaType", NULL), type) : 0;
        return *bytes != 0 && *bytes <= RM_SCALAR_MAX ? RM_SCALAR_HOST : RM_EUNSUPPORTED;
    }
    /* cuBLASLt: cublasLtMatmul, by its descriptor */
    if (!rpb_value(a, params, "computeDesc", &key))
        return RM_EUNSUPPORTED;
    pthread_mutex_lock(&rpb.lock);
    rpb_entry *e = rpb_find_locked((uint64_t)key, 1);
    if (e != NULL) {
        found = 1;
        mode = e->mode;
        scale = e->scale;
    }
    pthread_mutex_unlock(&rpb.lock);
    if (!found)
        return RM_EUNSUPPORTED;
    /* HOST: both host values; ALPHA_DEVICE_VECTOR_BETA_HOST: beta only; every other mode: device addresses
       (BETA_ZERO's beta is not read) */
    if (mode != rpb.lt_pm_host && !(mode == rpb.lt_pm_alpha_beta_host && strcmp(p->name, "beta") == 0))
        return RM_SCALAR_DEVICE;
    *bytes = rpb.scale_param != NULL ? rpb_dtype_bytes(rpb.scale_param, scale) : 0;
    return *bytes != 0 && *bytes <= RM_SCALAR_MAX ? RM_SCALAR_HOST : RM_EUNSUPPORTED;
}

void rp_cublas_after(const cushim_call *call, int32_t status)
{
    const cushim_api_info *a = call->info;
    uint32_t id = call->api_id;
    int64_t key = 0, v = 0;
    if (status != 0 || (id != rpb.id_set_mode && id != rpb.id_destroy && id != rpb.id_desc_create &&
                        id != rpb.id_desc_set && id != rpb.id_desc_destroy))
        return;
    pthread_mutex_lock(&rpb.lock);
    if (id == rpb.id_set_mode && rpb_value(a, call->params, "handle", &key) && rpb_value(a, call->params, "mode", &v)) {
        rpb_entry *e = rpb_add_locked((uint64_t)key, 0);
        if (e != NULL)
            e->mode = v;
    } else if (id == rpb.id_destroy && rpb_value(a, call->params, "handle", &key)) {
        rpb_entry *e = rpb_find_locked((uint64_t)key, 0);
        if (e != NULL)
            e->key = 0;
    } else if (id == rpb.id_desc_create) {
        void *out = NULL;
        const cushim_param_info *p = rpb_param(a, "matmulDesc", NULL);
        if (p != NULL)
            memcpy(&out, (const uint8_t *)call->params + p->offset, sizeof out);
        rpb_entry *e = NULL;
        if (out != NULL && rpb_value(a, call->params, "scaleType", &v)) {
            memcpy(&key, out, sizeof key);   /* the descriptor the server returned */
            e = rpb_add_locked((uint64_t)key, 1);
        }
        if (e != NULL) {
            e->scale = v;
            e->mode = rpb.lt_pm_host;
        }
    } else if (id == rpb.id_desc_set && rpb_value(a, call->params, "matmulDesc", &key) &&
               rpb_value(a, call->params, "attr", &v) && (v == rpb.lt_attr_scale || v == rpb.lt_attr_mode)) {
        const void *buf = NULL;
        int64_t size = 0;
        int32_t val;
        const cushim_param_info *p = rpb_param(a, "buf", NULL);
        if (p != NULL)
            memcpy(&buf, (const uint8_t *)call->params + p->offset, sizeof buf);
        rpb_entry *e = rpb_find_locked((uint64_t)key, 1);
        if (e != NULL && buf != NULL && rpb_value(a, call->params, "sizeInBytes", &size) && size == 4) {
            memcpy(&val, buf, 4);   /* both attributes are 32-bit enums */
            if (v == rpb.lt_attr_scale)
                e->scale = val;
            else
                e->mode = val;
        }
    } else if (id == rpb.id_desc_destroy && rpb_value(a, call->params, "matmulDesc", &key)) {
        rpb_entry *e = rpb_find_locked((uint64_t)key, 1);
        if (e != NULL)
            e->key = 0;
    }
    pthread_mutex_unlock(&rpb.lock);
}

void rp_cublas_fork_child(void)
{
    pthread_mutex_init(&rpb.lock, NULL);
    rpb.n = 0;   /* the parent's handles were its back end's */
}
