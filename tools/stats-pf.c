/*
 * stats-pf.c - 'cushim stats' reads Perfetto protobuf traces (stats-pf.h).
 * Field numbers from Perfetto's protos (trace_packet.proto, the track_event protos,
 * interned_data.proto), as plugins/trace/tr_pf.c writes them; fields this
 * reader does not need are skipped by wire type, so a file with more in it is
 * read as well. Fuzzed with the JSON reader (tests/fuzz/fuzz_stats.c).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <zlib.h>

#include "stats-pf.h"

#define SP_NAME_MAX 8192u   /* a name kept (the plugin's longest: a kernel's 4096 bytes, decoded) */
#define SP_SEQS_MAX 1024u

typedef struct sp_str {
    char *p;
    size_t n;
} sp_str;

typedef struct sp_ient {   /* an interned string: key (gen, field, iid) */
    uint64_t gen, iid;
    uint32_t field;
    char *s;
} sp_ient;

typedef struct sp_open {   /* a slice begun and not yet ended */
    char *name, *cat;
    uint64_t ts, bytes;
} sp_open;

typedef struct sp_track {
    uint64_t uuid;           /* 0: empty slot */
    int kind;                /* 0 unknown, 1 process, 2 thread, 3 other (a GPU stream, an async range) */
    uint64_t pid, tid;
    sp_open *stack;
    uint32_t depth, cap, over;
} sp_track;

typedef struct sp {
    sp_ient *in;
    uint64_t in_cap, in_n;
    sp_track *tr;
    uint64_t tr_cap, tr_n;
    uint64_t seq_id[SP_SEQS_MAX], seq_gen[SP_SEQS_MAX], gens;
    uint32_t nseqs;
    uint64_t pid;
    char *why;
    size_t cap;
} sp;

int sp_is_perfetto(int c)
{
    return c == 0x0a;
}

/* ---- wire format ---- */

static int sp_varint(const unsigned char **pp, const unsigned char *e, uint64_t *v)
{
    const unsigned char *p = *pp;
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (p >= e)
            return -1;
        x |= (uint64_t)(*p & 0x7f) << s;
        if (!(*p++ & 0x80)) {
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

typedef struct sp_field {
    uint32_t num, wt;
    uint64_t v;                   /* varint, fixed64 */
    const unsigned char *p;       /* length-delimited */
    size_t n;
} sp_field;

/* The next field of [*pp, e): 1, 0 at the end, -1 malformed. */
static int sp_next(const unsigned char **pp, const unsigned char *e, sp_field *f)
{
    uint64_t key, n;
    if (*pp >= e)
        return 0;
    if (sp_varint(pp, e, &key) != 0 || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (uint32_t)(key & 7);
    switch (f->wt) {
    case 0:
        return sp_varint(pp, e, &f->v) == 0 ? 1 : -1;
    case 1:
        if (e - *pp < 8)
            return -1;
        f->v = 0;
        for (int i = 7; i >= 0; i--)
            f->v = f->v << 8 | (*pp)[i];
        *pp += 8;
        return 1;
    case 5:
        if (e - *pp < 4)
            return -1;
        *pp += 4;
        return 1;
    case 2:
        if (sp_varint(pp, e, &n) != 0 || n > (uint64_t)(e - *pp))
            return -1;
        f->p = *pp;
        f->n = (size_t)n;
        *pp += n;
        return 1;
    default:
        return -1;
    }
}

/* ---- state ---- */

static int sp_fail(sp *s, const char *what)
{
    if (s->why[0] == '\0')
        snprintf(s->why, s->cap, "%s", what);
    return -1;
}

static uint64_t sp_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint64_t sp_ikey(uint64_t gen, uint32_t field, uint64_t iid)
{
    return sp_mix(gen * 0x9e3779b97f4a7c15ull ^ (uint64_t)field << 56 ^ iid);
}

static const char *sp_iget(const sp *s, uint64_t gen, uint32_t field, uint64_t iid)
{
    if (s->in_cap == 0)
        return NULL;
    for (uint64_t j = sp_ikey(gen, field, iid) & (s->in_cap - 1); s->in[j].s != NULL; j = (j + 1) & (s->in_cap - 1))
        if (s->in[j].gen == gen && s->in[j].field == field && s->in[j].iid == iid)
            return s->in[j].s;
    return NULL;
}

static int sp_iput(sp *s, uint64_t gen, uint32_t field, uint64_t iid, const unsigned char *p, size_t n)
{
    uint64_t j;
    char *c;
    if (s->in_n >= SP_INTERN_MAX)
        return sp_fail(s, "more interned strings than this reader keeps");
    if ((s->in_n + 1) * 2 > s->in_cap) {
        uint64_t cap = s->in_cap ? s->in_cap * 2 : 1024;
        sp_ient *g = calloc(cap, sizeof *g);
        if (g == NULL)
            return sp_fail(s, "out of memory");
        for (uint64_t i = 0; i < s->in_cap; i++) {
            if (s->in[i].s == NULL)
                continue;
            for (j = sp_ikey(s->in[i].gen, s->in[i].field, s->in[i].iid) & (cap - 1); g[j].s != NULL;
                 j = (j + 1) & (cap - 1))
                ;
            g[j] = s->in[i];
        }
        free(s->in);
        s->in = g;
        s->in_cap = cap;
    }
    if (n > SP_NAME_MAX)
        n = SP_NAME_MAX;
    for (j = sp_ikey(gen, field, iid) & (s->in_cap - 1); s->in[j].s != NULL; j = (j + 1) & (s->in_cap - 1))
        if (s->in[j].gen == gen && s->in[j].field == field && s->in[j].iid == iid)
            break;
    if ((c = malloc(n + 1)) == NULL)
        return sp_fail(s, "out of memory");
    memcpy(c, p, n);
    c[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (c[i] == '\0')
            c[i] = '?';
    if (s->in[j].s != NULL) {   /* defined again: the later one */
        free(s->in[j].s);
    } else {
        s->in_n++;
    }
    s->in[j] = (sp_ient){.gen = gen, .iid = iid, .field = field, .s = c};
    return 0;
}

static sp_track *sp_track_of(sp *s, uint64_t uuid, int add)
{
    uint64_t j;
    if (uuid == 0)
        return NULL;
    if (s->tr_cap != 0)
        for (j = sp_mix(uuid) & (s->tr_cap - 1); s->tr[j].uuid != 0; j = (j + 1) & (s->tr_cap - 1))
            if (s->tr[j].uuid == uuid)
                return &s->tr[j];
    if (!add)
        return NULL;
    if (s->tr_n >= SP_TRACKS_MAX) {
        sp_fail(s, "more tracks than this reader keeps");
        return NULL;
    }
    if ((s->tr_n + 1) * 2 > s->tr_cap) {
        uint64_t cap = s->tr_cap ? s->tr_cap * 2 : 64;
        sp_track *g = calloc(cap, sizeof *g);
        if (g == NULL) {
            sp_fail(s, "out of memory");
            return NULL;
        }
        for (uint64_t i = 0; i < s->tr_cap; i++) {
            if (s->tr[i].uuid == 0)
                continue;
            for (j = sp_mix(s->tr[i].uuid) & (cap - 1); g[j].uuid != 0; j = (j + 1) & (cap - 1))
                ;
            g[j] = s->tr[i];
        }
        free(s->tr);
        s->tr = g;
        s->tr_cap = cap;
    }
    for (j = sp_mix(uuid) & (s->tr_cap - 1); s->tr[j].uuid != 0; j = (j + 1) & (s->tr_cap - 1))
        ;
    s->tr[j].uuid = uuid;
    s->tr_n++;
    return &s->tr[j];
}

/* The generation of sequence 'seq' (0: never cleared, nothing interned on it). */
static uint64_t *sp_gen(sp *s, uint64_t seq)
{
    for (uint32_t i = 0; i < s->nseqs; i++)
        if (s->seq_id[i] == seq)
            return &s->seq_gen[i];
    if (s->nseqs == SP_SEQS_MAX) {
        sp_fail(s, "more packet sequences than this reader keeps");
        return NULL;
    }
    s->seq_id[s->nseqs] = seq;
    s->seq_gen[s->nseqs] = 0;
    return &s->seq_gen[s->nseqs++];
}

static char *sp_dup(const unsigned char *p, size_t n)
{
    char *c;
    if (n > SP_NAME_MAX)
        n = SP_NAME_MAX;
    if ((c = malloc(n + 1)) == NULL)
        return NULL;
    memcpy(c, p, n);
    c[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (c[i] == '\0')
            c[i] = '?';
    return c;
}

/* ---- packets ---- */

static int sp_descriptor(sp *s, const unsigned char *p, const unsigned char *e)
{
    sp_field f, g;
    uint64_t uuid = 0, pid = 0, tid = 0;
    int kind = 3, r;
    sp_track *t;
    while ((r = sp_next(&p, e, &f)) == 1) {
        if (f.num == 1 && f.wt == 0) {
            uuid = f.v;
        } else if ((f.num == 3 || f.num == 4) && f.wt == 2) {   /* ProcessDescriptor, ThreadDescriptor */
            const unsigned char *q = f.p, *qe = f.p + f.n;
            kind = f.num == 3 ? 1 : 2;
            while ((r = sp_next(&q, qe, &g)) == 1) {
                if (g.num == 1 && g.wt == 0)
                    pid = g.v;
                else if (g.num == 2 && g.wt == 0 && kind == 2)
                    tid = g.v;
            }
            if (r < 0)
                return sp_fail(s, "a malformed process or thread descriptor");
        }
    }
    if (r < 0)
        return sp_fail(s, "a malformed track descriptor");
    if ((t = sp_track_of(s, uuid, 1)) == NULL)
        return s->why[0] != '\0' ? -1 : sp_fail(s, "a track descriptor without a uuid");
    t->kind = kind;
    t->pid = kind == 3 ? s->pid : pid;
    t->tid = kind == 3 ? uuid : tid;
    if (kind == 1)
        s->pid = pid;
    return 0;
}

typedef struct sp_te {
    int type;
    uint64_t track, name_iid, cat_iid, bytes, summary;
    sp_str name, cat, domain;
    const char *domain_i;
    int continued, has_summary;
} sp_te;

static int sp_annotation(sp *s, uint64_t gen, const unsigned char *p, const unsigned char *e, sp_te *te)
{
    sp_field f;
    const char *key = NULL;
    sp_str inl = {NULL, 0};
    uint64_t uv = 0, sv_iid = 0;
    int has_u = 0, has_b = 0, has_si = 0, r;
    sp_str sv = {NULL, 0};
    while ((r = sp_next(&p, e, &f)) == 1) {
        if (f.num == 1 && f.wt == 0 && (key = sp_iget(s, gen, 3, f.v)) == NULL)
            return sp_fail(s, "an annotation name's interned id used before its definition");
        if (f.num == 10 && f.wt == 2) {
            inl.p = (char *)(uintptr_t)f.p;
            inl.n = f.n;
        }
        if ((f.num == 3 || f.num == 4) && f.wt == 0) {
            uv = f.v;
            has_u = 1;
        } else if (f.num == 2 && f.wt == 0) {
            uv = f.v;
            has_b = 1;
        } else if (f.num == 6 && f.wt == 2) {
            sv.p = (char *)(uintptr_t)f.p;
            sv.n = f.n;
        } else if (f.num == 17 && f.wt == 0) {
            sv_iid = f.v;
            has_si = 1;
        }
    }
    if (r < 0)
        return sp_fail(s, "a malformed debug annotation");
#define KEY(lit) ((key != NULL && !strcmp(key, lit)) || (inl.p != NULL && inl.n == sizeof lit - 1 && \
                                                          !memcmp(inl.p, lit, sizeof lit - 1)))
    if (KEY("bytes") && has_u) {
        te->bytes = uv;
    } else if (KEY("summary_exact_values") && has_u) {
        te->summary = uv;
        te->has_summary = 1;
    } else if (KEY("continued") && has_b) {
        te->continued = uv != 0;
    } else if (KEY("domain")) {
        if (has_si && (te->domain_i = sp_iget(s, gen, 29, sv_iid)) == NULL)
            return sp_fail(s, "a string value's interned id used before its definition");
        if (sv.p != NULL)
            te->domain = sv;
    }
#undef KEY
    return 0;
}

static int sp_packet(sp *s, const unsigned char *p, const unsigned char *e, void (*on_event)(void *, const sp_event *),
                     void *ctx, unsigned long long *budget)
{
    sp_field f;
    uint64_t seq = 0, flags = 0, ts = 0, *gen;
    const unsigned char *interned = NULL, *tev = NULL, *desc = NULL;
    size_t ni = 0, nt = 0, nd = 0;
    int r;
    while ((r = sp_next(&p, e, &f)) == 1) {
        if (f.num == 8 && f.wt == 0)
            ts = f.v;
        else if (f.num == 10 && f.wt == 0)
            seq = f.v;
        else if (f.num == 13 && f.wt == 0)
            flags = f.v;
        else if (f.num == 12 && f.wt == 2)
            interned = f.p, ni = f.n;
        else if (f.num == 11 && f.wt == 2)
            tev = f.p, nt = f.n;
        else if (f.num == 60 && f.wt == 2)
            desc = f.p, nd = f.n;
    }
    if (r < 0)
        return sp_fail(s, "a malformed packet");
    if ((gen = sp_gen(s, seq)) == NULL)
        return -1;
    if (flags & 1)
        *gen = ++s->gens;
    if (interned != NULL) {
        const unsigned char *q = interned, *qe = interned + ni;
        sp_field g, h;
        if (*gen == 0)
            return sp_fail(s, "interned data on a sequence never cleared");
        while ((r = sp_next(&q, qe, &g)) == 1) {
            uint64_t iid = 0;
            const unsigned char *sp_ = NULL, *hq, *he;
            size_t sn = 0;
            if (g.wt != 2 || (g.num != 1 && g.num != 2 && g.num != 3 && g.num != 29))
                continue;
            hq = g.p;
            he = g.p + g.n;
            while ((r = sp_next(&hq, he, &h)) == 1) {
                if (h.num == 1 && h.wt == 0)
                    iid = h.v;
                else if (h.num == 2 && h.wt == 2)
                    sp_ = h.p, sn = h.n;
            }
            if (r < 0)
                return sp_fail(s, "a malformed interned entry");
            if (sp_iput(s, *gen, g.num, iid, sp_ != NULL ? sp_ : (const unsigned char *)"", sn) != 0)
                return -1;
        }
        if (r < 0)
            return sp_fail(s, "malformed interned data");
    }
    if (desc != NULL && sp_descriptor(s, desc, desc + nd) != 0)
        return -1;
    if (tev != NULL) {
        const unsigned char *q = tev, *qe = tev + nt;
        sp_te te;
        sp_track *t;
        const char *name, *cat;
        char *dn = NULL, *dc = NULL;
        memset(&te, 0, sizeof te);
        while ((r = sp_next(&q, qe, &f)) == 1) {
            if (f.num == 9 && f.wt == 0)
                te.type = (int)f.v;
            else if (f.num == 11 && f.wt == 0)
                te.track = f.v;
            else if (f.num == 10 && f.wt == 0)
                te.name_iid = f.v;
            else if (f.num == 23 && f.wt == 2)
                te.name.p = (char *)(uintptr_t)f.p, te.name.n = f.n;
            else if (f.num == 3 && f.wt == 0 && te.cat_iid == 0)
                te.cat_iid = f.v;
            else if (f.num == 22 && f.wt == 2 && te.cat.p == NULL)
                te.cat.p = (char *)(uintptr_t)f.p, te.cat.n = f.n;
            else if (f.num == 4 && f.wt == 2 && sp_annotation(s, *gen, f.p, f.p + f.n, &te) != 0)
                return -1;
        }
        if (r < 0)
            return sp_fail(s, "a malformed track event");
        if (te.has_summary)
            *budget += te.summary;
        if (on_event == NULL)
            return 0;
        name = te.name_iid ? sp_iget(s, *gen, 2, te.name_iid) : NULL;
        cat = te.cat_iid ? sp_iget(s, *gen, 1, te.cat_iid) : NULL;
        if ((te.name_iid && name == NULL) || (te.cat_iid && cat == NULL))
            return sp_fail(s, "an event's interned name or category used before its definition");
        if (name == NULL && te.name.p != NULL)
            name = dn = sp_dup((const unsigned char *)te.name.p, te.name.n);
        if (cat == NULL && te.cat.p != NULL)
            cat = dc = sp_dup((const unsigned char *)te.cat.p, te.cat.n);
        if ((t = sp_track_of(s, te.track, 0)) == NULL) {
            free(dn);
            free(dc);
            return 0;   /* no track described: not a thread's or a range's (a counter, another producer's) */
        }
        /* an NVTX range's begin and end go on as they come (an end names no category: its slice's, the
           innermost open one on the track) */
        if (te.type == 2 && cat == NULL && t->over == 0 && t->depth > 0 &&
            !strcmp(t->stack[t->depth - 1].cat, "nvtx")) {
            sp_open *o = &t->stack[--t->depth];
            free(o->name);
            free(o->cat);
            cat = "nvtx";
        }
        if (cat != NULL && !strcmp(cat, "nvtx") && (te.type == 1 || te.type == 2)) {
            char dom[SP_NAME_MAX + 1];
            sp_event ev = {.ph = t->kind == 2 ? (te.type == 1 ? 'B' : 'E') : (te.type == 1 ? 'b' : 'e'),
                           .cat = cat, .name = name != NULL ? name : "", .domain = "", .pid = t->pid,
                           .tid = t->kind == 2 ? t->tid : 0, .id = t->kind == 2 ? 0 : t->uuid >> 2,
                           .ts = ts, .continued = te.continued};
            if (te.domain_i != NULL) {
                ev.domain = te.domain_i;
            } else if (te.domain.p != NULL) {
                size_t n = te.domain.n < SP_NAME_MAX ? te.domain.n : SP_NAME_MAX;
                memcpy(dom, te.domain.p, n);
                dom[n] = '\0';
                ev.domain = dom;
            }
            on_event(ctx, &ev);
        }
        if (te.type == 1) {
            if (t->depth == SP_DEPTH_MAX) {
                t->over++;
            } else {
                if (t->depth == t->cap) {
                    uint32_t cap = t->cap ? t->cap * 2 : 4;
                    sp_open *g = realloc(t->stack, cap * sizeof *g);
                    if (g == NULL) {
                        free(dn);
                        free(dc);
                        return sp_fail(s, "out of memory");
                    }
                    t->stack = g;
                    t->cap = cap;
                }
                t->stack[t->depth].name = strdup(name != NULL ? name : "");
                t->stack[t->depth].cat = strdup(cat != NULL ? cat : "");
                t->stack[t->depth].ts = ts;
                t->stack[t->depth].bytes = te.bytes;
                if (t->stack[t->depth].name == NULL || t->stack[t->depth].cat == NULL) {
                    free(t->stack[t->depth].name);
                    free(t->stack[t->depth].cat);
                    free(dn);
                    free(dc);
                    return sp_fail(s, "out of memory");
                }
                t->depth++;
            }
        } else if (te.type == 2 && (cat == NULL || strcmp(cat, "nvtx") != 0)) {
            if (t->over > 0) {
                t->over--;
            } else if (t->depth > 0) {
                sp_open *o = &t->stack[--t->depth];
                sp_event ev = {.ph = 'X', .cat = o->cat, .name = o->name, .domain = "", .pid = t->pid,
                               .tid = t->tid, .ts = o->ts, .dur = ts >= o->ts ? ts - o->ts : 0, .bytes = o->bytes};
                on_event(ctx, &ev);
                free(o->name);
                free(o->cat);
            }
        }
        free(dn);
        free(dc);
    }
    return 0;
}

static void sp_free(sp *s)
{
    for (uint64_t i = 0; i < s->in_cap; i++)
        free(s->in[i].s);
    free(s->in);
    for (uint64_t i = 0; i < s->tr_cap; i++) {
        for (uint32_t k = 0; k < s->tr[i].depth; k++) {
            free(s->tr[i].stack[k].name);
            free(s->tr[i].stack[k].cat);
        }
        free(s->tr[i].stack);
    }
    free(s->tr);
}

int sp_read(const char *path, void (*on_event)(void *ctx, const sp_event *e), void *ctx,
            unsigned long long *budget, int *cut, char *why, size_t cap)
{
    gzFile f = gzopen(path, "rb");
    unsigned char *buf = NULL;
    sp s;
    int rc = 0;
    memset(&s, 0, sizeof s);
    s.why = why;
    s.cap = cap;
    why[0] = '\0';
    *cut = 0;
    if (f == NULL) {
        snprintf(why, cap, "cannot be opened");
        return -1;
    }
    gzbuffer(f, 1u << 16);
    for (;;) {
        uint64_t key = 0, n = 0;
        int c, sh = 0, k;
        /* the tag: field 1, length-delimited (Trace.packet); then the length */
        if ((c = gzgetc(f)) < 0)
            break;   /* the end (or a read error: a cut gzip stream) */
        key = (uint64_t)c;
        if (key != 0x0a) {
            rc = sp_fail(&s, "not a Perfetto trace (a field other than Trace.packet)");
            break;
        }
        for (sh = 0; sh < 64; sh += 7) {
            if ((c = gzgetc(f)) < 0)
                break;
            n |= (uint64_t)(c & 0x7f) << sh;
            if (!(c & 0x80))
                break;
        }
        if (c < 0) {
            *cut = 1;
            break;
        }
        if (sh >= 64 || n > SP_PACKET_MAX) {
            rc = sp_fail(&s, "a packet longer than 16 MiB: not a trace the plugin wrote");
            break;
        }
        free(buf);
        if ((buf = malloc(n ? n : 1)) == NULL) {
            rc = sp_fail(&s, "out of memory");
            break;
        }
        if ((k = gzread(f, buf, (unsigned)n)) < 0 || (uint64_t)k < n) {
            *cut = 1;
            break;
        }
        if (sp_packet(&s, buf, buf + n, on_event, ctx, budget) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        int zerr;
        gzerror(f, &zerr);
        if (zerr != Z_OK && zerr != Z_BUF_ERROR)
            *cut = 1;
    }
    free(buf);
    gzclose(f);
    sp_free(&s);
    return rc;
}
