/*
 * rb_cublas.c - the back end's check of cuBLAS's pointer-mode scalars (docs/remote.md, "cuBLAS and cuBLASLt"):
 * a client says each alpha/beta/result is a host value or a device address from the pointer mode it saw set;
 * before the call runs, the back end asks its own library what the handle's mode (cublasGetPointerMode_v2) or
 * the matmul descriptor's (cublasLtMatmulDescGetAttribute, CUBLASLT_MATMUL_DESC_POINTER_MODE) is, and refuses a
 * call whose claim differs: a client cannot make the library dereference an address it sent as a host scalar.
 * cuBLAS and cuBLASLt handles and cuBLASLt's descriptors are numbers this back end gave (rm_num.h, rm_ltid.h):
 * the map is rm_num.c's; here the back end's side of it: an unknown handle answered with cuBLAS's status for a bad
 * handle, without running the call.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rb_state.h"
#include "rm_num.h"

static struct {
    pthread_once_t once;
    const cushim_host *host;
    const cushim_api_info *get_mode, *lt_get, *lt_matmul;
    int64_t pm_device, lt_attr_mode, lt_pm_host, lt_pm_beta_host;
    int ok;
} rbc = { .once = PTHREAD_ONCE_INIT };
static const cushim_host *rbc_host_arg;

static int rbc_const(const char *name, int64_t *v)
{
    return CUSHIM_HOST_HAS(rbc.host, enum_constant) && rbc.host->enum_constant(name, v, NULL) == CUSHIM_OK;
}

static void rbc_init(void)
{
    rbc.host = rbc_host_arg;
    rbc.get_mode = rbc.host->api_by_name("cublasGetPointerMode_v2");
    rbc.lt_get = rbc.host->api_by_name("cublasLtMatmulDescGetAttribute");
    rbc.lt_matmul = rbc.host->api_by_name("cublasLtMatmul");
    rbc.ok = rbc_const("CUBLAS_POINTER_MODE_DEVICE", &rbc.pm_device) &
            rbc_const("CUBLASLT_MATMUL_DESC_POINTER_MODE", &rbc.lt_attr_mode) &
            rbc_const("CUBLASLT_POINTER_MODE_HOST", &rbc.lt_pm_host) &
            rbc_const("CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST", &rbc.lt_pm_beta_host);
}

/* Parameter 'name' of 'a': its index, or -1. */
static int rbc_index(const cushim_api_info *a, const char *name)
{
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = rbc.host->api_param(a, i);
        if (p != NULL && strcmp(p->name, name) == 0)
            return (int)i;
    }
    return -1;
}

static void rbc_put(const cushim_api_info *a, uint8_t *params, const char *name, const void *v, size_t n)
{
    int i = rbc_index(a, name);
    if (i >= 0)
        memcpy(params + rbc.host->api_param(a, (uint32_t)i)->offset, v, n);
}

/* The handle's or descriptor's value in the decoded call (8 bytes). */
static int rbc_value(const rm_plan *pl, const void *params, const char *name, uint64_t *v)
{
    int i = rbc_index(pl->info, name);
    if (i < 0 || rbc.host->api_param(pl->info, (uint32_t)i)->size != 8)
        return 0;
    memcpy(v, (const uint8_t *)params + rbc.host->api_param(pl->info, (uint32_t)i)->offset, 8);
    return 1;
}

/* ---- objects by number (rm_num.h) ---- */
void rb_num_message(rb_state *b, uint32_t api_id)
{
    rm_num_message(&b->num, rm_plan_of(b->plans, api_id));
}

int rb_num_pre(rb_state *b, rm_call *c, uint8_t *ret)
{
    int rc = rm_num_pre(&b->num, c->plan, c->params);
    if (rc == RM_NUM_BAD_HANDLE) {   /* cuBLAS's answer for a bad handle, before the library sees it */
        int32_t st = 1;   /* CUBLAS_STATUS_NOT_INITIALIZED, unless the tree says otherwise */
        uint32_t kind;
        if (CUSHIM_HOST_HAS(b->host, result_by_name))
            b->host->result_by_name("CUBLAS_STATUS_NOT_INITIALIZED", &kind, &st);
        memcpy(ret, &st, sizeof st);
    }
    return rc;
}

static int32_t rb_nccl_in_progress(rb_state *b)
{
    uint32_t kind;
    int32_t code = 7;   /* ncclInProgress, unless the tree says otherwise */
    if (CUSHIM_HOST_HAS(b->host, result_by_name))
        b->host->result_by_name("ncclInProgress", &kind, &code);
    return code;
}

void rb_num_post(rb_state *b, rm_call *c, int ran, int32_t result)
{
    uint32_t full = b->num.full;
    /* a non-blocking communicator's Create returns ncclInProgress with the communicator made (nccl.h) */
    int made = result == 0 || (c->plan->info->library == CUSHIM_LIB_NCCL && c->plan->num_create != 0 &&
                               result == rb_nccl_in_progress(b));
    rm_num_post(&b->num, c->plan, c->params, ran && (!c->plan->ret_status || made));
    if (b->num.full != full)
        rb_log("%s: no room for another object (%u live): its uses are refused", c->plan->info->name, b->num.n);
}

/* NCCL's scalar (ncclRedOpCreatePreMulSum): the way it came must be the one its 'residence' names, so that NCCL
   never reads an address sent as a device scalar as host memory (nor the reverse). */
static int rb_nccl_scalar_check(const rb_state *b, const rm_plan *pl, const void *params, int how)
{
    const char *want = how == RM_SCALAR_HOST ? "ncclScalarHostImmediate" : "ncclScalarDevice";
    for (uint32_t i = 0; i < pl->info->nparams; i++) {
        const cushim_param_info *p = b->host->api_param(pl->info, i);
        int32_t v;
        if (strcmp(p->name, "residence") != 0 || p->enum_type == NULL || p->size != sizeof v)
            continue;
        memcpy(&v, (const uint8_t *)params + p->offset, sizeof v);
        for (uint32_t k = 0; k < p->enum_type->nvalues; k++)
            if (strcmp(p->enum_type->values[k].name, want) == 0)
                return p->enum_type->values[k].value == v ? RM_OK : RM_EMALFORMED;
    }
    return RM_EMALFORMED;
}

int rb_scalar_check(void *user, const rm_plan *pl, const void *params, uint32_t param, int how)
{
    if (pl->info->library == CUSHIM_LIB_NCCL)
        return rb_nccl_scalar_check(user, pl, params, how);
    rb_state *b = user;
    uint8_t q[64] = {0};
    int32_t ret = -1, mode = 0;
    uint64_t h;
    int device;
    rbc_host_arg = b->host;
    pthread_once(&rbc.once, rbc_init);
    if (!rbc.ok)
        return RM_EMALFORMED;
    if (pl->info->library == CUSHIM_LIB_CUBLAS) {
        void *pm = &mode;
        if (rbc.get_mode == NULL || rbc.get_mode->params_size > sizeof q || !rbc_value(pl, params, "handle", &h))
            return RM_EMALFORMED;
        h = rm_num_real(&b->num, h, rm_numbered_type("cublasHandle_t"));   /* the client's number (0: none) */
        rbc_put(rbc.get_mode, q, "handle", &h, 8);
        rbc_put(rbc.get_mode, q, "mode", &pm, sizeof pm);
        /* a handle the library does not know: only a host value (staged in the arena) passes, and the library
           answers the call with its own error for the handle */
        device = rbc.host->call_real(rbc.get_mode->id, q, &ret) == CUSHIM_OK && ret == 0 && mode == rbc.pm_device;
    } else if (rbc.lt_matmul != NULL && pl->id == rbc.lt_matmul->id) {
        size_t written = 0, size = sizeof mode;
        void *pm = &mode, *pw = &written;
        if (rbc.lt_get == NULL || rbc.lt_get->params_size > sizeof q || !rbc_value(pl, params, "computeDesc", &h))
            return RM_EMALFORMED;
        h = rm_num_real(&b->num, h, rm_numbered_type("cublasLtMatmulDesc_t"));   /* the client's number */
        int32_t attr = (int32_t)rbc.lt_attr_mode;
        rbc_put(rbc.lt_get, q, "matmulDesc", &h, 8);
        rbc_put(rbc.lt_get, q, "attr", &attr, sizeof attr);
        rbc_put(rbc.lt_get, q, "buf", &pm, sizeof pm);
        rbc_put(rbc.lt_get, q, "sizeInBytes", &size, sizeof size);
        rbc_put(rbc.lt_get, q, "sizeWritten", &pw, sizeof pw);
        const cushim_param_info *p = rbc.host->api_param(pl->info, param);
        if (rbc.host->call_real(rbc.lt_get->id, q, &ret) != CUSHIM_OK || ret != 0 || written != sizeof mode)
            mode = (int32_t)rbc.lt_pm_host;   /* not a descriptor the library knows: host values only, as above */
        device = !(mode == rbc.lt_pm_host || (mode == rbc.lt_pm_beta_host && p != NULL && strcmp(p->name, "beta") == 0));
    } else {
        return RM_EMALFORMED;   /* a client sizes no other API's scalars (rp_cublas.c) */
    }
    return (how == RM_SCALAR_DEVICE) == device ? RM_OK : RM_EMALFORMED;
}
