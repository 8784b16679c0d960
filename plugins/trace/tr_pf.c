/*
 * tr_pf.c - Perfetto's protobuf trace format, encoded by hand (tr_pf.h). Each
 * event the writer renders (the JSON object its JSON format writes: one
 * renderer table decides every value's text for both formats) is read back
 * (tr_pfev.c: a reader of that one shape, not of JSON at large) and written as
 * packets:
 *   'M' process_name / thread_name  -> TrackDescriptor (process, thread; a GPU
 *                                      stream's track, id >= 2^30, a named track)
 *   'X' -> TrackEvent SLICE_BEGIN + SLICE_END; its 's'/'f' flow event, which the
 *          writer puts right after it, as flow_ids / terminating_flow_ids
 *   'B' 'E' -> SLICE_BEGIN / SLICE_END on the thread's track; 'b' 'e' the same on
 *          a track of the async range's own; 'i' -> INSTANT
 *   args -> debug annotations: numbers as uint/int/double, booleans, "0x..."
 *          addresses as pointer values, strings (interned up to TR_PF_ISTR_MAX
 *          bytes), arrays and objects as legacy JSON values.
 * Field numbers: protos/perfetto/trace/trace_packet.proto, the track_event protos,
 * interned_data/interned_data.proto, clock_snapshot.proto of Perfetto.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_pf.h"

typedef tr_pf_span pf_span;
typedef tr_pf_ev pf_ev;

/* wire types */
enum { PW_VARINT = 0, PW_I64 = 1, PW_LEN = 2 };
/* TracePacket */
enum { TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12, TP_SEQ_FLAGS = 13,
       TP_CLOCK_SNAPSHOT = 6, TP_DEFAULTS = 59, TP_TRACK_DESCRIPTOR = 60 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
/* TrackEvent */
enum { TE_CATEGORY_IIDS = 3, TE_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_NAME = 23,
       TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3 };
/* DebugAnnotation */
enum { DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6, DA_POINTER = 7,
       DA_JSON = 9, DA_STRING_IID = 17 };
/* InternedData and its entries (iid = 1, name/str = 2) */
enum { ID_CATEGORIES = 1, ID_NAMES = 2, ID_ANNOTATION_NAMES = 3, ID_STRING_VALUES = 29 };
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
enum { TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5 };
enum { PD_PID = 1, PD_NAME = 6, PD_LABELS = 8 };
enum { THD_PID = 1, THD_TID = 2, THD_NAME = 5 };
/* ClockSnapshot, TracePacketDefaults */
enum { CS_CLOCKS = 1, CS_PRIMARY = 2, CL_ID = 1, CL_TS = 2, DEF_CLOCK_ID = 58 };
enum { CLOCK_MONO = 3, CLOCK_BOOT = 6 };

#define PF_GPU_TID_BASE 0x40000000ull   /* the writer's GPU stream tracks (tr_wstate.h TW_GPU_TID_BASE) */

/* ---- encoder ---- */

void tr_pf_varint(tr_sb *sb, uint64_t v)
{
    char b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (char)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (char)v;
    tr_sb_putn(sb, b, n);
}

void tr_pf_tag(tr_sb *sb, uint32_t field, uint32_t wire)
{
    tr_pf_varint(sb, (uint64_t)field << 3 | wire);
}

void tr_pf_uint(tr_sb *sb, uint32_t field, uint64_t v)
{
    tr_pf_tag(sb, field, PW_VARINT);
    tr_pf_varint(sb, v);
}

void tr_pf_bytes(tr_sb *sb, uint32_t field, const void *p, size_t n)
{
    tr_pf_tag(sb, field, PW_LEN);
    tr_pf_varint(sb, n);
    tr_sb_putn(sb, n ? (const char *)p : "", n);
}

static void pf_fixed64(tr_sb *sb, uint32_t field, uint64_t v)
{
    char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (char)(v >> (8 * i));
    tr_pf_tag(sb, field, PW_I64);
    tr_sb_putn(sb, b, 8);
}

static void pf_sub(tr_sb *sb, uint32_t field, const tr_sb *m)
{
    tr_pf_bytes(sb, field, m->p, m->len);
}

/* ---- interning ---- */

static uint64_t pf_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void pf_tab_clear(tr_pf_tab *t)
{
    for (uint32_t i = 0; i < t->cap; i++)
        free(t->key[i]);
    free(t->key);
    free(t->len);
    free(t->iid);
    memset(t, 0, sizeof *t);
}

static int pf_tab_grow(tr_pf_tab *t)
{
    tr_pf_tab g = {0};
    g.cap = t->cap ? t->cap * 2 : 256;
    g.key = calloc(g.cap, sizeof *g.key);
    g.len = calloc(g.cap, sizeof *g.len);
    g.iid = calloc(g.cap, sizeof *g.iid);
    if (g.key == NULL || g.len == NULL || g.iid == NULL) {
        free(g.key);
        free(g.len);
        free(g.iid);
        return -1;
    }
    for (uint32_t i = 0; i < t->cap; i++) {
        if (t->key[i] == NULL)
            continue;
        uint32_t j = (uint32_t)pf_hash(t->key[i], t->len[i]) & (g.cap - 1);
        while (g.key[j] != NULL)
            j = (j + 1) & (g.cap - 1);
        g.key[j] = t->key[i];
        g.len[j] = t->len[i];
        g.iid[j] = t->iid[i];
    }
    g.n = t->n;
    free(t->key);
    free(t->len);
    free(t->iid);
    *t = g;
    return 0;
}

static void pf_reset_interning(tr_pf *pf)
{
    pf_tab_clear(&pf->names);
    pf_tab_clear(&pf->cats);
    pf_tab_clear(&pf->anames);
    pf_tab_clear(&pf->svals);
    pf->intern_bytes = 0;
    pf->cleared = 1;
    pf->resets++;
}

/* The iid of 's' in table 't'; a new one is defined in pf->in under InternedData field 'field'. 0: no memory. */
static uint64_t pf_intern(tr_pf *pf, tr_pf_tab *t, uint32_t field, const char *s, size_t n)
{
    uint32_t j;
    char *k;
    if (t->cap != 0) {
        for (j = (uint32_t)pf_hash(s, n) & (t->cap - 1); t->key[j] != NULL; j = (j + 1) & (t->cap - 1))
            if (t->len[j] == n && memcmp(t->key[j], s, n) == 0)
                return t->iid[j];
    }
    if ((t->n + 1) * 2 > t->cap && pf_tab_grow(t) != 0)
        return 0;
    if ((k = malloc(n + 1)) == NULL)
        return 0;
    memcpy(k, s, n);
    k[n] = '\0';
    for (j = (uint32_t)pf_hash(s, n) & (t->cap - 1); t->key[j] != NULL; j = (j + 1) & (t->cap - 1))
        ;
    t->key[j] = k;
    t->len[j] = (uint32_t)n;
    t->iid[j] = ++t->n;
    pf->intern_bytes += n;
    /* the entry: {iid = 1, name/str = 2} */
    pf->tmp.len = 0;
    tr_pf_uint(&pf->tmp, 1, t->iid[j]);
    tr_pf_bytes(&pf->tmp, 2, s, n);
    pf_sub(&pf->in, field, &pf->tmp);
    return t->iid[j];
}

static int pf_tracks_add(tr_pf *pf, uint64_t uuid)   /* 1: new */
{
    uint32_t j;
    if ((pf->ntracks + 1) * 2 > pf->tracks_cap) {
        uint32_t cap = pf->tracks_cap ? pf->tracks_cap * 2 : 64;
        uint64_t *g = calloc(cap, sizeof *g);
        if (g == NULL)
            return -1;
        for (uint32_t i = 0; i < pf->tracks_cap; i++) {
            if (pf->tracks[i] == 0)
                continue;
            for (j = (uint32_t)(pf->tracks[i] * 0x9e3779b97f4a7c15ull >> 32) & (cap - 1); g[j] != 0;
                 j = (j + 1) & (cap - 1))
                ;
            g[j] = pf->tracks[i];
        }
        free(pf->tracks);
        pf->tracks = g;
        pf->tracks_cap = cap;
    }
    for (j = (uint32_t)(uuid * 0x9e3779b97f4a7c15ull >> 32) & (pf->tracks_cap - 1); pf->tracks[j] != 0;
         j = (j + 1) & (pf->tracks_cap - 1))
        if (pf->tracks[j] == uuid)
            return 0;
    pf->tracks[j] = uuid;
    pf->ntracks++;
    return 1;
}

/* The iid of a JSON string's text (quotes excluded), decoded only when it holds an escape. */
static uint64_t pf_intern_json(tr_pf *pf, tr_pf_tab *t, uint32_t field, pf_span v)
{
    uint64_t iid;
    if (memchr(v.p, '\\', v.n) == NULL)
        return pf_intern(pf, t, field, v.n ? v.p : "", v.n);
    tr_pfev_decode(&pf->pk, v);
    iid = pf_intern(pf, t, field, pf->pk.p ? pf->pk.p : "", pf->pk.len);
    pf->pk.len = 0;
    return iid;
}

/* ---- packets ---- */

/* pf->pk (a packet's body: fields other than the common ones) as a TracePacket, with the interned entries in
   pf->in; 'ts' 0: none. */
static void pf_packet(tr_pf *pf, uint64_t ts, int incremental)
{
    tr_sb *o = &pf->out;
    size_t len;
    pf->tmp.len = 0;
    if (ts != 0)
        tr_pf_uint(&pf->tmp, TP_TIMESTAMP, ts);
    tr_pf_uint(&pf->tmp, TP_SEQ_ID, TR_PF_SEQ_ID);
    if (incremental) {
        tr_pf_uint(&pf->tmp, TP_SEQ_FLAGS, SEQ_NEEDS | (pf->cleared ? SEQ_CLEARED : 0));
        pf->cleared = 0;
        if (pf->in.len > 0)
            pf_sub(&pf->tmp, TP_INTERNED, &pf->in);
    }
    len = pf->tmp.len + pf->pk.len;
    tr_pf_tag(o, 1, PW_LEN);   /* Trace.packet */
    tr_pf_varint(o, len);
    tr_sb_putn(o, pf->tmp.p ? pf->tmp.p : "", pf->tmp.len);
    tr_sb_putn(o, pf->pk.p ? pf->pk.p : "", pf->pk.len);
    pf->in.len = 0;
    pf->pk.len = 0;
}

int tr_pf_start(tr_pf *pf, int pid, uint64_t mono_ns, uint64_t boot_ns)
{
    pf->pid = pid;
    pf->cleared = 1;
    /* the clocks, and this sequence's default: timestamps are CLOCK_MONOTONIC's (the shim's now_ns) */
    pf->pk.len = pf->tmp.len = pf->ann.len = 0;
    tr_pf_uint(&pf->ann, CL_ID, CLOCK_MONO);
    tr_pf_uint(&pf->ann, CL_TS, mono_ns);
    pf_sub(&pf->ev, CS_CLOCKS, &pf->ann);
    pf->ann.len = 0;
    tr_pf_uint(&pf->ann, CL_ID, CLOCK_BOOT);
    tr_pf_uint(&pf->ann, CL_TS, boot_ns);
    pf_sub(&pf->ev, CS_CLOCKS, &pf->ann);
    tr_pf_uint(&pf->ev, CS_PRIMARY, CLOCK_BOOT);
    pf_sub(&pf->pk, TP_CLOCK_SNAPSHOT, &pf->ev);
    pf->ev.len = 0;
    pf_packet(pf, boot_ns, 0);
    tr_pf_uint(&pf->ev, DEF_CLOCK_ID, CLOCK_MONO);
    pf_sub(&pf->pk, TP_DEFAULTS, &pf->ev);
    pf->ev.len = 0;
    pf_packet(pf, 0, 1);   /* SEQ_INCREMENTAL_STATE_CLEARED: the defaults and interning start here */
    return pf->out.oom ? -1 : 0;
}

/* A TrackDescriptor packet from pf->ev (the descriptor's body). */
static void pf_descriptor(tr_pf *pf)
{
    pf_sub(&pf->pk, TP_TRACK_DESCRIPTOR, &pf->ev);
    pf->ev.len = 0;
    pf_packet(pf, 0, 0);
}

static void pf_thread_track(tr_pf *pf, uint64_t tid, const char *name, size_t n)
{
    pf->ev.len = 0;
    tr_pf_uint(&pf->ev, TD_UUID, TR_PF_UUID_THREAD(tid));
    tr_pf_uint(&pf->ev, TD_PARENT, TR_PF_UUID_PROC(pf->pid));
    if (tid >= PF_GPU_TID_BASE) {   /* a GPU stream: a track of the process, named */
        if (name != NULL)
            tr_pf_bytes(&pf->ev, TD_NAME, name, n);
    } else {
        pf->ann.len = 0;
        tr_pf_uint(&pf->ann, THD_PID, (uint64_t)(uint32_t)pf->pid);
        tr_pf_uint(&pf->ann, THD_TID, tid);
        if (name != NULL)
            tr_pf_bytes(&pf->ann, THD_NAME, name, n);
        pf_sub(&pf->ev, TD_THREAD, &pf->ann);
    }
    pf_descriptor(pf);
}

static void pf_need_thread(tr_pf *pf, uint64_t tid)
{
    if (pf_tracks_add(pf, TR_PF_UUID_THREAD(tid)) == 1)
        pf_thread_track(pf, tid, NULL, 0);
}

/* One annotation into pf->ev: "key":value of args. */
static void pf_annotation(tr_pf *pf, pf_span k, pf_span v)
{
    tr_sb *a = &pf->ann;
    uint64_t iid;
    a->len = 0;
    iid = pf_intern_json(pf, &pf->anames, ID_ANNOTATION_NAMES, k);   /* (pk is free while the event is built) */
    tr_pf_uint(a, DA_NAME_IID, iid);
    if (v.n == 0) {
        return;
    } else if (v.p[0] == '"') {
        pf_span s = tr_pfev_unquote(v);
        int hex = s.n > 2 && s.n <= 18 && s.p[0] == '0' && s.p[1] == 'x' && (s.n == 3 || s.p[2] != '0');
        uint64_t x = 0;
        for (size_t i = 2; hex && i < s.n; i++) {
            char c = s.p[i];
            if (c >= '0' && c <= '9')
                x = x * 16 + (uint64_t)(c - '0');
            else if (c >= 'a' && c <= 'f')
                x = x * 16 + (uint64_t)(c - 'a' + 10);
            else
                hex = 0;
        }
        if (hex) {
            tr_pf_uint(a, DA_POINTER, x);
        } else {
            if (s.n <= TR_PF_ISTR_MAX && memchr(s.p, '\\', s.n) == NULL) {
                tr_pf_uint(a, DA_STRING_IID, pf_intern(pf, &pf->svals, ID_STRING_VALUES, s.n ? s.p : "", s.n));
            } else {
                tr_pfev_decode(&pf->pk, s);
                if (pf->pk.len <= TR_PF_ISTR_MAX)
                    tr_pf_uint(a, DA_STRING_IID, pf_intern(pf, &pf->svals, ID_STRING_VALUES,
                                                          pf->pk.p ? pf->pk.p : "", pf->pk.len));
                else
                    tr_pf_bytes(a, DA_STRING, pf->pk.p, pf->pk.len);
                pf->pk.len = 0;
            }
        }
    } else if (v.p[0] == '{' || v.p[0] == '[' || v.p[0] == 'n') {
        tr_pf_bytes(a, DA_JSON, v.p, v.n);
    } else if (v.p[0] == 't' || v.p[0] == 'f') {
        tr_pf_uint(a, DA_BOOL, v.p[0] == 't');
    } else {
        int integer = 1;
        for (size_t i = v.p[0] == '-' ? 1 : 0; i < v.n; i++)
            if (v.p[i] < '0' || v.p[i] > '9')
                integer = 0;
        if (integer && v.n <= 19 && v.p[0] != '-') {
            tr_pf_uint(a, DA_UINT, tr_pfev_u64(v));
        } else if (integer && v.n <= 19) {
            pf_span m = {v.p + 1, v.n - 1};
            tr_pf_uint(a, DA_INT, (uint64_t)-(int64_t)tr_pfev_u64(m));
        } else {
            char num[64];
            double d;
            uint64_t bits;
            char b[8];
            size_t n = v.n < sizeof num - 1 ? v.n : sizeof num - 1;
            memcpy(num, v.p, n);
            num[n] = '\0';
            d = strtod(num, NULL);   /* the writer's numbers are in the C locale's form; so is this thread's */
            memcpy(&bits, &d, sizeof bits);
            for (int i = 0; i < 8; i++)
                b[i] = (char)(bits >> (8 * i));
            tr_pf_tag(a, DA_DOUBLE, PW_I64);
            tr_sb_putn(a, b, 8);
        }
    }
    pf_sub(&pf->ev, TE_ANNOTATIONS, a);
}

/* A TrackEvent packet: 'type' on 'track' at 'ts', named (SLICE_END: no name), with the event's args. */
static void pf_track_event(tr_pf *pf, const pf_ev *ev, int type, uint64_t track, uint64_t ts, int with_args,
                           uint64_t flow, int flow_kind)
{
    tr_sb *e = &pf->ev;
    e->len = 0;
    tr_pf_uint(e, TE_TYPE, (uint64_t)type);
    tr_pf_uint(e, TE_TRACK_UUID, track);
    if (ev->cat.n > 0 && type != TYPE_SLICE_END)   /* (an end takes its slice's) */
        tr_pf_uint(e, TE_CATEGORY_IIDS, pf_intern(pf, &pf->cats, ID_CATEGORIES, ev->cat.p, ev->cat.n));
    if (type != TYPE_SLICE_END) {
        tr_pf_uint(e, TE_NAME_IID, pf_intern_json(pf, &pf->names, ID_NAMES, ev->name));
    }
    if (with_args && ev->args.n > 0) {
        const char *p = ev->args.p, *end = ev->args.p + ev->args.n;
        pf_span k, v;
        while (tr_pfev_member(&p, end, &k, &v))
            pf_annotation(pf, k, v);
    }
    if (flow_kind == 's')
        pf_fixed64(e, TE_FLOW_IDS, flow);
    else if (flow_kind == 'f')
        pf_fixed64(e, TE_TERMINATING_FLOW_IDS, flow);
    pf_sub(&pf->pk, TP_TRACK_EVENT, e);
    e->len = 0;
    pf_packet(pf, ts, 1);
}

void tr_pf_end(tr_pf *pf)
{
    const pf_ev *ev = &pf->pend_ev;
    if (pf->pend.len > 0) {
        pf_need_thread(pf, ev->tid);
        pf_track_event(pf, ev, TYPE_SLICE_BEGIN, TR_PF_UUID_THREAD(ev->tid), ev->ts, 1, pf->pend_flow,
                       pf->pend_flow_kind);
        pf_track_event(pf, ev, TYPE_SLICE_END, TR_PF_UUID_THREAD(ev->tid), ev->ts + ev->dur, 0, 0, 0);
        pf->pend.len = 0;
        pf->pend_flow_kind = 0;
    }
}

int tr_pf_event(tr_pf *pf, const char *json, size_t n)
{
    pf_ev ev;
    if (pf->intern_bytes > TR_PF_INTERN_BYTES || pf->names.n >= TR_PF_INTERN_MAX || pf->cats.n >= TR_PF_INTERN_MAX ||
        pf->anames.n >= TR_PF_INTERN_MAX || pf->svals.n >= TR_PF_INTERN_MAX) {
        tr_pf_end(pf);   /* (the held event is written with the interning it was read under) */
        pf_reset_interning(pf);
    }
    if (n > 9 && memcmp(json, "{\"ph\":\"X\"", 9) == 0) {   /* a complete event: held, read once, from the copy */
        tr_pf_end(pf);
        tr_sb_putn(&pf->pend, json, n);
        if (pf->pend.oom || tr_pfev_parse(&pf->pend_ev, pf->pend.p, pf->pend.len) != 0) {
            pf->pend.len = 0;
            pf->pend.oom = 0;
            return -1;
        }
        if (pf->pend_ev.ts > pf->t_last)
            pf->t_last = pf->pend_ev.ts;
        return pf->out.oom ? -1 : 0;
    }
    if (tr_pfev_parse(&ev, json, n) != 0)
        return -1;
    if (ev.ts > pf->t_last)
        pf->t_last = ev.ts;
    else if (ev.ts == 0)
        ev.ts = pf->t_last;   /* metadata: at the latest time seen */
    if ((ev.ph == 's' || ev.ph == 'f') && pf->pend.len > 0 && ev.has_id && pf->pend_flow_kind == 0) {
        if (pf->pend_ev.tid == ev.tid && pf->pend_ev.ts == ev.ts) {
            pf->pend_flow = ev.id;
            pf->pend_flow_kind = ev.ph;
            tr_pf_end(pf);
            return pf->out.oom ? -1 : 0;
        }
    }
    tr_pf_end(pf);
    switch (ev.ph) {
    case 'X':   /* (written another way: held as above) */
        tr_sb_putn(&pf->pend, json, n);
        if (pf->pend.oom || tr_pfev_parse(&pf->pend_ev, pf->pend.p, pf->pend.len) != 0)
            pf->pend.len = 0;
        break;
    case 'M':
        tr_pfev_decode(&pf->pk, ev.args_name);
        pf->tmp.len = 0;
        tr_sb_putn(&pf->tmp, pf->pk.p ? pf->pk.p : "", pf->pk.len);
        pf->pk.len = 0;
        if (PF_IS(ev.name, "process_name")) {
            pf_tracks_add(pf, TR_PF_UUID_PROC(pf->pid));
            pf->ev.len = pf->ann.len = 0;
            tr_pf_uint(&pf->ev, TD_UUID, TR_PF_UUID_PROC(pf->pid));
            tr_pf_uint(&pf->ann, PD_PID, (uint64_t)(uint32_t)pf->pid);
            tr_pf_bytes(&pf->ann, PD_NAME, pf->tmp.p, pf->tmp.len);
            if (ev.args_start.n > 0 && ev.args_start.n < 24) {
                char label[64];
                int k = snprintf(label, sizeof label, TR_PF_START_LABEL "%.*s", (int)ev.args_start.n,
                                 ev.args_start.p);
                tr_pf_bytes(&pf->ann, PD_LABELS, label, (size_t)k);
            }
            pf_sub(&pf->ev, TD_PROCESS, &pf->ann);
            pf_descriptor(pf);
        } else if (PF_IS(ev.name, "thread_name")) {
            char name[4200];
            size_t k = pf->tmp.len < sizeof name ? pf->tmp.len : sizeof name;
            memcpy(name, pf->tmp.p ? pf->tmp.p : "", k);
            pf_tracks_add(pf, TR_PF_UUID_THREAD(ev.tid));
            pf_thread_track(pf, ev.tid, name, k);
        } else {   /* the file's own figures (the JSON's otherData): an instant on the process's track */
            pf_track_event(pf, &ev, TYPE_INSTANT, TR_PF_UUID_PROC(pf->pid), ev.ts, 1, 0, 0);
        }
        break;
    case 'B':
    case 'E':
    case 'i':
        pf_need_thread(pf, ev.tid);
        pf_track_event(pf, &ev, ev.ph == 'B' ? TYPE_SLICE_BEGIN : ev.ph == 'E' ? TYPE_SLICE_END : TYPE_INSTANT,
                       ev.ph == 'i' && ev.s.n == 1 && ev.s.p[0] != 't' ? TR_PF_UUID_PROC(pf->pid)
                                                                         : TR_PF_UUID_THREAD(ev.tid),
                       ev.ts, 1, 0, 0);
        break;
    case 'b':
    case 'e': {
        uint64_t uuid = TR_PF_UUID_ASYNC(ev.id);
        if (pf_tracks_add(pf, uuid) == 1) {
            pf->ev.len = 0;
            tr_pf_uint(&pf->ev, TD_UUID, uuid);
            tr_pf_uint(&pf->ev, TD_PARENT, TR_PF_UUID_PROC(pf->pid));
            if (ev.ph == 'b') {
                tr_pfev_decode(&pf->pk, ev.name);
                tr_pf_bytes(&pf->ev, TD_NAME, pf->pk.p ? pf->pk.p : "", pf->pk.len);
                pf->pk.len = 0;
            }
            pf_descriptor(pf);
        }
        pf_track_event(pf, &ev, ev.ph == 'b' ? TYPE_SLICE_BEGIN : TYPE_SLICE_END, uuid, ev.ts, 1, 0, 0);
        break;
    }
    case 's':
    case 'f': {   /* a flow event not right after its slice: an instant carrying it */
        pf_ev fe = ev;
        pf_need_thread(pf, ev.tid);
        pf_track_event(pf, &fe, TYPE_INSTANT, TR_PF_UUID_THREAD(ev.tid), ev.ts, 0, ev.id, ev.ph);
        break;
    }
    default:
        return -1;
    }
    return pf->out.oom || pf->pend.oom ? -1 : 0;
}

void tr_pf_free(tr_pf *pf)
{
    pf_tab_clear(&pf->names);
    pf_tab_clear(&pf->cats);
    pf_tab_clear(&pf->anames);
    pf_tab_clear(&pf->svals);
    tr_sb_free(&pf->out);
    tr_sb_free(&pf->ev);
    tr_sb_free(&pf->in);
    tr_sb_free(&pf->tmp);
    tr_sb_free(&pf->ann);
    tr_sb_free(&pf->pk);
    tr_sb_free(&pf->pend);
    free(pf->tracks);
    memset(pf, 0, sizeof *pf);
}
