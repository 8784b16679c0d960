/*
 * fl_report.c - what 'cushim flight dump' prints of a flight recorder file (fl_report.h): the calls loaded from
 * every thread's slice and ordered by their start, the kernel of a launch, each address a call passes attributed
 * to an allocation, the event in words; then the text summary (fl_text.c) or the trace-event JSON (fl_json.c).
 */
#define _GNU_SOURCE
#include "fl_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fl_report_int.h"
#include "fl_shape.h"

#define FL_NEAR (1u << 20)   /* an address this far past an allocation's end still names it */

/* Calls in the order they began (seq is unique, not ordered across threads). */
static int fl_by_time(const void *x, const void *y)
{
    const fl_call *a = *(fl_call *const *)x, *b = *(fl_call *const *)y;
    if (a->rec.t_enter != b->rec.t_enter)
        return a->rec.t_enter < b->rec.t_enter ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int fl_load(fl_all *A, const fl_file *f)
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
void fl_now_if_alive(fl_all *A, int alive)
{
    struct timespec ts;
    uint64_t now;
    if (!alive || A->f->head.event.kind != FL_EV_NONE || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return;
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (now > A->t_end)
        A->t_end = now;
}

void fl_unload(fl_all *A)
{
    for (uint32_t i = 0; A->calls != NULL && i < A->nslices; i++)
        free(A->calls[i]);
    free(A->calls);
    free(A->ncalls);
    free(A->order);
}

double fl_rel(const fl_file *f, uint64_t t)
{
    return ((double)t - (double)f->head.t0) / 1e9;
}

const char *fl_api_name(uint32_t id)
{
    const cushim_api_info *a = fl_meta_api(id);
    return a != NULL ? a->name : "(unknown API)";
}

uint64_t fl_u64_at(const fl_call *c, uint32_t off)
{
    uint64_t v = 0;
    if (off + 8 <= c->rec.params_len)
        memcpy(&v, c->data + off, 8);
    return v;
}

/* A launch's kernel: its function entry, else (a runtime launch) the one of the driver launch right inside it. */
const fl_func *fl_kernel_of(const fl_all *A, const fl_call *c)
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

static void fl_where_text(tr_sb *sb, const fl_all *A, const fl_call *c, uint64_t v)
{
    fl_where w;
    if (v == 0) {
        tr_sb_puts(sb, "NULL");
        return;
    }
    fl_file_where(A->f, v, FL_NEAR, &w);
    switch (w.kind) {
    case FL_AT_INSIDE:
        tr_sb_printf(sb, "inside 0x%" PRIx64 " (%" PRIu64 " bytes, offset %" PRIu64 ") made by #%" PRIu64 " %s%s",
                     w.a.base, w.a.size, w.off, w.a.seq, fl_api_name(w.a.api_id),
                     w.a.t > c->rec.t_enter ? " after this call (not live at it)" : "");
        return;
    case FL_AT_PAST:
        if (w.off == w.a.size)
            tr_sb_printf(sb, "not inside any live allocation: one past the end of 0x%" PRIx64 " (%" PRIu64
                             " bytes) made by #%" PRIu64 " %s",
                         w.a.base, w.a.size, w.a.seq, fl_api_name(w.a.api_id));
        else
            tr_sb_printf(sb, "not inside any live allocation: %" PRIu64 " bytes past the end of 0x%" PRIx64
                             " (%" PRIu64 " bytes) made by #%" PRIu64 " %s",
                         w.off - w.a.size, w.a.base, w.a.size, w.a.seq, fl_api_name(w.a.api_id));
        return;
    case FL_AT_FREED:
        if (w.a.free_t > c->rec.t_enter && w.a.t <= c->rec.t_enter)   /* live at this call, released since */
            tr_sb_printf(sb, "inside 0x%" PRIx64 " (%" PRIu64 " bytes, offset %" PRIu64 ") made by #%" PRIu64
                             " %s, freed after this call by #%" PRIu64 " %s",
                         w.a.base, w.a.size, w.off, w.a.seq, fl_api_name(w.a.api_id), w.a.free_seq,
                         fl_api_name(w.a.free_api));
        else
            tr_sb_printf(sb, "not inside any live allocation: inside 0x%" PRIx64 " (%" PRIu64 " bytes, offset %"
                             PRIu64 ") made by #%" PRIu64 " %s, freed by #%" PRIu64 " %s before this call",
                         w.a.base, w.a.size, w.off, w.a.seq, fl_api_name(w.a.api_id), w.a.free_seq,
                         fl_api_name(w.a.free_api));
        return;
    default:
        tr_sb_puts(sb, "not inside any live allocation");
    }
}

/* Every address the call passes, one per line after 'indent': address parameters, then a launch's 8-byte kernel
   arguments. 'json': a JSON object of the same ("name": "text"). */
void fl_pointers(tr_sb *sb, const fl_all *A, const fl_call *c, const char *indent, int json)
{
    const cushim_api_info *api = fl_meta_api(c->rec.api_id);
    const fl_func *fn;
    int first = 1;
    tr_sb text = {0};
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
            tr_sb_puts(sb, first ? "{" : ",");
            fl_json_cstr(sb, p->name, 128);
            tr_sb_printf(sb, ":\"0x%" PRIx64 ": ", v);
            tr_sb_puts(sb, text.p != NULL ? text.p : "");   /* our own text: no quote, no control byte */
            tr_sb_puts(sb, "\"");
        } else {
            tr_sb_printf(sb, "%s%s = 0x%" PRIx64 ": %s\n", indent, p->name, v, text.p != NULL ? text.p : "");
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
                tr_sb_printf(&text, "%" PRIu64 " (a small value: not an address)", v);
            else
                fl_where_text(&text, A, c, v);
            if (json) {
                tr_sb_puts(sb, first ? "{" : ",");
                tr_sb_printf(sb, "\"arg %u\":\"0x%" PRIx64 ": %s\"", i, v, text.p != NULL ? text.p : "");
            } else {
                tr_sb_printf(sb, "%sarg %u = 0x%" PRIx64 ": %s\n", indent, i, v, text.p != NULL ? text.p : "");
            }
            first = 0;
        }
    }
    if (json && !first)
        tr_sb_puts(sb, "}");
    tr_sb_free(&text);
}

void fl_event_text(tr_sb *sb, const fl_file *f, int alive)
{
    const fl_event *e = &f->head.event;
    const cushim_api_info *api = fl_meta_api(e->api_id);
    switch (e->kind) {
    case FL_EV_STICKY:
    case FL_EV_ERROR:
        tr_sb_printf(sb, "event: #%" PRIu64 " %s returned ", e->seq, fl_api_name(e->api_id));
        fl_render_result(sb, api, e->result, 0);
        tr_sb_printf(sb, "%s on thread %" PRIu64 " at %+.6f s (dump %u)\n",
                     e->kind == FL_EV_STICKY ? " (a sticky error: the context is lost)" : "", e->tid, fl_rel(f, e->t),
                     e->number);
        break;
    case FL_EV_SIGNAL:
        tr_sb_printf(sb, "event: the process died of signal %d (%s)", e->signo, strsignal(e->signo));
        if (e->si_code > 0 && e->addr != 0)
            tr_sb_printf(sb, " at address 0x%" PRIx64, e->addr);
        tr_sb_printf(sb, " on thread %" PRIu64 " at %+.6f s\n", e->tid, fl_rel(f, e->t));
        break;
    case FL_EV_HANG:
        tr_sb_printf(sb, "event: #%" PRIu64 " %s had been blocked for %.3f s on thread %" PRIu64
                         " at %+.6f s (the hang watchdog; dump %u)\n",
                     e->seq, fl_api_name(e->api_id), (double)e->blocked_ns / 1e9, e->tid, fl_rel(f, e->t), e->number);
        break;
    case FL_EV_REQUEST:
        tr_sb_printf(sb, "event: a dump asked for by signal %d (%s) at %+.6f s (dump %u)\n", e->signo,
                     strsignal(e->signo), fl_rel(f, e->t), e->number);
        break;
    default:
        tr_sb_printf(sb, "event: none - the ring as it is; process %" PRId64 " is %s\n", f->head.pid,
                     alive ? "running" : "gone (killed, or it ended without flushing)");
    }
}

int fl_report(FILE *out, const fl_file *f, int json, int alive)
{
    fl_all A;
    tr_sb sb = {0};
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
    tr_sb_free(&sb);
    fl_unload(&A);
    return rc;
}
