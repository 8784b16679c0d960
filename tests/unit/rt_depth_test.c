/*
 * rt_depth_test.c - nesting on one thread: CUDA calls made from a hook go
 * straight to the real function; calls made by the real function of a hooked
 * call (cudart calling the driver) are hooked like any other, so a hook on a
 * runtime API never hides the driver calls beneath it, and their frame says so
 * (depth 1, parent = the enclosing call's frame).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static int version_real_calls, version_hook_calls, init_real_calls;
static uint32_t last_depth;
static const cushim_call *last_parent;
static uint32_t last_parent_api;
static uint64_t init_seq, last_parent_seq;

static CUresult fake_get_version(int *v)
{
    version_real_calls++;
    *v = 13000;
    return CUDA_SUCCESS;
}

/* Like cudart calling the driver from inside its own function. */
static CUresult fake_init(unsigned int flags)
{
    (void)flags;
    init_real_calls++;
    int v;
    return cuDriverGetVersion(&v);
}

static int pre_version(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    version_hook_calls++;
    last_depth = c->depth;
    last_parent = c->parent;
    last_parent_api = c->parent ? c->parent->api_id : 0;
    last_parent_seq = c->parent ? c->parent->seq : 0;
    return CUSHIM_CONTINUE;
}

static int pre_init_calls_cuda(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    assert_true(rt_in_hook());
    assert_int_equal(c->depth, 0);
    init_seq = c->seq;
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);   /* hooked API, from a hook */
    assert_int_equal(v, 13000);
    return CUSHIM_CONTINUE;
}

static void test_depth(void **state)
{
    (void)state;
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuInit, (void *)fake_init);
    cushim_plugin *p = rt_test_plugin("depth-test");
    const cushim_host *host = rt_host();
    uint64_t h1, h2;
    assert_int_equal(rt_hook(p, CUSHIM_API_cuDriverGetVersion, 0, pre_version, NULL, NULL, &h1), CUSHIM_OK);
    assert_int_equal(rt_hook(p, CUSHIM_API_cuInit, 0, pre_init_calls_cuda, NULL, NULL, &h2), CUSHIM_OK);

    int v;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(version_hook_calls, 1);               /* top-level call: hooked */
    assert_int_equal(version_real_calls, 1);
    assert_int_equal(last_depth, 0);
    assert_null(last_parent);

    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(init_real_calls, 1);
    assert_int_equal(version_real_calls, 3);               /* from the hook and from the real */
    assert_int_equal(version_hook_calls, 2);               /* the real's call was hooked, the hook's not */
    assert_int_equal(last_depth, 1);                       /* nested in cuInit */
    assert_non_null(last_parent);
    assert_int_equal(last_parent_api, CUSHIM_API_cuInit);
    assert_int_equal(last_parent_seq, init_seq);
    assert_false(rt_in_hook());
    assert_null(host->current_call());

    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(version_hook_calls, 3);
    assert_int_equal(last_depth, 0);
    assert_int_equal(host->hooks_remove(p, h1), CUSHIM_OK);
    assert_int_equal(host->hooks_remove(p, h2), CUSHIM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_depth) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
