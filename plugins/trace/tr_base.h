/*
 * tr_base.h - what every part of the trace plugin shares (tr_base.c): the
 * state (one tr_state, reached through tr_st), the host table, the helper
 * threads, and the table of parts that the plugin's init, flush and fork walk
 * (trace.c). Each part's functions are declared in its own header; this one
 * knows none of them.
 */
#ifndef TR_BASE_H
#define TR_BASE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cushim/cushim.h>

#include "tr_buf.h"
#include "tr_rec.h"
#include "tr_writer.h"

typedef struct tr_plan tr_plan;

/* Allocated on a cache-line boundary (tr_init): the first line holds what every hook reads and nobody writes
   after start; the buffers' counters and the writer, which the writer thread updates, have lines of their own. */
typedef struct tr_state {
    cushim_plugin *self;
    uint32_t id_limit;
    tr_plan **plans;              /* by API id: what to capture; NULL = not selected */
    uint32_t tls_key;
    int tsc;                      /* the call hooks' clock is the TSC, read in the hooks (clock=; tr_clock.h) */
    _Alignas(TR_CACHELINE) tr_bufs bufs;
    _Alignas(TR_CACHELINE) tr_writer w;
    _Alignas(TR_CACHELINE) int kernel_names;
    int gpu;                      /* GPU tracing asked for                                */
    _Atomic int output;           /* 0: no file yet (made at the first recorded call), 1: open, 2: failed */
    void (*output_opened)(struct tr_state *st);   /* the parts' 'opened' steps (trace.c), as the output opens */
    _Atomic int paused;           /* 1: calls are not recorded (options paused, toggle) */
    /* unhook=1: while paused the call hooks are removed (a paused call costs nothing), by a watcher thread that
       the toggle signal wakes (tr_control.c) */
    int unhook;
    _Atomic int hooked;
    int capture;                  /* capture=, delay=: TR_CAPTURE_* (the control part's, tr_control.c)  */
} tr_state;

#define TR_CAPTURE_NONE 0
#define TR_CAPTURE_PROFILER 1     /* capture=cudaProfilerApi */
#define TR_CAPTURE_NVTX 2         /* capture=nvtx:MESSAGE    */
#define TR_CAPTURE_TIME 3         /* delay=, duration=       */

/* Hidden in the declaration too, so that the hooks reach them directly, not through the GOT (one load, as when
   they were one file's). */
#define TR_HIDDEN __attribute__((visibility("hidden")))
extern TR_HIDDEN const cushim_host *tr_host;
extern TR_HIDDEN tr_state *tr_st;

/* A helper thread of the plugin's (the toggle's watcher, the timer, gpu_detach's flusher): every signal blocked in
   it, detached; returns once it runs, so that no fork comes during its start-up. It says so itself, before FN: FN
   may take a lock its starter holds. H: the helper's start (static storage: the thread reads it). 0 or -1.
   tr_helper_thread_init: INIT(ARG) first, inside the start-up (its allocations kept apart from a fork as the
   runtime's are); it must take no lock the starter may hold. */
typedef struct tr_helper {
    void *(*fn)(void *);
    void (*init)(void *);
    void *arg;
    _Atomic int running;
} tr_helper;
int tr_helper_thread(tr_helper *h, void *(*fn)(void *), void *arg);
int tr_helper_thread_init(tr_helper *h, void (*init)(void *), void *(*fn)(void *), void *arg);
/* a condition variable whose timed waits take CLOCK_MONOTONIC times (tw_mono_ns), for the helper threads */
void tr_cond_init_monotonic(pthread_cond_t *c);
/* A part of the plugin (recording, output, hooks, control, GPU, signals, NVTX: docs/plugins/trace.md "Parts and
   layers"), as trace.c's table lists them; a NULL entry is a step the part does not have. The plugin's init
   walks 'setup' in table order (options read and checked, nothing started: -1 with 'why' set ends the init and
   frees the state), then 'start' (hooks, threads, handlers: -1 ends the init, each started part's 'undo' is
   called in reverse order; the part has said what failed); 'opened' runs when the output opens (the first
   recorded call; tr_output.c), 'flush' at exit in reverse table order, 'fork_child' in a forked child in
   table order. A part's own state is its file's (static); tr_state holds what parts share. */
typedef struct tr_part {
    const char *name;
    int (*setup)(tr_state *st, char *why, size_t cap);
    int (*start)(tr_state *st);
    void (*undo)(tr_state *st);
    void (*opened)(tr_state *st);
    void (*flush)(tr_state *st);
    void (*fork_child)(tr_state *st);
    void (*fini)(tr_state *st);   /* frees what setup allocated (an init that fails: the state goes) */
} tr_part;

#endif /* TR_BASE_H */
