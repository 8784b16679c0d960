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
/* The other libraries' wrappers (in the trees that interpose them): weak, so the test builds on any tree. */
int nvmlInit_v2(void) __attribute__((weak));
int ncclGetVersion(int *version) __attribute__((weak));
int cublasCreate_v2(void **handle) __attribute__((weak));

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
    /* Each library's descriptor 'fail' value when its library is not loaded (runtime/wrap.h RT_FAIL). */
    if (nvmlInit_v2 != NULL)
        assert_int_equal(nvmlInit_v2(), 13);                /* NVML_ERROR_FUNCTION_NOT_FOUND */
    if (ncclGetVersion != NULL) {
        int nv = -1;
        assert_int_equal(ncclGetVersion(&nv), 2);           /* ncclSystemError */
        assert_int_equal(nv, -1);
    }
    if (cublasCreate_v2 != NULL) {
        void *h = (void *)&v;
        assert_int_equal(cublasCreate_v2(&h), 15);          /* CUBLAS_STATUS_NOT_SUPPORTED */
        assert_ptr_equal(h, (void *)&v);
    }
    assert_null(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_probe) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
