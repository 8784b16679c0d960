/*
 * rt_hooks_test.c - hook chains through the host table: order by priority,
 * skip, result override, parameter modification, per-hook slots, groups over
 * several APIs (all-or-nothing) sharing one chain, removal, limits and error codes, the call
 * frame's fields, results of every return kind, and the error value when no
 * real function exists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static cushim_plugin *plug;
static const cushim_host *host;

static int real_calls;
static CUresult fake_get_version(int *v)
{
    real_calls++;
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx(CUcontext *c)
{
    real_calls++;
    *c = NULL;
    return CUDA_SUCCESS;
}

static const char *fake_error_string(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "some error";
}

static cudaError_t fake_get_device(int *d)
{
    *d = 3;
    return cudaSuccess;
}

static char trace[256];
static void tr(char c)
{
    size_t n = strlen(trace);
    trace[n] = c;
    trace[n + 1] = '\0';
}

static int pre_tag(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c;
    tr(*(const char *)user);
    *slot = (uint64_t)*(const char *)user;
    return CUSHIM_CONTINUE;
}

static void post_tag(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c;
    char t = *(const char *)user;
    assert_int_equal(*slot, (uint64_t)t);   /* each hook has its own slot */
    tr((char)(t - 'a' + 'A'));
}

static int group_setup(void **state)
{
    (void)state;
    host = rt_host();
    plug = rt_test_plugin("hooks-test");
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuCtxGetCurrent, (void *)fake_ctx);
    rt_record_real(CUSHIM_API_cudaGetErrorString, (void *)fake_error_string);
    rt_record_real(CUSHIM_API_cudaGetDevice, (void *)fake_get_device);
    return plug == NULL;
}

static void reset(void)
{
    trace[0] = '\0';
    real_calls = 0;
}

static void test_no_hook(void **state)
{
    (void)state;
    reset();
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(v, 13000);
    assert_int_equal(real_calls, 1);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
    /* No hook, resolved: the fast path jumps to the real function. */
    assert_ptr_equal(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].fast), (void *)fake_get_version);
}

static void test_priority_order(void **state)
{
    (void)state;
    reset();
    uint64_t h[3];
    static const char a = 'a', b = 'b', c = 'c';
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 10, pre_tag, post_tag, (void *)&a, &h[0]), CUSHIM_OK);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, -5, pre_tag, post_tag, (void *)&b, &h[1]), CUSHIM_OK);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 10, pre_tag, post_tag, (void *)&c, &h[2]), CUSHIM_OK);
    assert_ptr_equal(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].fast), rt_slow_of[CUSHIM_API_cuDriverGetVersion]);
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_string_equal(trace, "bacCAB");
    assert_int_equal(real_calls, 1);
    assert_int_equal(v, 13000);
    for (int i = 0; i < 3; i++)
        assert_int_equal(host->hooks_remove(plug, h[i]), CUSHIM_OK);
    assert_int_equal(host->hooks_remove(plug, h[1]), CUSHIM_ENOENT);
    reset();
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_string_equal(trace, "");
    assert_int_equal(real_calls, 1);
    assert_ptr_equal(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].fast), (void *)fake_get_version);
}

static int pre_skip(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    tr('s');
    return cushim_call_skip(c, 999);
}

static void post_skip(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    assert_true(c->flags & CUSHIM_CALL_SKIPPED);
    tr('S');
}

static void test_skip(void **state)
{
    (void)state;
    reset();
    static const char a = 'a', z = 'z';
    uint64_t h1, h2, h3;
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, pre_tag, post_tag, (void *)&a, &h1), CUSHIM_OK);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 1, pre_skip, post_skip, NULL, &h2), CUSHIM_OK);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 2, pre_tag, post_tag, (void *)&z, &h3), CUSHIM_OK);
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), 999);
    assert_int_equal(real_calls, 0);
    assert_int_equal(v, 0);
    assert_string_equal(trace, "asSA");   /* 'z' never saw the call */
    host->hooks_remove(plug, h1);
    host->hooks_remove(plug, h2);
    host->hooks_remove(plug, h3);
}

static void post_override(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    assert_int_equal(cushim_call_result(c), CUDA_SUCCESS);
    cushim_call_set_result(c, CUDA_ERROR_INVALID_VALUE);
}

static int other_int;
static int pre_redirect(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    cushim_params_cuDriverGetVersion *p = c->params;
    p->driverVersion = &other_int;
    assert_int_equal(c->api_id, CUSHIM_API_cuDriverGetVersion);
    assert_non_null(c->info);
    assert_string_equal(c->info->name, "cuDriverGetVersion");
    assert_ptr_equal(c->real, (void *)fake_get_version);
    return CUSHIM_CONTINUE;
}

static void test_override_and_params(void **state)
{
    (void)state;
    reset();
    uint64_t h1, h2;
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, pre_redirect, NULL, NULL, &h1), CUSHIM_OK);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, NULL, post_override, NULL, &h2), CUSHIM_OK);
    int v = 0;
    other_int = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(v, 0);
    assert_int_equal(other_int, 13000);
    assert_int_equal(real_calls, 1);
    host->hooks_remove(plug, h1);
    host->hooks_remove(plug, h2);
}

static void test_errors_and_limit(void **state)
{
    (void)state;
    uint64_t h[CUSHIM_MAX_HOOKS + 1];
    static const char a = 'a';
    cushim_hook_spec spec = { .size = sizeof spec, .api_id = CUSHIM_API_cuDriverGetVersion, .pre = pre_tag,
                              .user = (void *)&a };
    assert_int_equal(rt_hook(plug, 0, 0, pre_tag, NULL, NULL, &h[0]), CUSHIM_EINVAL);
    assert_int_equal(rt_hook(plug, CUSHIM_API_ID_LIMIT, 0, pre_tag, NULL, NULL, &h[0]), CUSHIM_EINVAL);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, NULL, NULL, NULL, &h[0]), CUSHIM_EINVAL);
    assert_int_equal(host->hooks_add(NULL, &spec, &h[0]), CUSHIM_EINVAL);            /* every hook has an owner */
    assert_int_equal(host->hooks_add((cushim_plugin *)&spec, &spec, &h[0]), CUSHIM_EINVAL);   /* not a plugin */
    assert_int_equal(host->hooks_add(plug, NULL, &h[0]), CUSHIM_EINVAL);
    spec.flags = 0x80;
    assert_int_equal(host->hooks_add(plug, &spec, &h[0]), CUSHIM_EINVAL);   /* unknown flag */
    spec.flags = 0;
    spec.size = 8;
    assert_int_equal(host->hooks_add(plug, &spec, &h[0]), CUSHIM_EINVAL);   /* too small */
    assert_int_equal(host->hooks_remove(plug, 0), CUSHIM_ENOENT);
    assert_int_equal(host->hooks_remove(plug, 0xfffffffffull), CUSHIM_ENOENT);
    assert_int_equal(host->hooks_remove(NULL, 1), CUSHIM_EINVAL);
    for (int i = 0; i < CUSHIM_MAX_HOOKS; i++)
        assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, i, pre_tag, post_tag, (void *)&a, &h[i]), CUSHIM_OK);
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, pre_tag, NULL, (void *)&a, &h[CUSHIM_MAX_HOOKS]),
                     CUSHIM_ELIMIT);
    /* A group over two APIs, one of them full: nothing is added to the other. */
    assert_int_equal(rt_hook_sel(plug, "cuDriverGetVersion,cuCtxGetCurrent", 0, pre_tag, NULL, (void *)&a,
                                 &h[CUSHIM_MAX_HOOKS]), CUSHIM_ELIMIT);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuCtxGetCurrent].chain));
    reset();
    int v;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(strlen(trace), 2 * CUSHIM_MAX_HOOKS);
    /* Another plugin cannot remove this plugin's groups. */
    cushim_plugin *other = rt_test_plugin("hooks-test-other");
    assert_non_null(other);
    assert_int_equal(host->hooks_remove(other, h[0]), CUSHIM_ENOENT);
    for (int i = CUSHIM_MAX_HOOKS - 1; i >= 0; i--)
        assert_int_equal(host->hooks_remove(plug, h[i]), CUSHIM_OK);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
}

static int group_pre_calls;
static int pre_count(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c;
    (void)user;
    (void)slot;
    group_pre_calls++;
    return CUSHIM_CONTINUE;
}

/* One registration, several APIs, one handle; selectors of every kind. */
static void test_groups_and_selectors(void **state)
{
    (void)state;
    uint64_t g;
    group_pre_calls = 0;
    assert_int_equal(rt_hook_sel(plug, "cuDriverGetVersion, name:cuCtxGetCurrent", 0, pre_count, NULL, NULL, &g),
                     CUSHIM_OK);
    int v;
    CUcontext ctx;
    cuDriverGetVersion(&v);
    cuCtxGetCurrent(&ctx);
    assert_int_equal(group_pre_calls, 2);
    assert_int_equal(host->hooks_remove(plug, g), CUSHIM_OK);
    cuDriverGetVersion(&v);
    cuCtxGetCurrent(&ctx);
    assert_int_equal(group_pre_calls, 2);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuCtxGetCurrent].chain));

    /* 'all': every API, one group; removal leaves none. */
    assert_int_equal(rt_hook_sel(plug, "all", 0, pre_count, NULL, NULL, &g), CUSHIM_OK);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        assert_non_null(atomic_load(&rt_slots[cushim_gen_apis[i].id].chain));
    assert_int_equal(host->hooks_remove(plug, g), CUSHIM_OK);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        assert_null(atomic_load(&rt_slots[cushim_gen_apis[i].id].chain));

    assert_int_equal(rt_hook_sel(plug, "cuNoSuchFunctionAnywhere", 0, pre_count, NULL, NULL, &g), CUSHIM_ENOMATCH);
    assert_int_equal(rt_hook_sel(plug, "cat:nonsense", 0, pre_count, NULL, NULL, &g), CUSHIM_EINVAL);
    assert_int_equal(rt_hook_sel(plug, "a,,b", 0, pre_count, NULL, NULL, &g), CUSHIM_EINVAL);
    assert_int_equal(rt_hook_sel(plug, "", 0, pre_count, NULL, NULL, &g), CUSHIM_EINVAL);
}

/* APIs hooked alike share one chain (hooks.c): one line for all of them on the call path. A change to some of
   them gives those a chain of their own and leaves the rest on the shared one; removal brings them back together;
   nothing leaks (the live chain count returns to where it was, and ASan runs this test). */
static void test_chains_shared(void **state)
{
    (void)state;
    const uint32_t a = CUSHIM_API_cuDriverGetVersion, b = CUSHIM_API_cuCtxGetCurrent;
    uint64_t g1, g2, live0, live, limbo;
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);
    hk_stats(&live0, &limbo);
    group_pre_calls = 0;
    assert_int_equal(rt_hook_sel(plug, "cuDriverGetVersion,cuCtxGetCurrent", 0, pre_count, NULL, NULL, &g1),
                     CUSHIM_OK);
    const hk_chain *ca = atomic_load(&rt_slots[a].chain), *cb = atomic_load(&rt_slots[b].chain);
    assert_non_null(ca);
    assert_ptr_equal(ca, cb);
    assert_int_equal(ca->n, 1);
    assert_int_equal(ca->refs, 2);
    assert_int_equal(((uintptr_t)ca) % 64, 0);   /* line-aligned */
    hk_stats(&live, &limbo);
    assert_int_equal(live, live0 + 1);

    /* a second hook on one of them: that one moves to a chain of two, the other keeps the shared one */
    assert_int_equal(rt_hook_sel(plug, "cuCtxGetCurrent", 5, pre_count, NULL, NULL, &g2), CUSHIM_OK);
    assert_ptr_equal(atomic_load(&rt_slots[a].chain), ca);
    cb = atomic_load(&rt_slots[b].chain);
    assert_ptr_not_equal(cb, ca);
    assert_int_equal(cb->n, 2);
    assert_int_equal(ca->refs, 1);
    int v;
    CUcontext ctx;
    cuDriverGetVersion(&v);
    cuCtxGetCurrent(&ctx);
    assert_int_equal(group_pre_calls, 3);

    /* removed again: the two end on equal chains (built separately: they held different ones) */
    assert_int_equal(host->hooks_remove(plug, g2), CUSHIM_OK);
    cb = atomic_load(&rt_slots[b].chain);
    assert_int_equal(cb->n, 1);
    assert_ptr_equal(cb->e[0].pre, ca->e[0].pre);
    cuDriverGetVersion(&v);
    cuCtxGetCurrent(&ctx);
    assert_int_equal(group_pre_calls, 5);

    /* the whole group's removal: both slots empty, every chain freed once no reader can hold it */
    assert_int_equal(host->hooks_remove(plug, g1), CUSHIM_OK);
    assert_null(atomic_load(&rt_slots[a].chain));
    assert_null(atomic_load(&rt_slots[b].chain));
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);
    hk_stats(&live, &limbo);
    assert_int_equal(live, live0);
    assert_int_equal(limbo, 0);
}

static const cushim_call *seen[4];
static cushim_call seen_copy[4];
static int nseen;
static int pre_frame(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    seen[nseen] = c;
    seen_copy[nseen++] = *c;
    assert_ptr_equal(host->current_call(), c);
    return CUSHIM_CONTINUE;
}

static void test_frame_fields(void **state)
{
    (void)state;
    uint64_t g1, g2;
    nseen = 0;
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, pre_frame, NULL, NULL, &g1), CUSHIM_OK);
    int v;
    uint64_t before = host->now_ns();
    cuDriverGetVersion(&v);
    cuDriverGetVersion(&v);
    assert_int_equal(nseen, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(seen_copy[i].size, sizeof(cushim_call));
        assert_int_equal(seen_copy[i].api_id, CUSHIM_API_cuDriverGetVersion);
        assert_int_equal(seen_copy[i].depth, 0);
        assert_null(seen_copy[i].parent);
        assert_int_not_equal(seen_copy[i].seq, 0);
        assert_int_equal(seen_copy[i].tid, host->thread_id());
        assert_int_equal(seen_copy[i].t_enter_ns, 0);   /* nobody asked for the time */
    }
    assert_int_not_equal(seen_copy[0].seq, seen_copy[1].seq);
    assert_null(host->current_call());
    /* With CUSHIM_HOOK_TIME the host reads the clock at entry. */
    cushim_hook_spec spec = { .size = sizeof spec, .flags = CUSHIM_HOOK_TIME,
                              .api_id = CUSHIM_API_cuDriverGetVersion, .post = post_override };
    assert_int_equal(host->hooks_add(plug, &spec, &g2), CUSHIM_OK);
    nseen = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_ERROR_INVALID_VALUE);
    uint64_t after = host->now_ns();
    assert_int_equal(nseen, 1);
    assert_true(seen_copy[0].t_enter_ns >= before && seen_copy[0].t_enter_ns <= after);
    assert_int_equal(host->hooks_remove(plug, g2), CUSHIM_OK);
    assert_int_equal(host->hooks_remove(plug, g1), CUSHIM_OK);
}

/* Post hooks alone (no pre hook in the chain: rt_enter skips the pre step) and CUSHIM_HOOK_EXIT_TIME: the post
   hook sees a zero slot, the entry and exit times in order (t_exit_ns 0 unless asked for), and a chain that gains
   or loses a pre hook switches between the two ways. */
static cushim_call post_seen[4];
static uint64_t post_slot_seen[4];
static int npost;
static void post_record(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    assert_true(npost < 4);
    post_slot_seen[npost] = *slot;
    post_seen[npost++] = *c;
    *slot = 99;   /* not seen by the next call */
}

static int pre_exit_calls;
static int pre_exit(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    pre_exit_calls++;
    assert_int_equal(c->t_exit_ns, 0);   /* the exit time is for post hooks */
    *slot = 7;
    return CUSHIM_CONTINUE;
}

static void test_post_only_and_exit_time(void **state)
{
    (void)state;
    uint64_t g1, g2, g3;
    int v;
    cushim_hook_spec spec = { .size = sizeof spec, .flags = CUSHIM_HOOK_TIME | CUSHIM_HOOK_EXIT_TIME,
                              .api_id = CUSHIM_API_cuDriverGetVersion, .post = post_record };
    assert_int_equal(host->hooks_add(plug, &spec, &g1), CUSHIM_OK);
    assert_false(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain)->flags & HK_HAS_PRE);
    reset();
    npost = 0;
    uint64_t before = host->now_ns();
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    uint64_t after = host->now_ns();
    assert_int_equal(real_calls, 2);
    assert_int_equal(npost, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(post_slot_seen[i], 0);
        assert_true(before <= post_seen[i].t_enter_ns && post_seen[i].t_enter_ns <= post_seen[i].t_exit_ns &&
                    post_seen[i].t_exit_ns <= after);
        assert_int_equal(post_seen[i].depth, 0);
    }
    assert_true(post_seen[0].t_exit_ns <= post_seen[1].t_enter_ns);
    assert_null(host->current_call());   /* the frame was popped */

    /* A pre hook joins (untimed): both run, the post hook's slot is still its own (0). */
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 5, pre_exit, NULL, NULL, &g2), CUSHIM_OK);
    assert_true(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain)->flags & HK_HAS_PRE);
    npost = 0;
    pre_exit_calls = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(pre_exit_calls, 1);
    assert_int_equal(npost, 1);
    assert_int_equal(post_slot_seen[0], 0);
    assert_int_not_equal(post_seen[0].t_exit_ns, 0);

    /* It leaves: post hooks alone again. */
    assert_int_equal(host->hooks_remove(plug, g2), CUSHIM_OK);
    assert_false(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain)->flags & HK_HAS_PRE);
    npost = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(npost, 1);
    assert_int_equal(pre_exit_calls, 1);

    /* Without CUSHIM_HOOK_EXIT_TIME in the chain, t_exit_ns stays 0 (no second clock read). */
    assert_int_equal(host->hooks_remove(plug, g1), CUSHIM_OK);
    spec.flags = CUSHIM_HOOK_TIME;
    assert_int_equal(host->hooks_add(plug, &spec, &g3), CUSHIM_OK);
    npost = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(npost, 1);
    assert_int_not_equal(post_seen[0].t_enter_ns, 0);
    assert_int_equal(post_seen[0].t_exit_ns, 0);
    assert_int_equal(host->hooks_remove(plug, g3), CUSHIM_OK);

    /* Unknown flag bits are refused. */
    spec.flags = 4;
    assert_int_equal(host->hooks_add(plug, &spec, &g3), CUSHIM_EINVAL);
}

/* Results of every return kind: CUresult, cudaError_t, a pointer (RET_OTHER). */
static int pre_results(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    if (c->info->ret_kind == CUSHIM_RET_OTHER) {
        static const char *replaced = "replaced";
        assert_int_equal(c->info->ret_size, sizeof(const char *));
        cushim_call_set_result_bytes(c, &replaced, sizeof replaced);
        return CUSHIM_SKIP;
    }
    return CUSHIM_CONTINUE;
}

static void post_results(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    if (c->info->ret_kind == CUSHIM_RET_CUDAERROR) {
        assert_int_equal(cushim_call_result(c), cudaSuccess);
        cushim_call_set_result(c, cudaErrorInvalidValue);
    } else if (c->info->ret_kind == CUSHIM_RET_OTHER) {
        const char *s = NULL;
        cushim_call_get_result_bytes(c, &s, sizeof s);
        assert_string_equal(s, "replaced");
    }
}

static void test_result_kinds(void **state)
{
    (void)state;
    uint64_t g;
    assert_int_equal(rt_hook_sel(plug, "cudaGetErrorString,cudaGetDevice", 0, pre_results, post_results, NULL, &g),
                     CUSHIM_OK);
    int d = 0;
    assert_int_equal(cudaGetDevice(&d), cudaErrorInvalidValue);
    assert_int_equal(d, 3);
    assert_string_equal(cudaGetErrorString(cudaSuccess), "replaced");
    assert_int_equal(host->hooks_remove(plug, g), CUSHIM_OK);
    assert_string_equal(cudaGetErrorString(cudaSuccess), "no error");
}

static void test_metadata(void **state)
{
    (void)state;
    assert_int_equal(cushim_api_id_limit(), CUSHIM_API_ID_LIMIT);
    assert_int_equal(host->api_id_limit(), CUSHIM_API_ID_LIMIT);
    assert_int_equal(host->api_count(), cushim_gen_api_count);
    const cushim_api_info *i = host->api_by_name("cuDriverGetVersion");
    assert_non_null(i);
    assert_int_equal(i->id, CUSHIM_API_cuDriverGetVersion);
    assert_ptr_equal(host->api_by_id(CUSHIM_API_cuDriverGetVersion), i);
    assert_null(host->api_by_name("cuNoSuchFunction"));
    assert_null(host->api_by_name(NULL));
    assert_null(host->api_by_id(0));
    assert_null(host->api_by_id(CUSHIM_API_ID_LIMIT));
    assert_null(host->api_at(cushim_gen_api_count));
    uint32_t prev = 0;
    for (uint32_t k = 0; k < host->api_count(); k++) {
        const cushim_api_info *a = host->api_at(k);
        assert_true(a->id > prev);   /* id order */
        prev = a->id;
        assert_ptr_equal(host->api_by_name(a->name), a);
        assert_ptr_equal(api_by_name(a->name), a);
        for (uint32_t p = 0; p < a->nparams; p++)
            assert_ptr_equal(host->api_param(a, p), &a->params[p]);
        assert_null(host->api_param(a, a->nparams));
    }
    const cushim_param_info *p = host->api_param(i, 0);
    assert_string_equal(p->name, "driverVersion");
    assert_int_equal(host->sizeof_param_info, sizeof(cushim_param_info));
    assert_int_equal(host->size, sizeof(cushim_host));
    assert_int_equal(host->abi_version, CUSHIM_ABI_VERSION);
    assert_int_equal(host->cuda_version, CUSHIM_GEN_CUDA_VERSION);
    assert_non_null(strstr(host->version(), "SDK ABI " RT_ABI_NOW));
    assert_null(cushim_host_get((uint32_t)(CUSHIM_ABI_MAJOR + 1) << 16));   /* another major */
    assert_null(cushim_host_get(4u));                                   /* 0.4, the last before 1.0 */
    assert_null(cushim_host_get(CUSHIM_ABI_VERSION + 1));             /* a newer minor */
    assert_ptr_equal(cushim_host_get((uint32_t)CUSHIM_ABI_MAJOR << 16), host);   /* minor 0 of this major */
}

/* No cudart is loaded in this process: runtime calls fail with the documented values. */
static void test_missing_real(void **state)
{
    (void)state;
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorSymbolNotFound);
    /* a string-returning function answers a string, never NULL (std::string(cudaGetErrorName(e)) would die) */
    assert_non_null(strstr(cudaGetErrorName(cudaSuccess), "unknown error"));
    struct cudaChannelFormatDesc d = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    assert_int_equal(d.x, 0);
    assert_int_equal(d.w, 0);
    assert_null(host->real(CUSHIM_API_cudaDeviceSynchronize));
    assert_ptr_equal(host->real(CUSHIM_API_cuDriverGetVersion), (void *)fake_get_version);
    assert_null(host->real(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_hook),
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_override_and_params),
        cmocka_unit_test(test_errors_and_limit),
        cmocka_unit_test(test_groups_and_selectors),
        cmocka_unit_test(test_chains_shared),
        cmocka_unit_test(test_frame_fields),
        cmocka_unit_test(test_post_only_and_exit_time),
        cmocka_unit_test(test_result_kinds),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_missing_real),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
