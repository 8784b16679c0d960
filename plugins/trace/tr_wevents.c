/*
 * tr_wevents.c - the writer's NVTX and GPU events, and its small id map: NVTX
 * push/pop as B/E on the thread, start/end as async b/e, marks as instants;
 * GPU kernels, copies and sets as X events on a track per device and stream,
 * linked to the launching call by ac2g flow events (s at the call, f at the GPU
 * event) through the CUPTI correlation id -> our seq map.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_rec.h"
#include "tr_render.h"
#include "tr_wevents.h"
#include "tr_wfile.h"

/* Key k's home slot. */
static uint64_t map_home(const tw_map *m, uint64_t k)
{
    return (k * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
}

static uint64_t *map_slot(tw_map *m, uint64_t k)
{
    uint64_t h = map_home(m, k);
    while (m->k[h] != 0 && m->k[h] != k)
        h = (h + 1) & (m->cap - 1);
    return &m->k[h];
}

int tw_map_put(tw_map *m, uint64_t k, uint64_t v)
{
    uint64_t *s;
    if (k == 0)
        return -1;
    if ((m->n + 1) * 2 > m->cap) {
        tw_map nm = {0};
        nm.cap = m->cap ? m->cap * 2 : 1024;
        nm.k = calloc(nm.cap, sizeof *nm.k);
        nm.v = calloc(nm.cap, sizeof *nm.v);
        if (nm.k == NULL || nm.v == NULL) {
            free(nm.k);
            free(nm.v);
            return -1;
        }
        for (uint64_t i = 0; i < m->cap; i++)
            if (m->k[i]) {
                uint64_t *ns = map_slot(&nm, m->k[i]);
                *ns = m->k[i];
                nm.v[ns - nm.k] = m->v[i];
                nm.n++;
            }
        free(m->k);
        free(m->v);
        *m = nm;
    }
    s = map_slot(m, k);
    if (*s == 0)
        m->n++;
    *s = k;
    m->v[s - m->k] = v;
    return 0;
}

int tw_corr_put(tr_writer *w, uint64_t k, uint64_t v)
{
    if (w->corr.n >= TW_CORR_KEEP) {   /* a new generation; the one before it is forgotten */
        tw_map_free(&w->corr_old);
        w->corr_old = w->corr;
        memset(&w->corr, 0, sizeof w->corr);
    }
    return tw_map_put(&w->corr, k, v);
}

int tw_corr_get(const tr_writer *w, uint64_t k, uint64_t *v)
{
    return tw_map_get(&w->corr, k, v) || tw_map_get(&w->corr_old, k, v);
}

int tw_map_get(const tw_map *m, uint64_t k, uint64_t *v)
{
    if (m->cap == 0 || k == 0)
        return 0;
    uint64_t *s = map_slot((tw_map *)m, k);
    if (*s == 0)
        return 0;
    *v = m->v[s - m->k];
    return 1;
}

void tw_map_free(tw_map *m)
{
    free(m->k);
    free(m->v);
    memset(m, 0, sizeof *m);
}

int tw_map_del(tw_map *m, uint64_t k, uint64_t *v)
{
    uint64_t i, j, mask = m->cap - 1;
    if (m->cap == 0 || k == 0)
        return 0;
    i = (uint64_t)(map_slot(m, k) - m->k);
    if (m->k[i] == 0)
        return 0;
    if (v != NULL)
        *v = m->v[i];
    /* backward shift: a key after the hole moves into it unless its home slot lies cyclically in (i, j] */
    for (j = (i + 1) & mask; m->k[j] != 0; j = (j + 1) & mask) {
        uint64_t h = map_home(m, m->k[j]);
        if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
            continue;
        m->k[i] = m->k[j];
        m->v[i] = m->v[j];
        i = j;
    }
    m->k[i] = 0;
    m->v[i] = 0;
    m->n--;
    return 1;
}

/* An NVTX record's texts: blob 0 its message, blob 1 (a named domain's events only) the domain's name. */
static const char *rec_text(const tr_rec *r, uint32_t param, uint32_t *n)
{
    const tr_blob *b = tr_rec_blob(r, sizeof(tr_rec), param);
    if (b == NULL) {
        *n = 0;
        return "";
    }
    *n = (uint32_t)strnlen((const char *)(b + 1), b->len);
    return (const char *)(b + 1);
}

/* One NVTX event of record 'r' at 'ts': 'ph' named by the record's message; args.domain for a named domain's;
   'split': a range opened again after a pop of another domain closed the ranges above it (args.continued). */
static void nvtx_event(tr_writer *w, tw_thr *t, const char *ph, const tr_rec *r, uint64_t ts, int split)
{
    uint32_t n, dn;
    const char *msg = rec_text(r, 0, &n), *dom = rec_text(r, 1, &dn);
    tr_sb_printf(&w->sb, "{\"ph\":\"%s\",\"cat\":\"nvtx\",\"name\":", ph);
    tr_sb_json_str(&w->sb, ph[0] == 'E' ? "" : msg, ph[0] == 'E' ? 0 : n, TR_STR_MAX);
    tr_sb_printf(&w->sb, ",\"pid\":%d,\"tid\":%llu,\"ts\":", w->pid, (unsigned long long)t->tid);
    tr_sb_us(&w->sb, ts);
    if (r->type == TR_REC_NVTX_START || r->type == TR_REC_NVTX_END)
        tr_sb_printf(&w->sb, ",\"id\":%llu", (unsigned long long)r->seq);
    if (r->type == TR_REC_NVTX_MARK)
        tr_sb_puts(&w->sb, ",\"s\":\"t\"");
    if (ph[0] != 'E' && (dn > 0 || split)) {
        tr_sb_puts(&w->sb, ",\"args\":{");
        if (dn > 0) {
            tr_sb_puts(&w->sb, "\"domain\":");
            tr_sb_json_str(&w->sb, dom, dn, TR_STR_MAX);
        }
        if (split)
            tr_sb_puts(&w->sb, dn > 0 ? ",\"continued\":true" : "\"continued\":true");
        tr_sb_puts(&w->sb, "}");
    }
    tr_sb_puts(&w->sb, "}");
    tw_emit(w);
}

/* ---- nvtx_sum: the ranges' durations, named as 'cushim stats' reads them back from the file ---- */

/* A start (or end) waiting in w->nvtx_ids for its end (or start): its time, and the start's row name. */
typedef struct tw_se {
    uint64_t t;
    int is_end;
    char key[];
} tw_se;

/* The row of the range record 'r' (a push or a start) in style 'style' (tr_stats.h): STYLE SEP DOMAIN ':'
   MESSAGE, both texts as the file's events hold them (the domain in args.domain, none for the default one). */
static size_t nvtx_key(char *out, size_t cap, const char *style, const tr_rec *r)
{
    uint32_t n, dn;
    const char *msg = rec_text(r, 0, &n), *dom = rec_text(r, 1, &dn);
    size_t o = (size_t)snprintf(out, cap, "%s%c", style, TR_STATS_STYLE_SEP);
    o += tr_str_plain(out + o, cap - o, dom, dn, TR_STR_MAX);
    if (o + 1 < cap)
        out[o++] = ':';
    o += tr_str_plain(out + o, cap - o, msg, n, TR_STR_MAX);
    return o;
}
#define TW_NVTX_KEY (16 + 2 * (TR_STR_MAX + 4))

static void nvtx_range_done(tr_writer *w, const char *key, uint64_t t0, uint64_t t1)
{
    tr_stats_add(&w->nvtx, key, t1 > t0 ? t1 - t0 : 0);
}

/* A start or an end: the range's duration when the other one has come (on another thread, its record may be
   drained first), else it waits. */
static void nvtx_start_end(tr_writer *w, const tr_rec *r)
{
    uint64_t v;
    char key[TW_NVTX_KEY];
    int is_end = r->type == TR_REC_NVTX_END;
    size_t kn = is_end ? 0 : nvtx_key(key, sizeof key, TR_NVTX_STARTEND, r);
    tw_se *e;
    if (tw_map_del(&w->nvtx_ids, r->seq, &v)) {
        e = (tw_se *)(uintptr_t)v;
        if (e->is_end && !is_end)
            nvtx_range_done(w, key, r->t, e->t);
        else if (!e->is_end && is_end)
            nvtx_range_done(w, e->key, e->t, r->t);
        free(e);   /* a second end of one id (the program's mistake): both forgotten, as cushim stats does */
        return;
    }
    if (r->seq == 0)
        return;
    if (w->nvtx_ids.n >= TR_NVTX_IDS_MAX || (e = malloc(sizeof *e + kn + 1)) == NULL) {
        w->nvtx_ids_over++;
        return;
    }
    e->t = r->t;
    e->is_end = is_end;
    memcpy(e->key, key, kn);
    e->key[kn] = '\0';
    if (tw_map_put(&w->nvtx_ids, r->seq, (uint64_t)(uintptr_t)e) != 0) {
        free(e);
        w->nvtx_ids_over++;
    }
}

void tw_nvtx_ids_free(tr_writer *w)
{
    for (uint64_t i = 0; i < w->nvtx_ids.cap; i++)
        if (w->nvtx_ids.k[i] != 0)
            free((void *)(uintptr_t)w->nvtx_ids.v[i]);
    tw_map_free(&w->nvtx_ids);
}

/* A push: its B, and its copy on the thread's range stack (past TW_NVTX_DEPTH, or without memory, counted). */
static void nvtx_push(tr_writer *w, tw_thr *t, const tr_rec *r)
{
    tr_rec *c = NULL;
    nvtx_event(w, t, "B", r, r->t, 0);
    if (t->nvtx_over == 0 && t->nvtx_depth < TW_NVTX_DEPTH) {
        if (t->nvtx_depth == t->nvtx_cap) {
            uint32_t cap = t->nvtx_cap ? 2 * t->nvtx_cap : 8;
            tr_rec **s = realloc(t->nvtx, cap * sizeof *s);
            if (s != NULL) {
                t->nvtx = s;
                t->nvtx_cap = cap;
            }
        }
        if (t->nvtx_depth < t->nvtx_cap && (c = malloc(r->len)) != NULL) {
            memcpy(c, r, r->len);
            t->nvtx[t->nvtx_depth++] = c;
            return;
        }
    }
    t->nvtx_over++;
}

/* A pop of domain r->parent: each domain has its own stack (NVTX's rule), the file's B/E one per thread. The
   innermost range of that domain ends; ranges of other domains pushed after it and still open end with it and
   open again 1 ns later (args.continued), so that every B/E pair on the track nests. A pop with no recorded
   push of its domain (pushed before the trace began, or dropped) writes nothing. */
static void nvtx_pop(tr_writer *w, tw_thr *t, const tr_rec *r)
{
    uint32_t k;
    if (t->nvtx_over > 0) {   /* the uncounted ranges are the innermost: taken as nested */
        t->nvtx_over--;
        nvtx_event(w, t, "E", r, r->t, 0);
        return;
    }
    for (k = t->nvtx_depth; k > 0 && t->nvtx[k - 1]->parent != r->parent; k--)
        ;
    if (k-- == 0)
        return;
    {
        char key[TW_NVTX_KEY];
        nvtx_key(key, sizeof key, TR_NVTX_PUSHPOP, t->nvtx[k]);
        nvtx_range_done(w, key, t->nvtx[k]->t, r->t);
    }
    for (uint32_t i = t->nvtx_depth; i > k; i--)
        nvtx_event(w, t, "E", r, r->t, 0);
    for (uint32_t i = k + 1; i < t->nvtx_depth; i++)
        nvtx_event(w, t, "B", t->nvtx[i], r->t + 1, 1);
    free(t->nvtx[k]);
    memmove(&t->nvtx[k], &t->nvtx[k + 1], (t->nvtx_depth - k - 1) * sizeof *t->nvtx);
    t->nvtx_depth--;
}

void tw_on_nvtx(tr_writer *w, tw_thr *t, const tr_rec *r)
{
    static const char *const ph[] = {"B", "E", "b", "e", "i"};
    tw_thread_named(w, t);
    if (r->type == TR_REC_NVTX_PUSH)
        nvtx_push(w, t, r);
    else if (r->type == TR_REC_NVTX_POP)
        nvtx_pop(w, t, r);
    else
        nvtx_event(w, t, ph[r->type - TR_REC_NVTX_PUSH], r, r->t, 0);
    if (r->type == TR_REC_NVTX_START || r->type == TR_REC_NVTX_END)
        nvtx_start_end(w, r);
}

static tw_tname *tname_find(const tr_writer *w, uint64_t tid)
{
    for (uint32_t i = 0; i < w->ntnames; i++)
        if (w->tnames[i].tid == tid)
            return &w->tnames[i];
    return NULL;
}

const char *tw_tname_of(const tr_writer *w, uint64_t tid)
{
    const tw_tname *e = tname_find(w, tid);
    return e != NULL ? e->name : NULL;
}

void tw_on_tname(tr_writer *w, tw_thr *t, const tr_rec *r)
{
    uint32_t n;
    const char *name = rec_text(r, 0, &n);
    tw_tname *e = tname_find(w, r->seq);
    if (e == NULL && w->ntnames < TW_TNAMES_MAX) {
        if (w->ntnames == w->cap_tnames) {
            uint32_t cap = w->cap_tnames ? 2 * w->cap_tnames : 8;
            tw_tname *g = realloc(w->tnames, cap * sizeof *g);
            if (g != NULL) {
                w->tnames = g;
                w->cap_tnames = cap;
            }
        }
        if (w->ntnames < w->cap_tnames)
            e = &w->tnames[w->ntnames++];
    }
    if (n > sizeof e->name - 1)
        n = sizeof e->name - 1;
    if (e != NULL) {
        e->tid = r->seq;
        memcpy(e->name, name, n);
        e->name[n] = '\0';
    }
    if (t->tid == r->seq)
        t->named = 1;   /* named itself: not named again from /proc at its next event */
    tw_thread_name_event(w, r->seq, name, n);
}

static const char *copy_kind_name(uint32_t k)
{
    /* CUpti_ActivityMemcpyKind */
    static const char *const names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA",
                                        "DtoD", "HtoH", "PtoP"};
    return k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}


/* The i-th oldest deferred GPU record's slot. */
static tr_rec **gpu_slot(tr_writer *w, uint32_t i)
{
    return &w->gpu_pending[(w->gpu_head + i) & (w->gpu_cap_pending - 1)];
}

/* A GPU record whose correlation record has not come yet (CUPTI fills buffers per context and stream, so
   the API's record and its kernel's may complete in either order): kept until the end, or until
   TW_GPU_PENDING_MAX wait: then the oldest is written as it is (unlinked unless its id came meanwhile) - taken
   from the ring's head, so that a writer past the bound pays no move of the other 65,535 a record. */
static int gpu_defer(tr_writer *w, const tr_rec *r)
{
    tr_rec *c;
    _Static_assert((TW_GPU_PENDING_MAX & (TW_GPU_PENDING_MAX - 1)) == 0, "the ring's bound: a power of 2");
    if (w->gpu_npending >= TW_GPU_PENDING_MAX) {
        tr_rec *old = *gpu_slot(w, 0);
        w->gpu_head = (w->gpu_head + 1) & (w->gpu_cap_pending - 1);
        w->gpu_npending--;
        tw_on_gpu(w, old, 1);   /* last chance: written, never deferred again */
        free(old);
    }
    if (w->gpu_npending == w->gpu_cap_pending) {   /* full: twice the slots, the ring unwrapped */
        uint32_t cap = w->gpu_cap_pending ? w->gpu_cap_pending * 2 : 256;
        tr_rec **n = realloc(w->gpu_pending, cap * sizeof *n);
        if (n == NULL)
            return -1;
        /* the slots before the head follow the old end (all gpu_cap_pending slots are in use) */
        memcpy(n + w->gpu_cap_pending, n, w->gpu_head * sizeof *n);
        w->gpu_pending = n;
        w->gpu_cap_pending = cap;
    }
    if ((c = malloc(r->len)) == NULL)
        return -1;
    memcpy(c, r, r->len);
    *gpu_slot(w, w->gpu_npending) = c;
    w->gpu_npending++;
    return 0;
}

void tw_gpu_flush_pending(tr_writer *w)
{
    for (uint32_t i = 0; i < w->gpu_npending; i++)
        tw_on_gpu(w, *gpu_slot(w, i), 1);   /* last chance: written, never deferred again */
    tw_gpu_drop_pending(w);
}

void tw_gpu_drop_pending(tr_writer *w)
{
    for (uint32_t i = 0; i < w->gpu_npending; i++)
        free(*gpu_slot(w, i));
    w->gpu_npending = 0;
    w->gpu_head = 0;
}

void tw_on_gpu(tr_writer *w, const tr_rec *r, int last_chance)
{
    const tr_gpu *g = (const tr_gpu *)(r + 1);
    uint64_t ext = 0, tid = TW_GPU_TID_BASE + ((uint64_t)g->device << 20) + g->stream, named;
    uint32_t n;
    const char *kname = "";
    const tr_blob *b = tr_rec_blob(r, sizeof(tr_rec) + sizeof(tr_gpu), 0);
    char label[96];
    if (b != NULL) {
        kname = (const char *)(b + 1);
        n = (uint32_t)strnlen(kname, b->len);
    } else {
        n = 0;
    }
    if (!tw_map_get(&w->gpu_tracks, tid, &named)) {
        tw_map_put(&w->gpu_tracks, tid, 1);
        tr_sb_printf(&w->sb, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%llu,\"args\":{\"name\":"
                     "\"GPU %u stream %u\"}}", w->pid, (unsigned long long)tid, g->device, g->stream);
        tw_emit(w);
    }
    if (!tw_corr_get(w, g->correlation, &ext) && !last_chance && gpu_defer(w, r) == 0)
        return;
    if (g->kind == TR_GPU_KERNEL) {
        snprintf(label, sizeof label, "kernel");
        tr_sb_puts(&w->sb, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":");
        tr_sb_json_str(&w->sb, kname, n, TR_NAME_MAX);
    } else {
        snprintf(label, sizeof label, "%s %s", g->kind == TR_GPU_MEMCPY ? "Memcpy" : "Memset",
                 g->kind == TR_GPU_MEMCPY ? copy_kind_name(g->copy_kind) : "");
        tr_sb_printf(&w->sb, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", g->kind == TR_GPU_MEMCPY ? "memcpy" : "memset");
        tr_sb_json_str(&w->sb, label, strlen(label), 64);
    }
    tr_sb_printf(&w->sb, ",\"pid\":%d,\"tid\":%llu,\"ts\":", w->pid, (unsigned long long)tid);
    tr_sb_us(&w->sb, g->start);
    tr_sb_puts(&w->sb, ",\"dur\":");
    tr_sb_us(&w->sb, g->end > g->start ? g->end - g->start : 0);
    tr_sb_printf(&w->sb, ",\"args\":{\"device\":%u,\"stream\":%u,\"correlation\":%u", g->device, g->stream,
                 g->correlation);
    if (ext)
        tr_sb_printf(&w->sb, ",\"external id\":%llu", (unsigned long long)ext);
    if (g->kind == TR_GPU_KERNEL)
        tr_sb_printf(&w->sb, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", g->grid[0], g->grid[1], g->grid[2],
                     g->block[0], g->block[1], g->block[2]);
    else
        tr_sb_printf(&w->sb, ",\"bytes\":%llu", (unsigned long long)g->bytes);
    tr_sb_puts(&w->sb, "}}");
    tw_emit(w);
    if (g->kind == TR_GPU_KERNEL) {   /* named as cushim stats reads the event's name back */
        char small[512], *plain = small;   /* a long name's copy on the heap: the writer may run on a small stack */
        size_t cap = 2 * (size_t)(n < TR_NAME_MAX ? n : TR_NAME_MAX) + 8;
        if (cap > sizeof small && (plain = malloc(cap)) == NULL)
            plain = small, cap = sizeof small;
        else if (cap < sizeof small)
            cap = sizeof small;
        tr_str_plain(plain, cap, kname, n, TR_NAME_MAX);
        tr_stats_add(&w->kern, n ? plain : "?", g->end > g->start ? g->end - g->start : 0);
        if (plain != small)
            free(plain);
    } else {   /* the operation as cushim stats names it from the event's name */
        const char *op = tr_memop_label(label);
        tr_stats_add(&w->memt, op, g->end > g->start ? g->end - g->start : 0);
        tr_stats_add(&w->mems, op, g->bytes);
    }
    if (ext) {
        tr_sb_printf(&w->sb, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%llu,\"pid\":%d,"
                     "\"tid\":%llu,\"ts\":", (unsigned long long)ext, w->pid, (unsigned long long)tid);
        tr_sb_us(&w->sb, g->start);
        tr_sb_puts(&w->sb, "}");
        tw_emit(w);
    }
}

/* ---- thread names ---- */

void tw_thread_named(tr_writer *w, tw_thr *t)
{
    char name[64];
    if (t->named)
        return;
    t->named = 1;
    /* the name the thread had at its first record (tr_tbuf.name), not /proc's now: the same in every run
       however late the writer gets here, the thread alive or not */
    if (tw_tname_of(w, t->tid) != NULL)   /* named by the program (nvtxNameOsThread) */
        snprintf(name, sizeof name, "%s", tw_tname_of(w, t->tid));
    else if (t->name[0] != '\0')
        snprintf(name, sizeof name, "%s", t->name);
    else
        snprintf(name, sizeof name, "thread %llu", (unsigned long long)t->tid);
    tw_thread_name_event(w, t->tid, name, strlen(name));
}

void tw_thread_name_event(tr_writer *w, uint64_t tid, const char *name, size_t n)
{
    tr_sb_printf(&w->sb, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%llu,\"args\":{\"name\":", w->pid,
                 (unsigned long long)tid);
    tr_sb_json_str(&w->sb, name, n, 64);
    tr_sb_puts(&w->sb, "}}");
    tw_emit(w);
}
