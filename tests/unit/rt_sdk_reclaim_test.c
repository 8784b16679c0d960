/*
 * rt_sdk_reclaim_test.c - memory stays bounded while hooks come and go: a
 * plugin adds and removes a hook group RECLAIM_ITERS times while NTHREADS (32;
 * 8 under the sanitizers) threads call the hooked APIs. Every change retires two chains; the test samples the
 * number of live chains and of chains waiting in limbo, and asserts that
 * reclamation kept up during the run (peak limbo well below what was
 * retired) and that after hooks_sync nothing is left but the published
 * chains. Every call still ran pre and post hooks of one snapshot (counts
 * exact). Run under ThreadSanitizer too (label concurrency).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

#ifndef NTHREADS
#define NTHREADS 32
#endif
#ifndef RECLAIM_ITERS
#define RECLAIM_ITERS 100000
#endif

static _Atomic int stop;
static _Atomic uint64_t calls, pre_calls, post_calls, perm_calls;
static cushim_plugin *plug;

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

static int churn_pre(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c, (void)u;
    *slot = 1;
    atomic_fetch_add_explicit(&pre_calls, 1, memory_order_relaxed);
    return CUSHIM_CONTINUE;
}

static void churn_post(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c, (void)u;
    if (*slot == 1)
        atomic_fetch_add_explicit(&post_calls, 1, memory_order_relaxed);
}

static int perm_pre(cushim_call *c, void *u, uint64_t *slot)
{
    (void)c, (void)u, (void)slot;
    atomic_fetch_add_explicit(&perm_calls, 1, memory_order_relaxed);
    return CUSHIM_CONTINUE;
}

static void *caller(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        int v;
        CUcontext ctx;
        if (cuDriverGetVersion(&v) != CUDA_SUCCESS || cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
            return (void *)1;
        n += 2;
        if (n % 32 == 0) {   /* 32 busy threads on a few cores would starve the plugin's thread */
            struct timespec ts = { 0, 50000 };
            nanosleep(&ts, NULL);
        }
    }
    atomic_fetch_add(&calls, n);
    return NULL;
}

static void test_reclaim_bounded(void **state)
{
    (void)state;
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuCtxGetCurrent, (void *)fake_ctx);
    plug = rt_test_plugin("reclaim-test");
    const cushim_host *host = rt_host();
    uint64_t perm;
    assert_int_equal(rt_hook_sel(plug, "cuDriverGetVersion,cuCtxGetCurrent", 0, perm_pre, NULL, NULL, &perm),
                     CUSHIM_OK);
    uint64_t live0, limbo0;
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);
    hk_stats(&live0, &limbo0);
    assert_int_equal(limbo0, 0);

    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, caller, NULL), 0);
    uint64_t peak_live = 0, peak_limbo = 0;
    for (int i = 0; i < RECLAIM_ITERS; i++) {
        uint64_t g;
        assert_int_equal(rt_hook_sel(plug, "cuDriverGetVersion,cuCtxGetCurrent", i % 5 - 2, churn_pre, churn_post,
                                     NULL, &g), CUSHIM_OK);
        assert_int_equal(host->hooks_remove(plug, g), CUSHIM_OK);
        if (i % 64 == 0) {
            uint64_t live, limbo;
            hk_stats(&live, &limbo);
            if (live > peak_live)
                peak_live = live;
            if (limbo > peak_limbo)
                peak_limbo = limbo;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);
    uint64_t live, limbo;
    hk_stats(&live, &limbo);
    const uint64_t retired = 4ull * RECLAIM_ITERS;   /* 2 APIs, add and remove */
    print_message("reclaim: %d changes, %llu chains retired, peak live %llu, peak limbo %llu, after sync live %llu "
                  "limbo %llu; %llu calls\n", 2 * RECLAIM_ITERS, (unsigned long long)retired,
                  (unsigned long long)peak_live, (unsigned long long)peak_limbo, (unsigned long long)live,
                  (unsigned long long)limbo, (unsigned long long)atomic_load(&calls));
    assert_int_equal(limbo, 0);
    assert_int_equal(live, live0);          /* only the published chains remain */
    assert_true(peak_limbo < retired / 4);  /* freed during the run, not at the end */
    assert_true(peak_live < live0 + retired / 4);
    assert_int_equal(atomic_load(&pre_calls), atomic_load(&post_calls));
    assert_int_equal(atomic_load(&perm_calls), atomic_load(&calls));
    assert_int_equal(host->hooks_remove(plug, perm), CUSHIM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_reclaim_bounded) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
