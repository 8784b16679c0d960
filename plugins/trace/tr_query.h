/*
 * tr_query.h - the hook of read-only queries on the fast path (tr_query.c): the
 * trace plugin's hottest code, in a file of its own so that a bench-only build
 * (bench/cpu/trace_ablate.c, bench/cpu/ablate.sh) can put a variant in its place
 * without the product carrying the variants.
 */
#ifndef TR_QUERY_H
#define TR_QUERY_H

#include <stdint.h>

#include <cushim/cushim.h>

/* The post hook of the query group (tr_hooks_add, 'st' as its user data). */
void tr_post_query(cushim_call *call, void *user, uint64_t *slot);
/* 1: the hook takes the exit time the core reads (CUSHIM_HOOK_EXIT_TIME) where the plugin asks the core for it
   (trace.c exit_by_core); 0: the hook reads the clock itself (a bench variant's). */
extern const int tr_query_core_clock;

#endif /* TR_QUERY_H */
