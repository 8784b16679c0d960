/*
 * fl_report.c - what 'cushim flight dump' prints of a flight recorder file (fl_report.h): the text summary - the
 * event, the calls that had not returned, the launches and copies since each stream's last successful
 * synchronisation with every address they pass attributed to an allocation, the live allocations, then each
 * thread's calls - or the same calls as a Perfetto/Chrome trace-event JSON file.
 */
#define _GNU_SOURCE
#include "fl_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fl_render.h"
#include "fl_shape.h"

#define FL_NEAR (1u << 20)   /* an address this far past an allocation's end still names it */

typedef struct fl_all {
    const fl_file *f;
    fl_call **calls;     /* per slice */
    size_t *ncalls;
    uint32_t nslices;
    fl_call **order;     /* every call, by seq */
    size_t n;
    size_t bad;
    uint64_t t_end;      /* the latest time the file tells (for calls still running) */
} fl_all;

/* Calls in the order they began (seq is unique, not ordered across threads). */
static int fl_by_time(const void *x, const void *y)
{
    const fl_call *a = *(fl_call *const *)x, *b = *(fl_call *const *)y;
    if (a->rec.t_enter != b->rec.t_enter)
        return a->rec.t_enter < b->rec.t_enter ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int fl_load(fl_all *A, const fl_file *f)
{
    size_t k = 0;
    memset(A, 0, sizeof *A);
    A->f = f;
    A->nslices = fl_file_nslices(f);
    A->calls = calloc(A->nslices + 1, sizeof *A->calls);
    A->ncalls = calloc(A->nslices + 1, sizeof *A->ncalls);
    if (A->calls == NULL || A->ncalls == NULL)
        return -1;
    for (uint32_t i = 0; i < A->nslices; i++) {
        size_t bad = 0;
        if (atomic_load(&fl_file_slice(f, i)->state) == FL_S_FREE)
            continue;
        if (fl_file_calls(f, i, &A->calls[i], &A->ncalls[i], &bad) != 0)
            return -1;
        A->n += A->ncalls[i];
        A->bad += bad;
    }
    A->order = calloc(A->n + 1, sizeof *A->order);
    if (A->order == NULL)
        return -1;
    for (uint32_t i = 0; i < A->nslices; i++)
        for (size_t j = 0; j < A->ncalls[i]; j++) {
            fl_call *c = &A->calls[i][j];
            A->order[k++] = c;
            if (c->rec.t_exit > A->t_end)
                A->t_end = c->rec.t_exit;
            if (c->rec.t_enter > A->t_end)
                A->t_end = c->rec.t_enter;
        }
    qsort(A->order, A->n, sizeof *A->order, fl_by_time);
    if (f->head.event.kind != FL_EV_NONE && f->head.event.t > A->t_end)
        A->t_end = f->head.event.t;
    return 0;
}

/* A running process's ring read now: its calls in progress last until now (the host's clock is
   CLOCK_MONOTONIC's). */
static void fl_now_if_alive(fl_all *A, int alive)
{
    struct timespec ts;
    uint64_t now;
    if (!alive || A->f->head.event.kind != FL_EV_NONE || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return;
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (now > A->t_end)
        A->t_end = now;
}

static void fl_unload(fl_all *A)
{
    for (uint32_t i = 0; A->calls != NULL && i < A->nslices; i++)
        free(A->calls[i]);
    free(A->calls);
    free(A->ncalls);
    free(A->order);
}

static double fl_rel(const fl_file *f, uint64_t t)
{
    return ((double)t - (double)f->head.t0) / 1e9;
}

static const char *fl_api_name(uint32_t id)
{
    const cushim_api_info *a = fl_meta_api(id);
    return a != NULL ? a->name : "(unknown API)";
}

static uint64_t fl_u64_at(const fl_call *c, uint32_t off)
{
    uint64_t v = 0;
    if (off + 8 <= c->rec.params_len)
        memcpy(&v, c->data + off, 8);
    return v;
}

/* A launch's kernel: its function entry, else (a runtime launch) the one of the driver launch right inside it. */
static const fl_func *fl_kernel_of(const fl_all *A, const fl_call *c)
{
    const cushim_api_info *api = fl_meta_api(c->rec.api_id);
    fl_shape sh;
    if (api == NULL || !(api->categories & CUSHIM_CAT_LAUNCH))
        return NULL;
    fl_shape_of(api, fl_meta_param, &sh);
    if (sh.func < 0)
        return NULL;
    if (sh.driver_launch)
        return fl_file_func(A->f, fl_u64_at(c, fl_meta_param(api, (uint32_t)sh.func)->offset), c->seq);
    const fl_call *v = A->calls[c->slice];
    for (size_t j = 0; j + 1 < A->ncalls[c->slice]; j++)
        if (&v[j] == c && v[j + 1].rec.depth == c->rec.depth + 1)
            return fl_kernel_of(A, &v[j + 1]);
    return NULL;
}

/* ---- attribution ---- */

static void fl_where_text(fl_sb *sb, const fl_all *A, const fl_call *c, uint64_t v)
{
    fl_where w;
    if (v == 0) {
        fl_sb_put(sb, "NULL");
        return;
    }
    fl_file_where(A->f, v, FL_NEAR, &w);
    switch (w.kind) {
    case FL_AT_INSIDE:
        fl_sb_printf(sb, "inside 0x%" PRIx64 " (%" PRIu64 " bytes, offset %" PRIu64 ") made by #%" PRIu64 " %s%s",
                     w.a.base, w.a.size, w.off, w.a.seq, fl_api_name(w.a.api_id),
                     w.a.t > c->rec.t_enter ? " after this call (not live at it)" : "");
        return;
    case FL_AT_PAST:
        if (w.off == w.a.size)
            fl_sb_printf(sb, "not inside any live allocation: one past the end of 0x%" PRIx64 " (%" PRIu64
                             " bytes) made by #%" PRIu64 " %s",
                         w.a.base, w.a.size, w.a.seq, fl_api_name(w.a.api_id));
        else
            fl_sb_printf(sb, "not inside any live allocation: %" PRIu64 " bytes past the end of 0x%" PRIx64
                             " (%" PRIu64 " bytes) made by #%" PRIu64 " %s",
                         w.off - w.a.size, w.a.base, w.a.size, w.a.seq, fl_api_name(w.a.api_id));
        return;
    case FL_AT_FREED:
        if (w.a.free_t > c->rec.t_enter && w.a.t <= c->rec.t_enter)   /* live at this call, released since */
            fl_sb_printf(sb, "inside 0x%" PRIx64 " (%" PRIu64 " bytes, offset %" PRIu64 ") made by #%" PRIu64
                             " %s, freed after this call by #%" PRIu64 " %s",
                         w.a.base, w.a.size, w.off, w.a.seq, fl_api_name(w.a.api_id), w.a.free_seq,
                         fl_api_name(w.a.free_api));
        else
            fl_sb_printf(sb, "not inside any live allocation: inside 0x%" PRIx64 " (%" PRIu64 " bytes, offset %"
                             PRIu64 ") made by #%" PRIu64 " %s, freed by #%" PRIu64 " %s before this call",
                         w.a.base, w.a.size, w.off, w.a.seq, fl_api_name(w.a.api_id), w.a.free_seq,
                         fl_api_name(w.a.free_api));
        return;
    default:
        fl_sb_put(sb, "not inside any live allocation");
    }
}

/* Every address the call passes, one per line after 'indent': address parameters, then a launch's 8-byte kernel
   arguments. 'json': a JSON object of the same ("name": "text"). */
static void fl_pointers(fl_sb *sb, const fl_all *A, const fl_call *c, const char *indent, int json)
{
    const cushim_api_info *api = fl_meta_api(c->rec.api_id);
    const fl_func *fn;
    int first = 1;
    fl_sb text = {0};
    if (api == NULL || !(api->categories & (CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET)))
        return;
    for (uint32_t i = 0; i < api->nparams; i++) {
        const cushim_param_info *p = fl_meta_param(api, i);
        uint64_t v;
        if (!fl_shape_is_addr(api, p) || (uint32_t)p->offset + 8 > c->rec.params_len)
            continue;
        v = fl_u64_at(c, p->offset);
        text.len = 0;
        fl_where_text(&text, A, c, v);
        if (json) {
            fl_sb_put(sb, first ? "{" : ",");
            fl_sb_json_str(sb, p->name, 128);
            fl_sb_printf(sb, ":\"0x%" PRIx64 ": ", v);
            fl_sb_put(sb, text.p != NULL ? text.p : "");   /* our own text: no quote, no control byte */
            fl_sb_put(sb, "\"");
        } else {
            fl_sb_printf(sb, "%s%s = 0x%" PRIx64 ": %s\n", indent, p->name, v, text.p != NULL ? text.p : "");
        }
        first = 0;
    }
    if ((c->flags & FL_R_ARGS) && (fn = fl_kernel_of(A, c)) != NULL) {
        const unsigned char *args = c->data + fl_pad8(c->rec.params_len);
        for (uint32_t i = 0; i < fn->nargs && i < FL_FUNC_ARGS; i++) {
            uint64_t v = 0;
            if (fn->arg_size[i] != 8 || (uint32_t)fn->arg_off[i] + 8 > c->rec.args_len)
                continue;
            memcpy(&v, args + fn->arg_off[i], 8);
            text.len = 0;
            if (v < 65536)
                fl_sb_printf(&text, "%" PRIu64 " (a small value: not an address)", v);
            else
                fl_where_text(&text, A, c, v);
            if (json) {
                fl_sb_put(sb, first ? "{" : ",");
                fl_sb_printf(sb, "\"arg %u\":\"0x%" PRIx64 ": %s\"", i, v, text.p != NULL ? text.p : "");
            } else {
                fl_sb_printf(sb, "%sarg %u = 0x%" PRIx64 ": %s\n", indent, i, v, text.p != NULL ? text.p : "");
            }
            first = 0;
        }
    }
    if (json && !first)
        fl_sb_put(sb, "}");
    fl_sb_free(&text);
}

/* ---- text ---- */

static void fl_call_line(fl_sb *sb, const fl_all *A, const fl_call *c, const char *indent)
{
    const cushim_api_info *api = fl_meta_api(c->rec.api_id);
    const fl_func *fn = fl_kernel_of(A, c);
    fl_sb_printf(sb, "%s#%-6" PRIu64 " %+11.6f s ", indent, c->seq, fl_rel(A->f, c->rec.t_enter));
    if (c->flags & FL_R_DONE)
        fl_sb_printf(sb, "%9.1f us  ", (double)(c->rec.t_exit - c->rec.t_enter) / 1e3);
    else
        fl_sb_put(sb, "   running   ");
    for (unsigned d = 0; d < c->rec.depth && d < 8; d++)
        fl_sb_put(sb, "  ");
    fl_sb_put(sb, fl_api_name(c->rec.api_id));
    fl_sb_put(sb, "(");
    if (api != NULL)
        fl_render_params(sb, api, c->data, c->rec.params_len, 0);
    fl_sb_put(sb, ")");
    if (c->flags & FL_R_TRUNC)
        fl_sb_put(sb, " (params cut)");
    if (c->flags & FL_R_DONE) {
        fl_sb_put(sb, " = ");
        fl_render_result(sb, api, c->rec.result, 0);
        if (c->flags & FL_R_SKIPPED)
            fl_sb_put(sb, " (skipped by a plugin)");
    } else {
        fl_sb_put(sb, " (not returned)");
    }
    if (fn != NULL && fn->name[0] != '\0') {
        char name[FL_FUNC_NAME];
        memcpy(name, fn->name, sizeof name);
        name[sizeof name - 1] = '\0';
        fl_sb_put(sb, "  kernel ");
        fl_sb_text_str(sb, name, sizeof name);
    }
    fl_sb_put(sb, "\n");
}

static void fl_event_text(fl_sb *sb, const fl_file *f, int alive)
{
    const fl_event *e = &f->head.event;
    const cushim_api_info *api = fl_meta_api(e->api_id);
    switch (e->kind) {
    case FL_EV_STICKY:
    case FL_EV_ERROR:
        fl_sb_printf(sb, "event: #%" PRIu64 " %s returned ", e->seq, fl_api_name(e->api_id));
        fl_render_result(sb, api, e->result, 0);
        fl_sb_printf(sb, "%s on thread %" PRIu64 " at %+.6f s (dump %u)\n",
                     e->kind == FL_EV_STICKY ? " (a sticky error: the context is lost)" : "", e->tid, fl_rel(f, e->t),
                     e->number);
        break;
    case FL_EV_SIGNAL:
        fl_sb_printf(sb, "event: the process died of signal %d (%s)", e->signo, strsignal(e->signo));
        if (e->si_code > 0 && e->addr != 0)
            fl_sb_printf(sb, " at address 0x%" PRIx64, e->addr);
        fl_sb_printf(sb, " on thread %" PRIu64 " at %+.6f s\n", e->tid, fl_rel(f, e->t));
        break;
    case FL_EV_HANG:
        fl_sb_printf(sb, "event: #%" PRIu64 " %s had been blocked for %.3f s on thread %" PRIu64
                         " at %+.6f s (the hang watchdog; dump %u)\n",
                     e->seq, fl_api_name(e->api_id), (double)e->blocked_ns / 1e9, e->tid, fl_rel(f, e->t), e->number);
        break;
    case FL_EV_REQUEST:
        fl_sb_printf(sb, "event: a dump asked for by signal %d (%s) at %+.6f s (dump %u)\n", e->signo,
                     strsignal(e->signo), fl_rel(f, e->t), e->number);
        break;
    default:
        fl_sb_printf(sb, "event: none - the ring as it is; process %" PRId64 " is %s\n", f->head.pid,
                     alive ? "running" : "gone (killed, or it ended without flushing)");
    }
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

static void fl_pending_text(fl_sb *sb, const fl_all *A)
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
    fl_sb_put(sb, "\nlaunches, copies and sets since their stream's last successful synchronisation:\n");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t s = 0; s < (pass == 0 ? 1 : nstreams); s++) {
            if (pass == 1) {
                uint64_t stream = streams[s];
                if (stream == UINT64_MAX)
                    fl_sb_put(sb, "  stream unknown (given behind a pointer):\n");
                else if (stream == 0)
                    fl_sb_put(sb, "  stream 0x0 (the default stream):\n");
                else
                    fl_sb_printf(sb, "  stream 0x%" PRIx64 ":\n", stream);
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
        fl_sb_put(sb, "  none\n");
out:
    free(syncs);
    free(streams);
}

static void fl_text(fl_sb *sb, const fl_all *A, int alive)
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
    fl_sb_put(sb, "flight recorder of process ");
    fl_sb_printf(sb, "%" PRId64 " (", f->head.pid);
    fl_sb_text_str(sb, f->head.comm, sizeof f->head.comm);
    fl_sb_printf(sb, "), recording since %s: %s\n", when, f->path);
    fl_sb_printf(sb, "%u calls kept per thread, %u threads recorded, %zu calls in the file; recorded by ", f->head.n,
                 A->nslices, A->n);
    fl_sb_text_str(sb, f->head.host_version, sizeof f->head.host_version);
    fl_sb_put(sb, "\n");
    if (atomic_load(&f->h->threads_lost) || atomic_load(&f->h->allocs_lost) || atomic_load(&f->h->funcs_lost) ||
        A->bad)
        fl_sb_printf(sb, "not recorded: %" PRIu64 " threads (no slice left), %" PRIu64 " allocations (table full), %"
                         PRIu64 " kernels (table full); %zu bad records\n",
                     (uint64_t)atomic_load(&f->h->threads_lost), (uint64_t)atomic_load(&f->h->allocs_lost),
                     (uint64_t)atomic_load(&f->h->funcs_lost), A->bad);
    fl_event_text(sb, f, alive);

    fl_sb_put(sb, "\ncalls not returned:\n");
    for (size_t i = 0; i < A->n; i++)
        if (!(A->order[i]->flags & FL_R_DONE)) {
            const fl_call *c = A->order[i];
            fl_sb_printf(sb, "  thread %" PRIu64 ": ", c->rec.tid);
            fl_call_line(sb, A, c, "");
            if (A->t_end > c->rec.t_enter)
                fl_sb_printf(sb, "      in it for %.3f s %s\n", (double)(A->t_end - c->rec.t_enter) / 1e9,
                             alive && f->head.event.kind == FL_EV_NONE ? "now" : "at the latest time the file tells");
            running++;
        }
    if (running == 0)
        fl_sb_put(sb, "  none\n");

    fl_pending_text(sb, A);

    if (fl_file_allocs(f, &allocs, &nallocs) == 0) {
        uint64_t bytes = 0;
        for (size_t i = 0; i < nallocs; i++)
            bytes += allocs[i].size;
        fl_sb_printf(sb, "\nlive allocations: %zu, %" PRIu64 " bytes\n", nallocs, bytes);
        for (size_t i = 0; i < nallocs && i < 64; i++)
            fl_sb_printf(sb, "  0x%" PRIx64 "  %12" PRIu64 " bytes  made by #%" PRIu64 " %s on thread %u\n",
                         allocs[i].base, allocs[i].size, allocs[i].seq, fl_api_name(allocs[i].api_id),
                         allocs[i].tid);
        if (nallocs > 64)
            fl_sb_printf(sb, "  ... %zu more\n", nallocs - 64);
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
        fl_sb_printf(sb, "\nthread %" PRIu64 " (", s->tid);
        fl_sb_text_str(sb, name, sizeof name);
        fl_sb_printf(sb, ")%s: %" PRIu64 " calls, the last %zu kept\n",
                     atomic_load(&s->state) == FL_S_EXITED ? ", ended" : "", head, A->ncalls[i]);
        for (size_t j = 0; j < A->ncalls[i]; j++) {
            const fl_call *c = &A->calls[i][j];
            fl_call_line(sb, A, c, "  ");
            fl_pointers(sb, A, c, "          ", 0);
        }
    }
}

/* ---- JSON ---- */

static void fl_us(fl_sb *sb, const fl_file *f, uint64_t t)
{
    uint64_t rel = t > f->head.t0 ? t - f->head.t0 : 0;
    fl_sb_printf(sb, "%" PRIu64 ".%03u", rel / 1000, (unsigned)(rel % 1000));
}

static void fl_json(fl_sb *sb, const fl_all *A, int alive)
{
    const fl_file *f = A->f;
    const fl_event *e = &f->head.event;
    fl_sb ev = {0};
    fl_sb_put(sb, "{\"traceEvents\":[\n");
    fl_sb_printf(sb, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
                 f->head.pid);
    {
        char pn[64];
        snprintf(pn, sizeof pn, "%.16s (flight recorder)", f->head.comm);
        fl_sb_json_str(sb, pn, sizeof pn);
    }
    fl_sb_put(sb, "}}");
    for (uint32_t i = 0; i < A->nslices; i++) {
        const fl_slice *s = fl_file_slice(f, i);
        char name[17];
        if (atomic_load(&s->state) == FL_S_FREE)
            continue;
        memcpy(name, s->name, 16);
        name[16] = '\0';
        fl_sb_printf(sb, ",\n{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",\"name\":\"thread_name\",\"args\":"
                         "{\"name\":",
                     f->head.pid, s->tid);
        fl_sb_json_str(sb, name, sizeof name);
        fl_sb_put(sb, "}}");
    }
    for (size_t i = 0; i < A->n; i++) {
        const fl_call *c = A->order[i];
        const cushim_api_info *api = fl_meta_api(c->rec.api_id);
        const fl_func *fn = fl_kernel_of(A, c);
        uint64_t end = (c->flags & FL_R_DONE) ? c->rec.t_exit : A->t_end;
        char cats[200] = "";
        if (api != NULL)
            fl_meta_categories(api->categories, cats, sizeof cats);
        fl_sb_printf(sb, ",\n{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",\"ts\":", f->head.pid, c->rec.tid);
        fl_us(sb, f, c->rec.t_enter);
        fl_sb_put(sb, ",\"dur\":");
        fl_us(sb, f, f->head.t0 + (end > c->rec.t_enter ? end - c->rec.t_enter : 0));
        fl_sb_printf(sb, ",\"name\":\"%s\",\"cat\":\"%s\",\"args\":{\"seq\":%" PRIu64 ",\"depth\":%u",
                     fl_api_name(c->rec.api_id), cats[0] ? cats : "other", c->seq, (unsigned)c->rec.depth);
        if (api != NULL)
            fl_render_params(sb, api, c->data, c->rec.params_len, 1);
        if (fn != NULL && fn->name[0] != '\0') {
            char name[FL_FUNC_NAME];
            memcpy(name, fn->name, sizeof name);
            name[sizeof name - 1] = '\0';
            fl_sb_put(sb, ",\"kernel\":");
            fl_sb_json_str(sb, name, sizeof name);
        }
        {
            fl_sb p = {0};
            fl_pointers(&p, A, c, "", 1);
            if (p.len > 0) {
                fl_sb_put(sb, ",\"pointers\":");
                fl_sb_put(sb, p.p);
            }
            fl_sb_free(&p);
        }
        if (c->flags & FL_R_DONE) {
            fl_sb_put(sb, ",\"result\":");
            fl_render_result(sb, api, c->rec.result, 1);
            if (c->flags & FL_R_SKIPPED)
                fl_sb_put(sb, ",\"skipped\":true");
        } else {
            fl_sb_put(sb, ",\"unfinished\":true");
        }
        fl_sb_put(sb, "}}");
    }
    fl_event_text(&ev, f, alive);
    if (ev.len > 0 && ev.p[ev.len - 1] == '\n')
        ev.p[--ev.len] = '\0';
    if (e->kind != FL_EV_NONE) {
        fl_sb_printf(sb, ",\n{\"ph\":\"i\",\"s\":\"g\",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",\"ts\":", f->head.pid,
                     e->tid);
        fl_us(sb, f, e->t);
        fl_sb_put(sb, ",\"name\":");
        fl_sb_json_str(sb, ev.p != NULL ? ev.p : "event", 4096);
        fl_sb_put(sb, "}");
    }
    fl_sb_put(sb, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"cushim_flight\":{\"file\":");
    fl_sb_json_str(sb, f->path, sizeof f->path);
    fl_sb_printf(sb, ",\"pid\":%" PRId64 ",\"calls_per_thread\":%u,\"event_kind\":%u,\"event\":", f->head.pid,
                 f->head.n, e->kind);
    fl_sb_json_str(sb, ev.p != NULL ? ev.p : "", 4096);
    fl_sb_put(sb, "}}}\n");
    fl_sb_free(&ev);
}

int fl_report(FILE *out, const fl_file *f, int json, int alive)
{
    fl_all A;
    fl_sb sb = {0};
    int rc = 0;
    if (fl_load(&A, f) != 0) {
        fl_unload(&A);
        return -1;
    }
    fl_now_if_alive(&A, alive);
    if (json)
        fl_json(&sb, &A, alive);
    else
        fl_text(&sb, &A, alive);
    if (sb.oom || (sb.len > 0 && fwrite(sb.p, 1, sb.len, out) != sb.len))
        rc = -1;
    fl_sb_free(&sb);
    fl_unload(&A);
    return rc;
}
