/*
 * tr_signal.h - the trace file finished when a catchable fatal signal ends the
 * process (tr_signal.c: the signals part).
 */
#ifndef TR_SIGNAL_H
#define TR_SIGNAL_H

#include "tr_base.h"

/* The handlers, over the previous dispositions (signals=true); a forked child's state. */
void tr_signals_install(void);
void tr_signals_fork_child(void);

extern const tr_part tr_part_signals;

#endif /* TR_SIGNAL_H */
