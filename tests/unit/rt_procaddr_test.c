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
    assert_true(*rc != CUSHIM_PA_RESULT_SUCCESS || (id != 0) == (*st == CUSHIM_PA_STATUS_SUCCESS));
    const cushim_api_info *i = api_info(id);
    return i ? i->name : "-";
}

/* A recent version every tree answers for (12.9's table stops at 12090). */
#define HV (CUSHIM_GEN_CUDA_VERSION < 13000 ? CUSHIM_GEN_CUDA_VERSION : 13000)

static void test_hand_cases(void **state)
{
    (void)state;
    int rc, st;
    assert_string_equal(pa_name("cuMemAlloc", HV, 0, &rc, &st), "cuMemAlloc_v2");
    assert_int_equal(rc, 0);
    assert_int_equal(st, CUSHIM_PA_STATUS_SUCCESS);
    assert_string_equal(pa_name("cuMemAlloc", 3020, 0, &rc, &st), "cuMemAlloc_v2");
    assert_string_equal(pa_name("cuMemAlloc", 3010, 0, &rc, &st), "cuMemAlloc");
    assert_string_equal(pa_name("cuMemAlloc", 2000, 0, &rc, &st), "cuMemAlloc");
    /* below the first version */
    assert_string_equal(pa_name("cuMemAlloc", 1000, 0, &rc, &st), "-");
    assert_int_equal(rc, CUSHIM_PA_RESULT_SUCCESS);   /* as the driver: success, status says */
    assert_int_equal(st, CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT);
    /* unknown names */
    assert_string_equal(pa_name("cuNoSuchThing", HV, 0, &rc, &st), "-");
    assert_int_equal(rc, CUSHIM_PA_RESULT_SUCCESS);
    assert_int_equal(st, CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND);
    assert_string_equal(pa_name("", HV, 0, &rc, &st), "-");
    assert_int_equal(cushim_pa_lookup(NULL, HV, 0, NULL, NULL), CUSHIM_PA_RESULT_SUCCESS);
    assert_string_equal(pa_name("cuMemAlloc_v2", HV, 0, &rc, &st), "-");   /* bases only */
    assert_int_equal(st, CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND);
    /* newer than the driver of the table: invalid value, status untouched */
    st = 12345;
    assert_string_equal(pa_name("cuMemAlloc", CUSHIM_GEN_CUDA_VERSION + 10, 0, &rc, &st), "-");
    assert_int_equal(rc, CUSHIM_PA_RESULT_INVALID_VALUE);
    assert_int_equal(st, 12345);
    /* per-thread */
    assert_string_equal(pa_name("cuMemcpy", HV, CUSHIM_PA_FLAG_PER_THREAD, &rc, &st), "cuMemcpy_ptds");
    assert_string_equal(pa_name("cuMemcpy", HV, 0, &rc, &st), "cuMemcpy");
    assert_string_equal(pa_name("cuMemcpy", HV, CUSHIM_PA_FLAG_LEGACY_STREAM, &rc, &st), "cuMemcpy");
    /* per-thread variants exist but are all newer: no legacy fallback */
    assert_string_equal(pa_name("cuMemcpy", 6000, CUSHIM_PA_FLAG_PER_THREAD, &rc, &st), "-");
    assert_int_equal(st, CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT);
    assert_string_equal(pa_name("cuMemcpy", 6000, 0, &rc, &st), "cuMemcpy");
    /* per-thread asked on a base without per-thread variants */
    assert_string_equal(pa_name("cuInit", HV, CUSHIM_PA_FLAG_PER_THREAD, &rc, &st), "cuInit");
    /* cuGetProcAddress itself */
    assert_string_equal(pa_name("cuGetProcAddress", 11030, 0, &rc, &st), "cuGetProcAddress");
    assert_string_equal(pa_name("cuGetProcAddress", 12000, 0, &rc, &st), "cuGetProcAddress_v2");
    assert_string_equal(pa_name("cuGetProcAddress", CUSHIM_GEN_CUDA_VERSION, 0, &rc, &st), "cuGetProcAddress_v2");
}

#ifdef RT_ORACLE_PATH
/* The recorded driver's export list (one name a line): a function our headers
   declare but that driver lacks is answered SYMBOL_NOT_FOUND by it. */
static int driver_exports(const char *name)
{
    FILE *f = fopen(RT_EXPORTS_PATH, "r");
    if (f == NULL)
        return 1;
    char line[256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        found = strcmp(line, name) == 0;
    }
    fclose(f);
    return found;
}
#endif

/* An API of this tree is 'base' or one of its variants (base_v2, base_ptsz...). */
static int tree_has_base(const char *base)
{
    size_t n = strlen(base);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        const char *name = cushim_gen_apis[i].name;
        if (strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '_'))
            return 1;
    }
    return 0;
}

static void test_oracle(void **state)
{
    (void)state;
#ifdef RT_ORACLE_PATH
    FILE *f = fopen(RT_ORACLE_PATH, "r");
    if (f == NULL)
        fail_msg("the recorded driver answers %s are missing (tests/gpu/record_oracle.sh)", RT_ORACLE_PATH);
    char line[1024];
    long rows = 0, checked = 0, bad = 0, absent = 0, newer = 0;
    int driver = 0;   /* the recorded driver's version ('# driver N ...') */
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "# driver ", 9) == 0)
            driver = atoi(line + 9);
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
            int rc, st = -1;
            if (driver > 0 && v > driver && CUSHIM_GEN_CUDA_VERSION > driver) {
                newer++;   /* a tree of a later release answers for its own driver there, not the recorded one */
                break;
            }
            if (driver > 0 && v > CUSHIM_GEN_CUDA_VERSION && CUSHIM_GEN_CUDA_VERSION < driver) {
                /* a tree of an earlier release (12.9) answers as its own driver: newer than it is invalid */
                pa_name(base, v, flags, &rc, &st);
                if (rc != CUSHIM_PA_RESULT_INVALID_VALUE) {
                    print_error("oracle: %s v%d flags %llu: above the tree's version, got %d\n", base, v, flags, rc);
                    bad++;
                }
                newer++;
                break;
            }
            const char *got = pa_name(base, v, flags, &rc, &st);
            checked++;
            int ok = rc == result && st == status && strcmp(got, sym) == 0;
            if (!ok && result == 0 && status == CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND &&
                strcmp(sym, "-") == 0 && rc == 0 && strcmp(got, "-") != 0 && !driver_exports(got)) {
                absent++;   /* in our headers, not in the recorded driver */
                break;
            }
            if (!ok && result == 0 && status == CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND &&
                strcmp(sym, "-") == 0 && st == CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT &&
                !driver_exports(pa_name(base, CUSHIM_GEN_CUDA_VERSION, flags, &rc, &st))) {
                /* below the first version of a function that driver lacks */
                absent++;
                break;
            }
            if (!ok && rc == 0 && st == CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND && CUSHIM_GEN_CUDA_VERSION < driver &&
                !tree_has_base(base)) {
                absent++;   /* a function newer than an earlier release's headers */
                break;
            }
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
    print_message("oracle: %ld rows, %ld lookups checked, %ld mismatching rows, %ld rows of functions "
                  "the recorded driver or the tree lacks, %ld rows above the recorded driver's %d or the tree's %d\n", rows, checked,
                  bad, absent, newer, driver, CUSHIM_GEN_CUDA_VERSION);
    assert_true(driver > 0);
    assert_true(checked > 1000000);
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
