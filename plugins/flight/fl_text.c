/*
 * fl_text.c - the text summary of a flight recorder file: the file and the event, the calls that had not
 * returned, the launches, copies and sets since their stream's last successful synchronisation with their
 * addresses attributed, the live allocations, then each thread's calls.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fl_report_int.h"
#include "fl_shape.h"

void fl_call_line(tr_sb *sb, const fl_all *A, const fl_call *c, const char *indent)
{
    const cushim_api_info *api = fl_meta_api(c->rec.api_id);
    const fl_func *fn = fl_kernel_of(A, c);
    tr_sb_printf(sb, "%s#%-6" PRIu64 " %+11.6f s ", indent, c->seq, fl_rel(A->f, c->rec.t_enter));
    if (c->flags & FL_R_UNTIMED)   /* a query: recorded at its return with its entry time alone */
        tr_sb_puts(sb, "        -     ");
    else if (c->flags & FL_R_DONE)
        tr_sb_printf(sb, "%9.1f us  ", (double)(c->rec.t_exit - c->rec.t_enter) / 1e3);
    else
        tr_sb_puts(sb, "   running   ");
    for (unsigned d = 0; d < c->rec.depth && d < 8; d++)
        tr_sb_puts(sb, "  ");
    tr_sb_puts(sb, fl_api_name(c->rec.api_id));
    tr_sb_puts(sb, "(");
    if (api != NULL)
        fl_render_params(sb, api, c->data, c->rec.params_len, 0);
    tr_sb_puts(sb, ")");
    if (c->flags & FL_R_TRUNC)
        tr_sb_puts(sb, " (params cut)");
    if (c->flags & FL_R_DONE) {
        tr_sb_puts(sb, " = ");
        fl_render_result(sb, api, c->rec.result, 0);
        if (c->flags & FL_R_SKIPPED)
            tr_sb_puts(sb, " (skipped by a plugin)");
    } else {
        tr_sb_puts(sb, " (not returned)");
    }
    if (fn != NULL && fn->name[0] != '\0') {
        char name[FL_FUNC_NAME];
        memcpy(name, fn->name, sizeof name);
        name[sizeof name - 1] = '\0';
        tr_sb_puts(sb, "  kernel ");
        fl_text_str(sb, name, sizeof name);
    }
    tr_sb_puts(sb, "\n");
}


/* A launch, copy or set that a later call of the same thread at depth + 1 repeats (a runtime call's driver
   call): that one is shown instead. */
static int fl_has_inner_op(const fl_all *A, const fl_call *c)
{
    const fl_call *v = A->calls[c->slice];
    uint32_t ops = CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET;
    for (size_t j = 0; j + 1 < A->ncalls[c->slice]; j++)
        if (&v[j] == c) {
            const cushim_api_info *in = fl_meta_api(v[j + 1].rec.api_id);
            return v[j + 1].rec.depth == c->rec.depth + 1 && in != NULL && (in->categories & ops);
        }
    return 0;
}

typedef struct fl_stream_sync {
    uint64_t stream, t;
} fl_stream_sync;

/* The stream a launch, copy or set goes to: its stream parameter's value, UINT64_MAX when it has none (a launch
   whose configuration holds it); 0: a copy or set without one (synchronous: never pending). */
static int fl_op_stream(const fl_call *c, const cushim_api_info *api, uint64_t *stream)
{
    fl_shape sh;
    fl_shape_of(api, fl_meta_param, &sh);
    if (sh.stream >= 0) {
        *stream = fl_u64_at(c, fl_meta_param(api, (uint32_t)sh.stream)->offset);
        return 1;
    }
    *stream = UINT64_MAX;
    return (api->categories & CUSHIM_CAT_LAUNCH) != 0;
}

static void fl_pending_text(tr_sb *sb, const fl_all *A)
{
    uint64_t all_sync = 0;
    fl_stream_sync *syncs = calloc(A->n + 1, sizeof *syncs);
    uint64_t *streams = calloc(A->n + 1, sizeof *streams);
    size_t nsync = 0, nstreams = 0, shown = 0;
    uint32_t ops = CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET;
    if (syncs == NULL || streams == NULL)
        goto out;
    /* the start of each stream's last successful synchronisation (what was launched before it is done); a
       context's or device's covers every stream */
    for (size_t i = 0; i < A->n; i++) {
        const fl_call *c = A->order[i];
        const cushim_api_info *api = fl_meta_api(c->rec.api_id);
        fl_shape sh;
        if (api == NULL || !(api->categories & CUSHIM_CAT_SYNC) || !(c->flags & FL_R_DONE) || c->rec.result != 0 ||
            (c->flags & FL_R_SKIPPED) || strstr(api->name, "Event") != NULL)
            continue;
        fl_shape_of(api, fl_meta_param, &sh);
        if (sh.stream < 0) {
            all_sync = c->rec.t_enter;
            continue;
        }
        syncs[nsync].stream = fl_u64_at(c, fl_meta_param(api, (uint32_t)sh.stream)->offset);
        syncs[nsync++].t = c->rec.t_enter;
    }
    tr_sb_puts(sb, "\nlaunches, copies and sets since their stream's last successful synchronisation:\n");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t s = 0; s < (pass == 0 ? 1 : nstreams); s++) {
            if (pass == 1) {
                uint64_t stream = streams[s];
                if (stream == UINT64_MAX)
                    tr_sb_puts(sb, "  stream unknown (given behind a pointer):\n");
                else if (stream == 0)
                    tr_sb_puts(sb, "  stream 0x0 (the default stream):\n");
                else
                    tr_sb_printf(sb, "  stream 0x%" PRIx64 ":\n", stream);
            }
            for (size_t i = 0; i < A->n; i++) {
                const fl_call *c = A->order[i];
                const cushim_api_info *api = fl_meta_api(c->rec.api_id);
                uint64_t st, since = all_sync;
                size_t k;
                if (api == NULL || !(api->categories & ops) || fl_has_inner_op(A, c) || !fl_op_stream(c, api, &st))
                    continue;
                for (k = 0; k < nsync; k++)
                    if (syncs[k].stream == st && syncs[k].t > since)
                        since = syncs[k].t;
                if (c->rec.t_enter < since)
                    continue;
                if (pass == 0) {   /* the streams, in the order of their first pending operation */
                    for (k = 0; k < nstreams && streams[k] != st; k++) {
                    }
                    if (k == nstreams)
                        streams[nstreams++] = st;
                    continue;
                }
                if (st != streams[s])
                    continue;
                fl_call_line(sb, A, c, "    ");
                fl_pointers(sb, A, c, "            ", 0);
                shown++;
            }
        }
    }
    if (shown == 0)
        tr_sb_puts(sb, "  none\n");
out:
    free(syncs);
    free(streams);
}

void fl_text(tr_sb *sb, const fl_all *A, int alive)
{
    const fl_file *f = A->f;
    char when[64] = "?";
    time_t wall = (time_t)(f->head.wall0_ns / 1000000000);
    struct tm tmv;
    size_t running = 0;
    fl_alloc *allocs = NULL;
    size_t nallocs = 0;
    if (localtime_r(&wall, &tmv) != NULL)
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tmv);
    tr_sb_puts(sb, "flight recorder of process ");
    tr_sb_printf(sb, "%" PRId64 " (", f->head.pid);
    fl_text_str(sb, f->head.comm, sizeof f->head.comm);
    tr_sb_printf(sb, "), recording since %s: %s\n", when, f->path);
    tr_sb_printf(sb, "%u calls kept per thread, %u threads recorded, %zu calls in the file; recorded by ", f->head.n,
                 A->nslices, A->n);
    fl_text_str(sb, f->head.host_version, sizeof f->head.host_version);
    tr_sb_puts(sb, "\n");
    if (f->head.clock == FL_CLOCK_TSC)
        tr_sb_printf(sb, "times: the TSC's, read in the hooks, in CLOCK_MONOTONIC at %.6f GHz\n", 1.0 / f->ns_per_tick);
    if (atomic_load(&f->h->threads_lost) || atomic_load(&f->h->allocs_lost) || atomic_load(&f->h->funcs_lost) ||
        A->bad)
        tr_sb_printf(sb, "not recorded: %" PRIu64 " threads (no slice left), %" PRIu64 " allocations (table full), %"
                         PRIu64 " kernels (table full); %zu bad records\n",
                     (uint64_t)atomic_load(&f->h->threads_lost), (uint64_t)atomic_load(&f->h->allocs_lost),
                     (uint64_t)atomic_load(&f->h->funcs_lost), A->bad);
    fl_event_text(sb, f, alive);

    tr_sb_puts(sb, "\ncalls not returned:\n");
    for (size_t i = 0; i < A->n; i++)
        if (!(A->order[i]->flags & FL_R_DONE)) {
            const fl_call *c = A->order[i];
            tr_sb_printf(sb, "  thread %" PRIu64 ": ", c->rec.tid);
            fl_call_line(sb, A, c, "");
            if (A->t_end > c->rec.t_enter)
                tr_sb_printf(sb, "      in it for %.3f s %s\n", (double)(A->t_end - c->rec.t_enter) / 1e9,
                             alive && f->head.event.kind == FL_EV_NONE ? "now" : "at the latest time the file tells");
            running++;
        }
    if (running == 0)
        tr_sb_puts(sb, "  none\n");

    fl_pending_text(sb, A);

    if (fl_file_allocs(f, &allocs, &nallocs) == 0) {
        uint64_t bytes = 0;
        for (size_t i = 0; i < nallocs; i++)
            bytes += allocs[i].size;
        tr_sb_printf(sb, "\nlive allocations: %zu, %" PRIu64 " bytes\n", nallocs, bytes);
        for (size_t i = 0; i < nallocs && i < 64; i++)
            tr_sb_printf(sb, "  0x%" PRIx64 "  %12" PRIu64 " bytes  made by #%" PRIu64 " %s on thread %u\n",
                         allocs[i].base, allocs[i].size, allocs[i].seq, fl_api_name(allocs[i].api_id),
                         allocs[i].tid);
        if (nallocs > 64)
            tr_sb_printf(sb, "  ... %zu more\n", nallocs - 64);
        free(allocs);
    }

    for (uint32_t i = 0; i < A->nslices; i++) {
        const fl_slice *s = fl_file_slice(f, i);
        char name[17];
        uint64_t head = atomic_load(&s->head);
        if (atomic_load(&s->state) == FL_S_FREE)
            continue;
        memcpy(name, s->name, 16);
        name[16] = '\0';
        tr_sb_printf(sb, "\nthread %" PRIu64 " (", s->tid);
        fl_text_str(sb, name, sizeof name);
        tr_sb_printf(sb, ")%s: %" PRIu64 " calls, the last %zu kept\n",
                     atomic_load(&s->state) == FL_S_EXITED ? ", ended" : "", head, A->ncalls[i]);
        for (size_t j = 0; j < A->ncalls[i]; j++) {
            const fl_call *c = &A->calls[i][j];
            fl_call_line(sb, A, c, "  ");
            fl_pointers(sb, A, c, "          ", 0);
        }
    }
}
