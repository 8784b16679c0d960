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

typedef struct tr_series {
    char *name;
    uint64_t *v;
    uint64_t n, cap;
} tr_series;

typedef struct tr_stats {
    tr_series *s;
    uint32_t n, cap;
    uint32_t *index;   /* open addressing over s[], 'icap' slots, value+1 */
    uint32_t icap;
    int oom;
} tr_stats;

typedef struct tr_stat_row {
    const char *name;
    uint64_t total, n, min, max;
    double pct, avg, med, stddev;   /* stddev: sample (n - 1), 0 for one value */
} tr_stat_row;

void tr_stats_init(tr_stats *st);
void tr_stats_free(tr_stats *st);
/* Adds one duration (ns) to the series 'name'. -1 when out of memory. */
int tr_stats_add(tr_stats *st, const char *name, uint64_t ns);
/* The series 'name' (created if new): its index for tr_stats_add_at; -1 when out of memory. */
int64_t tr_stats_find(tr_stats *st, const char *name);
int tr_stats_add_at(tr_stats *st, uint32_t index, uint64_t ns);
/* Rows sorted by total time (descending, then name); the series are sorted
   in place. Returns the count; *rows is malloc'd (NULL when empty). */
uint32_t tr_stats_rows(tr_stats *st, tr_stat_row **rows);
/* The table: 'count_header' is "Num Calls" or "Instances". */
void tr_stats_print(FILE *f, const tr_stat_row *rows, uint32_t n, const char *count_header);

#endif /* TR_STATS_H */
