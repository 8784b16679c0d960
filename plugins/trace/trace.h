/*
 * trace.h - what the trace plugin's parts share: the state, and the record
 * entry points the NVTX and CUPTI parts use (trace.c).
 */
#ifndef TRACE_H
#define TRACE_H

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
    _Atomic uint64_t nvtx_ids;
    _Atomic int paused;           /* 1: calls are not recorded (options paused, toggle) */
    /* unhook=1: while paused the call hooks are removed (a paused call costs nothing), by a watcher thread that
       the toggle signal wakes (tr_unhook.c); the two groups' selectors are kept to add them again */
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
    /* capture=: recording follows the program's own range marks (tr_capture.c) */
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

/* A post hook alone, with 'st' as its user data, on the APIs 'select' matches: 0, or -1. */
int tr_hooks_add_post(tr_state *st, const char *select, cushim_post_fn post, uint64_t *group);
/* The two call-hook groups (tr_register's selectors in st->sel): added, removed. 0 or -1. */
int tr_hooks_add(tr_state *st);
void tr_hooks_remove(tr_state *st);
/* unhook=1 (trace.c): the watcher thread, its wake-up from the toggle handler (async-signal-safe), fork, exit. */
int tr_unhook_start(tr_state *st);
void tr_unhook_wake(void);
void tr_unhook_fork_child(tr_state *st);
void tr_unhook_stop(void);
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
/* The call hooks follow 'paused' (removed while paused, added again when not): unhook=1, from the toggle's
   watcher thread or a capture range's start or stop. Not from a signal handler. */
void tr_hooks_follow(tr_state *st);

/* Capture ranges (tr_capture.c). parse: 0, or -1 with 'why' set; start: hooks cuInit (cuda_used) and the
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
/* tr_nvtx.c: in a forked child, before it goes on. */
void tr_nvtx_fork_child(void);

extern const cushim_host *tr_host;
extern tr_state *tr_st;
/* The calling thread's buffer once tr_thread_buf has found it (trace.c; the hooks read it first). */
extern __thread tr_tbuf *tr_tb_cached;
/* The calling thread's CUDA calls are the tracer's own (CUPTI's): never recorded (1), or again (0). */
int tr_thread_quiet(int quiet);   /* the thread's calls not recorded (1) or recorded (0); returns the previous */

/* The calling thread's buffer (created on first use); NULL when out of memory or finished. */
tr_tbuf *tr_thread_buf(void);
/* One standalone record (NVTX, GPU activity, correlation): 'extra' bytes after the
   header, then 'text' (may be NULL) as blob 0. Dropped and counted when there is no room. */
void tr_record(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
               const char *text, uint32_t text_len);
/* The same with a second text, 'text2' (NULL or empty: none), as blob 1 (an NVTX event's domain name). */
void tr_record2(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
                const char *text, uint32_t text_len, const char *text2, uint32_t text2_len);

/* Launch kinds of a plan: which parameter names the kernel. */
#define TR_LAUNCH_FUNC 1        /* a CUfunction parameter                 */
#define TR_LAUNCH_KERNEL 2      /* a CUkernel parameter                   */
#define TR_LAUNCH_STUB 3        /* a runtime host stub (const void *func) */

/* Kernel names (tr_kname.c): a per-thread cache (tb->prod, TR_NAME_CACHE entries) of names by function,
   valid while their generation is tr_names_gen's. */
#define TR_NAME_CACHE 256u    /* per-thread cache entries (a training step launches a few hundred kernels) */
typedef struct tr_name_entry {
    const void *key;
    uint64_t gen;
    const char *name;
} tr_name_entry;
extern _Atomic uint64_t tr_names_gen;   /* bumped when modules are unloaded */

static inline uint32_t tr_ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32);
}

/* The interned name of the function 'key', or NULL: the thread's cache, else the process-wide map, else the
   driver. */
const char *tr_kernel_name_slow(tr_state *st, tr_tbuf *tb, int launch, const void *key);
/* The same, with a hit in the thread's cache inline (no call, no saved registers: every launch but a
   function's first on the thread). */
static inline const char *tr_kernel_name(tr_state *st, tr_tbuf *tb, int launch, const void *key)
{
    const tr_name_entry *cache = tb->prod, *e;
    if (cache != NULL && key != NULL) {
        e = &cache[tr_ptr_hash(key) & (TR_NAME_CACHE - 1)];
        if (e->key == key && e->gen == atomic_load_explicit(&tr_names_gen, memory_order_acquire))
            return e->name;
    }
    return tr_kernel_name_slow(st, tb, launch, key);
}
/* A post hook on module/library unloads: every cached name is asked again. */
void tr_kernel_names_unloaded(cushim_call *call, void *user, uint64_t *slot);
void tr_kernel_names_fork_child(void);

/* Signals (tr_signal.c) */
void tr_signals_install(void);
/* toggle=SIG: each delivery of SIG pauses or resumes recording. 0, or -1 with 'why' set. */
int tr_toggle_install(const char *name, char *why, size_t cap);
void tr_signals_fork_child(void);

/* NVTX injection (tr_nvtx.c): started by the launcher's NVTX_INJECTION64_PATH. */
/* CUPTI (tr_cupti.c) */
int tr_cupti_start(tr_state *st, const char *path, char *err, size_t errlen);
void tr_cupti_flush(void);
void tr_cupti_push(uint64_t seq);
void tr_cupti_pop(void);
/* unhook: called by tr_hooks_follow (its lock held) with the state the hooks follow: paused detaches CUPTI
   gpu_detach seconds later (at a launch's exit callback), a resume attaches it again before the hooks return */
void tr_cupti_follow(int paused);
void tr_cupti_fork_child(void);
#ifndef TR_GPU_AB
#define TR_GPU_AB 0   /* 1: the gpu-ab build (tr_cupti.c), for the GPU check tracegpuab; never a normal build */
#endif
#if TR_GPU_AB
void tr_cupti_ab_follow(int paused);
#endif

#endif /* TRACE_H */
