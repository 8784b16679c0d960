/* trace_link_test.c - tr_link.c: a runtime call CUPTI reports, linked to the traced call inside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tr_link.h"   /* built with TR_LINK_KEEP=16384 (plugins.cmake), so that the bound is reached */

/* cudaLaunchKernel on thread 7 over [100, 200]; our cuLaunchKernel entered at 150 */
static void test_call_inside_runtime_record(void **state)
{
    tr_link l = {0};
    (void)state;
    assert_int_equal(tr_link_call(&l, 7, 0x7000, 150, 555), 0);
    assert_int_equal(tr_link_find(&l, 7, 100, 200), 555);
    assert_int_equal(tr_link_find(&l, 0x7000, 100, 200), 555);   /* CUPTI naming the thread by pthread_self */
    tr_link_free(&l);
}

static void test_other_thread_or_time(void **state)
{
    tr_link l = {0};
    (void)state;
    tr_link_call(&l, 7, 0x7000, 150, 555);
    assert_int_equal(tr_link_find(&l, 8, 100, 200), 0);     /* another thread */
    assert_int_equal(tr_link_find(&l, 7, 151, 300), 0);     /* entered before the runtime call began */
    assert_int_equal(tr_link_find(&l, 7, 0, 149), 0);       /* after it ended */
    assert_int_equal(tr_link_find(&l, 7, 150, 150), 555);   /* bounds included */
    tr_link_free(&l);
}

/* many calls per thread, two threads interleaved in time, a nested call rendered before its parent */
static void test_many_calls_two_threads(void **state)
{
    tr_link l = {0};
    (void)state;
    for (uint64_t i = 0; i < 10000; i++) {
        assert_int_equal(tr_link_call(&l, 1, 11, i * 100 + 10, 1000000 + i), 0);
        assert_int_equal(tr_link_call(&l, 2, 22, i * 100 + 20, 2000000 + i), 0);
    }
    tr_link_call(&l, 1, 11, 5, 999);   /* out of order: kept sorted */
    for (uint64_t i = 997; i < 10000; i += 997) {
        assert_int_equal(tr_link_find(&l, 1, i * 100, i * 100 + 50), 1000000 + i);
        assert_int_equal(tr_link_find(&l, 2, i * 100, i * 100 + 50), 2000000 + i);
        assert_int_equal(tr_link_find(&l, 1, i * 100 + 11, i * 100 + 99), 0);
    }
    assert_int_equal(tr_link_find(&l, 1, 0, 6), 999);
    assert_int_equal(tr_link_find(&l, 1, 0, 50), 999);   /* the first call inside wins */
    tr_link_free(&l);
}

static void test_defer_keeps_records(void **state)
{
    tr_link l = {0};
    (void)state;
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(tr_link_defer(&l, i, 7, i * 10, i * 10 + 5), 0);
    assert_int_equal(l.npend, 1000);
    assert_int_equal(l.pend[999].corr, 999);
    assert_int_equal(l.pend[999].start, 9990);
    tr_link_call(&l, 7, 0, 9992, 42);   /* its call came later: the finish retries the record */
    assert_int_equal(tr_link_find(&l, l.pend[999].tid, l.pend[999].start, l.pend[999].end), 42);
    for (uint32_t i = 0; i < 100000; i++)   /* records that never match: bounded */
        assert_int_equal(tr_link_defer(&l, i, 9, i, i), 0);
    assert_true(l.npend <= TR_LINK_KEEP);
    assert_int_equal(l.pend[l.npend - 1].corr, 99999);
    tr_link_free(&l);
    assert_int_equal(l.npend, 0);
}

/* a thread's table stays bounded; the newest calls are still found, the oldest are gone */
static void test_bounded(void **state)
{
    tr_link l = {0};
    (void)state;
    for (uint64_t i = 0; i < 100000; i++)
        assert_int_equal(tr_link_call(&l, 3, 0, i * 10, i + 1), 0);
    assert_true(l.thr[0].n <= TR_LINK_KEEP);
    assert_true(l.thr[0].cap <= TR_LINK_KEEP * 2);
    assert_int_equal(tr_link_find(&l, 3, 999990, 999999), 100000);
    assert_int_equal(tr_link_find(&l, 3, 0, 9), 0);
    tr_link_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_inside_runtime_record),
        cmocka_unit_test(test_other_thread_or_time),
        cmocka_unit_test(test_many_calls_two_threads),
        cmocka_unit_test(test_defer_keeps_records),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
