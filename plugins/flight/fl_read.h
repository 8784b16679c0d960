/*
 * fl_read.h - reading a flight recorder file (a live process's ring, one a dead process left, or a dump) for
 * 'cushim flight dump': the layout checked before anything is read (the file is input: every offset and count
 * within the file, every record's lengths within the record), the records of each thread copied out in order
 * (a record being written while it is read is left out), kernels by handle, addresses attributed to the live
 * and the freed allocations. Host-free.
 */
#ifndef FL_READ_H
#define FL_READ_H

#include <stddef.h>
#include <stdint.h>

#include "fl_ring.h"

typedef struct fl_file {
    const unsigned char *base;
    size_t size;
    const fl_head *h;
    fl_head head;          /* a copy: the live process may change the counters */
    double ns_per_tick;    /* FL_CLOCK_TSC: the rate the file's pairs give (fl_clock.h)               */
    char path[1024];
} fl_file;

/* One call as read: the record's header and its data (params, then kernel arguments). */
typedef struct fl_call {
    fl_rec rec;            /* 'seq', 'flags' read once into plain values below */
    uint64_t seq;
    uint16_t flags;
    uint32_t slice;
    unsigned char data[FL_REC_DATA];
} fl_call;

/* 0, or -1 with one line in 'why'. The calls and the allocations are read with their times in CLOCK_MONOTONIC
   ns, whatever clock the file keeps (fl_clock.h). */
int fl_file_open(fl_file *f, const char *path, char *why, size_t whylen);
/* A time of the file's records or allocations in CLOCK_MONOTONIC ns (0 stays 0). */
uint64_t fl_file_ns(const fl_file *f, uint64_t t);
void fl_file_close(fl_file *f);

/* The slices that hold calls (claimed at some point), in index order: count and access. */
uint32_t fl_file_nslices(const fl_file *f);
const fl_slice *fl_file_slice(const fl_file *f, uint32_t i);
/* The calls kept of slice i, oldest first, into a malloc'd array (*out, *n): 0, or -1 (out of memory). Calls
   with a bad record (lengths past the record) are left out and counted in *bad (may be NULL). */
int fl_file_calls(const fl_file *f, uint32_t i, fl_call **out, size_t *n, size_t *bad);

/* The kernel 'handle' named at the launch 'seq': the entry with that handle whose first_seq is the largest not
   above seq (else any entry of the handle); NULL if none. */
const fl_func *fl_file_func(const fl_file *f, uint64_t handle, uint64_t seq);

/* What an address falls in. */
#define FL_AT_NONE 0       /* not inside any live allocation, nor near one                           */
#define FL_AT_INSIDE 1     /* inside a live allocation: 'a', offset 'off'                             */
#define FL_AT_PAST 2       /* not inside any live allocation; 'off' - size bytes past the end of 'a'  */
#define FL_AT_FREED 3      /* not inside any live allocation; inside 'a', released by a->free_seq      */
typedef struct fl_where {
    int kind;
    fl_alloc a;            /* a copy */
    uint64_t off;          /* addr - a.base */
} fl_where;
/* 'near' bytes past an allocation's end still name it (FL_AT_PAST). */
void fl_file_where(const fl_file *f, uint64_t addr, uint64_t near, fl_where *w);
/* The live allocations (copies), sorted by base: malloc'd. */
int fl_file_allocs(const fl_file *f, fl_alloc **out, size_t *n);

#endif
