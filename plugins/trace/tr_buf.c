/*
 * tr_buf.c - per-thread chunk chains between the recording hooks and the
 * writer (tr_buf.h says how they are shared).
 */
#include <stdlib.h>
#include <string.h>

#include "tr_buf.h"

void tr_bufs_init(tr_bufs *b, uint32_t chunk_size, uint64_t limit)
{
    memset(b, 0, sizeof *b);
    b->chunk_size = (chunk_size + 7u) & ~7u;
    b->limit = limit;
    atomic_init(&b->used, 0);
    atomic_init(&b->dropped, 0);
    atomic_init(&b->trimmed, 0);
    atomic_init(&b->chunks, 0);
    atomic_init(&b->head, NULL);
}

static void tb_free_chunks(tr_bufs *b, tr_tbuf *tb)
{
    tr_chunk *c = atomic_load_explicit(&tb->rd, memory_order_acquire);
    while (c != NULL) {
        tr_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        atomic_fetch_sub_explicit(&b->used, sizeof *c + c->cap, memory_order_relaxed);
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
    while (tb != NULL) {
        tr_tbuf *nx = tb->next_tb;
        tb_free_chunks(b, tb);
        free(tb);
        tb = nx;
    }
    atomic_store(&b->head, NULL);
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
    tb->quiet = 0;
    atomic_store_explicit(&tb->rd, NULL, memory_order_relaxed);
    atomic_store_explicit(&tb->state, TR_TB_ACTIVE, memory_order_release);
    return tb;
}

void tr_buf_detach(tr_tbuf *tb)
{
    atomic_store_explicit(&tb->state, TR_TB_EXITED, memory_order_release);
}

void *tr_buf_reserve_slow(tr_bufs *b, tr_tbuf *tb, uint32_t len, uint32_t keep)
{
    tr_chunk *c = tb->cur, *nc;
    uint64_t need = (uint64_t)len + keep, cap = b->chunk_size, sz;
    if (c != NULL && tb->wr + need <= c->cap)
        return c->data + tb->wr;
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
    atomic_init(&nc->next, NULL);
    atomic_init(&nc->committed, 0);
    nc->cap = (uint32_t)cap;
    nc->consumed = 0;
    atomic_fetch_add_explicit(&b->chunks, 1, memory_order_relaxed);
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
    tr_chunk *c = tb->cur;
    if (c == NULL || (uint64_t)tb->wr + len > c->cap)
        return NULL;
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
        atomic_fetch_sub_explicit(&b->used, sizeof *c + c->cap, memory_order_relaxed);
        free(c);
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
    for (tr_tbuf *tb = atomic_load(&b->head); tb != NULL; tb = tb->next_tb) {
        tb_free_chunks(b, tb);
        tb->wstate = NULL;
        if (tb == keep) {
            tb->open = 0;
            atomic_store(&tb->state, TR_TB_ACTIVE);
        } else {
            atomic_store(&tb->state, TR_TB_FREE);
        }
    }
    atomic_store(&b->used, 0);
    atomic_store(&b->dropped, 0);
    atomic_store(&b->trimmed, 0);
}
