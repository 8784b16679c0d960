/*
 * rt_serve_test.c - CUSHIM_HOOK_SERVE (cushim.h, docs/plugin-sdk.md "Hooks"): in a program with the shim and
 * no driver, a call reaches a pre hook registered with the flag and the hook's result is the call's; a call
 * the hook lets through fails as it does without hooks (CUDA_ERROR_NOT_FOUND), its post hooks see it skipped;
 * an API with hooks but none serving fails before them as before; the flag without a pre hook is refused;
 * a CUDA call made inside the serving hook is not served (it fails: the hook owns the call). Skips where a
 * real libcuda.so.1 is installed.
 * Run as 'rt_serve_test none' under CUSHIM_REAL_LIBCUDA=none (the remoting's client: no driver by declaration),
 * the program's own cuGetProcAddress_v2 answers with the shim's exports (a static cudart, CuPy's, asks it itself
 * and gives up with cudaErrorCallRequiresNewerDriver when it fails), and a function it hands out is served; with
 * only no driver found (CUSHIM_REAL_LIBCUDA=/nonexistent) it fails as any call does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cushim/cushim.h"

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);
int cuDeviceGetCount(int *n);
int cuGetErrorName(int error, const char **s);
int cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags, int *status);

static int mode_none;   /* argv[1] "none": run under CUSHIM_REAL_LIBCUDA=none */

static const cushim_host *host;
static int served, posts, post_skipped, inner_result;

static int serve_version(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    served++;
    assert_null(call->real);
    int **pv = call->params;   /* cushim_params_cuDriverGetVersion: { int *driverVersion } */
    **pv = 424242;
    inner_result = cuDeviceGetCount(&(int){0});   /* made by the hook: straight through, not served */
    return cushim_call_skip(call, 0);
}

static int pass(cushim_call *call, void *user, uint64_t *slot)
{
    (void)call, (void)user, (void)slot;
    served++;
    return CUSHIM_CONTINUE;
}

static void post(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    posts++;
    post_skipped += (call->flags & CUSHIM_CALL_SKIPPED) != 0;
}

static int serve_init(const cushim_host *h, cushim_plugin *self)
{
    uint64_t g;
    cushim_hook_spec a = { .size = sizeof a, .flags = CUSHIM_HOOK_SERVE, .select = "cuDriverGetVersion",
                           .pre = serve_version, .post = post };
    cushim_hook_spec b = { .size = sizeof b, .flags = CUSHIM_HOOK_SERVE, .select = "cuInit,cuDeviceGetCount",
                           .pre = pass, .post = post };
    cushim_hook_spec c = { .size = sizeof c, .select = "cuGetErrorName", .pre = pass };   /* no flag */
    cushim_hook_spec bad = { .size = sizeof bad, .flags = CUSHIM_HOOK_SERVE, .select = "cuInit", .post = post };
    assert_int_equal(h->hooks_add(self, &bad, &g), CUSHIM_EINVAL);
    return h->hooks_add(self, &a, &g) || h->hooks_add(self, &b, &g) || h->hooks_add(self, &c, &g);
}

static int system_has_libcuda(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL && dlopen("libcuda.so.1", RTLD_LAZY) != NULL);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

static void test_serve(void **state)
{
    (void)state;
    if (system_has_libcuda())
        skip();
    cushim_host_get_fn get = (cushim_host_get_fn)dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME);
    assert_non_null(get);
    host = get(CUSHIM_ABI_VERSION);
    assert_non_null(host);
    static const cushim_plugin_def def = { .size = sizeof def, .abi_version = CUSHIM_ABI_VERSION, .name = "serve",
                                           .version = "test", .description = "serves calls", .init = serve_init };
    cushim_plugin *self;
    char err[256] = "";
    assert_int_equal(host->plugin_register(&def, NULL, &self, err, sizeof err), CUSHIM_OK);

    int v = -1;
    assert_int_equal(cuDriverGetVersion(&v), 0);   /* served */
    assert_int_equal(v, 424242);
    assert_int_equal(served, 1);
    assert_int_equal(inner_result, 500);           /* the hook's own call: CUDA_ERROR_NOT_FOUND, not served */
    assert_int_equal(posts, 1);
    assert_int_equal(post_skipped, 1);

    assert_int_equal(cuInit(0), 500);              /* the hook ran and let it through: fails as before */
    assert_int_equal(served, 2);
    assert_int_equal(posts, 2);
    assert_int_equal(post_skipped, 2);

    const char *s = "untouched";
    assert_int_equal(cuGetErrorName(0, &s), 500);  /* hooked, none serving: fails before the hooks */
    assert_int_equal(served, 2);
    assert_string_equal(s, "untouched");

    /* the program's own cuGetProcAddress_v2 (not hooked here) */
    void *fn = NULL;
    int st = -1;
    int r = cuGetProcAddress_v2("cuDriverGetVersion", &fn, 12000, 0, &st);
    if (!mode_none) {
        assert_int_equal(r, 500);                  /* no driver found: fails as any call */
        assert_null(fn);
        return;
    }
    assert_int_equal(r, 0);
    assert_int_equal(st, 0);                       /* CU_GET_PROC_ADDRESS_SUCCESS */
    assert_ptr_equal(fn, (void *)cuDriverGetVersion);   /* the shim's export */
    v = -1;
    assert_int_equal(((int (*)(int *))fn)(&v), 0); /* served by the hook */
    assert_int_equal(v, 424242);
    assert_int_equal(served, 3);
    fn = (void *)1;
    assert_int_equal(cuGetProcAddress_v2("cuNoSuchFunction", &fn, 12000, 0, &st), 0);
    assert_null(fn);
    assert_int_equal(st, 1);                       /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
}

int main(int argc, char **argv)
{
    mode_none = argc > 1 && strcmp(argv[1], "none") == 0;
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_serve) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
