/*
 * rt_stress_test.c - 32 threads call two hooked APIs while another thread adds
 * and removes hooks on both; every count must be exact. cuCtxGetCurrent's
 * permanent hook is a post hook alone (with both clock reads), so its chain
 * switches between post hooks alone (the pre step skipped) and pre + post.
 * Meant to run under ThreadSanitizer too (CUSHIM_SANITIZE=thread).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

#define NTHREADS 32
#ifndef STRESS_ITERS
#define STRESS_ITERS 20000
#endif

static _Atomic uint64_t real_version, real_ctx;
static _Atomic uint64_t perm_pre, perm_post, churn_pre, churn_post, ctx_post, ctx_post_bad;
static _Atomic int stop;
static cushim_plugin *plug;

static CUresult fake_get_version(int *v)
{
    atomic_fetch_add_explicit(&real_version, 1, memory_order_relaxed);
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx(CUcontext *c)
{
    atomic_fetch_add_explicit(&real_ctx, 1, memory_order_relaxed);
    *c = NULL;
    return CUDA_SUCCESS;
}

static int perm_pre_fn(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c;
    (void)u;
    *slot = 0x5eed;
    atomic_fetch_add_explicit(&perm_pre, 1, memory_order_relaxed);
    return CUSHIM_CONTINUE;
}

static void perm_post_fn(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c;
    (void)u;
    if (*slot == 0x5eed)
        atomic_fetch_add_explicit(&perm_post, 1, memory_order_relaxed);
}

/* post hook alone: its slot is zero, both times are there and in order (the clock's bound, rt_clock_test: never
   back by more than 100 us; it went back by tens of ms under this load before its anchors were bracketed pairs) */
static void ctx_post_fn(cushim_call *c, void *u, uint64_t *slot)
{
    (void)u;
    if (*slot != 0 || c->t_enter_ns == 0 || c->t_exit_ns + 100000u < c->t_enter_ns)
        atomic_fetch_add_explicit(&ctx_post_bad, 1, memory_order_relaxed);
    *slot = 1;
    atomic_fetch_add_explicit(&ctx_post, 1, memory_order_relaxed);
}

static int churn_pre_fn(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c;
    (void)u;
    *slot = 7;
    atomic_fetch_add_explicit(&churn_pre, 1, memory_order_relaxed);
    return CUSHIM_CONTINUE;
}

static void churn_post_fn(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c;
    (void)u;
    if (*slot == 7)
        atomic_fetch_add_explicit(&churn_post, 1, memory_order_relaxed);
}

/* What went wrong in a caller, for the failure's message (a CI run under heavy load saw one once: 2026-12-07). */
static char caller_why[NTHREADS + 1][160];
static atomic_int caller_n;

/* Set once the churner has added and removed its hooks once (or given up): the callers start then, so that hooks
   change under their calls however the threads are scheduled (the churner's first cycle used to have to come
   before 32 callers were done, or the test failed with adds == 0). */
static _Atomic int churned;
static char churn_why[160];

static void *caller(void *arg)
{
    (void)arg;
    int me = atomic_fetch_add(&caller_n, 1) % (NTHREADS + 1);
    while (!atomic_load(&churned))
        sched_yield();
    for (int i = 0; i < STRESS_ITERS; i++) {
        int v = 0;
        CUcontext ctx;
        CUresult r = cuDriverGetVersion(&v);
        if (r != CUDA_SUCCESS || v != 13000) {
            snprintf(caller_why[me], sizeof caller_why[me], "call %d: cuDriverGetVersion returned %d, version %d", i,
                     (int)r, v);
            return (void *)1;
        }
        if ((r = cuCtxGetCurrent(&ctx)) != CUDA_SUCCESS) {
            snprintf(caller_why[me], sizeof caller_why[me], "call %d: cuCtxGetCurrent returned %d", i, (int)r);
            return (void *)1;
        }
    }
    return NULL;
}

static void *churner(void *arg)
{
    (void)arg;
    uint64_t adds = 0;
    void *bad = NULL;
    while (!atomic_load(&stop)) {
        uint64_t h1, h2;
        int rc;
        if ((rc = rt_hook(plug, CUSHIM_API_cuDriverGetVersion, (int)(adds % 7) - 3, churn_pre_fn, churn_post_fn, NULL,
                          &h1)) != CUSHIM_OK) {
            snprintf(churn_why, sizeof churn_why, "cycle %llu: hooks_add(cuDriverGetVersion) returned %d",
                     (unsigned long long)adds, rc);
            bad = (void *)1;
            break;
        }
        if ((rc = rt_hook(plug, CUSHIM_API_cuCtxGetCurrent, 0, churn_pre_fn, churn_post_fn, NULL, &h2)) != CUSHIM_OK) {
            snprintf(churn_why, sizeof churn_why, "cycle %llu: hooks_add(cuCtxGetCurrent) returned %d",
                     (unsigned long long)adds, rc);
            bad = (void *)1;
            break;
        }
        if ((rc = rt_host()->hooks_remove(plug, h1)) != CUSHIM_OK ||
            (rc = rt_host()->hooks_remove(plug, h2)) != CUSHIM_OK) {
            snprintf(churn_why, sizeof churn_why, "cycle %llu: hooks_remove returned %d", (unsigned long long)adds,
                     rc);
            bad = (void *)1;
            break;
        }
        adds++;
        atomic_store(&churned, 1);
    }
    atomic_store(&churned, 1);   /* the callers never wait for a churner that gave up */
    if (bad == NULL && adds == 0) {
        snprintf(churn_why, sizeof churn_why, "no cycle before the callers were done");
        bad = (void *)1;
    }
    return bad;
}

static void test_stress(void **state)
{
    (void)state;
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuCtxGetCurrent, (void *)fake_ctx);
    plug = rt_test_plugin("stress-test");
    uint64_t hp;
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, perm_pre_fn, perm_post_fn, NULL, &hp), CUSHIM_OK);
    uint64_t hq;
    cushim_hook_spec q = { .size = sizeof q, .api_id = CUSHIM_API_cuCtxGetCurrent, .post = ctx_post_fn,
                           .flags = CUSHIM_HOOK_TIME | CUSHIM_HOOK_EXIT_TIME, .priority = 5 };
    assert_int_equal(rt_host()->hooks_add(plug, &q, &hq), CUSHIM_OK);

    pthread_t th[NTHREADS], ch;
    assert_int_equal(pthread_create(&ch, NULL, churner, NULL), 0);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, caller, NULL), 0);
    int bad = 0;
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += r != NULL;
    }
    for (int i = 0; i <= NTHREADS; i++)
        if (caller_why[i][0] != '\0')
            print_error("caller: %s\n", caller_why[i]);
    assert_int_equal(bad, 0);
    atomic_store(&stop, 1);
    void *r;
    pthread_join(ch, &r);
    if (r != NULL)
        print_error("churner: %s\n", churn_why);
    assert_null(r);

    const uint64_t total = (uint64_t)NTHREADS * STRESS_ITERS;
    assert_int_equal(atomic_load(&real_version), total);
    assert_int_equal(atomic_load(&real_ctx), total);
    assert_int_equal(atomic_load(&perm_pre), total);
    assert_int_equal(atomic_load(&perm_post), total);
    assert_int_equal(atomic_load(&churn_pre), atomic_load(&churn_post));
    assert_int_equal(atomic_load(&ctx_post), total);
    assert_int_equal(atomic_load(&ctx_post_bad), 0);
    assert_int_equal(rt_host()->hooks_remove(plug, hp), CUSHIM_OK);
    assert_int_equal(rt_host()->hooks_remove(plug, hq), CUSHIM_OK);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuCtxGetCurrent].chain));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_stress) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
