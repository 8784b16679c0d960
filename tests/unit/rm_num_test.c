/*
 * rm_num_test.c - the back end's objects by number (remote/rm_num.c, docs/remote.md "cuBLAS and cuBLASLt") over the
 * generated plans of the built tree: which parameters the plans mark (every by-value parameter of a numbered type,
 * from the metadata alone), the Creates numbered in message order whether they succeed or not, a number used as the
 * library's object, a made-up, destroyed or other-kind number refused (a handle with RM_NUM_BAD_HANDLE), a cuBLAS
 * handle's number taken as a cuBLASLt handle but not by cublasLtDestroy, and the emulation descriptor carried in a
 * matmul descriptor's attribute both ways. A tree without cuBLAS skips.
 */
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rm_codec.h"
#include "rm_ltid.h"
#include "rm_num.h"

void rm_meta_generated(rm_meta *m);

static rm_plans *plans;

static const rm_plan *plan(const char *name)
{
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, name) == 0)
            return &plans->all[i];
    return NULL;
}

static int param(const rm_plan *pl, const char *name)
{
    for (uint32_t i = 0; i < pl->nparams; i++)
        if (strcmp(pl->info->params[i].name, name) == 0)
            return (int)i;
    fail_msg("%s has no parameter %s", pl->info->name, name);
    return -1;
}

static void put(const rm_plan *pl, uint8_t *params, const char *name, uint64_t v)
{
    int i = param(pl, name);
    memcpy(params + pl->p[i].offset, &v, pl->p[i].size < 8 ? pl->p[i].size : 8);
}

static uint64_t get(const rm_plan *pl, const uint8_t *params, const char *name)
{
    int i = param(pl, name);
    uint64_t v = 0;
    memcpy(&v, params + pl->p[i].offset, pl->p[i].size < 8 ? pl->p[i].size : 8);
    return v;
}

/* A Create message run as the library would: it makes 'real' (0: it fails). The number the client gets back. */
static uint64_t create(rm_numtab *t, const char *api, uint64_t real)
{
    const rm_plan *pl = plan(api);
    uint8_t params[256] = {0};
    uint64_t out = 0;
    assert_non_null(pl);
    rm_num_message(t, pl);
    assert_true(pl->num_out_param >= 0);
    put(pl, params, pl->info->params[pl->num_out_param].name, (uint64_t)(uintptr_t)&out);
    assert_int_equal(rm_num_pre(t, pl, params), RM_OK);
    out = real;
    rm_num_post(t, pl, params, real != 0);
    return out;
}

/* One call naming 'value' as parameter 'name': rm_num_pre's answer, and the value the library would get. */
static int use(rm_numtab *t, const char *api, const char *name, uint64_t value, uint64_t *seen)
{
    const rm_plan *pl = plan(api);
    uint8_t params[256] = {0};
    assert_non_null(pl);
    rm_num_message(t, pl);
    put(pl, params, name, value);
    int rc = rm_num_pre(t, pl, params);
    if (seen != NULL)
        *seen = get(pl, params, name);
    rm_num_post(t, pl, params, rc == RM_OK);
    return rc;
}

static int setup(void **state)
{
    rm_meta m;
    (void)state;
    rm_meta_generated(&m);
    plans = rm_plans_build(&m);
    return plans == NULL;
}

static int teardown(void **state)
{
    (void)state;
    rm_plans_free(plans);
    return 0;
}

/* Every by-value parameter of a numbered type is marked, and nothing else; each kind's Create and Destroy. */
static void test_marked(void **state)
{
    uint32_t handles = 0;
    (void)state;
    if (plan("cublasCreate_v2") == NULL)
        skip();
    for (uint32_t i = 0; i < plans->count; i++) {
        const rm_plan *pl = &plans->all[i];
        for (uint32_t k = 0; k < pl->nparams; k++) {
            int kind = rm_numbered_type(pl->info->params[k].type);
            for (size_t r = 0; rm_num_api_at(r) != NULL; r++) {   /* or named by the table: a 'void *' handle */
                const rm_num_api *na = rm_num_api_at(r);
                if (na->role != RM_NUM_MAKE && na->param != NULL && fnmatch(na->glob, pl->info->name, 0) == 0 &&
                    strcmp(na->param, pl->info->params[k].name) == 0)
                    kind = rm_numbered_type(na->type);
            }
            int want = pl->p[k].op == RM_OP_VALUE && pl->p[k].size == 8 ? kind : 0;
            assert_int_equal(pl->p[k].num, want);
            handles += want == 1;
        }
    }
    assert_true(handles > 400);   /* cuBLAS's APIs taking a handle: each one mapped, none by hand */
    for (size_t i = 0; rm_num_api_at(i) != NULL; i++) {   /* each maker and ender of the table, where the tree has it */
        const rm_num_api *na = rm_num_api_at(i);
        const char *name = na->glob[0] == '*' ? na->glob + 1 : na->glob;
        const rm_plan *pl = plan(name);
        if (pl == NULL)
            continue;
        if (na->role == RM_NUM_MAKE) {
            assert_int_equal(pl->num_create, rm_numbered_type(na->type));
            assert_int_equal(pl->num_out_param, param(pl, na->param));
        } else if (na->role == RM_NUM_END) {
            assert_int_equal(pl->num_destroy, rm_numbered_type(na->type));
        }
        if (na->role != RM_NUM_MAKE && na->param != NULL)
            assert_int_equal(pl->p[param(pl, na->param)].num, rm_numbered_type(na->type));
    }
    assert_int_equal(plan("cublasSgemm_v2")->num_create, 0);
}

/* Numbers in message order, the library's object behind each, made-up, destroyed and failed ones refused. */
static void test_handles(void **state)
{
    rm_numtab t;
    uint64_t seen = 0;
    (void)state;
    if (plan("cublasCreate_v2") == NULL)
        skip();
    memset(&t, 0, sizeof t);
    uint64_t h = create(&t, "cublasCreate_v2", 0x1000);
    assert_int_equal(h, rm_ltid(0));
    assert_int_equal(create(&t, "cublasCreate_v2", 0), 0);   /* failed: its number (1) is spent all the same */
    uint64_t h2 = create(&t, "cublasCreate_v2", 0x2000);
    assert_int_equal(h2, rm_ltid(2));
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", h, &seen), RM_OK);
    assert_int_equal(seen, 0x1000);
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", 0, &seen), RM_OK);   /* NULL: the library's answer */
    assert_int_equal(seen, 0);
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", 0x1000, NULL), RM_NUM_BAD_HANDLE);   /* the object */
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", rm_ltid(1), NULL), RM_NUM_BAD_HANDLE);   /* failed */
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", rm_ltid(7), NULL), RM_NUM_BAD_HANDLE);   /* not yet */
    assert_int_equal(use(&t, "cublasDestroy_v2", "handle", h2, &seen), RM_OK);
    assert_int_equal(seen, 0x2000);
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", h2, NULL), RM_NUM_BAD_HANDLE);   /* destroyed */
    assert_int_equal(use(&t, "cublasDestroy_v2", "handle", h2, NULL), RM_NUM_BAD_HANDLE);
    assert_int_equal(t.n, 1);
    /* only Creates take numbers, whatever came between (refused calls too): the next is the 4th, rm_ltid(3) */
    assert_int_equal(create(&t, "cublasLtCreate", 0x3000), rm_ltid(3));
    rm_num_free(&t);
}

/* A number of another kind is not an object of this one. */
static void test_kinds(void **state)
{
    rm_numtab t;
    uint64_t seen = 0;
    (void)state;
    if (plan("cublasLtMatrixLayoutCreate") == NULL)
        skip();
    memset(&t, 0, sizeof t);
    uint64_t h = create(&t, "cublasCreate_v2", 0x1000), lt = create(&t, "cublasLtCreate", 0x2000);
    uint64_t layout = create(&t, "cublasLtMatrixLayoutCreate", 0x3000);
    uint64_t desc = create(&t, "cublasLtMatmulDescCreate", 0x4000);
    assert_int_equal(use(&t, "cublasLtMatmulDescSetAttribute", "matmulDesc", desc, &seen), RM_OK);
    assert_int_equal(seen, 0x4000);
    assert_int_equal(use(&t, "cublasLtMatmulDescSetAttribute", "matmulDesc", layout, NULL), RM_EMALFORMED);
    assert_int_equal(use(&t, "cublasLtMatmulDescSetAttribute", "matmulDesc", h, NULL), RM_EMALFORMED);
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", lt, NULL), RM_NUM_BAD_HANDLE);   /* an Lt handle */
    assert_int_equal(use(&t, "cublasLtMatmulDescDestroy", "matmulDesc", layout, NULL), RM_EMALFORMED);
    assert_int_equal(t.n, 4);   /* the layout was not destroyed as a descriptor */
    rm_num_free(&t);
}

/* A cuBLAS handle's number as a cuBLASLt handle (cuBLAS's documented cast; PyTorch's cuBLASLt handle): the cuBLAS
   handle's object, as the cast gives natively; cublasLtDestroy of it refused as a bad handle and the cuBLAS handle
   still live; a cuBLASLt handle's number as a cuBLAS handle refused (the reverse cast is not allowed). */
static void test_cast(void **state)
{
    rm_numtab t;
    uint64_t seen = 0;
    (void)state;
    if (plan("cublasLtMatmulAlgoGetHeuristic") == NULL || plan("cublasCreate_v2") == NULL)
        skip();
    memset(&t, 0, sizeof t);
    uint64_t h = create(&t, "cublasCreate_v2", 0x1000), lt = create(&t, "cublasLtCreate", 0x2000);
    uint64_t desc = create(&t, "cublasLtMatmulDescCreate", 0x4000);
    assert_int_equal(use(&t, "cublasLtMatmulAlgoGetHeuristic", "lightHandle", h, &seen), RM_OK);
    assert_int_equal(seen, 0x1000);
    assert_int_equal(use(&t, "cublasLtMatmul", "lightHandle", h, &seen), RM_OK);
    assert_int_equal(seen, 0x1000);
    assert_int_equal(use(&t, "cublasLtMatmul", "lightHandle", lt, &seen), RM_OK);
    assert_int_equal(seen, 0x2000);
    assert_int_equal(use(&t, "cublasLtMatmul", "lightHandle", desc, NULL), RM_NUM_BAD_HANDLE);   /* another kind */
    assert_int_equal(use(&t, "cublasLtDestroy", "lightHandle", h, NULL), RM_NUM_BAD_HANDLE);   /* not its Destroy */
    assert_int_equal(t.n, 3);
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", h, &seen), RM_OK);   /* the cuBLAS handle lives */
    assert_int_equal(seen, 0x1000);
    assert_int_equal(use(&t, "cublasLtMatmul", "lightHandle", h, &seen), RM_OK);
    assert_int_equal(use(&t, "cublasGetVersion_v2", "handle", lt, NULL), RM_NUM_BAD_HANDLE);   /* no reverse cast */
    assert_int_equal(use(&t, "cublasDestroy_v2", "handle", lt, NULL), RM_NUM_BAD_HANDLE);
    assert_int_equal(use(&t, "cublasLtDestroy", "lightHandle", lt, &seen), RM_OK);
    assert_int_equal(seen, 0x2000);
    assert_int_equal(use(&t, "cublasDestroy_v2", "handle", h, &seen), RM_OK);
    assert_int_equal(use(&t, "cublasLtMatmul", "lightHandle", h, NULL), RM_NUM_BAD_HANDLE);   /* destroyed */
    assert_int_equal(t.n, 1);
    rm_num_free(&t);
}

/* CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR: its value set is a live emulation descriptor's number, made the
   library's; read back, the library's becomes the number. */
static void test_attr(void **state)
{
    rm_numtab t;
    (void)state;
    const rm_plan *set = plan("cublasLtMatmulDescSetAttribute"), *getp = plan("cublasLtMatmulDescGetAttribute");
    if (set == NULL || set->num_attr_kind == 0 || plan("cublasLtEmulationDescCreate") == NULL)
        skip();
    memset(&t, 0, sizeof t);
    uint64_t desc = create(&t, "cublasLtMatmulDescCreate", 0x4000);
    uint64_t emu = create(&t, "cublasLtEmulationDescCreate", 0x5000);
    uint64_t layout = create(&t, "cublasLtMatrixLayoutCreate", 0x6000);
    uint64_t val = emu;
    uint8_t params[256] = {0};
    put(set, params, "matmulDesc", desc);
    put(set, params, "attr", (uint64_t)set->num_attr_value);
    put(set, params, "buf", (uint64_t)(uintptr_t)&val);
    put(set, params, "sizeInBytes", sizeof val);
    rm_num_message(&t, set);
    assert_int_equal(rm_num_pre(&t, set, params), RM_OK);
    assert_int_equal(val, 0x5000);
    rm_num_post(&t, set, params, 1);
    uint64_t bad[4] = { 0x5000, layout, rm_ltid(40), emu };
    for (int i = 0; i < 4; i++) {   /* the object, another kind's number, one not given; then the wrong size */
        val = bad[i];
        put(set, params, "matmulDesc", desc);
        put(set, params, "sizeInBytes", i == 3 ? 4 : sizeof val);
        rm_num_message(&t, set);
        assert_int_equal(rm_num_pre(&t, set, params), RM_EMALFORMED);
    }
    val = 0;   /* none */
    put(set, params, "matmulDesc", desc);
    put(set, params, "sizeInBytes", sizeof val);
    assert_int_equal(rm_num_pre(&t, set, params), RM_OK);
    assert_int_equal(val, 0);
    /* the getter: the library writes its object, the client reads the number */
    memset(params, 0, sizeof params);
    put(getp, params, "matmulDesc", desc);
    put(getp, params, "attr", (uint64_t)getp->num_attr_value);
    put(getp, params, "buf", (uint64_t)(uintptr_t)&val);
    put(getp, params, "sizeInBytes", sizeof val);
    rm_num_message(&t, getp);
    assert_int_equal(rm_num_pre(&t, getp, params), RM_OK);
    val = 0x5000;
    rm_num_post(&t, getp, params, 1);
    assert_int_equal(val, emu);
    put(getp, params, "matmulDesc", desc);
    assert_int_equal(rm_num_pre(&t, getp, params), RM_OK);
    val = 0x7777;   /* an object the back end did not number: nothing */
    rm_num_post(&t, getp, params, 1);
    assert_int_equal(val, 0);
    rm_num_free(&t);
}

/* NCCL's communicators (docs/remote.md, "NCCL"): every Init and a split's output numbered, in the same count as
   cuBLAS's Creates; a made-up, raw or destroyed (ncclCommDestroy, ncclCommAbort) communicator refused as malformed
   (the client answers ncclInvalidArgument), never a bad handle; ncclCommInitAll not numbered. */
static void test_nccl(void **state)
{
    rm_numtab t;
    uint64_t seen = 0;
    (void)state;
    if (plan("ncclCommInitRank") == NULL)
        skip();
    memset(&t, 0, sizeof t);
    uint64_t c = create(&t, "ncclCommInitRank", 0x1000);
    assert_int_equal(c, rm_ltid(0));
    uint64_t split = create(&t, "ncclCommSplit", 0x2000);   /* its output is its 4th parameter, newcomm */
    assert_int_equal(split, rm_ltid(1));
    if (plan("ncclCommInitRankConfig") != NULL)
        assert_int_equal(create(&t, "ncclCommInitRankConfig", 0x3000), rm_ltid(2));
    assert_int_equal(use(&t, "ncclCommCount", "comm", c, &seen), RM_OK);
    assert_int_equal(seen, 0x1000);
    assert_int_equal(use(&t, "ncclAllReduce", "comm", split, &seen), RM_OK);
    assert_int_equal(seen, 0x2000);
    assert_int_equal(use(&t, "ncclCommCount", "comm", 0x1000, NULL), RM_EMALFORMED);        /* the raw pointer */
    assert_int_equal(use(&t, "ncclCommCount", "comm", rm_ltid(40), NULL), RM_EMALFORMED);   /* made up */
    assert_int_equal(use(&t, "ncclCommDestroy", "comm", c, &seen), RM_OK);
    assert_int_equal(seen, 0x1000);
    assert_int_equal(use(&t, "ncclCommCount", "comm", c, NULL), RM_EMALFORMED);             /* destroyed */
    assert_int_equal(use(&t, "ncclCommDestroy", "comm", c, NULL), RM_EMALFORMED);
    assert_int_equal(use(&t, "ncclCommAbort", "comm", split, &seen), RM_OK);
    assert_int_equal(use(&t, "ncclAllReduce", "comm", split, NULL), RM_EMALFORMED);          /* aborted */
    if (plan("cublasCreate_v2") != NULL) {   /* a number of another kind is not a communicator */
        uint64_t h = create(&t, "cublasCreate_v2", 0x4000);
        assert_int_equal(use(&t, "ncclCommCount", "comm", h, NULL), RM_EMALFORMED);
    }
    if (plan("ncclCommInitAll") != NULL)
        assert_int_equal(plan("ncclCommInitAll")->num_create, 0);
    rm_num_free(&t);
}

/* NCCL's buffer registrations (a 'void *' handle, named by the table) and windows: numbers like communicators, the
   buffer a device address by value; a made-up, a communicator's or a deregistered handle refused. */
static void test_nccl_reg(void **state)
{
    rm_numtab t;
    uint64_t seen = 0;
    (void)state;
    if (plan("ncclCommRegister") == NULL)
        skip();
    memset(&t, 0, sizeof t);
    const rm_plan *reg = plan("ncclCommRegister");
    assert_int_equal(reg->cls, RM_CLASS_HAND);
    assert_int_equal(reg->p[param(reg, "buff")].op, RM_OP_VALUE);
    uint64_t c = create(&t, "ncclCommInitRank", 0x1000);
    uint64_t h = create(&t, "ncclCommRegister", 0x5000);
    assert_int_equal(h, rm_ltid(1));
    assert_int_equal(use(&t, "ncclCommDeregister", "handle", c, NULL), RM_EMALFORMED);      /* a communicator */
    assert_int_equal(use(&t, "ncclCommDeregister", "handle", 0x5000, NULL), RM_EMALFORMED); /* the raw handle */
    assert_int_equal(use(&t, "ncclCommDeregister", "handle", h, &seen), RM_OK);
    assert_int_equal(seen, 0x5000);
    assert_int_equal(use(&t, "ncclCommDeregister", "handle", h, NULL), RM_EMALFORMED);      /* deregistered */
    if (plan("ncclCommWindowRegister") != NULL) {
        uint64_t w = create(&t, "ncclCommWindowRegister", 0x6000);
        assert_int_equal(w, rm_ltid(2));
        assert_int_equal(use(&t, "ncclCommWindowDeregister", "win", h, NULL), RM_EMALFORMED);
        assert_int_equal(use(&t, "ncclCommWindowDeregister", "win", w, &seen), RM_OK);
        assert_int_equal(seen, 0x6000);
        assert_int_equal(use(&t, "ncclCommWindowDeregister", "win", w, NULL), RM_EMALFORMED);
    }
    rm_num_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marked),
        cmocka_unit_test(test_handles),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_attr),
        cmocka_unit_test(test_nccl),
        cmocka_unit_test(test_nccl_reg),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
