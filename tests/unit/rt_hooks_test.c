/*
 * rt_hooks_test.c - hook chains: order by priority, skip, result override,
 * parameter modification, per-hook slots, removal, limits, the call frame,
 * and the error value when no real function exists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"

static int real_calls;
static CUresult fake_get_version(int *v)
{
    real_calls++;
    *v = 13000;
    return CUDA_SUCCESS;
}

static char trace[256];
static void tr(char c)
{
    size_t n = strlen(trace);
    trace[n] = c;
    trace[n + 1] = '\0';
}

static int pre_tag(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c;
    tr(*(const char *)user);
    *slot = (uint64_t)*(const char *)user;
    return CUSHIM_CONTINUE;
}

static void post_tag(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c;
    char t = *(const char *)user;
    assert_int_equal(*slot, (uint64_t)t);   /* each hook has its own slot */
    tr((char)(t - 'a' + 'A'));
}

static int group_setup(void **state)
{
    (void)state;
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    return 0;
}

static void reset(void)
{
    trace[0] = '\0';
    real_calls = 0;
}

static void test_no_hook(void **state)
{
    (void)state;
    reset();
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(v, 13000);
    assert_int_equal(real_calls, 1);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
}

static void test_priority_order(void **state)
{
    (void)state;
    reset();
    uint64_t h[3];
    static const char a = 'a', b = 'b', c = 'c';
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 10, pre_tag, post_tag, (void *)&a, &h[0]), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, -5, pre_tag, post_tag, (void *)&b, &h[1]), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 10, pre_tag, post_tag, (void *)&c, &h[2]), CUSHIM_OK);
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_string_equal(trace, "bacCAB");
    assert_int_equal(real_calls, 1);
    assert_int_equal(v, 13000);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cushim_hook_remove(h[i]), CUSHIM_OK);
    assert_int_equal(cushim_hook_remove(h[1]), CUSHIM_ENOENT);
    reset();
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_string_equal(trace, "");
    assert_int_equal(real_calls, 1);
}

static int pre_skip(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    tr('s');
    cushim_call_set_result(c, 999);
    return CUSHIM_SKIP;
}

static void post_skip(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    assert_true(c->flags & CUSHIM_CALL_SKIPPED);
    tr('S');
}

static void test_skip(void **state)
{
    (void)state;
    reset();
    static const char a = 'a', z = 'z';
    uint64_t h1, h2, h3;
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 0, pre_tag, post_tag, (void *)&a, &h1), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 1, pre_skip, post_skip, NULL, &h2), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 2, pre_tag, post_tag, (void *)&z, &h3), CUSHIM_OK);
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), 999);
    assert_int_equal(real_calls, 0);
    assert_int_equal(v, 0);
    assert_string_equal(trace, "asSA");   /* 'z' never saw the call */
    cushim_hook_remove(h1);
    cushim_hook_remove(h2);
    cushim_hook_remove(h3);
}

static void post_override(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    assert_int_equal(cushim_call_result(c), CUDA_SUCCESS);
    cushim_call_set_result(c, CUDA_ERROR_INVALID_VALUE);
}

static int other_int;
static int pre_redirect(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    cushim_params_cuDriverGetVersion *p = c->params;
    p->driverVersion = &other_int;
    assert_int_equal(c->api_id, CUSHIM_API_cuDriverGetVersion);
    assert_non_null(c->info);
    assert_string_equal(c->info->name, "cuDriverGetVersion");
    assert_ptr_equal(c->real, (void *)fake_get_version);
    return CUSHIM_CONTINUE;
}

static void test_override_and_params(void **state)
{
    (void)state;
    reset();
    uint64_t h1, h2;
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 0, pre_redirect, NULL, NULL, &h1), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 0, NULL, post_override, NULL, &h2), CUSHIM_OK);
    int v = 0;
    other_int = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(v, 0);
    assert_int_equal(other_int, 13000);
    assert_int_equal(real_calls, 1);
    cushim_hook_remove(h1);
    cushim_hook_remove(h2);
}

static void test_errors_and_limit(void **state)
{
    (void)state;
    uint64_t h[CUSHIM_MAX_HOOKS + 1];
    static const char a = 'a';
    assert_int_equal(cushim_hook_add(0, 0, pre_tag, NULL, NULL, &h[0]), CUSHIM_EINVAL);
    assert_int_equal(cushim_hook_add(CUSHIM_API_ID_LIMIT, 0, pre_tag, NULL, NULL, &h[0]), CUSHIM_EINVAL);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 0, NULL, NULL, NULL, &h[0]), CUSHIM_EINVAL);
    assert_int_equal(cushim_hook_remove(0), CUSHIM_ENOENT);
    assert_int_equal(cushim_hook_remove(((uint64_t)CUSHIM_API_cuDriverGetVersion << 32) | 0xfffffffu), CUSHIM_ENOENT);
    for (int i = 0; i < CUSHIM_MAX_HOOKS; i++)
        assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, i, pre_tag, post_tag, (void *)&a, &h[i]), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 0, pre_tag, NULL, (void *)&a, &h[CUSHIM_MAX_HOOKS]), CUSHIM_ELIMIT);
    reset();
    int v;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(strlen(trace), 2 * CUSHIM_MAX_HOOKS);
    for (int i = CUSHIM_MAX_HOOKS - 1; i >= 0; i--)
        assert_int_equal(cushim_hook_remove(h[i]), CUSHIM_OK);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
}

static void test_metadata(void **state)
{
    (void)state;
    assert_int_equal(cushim_api_id_limit(), CUSHIM_API_ID_LIMIT);
    const cushim_api_info *i = cushim_api_by_name("cuDriverGetVersion");
    assert_non_null(i);
    assert_int_equal(i->id, CUSHIM_API_cuDriverGetVersion);
    assert_ptr_equal(cushim_api_by_id(CUSHIM_API_cuDriverGetVersion), i);
    assert_null(cushim_api_by_name("cuNoSuchFunction"));
    assert_null(cushim_api_by_id(0));
    assert_null(cushim_api_by_id(CUSHIM_API_ID_LIMIT));
    for (uint32_t k = 0; k < cushim_gen_api_count; k++)
        assert_ptr_equal(cushim_api_by_name(cushim_gen_apis[k].name), &cushim_gen_apis[k]);
}

/* No cudart is loaded in this process: runtime calls fail with the documented values. */
static void test_missing_real(void **state)
{
    (void)state;
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorSymbolNotFound);
    assert_null(cudaGetErrorString(cudaSuccess));
    struct cudaChannelFormatDesc d = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    assert_int_equal(d.x, 0);
    assert_int_equal(d.w, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_hook),
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_override_and_params),
        cmocka_unit_test(test_errors_and_limit),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_missing_real),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
