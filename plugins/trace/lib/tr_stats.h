/*
 * tr_stats.h - the summary tables: Nsight Systems' cuda_api_sum columns
 * (Time (%), Total Time (ns), Num Calls, Avg, Med, Min, Max, StdDev, Name) from
 * per-name duration series. Shared by the plugin (its at-exit table) and
 * 'cushim stats' (the same table from a trace file), so both print the same.
 */
#ifndef TR_STATS_H
#define TR_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "tr_json.h"   /* tr_c_number */

/* Memory is bounded: every duration is kept (exact medians) until the series of one table hold
   TR_STATS_EXACT values between them; past that, the largest series become histograms
   (TR_HIST_BUCKETS log-linear buckets, 128 a power of two: a median within 0.4% of the exact one, the
   bucket's middle; total, min, max, mean exact, the standard deviation by Welford's method). */
#define TR_STATS_EXACT (4u << 20)   /* values (8 bytes each): 32 MiB a table */
#define TR_HIST_SUB 7               /* 2^7 buckets a power of two */
#define TR_HIST_BUCKETS ((64 - TR_HIST_SUB + 1) << TR_HIST_SUB)

typedef struct tr_series {
    char *name;
    uint64_t *v;       /* exact mode: the values */
    uint64_t n, cap;
    uint64_t *hist;    /* histogram mode (v freed): counts by bucket */
    uint64_t total, min, max;
    double mean, m2;   /* histogram mode: Welford's running mean and sum of squared deviations */
} tr_series;

typedef struct tr_stats {
    tr_series *s;
    uint32_t n, cap;
    uint32_t *index;   /* open addressing over s[], 'icap' slots, value+1 */
    uint32_t icap;
    int oom;
    uint64_t exact_budget; /* values the exact series may hold between them (TR_STATS_EXACT at init) */
    uint64_t exact_used;   /* values they have room for (a series smaller than a histogram may pass it) */
    uint32_t napprox;      /* series in histogram mode */
    uint32_t max_series;   /* 0: no bound; else past this many names, a new name's values go to its fold row */
    uint64_t folded;       /* values added to fold rows */
    uint32_t *big;         /* the exact series of TR_HIST_BUCKETS values or more (indexes into s[]): the ones the
                              budget turns into histograms, so that only they are looked at past it */
    uint32_t nbig, capbig;
    uint64_t work;         /* series looked at (hash probes, candidates for a histogram): the tests' measure that
                              the cost of an add does not grow with the number of names */
} tr_stats;

typedef struct tr_stat_row {
    const char *name;
    uint64_t total, n, min, max;
    double pct, avg, med, stddev;   /* stddev: sample (n - 1), 0 for one value */
    int approx;                     /* med from the histogram */
} tr_stat_row;

void tr_stats_init(tr_stats *st);
/* The exact budget (values), for tests; call before the first add. */
void tr_stats_set_exact(tr_stats *st, uint64_t values);
/* At most 'n' names (series), for a table whose names come from the program (NVTX messages: PyTorch's
   emit_nvtx puts a sequence number in each); past them, the values of a name not yet seen go to its fold row,
   named TR_STATS_FOLD (after the name's style and TR_STATS_STYLE_SEP, when it has them). Call before the first
   add. Which names get rows is the order they first came in. */
void tr_stats_set_max_series(tr_stats *st, uint32_t n);
#define TR_STATS_FOLD "(the rest: names past the table's first ones)"
void tr_stats_free(tr_stats *st);
/* Adds one duration (ns) to the series 'name'. -1 when out of memory. */
int tr_stats_add(tr_stats *st, const char *name, uint64_t ns);
/* The series 'name' (created if new): its index for tr_stats_add_at; -1 when out of memory. */
int64_t tr_stats_find(tr_stats *st, const char *name);
int tr_stats_add_at(tr_stats *st, uint32_t index, uint64_t ns);
/* Rows sorted by total time (descending, then name); the series are sorted
   in place. Returns the count; *rows is malloc'd (NULL when empty). */
uint32_t tr_stats_rows(tr_stats *st, tr_stat_row **rows);
/* The table: 'count_header' is "Num Calls" or "Instances". Rows whose median is approximate are
   listed after it. */
void tr_stats_print(FILE *f, const tr_stat_row *rows, uint32_t n, const char *count_header);
/* NVTX ranges (nvtx_sum): a series' name is STYLE TR_STATS_STYLE_SEP RANGE - the style "PushPop" or
   "StartEnd", the range "DOMAIN:MESSAGE" (":MESSAGE" in the default domain), as nsys names them - printed
   as nsys's Style and Range columns. */
#define TR_STATS_STYLE_SEP '\x1f'
#define TR_NVTX_PUSHPOP "PushPop"
#define TR_NVTX_STARTEND "StartEnd"
void tr_stats_print_nvtx(FILE *f, const tr_stat_row *rows, uint32_t n);
/* The bounds the writer and 'cushim stats' share, so that both tables count the same ranges: push/pop ranges
   open at once on a thread, all domains together (deeper ones are written but not summarised), and start/end
   ranges waiting for their start or end (more are left out, said with the table). */
#define TR_NVTX_DEPTH 256
#define TR_NVTX_IDS_MAX (1u << 20)
/* Names (rows) of the NVTX table; ranges of further names are summed in a fold row (tr_stats_set_max_series). */
#define TR_NVTX_NAMES_MAX 16384u
/* nsys's operation name of a GPU copy or set event of the trace ("Memcpy HtoD" -> "[CUDA memcpy Host-to-Device]",
   "Memset " -> "[CUDA memset]"). */
const char *tr_memop_label(const char *event_name);
/* The two memory-operation tables, each when it has rows: cuda_gpu_mem_time_sum from 'time' (durations by
   operation) and cuda_gpu_mem_size_sum from 'size' (bytes by operation, printed in MB = 10^6 bytes). */
void tr_stats_print_memops(FILE *f, tr_stats *time, tr_stats *size);
/* One table as a JSON member, "REPORT":[{"name":...,"count":N,"total_ns":...,"time_pct":...,"avg_ns":...,
   "med_ns":...,"min_ns":...,"max_ns":...,"stddev_ns":...,"med_approx":false},...], in the table's order; with
   TR_JSON_SIZES the values are bytes ("total_bytes"..., no "time_pct"); with TR_JSON_STYLED (nvtx_sum) each
   row has "style" after its "name" (the range). Names as JSON strings (control bytes escaped, what is not
   UTF-8 as '?'). */
#define TR_JSON_TIME 0
#define TR_JSON_SIZES 1
#define TR_JSON_STYLED 2
void tr_stats_json(FILE *f, const char *report, tr_stats *st, int mode);
/* 'text' as the tables show a name: each control character (C0, DEL, C1, the bidirectional controls) and each
   byte that is not part of well-formed UTF-8 as '?', into 'out' (cut before a character that does not fit in
   cap - 1 bytes, NUL-terminated; never longer than 'text'); its length. For file names in messages too. */
size_t tr_stats_shown(char *out, size_t cap, const char *text);
/* 's' as a JSON string, as the names above. */
void tr_stats_json_str(FILE *f, const char *s);

#endif /* TR_STATS_H */
