/*
 * stats-nvtx.h - 'cushim stats': the NVTX range table (nvtx_sum) from a trace
 * file's NVTX events, as the trace plugin's writer computes it at exit
 * (plugins/trace/tr_wevents.c): a push/pop range is a thread's B ... E, joined
 * across the slices a pop of another domain split it into (the B events with
 * args.continued that reopen it 1 ns after the E that ended a slice); a
 * start/end range is a b and an e of one id, in either order.
 */
#ifndef CUSHIM_STATS_NVTX_H
#define CUSHIM_STATS_NVTX_H

#include <stdint.h>

#include "tr_stats.h"

/* One NVTX event of a file, in the file's order. */
typedef struct sn_ev {
    char ph;                 /* 'B', 'E', 'b' or 'e' (others are ignored) */
    uint64_t pid, tid, id;   /* id: 'b' and 'e' */
    uint64_t ts;             /* ns */
    const char *name;        /* 'B' and 'b': the range's message, as read from the file */
    const char *domain;      /* args.domain, "" for the default domain */
    int continued;           /* args.continued */
} sn_ev;

typedef struct sn_state sn_state;

/* NULL when out of memory. */
sn_state *sn_new(void);
/* Adds to 'out' each range 'e' ends (some only at the next push on the thread, or at sn_file_end). */
void sn_event(sn_state *s, tr_stats *out, const sn_ev *e);
/* The end of one file: its ranges still counted as split end here; open ones are not in the table, and a file's
   threads and ids are forgotten. Returns the start/end ranges left out since the last call because more than
   TR_NVTX_IDS_MAX (the writer's bound too) were waiting for their start or end. */
uint64_t sn_file_end(sn_state *s, tr_stats *out);
void sn_free(sn_state *s);
/* Threads and ids looked at so far in the look-ups: the tests' measure that a look-up's cost does not grow with
   the number of threads and ids. */
uint64_t sn_probes(const sn_state *s);

#endif /* CUSHIM_STATS_NVTX_H */
