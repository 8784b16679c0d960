/*
 * rt_dropin_linked_test.c - a program linked with the drop-in libcuda.so.1
 * (-lcuda, ahead of libc: its dlsym is the one the program calls). The drop-in
 * is libcuda: RTLD_DEFAULT finds its driver functions, never runtime ones, and
 * its calls reach the real driver (the stand-in, found on LD_LIBRARY_PATH).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);

static void test_linked_dropin(void **state)
{
    (void)state;
    assert_ptr_equal(dlsym(RTLD_DEFAULT, "cuInit"), (void *)cuInit);
    assert_ptr_equal(dlsym(RTLD_DEFAULT, "cuDriverGetVersion"), (void *)cuDriverGetVersion);
    assert_null(dlsym(RTLD_DEFAULT, "cudaMalloc"));
    assert_null(dlsym(RTLD_DEFAULT, "cuMemcpy_ptds_no_such"));
    assert_non_null(dlsym(RTLD_DEFAULT, "cushim_host_get"));
    int v = 0;
    assert_int_equal(cuInit(0), 0);
    assert_int_equal(cuDriverGetVersion(&v), 0);
    assert_int_equal(v, 13000);
}

/* The drop-in is libcuda only: a runtime name looked up on a libcudart handle is
   libcudart's own function, never the drop-in's hidden runtime wrapper. */
static void test_linked_dropin_runtime_untouched(void **state)
{
    (void)state;
    const char *rt = getenv("RT_DROPIN_CUDART");
    if (rt == NULL || rt[0] == '\0')
        skip();
    void *h = dlopen(rt, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    void *f = dlsym(h, "cudaMalloc");
    assert_non_null(f);
    Dl_info di;
    assert_true(dladdr(f, &di) != 0);
    assert_non_null(di.dli_sname);                      /* an export: not a hidden wrapper */
    assert_non_null(strstr(di.dli_fname, "libcudart"));
    assert_ptr_equal(f, dlsym(h, "cudaMalloc"));
    dlclose(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_linked_dropin),
                                        cmocka_unit_test(test_linked_dropin_runtime_untouched) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
