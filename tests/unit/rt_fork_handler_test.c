/*
 * rt_fork_handler_test.c - a fork handler registered before the shim's makes
 * CUDA calls: the shim must not hold a lock across fork() preparation.
 *
 * The drop-in is dlopen'ed after the program registered its own atfork
 * handler, so that handler's prepare stage runs after the shim's (handlers
 * prepare in reverse order). Its first call of cuDriverGetVersion resolves
 * the real function, which takes the hook mutex: a shim that locked that
 * mutex while preparing fork would deadlock here (ctest's timeout catches it).
 * Run with LD_LIBRARY_PATH=<dropin dir>:<stand-in driver dir>.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

typedef int (*version_fn)(int *);
static version_fn get_version;
static int prepare_version;

static void prepare(void)
{
    if (get_version != NULL)
        get_version(&prepare_version);   /* first call: resolves the real function */
}

static void test_fork_handler_calls_cuda(void **state)
{
    (void)state;
    assert_int_equal(pthread_atfork(prepare, NULL, NULL), 0);
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    assert_non_null(h);
    assert_non_null(dlsym(h, "cushim_host_get"));   /* it is the drop-in */
    get_version = (version_fn)dlsym(h, "cuDriverGetVersion");
    assert_non_null(get_version);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int v = 0;
        _exit(get_version(&v) == 0 && v == 13000 ? 0 : 3);   /* calls still work in the child */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(prepare_version, 13000);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_fork_handler_calls_cuda) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
