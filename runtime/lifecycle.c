/*
 * lifecycle.c - the process around the shim: initialisation (plugins loaded
 * before the first CUDA call is forwarded), fork, and exit (plugins flushed
 * and counts written after the last CUDA call anybody makes).
 *
 * Initialisation runs once (rt_once), from whichever comes first: our
 * constructor, a CUDA call, or a dlsym of a CUDA name (another library's
 * constructor may come before ours). Other threads wait for it; the
 * initialising thread itself (a plugin's init calling CUDA, a signal handler)
 * goes straight to the real functions. Steps are numbered so that a forked
 * child whose parent was initialising on another thread resumes where it
 * stopped (rt_once hands it the routine).
 *
 * Exit ordering (glibc): exit() runs the exit handlers in reverse order of
 * registration. The dynamic loader's _dl_fini, which runs every library's
 * destructor (ours included) and, through __cxa_finalize, the atexit handlers
 * libraries registered with their own DSO handle, is registered by
 * __libc_start_main: after every library constructor, before main. Our
 * destructor registers lc_final with __cxa_atexit(fn, NULL, NULL) - no DSO,
 * so nothing finalises it early - and run_exit_handlers, which rescans its
 * list after each handler, runs it as soon as _dl_fini returns: after every
 * destructor, every handler registered by the program and by libraries.
 * There hooks are switched off, running hook callbacks are waited for
 * (bounded), plugins flush in reverse load order, and the counts file is
 * written for the last time. (Handlers registered without a DSO before main -
 * on_exit() in a library constructor - still run after lc_final; their calls
 * are not in the file.) Counts are also written when the exit handler
 * registered at initialisation runs (lc_exit_counts: a fallback should a later
 * handler call _exit); cnt_write may run several times, the last call leaves
 * complete totals.
 *
 * The shim is linked -z nodelete, so its destructor runs only at exit, never
 * from dlclose; and where __cxa_atexit refuses, the destructor does the final
 * work itself.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "base.h"
#include "config.h"
#include "counts.h"
#include "dispatch.h"
#include "epoch.h"
#include "getproc.h"
#include "hooks.h"
#include "lifecycle.h"
#include "loader.h"
#include "log.h"
#include "once.h"
#include "plugins.h"
#include "reallib.h"
#include "slots.h"
#include "thread.h"
#include "unwind.h"

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static rt_once_t lc_once = RT_ONCE_INIT;
_Atomic int lc_is_ready RT_HOT;
static _Atomic int lc_step;           /* initialisation steps done (fork resumes after them) */
static _Atomic int lc_final_done;
static _Atomic int lc_flushed;
#define LC_EXIT_WAIT_MS 1000u   /* for threads inside hook callbacks at exit */

int lc_exiting(void)
{
    return atomic_load_explicit(&lc_flushed, memory_order_acquire);
}

/* After every destructor: hooks off, wait for running callbacks, flush, count. */
static void lc_final(void *arg)
{
    (void)arg;
    if (atomic_exchange(&lc_final_done, 1))
        return;
    hk_set_off();
    /* Threads still inside hook callbacks finish them first (bounded: a hook
       blocked forever must not hang exit). Calls already past their pre hooks
       skip their post hooks from now on. */
    th_rec *self = rt_tls.rec;
    unsigned waited_us = 0;
    for (;;) {
        int busy = 0;
        if (th_rec_first() == NULL)
            break;   /* no thread ever made a hooked call */
        ep_barrier();
        for (th_rec *r = th_rec_first(); r != NULL; r = r->next)
            if (r != self && atomic_load_explicit(&r->in_use, memory_order_acquire) &&
                atomic_load_explicit(&r->in_cb, memory_order_acquire))
                busy++;
        if (busy == 0)
            break;
        if (waited_us >= LC_EXIT_WAIT_MS * 1000u) {
            log_warn("exit: %d thread(s) still inside hook callbacks after %u ms; flushing plugins anyway",
                     busy, LC_EXIT_WAIT_MS);
            break;
        }
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
        waited_us += 200;
    }
    pl_flush_all();
    atomic_store_explicit(&lc_flushed, 1, memory_order_release);
    cnt_write();
}

static void lc_exit_counts(void *arg)
{
    (void)arg;
    cnt_write();   /* an early copy, should a later exit handler call _exit */
}

static void lc_fork_child(void)
{
    uint32_t parent_tid = rt_tid_cache;   /* this thread's tid in the parent, if it ever used rt_once */
    gp_reset_after_fork();
    hk_reset_after_fork();
    rt_once_after_fork(&lc_once, parent_tid);
    th_after_fork();
    cnt_after_fork_child();
    pl_after_fork(parent_tid);
}

static int lc_begin_step(int step)
{
    return atomic_load(&lc_step) < step;
}

static void lc_end_step(int step)
{
    atomic_store(&lc_step, step);
}

static void lc_do_init(void)
{
    const rt_config *c = cfg_get();
    if (lc_begin_step(1)) {
        gp_init();   /* first: the handlers before any real function is published */
        sl_init();
        rt_set_disabled(c->disable);
        uw_probe();
        th_key_init();
        cnt_init();
        if (cnt_enabled)
            hk_install_counting();
        /* A child handler only: no lock is taken before fork (a handler
           registered before ours would run while we held it). */
        pthread_atfork(NULL, NULL, lc_fork_child);
        if (__cxa_atexit(lc_exit_counts, NULL, NULL) != 0)
            log_warn("cannot register an exit handler: counts are written by the destructor only");
        lc_end_step(1);
    }
    if (lc_begin_step(2)) {
        ldr_load_env();
        lc_end_step(2);
    }
    log_debug("initialised: %u APIs, CUDA %s headers, %s mode%s%s%s", cushim_gen_api_count,
              CUSHIM_GEN_CUDA_VERSION_STRING, rl_is_dropin() ? "drop-in" : "preload",
              c->disable ? ", disabled" : "", cnt_enabled ? ", counting" : "",
              sl_failed() ? ", FAILED CLOSED" : "");
    atomic_store_explicit(&lc_is_ready, 1, memory_order_release);
}

int rt_init(void)
{
    if (RT_LIKELY(atomic_load_explicit(&lc_is_ready, memory_order_acquire)))
        return 1;
    return rt_once(&lc_once, lc_do_init);
}

/* Runs at load: environment and plugins; the real libraries stay unopened. */
__attribute__((constructor)) static void lc_ctor(void)
{
    rt_init();
}

/* Inside _dl_fini (nodelete: only at exit). The final work waits for every
   other destructor. */
__attribute__((destructor)) static void lc_dtor(void)
{
    if (!lc_ready())
        return;
    if (__cxa_atexit(lc_final, NULL, NULL) != 0)
        lc_final(NULL);
}
