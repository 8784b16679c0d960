/*
 * tr_signal.c - finish the trace file before the process dies of a catchable
 * fatal signal. The handlers and their chaining to the program's dispositions
 * are plugins/common/fatal.c's: for a fault the file is finished first; for the
 * others the previous handler runs first, and the file is finished only when the
 * default action (death) is what remains. Finishing only asks the writer thread
 * and waits (atomics and nanosleep); then the signal takes its old course.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>

#include "fatal.h"
#include "tr_signal.h"

static _Atomic int tr_sig_done;

/* Once per process (tr_sig_done): a fault finishes the file before the program's handler runs, and any
   fatal signal where death is what remains. */
static void tr_finish_for_signal(int sig, const siginfo_t *si)
{
    int expect = 0;
    (void)si;
    if (tr_st != NULL && atomic_load(&tr_st->output) == 1 && atomic_compare_exchange_strong(&tr_sig_done, &expect, 1)) {
        atomic_store(&tr_st->w.end_signal, sig);   /* the file says so (otherData.end_signal) */
        tw_finish_async(&tr_st->w, 3000);
    }
}

void tr_signals_install(void)
{
    fatal_install(tr_finish_for_signal, tr_finish_for_signal);
}

void tr_signals_fork_child(void)
{
    atomic_store(&tr_sig_done, 0);
}

static int tr_signals_start(tr_state *st)
{
    if (tr_host->opt_bool(st->self, "signals"))
        tr_signals_install();
    return 0;
}

static void tr_signals_fork(tr_state *st)
{
    (void)st;
    tr_signals_fork_child();
}

const tr_part tr_part_signals = {
    .name = "signals",
    .start = tr_signals_start,
    .fork_child = tr_signals_fork,
};
