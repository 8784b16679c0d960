/* trace_nest_test.c - tr_nest.c: a runtime call's CUPTI record linked to the driver call inside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tr_nest.h"

static tr_nest *fresh(void)
{
    tr_nest *n = calloc(1, sizeof *n);
    assert_non_null(n);
    return n;
}

/* cudaLaunchKernel (corr 10, thread 7, [100, 200]) around cuLaunchKernel (corr 11, [120, 180], our id 555) */
static void test_runtime_takes_nested_driver_id(void **state)
{
    tr_nest *n = fresh();
    (void)state;
    tr_nest_ext(n, 11, 555);
    assert_int_equal(tr_nest_driver(n, 7, 11, 120, 180), 555);
    assert_int_equal(tr_nest_runtime(n, 7, 10, 100, 200), 555);
    free(n);
}

static void test_other_thread_or_time_not_linked(void **state)
{
    tr_nest *n = fresh();
    (void)state;
    tr_nest_ext(n, 11, 555);
    tr_nest_driver(n, 7, 11, 120, 180);
    assert_int_equal(tr_nest_runtime(n, 8, 10, 100, 200), 0);   /* another thread */
    assert_int_equal(tr_nest_runtime(n, 7, 12, 190, 300), 0);   /* driver call not inside */
    assert_int_equal(tr_nest_runtime(n, 7, 13, 130, 170), 0);   /* runtime call inside the driver call */
    free(n);
}

static void test_driver_without_our_id_ignored(void **state)
{
    tr_nest *n = fresh();
    (void)state;
    assert_int_equal(tr_nest_driver(n, 7, 11, 120, 180), 0);   /* cuCtxGetCurrent: no external id */
    assert_int_equal(tr_nest_runtime(n, 7, 10, 100, 200), 0);
    free(n);
}

/* the shim saw the runtime call itself (its own external id): no second link */
static void test_direct_runtime_link_stands(void **state)
{
    tr_nest *n = fresh();
    (void)state;
    tr_nest_ext(n, 11, 556);   /* driver, nested */
    tr_nest_driver(n, 7, 11, 120, 180);
    tr_nest_ext(n, 10, 555);   /* runtime, direct */
    assert_int_equal(tr_nest_runtime(n, 7, 10, 100, 200), 0);
    free(n);
}

/* the last driver call inside wins; an external id is used once */
static void test_last_nested_and_once(void **state)
{
    tr_nest *n = fresh();
    (void)state;
    tr_nest_ext(n, 11, 1001);
    tr_nest_driver(n, 7, 11, 110, 120);
    tr_nest_ext(n, 12, 1002);
    tr_nest_driver(n, 7, 12, 130, 140);
    assert_int_equal(tr_nest_runtime(n, 7, 10, 100, 200), 1002);
    assert_int_equal(tr_nest_driver(n, 7, 12, 130, 140), 0);   /* its id was taken */
    free(n);
}

/* many threads and many records: bounded tables, never a wrong link */
static void test_bounded_never_wrong(void **state)
{
    tr_nest *n = fresh();
    (void)state;
    for (uint32_t t = 1; t <= 1000; t++) {
        uint64_t base = (uint64_t)t * 1000;
        tr_nest_ext(n, t * 2 + 1, 10000 + t);
        assert_int_equal(tr_nest_driver(n, t, t * 2 + 1, base + 10, base + 20), 10000 + t);
        assert_int_equal(tr_nest_runtime(n, t, t * 2, base, base + 30), 10000 + t);
    }
    for (uint32_t t = 1; t <= 1000; t++) {
        uint64_t base = (uint64_t)t * 1000;
        uint64_t got = tr_nest_runtime(n, t, t * 2, base, base + 30);
        assert_true(got == 0 || got == 10000 + t);
    }
    free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_takes_nested_driver_id),
        cmocka_unit_test(test_other_thread_or_time_not_linked),
        cmocka_unit_test(test_driver_without_our_id_ignored),
        cmocka_unit_test(test_direct_runtime_link_stands),
        cmocka_unit_test(test_last_nested_and_once),
        cmocka_unit_test(test_bounded_never_wrong),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
