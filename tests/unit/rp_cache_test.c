/*
 * rp_cache_test.c - the remote client's cache of immutable answers (plugins/remote/rp_cache.c, docs/remote.md
 * "Answers kept by the client"), against the generated metadata's plans and the codec:
 *   - a kept answer decodes into the program's pointers exactly as the server's reply did;
 *   - another input (another attribute, another device, another buffer size) is another entry;
 *   - a query that can change is never kept (the compute mode; APIs without the trait);
 *   - function attributes are forgotten by a forgetting call, device answers are not;
 *   - an answer asked before a forgetting call is not stored after it (the generation).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rp.h"

void rm_meta_generated(rm_meta *m);

static rm_plans *plans;
static rp_state *st;
static rm_arena arena;

static const rm_plan *plan_named(const char *name)
{
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, name) == 0)
            return &plans->all[i];
    fail_msg("no API %s", name);
    return NULL;
}

/* Three-parameter queries (int *out, an enum, a device or function handle), laid out by the plan's offsets. */
static void *params_of(const rm_plan *pl, uint8_t *buf, int *out, int a, uint64_t h)
{
    memset(buf, 0, 64);
    assert_true(pl->nparams == 3 && pl->info->params_size <= 64);
    memcpy(buf + pl->p[0].offset, &out, sizeof out);
    memcpy(buf + pl->p[1].offset, &a, 4);
    memcpy(buf + pl->p[2].offset, &h, pl->p[2].size);
    return buf;
}

/* The call's payload (the key) and the reply the server would send for it with *out = value. */
static void exchange(const rm_plan *pl, void *p, int value, rm_wr *key, rm_wr *reply, rm_call *cc)
{
    rm_call sc;
    uint32_t status;
    int32_t ok = 0;
    rm_wr_init(key, 0);
    rm_wr_init(reply, 0);
    assert_int_equal(rm_encode_call(pl, p, &st->cx, key, cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, key->p, key->len, &arena, NULL, &sc, &status), RM_OK);
    int *srv;
    memcpy(&srv, sc.params, sizeof srv);
    *srv = value;
    assert_int_equal(rm_encode_reply(&sc, pl->id, RM_ST_OK, &ok, reply), RM_OK);
    rm_arena_reset(&arena);
}

/* Asks through the cache as the plugin does: a hit, or a miss answered by 'value' and kept. */
static int ask(const char *api, int a, uint64_t h, int value, int *out, int forget_between)
{
    const rm_plan *pl = plan_named(api);
    uint8_t buf[64];
    void *p = params_of(pl, buf, out, a, h);
    rm_wr key, reply;
    rm_call cc;
    int32_t ret = -1;
    uint64_t gen;
    exchange(pl, p, value, &key, &reply, &cc);
    int hit = rp_cache_get(st, pl, &key, &cc, &ret, &gen);
    if (!hit) {
        uint32_t status;
        assert_int_equal(rm_decode_reply(&cc, &ret, reply.p, reply.len, &st->cx, &status), RM_OK);
        if (forget_between)
            rp_cache_forget_functions(st);   /* a cuFuncSetAttribute ran while this ask was on the wire */
        rp_cache_put(st, pl, &key, reply.p, reply.len, gen);
    }
    assert_int_equal(ret, 0);
    rm_wr_free(&key);
    rm_wr_free(&reply);
    return hit;
}

static void test_kept_and_keyed(void **state)
{
    (void)state;
    int v = 0;
    assert_false(ask("cuDeviceGetAttribute", 1, 0, 1024, &v, 0));   /* CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    assert_int_equal(v, 1024);
    v = 0;
    assert_true(ask("cuDeviceGetAttribute", 1, 0, 9999, &v, 0));    /* the kept answer, not a new one */
    assert_int_equal(v, 1024);
    assert_false(ask("cuDeviceGetAttribute", 2, 0, 7, &v, 0));      /* another attribute */
    assert_int_equal(v, 7);
    assert_false(ask("cuDeviceGetAttribute", 1, 1, 512, &v, 0));    /* another device */
    assert_int_equal(v, 512);
    assert_true(ask("cuDeviceGetAttribute", 1, 0, 0, &v, 0));
    assert_int_equal(v, 1024);
}

static void test_never_kept(void **state)
{
    (void)state;
    int v = 0;
    /* CU_DEVICE_ATTRIBUTE_COMPUTE_MODE (20): nvidia-smi can change it */
    assert_false(ask("cuDeviceGetAttribute", 20, 0, 0, &v, 0));
    assert_false(ask("cuDeviceGetAttribute", 20, 0, 3, &v, 0));
    assert_int_equal(v, 3);
    /* an API without the trait is never kept: its plan says so, and rp_cache_get refuses it */
    assert_int_equal(plan_named("cuMemGetInfo_v2")->cache, RM_CACHE_NO);
}

static void test_function_scope(void **state)
{
    (void)state;
    int v = 0;
    assert_false(ask("cuFuncGetAttribute", 1, 0x77, 48, &v, 0));
    assert_true(ask("cuFuncGetAttribute", 1, 0x77, 0, &v, 0));
    assert_int_equal(v, 48);
    assert_false(ask("cuDeviceGetAttribute", 5, 0, 55, &v, 0));
    rp_cache_forget_functions(st);   /* cuFuncSetAttribute, cuModuleUnload... */
    assert_false(ask("cuFuncGetAttribute", 1, 0x77, 64, &v, 0));   /* asked again: the new value */
    assert_int_equal(v, 64);
    assert_true(ask("cuDeviceGetAttribute", 5, 0, 0, &v, 0));     /* device answers survive */
    assert_int_equal(v, 55);
    /* an answer on the wire while the attributes were set is not kept */
    assert_false(ask("cuFuncGetAttribute", 2, 0x77, 1, &v, 1));
    assert_false(ask("cuFuncGetAttribute", 2, 0x77, 2, &v, 0));
    assert_int_equal(v, 2);
}

static int setup(void **state)
{
    (void)state;
    rm_meta m;
    rm_meta_generated(&m);
    plans = rm_plans_build(&m);
    st = calloc(1, sizeof *st);
    if (plans == NULL || st == NULL || rm_arena_init(&arena, 1u << 20) != 0)
        return -1;
    pthread_mutex_init(&st->clock, NULL);
    st->plans = plans;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rp_cache_free(st);
    free(st);
    rm_plans_free(plans);
    rm_arena_destroy(&arena);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_and_keyed),
        cmocka_unit_test(test_never_kept),
        cmocka_unit_test(test_function_scope),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
