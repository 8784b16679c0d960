/*
 * trace_gpuab.c - the trace plugin's gpu-ab copy (a bench-only build: target trace_gpuab,
 * plugins/trace/CMakeLists.txt; tools/build-gpu-bundle.sh puts it in build-gpu/gpuab; the GPU check
 * tracegpuab, tests/gpu/checks/trace.sh, and e2e gpubench_ab against the stand-in libcupti run it): the GPU
 * part's pause policy (plugins/trace/tr_cupti_int.h, tr_gpause.h) in place of the product's gpu_detach
 * (plugins/trace/tr_gdetach.c).
 *
 * While recording is paused with unhook, CUPTI records every driver and runtime call as activity instead - what a tracer built on
 * CUPTI's activity API alone pays (tests/gpu/trace/cupti_activity.c enables the same kinds) - so that one
 * process times --trace-gpu against CUPTI activity tracing in alternating blocks. The API records are counted,
 * not written. Never in a normal build. Once the API kinds have been enabled, disabling them leaves part of
 * their per-call cost in the driver (measured: docs/benchmarks.md); so on resuming, CUPTI is detached
 * (cuptiFinalize, at the exit of the next launch's callback, where NVIDIA's cupti_finalize sample calls it) and
 * attached again as at start: the recording blocks run as --trace-gpu does in a process of its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "tr_gpause.h"
#include "tr_record.h"

#if !defined(TR_HAVE_CUPTI)
#error "the gpu-ab copy needs the CUPTI headers"
#endif

static struct {
    CUpti_SubscriberHandle h;
    f_enable_cb en;
    f_enable disable;
    uint32_t n;
    struct {
        CUpti_CallbackDomain dom;
        CUpti_CallbackId cbid;
    } cb[512];
    int api_on;
    _Atomic int fin_pending, fin_done, busy;
    _Atomic uint64_t api_records, switches, failures, reattached;
} ab;

static int ab_start(tr_state *st, double detach_s, char *err, size_t errlen)
{
    (void)st, (void)detach_s;
    ab.disable = (f_enable)dlsym(tr_cu.lib, "cuptiActivityDisable");
    if (!tr_cu.callbacks || ab.disable == NULL || tr_cu.finalize == NULL) {
        snprintf(err, errlen, "gpu-ab build: CUPTI callbacks, cuptiActivityDisable or cuptiFinalize unavailable: no comparison");
        return -1;
    }
    return 0;
}

static void ab_callback_enabled(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
    if (ab.n < sizeof ab.cb / sizeof ab.cb[0]) {
        ab.cb[ab.n].dom = dom;
        ab.cb[ab.n++].cbid = cbid;
    }
}

static int ab_subscribed(CUpti_SubscriberHandle h, f_enable_cb en, uint32_t enabled)
{
    ab.h = h;
    ab.en = en;
    return ab.n < enabled ? -1 : 0;   /* more than the switch can turn off: the comparison would not be one */
}

static int ab_callback_exit(int at_exit)
{
    if (at_exit && atomic_load_explicit(&ab.fin_pending, memory_order_acquire) && atomic_exchange(&ab.fin_pending, 0)) {
        /* CUPTI detaches, its per-call instrumentation with it; tr_cupti_followed attaches again */
        if (tr_cu.finalize() != CUPTI_SUCCESS)
            atomic_fetch_add(&ab.failures, 1);
        atomic_store_explicit(&ab.fin_done, 1, memory_order_release);
        return 1;
    }
    return 0;
}

/* The API records of a paused block: counted, not written. */
static int ab_api_record(const CUpti_Activity *r)
{
    (void)r;
    atomic_fetch_add_explicit(&ab.api_records, 1, memory_order_relaxed);
    return 1;
}

static int ab_before_flush(void)
{
    return 0;
}

static void ab_after_flush(void)
{
    for (int i = 0; i < 2000 && atomic_load(&ab.busy); i++) {   /* a switch under way finishes first (2 s) */
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    fprintf(stderr, "cushim trace gpu-ab: %llu API activity records while paused, %llu switches, %llu failed, "
            "%u callbacks switched, %llu detached and attached again\n",
            (unsigned long long)atomic_load(&ab.api_records), (unsigned long long)atomic_load(&ab.switches),
            (unsigned long long)atomic_load(&ab.failures), ab.n, (unsigned long long)atomic_load(&ab.reattached));
}

static void ab_fork_child(void)
{
}

void tr_cupti_follow(int paused)
{
    (void)paused;
}

/* Called by tr_hooks_follow (its lock held, not on a calling thread) after the hooks follow 'paused'. */
void tr_cupti_followed(int paused)
{
    int bad = 0;
    if (!tr_cu.on || !tr_cu.callbacks || ab.disable == NULL || paused == ab.api_on)
        return;
    atomic_store(&ab.busy, 1);
    tr_thread_quiet(1);
    if (paused) {
        for (uint32_t i = 0; i < ab.n; i++)
            bad |= ab.en(0, ab.h, ab.cb[i].dom, ab.cb[i].cbid) != CUPTI_SUCCESS;
        bad |= tr_cu.enable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS;
        bad |= tr_cu.enable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS;
    } else {
        int waited = 0;
        bad |= ab.disable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS;
        bad |= ab.disable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS;
        tr_cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);   /* the paused block's records counted before the detach */
        atomic_store(&ab.fin_done, 0);
        atomic_store(&ab.fin_pending, 1);
        for (uint32_t i = 0; i < ab.n; i++)   /* the next launch's exit callback detaches CUPTI */
            bad |= ab.en(1, ab.h, ab.cb[i].dom, ab.cb[i].cbid) != CUPTI_SUCCESS;
        while (!atomic_load_explicit(&ab.fin_done, memory_order_acquire) && waited++ < 10000) {
            struct timespec ms = {0, 1000 * 1000};
            nanosleep(&ms, NULL);
        }
        if (!atomic_load(&ab.fin_done)) {   /* no launch in 10 s: left attached (counted as a failure) */
            atomic_store(&ab.fin_pending, 0);
            bad = 1;
        } else {
            ab.n = 0;   /* the subscriber's callbacks counted again */
            bad |= tr_cupti_attach_again() != 0;
            atomic_fetch_add(&ab.reattached, 1);
        }
    }
    tr_thread_quiet(0);
    ab.api_on = paused;
    atomic_fetch_add(&ab.switches, 1);
    if (bad)
        atomic_fetch_add(&ab.failures, 1);
    atomic_store(&ab.busy, 0);
}

const tr_gpause tr_gpause_policy = {
    .start = ab_start,
    .callback_enabled = ab_callback_enabled,
    .subscribed = ab_subscribed,
    .callback_exit = ab_callback_exit,
    .api_record = ab_api_record,
    .before_flush = ab_before_flush,
    .after_flush = ab_after_flush,
    .fork_child = ab_fork_child,
};
