/*
 * trace.c - the trace plugin: every selected CUDA call with its arguments,
 * output values and result, written as a Chrome trace-event JSON file that
 * Perfetto opens, plus Nsight Systems' cuda_api_sum table at exit
 * (docs/plugins/trace.md).
 *
 *   CUSHIM_PLUGINS='trace:file=t.json,filter=cat:alloc+launch'   (or cushim run --trace=t.json)
 *
 * This file is the plugin's entry: its options, and its init, flush and fork
 * as walks over the table of its parts below, each with its own steps
 * (tr_base.h tr_part): recording (tr_record.c), the output file (tr_output.c),
 * GPU activity (tr_cupti.c), the call hooks (tr_hooks.c), control - paused,
 * toggle, capture ranges, timer, unhook - (tr_control.c), fatal signals
 * (tr_signal.c), NVTX (tr_nvtx.c). No text is formatted on the calling
 * thread: the writer thread (tr_writer.c) renders. Built on the public SDK only.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tr_base.h"
#include "tr_control.h"
#include "tr_gpu.h"
#include "tr_hooks.h"
#include "tr_nvtx.h"
#include "tr_output.h"
#include "tr_record.h"
#include "tr_signal.h"

/* The parts, in the order their steps run (tr_base.h tr_part: setup and start in this order, flush in the
   reverse, fork_child in this). The hooks before control (which may remove them again: unhook), the GPU part
   before the output in the reverse walk (CUPTI's last records before the file's end). */
static const tr_part *const tr_parts[] = {
    &tr_part_recording, &tr_part_output, &tr_part_gpu, &tr_part_hooks, &tr_part_control, &tr_part_signals,
    &tr_part_nvtx,
};
#define TR_NPARTS (sizeof tr_parts / sizeof tr_parts[0])

/* st->output_opened: the parts' 'opened' steps, on the thread that opens the output. */
static void tr_parts_opened(tr_state *st)
{
    for (size_t i = 0; i < TR_NPARTS; i++)
        if (tr_parts[i]->opened != NULL)
            tr_parts[i]->opened(st);
}

static void tr_free_state(tr_state *st)
{
    if (st == NULL)
        return;
    for (size_t i = TR_NPARTS; i-- > 0;)
        if (tr_parts[i]->fini != NULL)
            tr_parts[i]->fini(st);
    for (uint32_t i = 0; st->plans && i < st->id_limit; i++)
        free(st->plans[i]);
    free(st->plans);
    free(st->w.path);
    free(st->w.summary_path);
    free(st);
}

static int tr_init(const cushim_host *host, cushim_plugin *self)
{
    tr_state *st;
    const char *filter;
    size_t i;
    if (CUSHIM_ABI_MAJOR_OF(host->abi_version) != CUSHIM_ABI_MAJOR || !CUSHIM_HOST_HAS(host, plugin_data))
        return -1;
    if (tr_st != NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "the trace plugin is loaded once per process (it is already tracing to %s)",
                  tr_st->w.path);
        return -1;
    }
    tr_host = host;
    if ((st = aligned_alloc(TR_CACHELINE, sizeof *st)) == NULL)   /* sizeof is a multiple of the line */
        return -1;
    memset(st, 0, sizeof *st);
    st->self = self;
    st->output_opened = tr_parts_opened;
    tr_st = st;
    /* options read and checked, nothing started: a bad value ends here */
    for (i = 0; i < TR_NPARTS; i++) {
        char why[160] = "";
        if (tr_parts[i]->setup != NULL && tr_parts[i]->setup(st, why, sizeof why) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "%s", why[0] != '\0' ? why : "out of memory");
            tr_st = NULL;
            tr_free_state(st);
            return -1;
        }
    }
    /* hooks, threads, handlers; a part that cannot start has said why, and the parts started are undone */
    for (i = 0; i < TR_NPARTS; i++) {
        if (tr_parts[i]->start != NULL && tr_parts[i]->start(st) != 0) {
            tr_st = NULL;
            for (size_t k = i + 1; k-- > 0;)
                if (tr_parts[k]->undo != NULL)
                    tr_parts[k]->undo(st);
            return -1;   /* the state stays (a hook may have seen it) */
        }
    }
    host->plugin_set_data(self, st);
    filter = host->opt_string(self, "filter");
    host->log(self, CUSHIM_LOG_INFO, "tracing '%s' to %s", filter && filter[0] ? filter : "all", st->w.path);
    return 0;
}

static void tr_flush(cushim_plugin *self)
{
    tr_state *st = tr_host ? tr_host->plugin_data(self) : NULL;
    if (st == NULL)
        return;
    for (size_t i = TR_NPARTS; i-- > 0;)
        if (tr_parts[i]->flush != NULL)
            tr_parts[i]->flush(st);
}

static void tr_fork_child(cushim_plugin *self)
{
    tr_state *st = tr_host ? tr_host->plugin_data(self) : NULL;
    if (st == NULL)
        return;
    for (size_t i = 0; i < TR_NPARTS; i++)
        if (tr_parts[i]->fork_child != NULL)
            tr_parts[i]->fork_child(st);
}

static const cushim_option tr_options[] = {
    {"file", CUSHIM_OPT_STRING, "", "the trace file (default cushim-<pid>.json; .json.gz: gzip; %p: the pid, %h: the host, %q{VAR}: $VAR); a "
                                    "forked child writes FILE with its pid before .json"},
    {"format", CUSHIM_OPT_STRING, "", "the file's format: 'json' (Chrome trace-event JSON) or 'perfetto' "
                                      "(Perfetto's protobuf trace, a third of the bytes); default: from the file's "
                                      "name (.perfetto-trace or .pftrace: perfetto; else json)"},
    {"filter", CUSHIM_OPT_STRING, "all", "the APIs recorded (a selector: names, base names, globs, cat:, lib:)"},
    {"buffer", CUSHIM_OPT_BYTES, "64MiB", "memory for records not yet written; beyond it events are dropped "
                                          "and counted"},
    {"render", CUSHIM_OPT_STRING, "background", "when records become JSON: 'background' (a writer thread, while "
                                                "the program runs) or 'exit' (at exit, fork or a fatal signal, or "
                                                "once half of 'buffer' is in use: the writer off the cores)"},
    {"summary", CUSHIM_OPT_BOOL, "true", "print the cuda_api_sum table at exit"},
    {"clock", CUSHIM_OPT_STRING, "auto", "the calls' clock: 'tsc' (read in the hooks, converted by the writer), "
                                         "'host' (the shim's, read by the core), 'auto' (tsc where it can be used)"},
    {"summary_file", CUSHIM_OPT_STRING, "", "append the table to this file instead of stderr"},
    {"summary_exact", CUSHIM_OPT_BYTES, "32MiB", "memory for the durations behind exact medians in the table (each "
                                                   "of the call and kernel tables, 8 bytes a call); beyond it an "
                                                   "API's median comes from a histogram, within 0.4%"},
    {"unhook", CUSHIM_OPT_BOOL, "false", "while paused (paused, toggle, capture, delay), remove the call hooks: a "
                                         "paused call costs what a call with no hook costs; recording resumes a "
                                         "moment after the toggle signal (a thread adds the hooks again), at a "
                                         "capture range's start at once"},
    {"kernel_names", CUSHIM_OPT_BOOL, "true", "name the kernel of each launch (the driver's cuFuncGetName)"},
    {"gpu", CUSHIM_OPT_BOOL, "false", "GPU kernels, copies and sets through CUPTI, linked to their launches"},
    {"gpu_detach", CUSHIM_OPT_DOUBLE, "1", "with gpu and unhook: this many seconds into a pause CUPTI is detached "
                                          "(at the next launch; a paused launch then costs nothing more) and on "
                                          "resuming attached again; 0 keeps it attached"},
    {"cupti", CUSHIM_OPT_STRING, "", "the libcupti.so to load (default: $CUDA_HOME, /usr/local/cuda)"},
    {"signals", CUSHIM_OPT_BOOL, "true", "finish the file when a fatal signal ends the process"},
    {"paused", CUSHIM_OPT_BOOL, "false", "start with recording paused (see toggle)"},
    {"toggle", CUSHIM_OPT_STRING, "", "a signal (USR1, USR2, RTMIN+N) whose every delivery pauses or resumes "
                                      "recording calls (a capture range: kill -USR2 <pid>)"},
    {"delay", CUSHIM_OPT_DOUBLE, "0", "start recording this many seconds after the program starts (as nsys --delay)"},
    {"duration", CUSHIM_OPT_DOUBLE, "0", "record for this many seconds (after 'delay'), then no more (as nsys "
                                         "--duration; the program runs on)"},
    {"capture", CUSHIM_OPT_STRING, "", "record only inside the program's ranges: 'cudaProfilerApi' (from each "
                                       "cudaProfilerStart to the next cudaProfilerStop) or 'nvtx:MESSAGE' (while an "
                                       "NVTX range with that message is open)"},
    {"capture_end", CUSHIM_OPT_STRING, "repeat", "with capture: 'repeat' (every range), 'stop' (the first only), "
                                               "'repeat:N' (the first N); then no more (as nsys --capture-range-end)"},
    {NULL, 0, NULL, NULL},
};

static const cushim_plugin_def tr_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "trace",
    .version = "0.1.0",
    .description = "every CUDA call with its arguments in a Perfetto/Chrome trace, and Nsight's API summary",
    .options = tr_options,
    .init = tr_init,
    .flush = tr_flush,
    .fork_child = tr_fork_child,
};

CUSHIM_PLUGIN(tr_def)

