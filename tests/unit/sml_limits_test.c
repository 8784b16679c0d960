/*
 * sml_limits_test.c - reading smlimit's limits (plugins/smlimit/limitspec.c): the 'limit'
 * option's forms and its errors, and HAMi-core's CUDA_DEVICE_SM_LIMIT[_<i>] with the
 * meaning HAMi-core gives them (per device first, unset or 0 = none, above 100 = none); the
 * priorities' forms (the option, CUDA_TASK_PRIORITY and 'cushim limit --priority').
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "limitspec.h"
#include "shm.h"

static void parse_ok(const char *text, const double *want, int n)
{
    double out[SML_LIMIT_DEVICES];
    char err[200] = "";
    if (sml_parse_limits(text, out, err, sizeof err) != 0) {
        print_error("'%s': %s\n", text, err);
        fail();
    }
    for (int i = 0; i < SML_LIMIT_DEVICES; i++)
        if (out[i] != want[i < n ? i : n - 1]) {
            print_error("'%s': device %d got %g, want %g\n", text, i, out[i], want[i < n ? i : n - 1]);
            fail();
        }
}

static void parse_bad(const char *text, const char *needle)
{
    double out[SML_LIMIT_DEVICES];
    char err[200] = "";
    assert_int_equal(sml_parse_limits(text, out, err, sizeof err), -1);
    if (strstr(err, needle) == NULL) {
        print_error("'%s': message '%s' lacks '%s'\n", text, err, needle);
        fail();
    }
}

static void test_option(void **state)
{
    (void)state;
    parse_ok("30", (const double[]){30}, 1);
    parse_ok("30%", (const double[]){30}, 1);
    parse_ok("12.5", (const double[]){12.5}, 1);
    parse_ok("0:30,1:50", (const double[]){30, 50, 0}, 3);
    parse_ok(" 0:30 , 1:50% ", (const double[]){30, 50, 0}, 3);
    parse_ok("40,1:50", (const double[]){40, 50, 40}, 3);
    parse_ok("1:50,40", (const double[]){40, 50, 40}, 3);
    parse_ok("100", (const double[]){100}, 1);
    parse_ok("0", (const double[]){0}, 1);
    parse_bad("", "cannot read");
    parse_bad("abc", "cannot read");
    parse_bad("30x", "cannot read");
    parse_bad("0:", "cannot read");
    parse_bad("101", "not a percentage");
    parse_bad("-1", "not a percentage");
    parse_bad("nan", "not a percentage");
    parse_bad("16:30", "0..15");
    parse_bad("1.5:30", "0..15");
    parse_bad("nan:30", "0..15");   /* was converted to an integer first: undefined for a NaN */
    parse_bad("inf:30", "0..15");
}

static const char *env_table[8][2];

static const char *fake_getenv(const char *name)
{
    for (int i = 0; i < 8 && env_table[i][0] != NULL; i++)
        if (!strcmp(env_table[i][0], name))
            return env_table[i][1];
    return NULL;
}

static int env_read(double out[SML_LIMIT_DEVICES], char *err, size_t errlen)
{
    return sml_env_limits(fake_getenv, out, err, errlen);
}

static void test_hami_env(void **state)
{
    double out[SML_LIMIT_DEVICES];
    char err[200] = "";
    (void)state;
    memset(env_table, 0, sizeof env_table);
    assert_int_equal(env_read(out, err, sizeof err), 0);
    for (int i = 0; i < SML_LIMIT_DEVICES; i++)
        assert_true(out[i] == 0);
    env_table[0][0] = "CUDA_DEVICE_SM_LIMIT";
    env_table[0][1] = "30";
    env_table[1][0] = "CUDA_DEVICE_SM_LIMIT_2";
    env_table[1][1] = "50";
    env_table[2][0] = "CUDA_DEVICE_SM_LIMIT_3";
    env_table[2][1] = "0";      /* 0 per device: the general value applies, as in HAMi-core */
    env_table[3][0] = "CUDA_DEVICE_SM_LIMIT_4";
    env_table[3][1] = "250";    /* above 100: no limit */
    assert_int_equal(env_read(out, err, sizeof err), 0);
    assert_true(out[0] == 30 && out[1] == 30 && out[2] == 50 && out[3] == 30 && out[4] == 100 && out[15] == 30);
    env_table[0][1] = "thirty";
    assert_int_equal(env_read(out, err, sizeof err), -1);
    assert_non_null(strstr(err, "CUDA_DEVICE_SM_LIMIT='thirty'"));
    env_table[0][1] = "";       /* empty = unset */
    env_table[1][1] = "5O";
    assert_int_equal(env_read(out, err, sizeof err), -1);
    assert_non_null(strstr(err, "CUDA_DEVICE_SM_LIMIT_2"));
}

static void test_priority(void **state)
{
    int p = -7;
    (void)state;
    assert_int_equal(sml_parse_priority(NULL, &p), 1);
    assert_int_equal(sml_parse_priority("", &p), 1);
    assert_int_equal(p, -7);   /* not given: untouched */
    assert_int_equal(sml_parse_priority("high", &p), 0);
    assert_int_equal(p, SML_PRIO_HIGH);
    assert_int_equal(sml_parse_priority("Normal", &p), 0);
    assert_int_equal(p, SML_PRIO_NORMAL);
    assert_int_equal(sml_parse_priority("LOW", &p), 0);
    assert_int_equal(p, SML_PRIO_LOW);
    /* HAMi's numbers: lower is higher */
    assert_int_equal(sml_parse_priority("0", &p), 0);
    assert_int_equal(p, SML_PRIO_HIGH);
    assert_int_equal(sml_parse_priority("-3", &p), 0);
    assert_int_equal(p, SML_PRIO_HIGH);
    assert_int_equal(sml_parse_priority("1", &p), 0);
    assert_int_equal(p, SML_PRIO_NORMAL);
    assert_int_equal(sml_parse_priority("2", &p), 0);
    assert_int_equal(p, SML_PRIO_LOW);
    assert_int_equal(sml_parse_priority("9", &p), 0);
    assert_int_equal(p, SML_PRIO_LOW);
    p = -7;
    assert_int_equal(sml_parse_priority("highest", &p), -1);
    assert_int_equal(sml_parse_priority("1x", &p), -1);
    assert_int_equal(sml_parse_priority("off", &p), -1);   /* the tool's 'off' is its own word */
    assert_int_equal(sml_parse_priority("99999999999999999999", &p), -1);
    assert_int_equal(p, -7);
    assert_string_equal(sml_priority_name(SML_PRIO_HIGH), "high");
    assert_string_equal(sml_priority_name(SML_PRIO_LOW), "low");
    assert_string_equal(sml_priority_name(-1), "none");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option),
        cmocka_unit_test(test_hami_env),
        cmocka_unit_test(test_priority),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
