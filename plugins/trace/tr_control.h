/*
 * tr_control.h - whether calls are recorded now (tr_control.c: the control part):
 * paused, the toggle signal, capture ranges, the delay/duration timer, and with
 * unhook=1 the call hooks removed while paused - one state, 'paused', and the
 * hooks that follow it.
 */
#ifndef TR_CONTROL_H
#define TR_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "tr_base.h"

/* The call hooks follow 'paused' (removed while paused, added again when not): unhook=1, from the toggle's
   watcher thread or a capture range's start or stop. Not from a signal handler. */
void tr_hooks_follow(tr_state *st);

/* unhook=1: the watcher thread, its wake-up from the toggle handler (async-signal-safe), fork, exit. */
int tr_unhook_start(tr_state *st);
void tr_unhook_wake(void);
void tr_unhook_fork_child(tr_state *st);
void tr_unhook_stop(void);
/* toggle=SIG: each delivery of SIG pauses or resumes recording. 0, or -1 with 'why' set. */
int tr_toggle_install(const char *name, char *why, size_t cap);
/* Capture ranges. parse: 0, or -1 with 'why' set; start: hooks cuInit (cuda_used) and the
   profiler API (capture=cudaProfilerApi), 0 or -1 (said). The NVTX entry points: a range pushed at 'level'
   (before the push), popped back to 'level' (after the pop), started and ended by id. */
int tr_capture_parse(tr_state *st, const char *spec, char *why, size_t cap);
/* capture_end= (after tr_capture_parse): 'repeat' (the default), 'stop', 'repeat:N'. 0, or -1 with 'why' set. */
int tr_capture_end_parse(tr_state *st, const char *spec, char *why, size_t cap);
int tr_capture_start(tr_state *st);
void tr_capture_nvtx_push(tr_state *st, const char *msg, uint32_t dom, const char *dom_name, int level);
void tr_capture_nvtx_pop(tr_state *st, uint32_t dom, int level);
void tr_capture_nvtx_start(tr_state *st, const char *msg, uint32_t dom, const char *dom_name, uint64_t id);
void tr_capture_nvtx_end(tr_state *st, uint64_t id);
/* delay=, duration= (seconds; 0: none): parse (the schedule from now; 0, or -1 with 'why' set: a bad value,
   capture= given too), start (once 'paused' is set: the timer thread at the first cuInit; a failure to start it
   is said). stop: at exit. fork_child: the locks, and the timer again for what is left of it. */
int tr_timer_parse(tr_state *st, double delay_s, double duration_s, char *why, size_t cap);
void tr_timer_start(tr_state *st);
void tr_timer_stop(void);
/* The whole delay/duration window had passed when the process first called cuInit (said at exit). */
int tr_timer_missed(void);
void tr_capture_fork_child(tr_state *st);

extern const tr_part tr_part_control;

#endif /* TR_CONTROL_H */
