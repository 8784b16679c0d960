/*
 * dispatch.c - the dispatch core behind every wrapper: slots, lazy resolution
 * of real functions, the slow path (counting, depth guard, hook chains),
 * process-level initialisation and fork handling.
 *
 * The fast path lives in wrap.h; it reaches this file only when a slot has a
 * chain (hooks or the counter) or its real function is not resolved yet.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

rt_slot rt_slots[CUSHIM_API_ID_LIMIT];
static _Atomic(void *) rt_lib[CUSHIM_API_ID_LIMIT];       /* the library's function */
static _Atomic uint8_t rt_missing_logged[CUSHIM_API_ID_LIMIT];
/* Runtime functions of a libcudart whose major version differs from the headers
   this shim was generated from: their signatures may differ (CUDA 13 changed
   some), so they are forwarded untouched and never hooked or counted. */
static _Atomic uint8_t rt_foreign[CUSHIM_API_ID_LIMIT];
static _Atomic int rt_foreign_seen;
/* initial-exec: no __tls_get_addr call; 4 bytes fit the static TLS surplus
   glibc keeps for dlopen'ed libraries (drop-in mode). */
static __thread int rt_depth __attribute__((tls_model("initial-exec")));
static int rt_disabled;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static _Atomic int rt_inited;

int rt_depth_get(void)
{
    return rt_depth;
}

/*
 * fork(): no lock is taken in a prepare handler (a fork handler registered
 * before ours would run while we held it, and deadlock if it made a first CUDA
 * call or added a hook). The child makes its locks new instead.
 */
static void rt_fork_child(void)
{
    gp_reset_after_fork();
    hk_reset_after_fork();
    cnt_after_fork_child();
}

static void rt_atexit(void)
{
    cnt_write();
}

static void rt_do_init(void)
{
    const rt_config *c = cfg_get();
    rt_disabled = c->disable;
    cnt_init();
    if (cnt_enabled)
        hk_install_counting();
    pthread_atfork(NULL, NULL, rt_fork_child);
    if (cnt_enabled)
        atexit(rt_atexit);
    log_debug("initialised: %u APIs, CUDA %s headers, %s mode%s%s", cushim_gen_api_count,
              CUSHIM_GEN_CUDA_VERSION_STRING, rl_is_dropin() ? "drop-in" : "preload",
              c->disable ? ", disabled" : "", cnt_enabled ? ", counting" : "");
    atomic_store_explicit(&rt_inited, 1, memory_order_release);
}

void rt_init(void)
{
    if (RT_LIKELY(atomic_load_explicit(&rt_inited, memory_order_acquire)))
        return;
    pthread_once(&rt_once, rt_do_init);
}

/* Runs at load: environment only, nothing CUDA. */
__attribute__((constructor)) static void rt_ctor(void)
{
    rt_init();
}

/* Counts again at unload/exit: CUDA calls from other libraries' atexit handlers. */
__attribute__((destructor)) static void rt_dtor(void)
{
    if (atomic_load_explicit(&rt_inited, memory_order_acquire))
        cnt_write();
}

static void rt_publish(uint32_t id);
static void rt_foreign_all(void);

/* Called with each runtime function found, before it is published. */
static void rt_check_foreign(uint32_t id, void *fn)
{
    const cushim_api_info *info = api_info(id);
    if (fn == NULL || info == NULL || info->library != CUSHIM_LIB_RUNTIME)
        return;
    int major = rl_runtime_major(fn);
    if (major != 0 && major != CUSHIM_GEN_CUDA_VERSION / 1000) {
        atomic_store_explicit(&rt_foreign[id], 1, memory_order_relaxed);
        if (atomic_exchange(&rt_foreign_seen, 1) == 0)   /* once; rt_foreign_all comes back here */
            rt_foreign_all();
    }
}

/* A foreign libcudart was found: resolve every runtime function now, so each is
   forwarded by the fast path's plain jump from its first call on (only the call
   that found it went through this build's prototype). */
static void rt_foreign_all(void)
{
    log_warn("the loaded libcudart is not from CUDA %s, whose headers this shim was built from: runtime API "
             "calls pass through unobserved (driver calls are still seen). Build cushim with "
             "-DCUSHIM_CUDA_VERSION=<that release> to observe them.", CUSHIM_GEN_CUDA_VERSION_STRING);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        const cushim_api_info *a = &cushim_gen_apis[i];
        if (a->library != CUSHIM_LIB_RUNTIME)
            continue;
        atomic_store_explicit(&rt_foreign[a->id], 1, memory_order_relaxed);
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
        r = rl_driver_real(info->name);
    } else {
        r = rl_runtime_real(info->name);
        rt_check_foreign(id, r);
    }
    if (r == NULL)
        return NULL;
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&rt_lib[id], &expected, r))
        r = expected;
    return r;
}

void rt_fast_update(uint32_t id)
{
    void *real = atomic_load_explicit(&rt_slots[id].real, memory_order_acquire);
    const hk_chain *ch = atomic_load_explicit(&rt_slots[id].chain, memory_order_relaxed);
    int direct = real != NULL && (ch == NULL || atomic_load_explicit(&rt_foreign[id], memory_order_relaxed));
    atomic_store_explicit(&rt_fast[id], direct ? real : rt_slow_of[id], memory_order_release);
}

static void rt_publish(uint32_t id)
{
    void *lib = atomic_load_explicit(&rt_lib[id], memory_order_acquire);
    if (lib == NULL)
        return;
    void *h = atomic_load_explicit(&rt_foreign[id], memory_order_relaxed) ? NULL : gp_handler_for(id);
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&rt_slots[id].real, &expected, h ? h : lib)) {
        hk_lock();   /* against a concurrent cushim_hook_add: see rt_fast */
        rt_fast_update(id);
        hk_unlock();
    }
}

void rt_record_real(uint32_t id, void *lib_fn)
{
    if (id >= CUSHIM_API_ID_LIMIT || lib_fn == NULL)
        return;
    rt_init();
    rt_check_foreign(id, lib_fn);
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

void *rt_enter(uint32_t id, rt_frame *f)
{
    rt_init();
    const hk_chain *ch = atomic_load_explicit(&rt_slots[id].chain, memory_order_acquire);
    void *real = rt_resolve(id);
    if (RT_UNLIKELY(atomic_load_explicit(&rt_foreign[id], memory_order_relaxed))) {
        f->mode = real ? RT_MODE_DIRECT : RT_MODE_FAIL;
        return real;
    }
    if (ch != NULL && ch->count)
        cnt_add(id);
    if (RT_UNLIKELY(real == NULL)) {
        rt_missing(id);
        f->mode = RT_MODE_FAIL;
        return NULL;
    }
    if (ch == NULL || ch->n == 0 || rt_depth > 0 || rt_disabled) {
        f->mode = RT_MODE_DIRECT;
        return real;
    }
    f->mode = RT_MODE_HOOKED;
    f->chain = ch;
    f->npre = 0;
    memset(f->slots, 0, ch->n * sizeof f->slots[0]);
    return real;
}

int rt_pre(cushim_call *call, rt_frame *f)
{
    const hk_chain *ch = f->chain;
    int skipped = 0;
    call->info = api_info(call->api_id);
    rt_depth++;
    for (uint32_t i = 0; i < ch->n; i++) {
        f->npre = i + 1;
        const hk_entry *e = &ch->e[i];
        if (e->pre != NULL && e->pre(call, e->user, &f->slots[i]) == CUSHIM_SKIP) {
            call->flags |= CUSHIM_CALL_SKIPPED;
            skipped = 1;
            break;
        }
    }
    rt_depth--;
    return skipped;
}

void rt_post(cushim_call *call, rt_frame *f)
{
    const hk_chain *ch = f->chain;
    rt_depth++;
    for (uint32_t i = f->npre; i-- > 0;) {
        const hk_entry *e = &ch->e[i];
        if (e->post != NULL)
            e->post(call, e->user, &f->slots[i]);
    }
    rt_depth--;
}
