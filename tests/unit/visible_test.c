/*
 * visible_test.c - the physical GPU of a CUDA ordinal by CUDA_VISIBLE_DEVICES (plugins/common/visible.c), the
 * index memlimit's budgets and smlimit's groups are kept by: unset and empty are the identity, numeric lists in
 * any order and with spaces map by position, past the list and negative ordinals have none, and a list that is
 * not all numbers (UUIDs, MIG names, a number then a UUID, junk) cannot be mapped by index.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "visible.h"

static void test_identity(void **state)
{
    (void)state;
    assert_int_equal(vis_physical(NULL, 0), 0);
    assert_int_equal(vis_physical(NULL, 5), 5);
    assert_int_equal(vis_physical("", 3), 3);
    assert_int_equal(vis_physical("  ", 1), 1);
    assert_int_equal(vis_physical(NULL, -1), -1);
}

static void test_reordered(void **state)
{
    (void)state;
    assert_int_equal(vis_physical("1,0", 0), 1);
    assert_int_equal(vis_physical("1,0", 1), 0);
    assert_int_equal(vis_physical("2,0", 0), 2);
    assert_int_equal(vis_physical("2,0", 1), 0);
    assert_int_equal(vis_physical("2,0", 2), -1);   /* past the list */
    assert_int_equal(vis_physical(" 3 , 1,2 ", 1), 1);
    assert_int_equal(vis_physical("3,1,2", 2), 2);
    assert_int_equal(vis_physical("7", 0), 7);
    assert_int_equal(vis_physical("1,0", -1), -1);
}

static void test_not_by_index(void **state)
{
    (void)state;
    assert_int_equal(vis_physical("GPU-8a3c1d2e-0000-1111-2222-333344445555", 0), -1);
    assert_int_equal(vis_physical("MIG-GPU-8a3c1d2e/1/0", 0), -1);
    assert_int_equal(vis_physical("0,GPU-8a3c1d2e", 0), -1);   /* every index unknown, the first too */
    assert_int_equal(vis_physical("1;0", 0), -1);
    assert_int_equal(vis_physical("-1", 0), -1);
    assert_int_equal(vis_physical("99999999999999999999", 0), -1);
    assert_int_equal(vis_physical("1,,0", 1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_reordered),
        cmocka_unit_test(test_not_by_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
