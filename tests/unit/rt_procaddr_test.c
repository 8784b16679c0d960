/*
 * rt_procaddr_test.c - the cuGetProcAddress variant rule (runtime/procaddr.c):
 * hand cases, and, when the generated tree is the real one and the recorded
 * oracle exists (tests/gpu/fixtures/procaddr-oracle.tsv), every row of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "procaddr.h"
#include "rt_internal.h"

static const char *pa_name(const char *sym, int ver, uint64_t flags, int *rc, int *st)
{
    uint32_t id = 77;
    *rc = cushim_pa_lookup(sym, ver, flags, &id, st);
    const cushim_api_info *i = cushim_api_by_id(id);
    return i ? i->name : "-";
}

static void test_hand_cases(void **state)
{
    (void)state;
    int rc, st;
    assert_string_equal(pa_name("cuMemAlloc", 13000, 0, &rc, &st), "cuMemAlloc_v2");
    assert_int_equal(rc, 0);
    assert_int_equal(st, CUSHIM_PA_STATUS_SUCCESS);
    assert_string_equal(pa_name("cuMemAlloc", 3020, 0, &rc, &st), "cuMemAlloc_v2");
    assert_string_equal(pa_name("cuMemAlloc", 3010, 0, &rc, &st), "cuMemAlloc");
    assert_string_equal(pa_name("cuMemAlloc", 2000, 0, &rc, &st), "cuMemAlloc");
    /* below the first version */
    assert_string_equal(pa_name("cuMemAlloc", 1000, 0, &rc, &st), "-");
    assert_int_equal(rc, CUSHIM_PA_RESULT_NOT_FOUND);
    assert_int_equal(st, CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT);
    /* unknown names */
    assert_string_equal(pa_name("cuNoSuchThing", 13000, 0, &rc, &st), "-");
    assert_int_equal(rc, CUSHIM_PA_RESULT_NOT_FOUND);
    assert_int_equal(st, CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND);
    assert_string_equal(pa_name("", 13000, 0, &rc, &st), "-");
    assert_int_equal(cushim_pa_lookup(NULL, 13000, 0, NULL, NULL), CUSHIM_PA_RESULT_NOT_FOUND);
    assert_string_equal(pa_name("cuMemAlloc_v2", 13000, 0, &rc, &st), "-");   /* bases only */
    /* per-thread */
    assert_string_equal(pa_name("cuMemcpy", 13000, CUSHIM_PA_FLAG_PER_THREAD, &rc, &st), "cuMemcpy_ptds");
    assert_string_equal(pa_name("cuMemcpy", 13000, 0, &rc, &st), "cuMemcpy");
    assert_string_equal(pa_name("cuMemcpy", 13000, CUSHIM_PA_FLAG_LEGACY_STREAM, &rc, &st), "cuMemcpy");
    assert_string_equal(pa_name("cuMemcpy", 6000, CUSHIM_PA_FLAG_PER_THREAD, &rc, &st), "cuMemcpy");
    /* per-thread asked on a base without per-thread variants */
    assert_string_equal(pa_name("cuInit", 13000, CUSHIM_PA_FLAG_PER_THREAD, &rc, &st), "cuInit");
    /* cuGetProcAddress itself */
    assert_string_equal(pa_name("cuGetProcAddress", 11030, 0, &rc, &st), "cuGetProcAddress");
    assert_string_equal(pa_name("cuGetProcAddress", 12000, 0, &rc, &st), "cuGetProcAddress_v2");
    assert_string_equal(pa_name("cuGetProcAddress", 99999, 0, &rc, &st), "cuGetProcAddress_v2");
}

static void test_oracle(void **state)
{
    (void)state;
#ifdef RT_ORACLE_PATH
    FILE *f = fopen(RT_ORACLE_PATH, "r");
    if (f == NULL)
        skip();
    char line[1024];
    long rows = 0, checked = 0, bad = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#' || strncmp(line, "base\t", 5) == 0 || line[0] == '\n')
            continue;
        char base[256], sym[256];
        unsigned long long flags;
        int vfrom, vto, result, status;
        if (sscanf(line, "%255s %llu %d %d %d %d %255s", base, &flags, &vfrom, &vto, &result,
                   &status, sym) != 7) {
            print_error("unparsable oracle row: %s", line);
            bad++;
            continue;
        }
        rows++;
        if (strcmp(sym, "?") == 0)
            continue;
        for (int v = vfrom; v <= vto; v += 10) {
            int rc, st;
            const char *got = pa_name(base, v, flags, &rc, &st);
            checked++;
            int ok = (rc == result) && (result != 0 || (strcmp(got, sym) == 0 && st == status));
            if (!ok) {
                if (bad < 20)
                    print_error("oracle: %s v%d flags %llu: want %d/%d/%s, got %d/%d/%s\n", base, v,
                                flags, result, status, sym, rc, st, got);
                bad++;
                break;
            }
        }
    }
    fclose(f);
    print_message("oracle: %ld rows, %ld lookups checked, %ld mismatching rows\n", rows, checked, bad);
    assert_int_equal(bad, 0);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
