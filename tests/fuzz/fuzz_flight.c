/*
 * fuzz_flight.c - the flight recorder's file reader (plugins/flight/fl_read.c: 'cushim flight dump' reads files
 * a process left, or anyone put in its way). The harness makes a file whose header's layout adds up (a few
 * records, functions and allocations: random headers stop at the layout check), the fuzzer's bytes over
 * everything else - the records, the tables, the clock and its calibration pairs, the counters - and the first
 * bytes choosing whether the layout's own fields are left to the fuzzer too. Then everything the dump reads:
 * every slice's calls, the live allocations, addresses attributed, kernels looked up. Checks: the reader keeps
 * each record's lengths within the record, and a TSC file's converted times of 0 stay 0.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fl_read.h"
#include "fuzz_common.h"

#define N 16u
#define SLICES 2u
#define FUNCS 4u
#define ALLOCS 16u
#define FREED 16u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t off_funcs = FL_HEAD_SIZE, off_allocs = (off_funcs + FUNCS * sizeof(fl_func) + 63) & ~63ull;
    uint64_t off_freed = off_allocs + ALLOCS * sizeof(fl_alloc);
    uint64_t off_slices = (off_freed + FREED * sizeof(fl_alloc) + 4095) & ~4095ull;
    uint64_t slice_size = sizeof(fl_slice) + N * FL_REC_SIZE, file_size = off_slices + SLICES * slice_size;
    unsigned char *buf;
    fl_head *h;
    fl_file f;
    char path[64], why[600];
    int fd;
    if (size < 2)
        return 0;
    buf = calloc(1, file_size);
    FUZZ_CHECK(buf != NULL);
    /* the bytes after the first two, repeated over the whole file */
    for (uint64_t i = 0; size > 2 && i < file_size; i++)
        buf[i] = data[2 + i % (size - 2)];
    h = (fl_head *)buf;
    if (!(data[0] & 1)) {   /* a layout that adds up; the rest (clock, pairs, counters) the fuzzer's */
        h->magic = FL_MAGIC;
        h->version = 1u + (data[0] >> 1) % FL_VERSION;
        h->head_size = FL_HEAD_SIZE;
        h->rec_size = FL_REC_SIZE;
        h->n = N;
        h->nslices = SLICES;
        h->nfuncs = FUNCS;
        h->nallocs = ALLOCS;
        h->nfreed = FREED;
        h->slice_size = slice_size;
        h->off_funcs = off_funcs;
        h->off_allocs = off_allocs;
        h->off_freed = off_freed;
        h->off_slices = off_slices;
        h->file_size = file_size;
        if (data[1] & 1)
            h->clock = FL_CLOCK_TSC;
    }
    fd = memfd_create("fuzz_flight", MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(write(fd, buf, file_size) == (ssize_t)file_size);
    free(buf);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (fl_file_open(&f, path, why, sizeof why) == 0) {
        uint32_t ns = fl_file_nslices(&f);
        fl_alloc *al = NULL;
        size_t nal = 0;
        FUZZ_CHECK(fl_file_ns(&f, 0) == 0);
        for (uint32_t i = 0; i < ns; i++) {
            fl_call *calls = NULL;
            size_t n = 0, bad = 0;
            if (fl_file_calls(&f, i, &calls, &n, &bad) != 0)
                continue;
            for (size_t k = 0; k < n; k++) {
                fl_where w;
                uint64_t a;
                FUZZ_CHECK(calls[k].rec.params_len <= FL_REC_DATA);
                FUZZ_CHECK(fl_pad8(calls[k].rec.params_len) + calls[k].rec.args_len <= FL_REC_DATA);
                memcpy(&a, calls[k].data, sizeof a);
                fl_file_where(&f, a, 1 << 20, &w);
                (void)fl_file_func(&f, a, calls[k].seq);
            }
            free(calls);
        }
        if (fl_file_allocs(&f, &al, &nal) == 0)
            free(al);
        fl_file_close(&f);
    } else {
        FUZZ_CHECK(strchr(why, '\n') == NULL);
    }
    close(fd);
    return 0;
}
