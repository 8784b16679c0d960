/*
 * tr_buf.c - per-thread chunk chains between the recording hooks and the
 * writer (tr_buf.h says how they are shared), and the chunk pool behind them.
 *
 * The pool. Standard-size chunks (cap == chunk_size) are carved from slabs,
 * anonymous mappings of 2 MiB when the limit is 16 MiB or more, else of one
 * chunk each; a chunk starts on a page and owns 'pool_stride' bytes (its
 * header and data: tr_bufs_init rounds chunk_size up to fill whole pages), so
 * that its pages can be released alone. A chunk is, at any time, exactly one of:
 *   - in a thread's chain (counted in 'used'),
 *   - ready: on pool_ready, its pages present (recycled by the writer or
 *     pre-faulted by tr_bufs_refill), counted in 'used',
 *   - cold: on pool_cold, its pages released but the first (which holds the
 *     list's link), or never touched; not counted,
 *   - not carved yet: the rest of the newest slab.
 * 'used' is therefore every chunk byte held, in use or ready: the 'buffer'
 * limit keeps its meaning. At most 'pool_cap' bytes stay ready (default
 * max(8 MiB, limit / 8)); a drained chunk beyond that is released
 * (MADV_DONTNEED) and goes cold. Slabs are unmapped by tr_bufs_destroy only.
 * Resident memory beyond 'used': the first page of each cold chunk (4 KiB of
 * a 68 KiB stride), and with transparent huge pages 'always', whatever the
 * kernel backs a slab with (2 MiB at most beyond the carved part).
 *
 * Locking: one mutex (pool_lock, adaptive) over the lists and the slabs'
 * carving. A producer takes it once per chunk (every ~720 recorded calls of
 * 96 bytes), for a few pointer moves: an uncontended lock and unlock there is
 * well under 0.1 ns per call, and the lock's happens-before edge is what hands
 * a chunk the writer read to the producer that writes it next (a lock-free
 * stack would need ABA protection for no measurable gain). Nobody holds it
 * across a system call: populating and releasing pages run outside, and the
 * writer maps the next slab ahead (pool_spare) outside it too; only a
 * producer or refill that finds no spare maps one under it. The producer
 * never waits for the writer otherwise: with no chunk ready it carves one
 * itself and populates it (one madvise), as it used to malloc one. The
 * writer's last drain (pool_closed, at exit or for a crash signal) only ever
 * trylocks: the thread that crashed may hold the lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* MADV_* */
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tr_buf.h"

#define TR_SLAB_BYTES (2u * 1024u * 1024u)
#define TR_POOL_MIN_READY 16u    /* ready chunks kept by a refill at least (within limit and cap) */
#define TR_POOL_CAP_MIN (8ull * 1024u * 1024u)
#define TR_POOL_HORIZON_NS 2000000u   /* a refill provides for this long: the writer's 1 ms sleep, twice */
#define TR_POOL_MIN_DT_NS 100000u

struct tr_slab {
    struct tr_slab *next;        /* immutable once published */
    unsigned char *base;
    size_t size;
    size_t carved;               /* under pool_lock */
};

static size_t tr_page(void)
{
    static _Atomic size_t pg;   /* any thread may be first: the same value either way */
    size_t v = atomic_load_explicit(&pg, memory_order_relaxed);
    if (v == 0) {
        long r = sysconf(_SC_PAGESIZE);
        v = r > 0 ? (size_t)r : 4096u;
        atomic_store_explicit(&pg, v, memory_order_relaxed);
    }
    return v;
}

/* Adaptive: spins a little before sleeping, as every critical section under it is a few stores
   (a producer that slept on it would pay a context switch for a lock held for nanoseconds). */
static void pool_lock_init(tr_bufs *b)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP   /* glibc: the type is an enum, its initialiser a macro */
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&b->pool_lock, &a);
    pthread_mutexattr_destroy(&a);
}

void tr_bufs_init(tr_bufs *b, uint32_t chunk_size, uint64_t limit)
{
    size_t pg = tr_page();
    uint64_t stride;
    memset(b, 0, sizeof *b);
    /* rounded up so that a chunk's header and data fill whole pages (a 64 KiB chunk: 17 pages, 69,504
       bytes of records): its last page is not faulted in for 128 bytes */
    stride = (sizeof(tr_chunk) + (uint64_t)((chunk_size + 7u) & ~7u) + pg - 1) & ~(uint64_t)(pg - 1);
    if (stride < 2 * pg)   /* a pooled chunk has 2 pages at least (one stays when released) */
        stride = 2 * pg;
    b->chunk_size = stride - sizeof(tr_chunk) > UINT32_MAX / 2 ? (chunk_size + 7u) & ~7u
                                                              : (uint32_t)(stride - sizeof(tr_chunk));
    b->limit = limit;
    atomic_init(&b->used, 0);
    atomic_init(&b->dropped, 0);
    atomic_init(&b->trimmed, 0);
    atomic_init(&b->interrupted, 0);
    atomic_init(&b->chunks, 0);
    atomic_init(&b->head, NULL);
    pool_lock_init(b);
    /* 0: no pool, every chunk malloc'ed */
    b->pool_stride = stride > UINT32_MAX / 2 ? 0 : (uint32_t)stride;
    b->pool_slab = limit >= 16ull * 1024u * 1024u && stride <= TR_SLAB_BYTES / 4 ? TR_SLAB_BYTES : b->pool_stride;
    b->pool_cap = limit / 8 > TR_POOL_CAP_MIN ? limit / 8 : TR_POOL_CAP_MIN;
    b->pool_ready = b->pool_cold = NULL;
    b->pool_spare = NULL;
    atomic_init(&b->pool_nready, 0);
    atomic_init(&b->pool_taken, 0);
    atomic_init(&b->pool_closed, 0);
    b->pool_target = 0;
    b->pool_last_ns = 0;
    atomic_init(&b->pool_slabs, NULL);
    atomic_init(&b->pool_hits, 0);
    atomic_init(&b->pool_misses, 0);
    atomic_init(&b->pool_released, 0);
}

static uint64_t chunk_bytes(const tr_chunk *c)
{
    return sizeof *c + c->cap;
}

static int chunk_pooled(const tr_bufs *b, const tr_chunk *c)
{
    return b->pool_stride != 0 && c->cap == b->chunk_size;
}

/* Writes every page of [p, p + len) in, off the calling thread's critical path. */
static void pages_populate(void *p, size_t len)
{
    static _Atomic int no_populate;   /* MADV_POPULATE_WRITE unknown to this kernel (before 5.14) */
    size_t pg = tr_page();
#ifdef MADV_POPULATE_WRITE
    if (!atomic_load_explicit(&no_populate, memory_order_relaxed)) {
        if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
            return;
        if (errno == EINVAL)
            atomic_store_explicit(&no_populate, 1, memory_order_relaxed);
    }
#endif
    for (size_t off = 0; off < len; off += pg)
        ((volatile unsigned char *)p)[off] = 0;
}

/* A new slab, not yet published. No MADV_HUGEPAGE: tried (2 MiB aligned slabs), it cut the faults
   a recording thread still takes on a chunk it carves itself (16 per chunk to ~1 per slab), but with
   this kernel's THP defrag setting ('madvise': direct compaction on a fault in an advised range) that
   thread then blocked for milliseconds now and then: half the runs of the benchmark took 4x the wall
   time for the same CPU time (docs/benchmarks.md, "Chunk pool"). */
static struct tr_slab *slab_map(tr_bufs *b)
{
    struct tr_slab *s = malloc(sizeof *s);
    unsigned char *p;
    if (s == NULL)
        return NULL;
    p = mmap(NULL, b->pool_slab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        free(s);
        return NULL;
    }
    s->base = p;
    s->size = b->pool_slab;
    s->carved = 0;
    s->next = NULL;
    return s;
}

static void slab_unmap(struct tr_slab *s)
{
    munmap(s->base, s->size);
    free(s);
}

/* The next slab to carve: the writer's spare (mapped outside the lock by tr_bufs_refill), else a new
   mapping here. Under pool_lock. */
static struct tr_slab *slab_new(tr_bufs *b)
{
    struct tr_slab *s = b->pool_spare;
    if (s != NULL)
        b->pool_spare = NULL;
    else if ((s = slab_map(b)) == NULL)
        return NULL;
    s->next = atomic_load_explicit(&b->pool_slabs, memory_order_relaxed);
    /* published whole: a fork child walking the list sees every slab complete */
    atomic_store_explicit(&b->pool_slabs, s, memory_order_release);
    return s;
}

/* A chunk not counted in 'used': a cold one, else carved from the newest slab (a new one when
   it is full). NULL: no memory. Under pool_lock. */
static tr_chunk *chunk_fresh_locked(tr_bufs *b)
{
    tr_chunk *c = b->pool_cold;
    struct tr_slab *s;
    if (c != NULL) {
        b->pool_cold = atomic_load_explicit(&c->next, memory_order_relaxed);
        return c;
    }
    s = atomic_load_explicit(&b->pool_slabs, memory_order_relaxed);
    if (s == NULL || s->size - s->carved < b->pool_stride)
        if ((s = slab_new(b)) == NULL)
            return NULL;
    c = (tr_chunk *)(s->base + s->carved);
    s->carved += b->pool_stride;
    return c;
}

static void chunk_reset(tr_chunk *c, uint32_t cap)
{
    atomic_init(&c->next, NULL);
    atomic_init(&c->committed, 0);
    c->cap = cap;
    c->consumed = 0;
}

/* Producer: a standard-size chunk, ready if one is, else a fresh one within the limit. */
static tr_chunk *pool_get(tr_bufs *b)
{
    uint64_t sz = sizeof(tr_chunk) + b->chunk_size;
    tr_chunk *c;
    pthread_mutex_lock(&b->pool_lock);
    if ((c = b->pool_ready) != NULL) {
        b->pool_ready = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&b->pool_nready, atomic_load_explicit(&b->pool_nready, memory_order_relaxed) - 1,
                              memory_order_relaxed);
        pthread_mutex_unlock(&b->pool_lock);
        atomic_fetch_add_explicit(&b->pool_hits, 1, memory_order_relaxed);
    } else {
        if (atomic_fetch_add_explicit(&b->used, sz, memory_order_relaxed) + sz <= b->limit)
            c = chunk_fresh_locked(b);
        pthread_mutex_unlock(&b->pool_lock);
        if (c == NULL) {
            atomic_fetch_sub_explicit(&b->used, sz, memory_order_relaxed);
            return NULL;
        }
        /* its pages in one system call rather than a fault per page: ~12 ns a recorded call less on
           one core, where the writer never gets to refill (docs/benchmarks.md, "Chunk pool") */
        pages_populate(c, (size_t)sz);
        atomic_fetch_add_explicit(&b->pool_misses, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->chunks, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&b->pool_taken, 1, memory_order_relaxed);
    chunk_reset(c, b->chunk_size);
    return c;
}

/* Writer: a drained chunk back to the pool: ready (warm) up to pool_cap, else released (cold). */
static void pool_put(tr_bufs *b, tr_chunk *c)
{
    int closed = atomic_load_explicit(&b->pool_closed, memory_order_relaxed);
    /* beyond the idle cap: released, except in the last drain (the process ends: no system calls for that) */
    int release = !closed && (uint64_t)atomic_load_explicit(&b->pool_nready, memory_order_relaxed) *
                                 b->pool_stride + b->pool_stride > b->pool_cap;
    if (release) {
        atomic_fetch_sub_explicit(&b->used, chunk_bytes(c), memory_order_relaxed);   /* before its header goes */
        /* its own pages only (page aligned), but the first: the cold list's link lives there */
        madvise((unsigned char *)c + tr_page(), b->pool_stride - tr_page(), MADV_DONTNEED);
        atomic_fetch_add_explicit(&b->pool_released, 1, memory_order_relaxed);
    }
    if (closed) {
        /* the last drain, maybe for a crash signal on a thread that holds the lock in pool_get: never
           wait for it; a chunk left out stays in its slab, unused */
        if (pthread_mutex_trylock(&b->pool_lock) != 0) {
            atomic_fetch_sub_explicit(&b->used, chunk_bytes(c), memory_order_relaxed);
            return;
        }
    } else {
        pthread_mutex_lock(&b->pool_lock);
    }
    if (release) {
        atomic_store_explicit(&c->next, b->pool_cold, memory_order_relaxed);
        b->pool_cold = c;
    } else {
        atomic_store_explicit(&c->next, b->pool_ready, memory_order_relaxed);
        b->pool_ready = c;
        atomic_store_explicit(&b->pool_nready, atomic_load_explicit(&b->pool_nready, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    pthread_mutex_unlock(&b->pool_lock);
}

static void chunk_put(tr_bufs *b, tr_chunk *c)
{
    if (chunk_pooled(b, c)) {
        pool_put(b, c);
    } else {
        atomic_fetch_sub_explicit(&b->used, chunk_bytes(c), memory_order_relaxed);
        free(c);
    }
}

void tr_bufs_refill(tr_bufs *b)
{
    uint64_t sz = sizeof(tr_chunk) + b->chunk_size, target, cap_n, now, dt;
    uint32_t taken = atomic_exchange_explicit(&b->pool_taken, 0, memory_order_relaxed), ready, n = 0;
    tr_chunk *list = NULL, *c;
    struct tr_slab *ns;
    struct timespec ts;
    int spare;
    if (b->pool_stride == 0 || atomic_load_explicit(&b->pool_closed, memory_order_relaxed))
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    dt = b->pool_last_ns != 0 && now > b->pool_last_ns ? now - b->pool_last_ns : TR_POOL_HORIZON_NS;
    b->pool_last_ns = now;
    /* what producers take in TR_POOL_HORIZON_NS at their rate since the last refill (the interval
       counted as 100 us at least: a refill right after another says little), never dropping by more
       than 1/8 a refill: a burst's rate is remembered for a while. Not 'what they took': after the
       writer was starved for a second, that is a second's worth. */
    if (dt < TR_POOL_MIN_DT_NS)
        dt = TR_POOL_MIN_DT_NS;
    target = ((uint64_t)taken * TR_POOL_HORIZON_NS + dt - 1) / dt;
    if (target < b->pool_target - b->pool_target / 8)
        target = b->pool_target - b->pool_target / 8;
    if (target < TR_POOL_MIN_READY)
        target = TR_POOL_MIN_READY;
    cap_n = b->pool_cap / b->pool_stride;
    if (target > cap_n)
        target = cap_n;
    b->pool_target = (uint32_t)target;
    ready = atomic_load_explicit(&b->pool_nready, memory_order_relaxed);
    if (ready >= target)
        return;
    /* a spare slab, mapped outside the lock, so that neither this refill nor a producer maps one
       while holding it */
    pthread_mutex_lock(&b->pool_lock);
    spare = b->pool_spare == NULL;
    pthread_mutex_unlock(&b->pool_lock);
    if (spare && (ns = slab_map(b)) != NULL) {
        pthread_mutex_lock(&b->pool_lock);
        if (b->pool_spare == NULL) {
            b->pool_spare = ns;
            ns = NULL;
        }
        pthread_mutex_unlock(&b->pool_lock);
        if (ns != NULL)
            slab_unmap(ns);
    }
    pthread_mutex_lock(&b->pool_lock);
    for (uint64_t want = target - ready; n < want; n++) {
        if (atomic_fetch_add_explicit(&b->used, sz, memory_order_relaxed) + sz > b->limit ||
            (c = chunk_fresh_locked(b)) == NULL) {
            atomic_fetch_sub_explicit(&b->used, sz, memory_order_relaxed);
            break;
        }
        atomic_store_explicit(&c->next, list, memory_order_relaxed);
        list = c;
    }
    pthread_mutex_unlock(&b->pool_lock);
    if (list == NULL)
        return;
    /* the page faults, here on the writer thread instead of on a recording one */
    for (c = list; c != NULL; c = atomic_load_explicit(&c->next, memory_order_relaxed))
        pages_populate(c, (size_t)sz);
    atomic_fetch_add_explicit(&b->chunks, n, memory_order_relaxed);
    for (c = list; atomic_load_explicit(&c->next, memory_order_relaxed) != NULL;
         c = atomic_load_explicit(&c->next, memory_order_relaxed))
        ;
    pthread_mutex_lock(&b->pool_lock);
    atomic_store_explicit(&c->next, b->pool_ready, memory_order_relaxed);
    b->pool_ready = list;
    atomic_store_explicit(&b->pool_nready, atomic_load_explicit(&b->pool_nready, memory_order_relaxed) + n,
                          memory_order_relaxed);
    pthread_mutex_unlock(&b->pool_lock);
}

static void tb_free_chunks(tr_bufs *b, tr_tbuf *tb)
{
    tr_chunk *c = atomic_load_explicit(&tb->rd, memory_order_acquire);
    while (c != NULL) {
        tr_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        chunk_put(b, c);
        c = nx;
    }
    atomic_store_explicit(&tb->rd, NULL, memory_order_relaxed);
    tb->cur = NULL;
    tb->wr = 0;
}

/* Frees the malloc'ed (oversized) chunks of a chain and forgets it; pooled chunks are the slabs'. */
static void tb_drop_chunks(tr_bufs *b, tr_tbuf *tb)
{
    tr_chunk *c = atomic_load_explicit(&tb->rd, memory_order_acquire);
    while (c != NULL) {
        tr_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        if (!chunk_pooled(b, c))
            free(c);
        c = nx;
    }
    atomic_store_explicit(&tb->rd, NULL, memory_order_relaxed);
    tb->cur = NULL;
    tb->wr = 0;
}

void tr_bufs_destroy(tr_bufs *b)
{
    tr_tbuf *tb = atomic_load(&b->head);
    struct tr_slab *s = atomic_load(&b->pool_slabs);
    while (tb != NULL) {
        tr_tbuf *nx = tb->next_tb;
        tb_drop_chunks(b, tb);
        free(tb);
        tb = nx;
    }
    atomic_store(&b->head, NULL);
    while (s != NULL) {
        struct tr_slab *nx = s->next;
        slab_unmap(s);
        s = nx;
    }
    atomic_store(&b->pool_slabs, NULL);
    if (b->pool_spare != NULL)
        slab_unmap(b->pool_spare);
    b->pool_spare = NULL;
    b->pool_ready = b->pool_cold = NULL;
    atomic_store(&b->pool_nready, 0);
    atomic_store(&b->used, 0);
    pthread_mutex_destroy(&b->pool_lock);
}

tr_tbuf *tr_buf_attach(tr_bufs *b, uint64_t tid)
{
    tr_tbuf *tb;
    for (tb = atomic_load_explicit(&b->head, memory_order_acquire); tb != NULL; tb = tb->next_tb) {
        int expect = TR_TB_FREE;
        if (atomic_compare_exchange_strong_explicit(&tb->state, &expect, TR_TB_CLAIMING, memory_order_acq_rel,
                                                    memory_order_relaxed))
            break;
    }
    if (tb == NULL) {
        tr_tbuf *head;
        if ((tb = aligned_alloc(TR_CACHELINE, sizeof *tb)) == NULL)   /* sizeof is a multiple of the line */
            return NULL;
        memset(tb, 0, sizeof *tb);
        atomic_init(&tb->state, TR_TB_CLAIMING);
        atomic_init(&tb->rd, NULL);
        head = atomic_load_explicit(&b->head, memory_order_relaxed);
        do
            tb->next_tb = head;
        while (!atomic_compare_exchange_weak_explicit(&b->head, &head, tb, memory_order_release,
                                                      memory_order_relaxed));
    }
    tb->cur = NULL;
    tb->wr = 0;
    tb->open = 0;
    tb->tid = tid;
    tb->prod = NULL;
    memset(tb->name, 0, sizeof tb->name);
    tb->hold = 0;
    atomic_store_explicit(&tb->rd, NULL, memory_order_relaxed);
    atomic_store_explicit(&tb->state, TR_TB_ACTIVE, memory_order_release);
    return tb;
}

void tr_buf_detach(tr_tbuf *tb)
{
    atomic_store_explicit(&tb->state, TR_TB_EXITED, memory_order_release);
}

static void *reserve_slow(tr_bufs *b, tr_tbuf *tb, uint32_t len, uint32_t keep);

void *tr_buf_reserve_slow(tr_bufs *b, tr_tbuf *tb, uint32_t len, uint32_t keep)
{
    void *p = reserve_slow(b, tb, len, keep);
    if (p == NULL)
        tb->hold &= ~TR_HOLD_BUSY;   /* no record to write: the caller commits nothing */
    return p;
}

static void *reserve_slow(tr_bufs *b, tr_tbuf *tb, uint32_t len, uint32_t keep)
{
    tr_chunk *c = tb->cur, *nc;
    uint64_t need = (uint64_t)len + keep, cap = b->chunk_size, sz;
    if (c != NULL && tb->wr + need <= c->cap)
        return c->data + tb->wr;
    if (need <= cap && b->pool_stride != 0) {
        if ((nc = pool_get(b)) == NULL)
            return NULL;
    } else {
        if (need > cap)
            cap = (need + 7u) & ~(uint64_t)7u;
        if (cap > UINT32_MAX / 2)
            return NULL;
        sz = sizeof *nc + cap;
        if (atomic_fetch_add_explicit(&b->used, sz, memory_order_relaxed) + sz > b->limit) {
            atomic_fetch_sub_explicit(&b->used, sz, memory_order_relaxed);
            return NULL;
        }
        if ((nc = aligned_alloc(TR_CACHELINE, (sz + TR_CACHELINE - 1) & ~(uint64_t)(TR_CACHELINE - 1))) == NULL) {
            atomic_fetch_sub_explicit(&b->used, sz, memory_order_relaxed);
            return NULL;
        }
        chunk_reset(nc, (uint32_t)cap);
        atomic_fetch_add_explicit(&b->chunks, 1, memory_order_relaxed);
    }
    /* the old chunk's records are all committed: hand it over */
    if (c != NULL)
        atomic_store_explicit(&c->next, nc, memory_order_release);
    else
        atomic_store_explicit(&tb->rd, nc, memory_order_release);
    tb->cur = nc;
    tb->wr = 0;
    return nc->data;
}

void *tr_buf_reserve_here(tr_tbuf *tb, uint32_t len)
{
    tr_chunk *c;
    tb->hold |= TR_HOLD_BUSY;
    atomic_signal_fence(memory_order_seq_cst);
    c = tb->cur;
    if (c == NULL || (uint64_t)tb->wr + len > c->cap) {
        tb->hold &= ~TR_HOLD_BUSY;
        return NULL;
    }
    return c->data + tb->wr;
}

uint64_t tr_buf_drain(tr_bufs *b, tr_tbuf *tb, tr_buf_record_fn fn, void *ctx)
{
    uint64_t n = 0;
    tr_chunk *c = atomic_load_explicit(&tb->rd, memory_order_acquire);
    while (c != NULL) {
        uint32_t end = atomic_load_explicit(&c->committed, memory_order_acquire);
        tr_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        if (nx != NULL)   /* linked after the last commit: 'committed' is final now */
            end = atomic_load_explicit(&c->committed, memory_order_acquire);
        uint32_t at = c->consumed;   /* stored once: the chunk's header line stays quiet */
        while (at + 8 <= end) {
            const unsigned char *rec = c->data + at;
            uint32_t len;
            memcpy(&len, rec, sizeof len);
            if (len < 8 || len > end - at) {   /* never written so: stop reading this chunk */
                at = end;
                break;
            }
            fn(ctx, tb, rec, len);
            at += len;
            n++;
        }
        c->consumed = at;
        if (nx == NULL)
            break;
        atomic_store_explicit(&tb->rd, nx, memory_order_relaxed);
        chunk_put(b, c);
        /* a long drain (a producer ahead of the writer) keeps the producers supplied as it goes */
        if (atomic_load_explicit(&b->pool_taken, memory_order_relaxed) != 0)
            tr_bufs_refill(b);
        c = nx;
    }
    return n;
}

void tr_buf_release(tr_bufs *b, tr_tbuf *tb)
{
    tb_free_chunks(b, tb);
    atomic_store_explicit(&tb->state, TR_TB_FREE, memory_order_release);
}

void tr_bufs_fork_child(tr_bufs *b, tr_tbuf *keep)
{
    /* Other threads may have held pool_lock or been between a list's two stores at the fork: the
       lock and the lists start over. No chunk is in a chain any more, so every carved chunk of
       every slab (each published whole) is reusable: they all go on the cold list. */
    for (tr_tbuf *tb = atomic_load(&b->head); tb != NULL; tb = tb->next_tb) {
        tb_drop_chunks(b, tb);
        tb->wstate = NULL;
        if (tb == keep) {
            tb->open = 0;
            tb->hold &= ~TR_HOLD_BUSY;
            atomic_store(&tb->state, TR_TB_ACTIVE);
        } else {
            atomic_store(&tb->state, TR_TB_FREE);
        }
    }
    pool_lock_init(b);   /* the spare slab, set or not under the lock, is whole either way */
    b->pool_ready = b->pool_cold = NULL;
    for (struct tr_slab *s = atomic_load(&b->pool_slabs); s != NULL; s = s->next) {
        if (s->carved > s->size)
            s->carved = s->size;
        s->carved -= s->carved % b->pool_stride;
        for (size_t off = 0; off < s->carved; off += b->pool_stride) {
            tr_chunk *c = (tr_chunk *)(s->base + off);
            atomic_store_explicit(&c->next, b->pool_cold, memory_order_relaxed);
            b->pool_cold = c;
        }
    }
    atomic_store(&b->pool_nready, 0);
    atomic_store(&b->pool_taken, 0);
    atomic_store(&b->pool_closed, 0);
    b->pool_target = 0;
    b->pool_last_ns = 0;
    atomic_store(&b->used, 0);
    atomic_store(&b->dropped, 0);
    atomic_store(&b->trimmed, 0);
    atomic_store(&b->interrupted, 0);
}
