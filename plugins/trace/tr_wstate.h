/*
 * tr_wstate.h - the trace writer's state and the types its files share (the
 * writer, tr_writer.c; the file's bytes, tr_wfile.c; NVTX and GPU events,
 * tr_wevents.c). Types only: each file's functions are in its own header.
 */
#ifndef TR_WSTATE_H
#define TR_WSTATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <cushim/cushim.h>
#include <cushim/cushim_io.h>

#include "tr_buf.h"
#include "tr_clock.h"
#include "tr_link.h"
#include "tr_pf.h"
#include "tr_render.h"
#include "tr_stats.h"

typedef struct tw_map {      /* uint64 -> uint64, open addressing, key 0 = empty */
    uint64_t *k, *v;
    uint64_t cap, n;
} tw_map;

typedef struct tr_writer {
    /* set up by the plugin */
    tr_bufs *bufs;
    tr_meta meta;
    const cushim_api_info *(*api_by_id)(uint32_t api_id);
    uint32_t flow_categories;        /* calls of these categories get a flow start (with GPU tracing) */
    int gpu;                         /* GPU tracing asked for                                          */
    const char *gpu_corr;            /* how GPU work is linked to calls ("callbacks", "activity"), or NULL */
    char *path;                      /* output file                                                    */
    int format;                      /* TW_FORMAT_JSON or TW_FORMAT_PERFETTO (the format= option, or the
                                        file's name: tr_path_format)                                    */
    char *summary_path;              /* NULL: stderr                                                   */
    cushim_stderr_id stderr_id;      /* descriptor 2 at init: the table goes there only while it is it */
    int summary;                     /* print the table at the end                                     */
    int internals;                   /* and the writer's own figures (bytes per call, rate, chunks): with
                                        CUSHIM_LOG=info or more (for people measuring the plugin, not users) */
    uint64_t summary_exact;          /* durations kept for exact medians, each table (0: TR_STATS_EXACT)  */
    _Atomic uint64_t *unhooked;      /* unhook=1: times the call hooks were removed while paused (or NULL) */
    const char *capture;             /* the capture= option's value (NULL: none)                         */
    _Atomic uint64_t *captures;      /* capture ranges that resumed recording (or NULL)                  */
    uint64_t captures_base;          /* ... of them, the parent's before this process forked: not its own  */
    int defer;                       /* render=exit: while the program runs, draining waits for the end
                                        (or for half of the buffer limit in use)                         */
    int tsc;                         /* the hooks' times are TSC ticks: converted with 'clk' (tr_rec.h)  */
    tr_clock clk;                    /* ... its first pair taken at setup, the rest by the writer        */
    uint8_t *core_timed;             /* by API id, 1: its CALL records hold the core's ns (the queries' exit
                                        hook; set by the hooks part), not TSC ticks; NULL: none           */
    uint32_t ncore_timed;
    int pid;
    unsigned long long start;        /* the process's start time (/proc/self/stat), kept across exec       */
    int open_held;                   /* tw_open's EWOULDBLOCK: 1 another process holds the file, 2 it holds
                                        this process's calls from before it executed its present program */
    _Atomic uint64_t gpu_dropped;    /* GPU activity records CUPTI dropped (or left unfinished at a detach) */
    _Atomic uint64_t gpu_detached;   /* gpu_detach: times CUPTI was detached while paused (tr_cupti.c)   */
    _Atomic uint64_t gpu_attached;   /* ... and attached again on resuming                             */
    _Atomic uint64_t gpu_detach_failed;   /* ... detaches or attachments CUPTI refused                  */
    char note[256];                  /* a line for the file's metadata (e.g. why GPU tracing is off)     */
    _Atomic int end_signal;          /* the signal whose handler finished the file (0: an ordinary end)    */
    /* said once, on the writer's thread, when the file cannot be written on (NULL: nothing said then; the
       summary says it at the end) */
    void (*on_error)(void *ctx, const char *msg);
    void *on_error_ctx;

    /* the writer's own */
    int fd;                          /* -1: none (not open, or lost: see fd_lost)                      */
    dev_t fd_dev;                    /* what 'fd' must still be before each write, close or reopen:   */
    ino_t fd_ino;                    /* the program may close it and get the number for a file of its own */
    off_t fd_off;                    /* bytes written to the file                                       */
    char *fd_path;                   /* the file, absolute, to reopen when the program closed 'fd'      */
    uint32_t fd_reopened;            /* times it was reopened                                           */
    int fd_lost;                     /* closed by the program and not reopenable: the file ends there   */
    void *z;                         /* z_stream (gzip) when the path ends in .gz                       */
    tr_pf *pf;                       /* TW_FORMAT_PERFETTO: the events' packets (tr_pf.c); NULL for JSON */
    unsigned char *zbuf;
    char *obuf;
    size_t olen;
    int io_error;                    /* the file could not be written on: it ends there (tw_io_fail)     */
    int io_errno;                    /* why (0: the file was lost, fd_lost)                             */
    uint64_t events, bytes;
    int first;
    tr_sb sb;
    tr_stats api, kern;
    tr_stats memt, mems;             /* GPU copies and sets by operation: durations, bytes           */
    tr_stats nvtx;                   /* NVTX ranges ended (nvtx_sum): by style and range (tr_stats.h)   */
    tw_map nvtx_ids;                 /* start/end ranges by id: the start or end seen first, waiting for
                                        the other (at most TR_NVTX_IDS_MAX; tr_wevents.c)              */
    uint64_t nvtx_ids_over;          /* start/end ranges not summarised: more than that were waiting    */
    tw_map corr, corr_old;           /* CUPTI correlation id -> our seq: the latest TW_CORR_KEEP and the
                                        generation before (tw_corr_put); older ones are forgotten         */
    tr_link link;                    /* launch calls by thread and time, for runtime-launched kernels  */
    tw_map gpu_tracks;               /* GPU track tids already named                                   */
    pthread_t th;
    int started;
    _Atomic int running;             /* the thread has reached its loop (tw_start waits for it)           */
    _Atomic int stop, finish_req, finished;
    uint64_t t_last;                 /* the latest time seen (ends unfinished calls)                   */
    tr_rec **gpu_pending;            /* GPU records whose correlation record had not come yet: a ring of
                                        gpu_cap_pending slots (a power of 2), the oldest at gpu_head     */
    uint32_t gpu_npending, gpu_cap_pending, gpu_head;
    uint32_t *api_series;            /* by API id: its series in 'api' + 1, 0 if none yet               */
    uint32_t api_series_cap;
    uint64_t rec_bytes;              /* record bytes drained (the buffers' cost per event)             */
    uint64_t busy_ns;                /* time spent draining and rendering (throughput)                 */
    void *call_buf;                  /* a CALL record's ENTER, rebuilt for the renderer (tw_call_split) */
    size_t call_cap;
    uint64_t open_beyond;            /* unfinished fast-path calls deeper than TR_OPEN_MAX: not written  */
    struct tw_tname *tnames;         /* threads named by nvtxNameOsThread (their thread_name event's name) */
    uint32_t ntnames, cap_tnames;
} tr_writer;
#define TW_FORMAT_JSON 0
#define TW_FORMAT_PERFETTO 1
#define TW_TNAMES_MAX 1024           /* names kept for threads not yet seen; the event is written anyway */

#define TW_GPU_TID_BASE 0x40000000ull   /* GPU stream tracks: above any kernel thread id */


/* The EXIT a CALL record stands for, with its inline output word. */
typedef struct tw_call_exit {
    tr_exit h;
    uint64_t word;
} tw_call_exit;
/* An entry of a thread's open-call stack, as read by the writer. */
typedef struct tr_open_copy {
    uint64_t seq, parent, t;
    uint64_t kname;                  /* a launch's kernel name (interned), or 0 */
    uint32_t api_id, depth;
} tr_open_copy;
typedef struct tw_thr {
    uint64_t tid, alt_tid;
    char name[16];                   /* the thread's name at its first record (tr_tbuf.name) */
    int named;
    tr_rec **stack;
    uint32_t depth, cap;
    uint32_t nopen;                  /* the thread's fast-path calls in flight at the end (thr_read_open) */
    tr_open_copy open[TR_OPEN_MAX];
    /* NVTX ranges pushed on the thread and not yet popped, all domains together, innermost last (copies of their
       PUSH records: a range split by another domain's pop is opened again by name); past TW_NVTX_DEPTH only
       counted (nvtx_over) and closed in order */
    tr_rec **nvtx;
    uint32_t nvtx_depth, nvtx_cap, nvtx_over;
} tw_thr;
#define TW_NVTX_DEPTH TR_NVTX_DEPTH

/* The correlation map's bound (tr_wevents.c tw_corr_put) and the GPU records waiting for their correlation. */
/* Bounded: TW_CORR_KEEP ids a generation, two generations kept (~2 x 16 MiB at most). A
   GPU record comes within a CUPTI buffer or two of its call (tens of thousands of records), so an id this old
   has had all its records; a GPU record without its id is still written, unlinked. */
#define TW_CORR_KEEP (1u << 19)
/* GPU records waiting for their correlation record: beyond this many the oldest is written unlinked. */
#define TW_GPU_PENDING_MAX (1u << 16)
typedef struct tw_tname {
    uint64_t tid;
    char name[64];
} tw_tname;

#endif /* TR_WSTATE_H */
