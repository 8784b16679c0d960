/*
 * rt_sdk_unwind_cxx_test.cc - issue #10 item 6b for C++: a hook that throws.
 * The exception unwinds through the shim's slow path (compiled with
 * -fexceptions, its frame a cleanup variable) to the program's catch; the
 * thread must be outside any hooked call afterwards (hooks run again, no
 * frame, no epoch section), also when the throwing hook was in a nested call
 * (made by a real function) and the exception left two frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdexcept>
extern "C" {
#include <cmocka.h>
}

#include "cushim/cushim.h"
#include "cushim_api_ids.h"

extern "C" {
const cushim_host *cushim_host_get(uint32_t abi_version);
void rt_record_real(uint32_t id, void *lib_fn);
int rt_in_hook(void);
int ep_poisoned(void);
/* The shim's wrappers (linked in from the runtime's objects). */
int cuDriverGetVersion(int *v);
int cuInit(unsigned int flags);
}

static const cushim_host *host;
static cushim_plugin *plug;
static int pre_calls, throw_in_pre, throw_in_post, throw_at_depth1;

extern "C" int fake_get_version(int *v)
{
    *v = 13000;
    return 0;
}

extern "C" int fake_init(unsigned int)
{
    int v;
    return cuDriverGetVersion(&v);   /* nested hooked call, like cudart calling the driver */
}

static int pre(cushim_call *c, void *, uint64_t *)
{
    pre_calls++;
    if (throw_in_pre || (throw_at_depth1 && c->depth == 1))
        throw std::runtime_error("from a pre hook");
    return CUSHIM_CONTINUE;
}

static void post(cushim_call *, void *, uint64_t *)
{
    if (throw_in_post)
        throw std::runtime_error("from a post hook");
}

static void assert_clean(void)
{
    assert_false(ep_poisoned());   /* popped by the cleanup, not by the dead-frame fallback */
    assert_null(host->current_call());
    assert_false(rt_in_hook());
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);   /* ESTATE while still "inside" */
    throw_in_pre = throw_in_post = throw_at_depth1 = 0;
    int before = pre_calls, v;
    assert_int_equal(cuDriverGetVersion(&v), 0);
    assert_int_equal(pre_calls, before + 1);
}

static int setup(void **)
{
    host = cushim_host_get(CUSHIM_ABI_VERSION);
    static cushim_plugin_def def = {};   /* by member: C++17 has no designated initialisers */
    def.size = sizeof def;
    def.abi_version = CUSHIM_ABI_VERSION;
    def.name = "unwind-cxx";
    if (host == nullptr || host->plugin_register(&def, nullptr, &plug, nullptr, 0) != CUSHIM_OK)
        return 1;
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuInit, (void *)fake_init);
    cushim_hook_spec spec = {};
    spec.size = sizeof spec;
    spec.select = "cuDriverGetVersion,cuInit";
    spec.pre = pre;
    spec.post = post;
    uint64_t g;
    return host->hooks_add(plug, &spec, &g) != CUSHIM_OK;
}

static void test_throw_from_pre(void **)
{
    throw_in_pre = 1;
    int v, caught = 0;
    try {
        cuDriverGetVersion(&v);
    } catch (const std::runtime_error &) {
        caught = 1;
    }
    assert_true(caught);
    assert_clean();
}

static void test_throw_from_post(void **)
{
    throw_in_post = 1;
    int v, caught = 0;
    try {
        cuDriverGetVersion(&v);
    } catch (const std::runtime_error &) {
        caught = 1;
    }
    assert_true(caught);
    assert_clean();
}

static void test_throw_out_of_two_frames(void **)
{
    throw_at_depth1 = 1;
    int caught = 0;
    try {
        cuInit(0);
    } catch (const std::runtime_error &) {
        caught = 1;
    }
    assert_true(caught);
    assert_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throw_from_pre),
        cmocka_unit_test(test_throw_from_post),
        cmocka_unit_test(test_throw_out_of_two_frames),
    };
    return cmocka_run_group_tests(tests, setup, nullptr);
}
