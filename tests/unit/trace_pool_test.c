/*
 * trace_pool_test.c - the trace plugin's chunk pool (tr_buf.c): drained chunks
 * are reused, pooled chunks count against the limit, the idle cap releases
 * pages, a refill hands the producer's slow path a pre-faulted chunk, the
 * last drain never waits for the pool lock, and a fork child starts the pool
 * over (lock included) on the parent's slabs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tr_buf.h"

/* two pages a chunk, header included: tr_bufs_init keeps this size as it is */
static uint32_t chunk_data;
#define CHUNK chunk_data
#define REC 64u
#define SZ ((uint64_t)sizeof(tr_chunk) + CHUNK)        /* bytes a chunk counts in 'used'  */
#define PER_CHUNK ((CHUNK - TR_EXIT_MIN) / REC)          /* records a chunk takes            */

typedef struct seen { uint64_t next, bad; } seen;

static void on_rec(void *ctx, tr_tbuf *tb, const void *p, uint32_t len)
{
    seen *s = ctx;
    uint64_t n;
    (void)tb;
    memcpy(&n, (const unsigned char *)p + 8, sizeof n);
    if (len != REC || n != s->next)
        s->bad++;
    s->next = n + 1;
}

/* one record numbered n; 0 when it was dropped */
static int put(tr_bufs *b, tr_tbuf *tb, uint64_t n)
{
    unsigned char *p = tr_buf_reserve(b, tb, REC, TR_EXIT_MIN);
    uint32_t len = REC;
    if (p == NULL)
        return 0;
    memset(p, 0x5a, REC);
    memcpy(p, &len, sizeof len);
    memcpy(p + 8, &n, sizeof n);
    tr_buf_commit(tb, REC);
    return 1;
}

static uint64_t chain_len(tr_tbuf *tb)
{
    uint64_t n = 0;
    for (tr_chunk *c = atomic_load(&tb->rd); c != NULL; c = atomic_load(&c->next))
        n++;
    return n;
}

/* pages of [p, p + len) present in memory */
static size_t resident(void *p, size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 0, np = (len + pg - 1) / pg;
    unsigned char *v = calloc(np, 1);
    assert_non_null(v);
    assert_int_equal(mincore(p, len, v), 0);
    for (size_t i = 0; i < np; i++)
        n += v[i] & 1;
    free(v);
    return n;
}

/* 200 chunks' worth of records, the writer draining after each chunk's worth: a handful of chunks
   made, ever; every later chunk is a drained one again */
static void test_drained_chunks_reused(void **state)
{
    tr_bufs b;
    seen s = {0, 0};
    uint64_t n = 0;
    (void)state;
    tr_bufs_init(&b, CHUNK, 1ull << 30);
    assert_int_equal(b.chunk_size, CHUNK);
    assert_int_equal(b.pool_stride, SZ);
    b.pool_cap = 16 * (uint64_t)b.pool_stride;   /* refills (inside the drains) keep 16 ready at most */
    tr_tbuf *tb = tr_buf_attach(&b, 1);
    assert_non_null(tb);
    for (int round = 0; round < 200; round++) {
        for (uint64_t i = 0; i < PER_CHUNK; i++)
            assert_true(put(&b, tb, n++));
        tr_buf_drain(&b, tb, on_rec, &s);
    }
    tr_buf_detach(tb);
    tr_buf_drain(&b, tb, on_rec, &s);
    tr_buf_release(&b, tb);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.next, n);
    assert_true(atomic_load(&b.chunks) <= 18);           /* 200 without the pool */
    assert_true(atomic_load(&b.pool_hits) >= 190);
    /* everything drained and released: what 'used' still counts is the ready chunks */
    assert_int_equal(atomic_load(&b.used), (uint64_t)atomic_load(&b.pool_nready) * SZ);
    tr_bufs_destroy(&b);
}

/* four chunks of limit: ready chunks count, so the producer gets the refill's four and no more */
static void test_limit_counts_pooled(void **state)
{
    tr_bufs b;
    seen s = {0, 0};
    uint64_t n = 0, stored = 0;
    (void)state;
    tr_bufs_init(&b, CHUNK, 4 * SZ);
    tr_bufs_refill(&b);
    assert_int_equal(atomic_load(&b.pool_nready), 4);
    assert_int_equal(atomic_load(&b.used), 4 * SZ);
    tr_bufs_refill(&b);   /* nothing more fits */
    assert_int_equal(atomic_load(&b.used), 4 * SZ);
    tr_tbuf *tb = tr_buf_attach(&b, 1);
    for (uint64_t i = 0; i < 10 * PER_CHUNK; i++) {
        stored += (uint64_t)put(&b, tb, n);
        n++;
        assert_true(atomic_load(&b.used) <= 4 * SZ);
    }
    assert_int_equal(stored, 4 * PER_CHUNK);
    assert_int_equal(chain_len(tb), 4);
    assert_int_equal(atomic_load(&b.pool_hits), 4);
    assert_int_equal(atomic_load(&b.pool_misses), 0);
    /* a refill while the producer holds all of it takes nothing */
    tr_bufs_refill(&b);
    assert_int_equal(atomic_load(&b.pool_nready), 0);
    assert_true(atomic_load(&b.used) <= 4 * SZ);
    /* drained: three chunks back to the pool (the fourth is the thread's current one); the limit
       still counts them, so the producer gets those three again and then drops */
    tr_buf_drain(&b, tb, on_rec, &s);
    assert_int_equal(s.bad, 0);
    assert_int_equal(atomic_load(&b.pool_nready), 3);
    assert_int_equal(atomic_load(&b.used), 4 * SZ);
    stored = 0;
    s.next = n;
    for (uint64_t i = 0; i < 10 * PER_CHUNK; i++) {
        stored += (uint64_t)put(&b, tb, n);
        n++;
    }
    assert_int_equal(stored, 3 * PER_CHUNK);
    assert_true(atomic_load(&b.used) <= 4 * SZ);
    tr_bufs_destroy(&b);
}

/* more drained chunks than the idle cap: the rest are released (their pages gone), and no longer
   counted in 'used'; a later refill takes the released ones again */
static void test_idle_cap_releases(void **state)
{
    tr_bufs b;
    seen s = {0, 0};
    uint64_t n = 0, chunks;
    (void)state;
    tr_bufs_init(&b, CHUNK, 1ull << 30);
    b.pool_cap = 2 * (uint64_t)b.pool_stride;   /* two idle chunks at most */
    tr_tbuf *tb = tr_buf_attach(&b, 1);
    for (uint64_t i = 0; i < 10 * PER_CHUNK; i++)
        assert_true(put(&b, tb, n++));
    assert_int_equal(chain_len(tb), 10);
    tr_buf_detach(tb);
    atomic_store(&b.pool_taken, 0);   /* no refill inside this drain: the ten chunks alone */
    tr_buf_drain(&b, tb, on_rec, &s);
    tr_buf_release(&b, tb);
    assert_int_equal(s.bad, 0);
    assert_int_equal(atomic_load(&b.pool_nready), 2);
    assert_int_equal(atomic_load(&b.pool_released), 8);
    assert_int_equal(atomic_load(&b.used), 2 * SZ);
    assert_non_null(b.pool_cold);
    assert_int_equal(resident(b.pool_cold, b.pool_stride), 1);    /* MADV_DONTNEED took all but the link's page */
    assert_non_null(b.pool_ready);
    assert_true(resident(b.pool_ready, b.pool_stride) > 0);
    /* a refill reuses cold chunks (no new carving) */
    chunks = atomic_load(&b.chunks);
    atomic_store(&b.pool_taken, 1);
    tr_bufs_refill(&b);
    assert_int_equal(atomic_load(&b.pool_nready), 2);   /* max(4, 2) capped by the two of pool_cap */
    assert_int_equal(atomic_load(&b.chunks), chunks);
    tr_bufs_destroy(&b);
}

/* a refill's chunks are present before anyone writes them, the producer's slow path takes them, and
   the next refill provides for what the producer took */
static void test_refill_feeds_slow_path(void **state)
{
    tr_bufs b;
    uint64_t n = 0, pg = (uint64_t)sysconf(_SC_PAGESIZE);
    (void)state;
    tr_bufs_init(&b, CHUNK, 1ull << 30);
    tr_bufs_refill(&b);
    assert_int_equal(atomic_load(&b.pool_nready), 16);
    for (tr_chunk *c = b.pool_ready; c != NULL; c = atomic_load(&c->next))
        assert_int_equal(resident(c, (size_t)SZ), (SZ + pg - 1) / pg);
    tr_tbuf *tb = tr_buf_attach(&b, 1);
    tr_chunk *first = b.pool_ready;
    assert_true(put(&b, tb, n++));
    assert_ptr_equal(tb->cur, first);
    assert_int_equal(atomic_load(&b.pool_hits), 1);
    assert_int_equal(atomic_load(&b.pool_misses), 0);
    /* twenty chunks with no refill: the sixteen ready ones, then four the producer carves itself */
    while (chain_len(tb) < 20)
        assert_true(put(&b, tb, n++));
    assert_int_equal(atomic_load(&b.pool_hits), 16);
    assert_int_equal(atomic_load(&b.pool_misses), 4);
    b.pool_last_ns = 0;   /* as if the last refill were 2 ms ago: the twenty taken are the target */
    tr_bufs_refill(&b);
    assert_int_equal(atomic_load(&b.pool_nready), 20);
    assert_int_equal(atomic_load(&b.used), 40 * SZ);
    /* nothing taken since: the target decays by 1/8 a refill, the ready chunks stay */
    tr_bufs_refill(&b);
    assert_int_equal(b.pool_target, 18);
    assert_int_equal(atomic_load(&b.pool_nready), 20);
    /* closed (the writer's last drain): nothing more */
    atomic_store(&b.pool_closed, 1);
    while (chain_len(tb) < 60)
        assert_true(put(&b, tb, n++));
    b.pool_last_ns = 0;
    tr_bufs_refill(&b);
    assert_int_equal(atomic_load(&b.pool_nready), 0);
    tr_bufs_destroy(&b);
}

/* ---- the last drain never waits for the pool lock ---- */

static tr_bufs cb;
static pthread_mutex_t hold_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_state;   /* 1: the pool lock is held; 2: let it go */

static void *holder(void *arg)
{
    tr_bufs *b = arg;
    pthread_mutex_lock(&b->pool_lock);
    pthread_mutex_lock(&hold_m);
    hold_state = 1;
    pthread_cond_broadcast(&hold_cv);
    while (hold_state != 2)
        pthread_cond_wait(&hold_cv, &hold_m);
    pthread_mutex_unlock(&hold_m);
    pthread_mutex_unlock(&b->pool_lock);
    return NULL;
}

static void hold_start(pthread_t *th, tr_bufs *b)
{
    hold_state = 0;
    pthread_create(th, NULL, holder, b);
    pthread_mutex_lock(&hold_m);
    while (hold_state != 1)
        pthread_cond_wait(&hold_cv, &hold_m);
    pthread_mutex_unlock(&hold_m);
}

static void hold_end(pthread_t th)
{
    pthread_mutex_lock(&hold_m);
    hold_state = 2;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_m);
    pthread_join(th, NULL);
}

/* a crash signal's last drain while a recording thread holds the pool lock (in pool_get): the drain
   completes (a hang fails the test by ctest's timeout), the chunks it could not pool leave 'used' */
static void test_closed_drain_never_waits(void **state)
{
    pthread_t th;
    seen s = {0, 0};
    uint64_t n = 0;
    (void)state;
    tr_bufs_init(&cb, CHUNK, 1ull << 30);
    tr_tbuf *tb = tr_buf_attach(&cb, 1);
    while (chain_len(tb) < 5)
        assert_true(put(&cb, tb, n++));
    atomic_store(&cb.pool_closed, 1);
    hold_start(&th, &cb);
    tr_buf_detach(tb);
    tr_buf_drain(&cb, tb, on_rec, &s);
    tr_buf_release(&cb, tb);
    hold_end(th);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.next, n);
    assert_int_equal(atomic_load(&cb.used), 0);
    assert_int_equal(atomic_load(&cb.pool_nready), 0);
    tr_bufs_destroy(&cb);
}

/* ---- fork ---- */

static tr_bufs fb;

/* the child: fork_child, then 20 chunks' worth of records on the parent's carved chunks; status 0 ok */
static int child_part(tr_tbuf *keep)
{
    tr_chunk *cold[64];
    int ncold = 0;
    seen s = {0, 0};
    uint64_t n = 0;
    alarm(20);   /* a pool lock left held by the parent's other thread would hang here: fail instead */
    tr_bufs_fork_child(&fb, keep);
    if (atomic_load(&fb.used) != 0 || atomic_load(&fb.pool_nready) != 0 || atomic_load(&keep->rd) != NULL)
        return 10;
    for (tr_chunk *c = fb.pool_cold; c != NULL && ncold < 64; c = atomic_load(&c->next))
        cold[ncold++] = c;
    if ((uint64_t)ncold != atomic_load(&fb.chunks) || ncold < 4)   /* every chunk the parent carved */
        return 11;
    for (int k = 0; k < ncold; k++) {
        tr_chunk *before = keep->cur;
        while (keep->cur == before)
            if (!put(&fb, keep, n++))
                return 12;
        int known = 0;
        for (int j = 0; j < ncold; j++)
            known |= keep->cur == cold[j];
        if (!known)
            return 13;   /* a new chunk while the parent's were reusable */
    }
    tr_bufs_refill(&fb);   /* the pool works again in the child: lock and lists */
    tr_buf_detach(keep);
    tr_buf_drain(&fb, keep, on_rec, &s);
    tr_buf_release(&fb, keep);
    if (s.bad != 0 || s.next != n)
        return 14;
    tr_bufs_destroy(&fb);
    return 0;
}

static void test_fork_child(void **state)
{
    pthread_t th;
    pid_t pid;
    int st = 0;
    uint64_t n = 0;
    (void)state;
    tr_bufs_init(&fb, CHUNK, 1ull << 30);
    tr_bufs_refill(&fb);
    tr_tbuf *other = tr_buf_attach(&fb, 2), *mine = tr_buf_attach(&fb, 1);
    while (chain_len(other) < 2)
        assert_true(put(&fb, other, n++));
    while (chain_len(mine) < 2)
        assert_true(put(&fb, mine, n++));
    /* another thread holds the pool lock through the fork */
    hold_start(&th, &fb);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_part(mine));
    hold_end(th);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    tr_bufs_destroy(&fb);
}

int main(void)
{
    chunk_data = 2 * (uint32_t)sysconf(_SC_PAGESIZE) - (uint32_t)sizeof(tr_chunk);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drained_chunks_reused),
        cmocka_unit_test(test_limit_counts_pooled),
        cmocka_unit_test(test_idle_cap_releases),
        cmocka_unit_test(test_refill_feeds_slow_path),
        cmocka_unit_test(test_closed_drain_never_waits),
        cmocka_unit_test(test_fork_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
