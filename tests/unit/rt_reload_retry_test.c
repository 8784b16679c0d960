/*
 * rt_reload_retry_test.c - a failed search for the real driver is tried again once the program
 * loads one (issue #10, item 11). The program is linked with the shim (RT_RETRY_DROPIN=0) or the
 * drop-in libcuda.so.1 (1) and no real driver can be found at first (CUSHIM_REAL_LIBCUDA points
 * nowhere, nothing on the library path): a call fails with CUDA_ERROR_NOT_FOUND. Then it dlopens
 * the stand-in driver by its path (RTLD_LOCAL, as a program that knows where its driver is): the
 * next calls must reach it. Before the fix, the first failure was final.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);

/* A libcuda.so.1 the dynamic linker finds by name: then the first search cannot fail. */
static int system_has_libcuda(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL && dlopen("libcuda.so.1", RTLD_LAZY) != NULL);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

static void test_retry(void **state)
{
    (void)state;
    if (!RT_RETRY_DROPIN && system_has_libcuda())
        skip();
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), 500);   /* CUDA_ERROR_NOT_FOUND: no driver yet */
    assert_int_equal(cuDriverGetVersion(&v), 500);   /* nothing was loaded since: still none */
    void *h = dlopen(RT_STUB_DRIVER, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    int (*stub_calls)(void) = (int (*)(void))dlsym(h, "rt_stub_call_count");
    assert_non_null(stub_calls);
    int before = stub_calls();
    assert_int_equal(cuInit(0), 0);
    assert_int_equal(cuDriverGetVersion(&v), 0);
    assert_int_equal(v, 13000);
    assert_int_equal(stub_calls(), before + 2);   /* they reached the stand-in */
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_retry) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
