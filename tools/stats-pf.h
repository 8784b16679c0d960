/*
 * stats-pf.h - 'cushim stats': the events of a Perfetto protobuf trace the
 * trace plugin wrote (format=perfetto; plugins/trace/tr_pf.c), read packet by
 * packet (plain or gzip), handed on as the JSON format's events: a slice of
 * calls, kernels, copies or sets as one 'X' event with its duration, NVTX
 * ranges as their 'B'/'E' ('b'/'e' on an async range's track) in file order.
 * Memory stays bounded: a packet longer than SP_PACKET_MAX, more than
 * SP_TRACKS_MAX tracks or SP_INTERN_MAX interned strings refuse the file.
 */
#ifndef CUSHIM_STATS_PF_H
#define CUSHIM_STATS_PF_H

#include <stddef.h>
#include <stdint.h>

#define SP_PACKET_MAX (16u << 20)
#define SP_TRACKS_MAX (1u << 20)
#define SP_INTERN_MAX (1u << 22)
#define SP_DEPTH_MAX 256u

typedef struct sp_event {
    char ph;                          /* 'X', 'B', 'E', 'b', 'e' */
    const char *cat, *name, *domain;  /* never NULL */
    uint64_t pid, tid, id, ts, dur, bytes;
    int continued;
} sp_event;

/* Is the (gunzipped) text starting with 'c' a protobuf trace (a first field 1, length-delimited)? */
int sp_is_perfetto(int c);
/* Reads 'path'; each event to on_event (NULL: none); the otherData event's summary_exact_values to *budget.
   0, or -1 with 'why' (refused: not a trace, or past a bound); *cut: the file ends inside a packet (its complete
   packets were read). */
int sp_read(const char *path, void (*on_event)(void *ctx, const sp_event *e), void *ctx,
            unsigned long long *budget, int *cut, char *why, size_t cap);

#endif
