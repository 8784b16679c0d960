/*
 * stats-nvtx.c - the NVTX range table of 'cushim stats' (stats-nvtx.h).
 *
 * The writer (plugins/trace/tr_wevents.c) writes each thread's NVTX events in
 * the order it handled them. A push is a B; a pop of domain D ends D's
 * innermost range: it writes an E for that range and for every range above it
 * on the thread (one B/E stack a thread in the file), then, 1 ns later, a B with
 * args.continued for each of those above it, outermost first. So here: an E
 * moves the thread's innermost open slice to a list of ended slices; a continued
 * B at an ended slice's end + 1 ns with that slice's name reopens it (the most
 * recently ended first: the pops were innermost first, the reopenings outermost
 * first), keeping its first start; the ended slices left when the thread's next
 * push comes, or the file ends, are ranges that ended. Past TR_NVTX_DEPTH open
 * ranges the writer keeps no copy of a push: those ranges are counted off, as it
 * does. A b and an e of one id are a start/end range, in either order (they may
 * be recorded on two threads, whose records the writer drains in turns).
 */
#include <stdlib.h>
#include <string.h>

#include "stats-nvtx.h"

typedef struct sn_slice {
    char *key;        /* STYLE SEP DOMAIN ':' NAME (tr_stats.h) */
    uint64_t start;   /* the range's first start (ns) */
    uint64_t end;     /* ended slices: the E's time */
} sn_slice;

typedef struct sn_thr {
    uint64_t pid, tid;
    sn_slice *open, *ended;
    uint32_t nopen, capopen, nended, capended;
    uint32_t over;                  /* pushes past TR_NVTX_DEPTH, still open */
    struct sn_thr *next;
} sn_thr;

typedef struct sn_se {
    uint64_t pid, id, t;
    int is_end;
    char *key;                      /* a start's row */
    struct sn_se *next;
} sn_se;

/* Threads and waiting start/end ranges: chained hash tables that double when they hold more entries than
   buckets, so that a look-up costs the same with a million threads or ids as with ten (a fixed 4096 buckets made
   a file of a million start/end ranges quadratic). */
#define SN_BUCKETS_MIN 256u

struct sn_state {
    sn_thr **thr;
    sn_se **se;
    uint32_t nthr_b, nse_b;         /* buckets (powers of two) */
    uint64_t nthr, nse, over;
    uint64_t probes;                /* entries looked at (sn_probes) */
};

static uint32_t sn_hash(uint64_t a, uint64_t b, uint32_t buckets)
{
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);
    h ^= h >> 29;
    return (uint32_t)(h * 0xbf58476d1ce4e5b9ull >> 32) & (buckets - 1);
}

sn_state *sn_new(void)
{
    sn_state *s = calloc(1, sizeof(sn_state));
    if (s == NULL)
        return NULL;
    s->thr = calloc(SN_BUCKETS_MIN, sizeof *s->thr);
    s->se = calloc(SN_BUCKETS_MIN, sizeof *s->se);
    if (s->thr == NULL || s->se == NULL) {
        free(s->thr);
        free(s->se);
        free(s);
        return NULL;
    }
    s->nthr_b = s->nse_b = SN_BUCKETS_MIN;
    return s;
}

uint64_t sn_probes(const sn_state *s)
{
    return s != NULL ? s->probes : 0;
}

/* Twice the buckets when the table holds more entries than buckets (out of memory: it stays, only slower). */
static void sn_grow_thr(sn_state *s)
{
    uint32_t nb = s->nthr_b * 2;
    sn_thr **b;
    if (s->nthr <= s->nthr_b || nb == 0 || (b = calloc(nb, sizeof *b)) == NULL)
        return;
    for (uint32_t i = 0; i < s->nthr_b; i++)
        for (sn_thr *t = s->thr[i], *n; t != NULL; t = n) {
            uint32_t h = sn_hash(t->pid, t->tid, nb);
            n = t->next;
            t->next = b[h];
            b[h] = t;
        }
    free(s->thr);
    s->thr = b;
    s->nthr_b = nb;
}

static void sn_grow_se(sn_state *s)
{
    uint32_t nb = s->nse_b * 2;
    sn_se **b;
    if (s->nse <= s->nse_b || nb == 0 || (b = calloc(nb, sizeof *b)) == NULL)
        return;
    for (uint32_t i = 0; i < s->nse_b; i++)
        for (sn_se *x = s->se[i], *n; x != NULL; x = n) {
            uint32_t h = sn_hash(x->pid, x->id, nb);
            n = x->next;
            x->next = b[h];
            b[h] = x;
        }
    free(s->se);
    s->se = b;
    s->nse_b = nb;
}

static char *sn_key(const char *style, const char *domain, const char *name)
{
    size_t a = strlen(style), b = strlen(domain), c = strlen(name);
    char *k = malloc(a + b + c + 3);
    if (k == NULL)
        return NULL;
    memcpy(k, style, a);
    k[a] = TR_STATS_STYLE_SEP;
    memcpy(k + a + 1, domain, b);
    k[a + 1 + b] = ':';
    memcpy(k + a + b + 2, name, c + 1);
    return k;
}

static void sn_add(tr_stats *out, const char *key, uint64_t t0, uint64_t t1)
{
    tr_stats_add(out, key, t1 > t0 ? t1 - t0 : 0);
}

static sn_thr *sn_thread(sn_state *s, uint64_t pid, uint64_t tid)
{
    uint32_t h = sn_hash(pid, tid, s->nthr_b);
    sn_thr *t;
    for (t = s->thr[h]; t != NULL; t = t->next) {
        s->probes++;
        if (t->pid == pid && t->tid == tid)
            return t;
    }
    if ((t = calloc(1, sizeof *t)) == NULL)
        return NULL;
    t->pid = pid;
    t->tid = tid;
    t->next = s->thr[h];
    s->thr[h] = t;
    s->nthr++;
    sn_grow_thr(s);
    return t;
}

static int sn_grow(sn_slice **a, uint32_t *cap, uint32_t n)
{
    uint32_t c = *cap ? 2 * *cap : 8;
    sn_slice *g;
    if (n < *cap)
        return 0;
    if ((g = realloc(*a, c * sizeof *g)) == NULL)
        return -1;
    *a = g;
    *cap = c;
    return 0;
}

/* The thread's ended slices are ranges that ended. */
static void sn_settle(sn_thr *t, tr_stats *out)
{
    for (uint32_t i = 0; i < t->nended; i++) {
        sn_add(out, t->ended[i].key, t->ended[i].start, t->ended[i].end);
        free(t->ended[i].key);
    }
    t->nended = 0;
}

static void sn_open(sn_thr *t, char *key, uint64_t start)
{
    if (key == NULL || sn_grow(&t->open, &t->capopen, t->nopen) != 0) {
        free(key);
        t->over++;   /* as the writer without memory for its copy: closed in order, never summarised */
        return;
    }
    t->open[t->nopen].key = key;
    t->open[t->nopen].start = start;
    t->open[t->nopen].end = 0;
    t->nopen++;
}

static void sn_pushpop(sn_state *s, tr_stats *out, const sn_ev *e)
{
    sn_thr *t = sn_thread(s, e->pid, e->tid);
    if (t == NULL)
        return;
    if (e->ph == 'E') {
        if (t->over > 0) {
            t->over--;
        } else if (t->nopen > 0) {
            if (sn_grow(&t->ended, &t->capended, t->nended) != 0) {   /* no memory: ended now, not joined */
                t->nopen--;
                sn_add(out, t->open[t->nopen].key, t->open[t->nopen].start, e->ts);
                free(t->open[t->nopen].key);
                return;
            }
            t->ended[t->nended] = t->open[--t->nopen];
            t->ended[t->nended++].end = e->ts;
        }
        return;
    }
    if (e->continued) {
        char *key = sn_key(TR_NVTX_PUSHPOP, e->domain, e->name);
        for (uint32_t i = t->nended; key != NULL && i-- > 0;) {
            sn_slice *x = &t->ended[i];
            if (x->end + 1 == e->ts && strcmp(x->key, key) == 0) {
                uint64_t start = x->start;
                free(key);
                key = x->key;
                memmove(x, x + 1, (t->nended - i - 1) * sizeof *x);
                t->nended--;
                sn_open(t, key, start);
                return;
            }
        }
        sn_open(t, key, e->ts);   /* a continuation of nothing (not the writer's file): a range of its own */
        return;
    }
    sn_settle(t, out);
    if (t->over == 0 && t->nopen < TR_NVTX_DEPTH)
        sn_open(t, sn_key(TR_NVTX_PUSHPOP, e->domain, e->name), e->ts);
    else
        t->over++;
}

static void sn_startend(sn_state *s, tr_stats *out, const sn_ev *e)
{
    uint32_t h = sn_hash(e->pid, e->id, s->nse_b);
    int is_end = e->ph == 'e';
    sn_se *x, **p;
    for (p = &s->se[h]; (x = *p) != NULL; p = &x->next) {
        s->probes++;
        if (x->pid == e->pid && x->id == e->id)
            break;
    }
    if (x != NULL) {   /* its other half; two starts or two ends of one id: both forgotten, as the writer does */
        if (x->is_end && !is_end) {
            char *key = sn_key(TR_NVTX_STARTEND, e->domain, e->name);
            if (key != NULL)
                sn_add(out, key, e->ts, x->t);
            free(key);
        } else if (!x->is_end && is_end) {
            sn_add(out, x->key, x->t, e->ts);
        }
        *p = x->next;
        free(x->key);
        free(x);
        s->nse--;
        return;
    }
    if (e->id == 0)
        return;
    if (s->nse >= TR_NVTX_IDS_MAX || (x = calloc(1, sizeof *x)) == NULL) {
        s->over++;
        return;
    }
    if (!is_end && (x->key = sn_key(TR_NVTX_STARTEND, e->domain, e->name)) == NULL) {
        free(x);
        s->over++;
        return;
    }
    x->pid = e->pid;
    x->id = e->id;
    x->t = e->ts;
    x->is_end = is_end;
    x->next = s->se[h];
    s->se[h] = x;
    s->nse++;
    sn_grow_se(s);
}

void sn_event(sn_state *s, tr_stats *out, const sn_ev *e)
{
    if (s == NULL)
        return;
    if (e->ph == 'B' || e->ph == 'E')
        sn_pushpop(s, out, e);
    else if (e->ph == 'b' || e->ph == 'e')
        sn_startend(s, out, e);
}

static void sn_forget(sn_state *s, tr_stats *out)
{
    for (uint32_t h = 0; h < s->nthr_b; h++) {
        for (sn_thr *t = s->thr[h], *n; t != NULL; t = n) {
            n = t->next;
            if (out != NULL)
                sn_settle(t, out);
            for (uint32_t i = 0; i < t->nended; i++)
                free(t->ended[i].key);
            for (uint32_t i = 0; i < t->nopen; i++)
                free(t->open[i].key);
            free(t->open);
            free(t->ended);
            free(t);
        }
        s->thr[h] = NULL;
    }
    for (uint32_t h = 0; h < s->nse_b; h++) {
        for (sn_se *x = s->se[h], *n; x != NULL; x = n) {
            n = x->next;
            free(x->key);
            free(x);
        }
        s->se[h] = NULL;
    }
    s->nthr = s->nse = 0;
}

uint64_t sn_file_end(sn_state *s, tr_stats *out)
{
    uint64_t over;
    if (s == NULL)
        return 0;
    sn_forget(s, out);
    over = s->over;
    s->over = 0;
    return over;
}

void sn_free(sn_state *s)
{
    if (s == NULL)
        return;
    sn_forget(s, NULL);
    free(s->thr);
    free(s->se);
    free(s);
}
