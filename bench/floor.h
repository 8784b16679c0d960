/*
 * floor.h - the floor of any recorder of every call, as a bound for any design: two TSC reads (a multiply each,
 * as a TSC-to-ns clock does) and one 64-byte record (the id, a sequence number, the entry time, the duration,
 * the result, the parameters and an output) into a 1 MiB ring that stays in the caches, published with a
 * release store - no dispatch, no nesting, no thread-buffer lookup, no parameter plan. Used by
 * bench/cpu/bench_cpu.c ('floor', around the fake driver's function) and bench/gpu/launch_bench.c
 * (BENCH_AB_VS, around the real driver's). Header-only: each program has its own ring. x86-64.
 *
 * bf_init() reads two settings (both off by default: the floor stays the least any recorder could cost):
 *   BENCH_FLOOR_RING_MB=N  a ring of N MiB (a power of two; mapped and pre-faulted) instead of the 1 MiB one that
 *                          stays in the caches: records streamed to memory, as a recorder whose records wait for a
 *                          writer thread writes them (the trace plugin's 64 KiB chunks, kept while the writer lags)
 *   BENCH_FLOOR_READER=1   a second thread reads every published record, in passes a millisecond apart when it has
 *                          caught up (the trace plugin's writer polls so): the ring's lines move to that thread's
 *                          core and back on the next lap
 */
#ifndef CUSHIM_BENCH_FLOOR_H
#define CUSHIM_BENCH_FLOOR_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static unsigned char bf_ring_small[1 << 20] __attribute__((aligned(64)));
static unsigned char *bf_ring = bf_ring_small;
static uint64_t bf_mask = sizeof bf_ring_small - 1;
static uint64_t bf_wr, bf_seq, bf_committed;
static uint64_t bf_read_sum;   /* the reader's, so that its loads are not optimised out */

static void *bf_reader(void *arg)
{
    uint64_t rd = 0, sum = 0;
    (void)arg;
    for (;;) {
        uint64_t c = __atomic_load_n(&bf_committed, __ATOMIC_ACQUIRE);
        if (c == rd) {   /* caught up: a pass a millisecond, as the trace plugin's writer polls */
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (; rd < c; rd += 64) {   /* whole records: every line of the ring, as a writer renders them */
            uint64_t v;
            memcpy(&v, bf_ring + (rd & bf_mask) + 8, sizeof v);
            sum += v;
        }
        __atomic_store_n(&bf_read_sum, sum, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* The settings above; 0, or -1 (the message printed) when one cannot be had. */
static inline int bf_init(void)
{
    const char *mb = getenv("BENCH_FLOOR_RING_MB"), *rd = getenv("BENCH_FLOOR_READER");
    if (mb != NULL && atol(mb) > 0) {
        size_t n = (size_t)atol(mb) << 20;
        void *p;
        if ((n & (n - 1)) != 0) {
            fprintf(stderr, "BENCH_FLOOR_RING_MB=%s: not a power of two\n", mb);
            return -1;
        }
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "BENCH_FLOOR_RING_MB=%s: no memory\n", mb);
            return -1;
        }
        bf_ring = p;
        bf_mask = n - 1;
    }
    if (rd != NULL && atoi(rd) == 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, bf_reader, NULL) != 0) {
            fprintf(stderr, "BENCH_FLOOR_READER: no thread\n");
            return -1;
        }
        pthread_detach(t);
    }
    return 0;
}

static inline uint64_t bf_clock(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((((uint64_t)hi << 32) | lo) * 0x66666666ull) >> 32;
}

/* The record of one call that ran from t0 to t1. */
static inline void bf_record(uint32_t api, uint64_t t0, uint64_t t1, uint32_t result, uint64_t params, uint64_t out)
{
    struct {
        uint32_t len, api;
        uint64_t seq, parent, t;
        uint32_t dur, result;
        uint64_t params, out, pad;
    } rec = {64, api, ++bf_seq, 0, t0, (uint32_t)(t1 - t0), result, params, out, 0};
    _Static_assert(sizeof rec == 64, "one line");
    memcpy(bf_ring + (bf_wr & bf_mask), &rec, sizeof rec);
    bf_wr += sizeof rec;
    __atomic_store_n(&bf_committed, bf_wr, __ATOMIC_RELEASE);
}

#endif
