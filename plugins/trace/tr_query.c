/*
 * tr_query.c - the exit hook of read-only queries on the fast path (tr_query.h):
 * one CALL record from the call frame alone. bench/cpu/trace_ablate.c is this
 * file with parts left out (bench/cpu/ablate.sh); tests/unit/trace_ablate_same.py
 * checks that it stays this hook everywhere else.
 */
#include <stdint.h>

#include "tr_plan.h"
#include "tr_query.h"
#include "tr_record.h"

const int tr_query_core_clock = 1;

/* tr_post_query's every case, the long way: it hands over whatever its usual case does not cover, before it
   has changed anything (the thread's first record, a signal handler's record while its thread writes one, an
   exit time the core did not read, a full chunk, a call a plugin skipped, a duration past 32 bits). */
static __attribute__((noinline)) void tr_query_long(cushim_call *call, tr_state *st)
{
    tr_tbuf *tb = tr_tb_cached;
    const tr_plan *pl;
    unsigned char *p;
    uint64_t t;
    if (tb == NULL && (tb = tr_thread_buf()) == NULL)
        return;
    if (tb->hold || call->t_enter_ns == 0) {   /* tr_pre_enter says which holds */
        tr_buf_interrupted(&st->bufs, tb);
        return;
    }
    t = call->t_exit_ns;   /* CUSHIM_HOOK_EXIT_TIME: the core's (exit_by_core: the default) or another hook's */
    if (t == 0)
        t = tr_host->now_ns();
    pl = st->plans[call->api_id];
    if ((p = tr_buf_reserve(&st->bufs, tb, pl->call_max, tb->open * TR_EXIT_MIN)) == NULL) {
        atomic_fetch_add_explicit(&st->bufs.dropped, 1, memory_order_relaxed);
        return;
    }
    tr_buf_commit(tb, tr_query_write(p, pl, call, call->t_enter_ns, t));
}

/* The exit of a read-only query on the fast path (pl->post_only), hooked without a pre hook: one CALL record
   from the call frame alone (its seq, parent, depth and entry time; CUSHIM_HOOK_TIME: the host's clock, which
   the core reads before the call - a post hook alone has no entry of its own to read the TSC at). Such a call is never
   on the open-call stack: one in flight when the file is finished is not written (a query does not wait).
   Starts a cache line, and its usual case runs straight down and calls nothing (tr_query_long takes the rest,
   by a tail jump): a leaf saves no register (six pushes and pops, 14 instructions a call, when a call sat on
   its path). Each code line it runs costs a recorded call ~2-3 ns in a real program (docs/benchmarks.md "The
   floor of any recorder"). */
__attribute__((aligned(64))) void tr_post_query(cushim_call *call, void *user, uint64_t *slot)
{
    tr_state *st = user;
    tr_tbuf *tb = tr_tb_cached;
    const tr_plan *pl = st->plans[call->api_id];
    unsigned char *p;
    uint64_t t0 = call->t_enter_ns, t = call->t_exit_ns;
    (void)slot;
    if (atomic_load_explicit(&st->paused, memory_order_relaxed))
        return;
    if (__builtin_expect(tb == NULL || tb->hold || t0 == 0 || t == 0 || !tr_query_usual(pl, call, t0, t), 0)) {
        tr_query_long(call, st);
        return;
    }
    if (__builtin_expect((p = tr_buf_reserve_usual(tb, pl->call_max, tb->open * TR_EXIT_MIN)) == NULL, 0)) {
        tr_query_long(call, st);
        return;
    }
    tr_buf_commit(tb, tr_query_put(p, pl, call, t0, t));
}
