/*
 * floor.h - the floor of any recorder of every call, as a bound for any design: two TSC reads (a multiply each,
 * as a TSC-to-ns clock does) and one 64-byte record (the id, a sequence number, the entry time, the duration,
 * the result, the parameters and an output) into a 1 MiB ring that stays in the caches, published with a
 * release store - no dispatch, no nesting, no thread-buffer lookup, no parameter plan. Used by
 * bench/cpu/bench_cpu.c ('floor', around the fake driver's function) and bench/gpu/launch_bench.c
 * (BENCH_AB_VS, around the real driver's). Header-only: each program has its own ring. x86-64.
 */
#ifndef CUSHIM_BENCH_FLOOR_H
#define CUSHIM_BENCH_FLOOR_H

#include <stdint.h>
#include <string.h>

static unsigned char bf_ring[1 << 20] __attribute__((aligned(64)));
static uint64_t bf_wr, bf_seq, bf_committed;

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
    memcpy(bf_ring + (bf_wr & (sizeof bf_ring - 1)), &rec, sizeof rec);
    bf_wr += sizeof rec;
    __atomic_store_n(&bf_committed, bf_wr, __ATOMIC_RELEASE);
}

#endif
