/*
 * tr_writer.c - the background writer (tr_writer.h): per-thread stacks of
 * open calls, Chrome trace-event JSON, the summary series.
 *
 * File layout: {"traceEvents":[ EVENT,\n ... ],"displayTimeUnit":"ns",
 * "otherData":{...}} with the counts (events, dropped) at the end, written
 * last. Times are microseconds with three decimals: exact nanoseconds, so a
 * call nested in another (a driver call inside a runtime call) lies within it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cushim/cushim_io.h"
#include "tr_rec.h"
#include "tr_wevents.h"
#include "tr_wfile.h"
#include "tr_writer.h"

/* ---- the file ---- */

unsigned long long tw_process_start(void)
{
    char buf[1024], *p;
    unsigned long long v = 0;
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) == NULL)   /* the command name may hold spaces and parentheses */
        return 0;
    /* field 22, starttime: the 20th after the name's ')' */
    for (int field = 2; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p != NULL)
        v = strtoull(p + 1, NULL, 10);
    return v;
}

/* Does the file start as this process wrote it before it executed its present program (exec keeps the pid and
   the start time; the descriptor and its lock went with O_CLOEXEC, the calls written so far are in the file)? */
static int tw_is_preexec(const tr_writer *w)
{
    char head[512], want[128];
    ssize_t n;
    int fd;
    if (w->start == 0 || (fd = open(w->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0)
        return 0;   /* ours is write-only (a FIFO must not be opened for reading) */
    n = pread(fd, head, sizeof head - 1, 0);
    close(fd);
    if (n <= 0)
        return 0;
    head[n] = '\0';
    if (w->format == TW_FORMAT_PERFETTO) {   /* the process's descriptor: its name and label (tr_pf.c) */
        char name[64];
        snprintf(name, sizeof name, "pid %d (cushim trace)", w->pid);
        snprintf(want, sizeof want, TR_PF_START_LABEL "%llu", w->start);
        return memmem(head, (size_t)n, name, strlen(name)) != NULL && memmem(head, (size_t)n, want, strlen(want)) != NULL;
    }
    snprintf(want, sizeof want, "\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"pid %d (cushim trace)\",\"start\":%llu}",
             w->pid, w->pid, w->start);
    return strstr(head, want) != NULL;
}

int tw_open(tr_writer *w)
{
    size_t n = strlen(w->path);
    struct stat st;
    int e;
    /* O_NONBLOCK: a FIFO without a reader would hold the program's thread (the first recorded call opens the
       file) until one comes; it fails at once instead (ENXIO). Writes block again, on the writer thread. */
    w->fd = open(w->path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
    if (w->fd < 0)
        return -1;
    if (fstat(w->fd, &st) != 0 || fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) & ~O_NONBLOCK) != 0)
        goto fail;
    /* A regular file is this process's while it writes it: an exclusive lock on it, held until the descriptor
       closes (at exit), and truncated only once held. Another process writing the same name at the same time
       (processes a program starts with exec: torchrun's ranks, a shell's pipeline) holds it: EWOULDBLOCK, and the
       caller picks another name - truncating it would have cut that process's file, and the two writing it at
       once would have left neither valid. A file system without flock (ENOLCK, EINVAL, Lustre's ENOSYS without
       its flock mount option...) is written as before, unlocked. */
    w->open_held = 0;
    if (S_ISREG(st.st_mode)) {
        if (flock(w->fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            w->open_held = 1;
            goto fail;
        }
        /* Nor is the trace this process wrote before an exec truncated (a .gz one's first bytes are still in
           the compressor then: nothing to keep) */
        if (st.st_size > 0 && tw_is_preexec(w)) {
            w->open_held = 2;
            errno = EWOULDBLOCK;
            goto fail;
        }
        if (ftruncate(w->fd, 0) != 0)
            goto fail;
    }
    w->fd_dev = st.st_dev;
    w->fd_ino = st.st_ino;
    w->fd_off = 0;
    w->fd_reopened = 0;
    w->fd_lost = 0;
    free(w->fd_path);
    w->fd_path = NULL;
    if (w->path[0] == '/') {
        w->fd_path = strdup(w->path);
    } else {   /* the program may change directory */
        char *cwd = getcwd(NULL, 0);
        if (cwd != NULL && (w->fd_path = malloc(strlen(cwd) + n + 2)) != NULL)
            sprintf(w->fd_path, "%s/%s", cwd, w->path);
        free(cwd);
    }
    w->z = NULL;
    if (n > 3 && strcmp(w->path + n - 3, ".gz") == 0) {
        z_stream *z = calloc(1, sizeof *z);
        if (z == NULL || (w->zbuf == NULL && (w->zbuf = malloc(TW_ZBUF)) == NULL)) {
            free(z);
            errno = ENOMEM;
            goto fail;
        }
        if (deflateInit2(z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {   /* 16: gzip */
            free(z);
            errno = ENOMEM;
            goto fail;
        }
        w->z = z;
    }
    if (w->obuf == NULL && (w->obuf = malloc(TW_OBUF)) == NULL) {
        errno = ENOMEM;
        goto fail;
    }
    w->olen = 0;
    w->first = 1;
    w->io_error = 0;
    w->io_errno = 0;
    w->events = w->bytes = 0;
    w->open_beyond = 0;
    tr_stats_init(&w->api);
    tr_stats_init(&w->kern);
    tr_stats_init(&w->memt);
    tr_stats_init(&w->mems);
    tr_stats_init(&w->nvtx);
    tr_stats_set_max_series(&w->nvtx, TR_NVTX_NAMES_MAX);
    tw_nvtx_ids_free(w);
    if (w->summary_exact != 0) {
        tr_stats_set_exact(&w->api, w->summary_exact);
        tr_stats_set_exact(&w->kern, w->summary_exact);
        tr_stats_set_exact(&w->memt, w->summary_exact);
        tr_stats_set_exact(&w->mems, w->summary_exact);
        tr_stats_set_exact(&w->nvtx, w->summary_exact);
    }
    free(w->api_series);
    w->api_series = NULL;
    free(w->tnames);
    w->tnames = NULL;
    w->ntnames = w->cap_tnames = 0;
    w->api_series_cap = 0;
    if (w->pf != NULL) {
        tr_pf_free(w->pf);
        free(w->pf);
        w->pf = NULL;
    }
    if (w->format == TW_FORMAT_PERFETTO) {
        struct timespec mono, boot;
        clock_gettime(CLOCK_MONOTONIC, &mono);
        clock_gettime(CLOCK_BOOTTIME, &boot);
        if ((w->pf = calloc(1, sizeof *w->pf)) == NULL ||
            tr_pf_start(w->pf, w->pid, (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec,
                        (uint64_t)boot.tv_sec * 1000000000u + (uint64_t)boot.tv_nsec) != 0) {
            errno = ENOMEM;
            goto fail;
        }
        tw_out_put(w, w->pf->out.p, w->pf->out.len);
        w->pf->out.len = 0;
    } else {
        tw_out_put(w, "{\"traceEvents\":[", 16);
    }
    tr_sb_printf(&w->sb, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"pid %d "
                 "(cushim trace)\",\"start\":%llu}}", w->pid, w->pid, w->start);
    tw_emit(w);
    atomic_store(&w->stop, 0);
    atomic_store(&w->finish_req, 0);
    atomic_store(&w->finished, 0);
    return 0;
fail:
    e = errno;
    close(w->fd);
    w->fd = -1;
    errno = e;
    return -1;
}

/* ---- records ---- */

/* The summary series of an API, found by name once and then by id. */
static void api_stat(tr_writer *w, const cushim_api_info *info, uint64_t ns)
{
    if (info->id >= w->api_series_cap) {
        uint32_t cap = w->api_series_cap ? w->api_series_cap : 1024;
        uint32_t *n;
        while (cap <= info->id)
            cap *= 2;
        if ((n = realloc(w->api_series, cap * sizeof *n)) == NULL)
            return;
        memset(n + w->api_series_cap, 0, (cap - w->api_series_cap) * sizeof *n);
        w->api_series = n;
        w->api_series_cap = cap;
    }
    if (w->api_series[info->id] == 0) {
        int64_t i = tr_stats_find(&w->api, info->name);
        if (i < 0)
            return;
        w->api_series[info->id] = (uint32_t)i + 1;
    }
    tr_stats_add_at(&w->api, w->api_series[info->id] - 1, ns);
}

/* An event's text up to its args' seq, depth and parent. */
static void render_head(tr_writer *w, tw_thr *t, const cushim_api_info *info, int finished, uint64_t seq,
                        uint32_t depth, uint64_t parent, uint64_t t0, uint64_t t_end)
{
    tw_thread_named(w, t);
    tr_sb_puts(&w->sb, !finished ? "{\"ph\":\"X\",\"cat\":\"cuda_api_unfinished\",\"name\":\""
                       : info->library == CUSHIM_LIB_RUNTIME ? "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\""
                                                             : "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"");
    tr_sb_puts(&w->sb, info->name);
    tr_sb_puts(&w->sb, "\",\"pid\":");
    tr_sb_u64(&w->sb, (uint64_t)w->pid);
    tr_sb_puts(&w->sb, ",\"tid\":");
    tr_sb_u64(&w->sb, t->tid);
    tr_sb_puts(&w->sb, ",\"ts\":");
    tr_sb_us(&w->sb, t0);
    tr_sb_puts(&w->sb, ",\"dur\":");
    tr_sb_us(&w->sb, t_end - t0);
    tr_sb_puts(&w->sb, ",\"args\":{\"seq\":");
    tr_sb_u64(&w->sb, seq);
    tr_sb_puts(&w->sb, ",\"depth\":");
    tr_sb_u64(&w->sb, depth);
    if (parent) {
        tr_sb_puts(&w->sb, ",\"parent\":");
        tr_sb_u64(&w->sb, parent);
    }
}

/* A record's time on the hooks' clock (an ENTER's, an EXIT's, a CALL's but the core-timed ones, an open
   call's) in the host's ns. */
static inline uint64_t tw_ns(tr_writer *w, uint64_t t)
{
    return w->tsc ? tr_clock_ns(&w->clk, t) : t;
}

/* 'ex' NULL: unfinished; else 't_exit' its time in ns (the EXIT's own is on the hooks' clock). */
static void render_call(tr_writer *w, tw_thr *t, const tr_rec *en, const tr_exit *ex, uint64_t t_exit)
{
    const cushim_api_info *info = w->api_by_id(en->api_id);
    uint64_t t_end = ex ? t_exit : (w->t_last > en->t ? w->t_last : en->t);
    if (info == NULL)
        return;
    render_head(w, t, info, ex != NULL, en->seq, en->depth, en->parent, en->t, t_end);
    tr_render_args(&w->sb, &w->meta, info, en, ex);
    tr_sb_puts(&w->sb, "}}");
    tw_emit(w);
    if (ex != NULL) {
        w->events++;
        api_stat(w, info, t_exit - en->t);
    }
    if (w->gpu && (info->categories & w->flow_categories)) {
        tr_link_call(&w->link, (uint32_t)t->tid, (uint32_t)t->alt_tid, en->t, en->seq);
        tr_sb_printf(&w->sb, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%llu,\"pid\":%d,\"tid\":%llu,\"ts\":",
                     (unsigned long long)en->seq, w->pid, (unsigned long long)t->tid);
        tr_sb_us(&w->sb, en->t);
        tr_sb_puts(&w->sb, "}");
        tw_emit(w);
    }
}

/* A runtime launch learns its kernel's name from the driver launch inside it, 'en' (an ENTER off the stack, or
   a CALL record's): the enclosing ENTER on the stack. (An enclosing launch on the plugin's open-call stack
   learns it there: tr_plan.c tr_open_kname_up.) */
static void learn_kernel(tr_writer *w, tw_thr *t, const tr_rec *en)
{
    if (en->aux != 0 && t->depth > 0 && t->stack[t->depth - 1]->aux == 0 &&
        t->stack[t->depth - 1]->seq == en->parent) {
        const cushim_api_info *pi = w->api_by_id(t->stack[t->depth - 1]->api_id);
        if (pi != NULL && (pi->categories & CUSHIM_CAT_LAUNCH))
            t->stack[t->depth - 1]->aux = en->aux;
    }
}

/* An EXIT pairs with the ENTER of its seq on the thread's stack: the api, depth and parent are the ENTER's.
   't_exit': its time in ns. */
static void on_exit_rec(tr_writer *w, tw_thr *t, const tr_exit *ex, uint64_t t_exit)
{
    uint32_t i = t->depth;
    while (i > 0 && t->stack[i - 1]->seq != ex->seq)
        i--;
    if (i == 0)
        return;   /* its enter was dropped, or recorded before a fork */
    /* calls above it never got their exit: close them as unfinished */
    while (t->depth > i) {
        tr_rec *o = t->stack[--t->depth];
        render_call(w, t, o, NULL, 0);
        free(o);
    }
    tr_rec *en = t->stack[--t->depth];
    learn_kernel(w, t, en);
    render_call(w, t, en, ex, t_exit);
    free(en);
}

/* Calls on the writer's stack entered after the call of 'seq' (seqs grow on a thread) and never closed: as
   an EXIT closes the calls above its ENTER, unfinished. */
static void close_above(tr_writer *w, tw_thr *t, uint64_t seq)
{
    while (t->depth > 0 && t->stack[t->depth - 1]->seq > seq) {
        tr_rec *o = t->stack[--t->depth];
        render_call(w, t, o, NULL, 0);
        free(o);
    }
}

/* The ENTER and EXIT a CALL record stands for (tr_rec.h), in 'w->call_buf' and 'ex', their times in the host's
   ns: 0, or -1 when the record is malformed or there is no memory. */
int tw_call_split(tr_writer *w, const tr_call *c, tw_call_exit *ex)
{
    uint32_t tail = ((c->flags & TR_F_INLINE) ? 8u : 0u) + ((c->flags & TR_F_KNAME) ? 8u : 0u) +
                    ((c->flags & TR_F_LONG) ? 8u : 0u), plen;
    const unsigned char *body = (const unsigned char *)(c + 1);
    tr_rec *en;
    if (c->len < sizeof *c + tail || ((c->len - sizeof *c - tail) & 7u))
        return -1;
    plen = c->len - (uint32_t)sizeof *c - tail;
    if (sizeof(tr_rec) + plen > w->call_cap) {
        size_t cap = sizeof(tr_rec) + plen + 256;
        void *nb = realloc(w->call_buf, cap);
        if (nb == NULL)
            return -1;
        w->call_buf = nb;
        w->call_cap = cap;
    }
    en = w->call_buf;
    en->len = (uint32_t)sizeof *en + plen;
    en->type = TR_REC_ENTER;
    en->flags = 0;
    en->api_id = c->api_id;
    en->depth = c->depth;
    en->seq = c->seq;
    en->parent = c->parent;
    en->t = c->t;
    en->aux = 0;
    if (c->flags & TR_F_KNAME)   /* after the inline word */
        memcpy(&en->aux, body + plen + ((c->flags & TR_F_INLINE) ? 8u : 0u), sizeof en->aux);
    memcpy(en + 1, body, plen);
    memset(ex, 0, sizeof *ex);
    ex->h.len = (uint32_t)sizeof ex->h + ((c->flags & TR_F_INLINE) ? 8u : 0u);
    ex->h.type = TR_REC_EXIT;
    ex->h.flags = (uint16_t)(c->flags & ~(TR_F_LONG | TR_F_KNAME));
    ex->h.seq = c->seq;
    ex->h.aux = c->result;
    if (c->flags & TR_F_INLINE)
        memcpy(&ex->word, body + plen, sizeof ex->word);
    if (c->flags & TR_F_LONG)
        memcpy(&ex->h.t, body + plen + tail - 8u, sizeof ex->h.t);   /* the last word */
    else
        ex->h.t = c->t + c->dur;
    if (!(w->core_timed != NULL && c->api_id < w->ncore_timed && w->core_timed[c->api_id])) {   /* the hooks' clock */
        en->t = tw_ns(w, en->t);
        ex->h.t = tw_ns(w, ex->h.t);
    }
    return 0;
}

static void on_call_rec(tr_writer *w, tw_thr *t, const tr_call *c)
{
    tw_call_exit ex;
    if (tw_call_split(w, c, &ex) != 0)
        return;
    if (ex.h.t > w->t_last)
        w->t_last = ex.h.t;
    close_above(w, t, c->seq);
    learn_kernel(w, t, w->call_buf);
    render_call(w, t, w->call_buf, &ex.h, ex.h.t);
}

static tw_thr *thr_of(tr_tbuf *tb)
{
    tw_thr *t = tb->wstate;
    if (t == NULL && (t = calloc(1, sizeof *t)) != NULL) {
        t->tid = tb->tid;
        t->alt_tid = tb->alt_tid;
        memcpy(t->name, tb->name, sizeof t->name);   /* published by the first record's commit */
        t->name[sizeof t->name - 1] = '\0';
        tb->wstate = t;
    }
    return t;
}

static void on_record(void *ctx, tr_tbuf *tb, const void *p, uint32_t len)
{
    tr_writer *w = ctx;
    const tr_rec *r = p;
    tw_thr *t;
    w->rec_bytes += len;
    if ((t = thr_of(tb)) == NULL)
        return;
    if (r->type == TR_REC_CALL) {
        if (len >= sizeof(tr_call))
            on_call_rec(w, t, p);
        return;
    }
    if (r->type == TR_REC_EXIT) {   /* a tr_exit, not a tr_rec */
        const tr_exit *ex = p;
        uint64_t tx = tw_ns(w, ex->t);
        if (tx > w->t_last)
            w->t_last = tx;
        on_exit_rec(w, t, ex, tx);
        return;
    }
    if (r->type != TR_REC_ENTER && r->t > w->t_last && r->type != TR_REC_GPU)
        w->t_last = r->t;
    switch (r->type) {
    case TR_REC_ENTER: {
        tr_rec *c;
        uint64_t tn = tw_ns(w, r->t);   /* the hooks' clock */
        if (tn > w->t_last)
            w->t_last = tn;
        if (t->depth == t->cap) {
            uint32_t cap = t->cap ? t->cap * 2 : 8;
            tr_rec **ns = realloc(t->stack, cap * sizeof *ns);
            if (ns == NULL)
                return;
            t->stack = ns;
            t->cap = cap;
        }
        if ((c = malloc(r->len)) == NULL)
            return;
        memcpy(c, r, r->len);
        c->t = tn;
        t->stack[t->depth++] = c;
        break;
    }
    case TR_REC_NVTX_PUSH:
    case TR_REC_NVTX_POP:
    case TR_REC_NVTX_START:
    case TR_REC_NVTX_END:
    case TR_REC_NVTX_MARK:
        tw_on_nvtx(w, t, r);
        break;
    case TR_REC_NVTX_TNAME:
        tw_on_tname(w, t, r);
        break;
    case TR_REC_GPU:
        tw_on_gpu(w, r, 0);
        break;
    case TR_REC_CORR:
        tw_corr_put(w, r->seq, r->parent);
        break;
    case TR_REC_RTAPI: {
        uint64_t end = 0, seq;
        if (tw_corr_get(w, r->seq, &seq))
            break;   /* the shim saw this runtime call itself: its external id (which CUPTI writes first) stands */
        if (r->len >= sizeof *r + sizeof end)
            memcpy(&end, r + 1, sizeof end);
        seq = tr_link_find(&w->link, (uint32_t)r->parent, r->t, end);
        if (seq != 0)
            tw_corr_put(w, r->seq, seq);
        else
            tr_link_defer(&w->link, (uint32_t)r->seq, (uint32_t)r->parent, r->t, end);
        break;
    }
    default:
        break;
    }
}

static void thr_free(tw_thr *t)
{
    if (t == NULL)
        return;
    for (uint32_t i = 0; i < t->depth; i++)
        free(t->stack[i]);
    free(t->stack);
    for (uint32_t i = 0; i < t->nvtx_depth; i++)
        free(t->nvtx[i]);
    free(t->nvtx);
    free(t);
}

/* The fast-path calls in flight on a thread (its open-call stack, tr_buf.h) as read now: those whose entry
   looks whole (a known api, a seq, a time), innermost last, into 'out'. Racy when the thread runs on: it may
   push and pop meanwhile, so an entry can be stale or half written; it is checked, never trusted. */
uint32_t tw_open_read(tr_writer *w, tr_tbuf *tb, tr_open_copy *out, uint64_t *beyond)
{
    uint32_t n = atomic_load_explicit(&tb->nopen, memory_order_acquire), k = 0;
    uint64_t prev = 0;
    *beyond = n > TR_OPEN_MAX ? n - TR_OPEN_MAX : 0;
    if (n > TR_OPEN_MAX)
        n = TR_OPEN_MAX;
    for (uint32_t i = 0; i < n; i++) {
        tr_open_copy o;
        uint64_t id_depth;
        o.seq = atomic_load_explicit(&tb->opens[i].seq, memory_order_relaxed);
        o.parent = atomic_load_explicit(&tb->opens[i].parent, memory_order_relaxed);
        o.t = atomic_load_explicit(&tb->opens[i].t, memory_order_relaxed);
        id_depth = atomic_load_explicit(&tb->opens[i].id_depth, memory_order_relaxed);
        o.kname = atomic_load_explicit(&tb->opens[i].kname, memory_order_relaxed);
        o.api_id = (uint32_t)id_depth;
        o.depth = (uint32_t)(id_depth >> 32);
        if (o.seq == 0 || o.seq <= prev || o.t == 0 || w->api_by_id(o.api_id) == NULL)
            continue;
        o.t = tw_ns(w, o.t);
        prev = o.seq;
        out[k++] = o;
    }
    return k;
}

/* An unfinished fast-path call: its name, times, seq, depth and parent, a launch's kernel; its arguments were
   never recorded. */
static void render_open(tr_writer *w, tw_thr *t, const tr_open_copy *o)
{
    const cushim_api_info *info = w->api_by_id(o->api_id);
    if (info == NULL)
        return;
    render_head(w, t, info, 0, o->seq, o->depth, o->parent, o->t, w->t_last > o->t ? w->t_last : o->t);
    /* an API without parameters lost nothing: the event is the one its ENTER would have made */
    if (info->nparams)
        tr_sb_puts(&w->sb, ",\"args_unrecorded\":true");
    if (o->kname != 0) {   /* a launch's kernel, where its ENTER's args would have it */
        const char *k = (const char *)(uintptr_t)o->kname;
        tr_sb_puts(&w->sb, ",\"kernel\":");
        tr_sb_json_str(&w->sb, k, strlen(k), TR_NAME_MAX);
    }
    tr_sb_puts(&w->sb, ",\"unfinished\":true}}");
    tw_emit(w);
}

/* The fast-path calls in flight on the thread of 'tb' (its open-call stack) into t->open, when the file is
   finished or the thread has ended (otherwise they are still running); their entry times count as seen, as
   their ENTER records' did. */
static void thr_read_open(tr_writer *w, tw_thr *t, tr_tbuf *tb)
{
    uint64_t beyond = 0;
    if (t == NULL)
        return;
    t->nopen = tw_open_read(w, tb, t->open, &beyond);
    w->open_beyond += beyond;
    for (uint32_t i = 0; i < t->nopen; i++)
        if (t->open[i].t > w->t_last)
            w->t_last = t->open[i].t;
}

/* Calls still open on a thread, written as unfinished, innermost first: those on the writer's stack (their
   ENTER records) and the fast-path calls thr_read_open found, merged by seq. */
static void thr_close(tr_writer *w, tw_thr *t)
{
    if (t == NULL)
        return;
    while (t->depth > 0 || t->nopen > 0) {
        if (t->nopen > 0 && (t->depth == 0 || t->open[t->nopen - 1].seq > t->stack[t->depth - 1]->seq)) {
            render_open(w, t, &t->open[--t->nopen]);
        } else {
            tr_rec *o = t->stack[--t->depth];
            render_call(w, t, o, NULL, 0);
            free(o);
        }
    }
}

uint64_t tw_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void tw_drain(tr_writer *w, int exited_only)
{
    uint64_t t0 = tw_mono_ns(), seen = w->rec_bytes;
    if (w->tsc)   /* a pair after every record published so far: they convert by interpolation */
        tr_clock_take(&w->clk);
    for (tr_tbuf *tb = atomic_load_explicit(&w->bufs->head, memory_order_acquire); tb != NULL; tb = tb->next_tb) {
        int s = atomic_load_explicit(&tb->state, memory_order_acquire);
        if (s != TR_TB_EXITED && (s != TR_TB_ACTIVE || exited_only))
            continue;
        tr_buf_drain(w->bufs, tb, on_record, w);
        if (s == TR_TB_EXITED) {
            tr_buf_drain(w->bufs, tb, on_record, w);
            if (atomic_load_explicit(&tb->nopen, memory_order_relaxed) != 0)
                thr_read_open(w, thr_of(tb), tb);
            thr_close(w, tb->wstate);
            atomic_store_explicit(&tb->nopen, 0, memory_order_relaxed);
            thr_free(tb->wstate);
            tb->wstate = NULL;
            tr_buf_release(w->bufs, tb);
        }
    }
    if (w->rec_bytes != seen)   /* idle passes are not work */
        w->busy_ns += tw_mono_ns() - t0;
}

void tw_drain_all(tr_writer *w)
{
    tw_drain(w, 0);
}

void tw_drain_exited(tr_writer *w)
{
    tw_drain(w, 1);
}

/* ---- the end of the file and the summary ---- */

static void write_summary(tr_writer *w)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    tr_stat_row *rows = NULL;
    uint32_t n;
    int fd = cushim_stderr_fd(&w->stderr_id), own = 0;   /* own: opened here (it may be number 2 when the program
                                                              closed its stderr) */
    if (f == NULL)
        return;
    if (w->summary_path == NULL && fd < 0) {   /* the program made descriptor 2 its own file, pipe or socket: no
                                                  table (cushim stats FILE prints it) */
        fclose(f);
        free(text);
        return;
    }
    if (w->summary_path != NULL) {
        /* a regular file only, opened without blocking: a FIFO there held the program's exit forever */
        if ((fd = cushim_open_regular(w->summary_path, O_WRONLY | O_CREAT | O_APPEND, 0644, NULL, 0)) >= 0) {
            own = 1;
        } else {   /* said, and the table comes on stderr instead of nowhere */
            int e = errno;
            fprintf(f, "cushim trace: cannot open the summary file '%s': %s; the table follows here\n",
                    w->summary_path, e == EINVAL || e == ENXIO   /* ENXIO: a FIFO with no reader, a socket */
                                         ? "not a regular file (a FIFO, device, socket or directory)"
                                         : strerror(e));
            fd = cushim_stderr_fd(&w->stderr_id);
        }
    }
    n = tr_stats_rows(&w->nvtx, &rows);   /* nsys's order: the NVTX ranges first */
    if (n > 0) {
        fprintf(f, "\nNVTX Range Summary (nvtx_sum):\n\n");
        tr_stats_print_nvtx(f, rows, n);
    }
    free(rows);
    if (w->nvtx.folded > 0)
        fprintf(f, "\ncushim trace: %llu NVTX ranges of names past the first %u are in the rows '%s'\n",
                (unsigned long long)w->nvtx.folded, TR_NVTX_NAMES_MAX, TR_STATS_FOLD);
    if (w->nvtx_ids_over > 0)
        fprintf(f, "\ncushim trace: %llu start/end ranges left out of nvtx_sum (more than %u were waiting for "
                   "their start or end)\n", (unsigned long long)w->nvtx_ids_over, TR_NVTX_IDS_MAX);
    n = tr_stats_rows(&w->api, &rows);
    fprintf(f, "\nCUDA API Summary (cuda_api_sum):\n\n");
    tr_stats_print(f, rows, n, "Num Calls");
    free(rows);
    n = tr_stats_rows(&w->kern, &rows);
    if (n > 0) {
        fprintf(f, "\nCUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n");
        tr_stats_print(f, rows, n, "Instances");
    }
    free(rows);
    tr_stats_print_memops(f, &w->memt, &w->mems);
    if (w->fd_lost)
        fprintf(f, "\ncushim trace: %llu calls recorded; %s is incomplete (WRITE ERROR: the program closed the file, "
                   "which was then removed or replaced)", (unsigned long long)w->events, w->path);
    else if (w->io_error)
        fprintf(f, "\ncushim trace: %llu calls recorded; %s is incomplete (WRITE ERROR: %s after %lld bytes)",
                (unsigned long long)w->events, w->path,
                w->io_errno ? strerror(w->io_errno) : "the program closed it and it cannot be reopened",
                (long long)w->fd_off);
    else
        fprintf(f, "\ncushim trace: %llu calls written to %s", (unsigned long long)w->events, w->path);
    if (w->unhooked != NULL && atomic_load(w->unhooked) != 0)
        fprintf(f, "; hooks removed %llu time%s while paused (unhook)", (unsigned long long)atomic_load(w->unhooked),
                atomic_load(w->unhooked) == 1 ? "" : "s");
    if (atomic_load(&w->gpu_detached) != 0 || atomic_load(&w->gpu_detach_failed) != 0)
        fprintf(f, "; CUPTI detached %llu time%s while paused and attached again %llu (%llu refused)",
                (unsigned long long)atomic_load(&w->gpu_detached), atomic_load(&w->gpu_detached) == 1 ? "" : "s",
                (unsigned long long)atomic_load(&w->gpu_attached),
                (unsigned long long)atomic_load(&w->gpu_detach_failed));
    if (w->capture != NULL && w->captures != NULL) {
        uint64_t nc = atomic_load(w->captures) - w->captures_base;
        fprintf(f, "; %llu capture range%s (%s)", (unsigned long long)nc, nc == 1 ? "" : "s", w->capture);
    }
    if (w->fd_reopened != 0)
        fprintf(f, "; the program closed the file's descriptor: reopened %u time%s", w->fd_reopened,
                w->fd_reopened == 1 ? "" : "s");
    if (atomic_load(&w->bufs->dropped) != 0 || w->internals)
        fprintf(f, "; %llu dropped (buffer full)", (unsigned long long)atomic_load(&w->bufs->dropped));
    uint64_t nint = atomic_load(&w->bufs->interrupted);   /* tr_buf.h tr_buf_interrupted */
    if (nint != 0)
        fprintf(f, "; %llu call%s or NVTX event%s made in a signal handler while its thread wrote a record: not kept",
                (unsigned long long)nint, nint == 1 ? "" : "s", nint == 1 ? "" : "s");
    if (!w->io_error && !w->fd_lost)   /* a file cut short is no JSON document: nothing to open */
        fprintf(f, w->format == TW_FORMAT_PERFETTO ? "; open it at https://ui.perfetto.dev (Open trace file)"
                                                   : "; open it at https://ui.perfetto.dev (Open trace file) or chrome://tracing");
    fputc('\n', f);
    if (w->events > 0 && w->internals) {
        /* the cost figures of issue 11: the buffers' bytes and the file's bytes per call (GPU, NVTX and
           correlation records included in the first), and the writer's rate over its busy time */
        double busy_s = (double)w->busy_ns * 1e-9;
        fprintf(f, "cushim trace: %.1f record bytes and %.1f file bytes per call; writer %.3f M calls/s "
                "(%.1f ms busy)\n", (double)w->rec_bytes / (double)w->events,
                (double)w->bytes / (double)w->events, busy_s > 0 ? (double)w->events / busy_s * 1e-6 : 0.0,
                busy_s * 1e3);
        /* the chunk pool (tr_buf.c): a chunk a recording thread had to make itself cost it page faults */
        fprintf(f, "cushim trace: chunks: %llu made, %llu taken ready by recording threads, %llu made by them, "
                "%llu released idle\n", (unsigned long long)atomic_load(&w->bufs->chunks),
                (unsigned long long)atomic_load(&w->bufs->pool_hits),
                (unsigned long long)atomic_load(&w->bufs->pool_misses),
                (unsigned long long)atomic_load(&w->bufs->pool_released));
    }
    if (w->note[0])
        fprintf(f, "cushim trace: %s\n", w->note);
    fclose(f);
    if (text != NULL) {
        if (fd >= 0)
            (void)cushim_write_all(fd, text, tlen);
        free(text);
    }
    if (own)
        close(fd);
}

static void finish_locked(tr_writer *w)
{
    uint64_t t0, before_end = w->events;
    int end_signal = atomic_load(&w->end_signal);
    if (end_signal != 0 && w->gpu && w->note[0] == '\0')   /* CUPTI is not called from a signal handler */
        snprintf(w->note, sizeof w->note, "finished by signal %d: GPU work whose records CUPTI still held is not in "
                 "the file", end_signal);
    atomic_store(&w->bufs->pool_closed, 1);   /* the last drain: no chunk pre-faulted for nobody */
    tw_drain_all(w);
    for (uint32_t i = 0; i < w->link.npend; i++) {   /* runtime records that came before their calls */
        const tl_pend *p = &w->link.pend[i];
        uint64_t seq;
        if (tw_corr_get(w, p->corr, &seq))
            continue;
        seq = tr_link_find(&w->link, p->tid, p->start, p->end);
        if (seq != 0)
            tw_corr_put(w, p->corr, seq);
    }
    tw_gpu_flush_pending(w);
    t0 = tw_mono_ns();
    /* every thread's calls in flight first (their entry times end the unfinished calls), then written */
    for (tr_tbuf *tb = atomic_load(&w->bufs->head); tb != NULL; tb = tb->next_tb) {
        int s = atomic_load_explicit(&tb->state, memory_order_acquire);
        if ((s == TR_TB_ACTIVE || s == TR_TB_EXITED) && atomic_load_explicit(&tb->nopen, memory_order_acquire) != 0)
            thr_read_open(w, thr_of(tb), tb);   /* thr_of: a thread whose first call still runs has no state yet */
    }
    for (tr_tbuf *tb = atomic_load(&w->bufs->head); tb != NULL; tb = tb->next_tb)
        if (tb->wstate != NULL)
            thr_close(w, tb->wstate);
    if (w->pf != NULL)   /* Perfetto: the same figures as an instant event on the process's track */
        tr_sb_printf(&w->sb, "{\"ph\":\"M\",\"cat\":\"cushim\",\"name\":\"otherData\",\"pid\":%d,\"tid\":0,\"args\":",
                     w->pid);
    else
        tr_sb_puts(&w->sb, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
    tr_sb_printf(&w->sb, "{\"tool\":\"cushim trace\",\"pid\":%d,"
                 "\"events\":%llu,\"dropped_events\":%llu,\"trimmed_outputs\":%llu,\"gpu_dropped\":%llu",
                 w->pid, (unsigned long long)w->events, (unsigned long long)atomic_load(&w->bufs->dropped),
                 (unsigned long long)atomic_load(&w->bufs->trimmed), (unsigned long long)atomic_load(&w->gpu_dropped));
    if (atomic_load(&w->bufs->interrupted) != 0)
        tr_sb_printf(&w->sb, ",\"interrupted_records\":%llu", (unsigned long long)atomic_load(&w->bufs->interrupted));
    if (end_signal != 0)
        tr_sb_printf(&w->sb, ",\"end_signal\":%d", end_signal);
    if (w->open_beyond)   /* unfinished fast-path calls deeper than the open-call stack: not written */
        tr_sb_printf(&w->sb, ",\"unfinished_unwritten\":%llu", (unsigned long long)w->open_beyond);
    tr_sb_printf(&w->sb, ",\"record_bytes\":%llu,\"writer_busy_ns\":%llu", (unsigned long long)w->rec_bytes,
                 (unsigned long long)(w->busy_ns + tw_mono_ns() - t0));
    tr_sb_printf(&w->sb, ",\"render\":\"%s\",\"events_before_end\":%llu", w->defer ? "exit" : "background",
                 (unsigned long long)before_end);
    /* for cushim stats: the same budget gives the same table */
    tr_sb_printf(&w->sb, ",\"summary_exact_values\":%llu",
                 (unsigned long long)(w->summary_exact ? w->summary_exact : TR_STATS_EXACT));
    if (w->gpu_corr != NULL)
        tr_sb_printf(&w->sb, ",\"gpu_correlation\":\"%s\"", w->gpu_corr);
    if (atomic_load(&w->gpu_detached) != 0 || atomic_load(&w->gpu_detach_failed) != 0)
        tr_sb_printf(&w->sb, ",\"gpu_detached\":%llu,\"gpu_attached_again\":%llu,\"gpu_detach_refused\":%llu",
                     (unsigned long long)atomic_load(&w->gpu_detached),
                     (unsigned long long)atomic_load(&w->gpu_attached),
                     (unsigned long long)atomic_load(&w->gpu_detach_failed));
    if (w->capture != NULL && w->captures != NULL) {
        tr_sb_puts(&w->sb, ",\"capture\":");
        tr_sb_json_str(&w->sb, w->capture, strlen(w->capture), 256);
        tr_sb_printf(&w->sb, ",\"capture_ranges\":%llu",
                     (unsigned long long)(atomic_load(w->captures) - w->captures_base));
    }
    if (w->note[0]) {
        tr_sb_puts(&w->sb, ",\"note\":");
        tr_sb_json_str(&w->sb, w->note, strlen(w->note), sizeof w->note);
    }
    if (w->pf != NULL) {
        tr_sb_puts(&w->sb, "}}");
        tw_emit(w);
        tr_pf_end(w->pf);   /* the event it held */
        tw_out_put(w, w->pf->out.p, w->pf->out.len);
        w->pf->out.len = 0;
    } else {
        tr_sb_puts(&w->sb, "}}\n");
        tw_out_put(w, w->sb.p ? w->sb.p : "", w->sb.len);
        w->sb.len = 0;
    }
    tw_out_flush(w);
    w->busy_ns += tw_mono_ns() - t0;
    tw_out_close(w);
    if (w->summary)
        write_summary(w);
    atomic_store_explicit(&w->finished, 1, memory_order_release);
}

/*
 * A fork() never lands in the middle of a writer pass: the pass holds tw_pass_lock and the fork's
 * prepare handler takes it, so the child is not born with a lock the writer held (an allocator's,
 * the file's) and nobody left to release it - glibc's malloc copes with that, other allocators do
 * not (ASan's deadlocked the forked child's exit, e2e trace_fork). The writer thread blocks every
 * signal, so no handler on it can fork while it holds the lock.
 */
static pthread_mutex_t tw_pass_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t tw_atfork_once = PTHREAD_ONCE_INIT;
/* Threads of the plugin created and not yet running their own code (the writer, the helpers): their runtime's
   start-up may hold locks no fork handler releases (a sanitizer's allocator and thread registry), so a fork waits
   for them. Their creators wait too (tw_wait_started), so none is left over in a child: 0 there. */
static _Atomic int tw_starting;

static void tw_nap_50us(void)
{
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

static void tw_fork_prepare(void)
{
    /* a start-up on another thread than the forking one (the forking thread's own have ended: it waited) */
    while (atomic_load(&tw_starting) > 0)
        tw_nap_50us();
    pthread_mutex_lock(&tw_pass_lock);
}

static void tw_fork_parent(void)
{
    pthread_mutex_unlock(&tw_pass_lock);
}

static void tw_fork_child_unlock(void)
{
    pthread_mutex_unlock(&tw_pass_lock);   /* taken by this thread in prepare */
    /* the child's one thread: a start-up counted after prepare's wait belongs to a thread the child does not have
       (the threads the runtime's fork handler, which runs before this one, started here have said they run) */
    atomic_store(&tw_starting, 0);
}

static void tw_atfork_install(void)
{
    pthread_atfork(tw_fork_prepare, tw_fork_parent, tw_fork_child_unlock);
}

/* Polls: 1 ms after a pass that found records, backing off to 20 ms while idle (a signal's request to
   finish waits at most that long). */
static void *tw_main(void *arg)
{
    tr_writer *w = arg;
    long idle_ms = 2;
    tw_thread_running(&w->running);
    while (!atomic_load_explicit(&w->stop, memory_order_acquire)) {
        uint64_t before = w->rec_bytes;
        struct timespec ts = {0, 0};
        pthread_mutex_lock(&tw_pass_lock);
        if (atomic_load_explicit(&w->finish_req, memory_order_acquire)) {
            finish_locked(w);
            pthread_mutex_unlock(&tw_pass_lock);
            return NULL;
        }
        /* render=exit: the program's threads run without the writer rendering beside them (it would share
           their cores, or their cores' siblings) until the end, or until half the buffer limit is in use */
        if (!w->defer || atomic_load_explicit(&w->bufs->used, memory_order_relaxed) > w->bufs->limit / 2)
            tw_drain_all(w);
        else
            tw_drain_exited(w);
        /* chunks for the recording threads, pre-faulted here rather than on them (tr_buf.c, the pool);
           tr_buf_drain also refills between chunks while a long pass drains */
        tr_bufs_refill(w->bufs);
        /* a pass that found nothing new: what is rendered goes to the file now rather than when 256 KiB are
           (a process that is killed, or executes another program, leaves its calls up to its last quiet moment
           there; a .gz file's compressor keeps its own until the end) */
        if (w->rec_bytes == before && w->olen > 0 && w->z == NULL)
            tw_out_flush(w);
        pthread_mutex_unlock(&tw_pass_lock);
        if (w->rec_bytes != before || w->defer)   /* deferred: keep refilling the pool at the same pace */
            idle_ms = 1;
        else if (idle_ms < 20)
            idle_ms *= 2;
        ts.tv_nsec = (idle_ms > 20 ? 20 : idle_ms) * 1000 * 1000;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int tw_start(tr_writer *w)
{
    int rc;
    atomic_store(&w->running, 0);
    tw_thread_starting();
    rc = cushim_thread_create(&w->th, NULL, "cushim-trace", tw_main, w);   /* none of the program's signals */
    w->started = rc == 0;
    /* Until the thread reaches its loop, its runtime's start-up (a sanitizer's allocator, which takes locks no
       fork handler releases) may be running: a fork then would leave the child a held lock and its own writer
       blocked on it for ever (ASan, e2e trace_fork). Its creator waits for it here, however long the start
       takes (a wait of at most 100 ms ran out under load: e2e trace_gpu_fork's child hung at exit), and a fork
       on another thread waits in the prepare handler; from its loop on, the pass lock keeps forks out of its
       work. The start-up needs nothing this thread holds. */
    if (rc == 0)
        tw_wait_started(&w->running);
    else
        tw_thread_start_failed();
    return rc;
}

void tw_thread_starting(void)
{
    pthread_once(&tw_atfork_once, tw_atfork_install);
    atomic_fetch_add(&tw_starting, 1);
}

void tw_thread_start_failed(void)
{
    atomic_fetch_sub(&tw_starting, 1);
}

void tw_thread_running(_Atomic int *flag)
{
    atomic_fetch_sub(&tw_starting, 1);
    atomic_store_explicit(flag, 1, memory_order_release);
}

void tw_nofork_begin(void)
{
    pthread_once(&tw_atfork_once, tw_atfork_install);
    pthread_mutex_lock(&tw_pass_lock);
}

void tw_nofork_end(void)
{
    pthread_mutex_unlock(&tw_pass_lock);
}

void tw_wait_started(_Atomic int *flag)
{
    while (!atomic_load_explicit(flag, memory_order_acquire))
        tw_nap_50us();
}

void tw_finish(tr_writer *w)
{
    if (w->started) {
        atomic_store(&w->stop, 1);
        pthread_join(w->th, NULL);
        w->started = 0;
    }
    if (!atomic_load(&w->finished))
        finish_locked(w);
}

int tw_finish_async(tr_writer *w, unsigned ms)
{
    struct timespec ts = {0, 1000 * 1000};
    if (!w->started)
        return atomic_load(&w->finished) ? 0 : -1;
    atomic_store_explicit(&w->finish_req, 1, memory_order_release);
    for (unsigned i = 0; i < ms && !atomic_load_explicit(&w->finished, memory_order_acquire); i++)
        nanosleep(&ts, NULL);
    return atomic_load(&w->finished) ? 0 : -1;
}

void tw_fork_child(tr_writer *w, tr_tbuf *keep)
{
    for (tr_tbuf *tb = atomic_load(&w->bufs->head); tb != NULL; tb = tb->next_tb) {
        thr_free(tb->wstate);
        tb->wstate = NULL;
    }
    tr_bufs_fork_child(w->bufs, keep);
    tw_gpu_drop_pending(w);
    /* the parent's file is the parent's: never flushed or closed from here (and a number that is no longer
       ours is the program's) */
    if (tw_fd_ours(w, 0))
        close(w->fd);
    w->fd = -1;
    if (w->z != NULL) {   /* this copy's memory; deflateEnd writes nothing */
        deflateEnd(w->z);
        free(w->z);
        w->z = NULL;
    }
    w->olen = 0;
    w->started = 0;
    tr_stats_free(&w->api);
    tr_stats_free(&w->kern);
    tr_stats_free(&w->memt);
    tr_stats_free(&w->mems);
    tr_stats_free(&w->nvtx);
    tw_nvtx_ids_free(w);
    tw_map_free(&w->corr);
    tw_map_free(&w->corr_old);
    tr_link_free(&w->link);
    tw_map_free(&w->gpu_tracks);
    w->t_last = 0;
    /* the child's file counts the child's own: GPU tracing as its own file opens it, no detach, no note yet */
    w->gpu = 0;
    w->gpu_corr = NULL;
    atomic_store(&w->gpu_dropped, 0);
    atomic_store(&w->gpu_detached, 0);
    atomic_store(&w->gpu_attached, 0);
    atomic_store(&w->gpu_detach_failed, 0);
    w->note[0] = '\0';
    if (w->captures != NULL)   /* capture_end= still counts the parent's ranges */
        w->captures_base = atomic_load(w->captures);
}

void tw_free(tr_writer *w)
{
    for (tr_tbuf *tb = atomic_load(&w->bufs->head); tb != NULL; tb = tb->next_tb) {
        thr_free(tb->wstate);
        tb->wstate = NULL;
    }
    tr_stats_free(&w->api);
    tr_stats_free(&w->kern);
    tr_stats_free(&w->memt);
    tr_stats_free(&w->mems);
    tr_stats_free(&w->nvtx);
    tw_nvtx_ids_free(w);
    tw_map_free(&w->corr);
    tw_map_free(&w->corr_old);
    tr_link_free(&w->link);
    tw_map_free(&w->gpu_tracks);
    tr_sb_free(&w->sb);
    tw_gpu_drop_pending(w);
    free(w->gpu_pending);
    w->gpu_pending = NULL;
    w->gpu_cap_pending = 0;
    free(w->api_series);
    w->api_series = NULL;
    free(w->call_buf);
    w->call_buf = NULL;
    w->call_cap = 0;
    free(w->obuf);
    w->obuf = NULL;
    free(w->zbuf);
    w->zbuf = NULL;
    free(w->fd_path);
    w->fd_path = NULL;
    tr_clock_free(&w->clk);
    free(w->core_timed);
    w->core_timed = NULL;
    if (w->z != NULL) {
        deflateEnd(w->z);
        free(w->z);
        w->z = NULL;
    }
    if (w->pf != NULL) {
        tr_pf_free(w->pf);
        free(w->pf);
        w->pf = NULL;
    }
}
