/*
 * rt_foreign_test.c - a libcudart of another CUDA major version than the
 * headers the shim was generated from.
 *
 * Runtime signatures changed between releases (CUDA 13 reshaped several), so
 * the shim must forward such a library's runtime calls untouched and never
 * run hooks on them, while the driver calls that library makes stay seen.
 * The fake runtime built as libcudart.so.12 (soname and symbol versions,
 * RT_FOREIGN_CUDART) plays the foreign library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cushim/cushim.h"
#include "cushim_api_ids.h"

const cushim_host *cushim_host_get(uint32_t abi_version);

static int pre_calls[CUSHIM_API_ID_LIMIT];

static int count_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    pre_calls[call->api_id]++;
    return CUSHIM_CONTINUE;
}

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
int cudaMalloc(void **devPtr, size_t size);   /* this program's own wrappers (the runtime objects) */
int cudaFree(void *devPtr);

static void test_foreign_runtime_passes_through(void **state)
{
    (void)state;
    const cushim_host *host = cushim_host_get(CUSHIM_ABI_VERSION);
    assert_non_null(host);
    static const cushim_plugin_def def = { .size = sizeof def, .abi_version = CUSHIM_ABI_VERSION,
                                           .name = "foreign-test" };
    cushim_plugin *p = NULL;
    assert_int_equal(host->plugin_register(&def, NULL, &p, NULL, 0), CUSHIM_OK);
    /* One group over all three. */
    cushim_hook_spec spec = { .size = sizeof spec, .select = "cudaMalloc,cudaFree,cuMemAlloc_v2", .pre = count_pre };
    uint64_t g;
    assert_int_equal(host->hooks_add(p, &spec, &g), CUSHIM_OK);

    void *h = dlopen(RT_FOREIGN_CUDART, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    malloc_fn m = (malloc_fn)dlsym(h, "cudaMalloc");
    free_fn f = (free_fn)dlsym(h, "cudaFree");
    assert_non_null(m);
    assert_non_null(f);

    /* The handed-out pointer is the foreign copy's own function: never a wrapper built
       from this build's prototypes... */
    Dl_info di;
    assert_true(dladdr((void *)m, &di) != 0);
    assert_null(strstr(di.dli_fname, "cushim"));
    assert_non_null(strstr(di.dli_fname, "libcudart.so.12"));

    /* ...so its calls run no hooks. */
    for (int i = 0; i < 3; i++) {
        void *p = NULL;
        assert_int_equal(m(&p, 256), 0);
        assert_non_null(p);
        assert_int_equal(f(p), 0);
    }
    assert_int_equal(pre_calls[CUSHIM_API_cudaMalloc], 0);
    assert_int_equal(pre_calls[CUSHIM_API_cudaFree], 0);
    /* The driver calls it made through cuGetProcAddress are still seen. */
    assert_int_equal(pre_calls[CUSHIM_API_cuMemAlloc_v2], 3);

    /* A caller bound to the wrapper itself (an unversioned reference: this program's own
       cudaMalloc) while only the foreign copy is loaded: forwarded to it untouched. */
    for (int i = 0; i < 2; i++) {
        void *p = NULL;
        assert_int_equal(cudaMalloc(&p, 256), 0);
        assert_non_null(p);
        assert_int_equal(cudaFree(p), 0);
    }
    assert_int_equal(pre_calls[CUSHIM_API_cudaMalloc], 0);
    assert_int_equal(pre_calls[CUSHIM_API_cuMemAlloc_v2], 5);

    assert_int_equal(host->hooks_remove(p, g), CUSHIM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_runtime_passes_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
