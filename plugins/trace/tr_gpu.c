/*
 * tr_gpu.c - the GPU part (gpu=1): its options, CUPTI started when the file
 * opens (tr_cupti.c, with the pause policy the plugin links: tr_gpause.h), its
 * last records handed over at exit, nothing carried into a forked child.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_cupti.h"
#include "tr_gpause.h"
#include "tr_gpu.h"

/* The GPU part's own options: CUPTI's path (NULL: the toolkit's), gpu_detach's seconds. */
static struct {
    char *cupti_path;
    double detach_s;
} gpu_opt;

static int tr_gpu_setup(tr_state *st, char *why, size_t cap)
{
    const char *path = tr_host->opt_string(st->self, "cupti");
    st->gpu = tr_host->opt_bool(st->self, "gpu");
    gpu_opt.detach_s = tr_host->opt_double(st->self, "gpu_detach");
    gpu_opt.cupti_path = path ? strdup(path) : NULL;
    if (!(gpu_opt.detach_s >= 0 && gpu_opt.detach_s < 1e6)) {
        snprintf(why, cap, "gpu_detach=%g: seconds, 0 or more", gpu_opt.detach_s);
        return -1;
    }
    return 0;
}

static void tr_gpu_fini(tr_state *st)
{
    (void)st;
    free(gpu_opt.cupti_path);
    gpu_opt.cupti_path = NULL;
}

/* The output opened (the first recorded call): CUPTI starts, or the file says why GPU tracing is off. */
static void tr_gpu_opened(tr_state *st)
{
    if (st->gpu) {
        char err[512] = "";
        if (tr_cupti_start(st, gpu_opt.cupti_path, gpu_opt.detach_s, &tr_gpause_policy, err, sizeof err) != 0) {
            tr_host->log(st->self, CUSHIM_LOG_WARN, "GPU tracing is off: %s; the CUDA calls are still traced",
                         err);
            snprintf(st->w.note, sizeof st->w.note, "GPU tracing off: %.200s", err);
        } else {
            st->w.gpu = 1;
        }
    }
}

static void tr_gpu_flush(tr_state *st)
{
    if (atomic_load(&st->output) == 1)
        tr_cupti_flush();
}

static void tr_gpu_fork_child(tr_state *st)
{
    (void)st;
    tr_cupti_fork_child();
}

const tr_part tr_part_gpu = {
    .name = "gpu",
    .setup = tr_gpu_setup,
    .opened = tr_gpu_opened,
    .flush = tr_gpu_flush,
    .fork_child = tr_gpu_fork_child,
    .fini = tr_gpu_fini,
};
