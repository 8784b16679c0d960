/*
 * tr_output.c - the trace file (the output part): the writer set up from the
 * options, the file opened at the process's first recorded call (another name
 * when a live process holds this one), the writer thread started, the file
 * finished at exit and started afresh in a forked child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cushim/cushim_io.h"
#include "tsc.h"
#include "tr_output.h"
#include "tr_path.h"

/* The writer could not write the file (a full disk, a lost file): said when it happens, on the writer's thread. */
static void tr_on_write_error(void *ctx, const char *msg)
{
    const tr_state *st = ctx;
    tr_host->log(st->self, CUSHIM_LOG_ERROR, "%s", msg);
}

static pthread_mutex_t tr_output_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread is opening the output (tr_output_lock held). CUPTI's start makes CUDA calls; inside a hook (the
   first record a CUDA call's) the shim's depth rule sends them straight to the driver, but when the first record
   is no call (an NVTX range) and the hooks are in, they reach this plugin's hooks on this thread: they are not
   recorded, instead of waiting for the lock this thread holds (a PyTorch step's first range push inside a
   capture range hung so on the H200: docs/gpu.md, twentieth session). */
static __thread int tr_opening;

/* The file, the writer thread and CUPTI start with the first recorded call of the process (so a process
   that makes no CUDA call, like a shell between the launcher and the program, leaves no file). 1: ready. */
int tr_output_ready(tr_state *st)
{
    int s = atomic_load_explicit(&st->output, memory_order_acquire);
    if (s != 0)
        return s == 1;
    if (tr_opening)
        return 0;
    pthread_mutex_lock(&tr_output_lock);
    tr_opening = 1;
    s = atomic_load_explicit(&st->output, memory_order_relaxed);
    if (s == 0) {
        char *given = st->w.path, *preexec = NULL;
        int e = tw_open(&st->w) != 0 ? errno : 0;
        /* the name is another live process's (tw_open: a lock), or holds this process's calls from before it
           executed its present program: this one writes it with its pid before .json */
        for (int k = 1; e == EWOULDBLOCK && k <= 8; k++) {
            if (st->w.open_held == 2 && preexec == NULL)
                preexec = strdup(st->w.path);
            char *alt = tr_path_alt(given, st->w.pid, k);
            if (alt == NULL) {
                e = ENOMEM;
                break;
            }
            if (st->w.path != given)
                free(st->w.path);
            st->w.path = alt;
            e = tw_open(&st->w) != 0 ? errno : 0;
        }
        if (preexec != NULL && e == 0)
            tr_host->log(st->self, CUSHIM_LOG_WARN, "the trace file '%s' holds this process's calls from before it "
                         "executed this program (unfinished: %s); this program's are in '%s'", preexec,
                         st->w.format == TW_FORMAT_PERFETTO ? "its complete packets are read as they are"
                                                            : "'cushim stats --close' ends a copy",
                         st->w.path);
        else if (st->w.path != given && e == 0)
            tr_host->log(st->self, CUSHIM_LOG_WARN, "the trace file '%s' is being written by another process; "
                         "this one writes '%s'", given, st->w.path);
        free(preexec);
        if (st->w.path != given)
            free(given);
        if (e != 0) {
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "cannot write the trace file '%s': %s; this process is not "
                         "traced", st->w.path, e == ENXIO ? "a FIFO with no reader (start the reader first)"
                                                          : strerror(e));
            s = 2;
        } else {
            if (st->output_opened != NULL)   /* the parts' 'opened' steps: CUPTI starts (tr_cupti.c) */
                st->output_opened(st);
            if (tw_start(&st->w) != 0)
                tr_host->log(st->self, CUSHIM_LOG_WARN, "no writer thread: the trace is written at exit");
            s = 1;
        }
        atomic_store_explicit(&st->output, s, memory_order_release);
    }
    tr_opening = 0;
    pthread_mutex_unlock(&tr_output_lock);
    return s == 1;
}

static int tr_output_setup(tr_state *st, char *why, size_t cap)
{
    const cushim_host *host = tr_host;
    cushim_plugin *self = st->self;
    const char *file = host->opt_string(self, "file"), *sfile = host->opt_string(self, "summary_file");
    char unset[128];
    st->w.bufs = &st->bufs;
    st->w.meta.api_param = host->api_param;
    st->w.meta.result_name = host->result_name;
    st->w.meta.sizeof_param_info = host->sizeof_param_info;
    st->w.meta.struct_field = CUSHIM_HOST_HAS(host, struct_field) ? host->struct_field : NULL;
    st->w.meta.enum_value_name = NULL;
    if (CUSHIM_HOST_HAS(host, enum_value_name))
        st->w.meta.enum_value_name = host->enum_value_name;
    st->w.api_by_id = host->api_by_id;
    st->w.flow_categories = CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET;
    st->w.summary = host->opt_bool(self, "summary");
    st->w.internals = host->log_enabled != NULL && host->log_enabled(CUSHIM_LOG_INFO);
    st->w.summary_exact = host->opt_bytes(self, "summary_exact") / 8;
    if (st->w.summary_exact == 0)
        st->w.summary_exact = 1;
    {
        const char *rd = host->opt_string(self, "render");
        if (rd != NULL && strcmp(rd, "exit") == 0)
            st->w.defer = 1;
        else if (rd != NULL && rd[0] != '\0' && strcmp(rd, "background") != 0)
            host->log(self, CUSHIM_LOG_WARN, "render=%s: not 'background' or 'exit'; rendering in the background", rd);
    }
    {
        /* the call hooks' clock: the TSC where it can be used (read in the hooks, converted by the writer), else
           the host's (tr_clock.h) */
        const char *clk = host->opt_string(self, "clock");
        if (tsc_choose(clk != NULL && clk[0] != '\0' ? clk : "auto", &st->tsc, why, cap) != 0)
            return -1;
        st->w.tsc = st->tsc;
        if (st->tsc && tr_clock_start(&st->w.clk, host->now_ns) != 0)
            return -1;
    }
    st->w.pid = (int)getpid();
    st->w.start = tw_process_start();
    st->w.fd = -1;
    st->w.on_error = tr_on_write_error;
    st->w.on_error_ctx = st;
    {
        const char *fmt = host->opt_string(self, "format");
        if (fmt != NULL && strcmp(fmt, "perfetto") == 0) {
            st->w.format = TW_FORMAT_PERFETTO;
        } else if (fmt != NULL && strcmp(fmt, "json") == 0) {
            st->w.format = TW_FORMAT_JSON;
        } else if (fmt == NULL || fmt[0] == '\0') {
            st->w.format = tr_path_perfetto(file) ? TW_FORMAT_PERFETTO : TW_FORMAT_JSON;
        } else {
            snprintf(why, cap, "format=%s: not 'json' or 'perfetto'", fmt);
            return -1;
        }
        if ((file == NULL || file[0] == '\0') && st->w.format == TW_FORMAT_PERFETTO)
            file = "cushim-%p.perfetto-trace";
    }
    st->w.path = tr_path(file, st->w.pid, 0, unset, sizeof unset);
    if (unset[0] != '\0')
        host->log(self, CUSHIM_LOG_WARN, "file=%s: the environment variable %s is not set (%%q{%s} left empty)", file,
                  unset, unset);
    st->w.summary_path = sfile && sfile[0] ? strdup(sfile) : NULL;
    cushim_stderr_mark(&st->w.stderr_id);
    atomic_init(&st->output, 0);
    if (st->w.path == NULL) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    return 0;
}

static void tr_output_flush(tr_state *st)
{
    if (atomic_load(&st->output) == 1)   /* else no call was recorded: no file */
        tw_finish(&st->w);
}

static void tr_output_fork_child(tr_state *st)
{
    tw_fork_child(&st->w, NULL);
    pthread_mutex_init(&tr_output_lock, NULL);
    st->w.pid = (int)getpid();
    st->w.start = tw_process_start();
    free(st->w.path);
    {
        const char *file = tr_host->opt_string(st->self, "file");
        if ((file == NULL || file[0] == '\0') && st->w.format == TW_FORMAT_PERFETTO)
            file = "cushim-%p.perfetto-trace";
        st->w.path = tr_path(file, st->w.pid, 1, NULL, 0);
    }
    atomic_store(&st->output, st->w.path != NULL ? 0 : 2);
}

/* What setup allocated for the writer beside its path (freed by trace.c): the clock's pairs. */
static void tr_output_fini(tr_state *st)
{
    tr_clock_free(&st->w.clk);
}

const tr_part tr_part_output = {
    .name = "output",
    .setup = tr_output_setup,
    .flush = tr_output_flush,
    .fork_child = tr_output_fork_child,
    .fini = tr_output_fini,
};
