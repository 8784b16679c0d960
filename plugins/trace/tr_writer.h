/*
 * tr_writer.h - the trace plugin's background writer: drains the per-thread
 * buffers, pairs each call's enter and exit records, renders Chrome trace-event
 * JSON (plain or gzip) and keeps the summary series. One writer per process;
 * its thread blocks every signal. All rendering and I/O happen here, never on
 * an application thread.
 */
#ifndef TR_WRITER_H
#define TR_WRITER_H

#include <stdint.h>

#include "tr_wstate.h"

/* Opens the file and writes the header. 0, or -1 with errno. */
int tw_open(tr_writer *w);
/* The calling process's start time in clock ticks since boot (/proc/self/stat's starttime; 0 if unknown). */
unsigned long long tw_process_start(void);
/* Starts the background thread (0 or an errno). */
int tw_start(tr_writer *w);
/* The plugin's threads' start-ups, kept apart from fork() (tw_start says why): tw_thread_starting before a thread
   of the plugin is created (tw_thread_start_failed when it was not), tw_thread_running first thing on the new thread
   (sets *flag), tw_wait_started on its creator until then - however long that takes under load; a fork's prepare
   handler waits for every start-up under way. */
void tw_thread_starting(void);
void tw_thread_start_failed(void);
void tw_thread_running(_Atomic int *flag);
void tw_wait_started(_Atomic int *flag);
/* Work on a thread of the plugin's that allocates while the program may fork (gpu_detach's CUPTI flush): between
   these, under the writer's pass lock, no fork lands (tw_start says why). Nothing that waits for the writer. */
void tw_nofork_begin(void);
void tw_nofork_end(void);
/* CLOCK_MONOTONIC in ns (the writer's busy time, the capture timer's deadlines). */
uint64_t tw_mono_ns(void);
/* Stops the thread, drains, writes the end of the file, the summary. Idempotent. */
void tw_finish(tr_writer *w);
/* From a signal handler: asks the thread to finish and waits up to 'ms'. */
int tw_finish_async(tr_writer *w, unsigned ms);
/* One pass over every thread's buffer (the writer thread, or when it is stopped). */
void tw_drain_all(tr_writer *w);
/* The same for the buffers of threads that ended only (render=exit: their buffers are reused). */
void tw_drain_exited(tr_writer *w);
/* Child of fork: forget the parent's file and state (single-threaded). */
void tw_fork_child(tr_writer *w, tr_tbuf *keep);
/* Frees what the writer holds (after tw_finish). */
void tw_free(tr_writer *w);

/* A CALL record as the ENTER (in w->call_buf, valid until the next call) and the EXIT it replaces: 0, or -1
   (malformed, no memory). */
int tw_call_split(tr_writer *w, const tr_call *c, tw_call_exit *ex);

/* The thread's fast-path calls in flight that look whole, innermost last (at most TR_OPEN_MAX); *beyond: those
   only counted. */
uint32_t tw_open_read(tr_writer *w, tr_tbuf *tb, tr_open_copy *out, uint64_t *beyond);

#endif /* TR_WRITER_H */
