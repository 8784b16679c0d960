/*
 * rt_ctor_dlsym_test.c - dlsym of CUDA names from ELF constructors and
 * destructors (loader lock held) of a dlopen'ed library and of its dependency,
 * repeatedly and while another thread keeps asking dlsym and calling a
 * wrapper: no deadlock (the test's TIMEOUT), no crash, answers consistent with
 * dlerror() (rt_lib_ctor.c exits with 3 otherwise). Linked with libcushim.so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

int cuDriverGetVersion(int *v);

static _Atomic int stop;

static void *prober(void *arg)
{
    (void)arg;
    while (!stop) {
        (void)dlsym(RTLD_DEFAULT, "cuInit");
        (void)dlsym(RTLD_NEXT, "cuMemAlloc_v2");
        int v;
        (void)cuDriverGetVersion(&v);
    }
    return NULL;
}

static void test_ctor_dlsym(void **state)
{
    (void)state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, prober, NULL), 0);
    for (int i = 0; i < 50; i++) {
        void *h = dlopen(RT_CTOR_LIB, (i & 1) ? RTLD_NOW | RTLD_GLOBAL : RTLD_NOW | RTLD_LOCAL);
        assert_non_null(h);
        assert_non_null(dlsym(h, "rt_ctor_x"));
        assert_int_equal(dlclose(h), 0);
    }
    stop = 1;
    pthread_join(t, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_ctor_dlsym) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
