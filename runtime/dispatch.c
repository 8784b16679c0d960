/*
 * dispatch.c - the dispatch core behind every wrapper: lazy resolution of
 * real functions (published to the slots, slots.c, which choose the fast-path
 * target) and the slow path (counting, the call frame, hook chains, failing
 * closed).
 *
 * The fast path lives in wrap.h; it reaches this file only when a slot has a
 * chain (hooks or the counter), its real function is not resolved yet, or the
 * shim failed closed. Nothing here takes a lock: the slow path may run in a
 * signal handler that interrupted any code of the shim on the same thread.
 *
 * Call frames: a hooked call pushes an rt_frame on a per-thread list
 * (the thread record's 'top') for its whole duration. While its hook callbacks run
 * (in_hook), CUDA calls on the thread go straight to the real function; while
 * its real function runs, a hooked call made by it nests (depth + 1, parent).
 * The list is popped exactly however the call ends: normal return, a C++
 * exception or thread cancellation (the cleanup attribute in wrap.h, compiled
 * with -fexceptions), or a longjmp past it (glibc runs the frame's
 * old-style cleanup buffer from _longjmp_unwind: unwind.c). What no mechanism sees
 * (setcontext/swapcontext away from a hooked call) is detected approximately
 * at the next hooked call: a top frame at or below the current stack frame is
 * dead (with sigaltstack taken into account), and ignored.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "base.h"
#include "clock.h"
#include "config.h"
#include "copies.h"
#include "counts.h"
#include "dispatch.h"
#include "env.h"
#include "epoch.h"
#include "hooks.h"
#include "layers.h"
#include "libs.h"
#include "lifecycle.h"
#include "log.h"
#include "module.h"
#include "slots.h"
#include "thread.h"
#include "unwind.h"
#include "wrapper_table.h"
#include "cushim/cushim_io.h"

static _Atomic(void *) rt_lib[CUSHIM_API_ID_LIMIT];       /* the library's function */
static _Atomic uint8_t rt_missing_logged[CUSHIM_API_ID_LIMIT];
/* rt_slots[id].foreign: functions of a copy of a library whose major version differs from the headers
   this shim was generated from (the copy's soname is not the library's version
   node, lb_symver): their signatures may differ (CUDA 13 changed some), so they
   are forwarded untouched and never hooked or counted. Also the functions of a
   library CUSHIM_LIBS leaves out. */
static _Atomic int rt_foreign_seen[32];   /* per library value */
static int rt_disabled RT_HOT;
static _Atomic int rt_fail_logged;

/* CUSHIM_DISABLE (or another copy of cushim first): no hook runs; read once, at initialisation. */
static void rt_start(void)
{
    rt_disabled = cfg_get()->disable;
}

static void rt_publish(uint32_t id);
static void rt_foreign_all(const lb_library *lib);

/* Called with each library function found, before it is published. */
static void rt_check_foreign(uint32_t id, void *fn)
{
    const cushim_api_info *info = api_info(id);
    if (fn == NULL || info == NULL || info->library == CUSHIM_LIB_DRIVER)
        return;
    const lb_library *lib = lb_by_value(info->library);
    if (lib == NULL || lb_symver(lib->value) == NULL || cp_is_ours(lib, fn))
        return;
    sl_set_foreign(id);
    if (lib->value >= 0 && lib->value < 32 && atomic_exchange(&rt_foreign_seen[lib->value], 1) == 0)
        rt_foreign_all(lib);   /* once */
}

/* Only a copy of another major of 'lib' is loaded: resolve every function of the library now, so
   each is forwarded by the fast path's plain jump from its first call on (the call that found it
   goes on from its first entry, first_entry.c, with its registers untouched too). */
static void rt_foreign_all(const lb_library *lib)
{
    log_warn("the loaded %s library is not %s, whose headers this shim was built from (CUDA %s): its calls "
             "pass through unobserved (driver calls are still seen). Build cushim with "
             "-DCUSHIM_CUDA_VERSION=<that release> to observe them.", lib->name, lb_symver(lib->value),
             CUSHIM_GEN_CUDA_VERSION_STRING);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        const cushim_api_info *a = &cushim_gen_apis[i];
        if ((int)a->library != lib->value)
            continue;
        sl_set_foreign(a->id);
        if (rt_lib_real(a->id) != NULL)
            rt_publish(a->id);
    }
}

void *rt_lib_real(uint32_t id)
{
    void *r = atomic_load_explicit(&rt_lib[id], memory_order_acquire);
    if (r != NULL)
        return r;
    const cushim_api_info *info = api_info(id);
    if (info == NULL)
        return NULL;
    if (info->library == CUSHIM_LIB_DRIVER) {
        r = ly_driver_real(info->name);
        cp_scan_versioned();
    } else {
        const lb_library *lib = lb_by_value(info->library);
        r = lib != NULL ? cp_library_real(lib, info->name) : NULL;
        rt_check_foreign(id, r);
    }
    if (r == NULL)
        return NULL;
    if (!lb_chosen(info->library))   /* not interposed (CUSHIM_LIBS): forwarded untouched */
        sl_set_foreign(id);
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&rt_lib[id], &expected, r))
        r = expected;
    return r;
}

/* The first call of API 'id' (first_entry.c, registers saved): resolve its real
   function; the call then jumps to the real function when the fast path would,
   else to the slow path (which also answers when there is no real function). */
void *rt_first_target(uint32_t id)
{
    if (id >= CUSHIM_API_ID_LIMIT)
        return NULL;   /* never: the entries are generated with their own ids */
    rt_resolve(id);
    void *t = atomic_load(&rt_slots[id].fast);
    return t == rt_first_of[id] || t == NULL ? rt_slow_of[id] : t;
}

/* The library's function, once known, becomes the slot's real (slots.c: or the handler standing in for it). */
static void rt_publish(uint32_t id)
{
    void *lib = atomic_load_explicit(&rt_lib[id], memory_order_acquire);
    if (lib != NULL)
        sl_publish(id, lib);
}

void rt_record_real(uint32_t id, void *lib_fn)
{
    if (id >= CUSHIM_API_ID_LIMIT || lib_fn == NULL)
        return;
    rt_init();
    rt_check_foreign(id, lib_fn);
    const cushim_api_info *info = api_info(id);
    if (info != NULL && !lb_chosen(info->library))   /* not interposed (CUSHIM_LIBS) */
        sl_set_foreign(id);
    void *expected = NULL;
    atomic_compare_exchange_strong(&rt_lib[id], &expected, lib_fn);
    rt_publish(id);
}

void *rt_resolve(uint32_t id)
{
    void *r = atomic_load_explicit(&rt_slots[id].real, memory_order_acquire);
    if (r != NULL)
        return r;
    rt_init();
    if (rt_lib_real(id) == NULL)
        return NULL;
    rt_publish(id);
    return atomic_load_explicit(&rt_slots[id].real, memory_order_acquire);
}

static void rt_missing(uint32_t id)
{
    if (atomic_exchange(&rt_missing_logged[id], 1) == 0) {
        const cushim_api_info *info = api_info(id);
        log_warn("%s: real function not found (no driver/runtime loaded, or too old); returning "
                 "an error", info ? info->name : "?");
    }
}

/* The first refused call repeats the reason, where the program's own output is. */
static void rt_fail_note(uint32_t id)
{
    if (atomic_exchange(&rt_fail_logged, 1) != 0)
        return;
    const cushim_api_info *info = api_info(id);
    int level = log_level();
    char line[1024];
    snprintf(line, sizeof line, "%s refused: every CUDA call returns an initialisation error, as %s",
             info ? info->name : "CUDA call", sl_fail_reason());
    if (level <= LOG_ERROR) {
        log_error("%s", line);
    } else {   /* CUSHIM_LOG=off: this one is shown anyway (docs/runtime.md) */
        char buf[1100];
        int n = snprintf(buf, sizeof buf, "cushim[%d] error: %s\n", (int)getpid(), line);
        if (n > 0)
            (void)cushim_write_all(log_fd(), buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
}

/* The top frame, unless it is provably dead: at or below 'here' (the new
   call's frame, or the caller's stack position), on the same stack - its call
   ended without any cleanup seeing it (setcontext out of a hook: unwind.c
   covers longjmp, wrap.h exceptions and cancellation). A live ancestor is
   always above. The thread's state is then reset; as a live ancestor could
   remain (a switch from a nested hook into its parent's real call), retired
   chains are never freed from then on (epoch.c: ep_poison). */
static __attribute__((noinline, cold)) rt_frame *rt_top_below(th_rec *r, rt_frame *top)
{
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) &&
        !((uintptr_t)top >= (uintptr_t)ss.ss_sp && (uintptr_t)top < (uintptr_t)ss.ss_sp + ss.ss_size))
        return top;   /* a handler on the alternate stack interrupted a live call */
    th_drop_calls(r);
    ep_poison();
    log_warn("a hooked call ended without unwinding (setcontext or a stack switch out of a hook?): its frame "
             "is dropped, and retired hook chains are no longer freed");
    return NULL;
}

static inline rt_frame *rt_live_top(th_rec *r, const void *here)
{
    rt_frame *top = r != NULL ? r->top : NULL;
    /* none, or above 'here': one unsigned comparison (NULL - 1 is the largest address), no branch to lay out
       for the outermost call */
    if (RT_LIKELY((uintptr_t)top - 1u >= (uintptr_t)here))
        return top;
    return rt_top_below(r, top);
}

/* glibc, from a longjmp past the frame: the call is over. */
static void rt_abandon(void *arg)
{
    rt_frame *f = arg;
    if (!f->active)
        return;
    f->active = 0;
    f->rec->top = f->saved_top;
    if (f->in_hook)
        atomic_store_explicit(&f->rec->in_cb, f->saved_in_cb, memory_order_release);
    ep_exit(f->rec);
}

void rt_end(rt_frame *f)
{
    if (!f->active)
        return;
    uw_pop(&f->cbuf, f->rec->uw_head);
    rt_abandon(f);
}

/* Hook callbacks start: CUDA calls on this thread go straight through, and the
   exit (hooks.c hk_stop) waits for in_cb to drop before plugins flush. 0: hooks
   are off (exit), run none. */
static inline int rt_cb_begin(rt_frame *f, th_rec *r)
{
    f->saved_in_cb = (uint8_t)atomic_load_explicit(&r->in_cb, memory_order_relaxed);
    f->in_hook = 1;
    atomic_store_explicit(&r->in_cb, 1, memory_order_relaxed);
    if (RT_UNLIKELY(ep_fence))
        RT_FENCE_SEQ_CST();
    else
        atomic_signal_fence(memory_order_seq_cst);   /* the exit's membarrier orders it */
    return !atomic_load_explicit(&hk_off, memory_order_relaxed);
}

static inline void rt_cb_end(rt_frame *f, th_rec *r)
{
    atomic_store_explicit(&r->in_cb, f->saved_in_cb, memory_order_release);
    f->in_hook = 0;
}

/* Functions that only describe an error or a version (every one that returns a string - cudaGetErrorString,
   nvmlErrorString, ncclGetErrorString, cublasGetStatusString... - and the *GetErrorString, *GetErrorName and
   *GetVersion ones): they touch no device, and a program reports a failure with them, e.g.
   std::string(cudaGetErrorString(e)), which dies on the NULL a refused call returned. So they keep answering
   when the shim fails closed, and one whose library is missing answers a string, never NULL. Decided from the
   metadata (return type and base name), on the cold path only. */
static int rt_returns_text(const cushim_api_info *info)
{
    return info != NULL && info->return_type != NULL && !strcmp(info->return_type, "const char *");
}

static int rt_describes(uint32_t id)
{
    const cushim_api_info *info = api_info(id);
    static const char *const tails[] = { "GetErrorString", "GetErrorName", "GetVersion" };
    if (info == NULL)
        return 0;
    if (rt_returns_text(info))
        return 1;
    size_t n = strlen(info->base_name);
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        size_t t = strlen(tails[i]);
        if (n >= t && !strcmp(info->base_name + n - t, tails[i]))
            return 1;
    }
    return 0;
}

/* What a string-returning function with no real function to call answers (its arguments are ignored: on
   x86-64 a function may be called with more arguments than it reads). */
static const char *rt_no_text(void)
{
    return "unknown error (cushim: the library's own function is not loaded)";
}

/* No real function to call: a string-returning one answers rt_no_text, the rest fail. */
static int rt_fail_missing(rt_frame *f, uint32_t id)
{
    if (rt_returns_text(api_info(id))) {
        f->call.real = (void *)rt_no_text;
        return RT_MODE_DIRECT;
    }
    return RT_MODE_FAIL;
}

/* A driver API the shim answers itself when the process has no driver by declaration (CUSHIM_REAL_LIBCUDA=none:
   the remoting's client, where the shim is the process's libcuda): the cuGetProcAddress family's handlers, which
   then hand out the shim's own exports (getproc.c, gp_own) - a static cudart (CuPy's, cuBLAS's) asks them itself
   and fails with cudaErrorCallRequiresNewerDriver when they fail. NULL for every other API. */
static void *rt_own_answer(uint32_t id)
{
    const cushim_api_info *info = api_info(id);
    return info != NULL && info->library == CUSHIM_LIB_DRIVER ? sl_handler(id) : NULL;
}

#define RT_SERVE (-2)   /* rt_enter_slow: no real function, but hooks that may serve the call */

/* Not the fast lane: initialisation still running, unresolved, foreign, failed. Out of line and cold, so that
   rt_enter's checks run straight into the hooked call's code (one code line fewer a hooked call: every line a
   call runs costs it ~2-3 ns inside a real program, docs/benchmarks.md "The floor of any recorder"). */
static __attribute__((noinline, cold)) int rt_enter_slow(rt_frame *f, uint32_t id)
{
    if (!lc_ready() && !rt_init()) {
        /* Made during initialisation on the initialising thread (a plugin's
           init, a signal handler): straight to the real function. */
        void *r = rt_resolve(id);
        f->call.real = r;
        return r != NULL ? RT_MODE_DIRECT : rt_fail_missing(f, id);
    }
    void *real = rt_resolve(id);
    f->call.real = real;
    if (atomic_load_explicit(&rt_slots[id].foreign, memory_order_relaxed))
        return real != NULL ? RT_MODE_DIRECT : rt_fail_missing(f, id);
    if (cnt_enabled)
        cnt_add(id);
    if (atomic_load_explicit(&sl_failed_closed, memory_order_relaxed) && sl_handler(id) == NULL) {
        if (rt_describes(id))
            return real != NULL ? RT_MODE_DIRECT : rt_fail_missing(f, id);
        rt_fail_note(id);
        return RT_MODE_FAIL_INIT;
    }
    if (real == NULL && cfg_get()->no_driver && (real = rt_own_answer(id)) != NULL) {
        f->call.real = real;   /* its hooks run as before the real call */
        return -1;
    }
    if (real == NULL) {
        const hk_chain *ch = atomic_load_explicit(&rt_slots[id].chain, memory_order_relaxed);
        if (ch != NULL && ch != &hk_count_only)
            return RT_SERVE;   /* a hook may serve it (CUSHIM_HOOK_SERVE): rt_hooked decides under the epoch */
        rt_missing(id);
        return rt_fail_missing(f, id);
    }
    return -1;   /* carry on in rt_enter */
}

/* A call that goes straight on to its real function - or, when it has none and is served by a hook
   ('serve', a constant: its branches vanish from rt_enter's copy), fails as without hooks. */
#define RT_STRAIGHT(f, id, serve) ((serve) ? rt_serve_none((f), (id)) : RT_MODE_DIRECT)

static __attribute__((noinline, cold)) int rt_serve_none(rt_frame *f, uint32_t id)
{
    rt_missing(id);
    return rt_fail_missing(f, id);
}

/* No pre hook served a call that has no real function: it fails as it would without hooks (the library's
   could-not-call value, or rt_no_text's text), and the post hooks see it skipped. */
static __attribute__((noinline, cold)) int rt_serve_unserved(rt_frame *f, uint32_t id, void *retval)
{
    const cushim_api_info *info = f->call.info;
    rt_missing(id);
    if (rt_returns_text(info)) {
        const char *t = rt_no_text();
        memcpy(retval, &t, sizeof t);
    } else {
        lb_fail_write(info->ret_kind, RT_MODE_FAIL, retval, info->ret_size);
    }
    f->call.flags |= CUSHIM_CALL_SKIPPED;
    return RT_MODE_SKIPPED;
}

/* The hooked part of rt_enter: the frame, the pre hooks. */
static inline __attribute__((always_inline)) int rt_hooked(rt_frame *f, uint32_t id, void *params, void *retval,
                                                           void *real, const int serve)
{
    const hk_chain *ch = atomic_load_explicit(&rt_slots[id].chain, memory_order_relaxed);
    if (ch == NULL || ch == &hk_count_only || rt_disabled || atomic_load_explicit(&hk_off, memory_order_relaxed))
        return RT_STRAIGHT(f, id, serve);
    th_rec *r = rt_tls.rec;
    rt_frame *top = rt_live_top(r, f);
    uint32_t depth = 0;
    if (top != NULL) {   /* no stand-in frame for none: it would be a data line and page of its own */
        if (top->in_hook)
            return RT_STRAIGHT(f, id, serve);   /* made by a hook */
        depth = top->call.depth + 1;
    }
    if (RT_UNLIKELY(r == NULL) && (r = th_rec_get()) == NULL)
        return RT_STRAIGHT(f, id, serve);   /* no memory for a thread record: no hooks */

    ep_enter(r);
    ch = atomic_load_explicit(&rt_slots[id].chain, memory_order_acquire);
    if (RT_UNLIKELY(ch == NULL || ch->n == 0 || (serve && !(ch->flags & CUSHIM_HOOK_SERVE)))) {
        ep_exit(r);   /* the hooks went in the meantime, or none serves a call that has no function */
        return RT_STRAIGHT(f, id, serve);
    }
    int16_t index1 = rt_slots[id].index1;   /* the return value is zeroed by the slow path (wrap.h) */
    const cushim_api_info *info = RT_LIKELY(index1 > 0) ? &cushim_gen_apis[index1 - 1] : api_info(id);
    /* field by field: a compound literal of this size is built on the stack and copied (twice the stores) */
    cushim_call *c = &f->call;
    c->size = sizeof(cushim_call);
    c->api_id = id;
    c->info = info;
    c->params = params;
    c->retval = retval;
    c->real = real;
    c->flags = 0;
    c->depth = depth;
    c->parent = top != NULL ? &top->call : NULL;
    c->seq = th_seq(r);
    c->tid = atomic_load_explicit(&r->tid, memory_order_relaxed);
    c->t_enter_ns = RT_LIKELY(ch->flags & CUSHIM_HOOK_TIME) ? clk_now_ns() : 0;   /* in line: the recorders' case */
    c->t_exit_ns = 0;
    f->saved_top = top;
    f->chain = ch;
    f->rec = r;
    f->npre = 0;
    f->in_hook = 0;
    uw_push(&f->cbuf, rt_abandon, f, r->uw_head);
    f->active = 1;
    r->top = f;

    int mode = RT_MODE_HOOKED;
    uint32_t n = ch->n;
    if (!(ch->flags & HK_HAS_PRE)) {   /* post hooks alone: nothing to run before the call */
        for (uint32_t i = 0; i < n; i++) {   /* n is 1 or 2: not a call to memset */
            f->slots[i] = 0;
            __asm__ volatile("" ::: "memory");
        }
        f->npre = n;
        return serve ? rt_serve_unserved(f, id, retval) : mode;
    }
    if (rt_cb_begin(f, r)) {
        for (uint32_t i = 0; i < n; i++) {
            const hk_entry *e = &ch->e[i];
            f->slots[i] = 0;
            f->npre = i + 1;
            if (e->pre != NULL && e->pre(&f->call, e->user, &f->slots[i]) == CUSHIM_SKIP) {
                f->call.flags |= CUSHIM_CALL_SKIPPED;
                mode = RT_MODE_SKIPPED;
                break;
            }
        }
    }
    rt_cb_end(f, r);
    if (serve && mode == RT_MODE_HOOKED)
        return rt_serve_unserved(f, id, retval);
    return mode;
}

/* A call with no real function that a hook may serve (CUSHIM_HOOK_SERVE): out of line, off rt_enter's path. */
static __attribute__((noinline, cold)) int rt_enter_serve(rt_frame *f, uint32_t id, void *params, void *retval)
{
    return rt_hooked(f, id, params, retval, NULL, 1);
}

int rt_enter(rt_frame *f, uint32_t id, void *params, void *retval)
{
    f->active = 0;
    void *real = atomic_load_explicit(&rt_slots[id].real, memory_order_acquire);
    f->call.real = real;
    if (RT_UNLIKELY(!lc_ready() || real == NULL || atomic_load_explicit(&rt_slots[id].foreign, memory_order_relaxed) ||
                    atomic_load_explicit(&sl_failed_closed, memory_order_relaxed))) {
        int mode = rt_enter_slow(f, id);
        if (mode >= 0)
            return mode;
        if (mode == RT_SERVE)
            return rt_enter_serve(f, id, params, retval);
        real = f->call.real;
    } else if (RT_UNLIKELY(cnt_enabled)) {
        cnt_add(id);
    }
    return rt_hooked(f, id, params, retval, real, 0);
}

void rt_post(rt_frame *f)
{
    th_rec *r = f->rec;
    if (f->npre != 0) {
        const hk_chain *ch = f->chain;
        if (ch->flags & CUSHIM_HOOK_EXIT_TIME)   /* first: the real function has just returned */
            f->call.t_exit_ns = clk_now_ns();
        if (rt_cb_begin(f, r)) {
            for (uint32_t i = f->npre; i-- > 0;) {
                const hk_entry *e = &ch->e[i];
                if (e->post != NULL)
                    e->post(&f->call, e->user, &f->slots[i]);
            }
        }
        rt_cb_end(f, r);
    }
    uw_pop(&f->cbuf, r->uw_head);
    f->active = 0;
    r->top = f->saved_top;
    ep_exit(r);
}

const cushim_call *rt_current_call(void)
{
    rt_frame *top = rt_live_top(rt_tls.rec, __builtin_frame_address(0));
    return top != NULL ? &top->call : NULL;
}

int rt_in_hook(void)
{
    rt_frame *top = rt_live_top(rt_tls.rec, __builtin_frame_address(0));
    return top != NULL && top->in_hook;
}

LC_MODULE(dispatch, .level = LC_CORE, .init = rt_start);
