/*
 * fl_json.c - a flight recorder file as Chrome trace events (the Perfetto UI opens them): one complete event per
 * call with its parameters, kernel, attributed pointers and result in args; thread names; the event as an
 * instant event and in otherData.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fl_report_int.h"

static void fl_us(tr_sb *sb, const fl_file *f, uint64_t t)
{
    uint64_t rel = t > f->head.t0 ? t - f->head.t0 : 0;
    tr_sb_printf(sb, "%" PRIu64 ".%03u", rel / 1000, (unsigned)(rel % 1000));
}

void fl_json(tr_sb *sb, const fl_all *A, int alive)
{
    const fl_file *f = A->f;
    const fl_event *e = &f->head.event;
    tr_sb ev = {0};
    tr_sb_puts(sb, "{\"traceEvents\":[\n");
    tr_sb_printf(sb, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
                 f->head.pid);
    {
        char pn[64];
        snprintf(pn, sizeof pn, "%.16s (flight recorder)", f->head.comm);
        fl_json_cstr(sb, pn, sizeof pn);
    }
    tr_sb_puts(sb, "}}");
    for (uint32_t i = 0; i < A->nslices; i++) {
        const fl_slice *s = fl_file_slice(f, i);
        char name[17];
        if (atomic_load(&s->state) == FL_S_FREE)
            continue;
        memcpy(name, s->name, 16);
        name[16] = '\0';
        tr_sb_printf(sb, ",\n{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",\"name\":\"thread_name\",\"args\":"
                         "{\"name\":",
                     f->head.pid, s->tid);
        fl_json_cstr(sb, name, sizeof name);
        tr_sb_puts(sb, "}}");
    }
    for (size_t i = 0; i < A->n; i++) {
        const fl_call *c = A->order[i];
        const cushim_api_info *api = fl_meta_api(c->rec.api_id);
        const fl_func *fn = fl_kernel_of(A, c);
        uint64_t end = (c->flags & FL_R_DONE) ? c->rec.t_exit : A->t_end;
        char cats[200] = "";
        if (api != NULL)
            fl_meta_categories(api->categories, cats, sizeof cats);
        tr_sb_printf(sb, ",\n{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",\"ts\":", f->head.pid, c->rec.tid);
        fl_us(sb, f, c->rec.t_enter);
        tr_sb_puts(sb, ",\"dur\":");
        fl_us(sb, f, f->head.t0 + (end > c->rec.t_enter ? end - c->rec.t_enter : 0));
        tr_sb_printf(sb, ",\"name\":\"%s\",\"cat\":\"%s\",\"args\":{\"seq\":%" PRIu64 ",\"depth\":%u",
                     fl_api_name(c->rec.api_id), cats[0] ? cats : "other", c->seq, (unsigned)c->rec.depth);
        if (api != NULL)
            fl_render_params(sb, api, c->data, c->rec.params_len, 1);
        if (fn != NULL && fn->name[0] != '\0') {
            char name[FL_FUNC_NAME];
            memcpy(name, fn->name, sizeof name);
            name[sizeof name - 1] = '\0';
            tr_sb_puts(sb, ",\"kernel\":");
            fl_json_cstr(sb, name, sizeof name);
        }
        {
            tr_sb p = {0};
            fl_pointers(&p, A, c, "", 1);
            if (p.len > 0) {
                tr_sb_puts(sb, ",\"pointers\":");
                tr_sb_puts(sb, p.p);
            }
            tr_sb_free(&p);
        }
        if (c->flags & FL_R_DONE) {
            tr_sb_puts(sb, ",\"result\":");
            fl_render_result(sb, api, c->rec.result, 1);
            if (c->flags & FL_R_SKIPPED)
                tr_sb_puts(sb, ",\"skipped\":true");
        } else {
            tr_sb_puts(sb, ",\"unfinished\":true");
        }
        tr_sb_puts(sb, "}}");
    }
    fl_event_text(&ev, f, alive);
    if (ev.len > 0 && ev.p[ev.len - 1] == '\n')
        ev.p[--ev.len] = '\0';
    if (e->kind != FL_EV_NONE) {
        tr_sb_printf(sb, ",\n{\"ph\":\"i\",\"s\":\"g\",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",\"ts\":", f->head.pid,
                     e->tid);
        fl_us(sb, f, e->t);
        tr_sb_puts(sb, ",\"name\":");
        fl_json_cstr(sb, ev.p != NULL ? ev.p : "event", 4096);
        tr_sb_puts(sb, "}");
    }
    tr_sb_puts(sb, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"cushim_flight\":{\"file\":");
    fl_json_cstr(sb, f->path, sizeof f->path);
    tr_sb_printf(sb, ",\"pid\":%" PRId64 ",\"calls_per_thread\":%u,\"t0_ns\":%" PRIu64 ",\"clock\":\"%s\"",
                 f->head.pid, f->head.n, f->head.t0, f->head.clock == FL_CLOCK_TSC ? "tsc" : "host");
    if (f->head.clock == FL_CLOCK_TSC)
        tr_sb_printf(sb, ",\"tsc_ghz\":%.6f", 1.0 / f->ns_per_tick);
    tr_sb_printf(sb, ",\"event_kind\":%u,\"event\":", e->kind);
    fl_json_cstr(sb, ev.p != NULL ? ev.p : "", 4096);
    tr_sb_puts(sb, "}}}\n");
    tr_sb_free(&ev);
}
