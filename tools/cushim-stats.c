/*
 * cushim-stats.c - 'cushim stats FILE': the summary tables of a trace file the
 * trace plugin wrote (.json or .json.gz): the CUDA API table (Nsight Systems'
 * cuda_api_sum columns) and, when the trace holds GPU work, the kernel table
 * (cuda_gpu_kern_sum). The tables are printed by the plugin's own code
 * (plugins/trace/tr_stats.c) from the same nanosecond durations, so they equal
 * the table printed at the traced program's exit.
 *
 * A small JSON reader: events are the objects of the top-level "traceEvents"
 * array; an API call is a "ph":"X" event of category cuda_driver or
 * cuda_runtime, a kernel one of category kernel; "dur" is microseconds with
 * up to three decimals, read exactly as nanoseconds.
 *
 * The plugin's files (one event a line) are streamed: memory stays small
 * whatever the file's size (a long run's trace is tens of GB); a file of
 * another layout is read whole.
 *
 * A file that ends early - its process was killed by SIGKILL (the OOM killer)
 * or left through _exit, which no handler sees, or it is still being written -
 * is summarised from its complete events, with a warning. 'cushim stats --close
 * FILE OUT' writes a copy that ends properly (its complete events, then the
 * closing brackets and "otherData":{"truncated":true}), which JSON readers and
 * the Perfetto UI open; OUT ending in .gz is compressed.
 *
 * FILE and OUT must be regular files: FILE is read more than once (a pipe's
 * data would be gone, and a FIFO's second open would wait for a writer
 * forever), and an OUT that is a FIFO with no reader would wait for one; each is
 * looked at without blocking and refused with one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "stats-nvtx.h"
#include "tr_stats.h"

/* The fuzz harness (tests/fuzz/fuzz_stats.c) builds this file with CUSHIM_STATS_NO_MAIN: it calls
   cushim_stats_main on its inputs with the messages off. */
#ifdef CUSHIM_STATS_NO_MAIN
int cushim_stats_main(int argc, char **argv);
int cushim_stats_quiet;
#define ST_ERR(...) (cushim_stats_quiet ? 0 : fprintf(stderr, __VA_ARGS__))
#define ST_PERROR(s) (cushim_stats_quiet ? (void)0 : perror(s))
#else
#define ST_ERR(...) fprintf(stderr, __VA_ARGS__)
#define ST_PERROR(s) perror(s)
#endif

typedef struct js {
    const char *p, *end;
    int err;
} js;

/* The tables: NVTX ranges, calls, kernels, GPU copies and sets by time and by size (as the plugin prints them
   at exit); 'sn' joins the NVTX events into ranges (stats-nvtx.c). */
typedef struct st_tables {
    tr_stats nvtx, api, kern, memt, mems;
    sn_state *sn;
    unsigned long long nvtx_over;   /* start/end ranges left out (TR_NVTX_IDS_MAX) */
} st_tables;

static int tables_init(st_tables *t, unsigned long long budget)
{
    tr_stats *all[5] = {&t->nvtx, &t->api, &t->kern, &t->memt, &t->mems};
    for (int i = 0; i < 5; i++) {
        tr_stats_init(all[i]);
        if (budget > 0)
            tr_stats_set_exact(all[i], budget);
    }
    tr_stats_set_max_series(&t->nvtx, TR_NVTX_NAMES_MAX);
    t->nvtx_over = 0;
    return (t->sn = sn_new()) != NULL ? 0 : -1;
}

static void tables_free(st_tables *t)
{
    tr_stats_free(&t->nvtx);
    tr_stats_free(&t->api);
    tr_stats_free(&t->kern);
    tr_stats_free(&t->memt);
    tr_stats_free(&t->mems);
    sn_free(t->sn);
    t->sn = NULL;
}

static void ws(js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Four hex digits at j->p (consumed), or -1 (not consumed). */
static long hex4(js *j)
{
    long v = 0;
    if (j->end - j->p < 4)
        return -1;
    for (int k = 0; k < 4; k++) {
        int h = hexval(j->p[k]);
        if (h < 0)
            return -1;   /* nothing consumed: what follows is read as it is */
        v = v << 4 | h;
    }
    j->p += 4;
    return v;
}

/* Code point 'cp' as UTF-8 into out[*o...] (bounded by cap, the NUL's byte kept); U+0000 and what is no
   scalar value as '?'. */
static void put_utf8(char *out, size_t cap, size_t *o, unsigned long cp)
{
    char b[4];
    size_t k;
    if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        cp = '?';
    if (cp < 0x80)
        b[0] = (char)cp, k = 1;
    else if (cp < 0x800)
        b[0] = (char)(0xc0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
    else if (cp < 0x10000)
        b[0] = (char)(0xe0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3f)), b[2] = (char)(0x80 | (cp & 0x3f)),
        k = 3;
    else
        b[0] = (char)(0xf0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (char)(0x80 | (cp & 0x3f)), k = 4;
    if (out != NULL && *o + k < cap) {
        memcpy(out + *o, b, k);
        *o += k;
    }
}

/* A string: its decoded text into out (bounded; RFC 8259's escapes, \uXXXX as UTF-8 with surrogate pairs
   joined, U+0000 and a lone surrogate as '?'; an unknown escape's character kept). */
static int str(js *j, char *out, size_t cap)
{
    size_t o = 0;
    if (j->p >= j->end || *j->p != '"')
        return j->err = 1, -1;
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\' && j->p < j->end) {
            char e = *j->p++;
            if (e == 'u') {
                long cp = hex4(j);
                if (cp >= 0xd800 && cp <= 0xdbff && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                    const char *back = j->p;
                    long lo;
                    j->p += 2;
                    lo = hex4(j);
                    if (lo >= 0xdc00 && lo <= 0xdfff)
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    else
                        j->p = back;   /* a lone high surrogate ('?'); the next escape read on its own */
                }
                put_utf8(out, cap, &o, cp < 0 ? '?' : (unsigned long)cp);
                continue;
            }
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
        }
        if (out != NULL && o + 1 < cap)
            out[o++] = c;
    }
    if (j->p >= j->end)
        return j->err = 1, -1;
    j->p++;
    if (out != NULL)
        out[o] = '\0';
    return 0;
}

static int skip(js *j, int depth);

static int skip_container(js *j, char close, int depth)
{
    j->p++;
    ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        ws(j);
        if (close == '}') {
            if (str(j, NULL, 0) != 0)
                return -1;
            ws(j);
            if (j->p >= j->end || *j->p++ != ':')
                return j->err = 1, -1;
        }
        if (skip(j, depth + 1) != 0)
            return -1;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        return j->err = 1, -1;
    }
}

static int skip(js *j, int depth)
{
    ws(j);
    if (j->p >= j->end || depth > 64)
        return j->err = 1, -1;
    switch (*j->p) {
    case '"': return str(j, NULL, 0);
    case '{': return skip_container(j, '}', depth);
    case '[': return skip_container(j, ']', depth);
    default: {   /* a number, true, false, null: up to a delimiter; nothing at all is malformed (a stray '}') */
        const char *from = j->p;
        while (j->p < j->end && *j->p != '\0' && strchr(",}] \n\r\t", *j->p) == NULL)
            j->p++;
        return j->p == from ? (j->err = 1, -1) : 0;
    }
    }
}

/* "12.345" microseconds -> 12345 ns */
static unsigned long long us_to_ns(const char *s, const char *e)
{
    unsigned long long v = 0;
    int frac = -1;
    for (; s < e; s++) {
        if (*s == '.') {
            frac = 0;
            continue;
        }
        if (*s < '0' || *s > '9')
            break;
        if (frac >= 3)
            continue;
        v = v * 10 + (unsigned long long)(*s - '0');
        if (frac >= 0)
            frac++;
    }
    for (int k = frac < 0 ? 0 : frac; k < 3; k++)
        v *= 10;
    return v;
}

/* An object's members: 'member' reads each value (it consumes it; -1 when it is malformed); a value that is no
   object is skipped. 0, or -1 with j->err set. */
typedef int (*member_fn)(js *j, const char *key, void *ctx);

static int members(js *j, int depth, member_fn member, void *ctx)
{
    char key[32];
    ws(j);
    if (j->p >= j->end || *j->p != '{')
        return skip(j, depth);
    j->p++;
    ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        ws(j);
        if (str(j, key, sizeof key) != 0)
            return -1;
        ws(j);
        if (j->p >= j->end || *j->p++ != ':')
            return j->err = 1, -1;
        ws(j);
        if (member(j, key, ctx) != 0)
            return -1;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            return 0;
        }
        return j->err = 1, -1;
    }
}

typedef struct ev_fields {
    char ph[8], cat[48], name[2 * 4096 + 64], domain[1024];   /* a name: TR_NAME_MAX bytes, each up to 2 decoded */
    unsigned long long dur, bytes, ts, pid, tid, id;
    int has_dur, continued;
} ev_fields;

/* An unsigned integer value (anything else: 0), consumed. */
static int uint_value(js *j, unsigned long long *v)
{
    const char *s = j->p;
    *v = 0;
    if (skip(j, 2) != 0)
        return -1;
    for (; s < j->p && *s >= '0' && *s <= '9'; s++)
        *v = *v * 10 + (unsigned long long)(*s - '0');
    return 0;
}

/* An event's "args": its "bytes" (a GPU copy's or set's size), an NVTX event's "domain" and "continued", the
   rest skipped. */
static int args_member(js *j, const char *key, void *ctx)
{
    ev_fields *e = ctx;
    if (!strcmp(key, "bytes") && j->p < j->end && *j->p >= '0' && *j->p <= '9')
        return uint_value(j, &e->bytes);
    if (!strcmp(key, "domain") && j->p < j->end && *j->p == '"')
        return str(j, e->domain, sizeof e->domain);
    if (!strcmp(key, "continued") && j->end - j->p >= 4 && !memcmp(j->p, "true", 4))
        e->continued = 1;
    return skip(j, 2);
}

static int event_member(js *j, const char *key, void *ctx)
{
    ev_fields *e = ctx;
    if (!strcmp(key, "ph") && j->p < j->end && *j->p == '"')
        str(j, e->ph, sizeof e->ph);
    else if (!strcmp(key, "cat") && j->p < j->end && *j->p == '"')
        str(j, e->cat, sizeof e->cat);
    else if (!strcmp(key, "name") && j->p < j->end && *j->p == '"')
        str(j, e->name, sizeof e->name);
    else if (!strcmp(key, "dur") || !strcmp(key, "ts")) {
        const char *s = j->p;
        skip(j, 1);
        if (key[0] == 'd') {
            e->dur = us_to_ns(s, j->p);
            e->has_dur = 1;
        } else {
            e->ts = us_to_ns(s, j->p);
        }
    } else if (!strcmp(key, "pid") || !strcmp(key, "tid") || !strcmp(key, "id")) {
        return uint_value(j, key[0] == 'p' ? &e->pid : key[0] == 't' ? &e->tid : &e->id);
    } else if (!strcmp(key, "args")) {
        return members(j, 2, args_member, e);
    } else {
        return skip(j, 1);
    }
    return 0;
}

static int event(js *j, st_tables *t)
{
    ev_fields f;
    f.ph[0] = f.cat[0] = f.name[0] = f.domain[0] = '\0';
    f.dur = f.bytes = f.ts = f.pid = f.tid = f.id = 0;
    f.has_dur = f.continued = 0;
    if (members(j, 1, event_member, &f) != 0)
        return -1;
    if (!strcmp(f.cat, "nvtx") && f.ph[0] != '\0' && f.ph[1] == '\0' && strchr("BEbe", f.ph[0]) != NULL) {
        sn_ev e = {f.ph[0], f.pid, f.tid, f.id, f.ts, f.name, f.domain, f.continued};
        sn_event(t->sn, &t->nvtx, &e);
        return 0;
    }
    if (strcmp(f.ph, "X") != 0 || !f.has_dur)
        return 0;
    if (!strcmp(f.cat, "cuda_driver") || !strcmp(f.cat, "cuda_runtime")) {
        tr_stats_add(&t->api, f.name, f.dur);
    } else if (!strcmp(f.cat, "kernel")) {
        tr_stats_add(&t->kern, f.name[0] ? f.name : "?", f.dur);
    } else if (!strcmp(f.cat, "memcpy") || !strcmp(f.cat, "memset")) {
        const char *op = tr_memop_label(f.name);
        tr_stats_add(&t->memt, op, f.dur);
        tr_stats_add(&t->mems, op, f.bytes);
    }
    return 0;
}

/* The file's text (gunzipped); *cut set when a compressed file ends early (what came before it is kept). */
static char *slurp(const char *path, size_t *n, int *cut)
{
    gzFile f = gzopen(path, "rb");
    size_t cap = 1 << 16, len = 0;
    char *buf;
    int k;
    if (f == NULL)
        return NULL;
    if ((buf = malloc(cap)) == NULL) {
        gzclose(f);
        return NULL;
    }
    while ((k = gzread(f, buf + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)k;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                gzclose(f);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    *cut = k < 0;
    if (k < 0 && len == 0) {
        free(buf);
        gzclose(f);
        return NULL;
    }
    gzclose(f);
    *n = len;
    return buf;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* What a pass over the file found. */
typedef struct scan {
    size_t events;        /* complete events */
    int found, closed;    /* the traceEvents array was seen, and its end */
    int cut;              /* the (compressed) data ended early */
    int bad;              /* malformed (not merely cut short) */
    long bad_line;
} scan;

/* ---- files ---- */

/* 'path' opened (O_CLOEXEC and 'flags'; 0666 less the umask when created) without blocking on a FIFO, then
   refused unless it is a regular file: -1 with errno EINVAL (or ENXIO: a FIFO with no reader, a socket, opened
   for writing); the descriptor blocks as usual. cushim_open_regular of sdk/include/cushim/cushim_io.h, which
   this tool's include path does not reach. */
static int st_open_regular(const char *path, int flags)
{
    struct stat st;
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);   /* as fopen: less the umask */
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

#define ST_NOT_REGULAR "not a regular file (a FIFO, device, socket or directory)"

/* ---- the output of --close: complete events, then the end of the file ---- */

typedef struct closer {
    FILE *f;
    gzFile g;
    int err;
} closer;

/* 0, or -1 with errno (EINVAL or ENXIO: OUT is not a regular file; it is left as it was). */
static int cl_open(closer *c, const char *out)
{
    int fd = st_open_regular(out, O_WRONLY | O_CREAT);
    memset(c, 0, sizeof *c);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (ends_with(out, ".gz"))
        c->g = gzdopen(fd, "wb6");
    else
        c->f = fdopen(fd, "wb");
    if (c->f == NULL && c->g == NULL) {
        close(fd);
        return -1;
    }
    return 0;
}

static void cl_put(closer *c, const char *s, size_t n)
{
    if (n == 0)
        return;
    if (c->g != NULL ? gzwrite(c->g, s, (unsigned)n) != (int)n : fwrite(s, 1, n, c->f) != n)
        c->err = 1;
}

static int cl_end(closer *c)
{
    static const char tail[] = "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"truncated\":true}}\n";
    cl_put(c, tail, sizeof tail - 1);
    if (c->g != NULL ? gzclose(c->g) != Z_OK : fclose(c->f) != 0)
        c->err = 1;
    return c->err ? -1 : 0;
}

/* ---- the plugin's own layout, streamed: memory stays small whatever the file's size ---- */

/* Lines of a (possibly compressed) file. */
typedef struct lines {
    gzFile f;
    char *buf;
    size_t cap, len, pos;
    int eof, err;
} lines;

/* The next line, without its '\n': 1; 2 for a last line without one (the file was cut); 0 at the end. The
   line is valid until the next call. */
static int ln_next(lines *r, char **line, size_t *n)
{
    for (;;) {
        char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        int k;
        if (nl != NULL) {
            *line = r->buf + r->pos;
            *n = (size_t)(nl - *line);
            r->pos = (size_t)(nl - r->buf) + 1;
            return 1;
        }
        if (r->eof) {
            if (r->pos < r->len) {
                *line = r->buf + r->pos;
                *n = r->len - r->pos;
                r->pos = r->len;
                return 2;
            }
            return 0;
        }
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
        if (r->len == r->cap) {
            char *nb = realloc(r->buf, r->cap * 2);
            if (nb == NULL) {
                r->err = r->eof = 1;
                continue;
            }
            r->buf = nb;
            r->cap *= 2;
        }
        k = gzread(r->f, r->buf + r->len, (unsigned)(r->cap - r->len));
        if (k <= 0) {
            r->err = k < 0;
            r->eof = 1;
        } else {
            r->len += (size_t)k;
        }
    }
}

/* The exact-median budget the plugin wrote in otherData (the file's last 64 KiB), 0 if none. */
static unsigned long long tail_budget(const char *path)
{
    static const char key_[] = "\"summary_exact_values\":";
    char *tail = malloc(65536 * 2);
    size_t tn = 0;
    unsigned long long v = 0;
    gzFile f;
    int k;
    if (tail == NULL || (f = gzopen(path, "rb")) == NULL) {
        free(tail);
        return 0;
    }
    if (gzdirect(f)) {   /* a plain file: its end alone */
        FILE *pf = fopen(path, "rb");
        gzclose(f);
        if (pf != NULL) {
            if (fseek(pf, -65536, SEEK_END) != 0)
                rewind(pf);
            tn = fread(tail, 1, 65536, pf);
            fclose(pf);
        }
    } else {             /* compressed: through it all, keeping the last 64 KiB */
        while ((k = gzread(f, tail + tn, (unsigned)(65536 * 2 - tn))) > 0) {
            tn += (size_t)k;
            if (tn > 65536) {
                memmove(tail, tail + tn - 65536, 65536);
                tn = 65536;
            }
        }
        gzclose(f);
    }
    for (size_t i = 0; i + sizeof key_ - 1 <= tn; i++)
        if (memcmp(tail + i, key_, sizeof key_ - 1) == 0)
            v = strtoull(tail + i + sizeof key_ - 1, NULL, 10);
    free(tail);
    return v;
}

/* 1: the plugin's layout ('{"traceEvents":[' alone on the first line, then one event a line), read; 0: some
   other layout, known from the first line, with nothing counted, written or set in 'sc' (the caller reads it
   whole); -1: not readable. */
static int stream_file(const char *path, closer *cl, st_tables *t, scan *sc)
{
    lines r = {0};
    char *line, *prev = NULL;
    size_t n, prev_n = 0, prev_cap = 0;
    long no = 0;
    int rc;
    if ((r.f = gzopen(path, "rb")) == NULL)
        return -1;
    r.cap = 1 << 16;
    if ((r.buf = malloc(r.cap)) == NULL) {
        gzclose(r.f);
        return -1;
    }
    rc = ln_next(&r, &line, &n);
    no++;
    while (rc != 0 && n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\r'))
        n--;
    if (rc != 1 || n != 16 || memcmp(line, "{\"traceEvents\":[", 16) != 0) {
        free(r.buf);
        gzclose(r.f);
        return 0;
    }
    sc->found = 1;
    if (cl != NULL)
        cl_put(cl, "{\"traceEvents\":[\n", 17);
    while ((rc = ln_next(&r, &line, &n)) != 0) {
        js j;
        no++;
        if (n > 0 && line[0] == ']') {
            sc->closed = 1;
            break;
        }
        if (rc == 1 && n > 0 && line[n - 1] == ',')
            n--;
        if (n == 0)
            continue;
        j.p = line;
        j.end = line + n;
        j.err = 0;
        event(&j, t);
        ws(&j);
        if (j.err || j.p != j.end) {
            if (rc == 2)   /* the last line, cut short */
                break;
            sc->bad = 1;
            sc->bad_line = no;
            break;
        }
        sc->events++;
        if (cl != NULL) {   /* each complete event is written when the next one is known: the last has no comma */
            if (prev_n > 0) {
                cl_put(cl, prev, prev_n);
                cl_put(cl, ",\n", 2);
            }
            if (n > prev_cap) {
                char *np = realloc(prev, n);
                if (np == NULL) {
                    cl->err = 1;
                    break;
                }
                prev = np;
                prev_cap = n;
            }
            memcpy(prev, line, n);
            prev_n = n;
        }
    }
    if (cl != NULL && prev_n > 0)
        cl_put(cl, prev, prev_n);
    sc->cut = r.err;
    free(prev);
    free(r.buf);
    gzclose(r.f);
    return 1;
}

/* ---- any other layout: the whole file, parsed in memory ---- */

static int whole_file(const char *path, closer *cl, st_tables *t, scan *sc)
{
    size_t n = 0, good = 0;
    char *text, key[32];
    js j;
    if ((text = slurp(path, &n, &sc->cut)) == NULL)
        return -1;
    j.p = text;
    j.end = text + n;
    j.err = 0;
    ws(&j);
    if (j.p < j.end && *j.p == '{') {
        j.p++;
        for (;;) {
            ws(&j);
            if (j.p < j.end && *j.p == '}')
                break;
            if (str(&j, key, sizeof key) != 0)
                break;
            ws(&j);
            if (j.p >= j.end || *j.p++ != ':')
                break;
            ws(&j);
            if (!strcmp(key, "traceEvents") && j.p < j.end && *j.p == '[') {
                sc->found = 1;
                j.p++;
                good = (size_t)(j.p - text);
                ws(&j);
                while (j.p < j.end && *j.p != ']' && !j.err) {
                    event(&j, t);
                    if (!j.err) {
                        good = (size_t)(j.p - text);
                        sc->events++;
                    }
                    ws(&j);
                    if (j.p < j.end && *j.p == ',')
                        j.p++;
                    ws(&j);
                }
                if (j.p < j.end) {
                    j.p++;
                    sc->closed = 1;
                }
            } else if (skip(&j, 1) != 0) {
                break;
            }
            ws(&j);
            if (j.p < j.end && *j.p == ',')
                j.p++;
        }
    }
    /* an error that is not the text running out inside the array is malformed */
    if (j.err && !(sc->found && !sc->closed && (j.p >= j.end || sc->cut)))
        sc->bad = 1;
    if (cl != NULL)
        cl_put(cl, text, good);
    free(text);
    return 1;
}

#ifdef CUSHIM_STATS_NO_MAIN
int cushim_stats_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
    const char *path, *close_to = NULL;
    st_tables t;
    tr_stat_row *rows;
    uint32_t nr;
    closer cl;
    scan sc = {0};
    unsigned long long budget = 0;
    int rc, early, first = 1, nfiles = argc - 1, json = 0;
    if (argc > 1 && !strncmp(argv[1], "--format=", 9)) {   /* table (the default) or json */
        if (!strcmp(argv[1] + 9, "json") || !strcmp(argv[1] + 9, "table")) {
            json = argv[1][9] == 'j';
            first = 2;
            nfiles = argc - 2;
        } else {
            ST_ERR("cushim stats: --format=%s: 'table' or 'json'\n", argv[1] + 9);
            return 2;
        }
    }
    if (first == 1 && argc == 4 && !strcmp(argv[1], "--close")) {
        first = 2;
        nfiles = 1;
        close_to = argv[3];
    } else {
        for (int i = first; i < argc; i++)
            if (argv[i][0] == '-')
                nfiles = 0;
    }
    if (nfiles < 1) {
        ST_ERR("usage: cushim stats [--format=table|json] FILE...\n"
               "                                     (traces written by cushim run --trace; .json or .json.gz;\n"
               "                                      several: one table over all, e.g. a job's ranks)\n"
               "       cushim stats --close FILE OUT (a copy of a trace that ends early, ending properly)\n");
        return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
    }
    /* each FILE is opened up to three times (below): a FIFO or a pipe would block or be empty */
    for (int i = first; i < first + nfiles; i++) {
        int fd = st_open_regular(argv[i], O_RDONLY);
        if (fd >= 0) {
            close(fd);
        } else if (errno == EINVAL) {
            ST_ERR("cushim stats: %s: " ST_NOT_REGULAR "; give the trace file itself\n", argv[i]);
            return 1;
        }   /* else (missing, no permission): said where it is read, as before */
    }
    /* the plugin's budget for exact medians (otherData, at the end): the same table as at exit; over several
       files, their sum (each file's medians were exact within its own) */
    for (int i = first; i < first + nfiles; i++)
        budget += tail_budget(argv[i]);
    if (tables_init(&t, budget) != 0) {
        ST_ERR("cushim stats: out of memory\n");
        tables_free(&t);
        return 1;
    }
    path = argv[first];
    if (close_to != NULL) {   /* OUT must not be FILE: opening it for writing would empty the trace first */
        struct stat a, b;
        if (strcmp(path, close_to) == 0 ||
            (stat(path, &a) == 0 && stat(close_to, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
            ST_ERR("cushim stats: --close: OUT is the trace itself (%s); give another file\n", close_to);
            tables_free(&t);
            return 2;
        }
    }
    if (close_to != NULL && cl_open(&cl, close_to) != 0) {
        if (errno == EINVAL || errno == ENXIO)
            ST_ERR("cushim stats: --close: %s: " ST_NOT_REGULAR "; give a file name\n", close_to);
        else
            ST_PERROR(close_to);
        tables_free(&t);
        return 1;
    }
    for (int i = first; i < first + nfiles; i++) {
        path = argv[i];
        memset(&sc, 0, sizeof sc);
        rc = stream_file(path, close_to ? &cl : NULL, &t, &sc);
        if (rc == 0)   /* not the plugin's layout (decided on the first line, before anything was added or written) */
            rc = whole_file(path, close_to ? &cl : NULL, &t, &sc);
        if (rc < 0) {
            ST_PERROR(path);
            goto fail;
        }
        t.nvtx_over += sn_file_end(t.sn, &t.nvtx);
        /* ended early: the events array never closed (the text ran out inside it, or the gzip stream did) */
        early = sc.found && !sc.closed && !sc.bad;
        if (!sc.found || sc.bad) {
            if (!sc.found)
                ST_ERR("cushim stats: %s: no \"traceEvents\" array: not a trace-event JSON file\n", path);
            else if (sc.bad_line > 0)
                ST_ERR("cushim stats: %s: malformed JSON (line %ld)\n", path, sc.bad_line);
            else
                ST_ERR("cushim stats: %s: malformed JSON\n", path);
            goto fail;
        }
        if (close_to != NULL) {
            int bad = cl_end(&cl) != 0;
            if (!early) {
                ST_ERR("cushim stats: %s ends properly: nothing to close\n", path);
                remove(close_to);
                bad = 1;
            } else if (bad) {
                ST_PERROR(close_to);
            } else {
                ST_ERR("cushim stats: %s: the %zu complete events of %s, closed\n", close_to, sc.events, path);
            }
            tables_free(&t);
            return bad;
        }
        if (early)
            ST_ERR("cushim stats: %s ends early (its process was killed, or is still writing it): the tables "
                    "below are of its %zu complete events; 'cushim stats --close %s OUT' writes a copy that ends "
                    "properly\n", path, sc.events, path);
    }
    if (json) {   /* one document: the files, then every table (empty ones too) */
        printf("{\"files\":[");
        for (int i = first; i < first + nfiles; i++) {
            fputs(i > first ? "," : "", stdout);
            tr_stats_json_str(stdout, argv[i]);
        }
        printf("],\n");
        tr_stats_json(stdout, "nvtx_sum", &t.nvtx, TR_JSON_STYLED);
        printf(",\n");
        tr_stats_json(stdout, "cuda_api_sum", &t.api, 0);
        printf(",\n");
        tr_stats_json(stdout, "cuda_gpu_kern_sum", &t.kern, 0);
        printf(",\n");
        tr_stats_json(stdout, "cuda_gpu_mem_time_sum", &t.memt, 0);
        printf(",\n");
        tr_stats_json(stdout, "cuda_gpu_mem_size_sum", &t.mems, TR_JSON_SIZES);
        printf("}\n");
        tables_free(&t);
        return 0;
    }
    if (nfiles > 1) {
        printf("\nOver %d trace files:", nfiles);
        for (int i = first; i < first + nfiles; i++)
            printf(" %s", argv[i]);
        printf("\n");
    }
    nr = tr_stats_rows(&t.nvtx, &rows);   /* nsys's order: the NVTX ranges first */
    if (nr > 0) {
        printf("\nNVTX Range Summary (nvtx_sum):\n\n");
        tr_stats_print_nvtx(stdout, rows, nr);
    }
    free(rows);
    if (t.nvtx.folded > 0)
        ST_ERR("cushim stats: %llu NVTX ranges of names past the first %u are in the rows '%s'\n",
               (unsigned long long)t.nvtx.folded, TR_NVTX_NAMES_MAX, TR_STATS_FOLD);
    if (t.nvtx_over > 0)
        ST_ERR("cushim stats: %llu start/end ranges left out of nvtx_sum (more than %u were waiting for their start "
               "or end)\n", t.nvtx_over, TR_NVTX_IDS_MAX);
    nr = tr_stats_rows(&t.api, &rows);
    printf("\nCUDA API Summary (cuda_api_sum):\n\n");
    tr_stats_print(stdout, rows, nr, "Num Calls");
    free(rows);
    nr = tr_stats_rows(&t.kern, &rows);
    if (nr > 0) {
        printf("\nCUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n");
        tr_stats_print(stdout, rows, nr, "Instances");
    }
    free(rows);
    tr_stats_print_memops(stdout, &t.memt, &t.mems);
    tables_free(&t);
    return 0;
fail:   /* a file that cannot be read, or is not a trace: nothing printed, OUT removed */
    if (close_to != NULL) {
        cl_end(&cl);
        remove(close_to);
    }
    tables_free(&t);
    return 1;
}
