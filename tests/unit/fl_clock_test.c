/*
 * fl_clock_test.c - the flight recorder's TSC times (plugins/flight/fl_clock.h, fl_clock.c): a TSC reading
 * converted through two pairs lands within a bound of CLOCK_MONOTONIC read around it; conversions of increasing
 * readings never go back; 0 (a time not set) stays 0; pairs that do not make a rate (out of order, torn by a
 * kill, a foreign file) are refused; the clock option's values. Skipped where the CPU has no usable TSC.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fl_clock.h"

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int have_tsc(void)
{
    int tsc = 0;
    char why[200];
    return tsc_choose("auto", &tsc, why, sizeof why) == 0 && tsc;
}

/* Calibrated over 5 ms, then read 20 ms on: within 50 us of the clock around it (the rate's error over 5 ms of
   two pairs a few hundred ns wide is ~1e-4, 2 us over 20 ms; the rest is slack for a loaded machine). */
static void test_converts_to_monotonic(void **state)
{
    fl_cal c0, c1;
    struct timespec d = {0, 5 * 1000 * 1000}, d2 = {0, 20 * 1000 * 1000};
    double rate;
    (void)state;
    if (!have_tsc())
        skip();
    fl_cal_take(&c0);
    nanosleep(&d, NULL);
    fl_cal_take(&c1);
    rate = fl_cal_rate(&c0, &c1);
    assert_true(rate > 0);
    nanosleep(&d2, NULL);
    for (int i = 0; i < 5; i++) {
        uint64_t a = mono(), t = fl_rdtsc(), b = mono(), ns = fl_tsc_ns(&c0, rate, t);
        assert_true(ns + 50000 >= a);
        assert_true(ns <= b + 50000);
    }
}

/* A thread's readings one after another convert to times that never go back. */
static void test_monotonic(void **state)
{
    fl_cal c0, c1;
    struct timespec d = {0, 2 * 1000 * 1000};
    uint64_t prev = 0;
    double rate;
    (void)state;
    if (!have_tsc())
        skip();
    fl_cal_take(&c0);
    nanosleep(&d, NULL);
    fl_cal_take(&c1);
    rate = fl_cal_rate(&c0, &c1);
    assert_true(rate > 0);
    for (int i = 0; i < 100000; i++) {
        uint64_t ns = fl_tsc_ns(&c0, rate, fl_rdtsc());
        assert_true(ns >= prev);
        prev = ns;
    }
}

/* Fixed pairs: 3 ticks a ns from 1000 s on. */
static void test_fixed(void **state)
{
    fl_cal c0 = {.tsc = 3000000000000ull, .ns = 1000000000000ull}, c1 = {.tsc = 3003000000000ull,
                                                                           .ns = 1001000000000ull};
    double rate = fl_cal_rate(&c0, &c1);
    (void)state;
    assert_true(rate > 0.333333 && rate < 0.333334);
    assert_int_equal(fl_tsc_ns(&c0, rate, c0.tsc), c0.ns);
    assert_int_equal(fl_tsc_ns(&c0, rate, c0.tsc + 3000), c0.ns + 1000);
    assert_int_equal(fl_tsc_ns(&c0, rate, c0.tsc - 3000), c0.ns - 1000);   /* a reading just before t0 */
    assert_int_equal(fl_tsc_ns(&c0, rate, c1.tsc + 3000000000ull), c1.ns + 1000000000ull);
    assert_int_equal(fl_tsc_ns(&c0, rate, 0), 0);   /* not set: stays not set */
    assert_true(fl_tsc_ns(&c0, 100, UINT64_MAX) == UINT64_MAX);   /* a file's nonsense saturates */
    assert_int_equal(fl_tsc_ns(&c0, 100, 1), 1);
}

static void test_bad_pairs(void **state)
{
    fl_cal c0 = {.tsc = 3000000000000ull, .ns = 1000000000000ull};
    fl_cal before = {.tsc = c0.tsc - 10, .ns = c0.ns + 10};
    fl_cal torn = {.tsc = c0.tsc + 3000000, .ns = 0};                 /* a kill between its two stores */
    fl_cal wild = {.tsc = c0.tsc + 1, .ns = c0.ns + 1000000000ull};   /* 1e9 ns a tick */
    fl_cal dst;
    (void)state;
    assert_true(fl_cal_rate(&c0, &before) == 0);
    assert_true(fl_cal_rate(&c0, &torn) == 0);
    assert_true(fl_cal_rate(&c0, &wild) == 0);
    assert_true(fl_cal_rate(&c0, &c0) == 0);
    fl_cal_store(&dst, &c0);
    assert_memory_equal(&dst, &c0, sizeof dst);
}

static void test_choose(void **state)
{
    int tsc = 7;
    char why[200] = "";
    (void)state;
    assert_int_equal(tsc_choose("host", &tsc, why, sizeof why), 0);
    assert_int_equal(tsc, 0);
    assert_int_equal(tsc_choose("auto", &tsc, why, sizeof why), 0);
    assert_int_equal(tsc_choose("tsc", &tsc, why, sizeof why), tsc ? 0 : -1);
    assert_int_equal(tsc_choose("cycles", &tsc, why, sizeof why), -1);
    assert_non_null(strstr(why, "auto, tsc or host"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_converts_to_monotonic), cmocka_unit_test(test_monotonic),
        cmocka_unit_test(test_fixed),                 cmocka_unit_test(test_bad_pairs),
        cmocka_unit_test(test_choose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
