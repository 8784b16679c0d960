/*
 * tr_buf.h - the trace plugin's recording buffers: one chain of chunks per
 * thread, written by that thread alone and read by the writer alone.
 *
 * A producer appends whole records to its current chunk and publishes each
 * with a release store of the chunk's 'committed' offset; when a record does
 * not fit, it links a new chunk behind the old one ('next', release) and goes
 * on there. The writer follows each thread's chain from 'rd', consumes up to
 * 'committed' and gives a chunk back once its successor exists (the producer never
 * touches a chunk again after linking the next). No lock on either side per
 * record; the pool below takes a mutex once per chunk.
 *
 * Chunks of the standard size come from a pool (tr_bufs' pool_* fields): the
 * writer gives drained chunks back to it (warm memory, no page faults when they
 * are used again) and, between drain passes, tr_bufs_refill keeps some ready
 * chunks pre-faulted (carved from mmap'ed slabs, MADV_POPULATE_WRITE) so that
 * a producer's slow path takes a ready chunk instead of faulting fresh memory
 * in on the calling thread. With none ready, the producer carves one itself.
 * Records larger than a chunk get a chunk of their own from malloc.
 *
 * Memory is bounded: chunks count against 'limit' bytes, pooled ones too; a record that needs a
 * new chunk beyond it is dropped and counted. So that every recorded call can
 * still be closed, an enter record leaves room in its chunk for the minimal
 * exit records of every call open on the thread (tr_buf_reserve's 'keep').
 * Host-free: the unit tests drive it alone.
 */
#ifndef TR_BUF_H
#define TR_BUF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The producer's 'committed' and the writer's 'consumed' sit on different
   cache lines, and the records start on a third: the writer's progress never
   invalidates the line the producer publishes on (and the writer updates
   'consumed' once per drain, not per record). */
#define TR_CACHELINE 64

typedef struct tr_chunk {
    struct tr_chunk *_Atomic next;  /* set by the producer after its last commit here */
    _Atomic uint32_t committed;     /* bytes of whole records, published (release)    */
    uint32_t cap;                   /* bytes of data[]                                 */
    _Alignas(TR_CACHELINE) uint32_t consumed;   /* writer only                        */
    _Alignas(TR_CACHELINE) unsigned char data[];
} tr_chunk;

/* States of a thread buffer in the registry. */
#define TR_TB_ACTIVE 0   /* its thread records into it                      */
#define TR_TB_EXITED 1   /* its thread ended: the writer drains and frees it */
#define TR_TB_FREE 2     /* drained: a new thread may claim it               */
#define TR_TB_CLAIMING 3 /* being set up by a new thread                     */

/* A fast-path call in flight on a thread (the trace plugin's CALL records): what the writer needs to show it
   as unfinished when the file is finished before it returns. Written by its thread alone; the writer reads
   the entries below 'nopen' only when finishing, racily (it validates what it reads). */
#define TR_OPEN_MAX 16
typedef struct tr_open {
    _Atomic uint64_t seq;
    _Atomic uint64_t parent;
    _Atomic uint64_t t;             /* entry, the hooks' clock (tr_rec.h)             */
    _Atomic uint64_t id_depth;      /* api id (low 32 bits), depth (high 32)            */
    _Atomic uint64_t kname;         /* a launch's kernel name (interned const char *), else 0 */
} tr_open;

/* tr_tbuf.hold: TR_HOLD_QUIET, the tracer's own thread (CUPTI's), whose calls are not recorded; TR_HOLD_BUSY, a
   record is being written (reservation to commit): a record a signal handler makes on this thread meanwhile - an
   NVTX call, CUPTI's callback inside a CUDA call, a CUDA call's hooks - is not kept (tr_bufs.interrupted), never
   written over it nor waiting on a lock the thread holds. */
#define TR_HOLD_QUIET 1
#define TR_HOLD_BUSY 2

typedef struct tr_tbuf {
    /* producer side (its thread only; the writer reads tid, alt_tid once per thread) */
    tr_chunk *cur;
    uint32_t wr;                    /* write offset in cur                             */
    uint32_t open;                  /* enter records whose exit is still to come       */
    uint64_t tid;
    uint64_t alt_tid;               /* pthread_self(): CUPTI may name threads by it     */
    void *prod;                     /* the plugin's per-thread data (kernel-name cache) */
    char name[16];                  /* the thread's name at its first record (set by the plugin before that
                                       record's commit publishes it; "" none): the writer names the thread by
                                       it, whenever it gets there - /proc's comm is gone once the thread is */
    int hold;                       /* TR_HOLD_*: nothing recorded on this thread (one test on the hooks' path) */
    /* fast-path calls in flight, innermost last: entries beyond TR_OPEN_MAX are only counted (set up by
       the plugin, not by tr_buf_attach) */
    _Atomic uint32_t nopen;
    tr_open opens[TR_OPEN_MAX];
    /* shared, and the writer's: on their own cache line, away from the producer's stores */
    _Alignas(TR_CACHELINE) _Atomic int state;   /* TR_TB_*                              */
    tr_chunk *_Atomic rd;           /* the writer's next chunk: the first one, set once */
    struct tr_tbuf *next_tb;        /* registry link, immutable once published          */
    /* writer side */
    void *wstate;                   /* the writer's per-thread state                    */
} tr_tbuf;

typedef struct tr_bufs {
    uint32_t chunk_size;            /* bytes of records a chunk holds: the size asked, rounded up so that
                                       a chunk (header and data) fills whole pages                */
    uint64_t limit;                 /* bytes of chunks at most                         */
    _Atomic uint64_t used;
    _Atomic uint64_t dropped;       /* records not stored (whole events lost)          */
    _Atomic uint64_t trimmed;       /* exit records stored without their output bytes  */
    _Atomic uint64_t interrupted;   /* records a signal handler made while its thread wrote one: not kept */
    _Atomic uint64_t chunks;        /* chunks allocated, ever                          */
    tr_tbuf *_Atomic head;          /* registry: pushed by producers, never unlinked    */
    /* the chunk pool (standard-size chunks; tr_buf.c says how it is shared) */
    pthread_mutex_t pool_lock;
    uint32_t pool_stride;           /* bytes between slab chunks: a page multiple       */
    uint32_t pool_slab;             /* bytes of one slab mapping                        */
    uint64_t pool_cap;              /* bytes of ready chunks kept idle at most          */
    tr_chunk *pool_ready;           /* drained or pre-faulted, counted in 'used'        */
    tr_chunk *pool_cold;            /* released (MADV_DONTNEED), not counted in 'used'  */
    _Atomic uint32_t pool_nready;
    _Atomic uint32_t pool_taken;    /* chunks producers took since the last refill      */
    uint32_t pool_target;           /* ready chunks the last refill aimed at (writer)   */
    uint64_t pool_last_ns;          /* when the last refill ran (writer)                */
    _Atomic int pool_closed;        /* the writer finishes: no more refills             */
    struct tr_slab *_Atomic pool_slabs;
    struct tr_slab *pool_spare;     /* mapped by the writer ahead of need, not carved yet */
    _Atomic uint64_t pool_hits;     /* slow paths that took a ready chunk               */
    _Atomic uint64_t pool_misses;   /* slow paths that carved (faulted) one themselves  */
    _Atomic uint64_t pool_released; /* ready chunks released beyond pool_cap            */
} tr_bufs;

/* The smallest exit record, which 'keep' is counted in. */
#define TR_EXIT_MIN 32u   /* sizeof(tr_exit) */

void tr_bufs_init(tr_bufs *b, uint32_t chunk_size, uint64_t limit);
/* Frees every chunk and thread buffer, unmaps the slabs: only when no producer or writer runs. */
void tr_bufs_destroy(tr_bufs *b);
/* Writer: tops the pool's ready chunks up (pre-faulted): to what producers
   take in 2 ms at their rate since the last refill, or the last target less
   1/8, or 16 chunks, whichever is most, within 'limit' and 'pool_cap'.
   Nothing once 'pool_closed' is set (the writer's last drain, at exit). */
void tr_bufs_refill(tr_bufs *b);

/* The calling thread's new buffer: a freed one reclaimed, else a new one. NULL: no memory. */
tr_tbuf *tr_buf_attach(tr_bufs *b, uint64_t tid);
/* Its thread ends: the writer drains it, then it may be reclaimed. */
void tr_buf_detach(tr_tbuf *tb);

/* Room for 'len' bytes (a multiple of 8) leaving 'keep' bytes behind it in the
   same chunk; NULL (the thread no longer busy) when that needs a chunk beyond the limit. */
void *tr_buf_reserve_slow(tr_bufs *b, tr_tbuf *tb, uint32_t len, uint32_t keep);
/* Marks the thread busy first (TR_HOLD_BUSY): a signal handler that records on this thread from here to the
   commit finds it so and keeps nothing (tr_buf_interrupted) instead of taking the same bytes or the chunk. */
static inline void *tr_buf_reserve(tr_bufs *b, tr_tbuf *tb, uint32_t len, uint32_t keep)
{
    tr_chunk *c;
    tb->hold |= TR_HOLD_BUSY;
    atomic_signal_fence(memory_order_seq_cst);   /* before cur and wr are read: a handler is on this thread */
    c = tb->cur;
    if (c != NULL && (uint64_t)tb->wr + len + keep <= c->cap)
        return c->data + tb->wr;
    return tr_buf_reserve_slow(b, tb, len, keep);
}
/* tr_buf_reserve's usual case alone, for a hook whose usual case calls nothing (tr_query.c): room for 'len'
   bytes and 'keep' more in the current chunk, the thread busy as there; or NULL, the thread's 'hold' as it was
   (the caller's case: nothing held) and nothing else changed, for the caller to take the long way. */
static inline void *tr_buf_reserve_usual(tr_tbuf *tb, uint32_t len, uint32_t keep)
{
    tr_chunk *c;
    tb->hold |= TR_HOLD_BUSY;
    atomic_signal_fence(memory_order_seq_cst);   /* before cur and wr are read: a handler is on this thread */
    c = tb->cur;
    if (__builtin_expect(c != NULL && (uint64_t)tb->wr + len + keep <= c->cap, 1))
        return c->data + tb->wr;
    atomic_signal_fence(memory_order_seq_cst);
    tb->hold &= ~TR_HOLD_BUSY;
    return NULL;
}
/* Room for 'len' bytes in the current chunk only (the space 'keep' saved); busy as tr_buf_reserve. */
void *tr_buf_reserve_here(tr_tbuf *tb, uint32_t len);
/* Publishes the 'len' bytes reserved last; the thread no longer busy. */
static inline void tr_buf_commit(tr_tbuf *tb, uint32_t len)
{
    tb->wr += len;
    atomic_store_explicit(&tb->cur->committed, tb->wr, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    tb->hold &= ~TR_HOLD_BUSY;
}
/* For what may run in a signal handler (NVTX's calls and CUPTI's callbacks through tr_record2, a CUDA call's
   hooks): 1 when the thread was interrupted while writing a record - the caller keeps nothing, counted. */
static inline int tr_buf_interrupted(tr_bufs *b, const tr_tbuf *tb)
{
    if (!(tb->hold & TR_HOLD_BUSY))
        return 0;
    atomic_fetch_add_explicit(&b->interrupted, 1, memory_order_relaxed);
    return 1;
}

/* Writer: calls 'fn' for each published, unconsumed record of 'tb' in order
   (a record starts with its uint32_t length), gives chunks left behind back to
   the pool (refilling it as it goes), and returns the number of records seen. */
typedef void (*tr_buf_record_fn)(void *ctx, tr_tbuf *tb, const void *rec, uint32_t len);
uint64_t tr_buf_drain(tr_bufs *b, tr_tbuf *tb, tr_buf_record_fn fn, void *ctx);
/* Writer, once the thread has exited and everything is drained: back to the pool. */
void tr_buf_release(tr_bufs *b, tr_tbuf *tb);

/* Child of fork: the calling thread's buffer survives emptied (NULL: none),
   every other thread's is released, the counters restart, the pool starts
   over on the same slabs. Single-threaded. */
void tr_bufs_fork_child(tr_bufs *b, tr_tbuf *keep);

#endif /* TR_BUF_H */
