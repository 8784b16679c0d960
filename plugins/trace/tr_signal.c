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
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cushim/cushim_io.h"
#include "trace.h"

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

/* ---- toggle=SIG: pause and resume recording (a capture range) ---- */

static int tr_toggle_sig;

static void tr_on_toggle(int sig)
{
    (void)sig;
    if (tr_st != NULL) {
        atomic_fetch_xor_explicit(&tr_st->paused, 1, memory_order_relaxed);
        tr_unhook_wake();
    }
}

/* "USR1", "SIGUSR2", "RTMIN+3", "SIGRTMIN", a number: the signal, 0 when not one of those. */
static int tr_toggle_parse(const char *n)
{
    char *end;
    long v;
    if (strncmp(n, "SIG", 3) == 0)
        n += 3;
    if (strcmp(n, "USR1") == 0)
        return SIGUSR1;
    if (strcmp(n, "USR2") == 0)
        return SIGUSR2;
    if (strncmp(n, "RTMIN", 5) == 0) {
        v = n[5] == '\0' ? 0 : n[5] == '+' ? strtol(n + 6, &end, 10) : -1;
        if (n[5] == '+' && (*end != '\0' || end == n + 6))
            return 0;
        return v >= 0 && SIGRTMIN + v <= SIGRTMAX ? SIGRTMIN + (int)v : 0;
    }
    v = strtol(n, &end, 10);
    return *n != '\0' && *end == '\0' && (v == SIGUSR1 || v == SIGUSR2 || (v >= SIGRTMIN && v <= SIGRTMAX)) ? (int)v : 0;
}

int tr_toggle_install(const char *name, char *why, size_t cap)
{
    struct sigaction sa, old;
    int sig = tr_toggle_parse(name);
    if (sig == 0) {
        snprintf(why, cap, "not USR1, USR2 or RTMIN+N");
        return -1;
    }
    if (tr_toggle_sig == sig)
        return 0;
    if (sigaction(sig, NULL, &old) != 0 || (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL) ||
        ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != NULL)) {
        snprintf(why, cap, "the program already handles or ignores that signal");
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tr_on_toggle;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0) {
        snprintf(why, cap, "sigaction: %s", strerror(errno));
        return -1;
    }
    tr_toggle_sig = sig;
    return 0;
}

/* ---- unhook=1: the call hooks removed while paused ----
   Adding and removing hooks takes the host's locks and memory: not in a signal handler. The toggle handler posts
   a semaphore (async-signal-safe); this thread, its signals blocked, makes the hooks follow 'paused'. A pause
   takes effect at once (the hooks check 'paused'); the hooks come back a moment after a resume. */

static sem_t tr_unhook_sem;
static _Atomic int tr_unhook_on, tr_unhook_quit;
static tr_helper tr_unhook_helper;

void tr_unhook_wake(void)
{
    if (atomic_load_explicit(&tr_unhook_on, memory_order_acquire))
        sem_post(&tr_unhook_sem);
}

static void *tr_unhook_main(void *arg)
{
    tr_state *st = arg;
    for (;;) {
        while (sem_wait(&tr_unhook_sem) != 0 && errno == EINTR)
            ;
        if (atomic_load(&tr_unhook_quit))
            return NULL;
        tr_hooks_follow(st);
    }
}

void tr_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

static void *tr_helper_main(void *p)
{
    tr_helper *h = p;
    void *(*fn)(void *) = h->fn;
    void *arg = h->arg;
    atomic_store_explicit(&h->running, 1, memory_order_release);
    return fn(arg);
}

int tr_helper_thread(tr_helper *h, void *(*fn)(void *), void *arg)
{
    pthread_t th;
    int rc;
    h->fn = fn;
    h->arg = arg;
    atomic_store(&h->running, 0);
    rc = cushim_thread_create(&th, NULL, "cushim-trhelp", tr_helper_main, h);
    if (rc != 0)
        return -1;
    pthread_detach(th);
    tw_wait_started(&h->running);   /* as the writer's: no fork during the thread's runtime start-up */
    return 0;
}

int tr_unhook_start(tr_state *st)
{
    if (sem_init(&tr_unhook_sem, 0, 0) != 0)
        return -1;
    atomic_store(&tr_unhook_quit, 0);
    if (tr_helper_thread(&tr_unhook_helper, tr_unhook_main, st) != 0)
        return -1;
    atomic_store_explicit(&tr_unhook_on, 1, memory_order_release);
    sem_post(&tr_unhook_sem);   /* the hooks follow 'paused' as it is now (a fork's child: as the parent left it) */
    return 0;
}

void tr_unhook_fork_child(tr_state *st)
{
    /* the thread did not survive the fork: another one for the child */
    if (atomic_exchange(&tr_unhook_on, 0))
        tr_unhook_start(st);
}

void tr_unhook_stop(void)
{
    if (atomic_exchange(&tr_unhook_on, 0)) {
        atomic_store(&tr_unhook_quit, 1);
        sem_post(&tr_unhook_sem);
    }
}
