/*
 * trace_buf_threads_test.c - the trace plugin's per-thread buffers under
 * concurrency: producer threads append numbered records (varying sizes) while
 * a writer thread drains every thread's chain; each thread's records arrive
 * whole and in order, and every record is either seen or counted as dropped.
 * The writer refills the chunk pool between passes and gives drained chunks
 * back to it; at the end, every byte 'used' still counts is a ready chunk.
 * Run under TSan in CI (label concurrency). Exit status 0 pass, 1 fail.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tr_buf.h"

#define NPROD 4
#define NREC 20000

static tr_bufs bufs;
static _Atomic int done;
static _Atomic uint64_t dropped;
static uint64_t seen[NPROD + 1], next_expect[NPROD + 1];
static int bad;

typedef struct rec { uint32_t len, producer; uint64_t n; } rec;

static void *producer(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    tr_tbuf *tb = tr_buf_attach(&bufs, id);
    if (tb == NULL)
        return NULL;
    for (uint64_t n = 0; n < NREC; n++) {
        uint32_t len = (uint32_t)(24 + 8 * (n % 7));
        unsigned char *p = tr_buf_reserve(&bufs, tb, len, TR_EXIT_MIN);
        rec r = {len, id, n};
        if (p == NULL) {
            atomic_fetch_add(&dropped, 1);
            continue;
        }
        memset(p, 0xab, len);
        memcpy(p, &r, sizeof r);
        tr_buf_commit(tb, len);
    }
    tr_buf_detach(tb);
    return NULL;
}

static void on_rec(void *ctx, tr_tbuf *tb, const void *p, uint32_t len)
{
    rec r;
    (void)ctx;
    memcpy(&r, p, sizeof r);
    if (r.len != len || r.producer != tb->tid || r.producer == 0 || r.producer > NPROD ||
        r.n < next_expect[r.producer] || ((const unsigned char *)p)[len - 1] != 0xab) {
        bad = 1;
        return;
    }
    next_expect[r.producer] = r.n + 1;
    seen[r.producer]++;
}

static void drain_all(void)
{
    for (tr_tbuf *tb = atomic_load(&bufs.head); tb != NULL; tb = tb->next_tb) {
        int s = atomic_load(&tb->state);
        if (s != TR_TB_ACTIVE && s != TR_TB_EXITED)
            continue;
        tr_buf_drain(&bufs, tb, on_rec, NULL);
        if (s == TR_TB_EXITED) {
            tr_buf_drain(&bufs, tb, on_rec, NULL);
            tr_buf_release(&bufs, tb);
        }
    }
}

static void *writer(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        drain_all();
        tr_bufs_refill(&bufs);
    }
    drain_all();
    return NULL;
}

static int run(uint64_t limit, uint64_t pool_cap)
{
    pthread_t p[NPROD], w;
    uint64_t total = 0;
    memset(seen, 0, sizeof seen);
    memset(next_expect, 0, sizeof next_expect);
    atomic_store(&dropped, 0);
    atomic_store(&done, 0);
    tr_bufs_init(&bufs, 4096, limit);
    if (pool_cap != 0)
        bufs.pool_cap = pool_cap;
    pthread_create(&w, NULL, writer, NULL);
    for (uintptr_t i = 0; i < NPROD; i++)
        pthread_create(&p[i], NULL, producer, (void *)(i + 1));
    for (int i = 0; i < NPROD; i++)
        pthread_join(p[i], NULL);
    atomic_store(&done, 1);
    pthread_join(w, NULL);
    for (int i = 1; i <= NPROD; i++)
        total += seen[i];
    if (atomic_load(&bufs.used) != (uint64_t)atomic_load(&bufs.pool_nready) * (bufs.chunk_size + sizeof(tr_chunk))) {
        printf("FAIL: limit %llu: %llu bytes used with everything drained, %u chunks ready\n",
               (unsigned long long)limit, (unsigned long long)atomic_load(&bufs.used),
               (unsigned)atomic_load(&bufs.pool_nready));
        bad = 1;
    }
    tr_bufs_destroy(&bufs);
    if (bad || total + atomic_load(&dropped) != (uint64_t)NPROD * NREC) {
        printf("FAIL: limit %llu: seen %llu + dropped %llu != %d (order/content bad: %d)\n",
               (unsigned long long)limit, (unsigned long long)total, (unsigned long long)atomic_load(&dropped),
               NPROD * NREC, bad);
        return 1;
    }
    printf("limit %llu: %llu seen, %llu dropped\n", (unsigned long long)limit, (unsigned long long)total,
           (unsigned long long)atomic_load(&dropped));
    return 0;
}

int main(void)
{
    /* ample memory: nothing dropped (64 idle chunks at most: the refills' rate-based target stays small) */
    uint64_t chunk = 2 * (uint64_t)sysconf(_SC_PAGESIZE);   /* 4096 bytes asked: a chunk of two pages */
    if (run(1ull << 30, 64 * chunk) || atomic_load(&dropped) != 0)
        return 1;
    /* an idle cap of two chunks: drained chunks released and taken again while producers run */
    if (run(1ull << 30, 2 * chunk) || atomic_load(&dropped) != 0)
        return 1;
    /* two chunks for four producers: drops, still accounted for */
    return run(2 * chunk, 0);
}
