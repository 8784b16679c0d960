/*
 * rt_counts_test.c - CUSHIM_COUNTS: every wrapper entry is counted (with and
 * without hooks, also calls from inside hooks), the file format, and a forked
 * child writing <path>.<pid> with its own counts, an exec'd one too (and it
 * finds no variable set by the shim). Run with CUSHIM_COUNTS set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static CUresult fake_get_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx(CUcontext *c)
{
    *c = NULL;
    return CUDA_SUCCESS;
}

static int pre_nested(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c;
    (void)u;
    (void)slot;
    CUcontext ctx;
    cuCtxGetCurrent(&ctx);
    return CUSHIM_CONTINUE;
}

static long count_in(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[256];
    long n = 0;
    size_t len = strlen(name);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, name, len) == 0 && line[len] == '\t')
            n = atol(line + len + 1);
    fclose(f);
    return n;
}

static void test_counts(void **state)
{
    (void)state;
    const char *path = getenv("CUSHIM_COUNTS");
    assert_non_null(path);
    assert_true(cnt_enabled);
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuCtxGetCurrent, (void *)fake_ctx);
    int v;
    CUcontext ctx;
    for (int i = 0; i < 7; i++)
        cuDriverGetVersion(&v);
    for (int i = 0; i < 3; i++)
        cuCtxGetCurrent(&ctx);
    uint64_t h;
    cushim_plugin *p = rt_test_plugin("counts-test");
    assert_int_equal(rt_hook(p, CUSHIM_API_cuDriverGetVersion, 0, pre_nested, NULL, NULL, &h), CUSHIM_OK);
    cuDriverGetVersion(&v);   /* +1 version, +1 ctx from inside the hook */
    assert_int_equal(rt_host()->hooks_remove(p, h), CUSHIM_OK);
    assert_non_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));  /* counter chain */
    assert_int_equal(cnt_get(CUSHIM_API_cuDriverGetVersion), 8);
    assert_int_equal(cnt_get(CUSHIM_API_cuCtxGetCurrent), 4);
    cnt_write();
    assert_int_equal(count_in(path, "cuDriverGetVersion"), 8);
    assert_int_equal(count_in(path, "cuCtxGetCurrent"), 4);
    assert_int_equal(count_in(path, "cuInit"), 0);

    pid_t pid = fork();
    if (pid == 0) {
        cuDriverGetVersion(&v);
        cuDriverGetVersion(&v);
        exit(0);   /* atexit handler writes <path>.<pid> */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char child[4200];
    snprintf(child, sizeof child, "%s.%d", path, (int)pid);
    assert_int_equal(count_in(child, "cuDriverGetVersion"), 2);
    assert_int_equal(count_in(child, "cuCtxGetCurrent"), 0);
    unlink(child);
    assert_int_equal(cnt_get(CUSHIM_API_cuDriverGetVersion), 8);

    /* An exec'd descendant: <path> is taken by this process, so <path>.<pid>. */
    pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "rt_counts_test", "--exec-child", (char *)NULL);
        _exit(127);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(child, sizeof child, "%s.%d", path, (int)pid);
    assert_int_equal(count_in(child, "cuCtxGetCurrent"), 3);
    unlink(child);
}

static int exec_child(void)
{
    rt_record_real(CUSHIM_API_cuCtxGetCurrent, (void *)fake_ctx);
    CUcontext ctx;
    for (int i = 0; i < 3; i++)
        cuCtxGetCurrent(&ctx);
    /* Ownership is decided by file locks: the shim never mutates the environment
       (a setenv at a late initialisation would race getenv in other threads). */
    return getenv("CUSHIM_COUNTS_SESSION") == NULL ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exec-child") == 0)
        return exec_child();
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_counts) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
