/*
 * tr_stats.c - summary tables (tr_stats.h). Medians are exact (each series
 * is kept and sorted) within a memory budget, from a histogram beyond it; the
 * standard deviation is the sample one, as Nsight Systems reports it. Numbers
 * print with thousands separators like 'nsys stats'.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tr_stats.h"

void tr_stats_init(tr_stats *st)
{
    memset(st, 0, sizeof *st);
    st->exact_budget = TR_STATS_EXACT;
}

void tr_stats_set_exact(tr_stats *st, uint64_t values)
{
    st->exact_budget = values;
}

void tr_stats_set_max_series(tr_stats *st, uint32_t n)
{
    st->max_series = n;
}

void tr_stats_free(tr_stats *st)
{
    for (uint32_t i = 0; i < st->n; i++) {
        free(st->s[i].name);
        free(st->s[i].v);
        free(st->s[i].hist);
    }
    free(st->s);
    free(st->index);
    free(st->big);
    memset(st, 0, sizeof *st);
}

static uint32_t st_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static int st_rehash(tr_stats *st)
{
    uint32_t cap = st->icap ? st->icap * 2 : 256;
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (ix == NULL)
        return -1;
    for (uint32_t i = 0; i < st->n; i++) {
        uint32_t h = st_hash(st->s[i].name) & (cap - 1);
        while (ix[h])
            h = (h + 1) & (cap - 1);
        ix[h] = i + 1;
    }
    free(st->index);
    st->index = ix;
    st->icap = cap;
    return 0;
}

static int64_t find(tr_stats *st, const char *name, int fold);

int64_t tr_stats_find(tr_stats *st, const char *name)
{
    return find(st, name, 1);
}

/* A styled row's parts (tr_stats_print_nvtx): its style into 'style' (bounded), the range returned. */
static const char *split_styled(const char *name, char *style, size_t cap)
{
    const char *sep = strchr(name, TR_STATS_STYLE_SEP);
    size_t k = sep != NULL ? (size_t)(sep - name) : 0;
    if (k >= cap)
        k = cap - 1;
    memcpy(style, name, k);
    style[k] = '\0';
    return sep != NULL ? sep + 1 : name;
}

/* The fold row of 'name' (tr_stats_set_max_series): its style's. */
static int64_t find_fold(tr_stats *st, const char *name)
{
    char style[64], fold[sizeof style + sizeof TR_STATS_FOLD];
    if (split_styled(name, style, sizeof style) != name)   /* styled: the style's fold row */
        snprintf(fold, sizeof fold, "%s%c%s", style, TR_STATS_STYLE_SEP, TR_STATS_FOLD);
    else
        snprintf(fold, sizeof fold, "%s", TR_STATS_FOLD);
    st->folded++;
    return find(st, fold, 0);
}

static int64_t find(tr_stats *st, const char *name, int fold)
{
    uint32_t h;
    tr_series *s;
    if (st->oom)
        return -1;
    if ((st->n + 1) * 2 > st->icap && st_rehash(st) != 0)
        goto oom;
    for (h = st_hash(name) & (st->icap - 1); st->index[h]; h = (h + 1) & (st->icap - 1)) {
        st->work++;
        if (strcmp(st->s[st->index[h] - 1].name, name) == 0)
            return st->index[h] - 1;
    }
    if (fold && st->max_series != 0 && st->n >= st->max_series)
        return find_fold(st, name);
    if (st->n == st->cap) {
        uint32_t cap = st->cap ? st->cap * 2 : 64;
        tr_series *ns_ = realloc(st->s, cap * sizeof *ns_);
        if (ns_ == NULL)
            goto oom;
        st->s = ns_;
        st->cap = cap;
    }
    s = &st->s[st->n];
    memset(s, 0, sizeof *s);
    if ((s->name = strdup(name)) == NULL)
        goto oom;
    st->index[h] = ++st->n;
    return st->n - 1;
oom:
    st->oom = 1;
    return -1;
}

/* Log-linear buckets: values below 2^TR_HIST_SUB each their own; above, 2^TR_HIST_SUB a power of two. */
static uint32_t hist_bucket(uint64_t x)
{
    int e, shift;
    if (x < (1u << TR_HIST_SUB))
        return (uint32_t)x;
    e = 63 - __builtin_clzll(x);
    shift = e - TR_HIST_SUB;
    return ((uint32_t)(shift + 1) << TR_HIST_SUB) + (uint32_t)((x >> shift) & ((1u << TR_HIST_SUB) - 1));
}

/* A bucket's values: [lo, lo + width). */
static void hist_range(uint32_t b, uint64_t *lo, uint64_t *width)
{
    int shift;
    if (b < (1u << TR_HIST_SUB)) {
        *lo = b;
        *width = 1;
        return;
    }
    shift = (int)(b >> TR_HIST_SUB) - 1;
    *lo = ((uint64_t)(1u << TR_HIST_SUB) + (b & ((1u << TR_HIST_SUB) - 1))) << shift;
    *width = (uint64_t)1 << shift;
}

static void hist_add(tr_series *s, uint64_t ns)
{
    double d = (double)ns - s->mean;
    s->hist[hist_bucket(ns)]++;
    s->n++;
    s->total += ns;
    s->min = ns < s->min ? ns : s->min;
    s->max = ns > s->max ? ns : s->max;
    s->mean += d / (double)s->n;
    s->m2 += d * ((double)ns - s->mean);
}

/* Exact -> histogram: its values go into buckets, its memory back to the budget. */
static int to_hist(tr_stats *st, tr_series *s)
{
    uint64_t n = s->n;
    if ((s->hist = calloc(TR_HIST_BUCKETS, sizeof *s->hist)) == NULL)
        return -1;
    s->n = 0;
    s->total = 0;
    s->min = UINT64_MAX;
    s->max = 0;
    s->mean = s->m2 = 0;
    for (uint64_t j = 0; j < n; j++)
        hist_add(s, s->v[j]);
    free(s->v);
    s->v = NULL;
    st->exact_used -= s->cap;
    s->cap = 0;
    st->napprox++;
    return 0;
}

/* The exact series with the most room (the first of them on a tie), taken off the list 'big'; NULL if none has
   TR_HIST_BUCKETS values' room. Only the series on 'big' are looked at: with many small series (a kernel name
   each) past the budget, a scan of them all at each growth made the table quadratic in the number of names. */
static tr_series *take_largest(tr_stats *st)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t k = 0; k < st->nbig; k++) {
        const tr_series *c = &st->s[st->big[k]];
        st->work++;
        if (best == UINT32_MAX || c->cap > st->s[st->big[best]].cap ||
            (c->cap == st->s[st->big[best]].cap && st->big[k] < st->big[best]))
            best = k;
    }
    if (best == UINT32_MAX)
        return NULL;
    {
        tr_series *s = &st->s[st->big[best]];
        st->big[best] = st->big[--st->nbig];
        return s;
    }
}

/* 's' (index 'index') is exact with TR_HIST_BUCKETS values' room or more: on the list 'big'. */
static int add_big(tr_stats *st, uint32_t index)
{
    if (st->nbig == st->capbig) {
        uint32_t cap = st->capbig ? 2 * st->capbig : 16;
        uint32_t *nb = realloc(st->big, cap * sizeof *nb);
        if (nb == NULL)
            return -1;
        st->big = nb;
        st->capbig = cap;
    }
    st->big[st->nbig++] = index;
    return 0;
}

int tr_stats_add_at(tr_stats *st, uint32_t index, uint64_t ns)
{
    tr_series *s;
    if (index >= st->n)
        return -1;
    s = &st->s[index];
    if (s->hist == NULL && s->n == s->cap) {
        uint64_t cap = s->cap ? s->cap * 2 : 16;
        uint64_t *nv;
        /* Past the budget, the largest exact series become histograms first (it frees the most, and a small
           series is cheaper kept than bucketed: a histogram is TR_HIST_BUCKETS counts); a series smaller than
           a histogram grows on */
        while (st->exact_used + (cap - s->cap) > st->exact_budget) {
            tr_series *big = take_largest(st);
            if (big == NULL)
                break;
            if (to_hist(st, big) != 0) {
                st->big[st->nbig++] = (uint32_t)(big - st->s);   /* still exact; its slot is still there */
                st->oom = 1;
                return -1;
            }
            if (big == s)
                break;
        }
        if (s->hist == NULL) {   /* (else it became a histogram above) */
            int joins = s->cap < TR_HIST_BUCKETS && cap >= TR_HIST_BUCKETS;
            if ((joins && add_big(st, index) != 0) || (nv = realloc(s->v, cap * sizeof *nv)) == NULL) {
                st->nbig -= joins && st->nbig > 0 && st->big[st->nbig - 1] == index;
                st->oom = 1;
                return -1;
            }
            st->exact_used += cap - s->cap;
            s->v = nv;
            s->cap = cap;
        }
    }
    if (s->hist != NULL)
        hist_add(s, ns);
    else
        s->v[s->n++] = ns;
    return 0;
}

/* The value of rank 'k' (0-based) in the histogram: its bucket's middle, within [min, max]. */
static double hist_rank(const tr_series *s, uint64_t k)
{
    uint64_t seen = 0, lo, width;
    double v;
    for (uint32_t b = 0; b < TR_HIST_BUCKETS; b++) {
        seen += s->hist[b];
        if (seen > k) {
            hist_range(b, &lo, &width);
            v = (double)lo + (double)(width - 1) / 2;
            return v < (double)s->min ? (double)s->min : v > (double)s->max ? (double)s->max : v;
        }
    }
    return (double)s->max;
}

int tr_stats_add(tr_stats *st, const char *name, uint64_t ns)
{
    int64_t i = tr_stats_find(st, name);
    return i < 0 ? -1 : tr_stats_add_at(st, (uint32_t)i, ns);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_row(const void *a, const void *b)
{
    const tr_stat_row *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->name, y->name);
}

uint32_t tr_stats_rows(tr_stats *st, tr_stat_row **rows)
{
    uint64_t all = 0;
    uint32_t k = 0;
    tr_stat_row *r;
    *rows = NULL;
    if (st->n == 0 || (r = calloc(st->n, sizeof *r)) == NULL)
        return 0;
    for (uint32_t i = 0; i < st->n; i++) {
        tr_series *s = &st->s[i];
        uint64_t total = 0;
        double mean, ss = 0;
        if (s->n == 0)
            continue;
        if (s->hist != NULL) {
            r[k].name = s->name;
            r[k].total = s->total;
            r[k].n = s->n;
            r[k].min = s->min;
            r[k].max = s->max;
            r[k].avg = (double)s->total / (double)s->n;
            r[k].med = s->n % 2 ? hist_rank(s, s->n / 2) : (hist_rank(s, s->n / 2 - 1) + hist_rank(s, s->n / 2)) / 2;
            r[k].stddev = s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0;
            r[k].approx = 1;
            all += s->total;
            k++;
            continue;
        }
        qsort(s->v, s->n, sizeof *s->v, cmp_u64);
        for (uint64_t j = 0; j < s->n; j++)
            total += s->v[j];
        mean = (double)total / (double)s->n;
        for (uint64_t j = 0; j < s->n; j++)
            ss += ((double)s->v[j] - mean) * ((double)s->v[j] - mean);
        r[k].name = s->name;
        r[k].total = total;
        r[k].n = s->n;
        r[k].min = s->v[0];
        r[k].max = s->v[s->n - 1];
        r[k].avg = mean;
        r[k].med = s->n % 2 ? (double)s->v[s->n / 2] : ((double)s->v[s->n / 2 - 1] + (double)s->v[s->n / 2]) / 2;
        r[k].stddev = s->n > 1 ? sqrt(ss / (double)(s->n - 1)) : 0;
        all += total;
        k++;
    }
    for (uint32_t i = 0; i < k; i++)
        r[i].pct = all ? 100.0 * (double)r[i].total / (double)all : 0;
    qsort(r, k, sizeof *r, cmp_row);
    *rows = r;
    return k;
}

/* "1,234,567" and "1,234,567.8" */
static void fmt_grouped(char *out, size_t cap, const char *digits)
{
    const char *dot = strchr(digits, '.');
    size_t ilen = dot ? (size_t)(dot - digits) : strlen(digits), o = 0;
    for (size_t i = 0; i < ilen && o + 2 < cap; i++) {
        out[o++] = digits[i];
        if (digits[i] != '-' && (ilen - i - 1) % 3 == 0 && i + 1 < ilen)
            out[o++] = ',';
    }
    for (const char *p = dot; p && *p && o + 1 < cap; p++)
        out[o++] = *p;
    out[o] = '\0';
}

/* The length of the well-formed UTF-8 character at p (1 to 4; RFC 3629: no overlong form, no surrogate, nothing
   past U+10FFFF), 0 for a byte that starts none. p is NUL-terminated (a NUL ends a sequence: never 10xxxxxx). */
static unsigned utf8_len(const unsigned char *p)
{
    unsigned c = p[0], k = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
    for (unsigned i = 1; i < k; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
        (c == 0xf4 && p[1] >= 0x90))
        return 0;
    return k;
}

/* A character a terminal must never be sent from a name: C0, DEL, C1 (U+0080-U+009F: CSI and the like to some
   terminals), and the bidirectional controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), which
   reorder the rest of the line as it is shown. 'p' holds a well-formed character of 'k' bytes. */
static int shown_as_mark(const unsigned char *p, unsigned k)
{
    if (k == 1)
        return p[0] < 0x20 || p[0] == 0x7f;
    if (k == 2)
        return (p[0] == 0xc2 && p[1] <= 0x9f) || (p[0] == 0xd8 && p[1] == 0x9c);
    if (k == 3 && p[0] == 0xe2 && p[1] == 0x80)
        return p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae);
    if (k == 3 && p[0] == 0xe2 && p[1] == 0x81)
        return p[2] >= 0xa6 && p[2] <= 0xa9;
    return 0;
}

/* A row's name: a kernel's or an NVTX range's comes from the program (or from a trace file 'cushim stats'
   reads, in which any bytes may stand), so what a terminal could take for a command never reaches it: each
   control character (shown_as_mark) and each byte that is not part of well-formed UTF-8 is written '?'. The
   table is valid UTF-8 with no control byte but its line ends. */
static void put_name(FILE *f, const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    while (*s) {
        unsigned k = utf8_len(s);
        if (k == 0 || shown_as_mark(s, k)) {
            fputc('?', f);
            s += k ? k : 1;
            continue;
        }
        fwrite(s, 1, k, f);
        s += k;
    }
}

size_t tr_stats_shown(char *out, size_t cap, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    if (cap == 0)
        return 0;
    while (*s) {
        unsigned k = utf8_len(s);
        if (k == 0 || shown_as_mark(s, k)) {
            if (o + 1 >= cap)
                break;
            out[o++] = '?';
            s += k ? k : 1;
            continue;
        }
        if (o + k >= cap)
            break;
        memcpy(out + o, s, k);
        o += k;
        s += k;
    }
    out[o] = '\0';
    return o;
}

static void fmt_u(char *out, size_t cap, uint64_t v)
{
    char d[32];
    snprintf(d, sizeof d, "%llu", (unsigned long long)v);
    fmt_grouped(out, cap, d);
}

static void fmt_d(char *out, size_t cap, double v)
{
    char d[64];
    snprintf(d, sizeof d, "%.1f", v);
    tr_c_number(d);   /* the program's LC_NUMERIC may say ',': the table at exit equals cushim stats' */
    fmt_grouped(out, cap, d);
}

static void fmt_mb(char *out, size_t cap, double bytes)
{
    char d[64];
    snprintf(d, sizeof d, "%.3f", bytes / 1e6);
    tr_c_number(d);
    fmt_grouped(out, cap, d);
}

#define NCOL 10


/* One table: the time tables (Time (%), Total Time (ns), COUNT, Avg, Med, Min, Max, StdDev (ns), NAME) or, with
   'mb', the size table (Total (MB), Count, Avg, Med, Min, Max, StdDev (MB), Operation: values are bytes); with
   'styled' a Style column before the name (the rows' names are STYLE TR_STATS_STYLE_SEP NAME). */
static void print_table(FILE *f, const tr_stat_row *rows, uint32_t n, const char *count_header,
                        const char *name_header, int mb, int styled)
{
    static const char *const time_hdr[] = {"Time (%)", "Total Time (ns)", NULL, "Avg (ns)", "Med (ns)",
                                           "Min (ns)", "Max (ns)", "StdDev (ns)"};
    static const char *const size_hdr[] = {"Total (MB)", NULL, "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)",
                                           "StdDev (MB)"};
    const char *hdr[NCOL];
    int nnum = mb ? 7 : 8, ncol = 0;   /* numeric columns (right-aligned), then [Style,] the name */
    size_t w[NCOL];
    char cell[NCOL][48];
    const char *const *num_hdr = mb ? size_hdr : time_hdr;   /* NULL: the count's column */
    for (int c = 0; c < nnum; c++)
        hdr[ncol++] = num_hdr[c] != NULL ? num_hdr[c] : count_header;
    if (styled)
        hdr[ncol++] = "Style";
    hdr[ncol++] = name_header;
    for (int c = 0; c < ncol; c++)
        w[c] = strlen(hdr[c]);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            /* one blank before the first column, two between columns, as nsys prints; text columns left-aligned */
            for (int c = 0; c < ncol; c++)
                fprintf(f, c >= nnum ? "  %-*s" : c ? "  %*s" : " %*s", (int)w[c], hdr[c]);
            fputc('\n', f);
            for (int c = 0; c < ncol; c++) {
                fputs(c ? "  " : " ", f);
                for (size_t k = 0; k < w[c]; k++)
                    fputc('-', f);
            }
            fputc('\n', f);
        }
        for (uint32_t i = 0; i < n; i++) {
            const tr_stat_row *r = &rows[i];
            const char *name = r->name;
            if (mb) {
                fmt_mb(cell[0], sizeof cell[0], (double)r->total);
                fmt_u(cell[1], sizeof cell[1], r->n);
                fmt_mb(cell[2], sizeof cell[2], r->avg);
                fmt_mb(cell[3], sizeof cell[3], r->med);
                fmt_mb(cell[4], sizeof cell[4], (double)r->min);
                fmt_mb(cell[5], sizeof cell[5], (double)r->max);
                fmt_mb(cell[6], sizeof cell[6], r->stddev);
            } else {
                snprintf(cell[0], sizeof cell[0], "%.1f", r->pct);
                tr_c_number(cell[0]);
                fmt_u(cell[1], sizeof cell[1], r->total);
                fmt_u(cell[2], sizeof cell[2], r->n);
                fmt_d(cell[3], sizeof cell[3], r->avg);
                fmt_d(cell[4], sizeof cell[4], r->med);
                fmt_u(cell[5], sizeof cell[5], r->min);
                fmt_u(cell[6], sizeof cell[6], r->max);
                fmt_d(cell[7], sizeof cell[7], r->stddev);
            }
            if (styled)
                name = split_styled(name, cell[nnum], sizeof cell[nnum]);
            if (pass == 0) {
                for (int c = 0; c < ncol - 1; c++)
                    if (strlen(cell[c]) > w[c])
                        w[c] = strlen(cell[c]);
                if (strlen(name) > w[ncol - 1])
                    w[ncol - 1] = strlen(name);
                continue;
            }
            for (int c = 0; c < ncol - 1; c++)
                fprintf(f, c >= nnum ? "  %-*s" : c ? "  %*s" : " %*s", (int)w[c], cell[c]);
            fputs("  ", f);
            put_name(f, name);
            fputc('\n', f);
        }
    }
    {
        uint32_t na = 0;
        char style[48];
        for (uint32_t i = 0; i < n; i++)
            na += rows[i].approx != 0;
        if (na > 0) {
            fprintf(f, "\n%s from a histogram, within 0.4%% (more %s than the memory kept for exact "
                       "medians, trace option summary_exact; the trace file has every one):",
                    mb ? "Med (MB)" : "Med (ns)", mb ? "sizes" : "durations");
            for (uint32_t i = 0, shown = 0; i < n; i++) {
                if (!rows[i].approx)
                    continue;
                if (shown++ == 8) {
                    fprintf(f, " and %u more", na - 8);
                    break;
                }
                fputc(' ', f);
                put_name(f, styled ? split_styled(rows[i].name, style, sizeof style) : rows[i].name);
            }
            fputc('\n', f);
        }
    }
}

void tr_stats_print(FILE *f, const tr_stat_row *rows, uint32_t n, const char *count_header)
{
    print_table(f, rows, n, count_header, "Name", 0, 0);
}

void tr_stats_print_nvtx(FILE *f, const tr_stat_row *rows, uint32_t n)
{
    print_table(f, rows, n, "Instances", "Range", 0, 1);
}

const char *tr_memop_label(const char *event_name)
{
    /* the file's GPU copy and set events ("Memcpy HtoD", "Memset ") and nsys's operation names */
    static const struct {
        const char *event, *op;
    } ops[] = {
        {"Memcpy HtoD", "[CUDA memcpy Host-to-Device]"},  {"Memcpy DtoH", "[CUDA memcpy Device-to-Host]"},
        {"Memcpy DtoD", "[CUDA memcpy Device-to-Device]"}, {"Memcpy HtoH", "[CUDA memcpy Host-to-Host]"},
        {"Memcpy PtoP", "[CUDA memcpy Peer-to-Peer]"},    {"Memcpy HtoA", "[CUDA memcpy Host-to-Array]"},
        {"Memcpy AtoH", "[CUDA memcpy Array-to-Host]"},   {"Memcpy AtoA", "[CUDA memcpy Array-to-Array]"},
        {"Memcpy AtoD", "[CUDA memcpy Array-to-Device]"}, {"Memcpy DtoA", "[CUDA memcpy Device-to-Array]"},
    };
    if (strncmp(event_name, "Memset", 6) == 0)
        return "[CUDA memset]";
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(event_name, ops[i].event) == 0)
            return ops[i].op;
    return "[CUDA memcpy Unknown]";
}

void tr_stats_print_memops(FILE *f, tr_stats *time, tr_stats *size)
{
    tr_stat_row *rows = NULL;
    uint32_t n = tr_stats_rows(time, &rows);
    if (n > 0) {
        fprintf(f, "\nCUDA GPU MemOps Summary by Time (cuda_gpu_mem_time_sum):\n\n");
        print_table(f, rows, n, "Count", "Operation", 0, 0);
    }
    free(rows);
    rows = NULL;
    n = tr_stats_rows(size, &rows);
    if (n > 0) {
        fprintf(f, "\nCUDA GPU MemOps Summary by Size (cuda_gpu_mem_size_sum):\n\n");
        print_table(f, rows, n, "Count", "Operation", 1, 0);
    }
    free(rows);
}

/* A JSON string: control bytes as \u00XX, what is not UTF-8 as '?' (a kernel's name comes from the program). */
void tr_stats_json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        unsigned c = *p, k = utf8_len(p);
        if (k == 0) {
            fputc('?', f);
            p++;
            continue;
        }
        if (k > 1)
            fwrite(p, 1, k, f);
        else if (c == '"' || c == '\\')
            fputc('\\', f), fputc((int)c, f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc((int)c, f);
        p += k;
    }
    fputc('"', f);
}

void tr_stats_json(FILE *f, const char *report, tr_stats *st, int mode)
{
    tr_stat_row *rows = NULL;
    uint32_t n = tr_stats_rows(st, &rows);
    int sizes = mode == TR_JSON_SIZES;
    const char *u = sizes ? "bytes" : "ns";
    char style[48];
    fprintf(f, "\"%s\":[", report);
    for (uint32_t i = 0; i < n; i++) {
        const tr_stat_row *r = &rows[i];
        fprintf(f, "%s\n{\"name\":", i ? "," : "");
        if (mode == TR_JSON_STYLED) {
            tr_stats_json_str(f, split_styled(r->name, style, sizeof style));
            fputs(",\"style\":", f);
            tr_stats_json_str(f, style);
        } else {
            tr_stats_json_str(f, r->name);
        }
        fprintf(f, ",\"count\":%llu,\"total_%s\":%llu,", (unsigned long long)r->n, u, (unsigned long long)r->total);
        /* JSON has no NaN or infinity: such a value (never expected) is written 0 */
        if (!sizes)
            fprintf(f, "\"time_pct\":%.3f,", isfinite(r->pct) ? r->pct : 0.0);
        fprintf(f, "\"avg_%s\":%.3f,\"med_%s\":%.3f,\"min_%s\":%llu,\"max_%s\":%llu,\"stddev_%s\":%.3f,"
                "\"med_approx\":%s}", u, isfinite(r->avg) ? r->avg : 0.0, u, isfinite(r->med) ? r->med : 0.0, u,
                (unsigned long long)r->min, u, (unsigned long long)r->max, u,
                isfinite(r->stddev) ? r->stddev : 0.0, r->approx ? "true" : "false");
    }
    fputs("]", f);
    free(rows);
}
