/*
 * tr_signal.c - finish the trace file before the process dies of a catchable
 * fatal signal. Handlers for SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT are installed over the previous dispositions (not over
 * an ignored one) and chain to them: for a fault the file is finished first; for
 * the others the previous handler runs first, and the file is finished only when
 * the default action (death) is what remains. The handler only asks the writer
 * thread and waits (atomics and nanosleep); then the signal takes its old course.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_signal.h"

static const int tr_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define TR_NSIGS (sizeof tr_sigs / sizeof tr_sigs[0])
static struct sigaction tr_old[TR_NSIGS];
static _Atomic int tr_sig_done;

static int sig_index(int sig)
{
    for (unsigned i = 0; i < TR_NSIGS; i++)
        if (tr_sigs[i] == sig)
            return (int)i;
    return -1;
}

static void tr_finish_for_signal(int sig)
{
    int expect = 0;
    if (tr_st != NULL && atomic_load(&tr_st->output) == 1 && atomic_compare_exchange_strong(&tr_sig_done, &expect, 1)) {
        atomic_store(&tr_st->w.end_signal, sig);   /* the file says so (otherData.end_signal) */
        tw_finish_async(&tr_st->w, 3000);
    }
}

static void tr_on_signal(int sig, siginfo_t *si, void *uc)
{
    int i = sig_index(sig), saved = errno;
    struct sigaction *old;
    int sync = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
    if (i < 0)
        return;
    old = &tr_old[i];
    if (sync)   /* the process is about to die: write the file first */
        tr_finish_for_signal(sig);
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction != NULL) {
            errno = saved;
            old->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (old->sa_handler == SIG_IGN) {
        return;
    } else if (old->sa_handler != SIG_DFL) {
        errno = saved;
        old->sa_handler(sig);
        return;
    }
    /* the default action: end the file, then die of the signal as we would have */
    tr_finish_for_signal(sig);
    sigaction(sig, old, NULL);
    /* sent (kill, raise: si_code <= 0) or not a fault: again, now with the old disposition; a real fault
       returns to the faulting instruction, which faults again and kills the process */
    if (!sync || sig == SIGABRT || si == NULL || si->si_code <= 0)
        raise(sig);
    errno = saved;
}

void tr_signals_install(void)
{
    for (unsigned i = 0; i < TR_NSIGS; i++) {
        struct sigaction sa;
        if (sigaction(tr_sigs[i], NULL, &tr_old[i]) != 0)
            continue;
        if (!(tr_old[i].sa_flags & SA_SIGINFO) && tr_old[i].sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = tr_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | (tr_old[i].sa_flags & SA_ONSTACK);
        sigfillset(&sa.sa_mask);
        sigaction(tr_sigs[i], &sa, NULL);
    }
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
