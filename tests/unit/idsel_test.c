/*
 * idsel_test.c - the selector of API ids built one at a time (plugins/common/idsel.c), which memlimit, the
 * flight recorder and the trace hand to hooks_add: empty is NULL; "id:N" first, ",id:N" after; every digit of
 * 0 and UINT32_MAX; room for the terminator when the text fills the buffer; thousands of ids (the buffer grown many times) equal to the text printf writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idsel.h"

static void test_empty(void **state)
{
    idsel b = {0};
    (void)state;
    assert_null(b.s);
    idsel_free(&b);
    assert_null(b.s);
    assert_int_equal(b.len, 0);
}

static void test_few(void **state)
{
    idsel b = {0};
    (void)state;
    assert_int_equal(idsel_add(&b, 0), 0);
    assert_string_equal(b.s, "id:0");
    assert_int_equal(b.len, 4);
    assert_int_equal(idsel_add(&b, 42), 0);
    assert_int_equal(idsel_add(&b, UINT32_MAX), 0);
    assert_int_equal(idsel_add(&b, 1000000007u), 0);
    assert_string_equal(b.s, "id:0,id:42,id:4294967295,id:1000000007");
    assert_int_equal(b.len, strlen(b.s));
    idsel_free(&b);
    assert_null(b.s);
    assert_int_equal(idsel_add(&b, 7), 0);   /* usable again, first again */
    assert_string_equal(b.s, "id:7");
    idsel_free(&b);
}

/* A selector whose text ends exactly where the buffer would: room for the terminator too. */
static void test_exact_fill(void **state)
{
    idsel b = {0};
    (void)state;
    for (uint32_t i = 0; i < 200; i++) {
        assert_int_equal(idsel_add(&b, i == 0 ? 0 : 10 + i % 90), 0);   /* 4 bytes, then 6 each: 256 at 43 ids */
        assert_true(b.cap > b.len);
        assert_int_equal(b.s[b.len], '\0');
    }
    idsel_free(&b);
}

static void test_many(void **state)
{
    idsel b = {0};
    size_t cap = 1 << 20, len = 0;
    char *want = malloc(cap);
    (void)state;
    assert_non_null(want);
    want[0] = '\0';
    for (uint32_t i = 0; i < 20000; i++) {
        uint32_t id = i * 2654435761u;   /* every length of number, in no order */
        len += (size_t)snprintf(want + len, cap - len, "%sid:%u", i != 0 ? "," : "", id);
        assert_true(len < cap);
        assert_int_equal(idsel_add(&b, id), 0);
        assert_int_equal(b.len, len);
        assert_true(b.cap > b.len);
    }
    assert_string_equal(b.s, want);
    free(want);
    idsel_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_few),
        cmocka_unit_test(test_exact_fill),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
