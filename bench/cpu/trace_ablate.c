/*
 * trace_ablate.c - the trace plugin's query hook (plugins/trace/tr_query.c) with one part of recording left
 * out, or 4 KiB of code added, to measure what each part and each code line costs: bench/cpu/ablate.sh builds
 * the plugin with this file in tr_query.c's place (CMake -DCUSHIM_TRACE_ABLATE=N, plugins/trace/CMakeLists.txt).
 *   TR_ABLATE=1 hookonly: the hook runs and returns at once
 *   TR_ABLATE=2 clockonly: it reads the exit clock and writes nothing
 *   TR_ABLATE=3 noclock: it writes the record without reading the exit clock (every duration 1 ns)
 *   TR_ABLATE=4 pad64: it runs 4 KiB of 8-byte no-ops first (64 more code lines a call, 512 instructions)
 * 2 and 3 have the hook read the exit clock itself (tr_query_core_clock 0), as the plugin did before the core
 * read it for an unpaused plugin. Everywhere else this is tr_query.c's hook, line for line: the test
 * trace_ablate_same (tests/unit/trace_ablate_same.py) fails when the two part.
 */
#include <stdint.h>

#include "tr_plan.h"
#include "tr_query.h"
#include "tr_record.h"

#ifndef TR_ABLATE
#error "trace_ablate.c is built with TR_ABLATE=1..4 (bench/cpu/ablate.sh)"
#endif

const int tr_query_core_clock = !(TR_ABLATE == 2 || TR_ABLATE == 3);

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
#if TR_ABLATE == 1   /* bench/cpu/ablate.sh "hookonly": the hook runs and returns (unconditionally: a test of st
                        would let the compiler assume st == NULL below, and gcc 12 warns of a NULL region there) */
    return;
#endif
    if (atomic_load_explicit(&st->paused, memory_order_relaxed))
        return;
#if TR_ABLATE == 4   /* "pad64": 4 KiB of 8-byte no-ops run by every recorded query - 64 more code lines a call
                        (and 512 instructions): what a line of code costs a call, hot (cold.sh) and inside a
                        program (tests/gpu traceab with TRACE_AB_BASE) */
    __asm__ volatile(".rept 512\n\t.byte 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00\n\t.endr" ::: "memory");
#endif
#if TR_ABLATE == 3   /* bench/cpu/ablate.sh "noclock": no exit clock read (every duration 1 ns) */
    t = t0 + 1;
#elif TR_ABLATE == 2   /* "clockonly": the exit clock read (the core reads none: tr_query_core_clock 0), nothing
                          written */
    if (tr_host->now_ns() != 0)
        return;
#endif
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
