/*
 * tr_writer_int.h - what the writer's files share (tr_writer.c: draining, calls,
 * the file and the summary; tr_wevents.c: NVTX and GPU events). Writer thread only.
 */
#ifndef TR_WRITER_INT_H
#define TR_WRITER_INT_H

#include "tr_writer.h"

#define TW_GPU_TID_BASE 0x40000000ull   /* GPU stream tracks: above any kernel thread id */


/* The EXIT a CALL record stands for, with its inline output word. */
typedef struct tw_call_exit {
    tr_exit h;
    uint64_t word;
} tw_call_exit;
/* A CALL record as the ENTER (in w->call_buf, valid until the next call) and the EXIT it replaces: 0, or -1
   (malformed, no memory). */
int tw_call_split(tr_writer *w, const tr_call *c, tw_call_exit *ex);

/* An entry of a thread's open-call stack, as read by the writer. */
typedef struct tr_open_copy {
    uint64_t seq, parent, t;
    uint64_t kname;                  /* a launch's kernel name (interned), or 0 */
    uint32_t api_id, depth;
} tr_open_copy;
/* The thread's fast-path calls in flight that look whole, innermost last (at most TR_OPEN_MAX); *beyond: those
   only counted. */
uint32_t tw_open_read(tr_writer *w, tr_tbuf *tb, tr_open_copy *out, uint64_t *beyond);

typedef struct tw_thr {
    uint64_t tid, alt_tid;
    int named;
    tr_rec **stack;
    uint32_t depth, cap;
    uint32_t nopen;                  /* the thread's fast-path calls in flight at the end (thr_read_open) */
    tr_open_copy open[TR_OPEN_MAX];
    /* NVTX ranges pushed on the thread and not yet popped, all domains together, innermost last (copies of their
       PUSH records: a range split by another domain's pop is opened again by name); past TW_NVTX_DEPTH only
       counted (nvtx_over) and closed in order */
    tr_rec **nvtx;
    uint32_t nvtx_depth, nvtx_cap, nvtx_over;
} tw_thr;
#define TW_NVTX_DEPTH TR_NVTX_DEPTH

/* The event in w->sb to the file (with its separator); w->sb emptied. */
void tw_emit(tr_writer *w);
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
/* The correlation map, bounded: TW_CORR_KEEP ids a generation, two generations kept (~2 x 16 MiB at most). A
   GPU record comes within a CUPTI buffer or two of its call (tens of thousands of records), so an id this old
   has had all its records; a GPU record without its id is still written, unlinked. */
#define TW_CORR_KEEP (1u << 19)
/* GPU records waiting for their correlation record: beyond this many the oldest is written unlinked. */
#define TW_GPU_PENDING_MAX (1u << 16)
int tw_corr_put(tr_writer *w, uint64_t k, uint64_t v);
int tw_corr_get(const tr_writer *w, uint64_t k, uint64_t *v);

void tw_on_nvtx(tr_writer *w, tw_thr *t, const tr_rec *r);
/* nvtxNameOsThread (recorded on thread 't'): the named thread's thread_name event now (a later one wins, in
   Perfetto as in chrome://tracing), and its name kept for the one written at its first event (so that /proc's
   name does not replace it). */
typedef struct tw_tname {
    uint64_t tid;
    char name[64];
} tw_tname;
void tw_on_tname(tr_writer *w, tw_thr *t, const tr_rec *r);
/* The name nvtxNameOsThread gave 'tid', or NULL. */
const char *tw_tname_of(const tr_writer *w, uint64_t tid);
/* A GPU record; without its correlation record yet it waits, unless 'last_chance'. */
void tw_on_gpu(tr_writer *w, const tr_rec *r, int last_chance);
void tw_gpu_flush_pending(tr_writer *w);
void tw_gpu_drop_pending(tr_writer *w);   /* freed unwritten (a fork's child, the end) */

#endif /* TR_WRITER_INT_H */
