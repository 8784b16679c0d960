/*
 * rt_cfg_parse_test.c - the configuration value parser (env_parse) and the
 * quoting of values in log lines (env_quote): what is accepted, in any case,
 * and that every rejection names the variable, the quoted value, the reason
 * and what is done instead. The environment itself: rt_cfg_env_test.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rt_internal.h"

static int parse(int var, const char *v, char *msg)
{
    int out = -12345;
    int r = env_parse(var, v, &out, msg, 600);
    assert_true(r == 0 || r == -1);
    assert_int_not_equal(out, -12345);
    assert_true(r == 0 ? msg[0] == '\0' : msg[0] != '\0');
    return r == 0 ? out : -100 - out;   /* rejected: -100 - the default used */
}

static void test_disable(void **state)
{
    (void)state;
    char msg[600];
    static const char *const on[] = { "1", "true", "TRUE", "True", "yes", "Yes", "on", "ON" };
    static const char *const off[] = { "0", "false", "FALSE", "no", "No", "off", "Off", "" };
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
        assert_int_equal(parse(ENV_VAR_DISABLE, on[i], msg), 1);
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        assert_int_equal(parse(ENV_VAR_DISABLE, off[i], msg), 0);
    /* anything else: rejected, the shim stays enabled */
    static const char *const bad[] = { "2", "maybe", "y", "tru", "1 ", " 0", "enable", "-1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(ENV_VAR_DISABLE, bad[i], msg), -100);
        assert_non_null(strstr(msg, "CUSHIM_DISABLE=\""));
        assert_non_null(strstr(msg, "not a boolean"));
        assert_non_null(strstr(msg, "stays enabled"));
    }
    assert_int_equal(parse(ENV_VAR_DISABLE, "maybe", msg), -100);
    assert_string_equal(msg, "CUSHIM_DISABLE=\"maybe\": not a boolean (1/0, true/false, yes/no, on/off, any case); "
                             "the shim stays enabled");
}

static void test_log_level(void **state)
{
    (void)state;
    char msg[600];
    assert_int_equal(parse(ENV_VAR_LOG, "debug", msg), LOG_DEBUG);
    assert_int_equal(parse(ENV_VAR_LOG, "DEBUG", msg), LOG_DEBUG);
    assert_int_equal(parse(ENV_VAR_LOG, "Info", msg), LOG_INFO);
    assert_int_equal(parse(ENV_VAR_LOG, "warn", msg), LOG_WARN);
    assert_int_equal(parse(ENV_VAR_LOG, "WARNING", msg), LOG_WARN);
    assert_int_equal(parse(ENV_VAR_LOG, "error", msg), LOG_ERROR);
    assert_int_equal(parse(ENV_VAR_LOG, "OFF", msg), LOG_OFF);
    assert_int_equal(parse(ENV_VAR_LOG, "", msg), LOG_WARN);
    assert_int_equal(parse(ENV_VAR_LOG, "nonsense", msg), -100 - LOG_WARN);
    assert_string_equal(msg, "CUSHIM_LOG=\"nonsense\": not one of debug, info, warn, error, off (any case); using warn");
    assert_int_equal(parse(ENV_VAR_LOG, "debugx", msg), -100 - LOG_WARN);
}

static void test_paths(void **state)
{
    (void)state;
    char msg[600];
    assert_int_equal(parse(ENV_VAR_COUNTS, "/tmp/c.tsv", msg), ENV_PATH_FILE);
    assert_int_equal(parse(ENV_VAR_COUNTS, "-", msg), ENV_PATH_STDERR);
    assert_int_equal(parse(ENV_VAR_LOG_FILE, "-", msg), ENV_PATH_STDERR);
    assert_int_equal(parse(ENV_VAR_REAL_LIBCUDA, "-", msg), ENV_PATH_FILE);   /* a file named "-" */
    assert_int_equal(parse(ENV_VAR_COUNTS, "", msg), -100);
    assert_string_equal(msg, "CUSHIM_COUNTS=\"\": empty; call counts are off");
    assert_int_equal(parse(ENV_VAR_LOG_FILE, "", msg), -100);
    assert_string_equal(msg, "CUSHIM_LOG_FILE=\"\": empty; logging to stderr");
    assert_int_equal(parse(ENV_VAR_REAL_LIBCUDA, "", msg), -100);
    assert_non_null(strstr(msg, "CUSHIM_REAL_LIBCUDA=\"\": empty; ignored"));

    char *longp = malloc(ENV_PATH_MAX + 10);
    assert_non_null(longp);
    memset(longp, 'a', ENV_PATH_MAX + 9);
    longp[0] = '/';
    longp[ENV_PATH_MAX - 1] = '\0';   /* 4095 bytes: the longest accepted */
    assert_int_equal(parse(ENV_VAR_COUNTS, longp, msg), ENV_PATH_FILE);
    longp[ENV_PATH_MAX - 1] = 'a';
    longp[ENV_PATH_MAX] = '\0';       /* 4096 bytes: rejected */
    assert_int_equal(parse(ENV_VAR_COUNTS, longp, msg), -100);
    assert_non_null(strstr(msg, "longer than 4095 bytes; call counts are off"));
    assert_non_null(strstr(msg, "...\""));   /* the value is cut in the line */
    assert_true(strlen(msg) < 300);
    free(longp);
    /* an unknown variable number is refused, not read out of bounds */
    int out = 7;
    assert_int_equal(env_parse(ENV_VAR_COUNT_, "x", &out, msg, sizeof msg), -1);
    assert_int_equal(out, 0);
    assert_int_equal(env_parse(-1, "x", &out, NULL, 0), -1);
}

static void test_quote(void **state)
{
    (void)state;
    char q[64];
    env_quote("plain", q, sizeof q);
    assert_string_equal(q, "\"plain\"");
    env_quote("a\nb\"c\\d\x7f\xff", q, sizeof q);
    assert_string_equal(q, "\"a\\x0ab\\x22c\\x5cd\\x7f\\xff\"");
    char msg[600];
    int out;
    assert_int_equal(env_parse(ENV_VAR_LOG, "bad\nline", &out, msg, sizeof msg), -1);
    assert_null(strchr(msg, '\n'));   /* one line, whatever the value holds */
    /* small buffers: always terminated, never overrun */
    for (size_t cap = 1; cap < 12; cap++) {
        char b[16];
        memset(b, 'Z', sizeof b);
        env_quote("0123456789abcdef", b, cap);
        assert_true(strlen(b) < cap);
        assert_int_equal(b[cap], 'Z');
    }
    env_quote("0123456789abcdefghijklmnopqrstuvwxyz", q, 20);
    assert_string_equal(q, "\"0123456789abcd...\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disable),
        cmocka_unit_test(test_log_level),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
