/*
 * fatal.c - the handlers of the catchable fatal signals, chained to the program's (fatal.h). What the plugin
 * does is its own: 'before' and 'at_death', given at install.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "fatal.h"

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define FATAL_NSIGS (sizeof fatal_sigs / sizeof fatal_sigs[0])

static struct {
    int installed;
    fatal_fn before, at_death;
    struct sigaction old[FATAL_NSIGS];   /* the dispositions the handlers chain to */
} fatal_st;

static int fatal_index(int sig)
{
    for (unsigned i = 0; i < FATAL_NSIGS; i++)
        if (fatal_sigs[i] == sig)
            return (int)i;
    return -1;
}

int fatal_is_handled(int sig)
{
    return fatal_index(sig) >= 0;
}

static void fatal_on_signal(int sig, siginfo_t *si, void *uc)
{
    int i = fatal_index(sig), saved = errno;
    const struct sigaction *old;
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
    if (i < 0)
        return;
    old = &fatal_st.old[i];
    if (fault && fatal_st.before != NULL)   /* the process is likely about to die: the plugin's work first */
        fatal_st.before(sig, si);
    /* the program's own handler (a runtime that recovers from its faults, a crash reporter) */
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
    /* the default action: death. The plugin's last words, then the signal takes its course */
    fatal_st.at_death(sig, si);
    sigaction(sig, old, NULL);
    /* sent (kill, raise: si_code <= 0) or not a fault: again, with the old disposition; a real fault returns to
       the faulting instruction, which faults again and ends the process */
    if (!fault || sig == SIGABRT || si == NULL || si->si_code <= 0)
        raise(sig);
    errno = saved;
}

void fatal_install(fatal_fn before, fatal_fn at_death)
{
    if (fatal_st.installed || at_death == NULL)
        return;
    fatal_st.installed = 1;
    fatal_st.before = before;
    fatal_st.at_death = at_death;
    for (unsigned i = 0; i < FATAL_NSIGS; i++) {
        struct sigaction sa;
        if (sigaction(fatal_sigs[i], NULL, &fatal_st.old[i]) != 0)
            continue;
        if (!(fatal_st.old[i].sa_flags & SA_SIGINFO) && fatal_st.old[i].sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = fatal_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | (fatal_st.old[i].sa_flags & SA_ONSTACK);
        sigfillset(&sa.sa_mask);
        sigaction(fatal_sigs[i], &sa, NULL);
    }
}
