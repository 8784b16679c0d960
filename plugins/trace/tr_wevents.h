/*
 * tr_wevents.h - the writer's NVTX, GPU and thread-name events (tr_wevents.c),
 * and the maps they keep. Writer thread only.
 */
#ifndef TR_WEVENTS_H
#define TR_WEVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "tr_rec.h"
#include "tr_wstate.h"

/* The thread's thread_name event, once. */
void tw_thread_named(tr_writer *w, tw_thr *t);
/* A thread_name event: thread 'tid' is called 'name' ('n' bytes). */
void tw_thread_name_event(tr_writer *w, uint64_t tid, const char *name, size_t n);

int tw_map_put(tw_map *m, uint64_t k, uint64_t v);
int tw_map_get(const tw_map *m, uint64_t k, uint64_t *v);
void tw_map_free(tw_map *m);
/* Removes key 'k': 1 (its value in *v when v is not NULL), or 0 when it was not there. */
int tw_map_del(tw_map *m, uint64_t k, uint64_t *v);
/* Frees the start/end ranges waiting in w->nvtx_ids (tr_wevents.c) and empties the map. */
void tw_nvtx_ids_free(tr_writer *w);
int tw_corr_put(tr_writer *w, uint64_t k, uint64_t v);
int tw_corr_get(const tr_writer *w, uint64_t k, uint64_t *v);

void tw_on_nvtx(tr_writer *w, tw_thr *t, const tr_rec *r);
/* nvtxNameOsThread (recorded on thread 't'): the named thread's thread_name event now (a later one wins, in
   Perfetto as in chrome://tracing), and its name kept for the one written at its first event (so that /proc's
   name does not replace it). */
void tw_on_tname(tr_writer *w, tw_thr *t, const tr_rec *r);
/* The name nvtxNameOsThread gave 'tid', or NULL. */
const char *tw_tname_of(const tr_writer *w, uint64_t tid);
/* A GPU record; without its correlation record yet it waits, unless 'last_chance'. */
void tw_on_gpu(tr_writer *w, const tr_rec *r, int last_chance);
void tw_gpu_flush_pending(tr_writer *w);
void tw_gpu_drop_pending(tr_writer *w);   /* freed unwritten (a fork's child, the end) */

#endif /* TR_WEVENTS_H */
