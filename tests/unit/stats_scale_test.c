/*
 * stats_scale_test.c - the summary tables (plugins/trace/tr_stats.c) and the NVTX range joiner of 'cushim stats'
 * (tools/stats-nvtx.c) cost the same per event with a few names, threads and ids as with many: the look-ups they
 * count (tr_stats.work, sn_probes) per event, at 1,000 and at 64 times as many, must stay within a small
 * constant. Counted, not timed: the result does not depend on the machine's load. (Before: past the exact budget
 * every new name scanned every series - a million kernel names took 15 minutes; threads and start/end ids were
 * chained in 4096 fixed buckets.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "stats-nvtx.h"
#include "tr_stats.h"

/* Look-ups per add with 'names' distinct names, 3 values each, under an exact budget of 'budget' values (0: the
   default); 'big' names get 20,000 values more each (series that become histograms past the budget). */
static double stats_work(uint32_t names, uint64_t budget, uint32_t big)
{
    tr_stats st;
    char name[32];
    uint64_t adds = 0;
    tr_stats_init(&st);
    if (budget > 0)
        tr_stats_set_exact(&st, budget);
    for (uint32_t b = 0; b < big; b++) {
        snprintf(name, sizeof name, "big%u", b);
        for (uint32_t v = 0; v < 20000; v++, adds++)
            assert_int_equal(tr_stats_add(&st, name, v), 0);
    }
    for (int round = 0; round < 3; round++)
        for (uint32_t i = 0; i < names; i++, adds++) {
            snprintf(name, sizeof name, "_Z6kernel%uPfS_", i);
            assert_int_equal(tr_stats_add(&st, name, i + (uint32_t)round), 0);
        }
    assert_int_equal(st.n, names + big);
    {
        double per = (double)st.work / (double)adds;
        tr_stats_free(&st);
        return per;
    }
}

static void table_names(void **state)
{
    (void)state;
    /* a small budget (summary_exact=1KiB: 128 values) and the default one, with and without large series */
    static const struct {
        uint64_t budget;
        uint32_t big;
    } runs[] = {{128, 0}, {128, 4}, {0, 0}, {0, 40}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        double few = stats_work(1000, runs[r].budget, runs[r].big);
        double many = stats_work(64000, runs[r].budget, runs[r].big);
        print_message("budget %llu, %u large: %.2f look-ups per add with 1,000 names, %.2f with 64,000\n",
                      (unsigned long long)runs[r].budget, runs[r].big, few, many);
        assert_true(many < 8);
        assert_true(many <= 2 * few + 2);
    }
}

/* Probes per event: 'n' threads each pushing and popping a range, and 'n' start/end ranges (ids) started, then
   ended in the same order. */
static double nvtx_work(uint32_t n)
{
    tr_stats out;
    sn_state *s = sn_new();
    uint64_t events = 0;
    double per;
    assert_non_null(s);
    tr_stats_init(&out);
    tr_stats_set_max_series(&out, TR_NVTX_NAMES_MAX);
    for (uint32_t i = 0; i < n; i++) {
        sn_ev b = {.ph = 'B', .pid = 7, .tid = 1000 + i, .ts = 10, .name = "step", .domain = ""};
        sn_ev e = {.ph = 'E', .pid = 7, .tid = 1000 + i, .ts = 20, .name = "", .domain = ""};
        sn_event(s, &out, &b);
        sn_event(s, &out, &e);
        events += 2;
    }
    for (uint32_t i = 0; i < n; i++) {
        sn_ev b = {.ph = 'b', .pid = 7, .tid = 1, .id = 1 + i, .ts = 10, .name = "load", .domain = ""};
        sn_event(s, &out, &b);
        events++;
    }
    for (uint32_t i = 0; i < n; i++) {
        sn_ev e = {.ph = 'e', .pid = 7, .tid = 2, .id = 1 + i, .ts = 30, .name = "", .domain = ""};
        sn_event(s, &out, &e);
        events++;
    }
    per = (double)sn_probes(s) / (double)events;
    assert_int_equal(sn_file_end(s, &out), 0);
    {
        tr_stat_row *rows = NULL;
        uint32_t nr = tr_stats_rows(&out, &rows);
        assert_int_equal(nr, 2);   /* PushPop :step and StartEnd :load */
        assert_int_equal(rows[0].n + rows[1].n, 2 * (uint64_t)n);
        free(rows);
    }
    sn_free(s);
    tr_stats_free(&out);
    return per;
}

static void nvtx_threads_ids(void **state)
{
    double few, many;
    (void)state;
    few = nvtx_work(1000);
    many = nvtx_work(64000);
    print_message("%.2f probes per NVTX event with 1,000 threads and ids, %.2f with 64,000\n", few, many);
    assert_true(many < 8);
    assert_true(many <= 2 * few + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_names),
        cmocka_unit_test(nvtx_threads_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
