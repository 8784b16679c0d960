/*
 * tr_hooks.c - the hooks part: the recording hooks on the selected APIs. One
 * pre+post hook group on most of them; the exit hook alone (tr_query.c) on
 * read-only queries on the fast path. Calls not selected are not hooked: they
 * cost what a call with no hook costs. The pre hook copies the raw params
 * struct into the thread's buffer (tr_buf.h); the post hook stores the exit
 * time, the result and the bytes behind the pointers the metadata describes:
 * inputs (strings, structs by pointer, counted arrays; read safely where the
 * call failed, tr_post_caps) and outputs. An API on the fast path of both hooks
 * gets one record instead, at exit (TR_REC_CALL): its pre hook only pushes the
 * call on the thread's open-call stack, from which the end of the file writes
 * calls still running. Where the trace's clock is the TSC (st->tsc, the clock=
 * option) these hooks read it themselves, one rdtsc each, and the writer
 * converts (tr_clock.h); the core reads no clock for them. The queries' exit
 * hook keeps the core's clocks (it has no entry of its own to read one at).
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "idsel.h"
#include "tsc.h"
#include "tr_cupti.h"
#include "tr_hooks.h"
#include "tr_kname.h"
#include "tr_plan.h"
#include "tr_query.h"
#include "tr_record.h"

/*
 * The fast path (every API without input captures, and exits whose outputs are
 * all scalars) writes each record straight into the thread's chunk: one
 * reservation, plain stores, one release store to publish (tr_buf_commit), no
 * call to memcpy/memset, one TSC read a hook (or, on the host's clock, the
 * core's CUSHIM_HOOK_TIME t_enter_ns: no read of its own at entry), the
 * thread's buffer carried from pre to post in the slot. The
 * rest takes the general path below, which writes the same bytes. When both
 * hooks of an API are on the fast path (pl->call), the entry is not written:
 * tr_open_push at entry, one CALL record at exit (tr_plan.h tr_call_write),
 * the two rendered by the writer as the ENTER/EXIT pair would be.
 */

/* The hooks' clock at entry: the TSC, read here ('tsc': a constant, st->tsc, one copy of the hook each), or the
   frame's t_enter_ns (CUSHIM_HOOK_TIME; 0 when the core read none: the caller reads host->now_ns then). */
static inline uint64_t tr_t_enter(const cushim_call *call, const int tsc)
{
    return tsc ? tsc_read() : call->t_enter_ns;
}

/* ... and at exit: the TSC, or the frame's t_exit_ns (CUSHIM_HOOK_EXIT_TIME), or host->now_ns. */
static inline uint64_t tr_t_exit(const cushim_call *call, const int tsc)
{
    if (tsc)
        return tsc_read();
    return call->t_exit_ns ? call->t_exit_ns : tr_host->now_ns();
}

/* A launch's kernel name (pl->launch with kernel names on), or 0. */
static inline uint64_t tr_launch_name(tr_state *st, const tr_plan *pl, tr_tbuf *tb, const cushim_call *call)
{
    const void *key = (const void *)(uintptr_t)tr_rd_uint((const unsigned char *)call->params + pl->fparam_off,
                                                          sizeof(void *));
    return (uint64_t)(uintptr_t)tr_kernel_name(st, tb, pl->launch, key);
}

/* A launch's kernel name, also given to an enclosing launch that has none (a runtime launch named by the
   driver launch inside it). */
static inline uint64_t tr_launch_name_up(tr_state *st, const tr_plan *pl, tr_tbuf *tb, const cushim_call *call)
{
    uint64_t name = tr_launch_name(st, pl, tb, call);
    if (name != 0 && call->parent != NULL)
        tr_open_kname_up(tb, call, name, st->plans, st->id_limit);
    return name;
}

/* At a call's entry: a launch's kernel name (an ENTER's aux, a TR_CALL_KNAME record's word), or 0. */
static inline uint64_t tr_enter_aux(tr_state *st, const tr_plan *pl, tr_tbuf *tb, const cushim_call *call)
{
    return pl->launch && st->kernel_names ? tr_launch_name_up(st, pl, tb, call) : 0;
}

/* An ENTER that needs a kernel name or a correlation id (input captures are the EXIT's: tr_post_caps). */
static __attribute__((noinline)) int tr_pre_plain(tr_state *st, const tr_plan *pl, cushim_call *call, tr_tbuf *tb,
                                                  uint64_t t0, uint64_t *slot)
{
    unsigned char *p = tr_buf_reserve(&st->bufs, tb, pl->enter_len, (tb->open + 1) * TR_EXIT_MIN);
    if (p == NULL) {
        atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
        return CUSHIM_CONTINUE;
    }
    tr_put_enter(p, call, pl->enter_len, t0, tr_enter_aux(st, pl, tb, call));
    tr_copy_params(p + sizeof(tr_rec), call->params, pl->params_size);
    tr_buf_commit(tb, pl->enter_len);
    tb->open++;
    *slot = (uint64_t)(uintptr_t)tb;
    if (pl->corr)
        tr_cupti_push(call->seq);
    return CUSHIM_CONTINUE;
}

/* Every pre hook but a CALL's push on a thread that has its buffer: the thread's first call, the two-record
   calls' ENTER, a launch's push with its kernel name. Apart, so that the push below needs no saved registers.
   't0': the entry time (tr_t_enter; 0: none yet). */
static __attribute__((noinline)) int tr_pre_enter(tr_state *st, const tr_plan *pl, cushim_call *call, uint64_t t0,
                                                  uint64_t *slot)
{
    tr_tbuf *tb;
    unsigned char *p;
    if (t0 == 0)
        t0 = tr_host->now_ns();   /* the host's clock, and the core read none */
    if ((tb = tr_tb_cached) == NULL && (tb = tr_thread_buf()) == NULL)
        return CUSHIM_CONTINUE;
    if (tb->hold) {   /* the tracer's own thread, or a signal handler's call while this thread writes a record */
        tr_buf_interrupted(&st->bufs, tb);
        return CUSHIM_CONTINUE;
    }
    if (pl->call) {   /* one CALL record at exit: here only the call on the thread's open-call stack */
        uint64_t kname = pl->call == TR_CALL_KNAME ? tr_enter_aux(st, pl, tb, call) : 0;
        tr_open_push(tb, call, t0, kname);
        *slot = (uint64_t)(uintptr_t)tb;
        return CUSHIM_CONTINUE;
    }
    if (!pl->pre_fast)
        return tr_pre_plain(st, pl, call, tb, t0, slot);
    p = tr_buf_reserve(&st->bufs, tb, pl->enter_len, (tb->open + 1) * TR_EXIT_MIN);
    if (p == NULL) {
        atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
        return CUSHIM_CONTINUE;
    }
    tr_put_enter(p, call, pl->enter_len, t0, 0);
    tr_copy_params(p + sizeof(tr_rec), call->params, pl->params_size);
    tr_buf_commit(tb, pl->enter_len);
    tb->open++;
    *slot = (uint64_t)(uintptr_t)tb;   /* the post hook's buffer: no second TLS lookup */
    return CUSHIM_CONTINUE;
}

/* A TR_CALL_KNAME launch's pre hook on a thread that has its buffer: its kernel's name looked up (a hit in the
   thread's cache but for a function's first launch), given to an enclosing launch without one, kept with the
   call on the open-call stack for its CALL record (or for the unfinished event). */
static __attribute__((noinline)) int tr_pre_launch(tr_state *st, const tr_plan *pl, cushim_call *call, tr_tbuf *tb,
                                                   uint64_t t0, uint64_t *slot)
{
    tr_open_push(tb, call, t0, tr_launch_name_up(st, pl, tb, call));
    *slot = (uint64_t)(uintptr_t)tb;
    return CUSHIM_CONTINUE;
}

/* The pre hook, in two copies: 'tsc' (a constant) says whether it reads the TSC itself (tr_pre_tsc) or takes the
   core's entry time (tr_pre_host), so that neither tests which clock is in use. */
static inline __attribute__((always_inline)) int tr_pre_as(cushim_call *call, void *user, uint64_t *slot,
                                                           const int tsc)
{
    tr_state *st = user;
    uint32_t id = call->api_id;
    const tr_plan *pl = id < st->id_limit ? st->plans[id] : NULL;
    tr_tbuf *tb;
    uint64_t t0;
    *slot = 0;
    if (pl == NULL || atomic_load_explicit(&st->paused, memory_order_relaxed))
        return CUSHIM_CONTINUE;
    t0 = tr_t_enter(call, tsc);   /* while recording only: a paused call reads no clock */
    tb = tr_tb_cached;
    if (pl->call != TR_CALL_PLAIN || tb == NULL || tb->hold || (!tsc && t0 == 0)) {
        if (pl->call == TR_CALL_KNAME && tb != NULL && !tb->hold && (tsc || t0 != 0))
            return tr_pre_launch(st, pl, call, tb, t0, slot);
        return tr_pre_enter(st, pl, call, t0, slot);
    }
    tr_open_push(tb, call, t0, 0);   /* a CALL record at exit; nothing in the buffer now */
    *slot = (uint64_t)(uintptr_t)tb;   /* the post hook's buffer: no second TLS lookup */
    return CUSHIM_CONTINUE;
}

static int tr_pre_tsc(cushim_call *call, void *user, uint64_t *slot)
{
    return tr_pre_as(call, user, slot, 1);
}

static int tr_pre_host(cushim_call *call, void *user, uint64_t *slot)
{
    return tr_pre_as(call, user, slot, 0);
}

/* An exit with input captures or array outputs, or one the chunk has no room for (the general path). The
   inputs are read here, after the call: where it succeeded the driver has read them (plain copies); where it
   failed, a plugin skipped it or it returns no result to tell, the driver may have refused a pointer without
   reading it - an array whose count runs past its end, a pointer into nothing - and the bytes are read through
   cushim_read_mem (cushim_io.h; a system call per input off the stack), so that the trace never faults where
   the driver did not. The outputs only after success ('ok'). */
static __attribute__((noinline)) void tr_post_caps(tr_state *st, const tr_plan *pl, cushim_call *call, tr_tbuf *tb,
                                                   uint64_t t, uint16_t flags, uint64_t aux, int ok)
{
    const unsigned char *pv = call->params;
    uint32_t len = sizeof(tr_exit), sizes[32];
    uint64_t counts[32];
    int truncs[32], has[32];
    uint32_t n = pl->nin + pl->nout;
    int skipped = (call->flags & CUSHIM_CALL_SKIPPED) != 0;
    int checked = pl->ret_result && cushim_call_result(call) == 0 && !skipped;   /* cushim_call_vouched */
    unsigned char *p, *o;
    if (n > 32)
        n = 32;
    for (uint32_t i = 0; i < n; i++) {
        has[i] = 0;
        if (i >= pl->nin && !ok)
            continue;
        if (!checked && (i < pl->nin || skipped)) {   /* inputs not vouched for; outputs after a skip */
            sizes[i] = tr_cap_safe_room(&pl->caps[i], pv);
            has[i] = sizes[i] != 0;
            len += sizes[i];
            continue;
        }
        has[i] = tr_cap_size(&pl->caps[i], pv, &sizes[i], &counts[i], &truncs[i]);
        if (has[i])
            len += (uint32_t)sizeof(tr_blob) + tr_pad8(sizes[i]);
    }
    p = tr_buf_reserve(&st->bufs, tb, len, tb->open * TR_EXIT_MIN);
    if (p == NULL) {
        /* the room every open call's exit was promised */
        if (len > sizeof(tr_exit)) {
            atomic_fetch_add_explicit(&st->bufs.trimmed, 1, memory_order_relaxed);
            flags |= TR_F_TRIMMED;
        }
        n = 0;
        if ((p = tr_buf_reserve_here(tb, sizeof(tr_exit))) == NULL) {
            atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
            return;
        }
    }
    o = p + sizeof(tr_exit);
    for (uint32_t i = 0; i < n; i++) {
        if (!has[i])
            continue;
        if (!checked && (i < pl->nin || skipped))
            o = tr_cap_write_safe(&pl->caps[i], pv, o);
        else
            o = tr_cap_write(&pl->caps[i], pv, o, sizes[i], counts[i], truncs[i]);
    }
    tr_put_exit(p, call, (uint32_t)(o - p), flags, t, aux);
    tr_buf_commit(tb, (uint32_t)(o - p));
}

/* Every exit the fast path below does not take: the return value of any size, outputs in a loop. */
static __attribute__((noinline)) void tr_post_any(tr_state *st, const tr_plan *pl, cushim_call *call, tr_tbuf *tb,
                                                  uint64_t t)
{
    uint64_t aux;
    uint16_t flags = (call->flags & CUSHIM_CALL_SKIPPED) ? TR_F_SKIPPED : 0;
    int ok;
    unsigned char *p;
    if (pl->corr)
        tr_cupti_pop();
    if (pl->ret_size == 1 || pl->ret_size == 2 || pl->ret_size == 4 || pl->ret_size == 8) {
        aux = tr_scalar_word(call->retval, pl->ret_size);
    } else {
        aux = 0;
        memcpy(&aux, call->retval, pl->ret_size);
    }
    ok = !pl->ret_result || cushim_call_result(call) == 0;
    if (pl->nin == 0 && (pl->outs_scalar || !ok)) {
        uint32_t max = ok ? pl->exit_max : (uint32_t)sizeof(tr_exit);
        p = tr_buf_reserve(&st->bufs, tb, max, tb->open * TR_EXIT_MIN);
        if (p != NULL) {
            unsigned char *o = p + sizeof(tr_exit);
            if (ok && pl->out_inline)   /* the fast path's record */
                o = tr_cap_out_inline(&pl->caps[pl->nin], call->params, o, &flags);
            else
                for (uint32_t i = 0; ok && i < pl->nout; i++)
                    o = tr_cap_out_scalar(&pl->caps[pl->nin + i], call->params, o, flags);
            tr_put_exit(p, call, (uint32_t)(o - p), flags, t, aux);
            tr_buf_commit(tb, (uint32_t)(o - p));
            return;
        }
    }
    tr_post_caps(st, pl, call, tb, t, flags, aux, ok);
}

/* A fast-path call's exit, the general case: its entry not on top of the open-call stack, or a chunk to be
   linked. */
static __attribute__((noinline)) void tr_post_call_slow(tr_state *st, const tr_plan *pl, cushim_call *call,
                                                        tr_tbuf *tb, uint64_t t)
{
    uint64_t t0 = 0, kname = 0;
    unsigned char *p;
    if (!tr_open_pop(tb, call, st->tsc ? 0 : call->t_enter_ns, t, &t0, &kname))
        return;
    /* a launch whose entry was only counted (over TR_OPEN_MAX), or has no name: asked again (the thread's cache) */
    if (pl->call == TR_CALL_KNAME && kname == 0)
        kname = tr_launch_name(st, pl, tb, call);
    if ((p = tr_buf_reserve(&st->bufs, tb, pl->call_max, tb->open * TR_EXIT_MIN)) == NULL) {
        atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
        return;
    }
    tr_buf_commit(tb, tr_call_write(p, pl, call, t0, t, kname));
}

/* A fast-path call's exit: the whole call as one CALL record (tr_rec.h). The usual case inline, with no call
   but tail calls (no registers to save); 'launch' (a constant: one copy for TR_CALL_KNAME launches, one for the
   rest, which then neither load nor test a name) with the kernel's name from the open-call stack. */
static inline __attribute__((always_inline)) void tr_post_call(tr_state *st, const tr_plan *pl, cushim_call *call,
                                                               tr_tbuf *tb, uint64_t t, int launch)
{
    uint32_t n = atomic_load_explicit(&tb->nopen, memory_order_relaxed);
    tr_chunk *c;
    tb->hold |= TR_HOLD_BUSY;   /* as tr_buf_reserve, before cur and wr are read: from here to the commit a
                                   signal handler's record on this thread keeps nothing, and changes neither */
    atomic_signal_fence(memory_order_seq_cst);
    c = tb->cur;
    if (n - 1u >= TR_OPEN_MAX || atomic_load_explicit(&tb->opens[n - 1].seq, memory_order_relaxed) != call->seq ||
        c == NULL || (uint64_t)tb->wr + pl->call_max + tb->open * TR_EXIT_MIN > c->cap) {
        tb->hold &= ~TR_HOLD_BUSY;
        tr_post_call_slow(st, pl, call, tb, t);
        return;
    }
    /* off the stack before the record is published (tr_open_pop) */
    atomic_store_explicit(&tb->nopen, n - 1, memory_order_relaxed);
    tr_buf_commit(tb, tr_call_write_as(c->data + tb->wr, pl, call,
                                       atomic_load_explicit(&tb->opens[n - 1].t, memory_order_relaxed), t,
                                       launch ? atomic_load_explicit(&tb->opens[n - 1].kname, memory_order_relaxed)
                                              : 0,
                                       launch));   /* a launch's 64-byte params: the 16-byte loop */
}

/* The exit of a two-record call: its EXIT record. */
static __attribute__((noinline)) void tr_post_exit(tr_state *st, const tr_plan *pl, cushim_call *call, tr_tbuf *tb,
                                                   uint64_t t)
{
    uint64_t aux;
    unsigned char *p, *o;
    uint16_t flags;
    int ok;
    if (tb->open > 0)
        tb->open--;
    if (!pl->post_fast || (p = tr_buf_reserve(&st->bufs, tb, pl->exit_max, tb->open * TR_EXIT_MIN)) == NULL) {
        tr_post_any(st, pl, call, tb, t);
        return;
    }
    aux = tr_scalar_word(call->retval, 4);
    ok = !pl->ret_result || cushim_call_result(call) == 0;
    o = p + sizeof(tr_exit);
    flags = (call->flags & CUSHIM_CALL_SKIPPED) ? TR_F_SKIPPED : 0;
    if (ok && pl->nout != 0)   /* post_fast: the one output is inline */
        o = tr_cap_out_inline(&pl->caps[pl->nin], call->params, o, &flags);
    tr_put_exit(p, call, (uint32_t)(o - p), flags, t, aux);
    tr_buf_commit(tb, (uint32_t)(o - p));
}

/* The post hook, in two copies as the pre hook ('tsc' a constant). */
static inline __attribute__((always_inline)) void tr_post_as(cushim_call *call, void *user, uint64_t *slot,
                                                             const int tsc)
{
    tr_state *st = user;
    tr_tbuf *tb = (tr_tbuf *)(uintptr_t)*slot;
    const tr_plan *pl;
    uint64_t t;
    if (tb == NULL)
        return;
    t = tr_t_exit(call, tsc);
    pl = st->plans[call->api_id];
    if (pl->call == TR_CALL_PLAIN)
        tr_post_call(st, pl, call, tb, t, 0);
    else if (pl->call == TR_CALL_KNAME)
        tr_post_call(st, pl, call, tb, t, 1);
    else
        tr_post_exit(st, pl, call, tb, t);
}

static void tr_post_tsc(cushim_call *call, void *user, uint64_t *slot)
{
    tr_post_as(call, user, slot, 1);
}

static void tr_post_host(cushim_call *call, void *user, uint64_t *slot)
{
    tr_post_as(call, user, slot, 0);
}

/* ---- the hook groups ---- */

/* The hooks part's own state: its groups, and the two groups' selectors, kept to add them again (unhook). */
static struct {
    uint64_t group, query_group, unload_group;
    char *sel[2];
    /* 1: the core reads the exit clock (CUSHIM_HOOK_EXIT_TIME), in line in its post path, instead of the hooks
       calling host->now_ns(): when a paused plugin has no hooks to pay it (unhook) or is never paused (neither
       paused nor toggle given). A plugin that may be paused with its hooks in reads it itself, only while
       recording: one clock read a paused call, not two. */
    int exit_by_core;
} hk;

int tr_hooks_add(tr_state *st)
{
    cushim_hook_spec spec;
    for (int k = 0; k < 2; k++) {
        uint64_t *g = k == 0 ? &hk.group : &hk.query_group;
        if (hk.sel[k] == NULL)
            continue;
        memset(&spec, 0, sizeof spec);
        spec.size = sizeof spec;
        /* the entry time from the core; the exit time too when nothing pays it while paused (exit_by_core),
           else read by the post hooks, only while recording, unless another hook on the API asked the core;
           where the trace's clock is the TSC the pre and post hooks read it themselves: no clock from the core
           (the queries' exit hook, which has no entry of its own, keeps the core's) */
        spec.flags = k == 0 && st->tsc ? 0u : CUSHIM_HOOK_TIME | (hk.exit_by_core ? CUSHIM_HOOK_EXIT_TIME : 0u);
        spec.select = hk.sel[k];
        spec.priority = -1000;   /* first in, last out: the recording encloses other plugins' hooks */
        spec.pre = k == 0 ? (st->tsc ? tr_pre_tsc : tr_pre_host) : NULL;
        spec.post = k == 0 ? (st->tsc ? tr_post_tsc : tr_post_host) : tr_post_query;
        spec.user = st;
        if (tr_host->hooks_add(st->self, &spec, g) != CUSHIM_OK) {
            tr_hooks_remove(st);
            return -1;
        }
    }
    atomic_store(&st->hooked, 1);
    return 0;
}

void tr_hooks_remove(tr_state *st)
{
    if (hk.group)
        tr_host->hooks_remove(st->self, hk.group);
    if (hk.query_group)
        tr_host->hooks_remove(st->self, hk.query_group);
    hk.group = hk.query_group = 0;
    atomic_store(&st->hooked, 0);
}

int tr_hooks_add_post(tr_state *st, const char *select, cushim_post_fn post, uint64_t *group)
{
    cushim_hook_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.size = sizeof spec;
    spec.select = select;
    spec.post = post;
    spec.user = st;
    return tr_host->hooks_add(st->self, &spec, group) == CUSHIM_OK ? 0 : -1;
}

static int tr_register(tr_state *st, const char *filter)
{
    uint32_t *ids = malloc((size_t)st->id_limit * sizeof *ids);
    char err[256] = "";
    int n;
    if (ids == NULL)
        return -1;
    n = tr_host->api_select(filter, ids, st->id_limit, err, sizeof err);
    if (n <= 0) {
        /* the selector engine's message names the selector: "'X' matches no API of this build (...)" or
           "'X': what is wrong"; an older shim may leave it empty */
        if (n == 0 || n == CUSHIM_ENOMATCH)
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "filter %s", err[0] != '\0' ? err : "matches no API of this build");
        else
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "filter '%s' is malformed%s%s", filter, err[0] != '\0' ? ": " : "",
                         err);
        free(ids);
        return -1;
    }
    for (int k = 0; k < n && (uint32_t)k < st->id_limit; k++) {
        const cushim_api_info *info = tr_host->api_by_id(ids[k]);
        if (info != NULL && ids[k] < st->id_limit && st->plans[ids[k]] == NULL &&
            (st->plans[ids[k]] = tr_plan_make(st, info)) == NULL) {
            free(ids);
            return -1;
        }
    }
    free(ids);
    /* two groups: pre + post on most APIs; the exit alone on read-only queries on the fast path (tr_post_query:
       no pre hook to call, nothing on the open-call stack), each as a list of ids */
    {
        idsel sel[2] = {{0}, {0}};
        for (uint32_t id = 0; id < st->id_limit; id++) {
            const tr_plan *pl = st->plans[id];
            if (pl != NULL && idsel_add(&sel[pl->post_only ? 1 : 0], id) != 0) {
                idsel_free(&sel[0]);
                idsel_free(&sel[1]);
                tr_host->log(st->self, CUSHIM_LOG_ERROR, "out of memory");
                return -1;
            }
        }
        /* the queries' CALL records hold the core's ns where the other hooks' hold TSC ticks: the writer knows
           them by API (tr_rec.h), so that the hottest hook stores no flag */
        if (st->tsc && sel[1].s != NULL) {
            if ((st->w.core_timed = calloc(st->id_limit, 1)) == NULL) {
                idsel_free(&sel[0]);
                idsel_free(&sel[1]);
                tr_host->log(st->self, CUSHIM_LOG_ERROR, "out of memory");
                return -1;
            }
            for (uint32_t id = 0; id < st->id_limit; id++)
                st->w.core_timed[id] = st->plans[id] != NULL && st->plans[id]->post_only;
            st->w.ncore_timed = st->id_limit;
        }
        hk.sel[0] = sel[0].s;   /* kept for re-adding the hooks (unhook); freed at fini */
        hk.sel[1] = sel[1].s;
        if (tr_hooks_add(st) != 0) {
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "cannot hook the filter's APIs");
            return -1;
        }
    }
    if (st->kernel_names &&
        tr_hooks_add_post(st, "base:cuModuleUnload,base:cuLibraryUnload,base:cudaLibraryUnload",
                          tr_kernel_names_unloaded, &hk.unload_group) != 0)
        hk.unload_group = 0;
    return 0;
}

/* The exit clock: read by the core (CUSHIM_HOOK_EXIT_TIME) when nothing pays it while paused - the hooks are
   removed while paused (unhook), or recording is never paused (neither paused, toggle nor a capture range) -,
   else by the hooks themselves, only while recording: one clock read a paused call, not two. Then the plans
   and the two hook groups of the filter's APIs. */
static int tr_hooks_start(tr_state *st)
{
    const cushim_host *host = tr_host;
    cushim_plugin *self = st->self;
    const char *tg = host->opt_string(self, "toggle"), *filter = host->opt_string(self, "filter");
    hk.exit_by_core = tr_query_core_clock && (host->opt_bool(self, "unhook") ||
                                               (!host->opt_bool(self, "paused") && (tg == NULL || tg[0] == '\0') &&
                                                st->capture == TR_CAPTURE_NONE));
    return tr_register(st, filter && filter[0] ? filter : "all");
}

int tr_hooks_self_timed(tr_state *st)
{
    hk.exit_by_core = 0;
    tr_hooks_remove(st);
    return tr_hooks_add(st);
}

static void tr_hooks_fini(tr_state *st)
{
    free(hk.sel[0]);
    free(hk.sel[1]);
    hk.sel[0] = hk.sel[1] = NULL;
    free(st->w.core_timed);
    st->w.core_timed = NULL;
    st->w.ncore_timed = 0;
}

const tr_part tr_part_hooks = {
    .name = "hooks",
    .start = tr_hooks_start,
    .undo = tr_hooks_remove,
    .fini = tr_hooks_fini,
};
