/*
 * rt_dropin_test.c - the drop-in libcuda.so.1: a program that dlopens
 * "libcuda.so.1" gets the shim, whose calls reach the real driver found by
 * path (LD_LIBRARY_PATH minus its own directory, or CUSHIM_REAL_LIBCUDA).
 * Run with LD_LIBRARY_PATH=<dropin dir>[:<stand-in driver dir>].
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static void test_dropin(void **state)
{
    (void)state;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    assert_non_null(h);
    int (*get_version)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    assert_non_null(get_version);
    Dl_info di;
    assert_true(dladdr((void *)get_version, &di) != 0);
    assert_non_null(strstr(di.dli_fname, RT_DROPIN_DIR));       /* the shim's wrapper */
    assert_non_null(dlsym(h, "cushim_host_get"));
    int v = 0;
    assert_int_equal(get_version(&v), 0);                        /* reached the stand-in */
    assert_int_equal(v, 13000);
    int (*gpa)(const char *, void **, int, uint64_t, int *) =
        (int (*)(const char *, void **, int, uint64_t, int *))dlsym(h, "cuGetProcAddress_v2");
    void *p = NULL;
    int st;
    assert_int_equal(gpa("cuDriverGetVersion", &p, 13000, 0, &st), 0);
    assert_ptr_equal(p, (void *)get_version);                    /* mapped to the wrapper */
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_dropin) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
