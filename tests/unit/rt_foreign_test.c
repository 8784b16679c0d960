/*
 * rt_foreign_test.c - a libcudart of another CUDA major version than the
 * headers the shim was generated from.
 *
 * Runtime signatures changed between releases (CUDA 13 reshaped several), so
 * the shim must forward such a library's runtime calls untouched and never
 * run hooks on them, while the driver calls that library makes stay seen.
 * The fake runtime built as the other major's (libcudart.so.12 beside a 13.x tree, libcudart.so.13 beside a
 * 12.x one: soname and symbol versions, RT_FOREIGN_CUDART, RT_FOREIGN_SONAME) plays the foreign library.
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
    assert_non_null(strstr(di.dli_fname, RT_FOREIGN_SONAME));

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

typedef int (*six_fn)(long, long, long, long, long, long);
typedef int (*shape_fn)(long *);
int cudaProfilerStart(void);   /* the shim's wrapper, this build's prototype */

/*
 * Runs first: the foreign copy's first call comes through the shim's wrapper
 * (this program's reference is bound to it) and finds the copy. The other major's
 * cudaProfilerStart takes six arguments (tests/fake/fake_cudart_other_shape.c);
 * they must arrive as passed: the call is forwarded by a jump with the
 * registers untouched (first_entry.c), never re-made through this build's prototype.
 */
static void test_first_call_keeps_foreign_shape(void **state)
{
    (void)state;
    void *h = dlopen(RT_FOREIGN_CUDART, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    shape_fn shape = (shape_fn)dlsym(h, "fake_cudart_other_shape");
    assert_non_null(shape);
    six_fn wrapper = (six_fn)(void *)cudaProfilerStart;
    Dl_info di;
    assert_true(dladdr((void *)wrapper, &di) != 0);
    assert_non_null(strstr(di.dli_fname, "libcushim"));
    for (int round = 1; round <= 2; round++) {   /* the first call, then the fast path */
        assert_int_equal(wrapper(11 * round, 22, 33, 44, 55, 66), 0);
        long got[6];
        assert_int_equal(shape(got), round);
        assert_int_equal(got[0], 11 * round);
        assert_int_equal(got[1], 22);
        assert_int_equal(got[2], 33);
        assert_int_equal(got[3], 44);
        assert_int_equal(got[4], 55);
        assert_int_equal(got[5], 66);
    }
    dlclose(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_call_keeps_foreign_shape),
        cmocka_unit_test(test_foreign_runtime_passes_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
