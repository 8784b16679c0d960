/*
 * rt_nodriver_test.c - a program with the shim but no driver: CUDA probes get
 * the answers they would get without the shim, calls fail cleanly.
 * Skips where a real libcuda.so.1 is installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);
int cudaDeviceSynchronize(void);

static int system_has_libcuda(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL &&
              dlopen("libcuda.so.1", RTLD_LAZY) != NULL);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

static void test_probe(void **state)
{
    (void)state;
    if (system_has_libcuda())
        skip();
    /* A NULL answer comes with a dlerror() message, as without the shim: callers that
       test dlerror() instead of the pointer must not take NULL for cuInit. */
    (void)dlerror();
    assert_null(dlsym(RTLD_DEFAULT, "cuInit"));
    assert_non_null(dlerror());
    assert_null(dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"));
    assert_non_null(dlerror());
    assert_null(dlsym(RTLD_DEFAULT, "cudaMalloc"));
    assert_non_null(dlerror());
    assert_null(dlsym(RTLD_NEXT, "cuInit"));
    assert_non_null(dlerror());
    void *self = dlopen(NULL, RTLD_NOW);   /* the program's handle searches the global scope */
    assert_null(dlsym(self, "cuInit"));
    assert_non_null(dlerror());
    assert_null(dlvsym(self, "cuInit", "GLIBC_2.2.5"));
    assert_non_null(strstr(dlerror(), "cuInit"));
    assert_null(dlvsym(RTLD_DEFAULT, "cuInit", "GLIBC_2.2.5"));
    assert_non_null(dlerror());
    Dl_info di;
    assert_true(dladdr((void *)cuInit, &di) != 0);
    void *shim = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);   /* the shim's own handle */
    assert_ptr_equal(dlsym(shim, "cuInit"), (void *)cuInit);
    assert_null(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD));
    assert_int_equal(cuInit(0), 500);                       /* CUDA_ERROR_NOT_FOUND */
    int v = -1;
    assert_int_equal(cuDriverGetVersion(&v), 500);
    assert_int_equal(v, -1);
    assert_int_equal(cudaDeviceSynchronize(), 500);         /* cudaErrorSymbolNotFound */
    assert_null(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_probe) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
