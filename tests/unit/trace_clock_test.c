/*
 * trace_clock_test.c - the trace writer's conversion of the hooks' TSC times to the host's ns (tr_clock.c):
 * against CLOCK_MONOTONIC read around a TSC reading; monotonic across segments; the right segment found in a
 * long table (and a hint that points elsewhere); pairs kept 10 ms apart, the last one moving; the table
 * thinned past its bound, the latest pairs kept; the first rate over 1 ms at least; 0 stays 0, times before the
 * first pair never below 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "tr_clock.h"
#include "tsc.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* A TSC reading converted lies within CLOCK_MONOTONIC read before and after it (2 us of slack: a pair's
   bracket), by interpolation (a pair taken after it) and by extrapolation (none after it yet). */
static void against_monotonic(void **state)
{
    tr_clock c = {0};
    (void)state;
    if (!tsc_usable())
        skip();
    assert_int_equal(tr_clock_start(&c, tsc_mono_ns), 0);
    tr_clock_take(&c);   /* waits for the first rate: 1 ms */
    assert_true(c.n == 2 && c.v[1].ns - c.v[0].ns >= TR_CLOCK_FIRST_NS);
    for (int i = 0; i < 20; i++) {
        uint64_t a = tsc_mono_ns(), t = tsc_read(), b = tsc_mono_ns(), ext, in;
        ext = tr_clock_ns(&c, t);
        sleep_ms(1);
        tr_clock_take(&c);
        in = tr_clock_ns(&c, t);
        assert_true(a - 2000 <= ext && ext <= b + 2000);
        assert_true(a - 2000 <= in && in <= b + 2000);
    }
    tr_clock_free(&c);
}

/* A table built by hand: 1000 segments of changing rates. Each pair converts to its own ns, the middle of a
   segment to the middle of its ns, whatever segment the hint points at; conversion never goes back. */
static void table_lookup(void **state)
{
    tr_clock c = {0};
    uint64_t prev = 0;
    (void)state;
    c.n = c.cap = 1001;
    c.v = calloc(c.n, sizeof *c.v);
    assert_non_null(c.v);
    for (uint32_t i = 0; i < c.n; i++) {
        c.v[i].tsc = 1000000 + (uint64_t)i * 3000;
        c.v[i].ns = i == 0 ? 200000 : c.v[i - 1].ns + 1000 + (i % 7) * 10;   /* rates 0.33 to 0.35 ns a tick */
    }
    for (uint32_t k = 0; k < 3000; k++) {
        uint32_t i = (k * 7919u) % (c.n - 1);   /* out of order: the hint is mostly wrong */
        assert_int_equal(tr_clock_ns(&c, c.v[i].tsc), c.v[i].ns);
        assert_int_equal(tr_clock_ns(&c, c.v[i].tsc + 1500), (c.v[i].ns + c.v[i + 1].ns) / 2);
    }
    for (uint64_t t = c.v[0].tsc - 10000; t < c.v[c.n - 1].tsc + 10000; t += 37) {
        uint64_t ns = tr_clock_ns(&c, t);
        assert_true(ns >= prev);
        prev = ns;
    }
    /* beyond the last pair: the last segment's rate; before the first: the first's, never below 1 */
    assert_int_equal(tr_clock_ns(&c, c.v[c.n - 1].tsc + 3000),
                     c.v[c.n - 1].ns + (c.v[c.n - 1].ns - c.v[c.n - 2].ns));
    assert_int_equal(tr_clock_ns(&c, 1), 1);
    assert_int_equal(tr_clock_ns(&c, 0), 0);   /* a time not set */
    tr_clock_free(&c);
}

/* A clock the test moves: pairs are kept 10 ms apart of it, the last one moved forward until it is. */
static uint64_t fake_ns = 1000000000;
static uint64_t fake_clock(void)
{
    return fake_ns;
}

static void pairs_kept(void **state)
{
    tr_clock c = {0};
    (void)state;
    if (!tsc_usable())
        skip();
    assert_int_equal(tr_clock_start(&c, fake_clock), 0);
    for (int i = 1; i <= 100; i++) {   /* 0.4 s of the fake clock, 4 ms a step */
        fake_ns += 4000000;
        tr_clock_take(&c);
    }
    /* 0, then every 12 ms (the first step of 4 ms at or past 10 ms), and the last moving one */
    assert_true(c.n >= 33 && c.n <= 35);
    for (uint32_t i = 1; i + 1 < c.n; i++)
        assert_true(c.v[i].ns - c.v[i - 1].ns >= TR_CLOCK_EVERY_NS);
    assert_int_equal(c.v[c.n - 1].ns, fake_ns);
    for (uint32_t i = 1; i < c.n; i++)
        assert_true(c.v[i].tsc > c.v[i - 1].tsc);
    /* a clock that does not move: no pair that would make the table go back or stand still */
    {
        uint32_t n = c.n;
        uint64_t last = c.v[n - 1].ns;
        fake_ns -= 1;
        tr_clock_take(&c);
        assert_int_equal(c.n, n);
        assert_int_equal(c.v[n - 1].ns, last);
        fake_ns += 1;
    }
    tr_clock_free(&c);
}

/* A long run: the table stays within its bound, in order, its first pair and the latest 10 ms apart kept. */
static void pairs_thinned(void **state)
{
    tr_clock c = {0};
    uint64_t first;
    (void)state;
    if (!tsc_usable())
        skip();
    assert_int_equal(tr_clock_start(&c, fake_clock), 0);
    first = c.v[0].ns;
    for (int i = 1; i <= 20000; i++) {   /* 220 s of the fake clock, 11 ms a step: a pair each */
        fake_ns += 11000000;
        tr_clock_take(&c);
        assert_true(c.n <= TR_CLOCK_MAX);
    }
    assert_true(c.n > TR_CLOCK_RECENT);
    assert_int_equal(c.v[0].ns, first);
    assert_int_equal(c.v[c.n - 1].ns, fake_ns);
    for (uint32_t i = 1; i < c.n; i++)
        assert_true(c.v[i].tsc > c.v[i - 1].tsc && c.v[i].ns > c.v[i - 1].ns);
    for (uint32_t i = c.n - TR_CLOCK_RECENT + 1; i < c.n; i++)
        assert_int_equal(c.v[i].ns - c.v[i - 1].ns, 11000000);
    tr_clock_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(against_monotonic),
        cmocka_unit_test(table_lookup),
        cmocka_unit_test(pairs_kept),
        cmocka_unit_test(pairs_thinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
