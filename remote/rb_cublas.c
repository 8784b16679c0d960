/*
 * rb_cublas.c - the back end's check of cuBLAS's pointer-mode scalars (docs/remote.md, "cuBLAS and cuBLASLt"):
 * a client says each alpha/beta/result is a host value or a device address from the pointer mode it saw set;
 * before the call runs, the back end asks its own library what the handle's mode (cublasGetPointerMode_v2) or
 * the matmul descriptor's (cublasLtMatmulDescGetAttribute, CUBLASLT_MATMUL_DESC_POINTER_MODE) is, and refuses a
 * call whose claim differs: a client cannot make the library dereference an address it sent as a host scalar.
 * A cuBLAS handle is the client's number, as every handle is (no handle translation). cuBLASLt's matmul
 * descriptors, matrix layouts and matmul preferences are numbers this back end gave (rm_ltid.h): each Create call
 * message is the next number, whether it runs or not, as the client counts them; a Create that succeeds maps its
 * number to the library's descriptor and returns the number; a parameter of one of the three types must be a live
 * number (or NULL), anything else is refused before the call runs; a Destroy drops its number.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rb_state.h"
#include "rm_ltid.h"

struct rb_ltid {
    uint64_t id;
    uint64_t real;                /* the library's descriptor; 0: its Create failed */
};

static const char *const rbc_lt_types[3] = { "cublasLtMatmulDesc_t", "cublasLtMatrixLayout_t",
                                             "cublasLtMatmulPreference_t" };

static struct {
    pthread_once_t once;
    const cushim_host *host;
    const cushim_api_info *get_mode, *lt_get, *lt_matmul;
    uint32_t lt_create[3], lt_destroy[3];   /* by rbc_lt_types; UINT32_MAX where the tree lacks one */
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
    static const char *const creates[3] = { "cublasLtMatmulDescCreate", "cublasLtMatrixLayoutCreate",
                                            "cublasLtMatmulPreferenceCreate" };
    static const char *const destroys[3] = { "cublasLtMatmulDescDestroy", "cublasLtMatrixLayoutDestroy",
                                             "cublasLtMatmulPreferenceDestroy" };
    for (int k = 0; k < 3; k++) {
        const cushim_api_info *c = rbc.host->api_by_name(creates[k]), *d = rbc.host->api_by_name(destroys[k]);
        rbc.lt_create[k] = c != NULL ? c->id : UINT32_MAX;
        rbc.lt_destroy[k] = d != NULL ? d->id : UINT32_MAX;
    }
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

/* ---- cuBLASLt descriptors by number ---- */
static struct rb_ltid *rb_ltid_find(rb_state *b, uint64_t id)
{
    for (uint32_t i = 0; i < b->nlt; i++)
        if (b->lt[i].id == id)
            return &b->lt[i];
    return NULL;
}

/* The library's descriptor of a number; 0 for anything else. */
static uint64_t rb_ltid_real(rb_state *b, uint64_t v)
{
    struct rb_ltid *e = rm_ltid_is(v) ? rb_ltid_find(b, v) : NULL;
    return e != NULL ? e->real : 0;
}

void rb_ltid_message(rb_state *b, uint32_t api_id)
{
    rbc_host_arg = b->host;
    pthread_once(&rbc.once, rbc_init);
    b->lt_pending = 0;
    for (int k = 0; k < 3; k++)
        if (api_id == rbc.lt_create[k])
            b->lt_pending = rm_ltid(b->lt_creates++);
}

int rb_ltid_pre(rb_state *b, rm_call *c)
{
    const cushim_api_info *a = c->plan->info;
    b->lt_destroyed = 0;
    if (a->library != CUSHIM_LIB_CUBLASLT)
        return RM_OK;
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = b->host->api_param(a, i);
        uint64_t v;
        int typed = 0;
        for (int k = 0; p != NULL && p->type != NULL && k < 3; k++)
            typed |= strcmp(p->type, rbc_lt_types[k]) == 0;
        if (!typed || p->size != sizeof v)
            continue;
        memcpy(&v, (uint8_t *)c->params + p->offset, sizeof v);
        if (v == 0)
            continue;   /* NULL: the library's own answer */
        uint64_t real = rb_ltid_real(b, v);
        if (real == 0)
            return RM_EMALFORMED;   /* not a number this back end gave, or its Create failed */
        for (int k = 0; k < 3; k++)
            if (c->plan->id == rbc.lt_destroy[k])
                b->lt_destroyed = v;
        memcpy((uint8_t *)c->params + p->offset, &real, sizeof real);
    }
    return RM_OK;
}

void rb_ltid_post(rb_state *b, rm_call *c, int ran, int32_t result)
{
    if (b->lt_destroyed != 0) {   /* dropped whatever the library said: the number names nothing any more */
        struct rb_ltid *e = rb_ltid_find(b, b->lt_destroyed);
        if (e != NULL)
            *e = b->lt[--b->nlt];
        b->lt_destroyed = 0;
    }
    if (b->lt_pending == 0)
        return;
    uint64_t id = b->lt_pending, real = 0;
    void *out = NULL;
    const cushim_param_info *p = c->plan->info->nparams > 0 ? b->host->api_param(c->plan->info, 0) : NULL;
    b->lt_pending = 0;
    if (p != NULL && p->size == sizeof out)
        memcpy(&out, (uint8_t *)c->params + p->offset, sizeof out);   /* the Create's output: first */
    if (ran && result == 0 && out != NULL)
        memcpy(&real, out, sizeof real);
    if (real == 0)
        return;   /* failed: the number stays unknown, so every later use of it is refused */
    if (b->nlt == b->caplt) {
        uint32_t cap = b->caplt ? b->caplt * 2 : 64;
        struct rb_ltid *t = realloc(b->lt, cap * sizeof *t);
        if (t == NULL) {
            rb_log("no memory for cuBLASLt descriptor %#llx: its uses are refused", (unsigned long long)id);
            return;
        }
        b->lt = t;
        b->caplt = cap;
    }
    b->lt[b->nlt++] = (struct rb_ltid){ .id = id, .real = real };
    memcpy(out, &id, sizeof id);   /* the client gets the number */
}

void rb_ltid_free(rb_state *b)
{
    free(b->lt);
    b->lt = NULL;
    b->nlt = b->caplt = 0;
}

int rb_scalar_check(void *user, const rm_plan *pl, const void *params, uint32_t param, int how)
{
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
        h = rb_ltid_real(b, h);   /* the client's number: the library's descriptor (0: none) */
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
