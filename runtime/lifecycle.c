/*
 * lifecycle.c - the process around the shim: initialisation (plugins loaded
 * before the first CUDA call is forwarded), fork, and exit (plugins flushed
 * and counts written after the last CUDA call anybody makes). The work of
 * each step is the modules' own: they register it with LC_MODULE
 * (lifecycle.h) and this file walks the table, calling no module by name.
 *
 * Initialisation runs once (rt_once), from whichever comes first: our
 * constructor, a CUDA call, or a dlsym of a CUDA name (another library's
 * constructor may come before ours). Other threads wait for it; the
 * initialising thread itself (a plugin's init calling CUDA, a signal handler)
 * goes straight to the real functions. Every entry's init is a step, counted,
 * so that a forked child whose parent was initialising on another thread
 * resumes with the step that was running (rt_once hands it the routine).
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
 * There the entries stop (hooks switched off and running hook callbacks
 * waited for, then plugins flush in reverse load order), the process counts as
 * exiting, and the entries' stopped steps run (the counts file is written for
 * the last time). (Handlers registered without a DSO before main - on_exit()
 * in a library constructor - still run after lc_final; their calls are not in
 * the file.)
 *
 * The shim is linked -z nodelete, so its destructor runs only at exit, never
 * from dlclose; and where __cxa_atexit refuses, the destructor does the final
 * work itself.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "api.h"
#include "base.h"
#include "config.h"
#include "counts.h"
#include "lifecycle.h"
#include "log.h"
#include "module.h"
#include "objects.h"
#include "once.h"
#include "slots.h"

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

/* The linker's bounds of the section LC_MODULE fills (named after it, hence the underscores). */
extern const lc_module *const __start_cushim_lc[] __attribute__((visibility("hidden")));
extern const lc_module *const __stop_cushim_lc[] __attribute__((visibility("hidden")));

static rt_once_t lc_once = RT_ONCE_INIT;
_Atomic int lc_is_ready RT_HOT;
static _Atomic int lc_step;           /* initialisation steps done (fork resumes after them) */
static _Atomic int lc_final_done;
static _Atomic int lc_flushed;
#define LC_MAX 64

int lc_exiting(void)
{
    return atomic_load_explicit(&lc_flushed, memory_order_acquire);
}

static int lc_before(const lc_module *a, const lc_module *b)
{
    return a->level != b->level ? a->level < b->level : strcmp(a->name, b->name) < 0;
}

/* The entries in walking order (level, then name) into out[LC_MAX]; their number. No allocation: also
   in a fork child and at exit. */
static unsigned lc_table(const lc_module *out[LC_MAX])
{
    unsigned n = 0;
    for (const lc_module *const *p = __start_cushim_lc; p < __stop_cushim_lc && n < LC_MAX; p++) {
        unsigned i = n++;
        for (; i > 0 && lc_before(*p, out[i - 1]); i--)
            out[i] = out[i - 1];
        out[i] = *p;
    }
    return n;
}

/* After every destructor: every entry stops, the process counts as exiting, every entry's stopped step. */
static void lc_final(void *arg)
{
    (void)arg;
    if (atomic_exchange(&lc_final_done, 1))
        return;
    const lc_module *t[LC_MAX];
    unsigned n = lc_table(t);
    for (unsigned i = 0; i < n; i++)
        if (t[i]->stop != NULL)
            t[i]->stop();
    atomic_store_explicit(&lc_flushed, 1, memory_order_release);
    for (unsigned i = 0; i < n; i++)
        if (t[i]->stopped != NULL)
            t[i]->stopped();
}

static void lc_fork_child(void)
{
    uint32_t parent_tid = rt_tid_cache;   /* this thread's tid in the parent, if it ever used rt_once */
    rt_once_after_fork(&lc_once, parent_tid);
    const lc_module *t[LC_MAX];
    unsigned n = lc_table(t);
    for (unsigned i = 0; i < n; i++)
        if (t[i]->fork_child != NULL)
            t[i]->fork_child(parent_tid);
}

static void lc_do_init(void)
{
    const rt_config *c = cfg_get();
    const lc_module *t[LC_MAX];
    unsigned n = lc_table(t);
    if (atomic_load(&lc_step) < 1) {
        /* A child handler only: no lock is taken before fork (a handler
           registered before ours would run while we held it). Registered before
           any plugin loads, so ours runs before the plugins' own. */
        pthread_atfork(NULL, NULL, lc_fork_child);
        atomic_store(&lc_step, 1);
    }
    for (unsigned i = 0; i < n; i++)
        if (atomic_load(&lc_step) < (int)i + 2) {
            if (t[i]->init != NULL)
                t[i]->init();
            atomic_store(&lc_step, (int)i + 2);
        }
    log_debug("initialised: %u APIs, CUDA %s headers, %s mode%s%s%s", cushim_gen_api_count,
              CUSHIM_GEN_CUDA_VERSION_STRING, ob_is_dropin() ? "drop-in" : "preload",
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
