/*
 * rt_exports_test.c - the export list of libcushim.so and the drop-in
 * libcuda.so.1 (nm -D --defined-only): every exported name is a generated API
 * name, dlsym, dlvsym, cushim_host_get (the SDK) or cushim_api_id_limit (how
 * copies of the shim recognise each other); every generated API name is
 * exported (the drop-in: every driver API, and no runtime API); both SDK
 * names are. API names are versioned as in the real libraries: those of a
 * library with a version node (lb_symver, descriptor key symbol-version) as
 * its default version (cudaMalloc@@libcudart.so.13), the others and cushim_*
 * unversioned. libcushim.so exports dlsym and dlvsym as <name>@GLIBC_2.2.5 and
 * <name>@@GLIBC_2.34 (and the two version node symbols); the drop-in exports
 * them unversioned. Both are NODELETE. Every dlsym/dlvsym entry starts with
 * endbr64 (indirect branch tracking).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rt_internal.h"

/* "dlsym@GLIBC_2.2.5" etc.: which of the four versioned entries (bit), or -1. */
static int versioned_entry(const char *name)
{
    static const char *const v[] = { "dlsym@GLIBC_2.2.5", "dlsym@@GLIBC_2.34", "dlvsym@GLIBC_2.2.5",
                                     "dlvsym@@GLIBC_2.34" };
    for (int i = 0; i < 4; i++)
        if (strcmp(name, v[i]) == 0)
            return i;
    return -1;
}

/* A version node of an interposed library's exports ("libcudart.so.13"). */
static int is_node(const char *name)
{
    for (unsigned i = 0; i < lb_nlibraries; i++) {
        const char *n = lb_symver(lb_libraries[i].value);
        if (n != NULL && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

static void check_nodelete(const char *lib)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "readelf -d '%s' | grep -c 'FLAGS_1.*NODELETE'", lib);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int n = 0;
    if (fscanf(p, "%d", &n) != 1)
        n = 0;
    pclose(p);
    if (n != 1)
        print_error("%s: not linked -z nodelete\n", lib);
    assert_int_equal(n, 1);
}

static void check_exports(const char *lib, int driver_only)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", lib);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    uint8_t *seen = calloc(cushim_gen_api_count, 1);
    char line[1024];
    int bad = 0, n = 0, versions = 0, nodes = 0, sdk = 0, nodes_lib = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        char addr[64], type[8], name[512];
        if (sscanf(line, "%63s %7s %511s", addr, type, name) != 3)
            continue;
        n++;
        if (!driver_only && versioned_entry(name) >= 0) {
            versions |= 1 << versioned_entry(name);
            continue;
        }
        if (!driver_only && strcmp(type, "A") == 0 &&
            (strcmp(name, "GLIBC_2.2.5") == 0 || strcmp(name, "GLIBC_2.34") == 0)) {
            nodes++;
            continue;
        }
        /* A library with a version node (lb_symver: libcudart.so.13): its node symbol (type A), and
           each of its APIs exported as the node's default version (cudaMalloc@@libcudart.so.13). */
        if (!driver_only && strcmp(type, "A") == 0 && is_node(name)) {
            nodes_lib++;
            continue;
        }
        char *at = strchr(name, '@');
        const char *ver = at != NULL ? at + (at[1] == '@' ? 2 : 1) : NULL;
        int is_default = at != NULL && at[1] == '@';
        if (at != NULL)
            *at = '\0';
        int vidx = api_index_by_name(name);
        const char *want = vidx >= 0 && !driver_only ? lb_symver(cushim_gen_apis[vidx].library) : NULL;
        if (want != NULL ? (ver == NULL || !is_default || strcmp(ver, want) != 0) : ver != NULL) {
            print_error("%s: export %s%s%s, expected %s%s\n", lib, name, ver ? (is_default ? "@@" : "@") : "",
                        ver ? ver : "", want ? "@@" : "unversioned", want ? want : "");
            bad++;
        }
        if (!driver_only && (strcmp(name, "dlsym") == 0 || strcmp(name, "dlvsym") == 0)) {
            print_error("%s: unversioned %s (an interposer's dlvsym(RTLD_NEXT, \"dlsym\", \"GLIBC_2.2.5\") "
                        "would skip it)\n", lib, name);
            bad++;
            continue;
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
    if (!driver_only && (versions != 0xf || nodes != 2)) {
        print_error("%s: dlsym/dlvsym @GLIBC_2.2.5 and @@GLIBC_2.34 not all exported (mask %x, nodes %d)\n",
                    lib, (unsigned)versions, nodes);
        bad++;
    }
    int want_nodes = 0;
    for (unsigned i = 0; i < lb_nlibraries && !driver_only; i++)
        want_nodes += lb_symver(lb_libraries[i].value) != NULL;
    if (nodes_lib != want_nodes) {
        print_error("%s: %d library version nodes exported, expected %d\n", lib, nodes_lib, want_nodes);
        bad++;
    }
    check_nodelete(lib);
    print_message("%s: %d exports\n", lib, n);
    assert_true(n > 0);
    assert_int_equal(sdk, 2);
    assert_int_equal(bad, 0);
}

static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

static void check_entry(const char *what, const void *p)
{
    if (p == NULL || memcmp(p, endbr64, 4) != 0)
        print_error("%s: %s\n", what, p == NULL ? "not found" : "does not start with endbr64");
    assert_non_null(p);
    assert_memory_equal(p, endbr64, 4);
}

/* The entries as an interposer loaded before us finds them, and as the drop-in exports them. */
static void test_entries(void **state)
{
    (void)state;
    void *h = dlopen(RT_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    void *s225 = dlvsym(h, "dlsym", "GLIBC_2.2.5"), *s234 = dlvsym(h, "dlsym", "GLIBC_2.34");
    void *v225 = dlvsym(h, "dlvsym", "GLIBC_2.2.5"), *v234 = dlvsym(h, "dlvsym", "GLIBC_2.34");
    check_entry("libcushim.so dlsym@GLIBC_2.2.5", s225);
    check_entry("libcushim.so dlvsym@GLIBC_2.2.5", v225);
    assert_ptr_equal(s225, s234);
    assert_ptr_equal(v225, v234);
    assert_ptr_equal(dlsym(h, "dlsym"), s234);   /* the default version */
    void *d = dlopen(RT_DROPIN_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(d);
    check_entry("drop-in dlsym", dlsym(d, "dlsym"));
    check_entry("drop-in dlvsym", dlsym(d, "dlvsym"));
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
        cmocka_unit_test(test_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
