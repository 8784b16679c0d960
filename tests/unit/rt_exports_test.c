/*
 * rt_exports_test.c - the export list of libcushim.so and the drop-in
 * libcuda.so.1 (nm -D --defined-only): every exported name is a generated API
 * name, dlsym, dlvsym, cushim_host_get (the SDK) or cushim_api_id_limit (how
 * copies of the shim recognise each other); every generated API name is
 * exported (the drop-in: every driver API, and no runtime API); both SDK
 * names are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rt_internal.h"

static void check_exports(const char *lib, int driver_only)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", lib);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    uint8_t *seen = calloc(cushim_gen_api_count, 1);
    char line[1024];
    int bad = 0, n = 0, sdk = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        char addr[64], type[8], name[512];
        if (sscanf(line, "%63s %7s %511s", addr, type, name) != 3)
            continue;
        n++;
        char *at = strchr(name, '@');
        if (at != NULL) {
            print_error("%s: versioned export %s\n", lib, name);
            bad++;
            *at = '\0';
        }
        int idx = api_index_by_name(name);
        if (idx >= 0 && driver_only && cushim_gen_apis[idx].library != CUSHIM_LIB_DRIVER) {
            print_error("%s: runtime API %s exported\n", lib, name);
            bad++;
            continue;
        }
        if (idx >= 0) {
            seen[idx] = 1;
            continue;
        }
        if (strcmp(name, "dlsym") == 0 || strcmp(name, "dlvsym") == 0)
            continue;
        if (strcmp(name, "cushim_host_get") == 0 || strcmp(name, "cushim_api_id_limit") == 0) {
            sdk++;
            continue;
        }
        print_error("%s: unexpected export %s\n", lib, name);
        bad++;
    }
    assert_int_equal(pclose(p), 0);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        if (!seen[i] && (!driver_only || cushim_gen_apis[i].library == CUSHIM_LIB_DRIVER)) {
            print_error("%s: %s not exported\n", lib, cushim_gen_apis[i].name);
            bad++;
        }
    free(seen);
    print_message("%s: %d exports\n", lib, n);
    assert_true(n > 0);
    assert_int_equal(sdk, 2);
    assert_int_equal(bad, 0);
}

static void test_shim(void **state)
{
    (void)state;
    check_exports(RT_SHIM_PATH, 0);
}

static void test_dropin(void **state)
{
    (void)state;
    check_exports(RT_DROPIN_PATH, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shim),
        cmocka_unit_test(test_dropin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
