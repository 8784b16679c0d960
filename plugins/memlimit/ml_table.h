/*
 * ml_table.h - what memlimit charged, by pointer or handle: an open-addressing
 * hash table (linear probing, backward-shift deletion: no tombstones, so
 * a million alloc/free pairs leave it as it was) under one mutex. No CUDA call
 * is ever made with the mutex held.
 */
#ifndef ML_TABLE_H
#define ML_TABLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ml_rec {
    uint64_t key;      /* pointer or handle value; 0 marks an empty cell */
    uint64_t bytes;    /* charged (0 for imported memory)                */
    uint32_t refs;     /* retains + 1                                    */
    uint8_t ns;        /* 0: addresses and arrays, 1: VMM handles        */
    uint8_t cat;       /* ML_CAT_* or ML_CAT_NONE (imported)             */
    int16_t dev;
    uint8_t lib;       /* memory by library: its entry in our slot + 1; 0 none */
} ml_rec;

#define ML_CAT_NONE 0xff

typedef struct ml_table {
    pthread_mutex_t mu;
    ml_rec *cells;
    size_t cap, n;     /* cap a power of two */
} ml_table;

void ml_table_init(ml_table *t);
void ml_table_free(ml_table *t);
/* Insert or replace; 'old' (may be NULL) receives a replaced record (key 0 if
   none). -1 when out of memory (the record is then not kept). */
int ml_table_put(ml_table *t, const ml_rec *r, ml_rec *old);
/* Copy the record of (ns, key) into 'out' without removing it: 1 found, 0 not. */
int ml_table_get(ml_table *t, uint8_t ns, uint64_t key, ml_rec *out);
/* Remove and return the record of (ns, key): 1 found, 0 not. */
int ml_table_take(ml_table *t, uint8_t ns, uint64_t key, ml_rec *out);
/* If (ns, key) is present with refs > 1, drop one reference and return 1;
   if present with refs == 1, remove it into 'out' and return 2; else 0. */
int ml_table_release(ml_table *t, uint8_t ns, uint64_t key, ml_rec *out);
/* One more reference to (ns, key), if present: 1, else 0. */
int ml_table_retain(ml_table *t, uint8_t ns, uint64_t key, int delta);
size_t ml_table_count(ml_table *t);
/* Call fn on every record, under the mutex (fn must not call into the table). */
void ml_table_each(ml_table *t, void (*fn)(const ml_rec *r, void *ctx), void *ctx);

#endif
