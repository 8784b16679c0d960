/*
 * fi_rules_test.c - the faultinject rule parser and decider (plugins/faultinject/rules.c),
 * compiled alone: no host, no shim. Syntax read from the right (selectors holding ':'),
 * every WHEN kind and their '+' combinations, each malformed form with its message, and
 * the decisions: nth/every/after/window exactly, p reproducible from (seed, rule, n) and
 * close to its probability. Ends with a small random-input run of the fuzz entry point.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules.h"

static fi_rule_syntax parse_ok(const char *text)
{
    fi_rule_syntax r;
    char err[FI_ERRLEN] = "";
    if (fi_rule_parse(text, strlen(text), &r, err, sizeof err) != 0) {
        print_error("'%s' did not parse: %s\n", text, err);
        fail();
    }
    return r;
}

static void parse_fails(const char *text, const char *message)
{
    fi_rule_syntax r;
    char err[FI_ERRLEN] = "";
    if (fi_rule_parse(text, strlen(text), &r, err, sizeof err) == 0) {
        print_error("'%s' parsed, expected: %s\n", text, message);
        fi_rule_syntax_free(&r);
        fail();
    }
    if (strstr(err, message) == NULL) {
        print_error("'%s': message '%s' lacks '%s'\n", text, err, message);
        fail();
    }
    assert_null(r.selector);
    assert_null(r.error);
}

static void test_parse_basic(void **state)
{
    (void)state;
    fi_rule_syntax r = parse_ok("cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY");
    assert_string_equal(r.selector, "cuMemAlloc*");
    assert_string_equal(r.error, "CUDA_ERROR_OUT_OF_MEMORY");
    assert_false(r.error_is_number);
    assert_int_equal(r.when.kinds, 0);
    fi_rule_syntax_free(&r);

    r = parse_ok("cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2");
    assert_string_equal(r.selector, "cuMemAlloc*");
    assert_string_equal(r.error, "CUDA_ERROR_OUT_OF_MEMORY");
    assert_int_equal(r.when.kinds, FI_W_NTH);
    assert_int_equal(r.when.nth, 2);
    fi_rule_syntax_free(&r);

    r = parse_ok("cuInit:999");
    assert_string_equal(r.selector, "cuInit");
    assert_true(r.error_is_number);
    assert_int_equal(r.error_number, 999);
    assert_string_equal(r.error, "999");
    fi_rule_syntax_free(&r);
}

/* A selector may hold ':' (and ',', '&', '+', '*'); only the last one or two fields are ours. */
static void test_parse_selector_with_colons(void **state)
{
    static const struct {
        const char *rule, *selector, *error;
        uint32_t kinds;
    } cases[] = {
        {"cat:alloc:CUDA_ERROR_OUT_OF_MEMORY:every=3", "cat:alloc", "CUDA_ERROR_OUT_OF_MEMORY", FI_W_EVERY},
        {"lib:driver:2", "lib:driver", "2", 0},
        {"lib:runtime:cudaErrorMemoryAllocation", "lib:runtime", "cudaErrorMemoryAllocation", 0},
        {"name:cuMemAlloc_v2:CUDA_ERROR_INVALID_VALUE:p=0.5+after=3", "name:cuMemAlloc_v2",
         "CUDA_ERROR_INVALID_VALUE", FI_W_P | FI_W_AFTER},
        {"cat:alloc+free:CUDA_ERROR_UNKNOWN:nth=1", "cat:alloc+free", "CUDA_ERROR_UNKNOWN", FI_W_NTH},
        {"glob:cu*Async:CUDA_ERROR_UNKNOWN", "glob:cu*Async", "CUDA_ERROR_UNKNOWN", 0},
        {"cuMemAlloc*,cuMemFree*:CUDA_ERROR_UNKNOWN:nth=1", "cuMemAlloc*,cuMemFree*", "CUDA_ERROR_UNKNOWN",
         FI_W_NTH},
        {"lib:driver&cat:alloc:2:window=0-10", "lib:driver&cat:alloc", "2", FI_W_WINDOW},
        {"id:7:3", "id:7", "3", 0},
        {" base:cuMemAlloc , cuInit : CUDA_ERROR_UNKNOWN : nth = 4 + every = 2 ", "base:cuMemAlloc , cuInit",
         "CUDA_ERROR_UNKNOWN", FI_W_NTH | FI_W_EVERY},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fi_rule_syntax r = parse_ok(cases[i].rule);
        assert_string_equal(r.selector, cases[i].selector);
        assert_string_equal(r.error, cases[i].error);
        assert_int_equal(r.when.kinds, cases[i].kinds);
        fi_rule_syntax_free(&r);
    }
}

static void test_parse_when_values(void **state)
{
    fi_rule_syntax r;
    (void)state;
    r = parse_ok("x:1:nth=7+every=3+after=0+p=0.25+window=2.5-4");
    assert_int_equal(r.when.kinds, FI_W_NTH | FI_W_EVERY | FI_W_AFTER | FI_W_P | FI_W_WINDOW);
    assert_int_equal(r.when.nth, 7);
    assert_int_equal(r.when.every, 3);
    assert_int_equal(r.when.after, 0);
    assert_true(r.when.p == 0.25);
    assert_true(r.when.win_start == 2.5 && r.when.win_end == 4.0);
    fi_rule_syntax_free(&r);

    r = parse_ok("x:1:p=.5");
    assert_true(r.when.p == 0.5);
    fi_rule_syntax_free(&r);
    r = parse_ok("x:1:p=1");
    assert_true(r.when.p == 1.0);
    fi_rule_syntax_free(&r);
    r = parse_ok("x:1:p=0");
    assert_true(r.when.p == 0.0);
    fi_rule_syntax_free(&r);
    r = parse_ok("x:1:p=0.1");
    assert_true(r.when.p == 0.1);     /* the same double as the literal */
    fi_rule_syntax_free(&r);
    r = parse_ok("x:1:window=3-");
    assert_true(r.when.win_start == 3.0 && isinf(r.when.win_end));
    fi_rule_syntax_free(&r);
    r = parse_ok("x:1:window=0.-1.");
    assert_true(r.when.win_start == 0.0 && r.when.win_end == 1.0);
    fi_rule_syntax_free(&r);
    r = parse_ok("x:1:after=18446744073709551615");
    assert_true(r.when.after == UINT64_MAX);
    fi_rule_syntax_free(&r);
    r = parse_ok("x:2147483647");
    assert_int_equal(r.error_number, INT32_MAX);
    fi_rule_syntax_free(&r);
}

static void test_parse_errors(void **state)
{
    char big[5000];
    (void)state;
    parse_fails("", "empty rule");
    parse_fails("cuInit", "found no ':'");
    parse_fails(":2", "empty SELECTOR");
    parse_fails("  :2", "empty SELECTOR");
    parse_fails("cuInit:", "nothing after the last ':'");
    parse_fails("cuInit: :nth=1", "empty ERROR");
    parse_fails("cuInit:nth=2", "no ERROR before WHEN");
    parse_fails("cuInit:2:", "nothing after the last ':'");
    parse_fails("cuInit:2: ", "nothing after the last ':'");
    parse_fails("cuInit:2:nth=0", "nth=0: expected a whole number >= 1");
    parse_fails("cuInit:2:every=0", "every=0: expected a whole number >= 1");
    parse_fails("cuInit:2:nth=x", "nth=x: expected a whole number");
    parse_fails("cuInit:2:nth=-1", "nth=-1");
    parse_fails("cuInit:2:nth=", "nth=: expected");
    parse_fails("cuInit:2:after=1.5", "after=1.5");
    parse_fails("cuInit:2:nth=18446744073709551616", "nth=18446744073709551616");
    parse_fails("cuInit:2:p=1.5", "p=1.5: expected a probability from 0 to 1");
    parse_fails("cuInit:2:p=-0.1", "p=-0.1");
    parse_fails("cuInit:2:p=1e-3", "p=1e-3");
    parse_fails("cuInit:2:p=0.1.2", "p=0.1.2");
    parse_fails("cuInit:2:p=.", "p=.");
    parse_fails("cuInit:2:window=5", "window=5: expected START-END");
    parse_fails("cuInit:2:window=4-2", "the end must be after the start");
    parse_fails("cuInit:2:window=3-3", "the end must be after the start");
    parse_fails("cuInit:2:window=a-b", "window=a-b");
    parse_fails("cuInit:2:window=-4", "window=-4");
    parse_fails("cuInit:2:frequency=3", "unknown WHEN condition 'frequency'");
    parse_fails("cuInit:2:nth=1+nth=2", "'nth' given twice");
    parse_fails("cuInit:2:nth=1++every=2", "empty WHEN condition");
    parse_fails("cuInit:2:nth=1+", "empty WHEN condition");
    parse_fails("cuInit:2:nth=1+every", "WHEN condition 'every' is not KEY=VALUE");
    parse_fails("cuInit:0", "error 0 is success");
    parse_fails("cuInit:00", "error 0 is success");
    parse_fails("cuInit:2147483648", "not a whole number from 1 to 2147483647");
    parse_fails("cuInit:12abc", "not a whole number");
    parse_fails("cuInit:CUDA-ERROR", "'CUDA-ERROR' is neither an error name nor a number");
    parse_fails("cuInit:CUDA_ERROR_UNKNOWN:nth=2:every=3", "join WHEN conditions with '+', not ':'");
    {
        /* a NUL inside the given length */
        fi_rule_syntax r;
        char err[FI_ERRLEN];
        assert_int_equal(fi_rule_parse("cuInit\0:2", 9, &r, err, sizeof err), -1);
        assert_non_null(strstr(err, "NUL"));
    }
    memset(big, 'a', sizeof big);
    memcpy(big + sizeof big - 3, ":2", 2);
    {
        fi_rule_syntax r;
        char err[FI_ERRLEN];
        assert_int_equal(fi_rule_parse(big, sizeof big - 1, &r, err, sizeof err), -1);
        assert_non_null(strstr(err, "longer than 4096 bytes"));
    }
}

/* The length bounds the text: nothing past it is read. */
static void test_parse_uses_length(void **state)
{
    fi_rule_syntax r;
    char err[FI_ERRLEN];
    const char *text = "cuInit:2:nth=3GARBAGE";
    (void)state;
    assert_int_equal(fi_rule_parse(text, 14, &r, err, sizeof err), 0);
    assert_int_equal(r.when.nth, 3);
    fi_rule_syntax_free(&r);
    assert_int_equal(fi_rule_parse_fuzz(text, 14), 0);
    assert_int_equal(fi_rule_parse_fuzz(text, strlen(text)), -1);
}

static fi_when when_of(const char *rule)
{
    fi_rule_syntax r = parse_ok(rule);
    fi_when w = r.when;
    fi_rule_syntax_free(&r);
    return w;
}

/* Which of calls 1..n fire, as a string of 0/1 (at time t). */
static void pattern(const char *rule, uint64_t seed, int n, double t, char *out)
{
    fi_when w = when_of(rule);
    uint64_t h = fi_rule_hash(rule);
    for (int i = 0; i < n; i++)
        out[i] = fi_when_fires(&w, (uint64_t)i + 1, t, seed, h) ? '1' : '0';
    out[n] = '\0';
}

static void test_decide_counts(void **state)
{
    char p[64];
    (void)state;
    pattern("x:2", 1, 6, 0, p);
    assert_string_equal(p, "111111");             /* no WHEN: every call */
    pattern("x:2:nth=3", 1, 10, 0, p);
    assert_string_equal(p, "0010000000");
    pattern("x:2:every=3", 1, 10, 0, p);
    assert_string_equal(p, "0010010010");
    pattern("x:2:every=1", 1, 4, 0, p);
    assert_string_equal(p, "1111");
    pattern("x:2:after=4", 1, 8, 0, p);
    assert_string_equal(p, "00001111");
    pattern("x:2:after=0", 1, 3, 0, p);
    assert_string_equal(p, "111");
    pattern("x:2:every=2+after=4", 1, 10, 0, p);
    assert_string_equal(p, "0000010101");
    pattern("x:2:nth=3+after=4", 1, 10, 0, p);
    assert_string_equal(p, "0000000000");           /* all conditions must hold */
}

static void test_decide_window(void **state)
{
    fi_when w = when_of("x:2:window=2.5-4");
    fi_when open = when_of("x:2:window=1-");
    fi_when both = when_of("x:2:window=0-10+nth=3");
    (void)state;
    assert_false(fi_when_fires(&w, 1, 0.0, 1, 0));
    assert_false(fi_when_fires(&w, 1, 2.49, 1, 0));
    assert_true(fi_when_fires(&w, 1, 2.5, 1, 0));
    assert_true(fi_when_fires(&w, 2, 3.99, 1, 0));
    assert_false(fi_when_fires(&w, 3, 4.0, 1, 0));   /* the end is excluded */
    assert_false(fi_when_fires(&open, 1, 0.99, 1, 0));
    assert_true(fi_when_fires(&open, 1, 1e9, 1, 0));
    assert_false(fi_when_fires(&both, 2, 5, 1, 0));
    assert_true(fi_when_fires(&both, 3, 5, 1, 0));
    assert_false(fi_when_fires(&both, 3, 10, 1, 0));
}

static void test_random_stream(void **state)
{
    (void)state;
    /* splitmix64 reference: the first output from state 0 */
    assert_true(fi_splitmix64(0) == 0xe220a8397b1dcdafull);
    assert_true(fi_random(5, 7, 9) == fi_splitmix64(fi_splitmix64(fi_splitmix64(5) ^ 7) ^ 9));
    assert_true(fi_seed(0) == FI_DEFAULT_SEED);
    assert_true(fi_seed(42) == 42);
    assert_true(fi_seed(-1) == UINT64_MAX);
    /* FNV-1a 64 reference values */
    assert_true(fi_rule_hash("") == 0xcbf29ce484222325ull);
    assert_true(fi_rule_hash("a") == 0xaf63dc4c8601ec8cull);
}

static void test_decide_probability(void **state)
{
    char a[65], b[65], c[65], d[65];
    fi_when w = when_of("x:2:p=0.25");
    uint64_t h = fi_rule_hash("x:2:p=0.25");
    int fired = 0;
    (void)state;
    /* same seed and rule: same pattern; another seed or another rule: another pattern */
    pattern("x:2:p=0.5", 7, 64, 0, a);
    pattern("x:2:p=0.5", 7, 64, 0, b);
    pattern("x:2:p=0.5", 8, 64, 0, c);
    pattern("y:2:p=0.5", 7, 64, 0, d);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_string_not_equal(a, d);
    /* the decision for call n depends on n only, not on the calls asked before */
    for (uint64_t n = 64; n >= 1; n--)
        assert_int_equal(fi_when_fires(&(fi_when){FI_W_P, 0, 0, 0, 0.5, 0, 0}, n, 0, 7, fi_rule_hash("x:2:p=0.5")),
                         a[n - 1] == '1');
    for (uint64_t n = 1; n <= 20000; n++)
        fired += fi_when_fires(&w, n, 0, FI_DEFAULT_SEED, h);
    /* 20000 draws at 0.25: mean 5000, sd ~61; 6 sd either side */
    assert_in_range(fired, 4630, 5370);
    pattern("x:2:p=0", 3, 64, 0, a);
    assert_null(strchr(a, '1'));
    pattern("x:2:p=1", 3, 64, 0, a);
    assert_null(strchr(a, '0'));
    /* p with every: only multiples of 2 can fire, about half of them */
    pattern("x:2:p=0.5+every=2", 11, 64, 0, a);
    for (int i = 0; i < 64; i += 2)
        assert_int_equal(a[i], '0');
}

/* Random strings over the rule alphabet: never a crash (the sanitizer builds run
   this too); what parses has a non-empty selector and error. */
static void test_fuzz_smoke(void **state)
{
    static const char alphabet[] = "::::==++--..,,&*09127aAnpthwindowevryfterCUDA_ERROR_ x\t";
    uint64_t s = 1;
    int parsed = 0;
    (void)state;
    for (int i = 0; i < 20000; i++) {
        char buf[48];
        size_t len;
        s = fi_splitmix64(s);
        len = (size_t)(s % sizeof buf);
        for (size_t k = 0; k < len; k++) {
            s = fi_splitmix64(s);
            buf[k] = alphabet[s % (sizeof alphabet - 1)];
        }
        if (fi_rule_parse_fuzz(buf, len) == 0) {
            fi_rule_syntax r;
            char err[FI_ERRLEN];
            assert_int_equal(fi_rule_parse(buf, len, &r, err, sizeof err), 0);
            assert_true(r.selector[0] != '\0' && r.error[0] != '\0');
            fi_rule_syntax_free(&r);
            parsed++;
        }
    }
    assert_true(parsed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_basic),
        cmocka_unit_test(test_parse_selector_with_colons),
        cmocka_unit_test(test_parse_when_values),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_uses_length),
        cmocka_unit_test(test_decide_counts),
        cmocka_unit_test(test_decide_window),
        cmocka_unit_test(test_random_stream),
        cmocka_unit_test(test_decide_probability),
        cmocka_unit_test(test_fuzz_smoke),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
