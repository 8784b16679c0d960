/*
 * rt_dlsym_test.c - dlsym/dlvsym interposition and cuGetProcAddress mapping,
 * in a program linked (in this order) with libcushim.so, two RTLD_NEXT probe
 * libraries and a stand-in libcuda.so.1 (rt_lib_cuda.c). With CUSHIM_DISABLE=1
 * the same program checks the pure pass-through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* What the program sees: the shim's exports (first in link order). */
int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);
int cuMemAlloc_v2(unsigned long long *dptr, size_t size);
int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);
void *rt_next_lookup(const char *name);
void *rt_next_vlookup(const char *name, const char *version);
void *rt_stub_lookup(const char *symbol, int version);
int rt_stub_call_count(void);

static int disabled;
static void *drv;

static void *stub_fn(const char *name)
{
    return rt_stub_lookup(name, 13000);
}

static void test_non_cuda_forward(void **state)
{
    (void)state;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(libc);
    assert_ptr_equal(dlsym(libc, "div"), dlsym(RTLD_DEFAULT, "div"));   /* no sanitizer intercepts div */
    assert_non_null(dlsym(RTLD_DEFAULT, "printf"));
    assert_null(dlsym(RTLD_DEFAULT, "no_such_symbol_xyz"));
    assert_non_null(dlerror());
    assert_null(dlsym(RTLD_DEFAULT, "cuNoSuchFunction"));   /* cu prefix, not wrapped */
    assert_non_null(dlvsym(libc, "dlsym", "GLIBC_2.2.5"));
    assert_null(dlvsym(libc, "strlen", "NO_SUCH_VERSION"));
    dlclose(libc);
}

static void test_rtld_next_caller(void **state)
{
    (void)state;
    /* liba asks RTLD_NEXT: must find libb's definition (2), not liba's own (1). */
    int (*probe)(void) = (int (*)(void))rt_next_lookup("rt_next_probe");
    assert_non_null(probe);
    assert_int_equal(probe(), 2);
    assert_null(rt_next_lookup("rt_next_nothing"));
    /* the executable's RTLD_NEXT: liba comes after libcushim */
    probe = (int (*)(void))dlsym(RTLD_NEXT, "rt_next_probe");
    assert_non_null(probe);
    assert_int_equal(probe(), 1);
}

static void test_handle_lookup(void **state)
{
    (void)state;
    assert_non_null(drv);
    void *f = dlsym(drv, "cuDriverGetVersion");
    void *st = dlsym(drv, "cuStubOnly");   /* not wrapped: passes through */
    assert_non_null(st);
    assert_ptr_equal(st, stub_fn("cuStubOnly"));
    if (disabled) {
        assert_ptr_equal(f, stub_fn("cuDriverGetVersion"));
        return;
    }
    assert_ptr_equal(f, (void *)cuDriverGetVersion);
    assert_null(dlsym(RTLD_DEFAULT, "no_such_symbol_xyz"));   /* an error pending ... */
    assert_ptr_equal(dlsym(RTLD_DEFAULT, "cuDriverGetVersion"), (void *)cuDriverGetVersion);
    assert_null(dlerror());                                    /* ... cleared by a found symbol */
    int before = rt_stub_call_count(), v = 0;
    assert_int_equal(((int (*)(int *))f)(&v), 0);
    assert_int_equal(v, 13000);
    assert_int_equal(rt_stub_call_count(), before + 1);
    /* wrapped name the driver lacks: NULL, also for RTLD_DEFAULT despite our export */
    assert_null(dlsym(drv, "cuMemcpy_ptds"));
    assert_null(dlsym(RTLD_DEFAULT, "cuMemcpy_ptds"));
    assert_ptr_equal(dlsym(RTLD_DEFAULT, "cuInit"), (void *)cuInit);
    assert_ptr_equal(dlvsym(drv, "cuInit", "NO_SUCH_VERSION"), NULL);
    /* RTLD_NEXT from liba for a wrapped name: the next definer is the driver */
    assert_ptr_equal(rt_next_lookup("cuInit"), (void *)cuInit);
}

static void test_getprocaddress(void **state)
{
    (void)state;
    void *p = NULL;
    int status = -1;
    assert_int_equal(cuGetProcAddress_v2("cuDriverGetVersion", &p, 13000, 0, &status), 0);
    assert_int_equal(status, 0);
    assert_ptr_equal(p, disabled ? stub_fn("cuDriverGetVersion") : (void *)cuDriverGetVersion);
    assert_int_equal(cuGetProcAddress_v2("cuMemAlloc", &p, 13000, 0, &status), 0);
    assert_ptr_equal(p, disabled ? stub_fn("cuMemAlloc") : (void *)cuMemAlloc_v2);
    assert_int_equal(cuGetProcAddress_v2("cuStubOnly", &p, 13000, 0, &status), 0);
    assert_ptr_equal(p, stub_fn("cuStubOnly"));
    assert_int_equal(cuGetProcAddress_v2("cuNope", &p, 13000, 0, &status), 500);
    assert_int_equal(status, 1);
    assert_null(p);
    if (disabled)
        return;
    assert_int_equal(cuGetProcAddress_v2("cuAlias", &p, 13000, 0, &status), 0);   /* address map */
    assert_ptr_equal(p, (void *)cuInit);
    assert_int_equal(cuGetProcAddress_v2("cuGetProcAddress", &p, 13000, 0, &status), 0);
    assert_ptr_equal(p, (void *)cuGetProcAddress_v2);
    assert_int_equal(cuGetProcAddress_v2("cuGetProcAddress", &p, 11030, 0, &status), 0);
    assert_ptr_equal(p, (void *)cuGetProcAddress);
    assert_int_equal(cuGetProcAddress("cuInit", &p, 12000, 0), 0);
    assert_ptr_equal(p, (void *)cuInit);
    /* what the runtime does: dlsym the entry point, then resolve through it */
    int (*gpa)(const char *, void **, int, uint64_t, int *) =
        (int (*)(const char *, void **, int, uint64_t, int *))dlsym(drv, "cuGetProcAddress_v2");
    assert_ptr_equal((void *)gpa, (void *)cuGetProcAddress_v2);
    assert_int_equal(gpa("cuInit", &p, 13000, 0, &status), 0);
    assert_ptr_equal(p, (void *)cuInit);
    assert_int_equal(((int (*)(unsigned))p)(0), 0);
}

int main(void)
{
    disabled = getenv("CUSHIM_DISABLE") != NULL;
    drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_non_cuda_forward),
        cmocka_unit_test(test_rtld_next_caller),
        cmocka_unit_test(test_handle_lookup),
        cmocka_unit_test(test_getprocaddress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
