/*
 * cushim-stats.c - 'cushim stats FILE': the summary tables of a trace file the
 * trace plugin wrote (.json or .json.gz): the CUDA API table (Nsight Systems'
 * cuda_api_sum columns) and, when the trace holds GPU work, the kernel table
 * (cuda_gpu_kern_sum). The tables are printed by the plugin's own code
 * (plugins/trace/tr_stats.c) from the same nanosecond durations, so they equal
 * the table printed at the traced program's exit.
 *
 * The file is read by yajl, a streaming (SAX) JSON parser, in chunks of 64 KiB
 * of its (gunzipped) text: events are the objects of the top-level
 * "traceEvents" array; an API call is a "ph":"X" event of category cuda_driver
 * or cuda_runtime, a kernel one of category kernel; "dur" is microseconds with
 * up to three decimals, read exactly as nanoseconds. Memory stays small
 * whatever the file's size or layout (a long run's trace is tens of GB), and so
 * does what yajl keeps of a value still being read: a file in which no value
 * ends for ST_TOKEN_MAX bytes (a name of gigabytes, a file of zeros) or that
 * nests deeper than ST_DEPTH_MAX is refused with one line, at once. What grows
 * is the tables, linearly with the names, threads and ids the file holds.
 * docs/plugins/trace.md says why yajl, with the measurement.
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
 * looked at without blocking and refused with one line. What the file names
 * and the names in the file hold is shown without control characters (tables
 * and messages) or as strict JSON (--format=json), whatever their bytes.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "stats-nvtx.h"
#include "stats-pf.h"
#include "tr_stats.h"

/* The fuzz harness (tests/fuzz/fuzz_stats.c) builds this file with CUSHIM_STATS_NO_MAIN: it calls
   cushim_stats_main on its inputs with the messages off. */
#ifdef CUSHIM_STATS_NO_MAIN
int cushim_stats_main(int argc, char **argv);
int cushim_stats_quiet;
#define ST_ERR(...) (cushim_stats_quiet ? 0 : fprintf(stderr, __VA_ARGS__))
#else
#define ST_ERR(...) fprintf(stderr, __VA_ARGS__)
#endif

/* The reader's bounds: bytes in which some value, key or bracket must end (yajl keeps a string or number it is
   still reading: the plugin's longest is a kernel name of TR_NAME_MAX bytes, 6 each when escaped), and
   containers open at once (the plugin's files nest 6 deep). */
#define ST_TOKEN_MAX (4u << 20)
#define ST_DEPTH_MAX 64
#define ST_CHUNK (1u << 16)

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

/* A file name as messages and tables show it (tr_stats_shown: no control character, valid UTF-8); malloc'd,
   "?" when out of memory. */
static char *shown(const char *s)
{
    size_t cap = strlen(s) + 1;
    char *out = malloc(cap);
    if (out == NULL)
        return strdup("?");
    tr_stats_shown(out, cap, s);
    return out;
}

/* ---- events ---- */

/* "12.345" microseconds -> 12345 ns (a number's text as the file holds it; what is not a digit ends it) */
static unsigned long long us_to_ns(const char *s, size_t n)
{
    unsigned long long v = 0;
    int frac = -1;
    for (const char *e = s + n; s < e; s++) {
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

/* The leading digits of a number's text (a negative or a string: 0). */
static unsigned long long uint_of(const char *s, size_t n)
{
    unsigned long long v = 0;
    for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (unsigned long long)(s[i] - '0');
    return v;
}

typedef struct ev_fields {
    char ph[8], cat[48], name[2 * 4096 + 64], domain[1024];   /* a name: TR_NAME_MAX bytes, each up to 2 decoded */
    unsigned long long dur, bytes, ts, pid, tid, id;
    int has_dur, continued;
} ev_fields;

/* A string value into a field: cut to fit, a NUL (\u0000) as '?'. */
static void field(char *out, size_t cap, const unsigned char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = s[i] != '\0' ? (char)s[i] : '?';
    out[n] = '\0';
}

static void event(st_tables *t, const ev_fields *f)
{
    if (!strcmp(f->cat, "nvtx") && f->ph[0] != '\0' && f->ph[1] == '\0' && strchr("BEbe", f->ph[0]) != NULL) {
        sn_ev e = {f->ph[0], f->pid, f->tid, f->id, f->ts, f->name, f->domain, f->continued};
        sn_event(t->sn, &t->nvtx, &e);
        return;
    }
    if (strcmp(f->ph, "X") != 0 || !f->has_dur)
        return;
    if (!strcmp(f->cat, "cuda_driver") || !strcmp(f->cat, "cuda_runtime")) {
        tr_stats_add(&t->api, f->name, f->dur);
    } else if (!strcmp(f->cat, "kernel")) {
        tr_stats_add(&t->kern, f->name[0] ? f->name : "?", f->dur);
    } else if (!strcmp(f->cat, "memcpy") || !strcmp(f->cat, "memset")) {
        const char *op = tr_memop_label(f->name);
        tr_stats_add(&t->memt, op, f->dur);
        tr_stats_add(&t->mems, op, f->bytes);
    }
}

/* An event of a Perfetto file (stats-pf.c), as the JSON reader's. */
static void pf_event(void *ctx, const sp_event *e)
{
    ev_fields *f = malloc(sizeof *f);
    st_tables *t = ctx;
    if (f == NULL)
        return;
    memset(f, 0, offsetof(ev_fields, name));
    f->ph[0] = e->ph;
    field(f->cat, sizeof f->cat, (const unsigned char *)e->cat, strlen(e->cat));
    field(f->name, sizeof f->name, (const unsigned char *)e->name, strlen(e->name));
    field(f->domain, sizeof f->domain, (const unsigned char *)e->domain, strlen(e->domain));
    f->dur = e->dur;
    f->bytes = e->bytes;
    f->ts = e->ts;
    f->pid = e->pid;
    f->tid = e->tid;
    f->id = e->id;
    f->has_dur = e->ph == 'X';
    f->continued = e->continued;
    event(t, f);
    free(f);
}

/* Is the file a Perfetto protobuf trace (its first byte, gunzipped)? */
static int is_perfetto(const char *path)
{
    gzFile f = gzopen(path, "rb");
    int c = f != NULL ? gzgetc(f) : -1;
    if (f != NULL)
        gzclose(f);
    return c >= 0 && sp_is_perfetto(c);
}

/* What a pass over the file found. */
typedef struct scan {
    size_t events;        /* complete events */
    int found, closed;    /* the traceEvents array was seen, and its end */
    int cut;              /* the compressed stream is cut short */
    int bad;              /* malformed (not merely cut short), or refused by a bound */
    long bad_line;
    long events_line;     /* the line the traceEvents array opens on */
    uint64_t good;        /* bytes of the text up to the end of its last complete event */
    char why[200];        /* what was wrong, when 'bad' */
} scan;

/* ---- the reader: yajl's callbacks ---- */

static long count_lines(const unsigned char *p, size_t n)
{
    long k = 0;
    for (const unsigned char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
        k++;
    return k;
}

/* What an open container is; what the value after a key is. */
enum { C_TOP = 1, C_EVENTS, C_EVENT, C_ARGS, C_SKIP };
enum { K_NONE, K_EVENTS, K_PH, K_CAT, K_NAME, K_DUR, K_TS, K_PID, K_TID, K_ID, K_ARGS, K_BYTES, K_DOMAIN,
       K_CONTINUED };

typedef struct rd {
    yajl_handle h;
    st_tables *t;
    scan *sc;
    unsigned char open[ST_DEPTH_MAX + 1];   /* open[d]: the container at depth d (1: the top object) */
    int depth, key;
    uint64_t base;        /* bytes of the text before the chunk being parsed */
    const unsigned char *chunk;   /* that chunk, and the line it starts on */
    long chunk_line;
    uint64_t last;        /* where the last value, key or bracket ended */
    ev_fields f;
} rd;

static void rd_mark(rd *r)
{
    r->last = r->base + yajl_get_bytes_consumed(r->h);
}

/* An element of traceEvents ended. */
static void rd_element(rd *r)
{
    if (r->depth >= 1 && r->open[r->depth] == C_EVENTS) {
        r->sc->events++;
        r->sc->good = r->last;
    }
}

static int rd_open(rd *r, int is_map)
{
    int parent = r->open[r->depth], kind = C_SKIP;
    rd_mark(r);
    if (r->depth == ST_DEPTH_MAX) {
        snprintf(r->sc->why, sizeof r->sc->why, "nested deeper than %d", ST_DEPTH_MAX);
        return 0;
    }
    if (r->depth == 0 && !is_map)
        return 0;   /* not an object: no trace (nothing found) */
    if (r->depth == 0) {
        kind = C_TOP;
    } else if (parent == C_TOP && r->key == K_EVENTS && !is_map && !r->sc->found) {
        kind = C_EVENTS;
        r->sc->found = 1;
        r->sc->good = r->last;
        r->sc->events_line = r->chunk_line + count_lines(r->chunk, yajl_get_bytes_consumed(r->h));
    } else if (parent == C_EVENTS && is_map) {
        kind = C_EVENT;
        r->f.ph[0] = r->f.cat[0] = r->f.name[0] = r->f.domain[0] = '\0';   /* (not all 9 KiB of it) */
        r->f.dur = r->f.bytes = r->f.ts = r->f.pid = r->f.tid = r->f.id = 0;
        r->f.has_dur = r->f.continued = 0;
    } else if (parent == C_EVENT && r->key == K_ARGS && is_map) {
        kind = C_ARGS;
    }
    r->open[++r->depth] = (unsigned char)kind;
    r->key = K_NONE;
    return 1;
}

static int rd_close(void *ctx)
{
    rd *r = ctx;
    int kind = r->open[r->depth--];
    rd_mark(r);
    if (kind == C_EVENTS) {
        r->sc->closed = 1;
        return 0;   /* all that is read: the rest (otherData) is not */
    }
    if (kind == C_TOP)
        return 0;
    if (kind == C_EVENT)
        event(r->t, &r->f);
    rd_element(r);
    return 1;
}

static int rd_start_map(void *ctx)
{
    return rd_open(ctx, 1);
}

static int rd_start_array(void *ctx)
{
    return rd_open(ctx, 0);
}

/* The member a key names where it stands (K_NONE: a member that is not read). By length first: this runs for
   every key of the file. */
static int key_of(int in, const unsigned char *k, size_t n)
{
#define IS(lit) (n == sizeof lit - 1 && memcmp(k, lit, sizeof lit - 1) == 0)
    if (in == C_EVENT) {
        switch (n) {
        case 2: return IS("ph") ? K_PH : IS("ts") ? K_TS : IS("id") ? K_ID : K_NONE;
        case 3: return IS("cat") ? K_CAT : IS("dur") ? K_DUR : IS("pid") ? K_PID : IS("tid") ? K_TID : K_NONE;
        case 4: return IS("name") ? K_NAME : IS("args") ? K_ARGS : K_NONE;
        default: return K_NONE;
        }
    }
    if (in == C_ARGS)
        return IS("bytes") ? K_BYTES : IS("domain") ? K_DOMAIN : IS("continued") ? K_CONTINUED : K_NONE;
    return in == C_TOP && IS("traceEvents") ? K_EVENTS : K_NONE;
#undef IS
}

static int rd_key(void *ctx, const unsigned char *k, size_t n)
{
    rd *r = ctx;
    rd_mark(r);
    r->key = key_of(r->open[r->depth], k, n);
    return 1;
}

/* A value that is no container: 's' a string, 'n' a number (its text), 't' true, 'f' false or null. */
static int rd_value(rd *r, char type, const char *s, size_t n)
{
    ev_fields *f = &r->f;
    rd_mark(r);
    if (r->depth == 0)
        return 0;   /* a document that is one value: no trace */
    if (r->open[r->depth] == C_EVENT) {
        switch (r->key) {
        case K_PH: if (type == 's') field(f->ph, sizeof f->ph, (const unsigned char *)s, n); break;
        case K_CAT: if (type == 's') field(f->cat, sizeof f->cat, (const unsigned char *)s, n); break;
        case K_NAME: if (type == 's') field(f->name, sizeof f->name, (const unsigned char *)s, n); break;
        case K_DUR: f->dur = type == 'n' ? us_to_ns(s, n) : 0, f->has_dur = 1; break;
        case K_TS: f->ts = type == 'n' ? us_to_ns(s, n) : 0; break;
        case K_PID: f->pid = type == 'n' ? uint_of(s, n) : 0; break;
        case K_TID: f->tid = type == 'n' ? uint_of(s, n) : 0; break;
        case K_ID: f->id = type == 'n' ? uint_of(s, n) : 0; break;
        default: break;
        }
    } else if (r->open[r->depth] == C_ARGS) {
        if (r->key == K_BYTES && type == 'n' && n > 0 && s[0] >= '0' && s[0] <= '9')
            f->bytes = uint_of(s, n);
        else if (r->key == K_DOMAIN && type == 's')
            field(f->domain, sizeof f->domain, (const unsigned char *)s, n);
        else if (r->key == K_CONTINUED && type == 't')
            f->continued = 1;
    }
    rd_element(r);
    return 1;
}

static int rd_null(void *ctx)
{
    return rd_value(ctx, 'f', "", 0);
}

static int rd_bool(void *ctx, int v)
{
    return rd_value(ctx, v ? 't' : 'f', "", 0);
}

static int rd_number(void *ctx, const char *s, size_t n)
{
    return rd_value(ctx, 'n', s, n);
}

static int rd_string(void *ctx, const unsigned char *s, size_t n)
{
    return rd_value(ctx, 's', (const char *)s, n);
}

/* Reads the trace at 'path' into the tables, what it found into 'sc'. 0, or -1 when it cannot be read at all
   (errno; sc->why when zlib said why). A parse error inside the events array, on a line after the one it opens
   on, is a file cut short when no line follows it (its last line, as a killed writer or a file system's
   zero-filled tail leaves it), else malformed. */
static int read_trace(const char *path, st_tables *t, scan *sc)
{
    static const yajl_callbacks cbs = {
        .yajl_null = rd_null, .yajl_boolean = rd_bool, .yajl_number = rd_number, .yajl_string = rd_string,
        .yajl_start_map = rd_start_map, .yajl_map_key = rd_key, .yajl_end_map = rd_close,
        .yajl_start_array = rd_start_array, .yajl_end_array = rd_close,
    };
    yajl_status st = yajl_status_ok;
    unsigned char *buf = NULL;
    long line = 1;
    int k = 0, rc = 0;
    rd *r = calloc(1, sizeof *r);
    gzFile f = gzopen(path, "rb");
    if (r == NULL || f == NULL || (buf = malloc(ST_CHUNK)) == NULL ||
        (r->h = yajl_alloc(&cbs, NULL, r)) == NULL) {
        int e = errno;
        if (f != NULL)
            gzclose(f);
        free(buf);
        free(r);
        errno = e ? e : ENOMEM;
        return -1;
    }
    yajl_config(r->h, yajl_dont_validate_strings, 1);   /* any bytes a name holds: the outputs make them safe */
    r->t = t;
    r->sc = sc;
    r->chunk = buf;
    while ((k = gzread(f, buf, ST_CHUNK)) > 0) {
        size_t at;
        r->chunk_line = line;
        if ((st = yajl_parse(r->h, buf, (size_t)k)) == yajl_status_ok) {
            line += count_lines(buf, (size_t)k);
            r->base += (size_t)k;
            if (r->base - r->last > ST_TOKEN_MAX) {   /* yajl holds what it reads of one value */
                snprintf(sc->why, sizeof sc->why, "no JSON value ends in %u MiB (a name or number that long, or "
                         "no JSON text)", ST_TOKEN_MAX >> 20);
                sc->bad = 1;
                sc->bad_line = line;
                break;
            }
            continue;
        }
        at = yajl_get_bytes_consumed(r->h);
        line += count_lines(buf, at < (size_t)k ? at : (size_t)k);
        if (st == yajl_status_client_canceled) {   /* done, or a bound */
            if (sc->why[0] != '\0') {
                sc->bad = 1;
                sc->bad_line = line;
            }
            break;
        }
        if (sc->found && !sc->closed) {   /* cut short on its last line, past the array's start, or malformed */
            int more = line <= sc->events_line ||
                       (at < (size_t)k && memchr(buf + at, '\n', (size_t)k - at) != NULL);
            while (!more && (k = gzread(f, buf, ST_CHUNK)) > 0)
                more = memchr(buf, '\n', (size_t)k) != NULL;
            if (more) {
                unsigned char *e = yajl_get_error(r->h, 0, NULL, 0);
                size_t n = e != NULL ? strcspn((const char *)e, "\n") : 0;
                snprintf(sc->why, sizeof sc->why, "malformed JSON (line %ld: %.*s)", line, (int)n,
                         e != NULL ? (const char *)e : "");
                if (e != NULL)
                    yajl_free_error(r->h, e);
                sc->bad = 1;
                sc->bad_line = line;
            }
        }
        break;
    }
    if (k < 0) {   /* the compressed stream is cut short, or not gzip at all */
        int zerr;
        const char *msg = gzerror(f, &zerr);
        if (r->base == 0 && st == yajl_status_ok) {
            snprintf(sc->why, sizeof sc->why, "%s", msg != NULL ? msg : "read error");
            errno = EIO;
            rc = -1;
        }
        sc->cut = 1;
    } else if (st == yajl_status_ok && !sc->bad) {
        yajl_complete_parse(r->h);   /* an error: the text ended inside the array (ends early), or no trace */
    }
    yajl_free(r->h);
    gzclose(f);
    free(buf);
    free(r);
    return rc;
}

/* ---- files ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

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

/* The first 'n' bytes of the trace's (gunzipped) text to OUT: its complete events. */
static void cl_copy(closer *c, const char *path, uint64_t n)
{
    gzFile f = gzopen(path, "rb");
    char *buf = malloc(ST_CHUNK);
    int k = 0;
    while (f != NULL && buf != NULL && n > 0 && (k = gzread(f, buf, n < ST_CHUNK ? (unsigned)n : ST_CHUNK)) > 0) {
        cl_put(c, buf, (size_t)k);
        n -= (uint64_t)k;
    }
    if (f == NULL || buf == NULL || n > 0)
        c->err = 1;
    if (f != NULL)
        gzclose(f);
    free(buf);
}

#ifdef CUSHIM_STATS_NO_MAIN
int cushim_stats_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
    const char *path, *close_to = NULL;
    char **names = NULL;   /* the files as messages show them */
    st_tables t;
    tr_stat_row *rows;
    uint32_t nr;
    closer cl;
    scan sc;
    unsigned long long budget = 0;
    int early, first = 1, nfiles = argc - 1, json = 0, status = 1;
    if (argc > 1 && !strncmp(argv[1], "--format=", 9)) {   /* table (the default) or json */
        if (!strcmp(argv[1] + 9, "json") || !strcmp(argv[1] + 9, "table")) {
            json = argv[1][9] == 'j';
            first = 2;
            nfiles = argc - 2;
        } else {
            char *v = shown(argv[1] + 9);
            ST_ERR("cushim stats: --format=%s: 'table' or 'json'\n", v);
            free(v);
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
               "                                     (traces written by cushim run --trace; .json, .perfetto-trace,\n"
               "                                      either with .gz;\n"
               "                                      several: one table over all, e.g. a job's ranks)\n"
               "       cushim stats --close FILE OUT (a copy of a trace that ends early, ending properly)\n");
        return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
    }
    if ((names = calloc((size_t)argc, sizeof *names)) == NULL) {
        ST_ERR("cushim stats: out of memory\n");
        return 1;
    }
    for (int i = first; i < argc; i++)
        names[i] = shown(argv[i]);
    /* each FILE is opened up to three times (below): a FIFO or a pipe would block or be empty */
    for (int i = first; i < first + nfiles; i++) {
        int fd = st_open_regular(argv[i], O_RDONLY);
        if (fd >= 0) {
            close(fd);
        } else if (errno == EINVAL) {
            ST_ERR("cushim stats: %s: " ST_NOT_REGULAR "; give the trace file itself\n", names[i]);
            goto out;
        }   /* else (missing, no permission): said where it is read, as before */
    }
    /* the plugin's budget for exact medians (otherData, at the end): the same table as at exit; over several
       files, their sum (each file's medians were exact within its own) */
    for (int i = first; i < first + nfiles; i++) {
        if (is_perfetto(argv[i])) {   /* its otherData event's value: a pass over the file */
            char why[200];
            int cut;
            sp_read(argv[i], NULL, NULL, &budget, &cut, why, sizeof why);
        } else {
            budget += tail_budget(argv[i]);
        }
    }
    if (tables_init(&t, budget) != 0) {
        ST_ERR("cushim stats: out of memory\n");
        tables_free(&t);
        goto out;
    }
    path = argv[first];
    if (close_to != NULL) {   /* OUT must not be FILE: opening it for writing would empty the trace first */
        struct stat a, b;
        if (strcmp(path, close_to) == 0 ||
            (stat(path, &a) == 0 && stat(close_to, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
            ST_ERR("cushim stats: --close: OUT is the trace itself (%s); give another file\n", names[3]);
            tables_free(&t);
            status = 2;
            goto out;
        }
    }
    if (close_to != NULL && cl_open(&cl, close_to) != 0) {
        if (errno == EINVAL || errno == ENXIO)
            ST_ERR("cushim stats: --close: %s: " ST_NOT_REGULAR "; give a file name\n", names[3]);
        else
            ST_ERR("cushim stats: --close: %s: %s\n", names[3], strerror(errno));
        tables_free(&t);
        goto out;
    }
    for (int i = first; i < first + nfiles; i++) {
        path = argv[i];
        memset(&sc, 0, sizeof sc);
        if (is_perfetto(path)) {   /* a Perfetto file: read to its last complete packet, which ends it */
            unsigned long long ignored = 0;
            int cut = 0;
            if (close_to != NULL) {
                ST_ERR("cushim stats: %s: a Perfetto trace needs no closing (its complete packets are all a reader "
                       "takes)\n", names[i]);
                goto fail;
            }
            if (sp_read(path, pf_event, &t, &ignored, &cut, sc.why, sizeof sc.why) != 0) {
                ST_ERR("cushim stats: %s: %s; refused\n", names[i], sc.why);
                goto fail;
            }
            t.nvtx_over += sn_file_end(t.sn, &t.nvtx);
            if (cut)
                ST_ERR("cushim stats: %s ends early (its process was killed, or is still writing it): the tables "
                       "below are of its complete packets\n", names[i]);
            continue;
        }
        if (read_trace(path, &t, &sc) != 0) {
            ST_ERR("cushim stats: %s: %s\n", names[i], sc.why[0] != '\0' ? sc.why : strerror(errno));
            goto fail;
        }
        t.nvtx_over += sn_file_end(t.sn, &t.nvtx);
        /* ended early: the events array never closed (the text ran out inside it, or the gzip stream did) */
        early = sc.found && !sc.closed && !sc.bad;
        if (!sc.found || sc.bad) {
            if (sc.bad && sc.why[0] != '\0' && strncmp(sc.why, "malformed", 9) == 0)
                ST_ERR("cushim stats: %s: %s\n", names[i], sc.why);
            else if (sc.bad && sc.why[0] != '\0')
                ST_ERR("cushim stats: %s: line %ld: %s: not a trace file; refused\n", names[i], sc.bad_line, sc.why);
            else
                ST_ERR("cushim stats: %s: no \"traceEvents\" array: not a trace-event JSON file\n", names[i]);
            goto fail;
        }
        if (close_to != NULL) {
            int bad = 0;
            if (early)
                cl_copy(&cl, path, sc.good);
            bad = cl_end(&cl) != 0;
            if (!early) {
                ST_ERR("cushim stats: %s ends properly: nothing to close\n", names[i]);
                remove(close_to);
                bad = 1;
            } else if (bad) {
                ST_ERR("cushim stats: --close: %s: %s\n", names[3], strerror(errno ? errno : EIO));
                remove(close_to);
            } else {
                ST_ERR("cushim stats: %s: the %zu complete events of %s, closed\n", names[3], sc.events, names[i]);
            }
            tables_free(&t);
            status = bad;
            goto out;
        }
        if (early)
            ST_ERR("cushim stats: %s ends early (its process was killed, or is still writing it): the tables "
                    "below are of its %zu complete events; 'cushim stats --close %s OUT' writes a copy that ends "
                    "properly\n", names[i], sc.events, names[i]);
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
        status = 0;
        goto out;
    }
    if (nfiles > 1) {
        printf("\nOver %d trace files:", nfiles);
        for (int i = first; i < first + nfiles; i++)
            printf(" %s", names[i]);
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
    status = 0;
    goto out;
fail:   /* a file that cannot be read, or is not a trace: nothing printed, OUT removed */
    if (close_to != NULL) {
        cl_end(&cl);
        remove(close_to);
    }
    tables_free(&t);
out:
    for (int i = first; i < argc; i++)
        free(names[i]);
    free(names);
    return status;
}
