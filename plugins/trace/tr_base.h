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
    _Alignas(TR_CACHELINE) tr_bufs bufs;
    _Alignas(TR_CACHELINE) tr_writer w;
    _Alignas(TR_CACHELINE) uint64_t group, query_group, unload_group;
    uint32_t api_funcgetname, api_kernelgetname, api_getfuncbysymbol, api_getprocaddress;
    /* cuFuncGetName / cuKernelGetName from the driver's cuGetProcAddress when the tree has no such API (an 11.8 or
       early 12.x build on a newer driver): resolved at the first name query (tr_kname.c); 1 = none */
    _Atomic(void *) drv_funcgetname, drv_kernelgetname;
    int kernel_names;
    int gpu;                      /* GPU tracing asked for                                */
    double gpu_detach;            /* unhook: CUPTI detached this many seconds into a pause (0: never; tr_cupti.c) */
    char *cupti_path;
    _Atomic int output;           /* 0: no file yet (made at the first recorded call), 1: open, 2: failed */
    void (*output_opened)(struct tr_state *st);   /* the parts' 'opened' steps (trace.c), as the output opens */
    _Atomic uint64_t nvtx_ids;
    _Atomic int paused;           /* 1: calls are not recorded (options paused, toggle) */
    /* unhook=1: while paused the call hooks are removed (a paused call costs nothing), by a watcher thread that
       the toggle signal wakes (tr_control.c); the two groups' selectors are kept to add them again */
    int unhook;
    /* 1: the core reads the exit clock (CUSHIM_HOOK_EXIT_TIME), in line in its post path, instead of the hooks
       calling host->now_ns(): when a paused plugin has no hooks to pay it (unhook) or is never paused (neither
       paused nor toggle given). A plugin that may be paused with its hooks in reads it itself, only while
       recording: one clock read a paused call, not two. */
    int exit_by_core;
    char *sel[2];
    _Atomic int hooked;
    _Atomic uint64_t unhooked;    /* times the hooks were removed */
    int follow_warned;            /* the hooks could not be added again: said once */
    /* capture=: recording follows the program's own range marks (tr_control.c) */
    int capture;                  /* TR_CAPTURE_*                                                     */
    int capture_paused_start;     /* the ranges start paused (capture=, delay=)                       */
    char capture_desc[96];        /* what the summary and the file call the ranges                    */
    char *capture_msg;            /* nvtx:MESSAGE[@DOMAIN]'s message (its '\@' unescaped), a copy         */
    char *capture_dom;            /* its domain: NULL the default domain, "*" any                       */
    uint32_t capture_ids[4];      /* cuProfilerStart, cuProfilerStop, cudaProfilerStart, cudaProfilerStop */
    uint64_t capture_group, cuinit_group;
    _Atomic int cuda_used;        /* a capture range is asked for and the process called cuInit          */
    _Atomic int capture_open;     /* nvtx: capture ranges open now                                    */
    _Atomic uint64_t captures;    /* ranges that resumed recording                                    */
    _Atomic uint64_t capture_lost;   /* nvtx: started ranges past the 64 kept open at once             */
    uint32_t capture_max;         /* capture_end=stop (1), repeat:N (N): ranges recorded; 0: every one */
    _Atomic int capture_done;     /* capture_max ranges have ended: no more                           */
} tr_state;

#define TR_CAPTURE_NONE 0
#define TR_CAPTURE_PROFILER 1     /* capture=cudaProfilerApi */
#define TR_CAPTURE_NVTX 2         /* capture=nvtx:MESSAGE    */
#define TR_CAPTURE_TIME 3         /* delay=, duration=       */

extern const cushim_host *tr_host;
extern tr_state *tr_st;

/* A helper thread of the plugin's (the toggle's watcher, the timer, gpu_detach's flusher): every signal blocked in
   it, detached; returns once it runs, so that no fork comes during its start-up. It says so itself, before FN: FN
   may take a lock its starter holds. H: the helper's start (static storage: the thread reads it). 0 or -1. */
typedef struct tr_helper {
    void *(*fn)(void *);
    void *arg;
    _Atomic int running;
} tr_helper;
int tr_helper_thread(tr_helper *h, void *(*fn)(void *), void *arg);
/* a condition variable whose timed waits take CLOCK_MONOTONIC times (tw_mono_ns), for the helper threads */
void tr_cond_init_monotonic(pthread_cond_t *c);
/* A part of the plugin (recording, output, hooks, control, GPU, signals, NVTX: docs/plugins/trace.md "Parts and
   layers"), as trace.c's table lists them; a NULL entry is a step the part does not have. The plugin's init
   walks 'setup' in table order (options read and checked, nothing started: -1 with 'why' set ends the init and
   frees the state), then 'start' (hooks, threads, handlers: -1 ends the init, each started part's 'undo' is
   called in reverse order; the part has said what failed); 'opened' runs when the output opens (the first
   recorded call; tr_output.c), 'flush' at exit in reverse table order, 'fork_child' in a forked child in
   table order. */
typedef struct tr_part {
    const char *name;
    int (*setup)(tr_state *st, char *why, size_t cap);
    int (*start)(tr_state *st);
    void (*undo)(tr_state *st);
    void (*opened)(tr_state *st);
    void (*flush)(tr_state *st);
    void (*fork_child)(tr_state *st);
} tr_part;

#endif /* TR_BASE_H */
