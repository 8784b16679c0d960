/*
 * trace.c - the trace plugin: every selected CUDA call with its arguments,
 * output values and result, written as a Chrome trace-event JSON file that
 * Perfetto opens, plus Nsight Systems' cuda_api_sum table at exit
 * (docs/plugins/trace.md).
 *
 *   CUSHIM_PLUGINS='trace:file=t.json,filter=cat:alloc+launch'   (or cushim run --trace=t.json)
 *
 * One pre+post hook group on the selected APIs (calls not selected are not
 * hooked: they cost what a call with no hook costs). The pre hook copies the
 * raw params struct into the thread's buffer (tr_buf.h); the post hook stores
 * the exit time, the result and the bytes behind the pointers the metadata
 * describes: inputs (strings, structs by pointer, counted arrays; read safely
 * where the call failed, tr_post_caps) and outputs. An API on the fast path of both hooks gets one
 * record instead, at exit (TR_REC_CALL): its pre hook only pushes the call on
 * the thread's open-call stack, from which the end of the file writes calls
 * still running. No text is formatted on the calling thread: the writer
 * thread (tr_writer.c) renders. Built on the public SDK only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#include "tr_path.h"
#include "tr_plan.h"
#include "tr_query.h"
#include "tr_json.h"   /* tr_c_number */

#define TR_CHUNK (64u * 1024u)    /* per thread at a time: 64 MiB serve 1024 recording threads */

const cushim_host *tr_host;
tr_state *tr_st;

/* ---- per-thread buffers ---- */

/* The calling thread's buffer, cached from the host's TLS slot (whose destructor ends it): one TLS
   access instead of a call into the host per recorded call. Set and cleared on its own thread only. */
__thread tr_tbuf *tr_tb_cached;

static void tr_thread_end(void *p)
{
    tr_tbuf *tb = p;
    if (tr_tb_cached == tb)   /* the destructor runs on the exiting thread */
        tr_tb_cached = NULL;
    free(tb->prod);
    tb->prod = NULL;
    tr_buf_detach(tb);
}

static pthread_mutex_t tr_output_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread is opening the output (tr_output_lock held). CUPTI's start makes CUDA calls; inside a hook (the
   first record a CUDA call's) the shim's depth rule sends them straight to the driver, but when the first record
   is no call (an NVTX range) and the hooks are in, they reach this plugin's hooks on this thread: they are not
   recorded, instead of waiting for the lock this thread holds (a PyTorch step's first range push inside a
   capture range hung so on the H200: docs/gpu.md, twentieth session). */
static __thread int tr_opening;

/* The file, the writer thread and CUPTI start with the first recorded call of the process (so a process
   that makes no CUDA call, like a shell between the launcher and the program, leaves no file). 1: ready. */
static int tr_output_ready(tr_state *st)
{
    int s = atomic_load_explicit(&st->output, memory_order_acquire);
    if (s != 0)
        return s == 1;
    if (tr_opening)
        return 0;
    pthread_mutex_lock(&tr_output_lock);
    tr_opening = 1;
    s = atomic_load_explicit(&st->output, memory_order_relaxed);
    if (s == 0) {
        char *given = st->w.path, *preexec = NULL;
        int e = tw_open(&st->w) != 0 ? errno : 0;
        /* the name is another live process's (tw_open: a lock), or holds this process's calls from before it
           executed its present program: this one writes it with its pid before .json */
        for (int k = 1; e == EWOULDBLOCK && k <= 8; k++) {
            if (st->w.open_held == 2 && preexec == NULL)
                preexec = strdup(st->w.path);
            char *alt = tr_path_alt(given, st->w.pid, k);
            if (alt == NULL) {
                e = ENOMEM;
                break;
            }
            if (st->w.path != given)
                free(st->w.path);
            st->w.path = alt;
            e = tw_open(&st->w) != 0 ? errno : 0;
        }
        if (preexec != NULL && e == 0)
            tr_host->log(st->self, CUSHIM_LOG_WARN, "the trace file '%s' holds this process's calls from before it "
                         "executed this program (unfinished: 'cushim stats --close' ends a copy); this program's are "
                         "in '%s'", preexec, st->w.path);
        else if (st->w.path != given && e == 0)
            tr_host->log(st->self, CUSHIM_LOG_WARN, "the trace file '%s' is being written by another process; "
                         "this one writes '%s'", given, st->w.path);
        free(preexec);
        if (st->w.path != given)
            free(given);
        if (e != 0) {
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "cannot write the trace file '%s': %s; this process is not "
                         "traced", st->w.path, e == ENXIO ? "a FIFO with no reader (start the reader first)"
                                                          : strerror(e));
            s = 2;
        } else {
            if (st->gpu) {
                char err[512] = "";
                if (tr_cupti_start(st, st->cupti_path, err, sizeof err) != 0) {
                    tr_host->log(st->self, CUSHIM_LOG_WARN, "GPU tracing is off: %s; the CUDA calls are still traced",
                                 err);
                    snprintf(st->w.note, sizeof st->w.note, "GPU tracing off: %.200s", err);
                } else {
                    st->w.gpu = 1;
                }
            }
            if (tw_start(&st->w) != 0)
                tr_host->log(st->self, CUSHIM_LOG_WARN, "no writer thread: the trace is written at exit");
            s = 1;
        }
        atomic_store_explicit(&st->output, s, memory_order_release);
    }
    tr_opening = 0;
    pthread_mutex_unlock(&tr_output_lock);
    return s == 1;
}

tr_tbuf *tr_thread_buf(void)
{
    tr_tbuf *tb = tr_tb_cached;
    if (tb != NULL)
        return tb;
    if ((tb = tr_host->tls_get(tr_st->tls_key)) != NULL)
        return tr_tb_cached = tb;
    if (!tr_output_ready(tr_st))
        return NULL;
    if ((tb = tr_buf_attach(&tr_st->bufs, tr_host->thread_id())) == NULL)
        return NULL;
    tb->alt_tid = (uint64_t)pthread_self();
    atomic_store_explicit(&tb->nopen, 0, memory_order_relaxed);   /* tr_buf_attach leaves it to us */
    if (tr_host->tls_set(tr_st->tls_key, tb) != CUSHIM_OK) {
        tr_buf_detach(tb);
        return NULL;
    }
    return tr_tb_cached = tb;
}

int tr_thread_quiet(int quiet)
{
    tr_tbuf *tb = tr_st ? tr_thread_buf() : NULL;
    int was = 0;
    if (tb != NULL) {
        was = (tb->hold & TR_HOLD_QUIET) != 0;
        tb->hold = quiet ? tb->hold | TR_HOLD_QUIET : tb->hold & ~TR_HOLD_QUIET;
    }
    return was;
}

/* ---- hooks ----
 *
 * The fast path (every API without input captures, and exits whose outputs are
 * all scalars) writes each record straight into the thread's chunk: one
 * reservation, plain stores, one release store to publish (tr_buf_commit), no
 * call to memcpy/memset, no clock read at entry (CUSHIM_HOOK_TIME's
 * t_enter_ns), the thread's buffer carried from pre to post in the slot. The
 * rest takes the general path below, which writes the same bytes. When both
 * hooks of an API are on the fast path (pl->call), the entry is not written:
 * tr_open_push at entry, one CALL record at exit (tr_plan.h tr_call_write),
 * the two rendered by the writer as the ENTER/EXIT pair would be.
 */

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
                                                  uint64_t *slot)
{
    unsigned char *p = tr_buf_reserve(&st->bufs, tb, pl->enter_len, (tb->open + 1) * TR_EXIT_MIN);
    if (p == NULL) {
        atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
        return CUSHIM_CONTINUE;
    }
    tr_put_enter(p, call, pl->enter_len, call->t_enter_ns ? call->t_enter_ns : tr_host->now_ns(),
                 tr_enter_aux(st, pl, tb, call));
    tr_copy_params(p + sizeof(tr_rec), call->params, pl->params_size);
    tr_buf_commit(tb, pl->enter_len);
    tb->open++;
    *slot = (uint64_t)(uintptr_t)tb;
    if (pl->corr)
        tr_cupti_push(call->seq);
    return CUSHIM_CONTINUE;
}

/* Every pre hook but a CALL's push on a thread that has its buffer: the thread's first call, the two-record
   calls' ENTER, a launch's push with its kernel name. Apart, so that the push below needs no saved registers. */
static __attribute__((noinline)) int tr_pre_enter(tr_state *st, const tr_plan *pl, cushim_call *call,
                                                  uint64_t *slot)
{
    tr_tbuf *tb;
    unsigned char *p;
    if ((tb = tr_tb_cached) == NULL && (tb = tr_thread_buf()) == NULL)
        return CUSHIM_CONTINUE;
    if (tb->hold) {   /* the tracer's own thread, or a signal handler's call while this thread writes a record */
        tr_buf_interrupted(&st->bufs, tb);
        return CUSHIM_CONTINUE;
    }
    if (pl->call) {   /* one CALL record at exit: here only the call on the thread's open-call stack */
        uint64_t kname = pl->call == TR_CALL_KNAME ? tr_enter_aux(st, pl, tb, call) : 0;
        tr_open_push(tb, call, call->t_enter_ns ? call->t_enter_ns : tr_host->now_ns(), kname);
        *slot = (uint64_t)(uintptr_t)tb;
        return CUSHIM_CONTINUE;
    }
    if (!pl->pre_fast)
        return tr_pre_plain(st, pl, call, tb, slot);
    p = tr_buf_reserve(&st->bufs, tb, pl->enter_len, (tb->open + 1) * TR_EXIT_MIN);
    if (p == NULL) {
        atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
        return CUSHIM_CONTINUE;
    }
    tr_put_enter(p, call, pl->enter_len, call->t_enter_ns ? call->t_enter_ns : tr_host->now_ns(), 0);
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
                                                   uint64_t *slot)
{
    tr_open_push(tb, call, call->t_enter_ns, tr_launch_name_up(st, pl, tb, call));
    *slot = (uint64_t)(uintptr_t)tb;
    return CUSHIM_CONTINUE;
}

static int tr_pre(cushim_call *call, void *user, uint64_t *slot)
{
    tr_state *st = user;
    uint32_t id = call->api_id;
    const tr_plan *pl = id < st->id_limit ? st->plans[id] : NULL;
    tr_tbuf *tb;
    *slot = 0;
    if (pl == NULL || atomic_load_explicit(&st->paused, memory_order_relaxed))
        return CUSHIM_CONTINUE;
    tb = tr_tb_cached;
    if (pl->call != TR_CALL_PLAIN || tb == NULL || tb->hold || call->t_enter_ns == 0) {
        if (pl->call == TR_CALL_KNAME && tb != NULL && !tb->hold && call->t_enter_ns != 0)
            return tr_pre_launch(st, pl, call, tb, slot);
        return tr_pre_enter(st, pl, call, slot);
    }
    tr_open_push(tb, call, call->t_enter_ns, 0);   /* a CALL record at exit; nothing in the buffer now */
    *slot = (uint64_t)(uintptr_t)tb;   /* the post hook's buffer: no second TLS lookup */
    return CUSHIM_CONTINUE;
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

/* A fast-path call's exit, the general case: its entry not on top of the open-call stack, no entry time in the
   frame, or a chunk to be linked. */
static __attribute__((noinline)) void tr_post_call_slow(tr_state *st, const tr_plan *pl, cushim_call *call,
                                                        tr_tbuf *tb, uint64_t t)
{
    uint64_t t0 = 0, kname = 0;
    unsigned char *p;
    if (!tr_open_pop(tb, call, t, &t0, &kname))
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
        call->t_enter_ns == 0 || c == NULL || (uint64_t)tb->wr + pl->call_max + tb->open * TR_EXIT_MIN > c->cap) {
        tb->hold &= ~TR_HOLD_BUSY;
        tr_post_call_slow(st, pl, call, tb, t);
        return;
    }
    /* off the stack before the record is published (tr_open_pop) */
    atomic_store_explicit(&tb->nopen, n - 1, memory_order_relaxed);
    tr_buf_commit(tb, tr_call_write(c->data + tb->wr, pl, call, call->t_enter_ns, t,
                                    launch ? atomic_load_explicit(&tb->opens[n - 1].kname, memory_order_relaxed) : 0));
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

static void tr_post(cushim_call *call, void *user, uint64_t *slot)
{
    tr_state *st = user;
    tr_tbuf *tb = (tr_tbuf *)(uintptr_t)*slot;
    const tr_plan *pl;
    uint64_t t;
    if (tb == NULL)
        return;
    t = call->t_exit_ns ? call->t_exit_ns : tr_host->now_ns();   /* CUSHIM_HOOK_EXIT_TIME of another hook */
    pl = st->plans[call->api_id];
    if (pl->call == TR_CALL_PLAIN)
        tr_post_call(st, pl, call, tb, t, 0);
    else if (pl->call == TR_CALL_KNAME)
        tr_post_call(st, pl, call, tb, t, 1);
    else
        tr_post_exit(st, pl, call, tb, t);
}

void tr_record2(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
                const char *text, uint32_t text_len, const char *text2, uint32_t text2_len)
{
    tr_tbuf *tb;
    tr_rec r;
    uint32_t len;
    unsigned char *p, *o;
    if (tr_st == NULL || (tb = tr_thread_buf()) == NULL)
        return;
    if (tr_buf_interrupted(&tr_st->bufs, tb))   /* a signal handler's record while its thread wrote one */
        return;
    if (text_len > TR_NAME_MAX)   /* NVTX messages render bounded, kernel names whole */
        text_len = TR_NAME_MAX;
    if (text2 == NULL || text2_len == 0)
        text2 = NULL;
    else if (text2_len > TR_NAME_MAX)
        text2_len = TR_NAME_MAX;
    len = (uint32_t)sizeof r + tr_pad8(extra_len) + (text ? (uint32_t)sizeof(tr_blob) + tr_pad8(text_len + 1) : 0) +
          (text2 ? (uint32_t)sizeof(tr_blob) + tr_pad8(text2_len + 1) : 0);
    if ((p = tr_buf_reserve(&tr_st->bufs, tb, len, tb->open * TR_EXIT_MIN)) == NULL) {
        atomic_fetch_add_explicit(&tr_st->bufs.dropped, 1, memory_order_relaxed);
        return;
    }
    memset(&r, 0, sizeof r);
    r.len = len;
    r.type = type;
    r.seq = seq;
    r.parent = parent;
    r.t = t;
    memset(p, 0, len);
    memcpy(p, &r, sizeof r);
    if (extra_len)
        memcpy(p + sizeof r, extra, extra_len);
    o = p + sizeof r + tr_pad8(extra_len);
    if (text) {
        tr_blob b = {.param = 0, .flags = 0, .len = text_len + 1, .count = text_len};
        memcpy(o, &b, sizeof b);
        memcpy(o + sizeof b, text, text_len);
        o += sizeof b + tr_pad8(text_len + 1);
    }
    if (text2) {
        tr_blob b = {.param = 1, .flags = 0, .len = text2_len + 1, .count = text2_len};
        memcpy(o, &b, sizeof b);
        memcpy(o + sizeof b, text2, text2_len);
    }
    tr_buf_commit(tb, len);
}

void tr_record(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
               const char *text, uint32_t text_len)
{
    tr_record2(type, seq, parent, t, extra, extra_len, text, text_len, NULL, 0);
}

/* ---- lifecycle ---- */

/* The writer could not write the file (a full disk, a lost file): said when it happens, on the writer's thread. */
static void tr_on_write_error(void *ctx, const char *msg)
{
    const tr_state *st = ctx;
    tr_host->log(st->self, CUSHIM_LOG_ERROR, "%s", msg);
}

/* ",id:N" (or "id:N" first) into 'out' (24 bytes): its length. Without printf: one per selected API at start. */
static int tr_id_atom(char *out, int comma, uint32_t id)
{
    char digits[10];
    int nd = 0, n = 0;
    do
        digits[nd++] = (char)('0' + id % 10);
    while ((id /= 10) != 0);
    if (comma)
        out[n++] = ',';
    memcpy(out + n, "id:", 3);
    n += 3;
    while (nd > 0)
        out[n++] = digits[--nd];
    out[n] = '\0';
    return n;
}

int tr_hooks_add(tr_state *st)
{
    cushim_hook_spec spec;
    for (int k = 0; k < 2; k++) {
        uint64_t *g = k == 0 ? &st->group : &st->query_group;
        if (st->sel[k] == NULL)
            continue;
        memset(&spec, 0, sizeof spec);
        spec.size = sizeof spec;
        /* the entry time from the core; the exit time too when nothing pays it while paused (exit_by_core),
           else read by the post hooks, only while recording, unless another hook on the API asked the core */
        spec.flags = CUSHIM_HOOK_TIME | (st->exit_by_core ? CUSHIM_HOOK_EXIT_TIME : 0u);
        spec.select = st->sel[k];
        spec.priority = -1000;   /* first in, last out: the recording encloses other plugins' hooks */
        spec.pre = k == 0 ? tr_pre : NULL;
        spec.post = k == 0 ? tr_post : tr_post_query;
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
    if (st->group)
        tr_host->hooks_remove(st->self, st->group);
    if (st->query_group)
        tr_host->hooks_remove(st->self, st->query_group);
    st->group = st->query_group = 0;
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
        char *sel[2] = {NULL, NULL};
        size_t len[2] = {0, 0};
        for (uint32_t id = 0; id < st->id_limit; id++) {
            const tr_plan *pl = st->plans[id];
            char one[24];
            int k, n;
            char *g;
            if (pl == NULL)
                continue;
            k = pl->post_only ? 1 : 0;
            n = tr_id_atom(one, len[k] != 0, id);
            if ((g = realloc(sel[k], len[k] + (size_t)n + 1)) == NULL) {
                free(sel[0]);
                free(sel[1]);
                tr_host->log(st->self, CUSHIM_LOG_ERROR, "out of memory");
                return -1;
            }
            memcpy(g + len[k], one, (size_t)n + 1);
            sel[k] = g;
            len[k] += (size_t)n;
        }
        st->sel[0] = sel[0];
        st->sel[1] = sel[1];
        if (tr_hooks_add(st) != 0) {
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "cannot hook the filter's APIs");
            return -1;
        }
    }
    if (st->kernel_names &&
        tr_hooks_add_post(st, "base:cuModuleUnload,base:cuLibraryUnload,base:cudaLibraryUnload",
                          tr_kernel_names_unloaded, &st->unload_group) != 0)
        st->unload_group = 0;
    return 0;
}

static void tr_free_state(tr_state *st)
{
    if (st == NULL)
        return;
    for (uint32_t i = 0; st->plans && i < st->id_limit; i++)
        free(st->plans[i]);
    free(st->plans);
    free(st->w.path);
    free(st->w.summary_path);
    free(st->cupti_path);
    free(st->sel[0]);
    free(st->sel[1]);
    free(st->capture_msg);
    free(st->capture_dom);
    free(st);
}

static int tr_init(const cushim_host *host, cushim_plugin *self)
{
    tr_state *st;
    const char *file, *filter, *sfile;
    char unset[128];
    if (CUSHIM_ABI_MAJOR_OF(host->abi_version) != CUSHIM_ABI_MAJOR || !CUSHIM_HOST_HAS(host, plugin_data))
        return -1;
    if (tr_st != NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "the trace plugin is loaded once per process (it is already tracing to %s)",
                  tr_st->w.path);
        return -1;
    }
    tr_host = host;
    if ((st = aligned_alloc(TR_CACHELINE, sizeof *st)) == NULL)   /* sizeof is a multiple of the line */
        return -1;
    memset(st, 0, sizeof *st);
    st->self = self;
    st->id_limit = host->api_id_limit();
    st->plans = calloc(st->id_limit, sizeof *st->plans);
    file = host->opt_string(self, "file");
    filter = host->opt_string(self, "filter");
    sfile = host->opt_string(self, "summary_file");
    st->kernel_names = host->opt_bool(self, "kernel_names");
    st->gpu = host->opt_bool(self, "gpu");
    st->gpu_detach = host->opt_double(self, "gpu_detach");
    tr_bufs_init(&st->bufs, TR_CHUNK, host->opt_bytes(self, "buffer"));
    if (st->bufs.limit < 4ull * TR_CHUNK)
        host->log(self, CUSHIM_LOG_WARN, "buffer=%llu bytes holds fewer than 4 chunks of %u bytes: most calls will be "
                  "dropped", (unsigned long long)st->bufs.limit, TR_CHUNK);
    st->w.bufs = &st->bufs;
    st->w.meta.api_param = host->api_param;
    st->w.meta.result_name = host->result_name;
    st->w.meta.sizeof_param_info = host->sizeof_param_info;
    st->w.meta.struct_field = CUSHIM_HOST_HAS(host, struct_field) ? host->struct_field : NULL;
    st->w.meta.enum_value_name = NULL;
    if (CUSHIM_HOST_HAS(host, enum_value_name))
        st->w.meta.enum_value_name = host->enum_value_name;
    st->w.api_by_id = host->api_by_id;
    st->w.flow_categories = CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET;
    st->w.summary = host->opt_bool(self, "summary");
    st->w.internals = host->log_enabled != NULL && host->log_enabled(CUSHIM_LOG_INFO);
    st->w.summary_exact = host->opt_bytes(self, "summary_exact") / 8;
    if (st->w.summary_exact == 0)
        st->w.summary_exact = 1;
    {
        const char *rd = host->opt_string(self, "render");
        if (rd != NULL && strcmp(rd, "exit") == 0)
            st->w.defer = 1;
        else if (rd != NULL && rd[0] != '\0' && strcmp(rd, "background") != 0)
            host->log(self, CUSHIM_LOG_WARN, "render=%s: not 'background' or 'exit'; rendering in the background", rd);
    }
    st->w.pid = (int)getpid();
    st->w.start = tw_process_start();
    st->w.fd = -1;
    st->w.on_error = tr_on_write_error;
    st->w.on_error_ctx = st;
    st->w.path = tr_path(file, st->w.pid, 0, unset, sizeof unset);
    if (unset[0] != '\0')
        host->log(self, CUSHIM_LOG_WARN, "file=%s: the environment variable %s is not set (%%q{%s} left empty)", file,
                  unset, unset);
    st->w.summary_path = sfile && sfile[0] ? strdup(sfile) : NULL;
    cushim_stderr_mark(&st->w.stderr_id);
    st->api_funcgetname = tr_api_id_of("cuFuncGetName");
    st->api_kernelgetname = tr_api_id_of("cuKernelGetName");
    st->api_getfuncbysymbol = tr_api_id_of("cudaGetFuncBySymbol");
    st->api_getprocaddress = tr_api_id_of("cuGetProcAddress");
    if (st->plans == NULL || st->w.path == NULL || host->tls_create(self, tr_thread_end, &st->tls_key) != CUSHIM_OK) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        tr_free_state(st);
        return -1;
    }
    st->cupti_path = host->opt_string(self, "cupti") ? strdup(host->opt_string(self, "cupti")) : NULL;
    atomic_init(&st->output, 0);
    tr_st = st;
    {
        char why[160];
        double delay = host->opt_double(self, "delay"), duration = host->opt_double(self, "duration");
        if (tr_capture_parse(st, host->opt_string(self, "capture"), why, sizeof why) != 0 ||
            tr_capture_end_parse(st, host->opt_string(self, "capture_end"), why, sizeof why) != 0 ||
            tr_timer_parse(st, delay, duration, why, sizeof why) != 0 ||
            (!(st->gpu_detach >= 0 && st->gpu_detach < 1e6) &&
             snprintf(why, sizeof why, "gpu_detach=%g: seconds, 0 or more", st->gpu_detach) > 0)) {
            host->log(self, CUSHIM_LOG_ERROR, "%s", why);
            tr_st = NULL;
            tr_free_state(st);
            return -1;
        }
        char dn[40], un[40];   /* as the user wrote them: '.' whatever locale the program set (drop-in mode) */
        snprintf(dn, sizeof dn, "%.9g", delay);
        snprintf(un, sizeof un, "%.9g", duration);
        tr_c_number(dn);
        tr_c_number(un);
        if (st->capture == TR_CAPTURE_TIME && duration == 0)
            snprintf(st->capture_desc, sizeof st->capture_desc, "delay=%s", dn);
        else if (st->capture == TR_CAPTURE_TIME && delay == 0)
            snprintf(st->capture_desc, sizeof st->capture_desc, "duration=%s", un);
        else if (st->capture == TR_CAPTURE_TIME)
            snprintf(st->capture_desc, sizeof st->capture_desc, "delay=%s,duration=%s", dn, un);
        else if (st->capture != TR_CAPTURE_NONE && st->capture_max == 0)
            snprintf(st->capture_desc, sizeof st->capture_desc, "%s", host->opt_string(self, "capture"));
        else if (st->capture != TR_CAPTURE_NONE)
            snprintf(st->capture_desc, sizeof st->capture_desc, "%s,capture_end=%s", host->opt_string(self, "capture"),
                     host->opt_string(self, "capture_end"));
    }
    {
        const char *tg = host->opt_string(self, "toggle");
        st->exit_by_core = tr_query_core_clock && (host->opt_bool(self, "unhook") ||
                           (!host->opt_bool(self, "paused") && (tg == NULL || tg[0] == '\0') &&
                            st->capture == TR_CAPTURE_NONE));
    }
    if (tr_register(st, filter && filter[0] ? filter : "all") != 0) {
        tr_st = NULL;
        tr_hooks_remove(st);
        return -1;   /* nothing was started; the state stays (a hook may have seen it) */
    }
    if (tr_capture_start(st) != 0) {
        tr_st = NULL;
        tr_hooks_remove(st);
        return -1;
    }
    if (host->opt_bool(self, "signals"))
        tr_signals_install();
    /* a capture range starts paused: recording begins at the range's start */
    atomic_store(&st->paused, host->opt_bool(self, "paused") || st->capture_paused_start ? 1 : 0);
    {
        const char *tg = host->opt_string(self, "toggle");
        char why[160] = "";
        int toggled = 0;
        if (tg != NULL && tg[0] != '\0') {
            if (tr_toggle_install(tg, why, sizeof why) != 0)
                host->log(self, CUSHIM_LOG_WARN, "toggle=%s: %s; recording is not toggled", tg, why);
            else
                toggled = 1;
        }
        st->unhook = host->opt_bool(self, "unhook");
        st->w.unhooked = &st->unhooked;
        if (st->unhook && atomic_load(&st->paused)) {   /* paused from the start: no hook from the first call */
            tr_hooks_remove(st);
            atomic_fetch_add(&st->unhooked, 1);
        }
        if (st->unhook && toggled && tr_unhook_start(st) != 0) {
            host->log(self, CUSHIM_LOG_WARN, "unhook: no thread to follow the toggle; paused calls keep their hooks");
            /* hooks that stay while paused read the exit clock themselves (one read a paused call, not two) */
            st->exit_by_core = 0;
            tr_hooks_remove(st);
            if (tr_hooks_add(st) != 0)
                host->log(self, CUSHIM_LOG_WARN, "unhook: the hooks could not be added again");
        }
    }
    tr_timer_start(st);
    st->w.capture = st->capture != TR_CAPTURE_NONE ? st->capture_desc : NULL;
    st->w.captures = &st->captures;
    host->plugin_set_data(self, st);
    host->log(self, CUSHIM_LOG_INFO, "tracing '%s' to %s", filter && filter[0] ? filter : "all", st->w.path);
    return 0;
}

static void tr_flush(cushim_plugin *self)
{
    tr_state *st = tr_host ? tr_host->plugin_data(self) : NULL;
    tr_unhook_stop();
    tr_timer_stop();
    if (st != NULL && st->capture != TR_CAPTURE_NONE && atomic_load(&st->captures) == 0 &&
        atomic_load(&st->cuda_used))   /* a process that made no CUDA call (a shell) has nothing to be told */
        tr_host->log(st->self, CUSHIM_LOG_WARN, "%s%s: %s; no call was recorded",
                     st->capture == TR_CAPTURE_TIME ? "" : "capture=", st->capture_desc,
                     st->capture == TR_CAPTURE_PROFILER
                         ? "the program never called cudaProfilerStart or cuProfilerStart"
                     : st->capture == TR_CAPTURE_NVTX
                         ? "no NVTX range with that message (in that domain) was opened (is NVTX_INJECTION64_PATH the "
                           "trace plugin? "
                           "cushim run --trace sets it)"
                         : tr_timer_missed() ? "the window had passed when the process first called cuInit"
                                             : "the program ended before the delay passed");
    if (st != NULL && atomic_load(&st->capture_lost) != 0)
        tr_host->log(st->self, CUSHIM_LOG_WARN, "capture=%s: %llu ranges were not followed (started while 64 "
                     "were open, or pushed on a thread with ranges of 8 domains open; their calls recorded only where "
                     "another range was open)", st->capture_desc,
                     (unsigned long long)atomic_load(&st->capture_lost));
    if (st == NULL || atomic_load(&st->output) != 1)
        return;   /* no call was recorded: no file */
    tr_cupti_flush();
    tw_finish(&st->w);
}

static void tr_fork_child(cushim_plugin *self)
{
    tr_state *st = tr_host ? tr_host->plugin_data(self) : NULL;
    tr_tbuf *keep;
    const char *file;
    if (st == NULL)
        return;
    /* the calling thread starts afresh: its next call opens the child's own file and starts its writer */
    keep = tr_host->tls_get(st->tls_key);
    if (keep != NULL)
        tr_host->tls_set(st->tls_key, NULL);
    tr_tb_cached = NULL;   /* fork_child runs on the forking thread, the child's only one */
    /* the parent's threads are gone here: their kernel-name caches too */
    for (tr_tbuf *tb = atomic_load(&st->bufs.head); tb != NULL; tb = tb->next_tb) {
        free(tb->prod);
        tb->prod = NULL;
        atomic_store_explicit(&tb->nopen, 0, memory_order_relaxed);   /* their calls ended with them */
    }
    tw_fork_child(&st->w, NULL);
    tr_kernel_names_fork_child();
    tr_signals_fork_child();
    tr_capture_fork_child(st);
    tr_nvtx_fork_child();
    tr_unhook_fork_child(st);
    tr_cupti_fork_child();
    atomic_store(&st->unhooked, 0);   /* the child's file counts the child's own (tw_fork_child: the writer's) */
    pthread_mutex_init(&tr_output_lock, NULL);
    st->w.pid = (int)getpid();
    st->w.start = tw_process_start();
    file = tr_host->opt_string(self, "file");
    free(st->w.path);
    st->w.path = tr_path(file, st->w.pid, 1, NULL, 0);
    atomic_store(&st->output, st->w.path != NULL ? 0 : 2);
}

static const cushim_option tr_options[] = {
    {"file", CUSHIM_OPT_STRING, "", "the trace file (default cushim-<pid>.json; .json.gz: gzip; %p: the pid, %h: the host, %q{VAR}: $VAR); a "
                                    "forked child writes FILE with its pid before .json"},
    {"filter", CUSHIM_OPT_STRING, "all", "the APIs recorded (a selector: names, base names, globs, cat:, lib:)"},
    {"buffer", CUSHIM_OPT_BYTES, "64MiB", "memory for records not yet written; beyond it events are dropped "
                                          "and counted"},
    {"render", CUSHIM_OPT_STRING, "background", "when records become JSON: 'background' (a writer thread, while "
                                                "the program runs) or 'exit' (at exit, fork or a fatal signal, or "
                                                "once half of 'buffer' is in use: the writer off the cores)"},
    {"summary", CUSHIM_OPT_BOOL, "true", "print the cuda_api_sum table at exit"},
    {"summary_file", CUSHIM_OPT_STRING, "", "append the table to this file instead of stderr"},
    {"summary_exact", CUSHIM_OPT_BYTES, "32MiB", "memory for the durations behind exact medians in the table (each "
                                                   "of the call and kernel tables, 8 bytes a call); beyond it an "
                                                   "API's median comes from a histogram, within 0.4%"},
    {"unhook", CUSHIM_OPT_BOOL, "false", "while paused (paused, toggle, capture, delay), remove the call hooks: a "
                                         "paused call costs what a call with no hook costs; recording resumes a "
                                         "moment after the toggle signal (a thread adds the hooks again), at a "
                                         "capture range's start at once"},
    {"kernel_names", CUSHIM_OPT_BOOL, "true", "name the kernel of each launch (the driver's cuFuncGetName)"},
    {"gpu", CUSHIM_OPT_BOOL, "false", "GPU kernels, copies and sets through CUPTI, linked to their launches"},
    {"gpu_detach", CUSHIM_OPT_DOUBLE, "1", "with gpu and unhook: this many seconds into a pause CUPTI is detached "
                                          "(at the next launch; a paused launch then costs nothing more) and on "
                                          "resuming attached again; 0 keeps it attached"},
    {"cupti", CUSHIM_OPT_STRING, "", "the libcupti.so to load (default: $CUDA_HOME, /usr/local/cuda)"},
    {"signals", CUSHIM_OPT_BOOL, "true", "finish the file when a fatal signal ends the process"},
    {"paused", CUSHIM_OPT_BOOL, "false", "start with recording paused (see toggle)"},
    {"toggle", CUSHIM_OPT_STRING, "", "a signal (USR1, USR2, RTMIN+N) whose every delivery pauses or resumes "
                                      "recording calls (a capture range: kill -USR2 <pid>)"},
    {"delay", CUSHIM_OPT_DOUBLE, "0", "start recording this many seconds after the program starts (as nsys --delay)"},
    {"duration", CUSHIM_OPT_DOUBLE, "0", "record for this many seconds (after 'delay'), then no more (as nsys "
                                         "--duration; the program runs on)"},
    {"capture", CUSHIM_OPT_STRING, "", "record only inside the program's ranges: 'cudaProfilerApi' (from each "
                                       "cudaProfilerStart to the next cudaProfilerStop) or 'nvtx:MESSAGE' (while an "
                                       "NVTX range with that message is open)"},
    {"capture_end", CUSHIM_OPT_STRING, "repeat", "with capture: 'repeat' (every range), 'stop' (the first only), "
                                               "'repeat:N' (the first N); then no more (as nsys --capture-range-end)"},
    {NULL, 0, NULL, NULL},
};

static const cushim_plugin_def tr_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "trace",
    .version = "0.1.0",
    .description = "every CUDA call with its arguments in a Perfetto/Chrome trace, and Nsight's API summary",
    .options = tr_options,
    .init = tr_init,
    .flush = tr_flush,
    .fork_child = tr_fork_child,
};

CUSHIM_PLUGIN(tr_def)
