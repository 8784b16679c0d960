/*
 * rt_depth_test.c - the thread-local depth guard: CUDA calls made from a hook
 * go straight to the real function; calls made by the real function of a
 * hooked call (cudart calling the driver) are hooked like any other, so a
 * hook on a runtime API never hides the driver calls beneath it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"

static int version_real_calls, version_hook_calls, init_real_calls;

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
    (void)c;
    (void)user;
    (void)slot;
    version_hook_calls++;
    return CUSHIM_CONTINUE;
}

static int pre_init_calls_cuda(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c;
    (void)user;
    (void)slot;
    assert_int_equal(rt_depth_get(), 1);
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
    uint64_t h1, h2;
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuDriverGetVersion, 0, pre_version, NULL, NULL, &h1), CUSHIM_OK);
    assert_int_equal(cushim_hook_add(CUSHIM_API_cuInit, 0, pre_init_calls_cuda, NULL, NULL, &h2), CUSHIM_OK);

    int v;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(version_hook_calls, 1);               /* top-level call: hooked */
    assert_int_equal(version_real_calls, 1);

    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(init_real_calls, 1);
    assert_int_equal(version_real_calls, 3);               /* from the hook and from the real */
    assert_int_equal(version_hook_calls, 2);               /* the real's call was hooked, the hook's not */
    assert_int_equal(rt_depth_get(), 0);

    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(version_hook_calls, 3);
    cushim_hook_remove(h1);
    cushim_hook_remove(h2);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_depth) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
