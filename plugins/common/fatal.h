/*
 * fatal.h - a plugin's last words when a catchable fatal signal ends the process: the chaining of the trace's
 * signals part (plugins/trace/tr_signal.c: the file finished) and the flight recorder's (fl_event.c: the ring
 * marked). Handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP and SIGQUIT go over the
 * dispositions the process has (never over an ignored one) and chain to them: the program's own handler runs,
 * and 'at_death' is called only where the default action - death - is what remains; then the signal takes its
 * old course (sent again with the old disposition, or a real fault returns to the faulting instruction, which
 * faults again). For a fault (SEGV, BUS, FPE, ILL, ABRT), 'before' runs ahead of the program's handler, which
 * may never return. Both run in a signal handler, with every signal blocked: async-signal-safe work only.
 * The state is this module's; each plugin links its own copy (cushim_region) and so has its own handlers.
 * Host-free: tests/unit/fatal_test.c drives it.
 */
#ifndef CUSHIM_COMMON_FATAL_H
#define CUSHIM_COMMON_FATAL_H

#include <signal.h>

typedef void (*fatal_fn)(int sig, const siginfo_t *si);

/* Installs the handlers, once per process image (a forked child keeps them; a later call does nothing).
   'before' may be NULL; 'at_death' may not. */
void fatal_install(fatal_fn before, fatal_fn at_death);

/* Whether 'sig' is one of the signals handled. */
int fatal_is_handled(int sig);

#endif /* CUSHIM_COMMON_FATAL_H */
