/*
 * rm_arena.h - the server's staging memory for one call: every pointer a decoded
 * call hands the driver points into it, so what a client can make the driver read
 * or write is bounded by it and owned by its own back end.
 *
 * One reservation of 'max' bytes (never moved: pointers stay valid for the call),
 * bump-allocated, each block zeroed and 16-byte aligned, reset after each call.
 * Under AddressSanitizer everything outside the live blocks is poisoned, with a
 * redzone after each block, so a decoder or a fuzz check that runs past a block
 * is caught.
 */
#ifndef RM_ARENA_H
#define RM_ARENA_H

#include <stddef.h>

typedef struct rm_arena {
    unsigned char *base;
    size_t max;          /* bytes reserved                          */
    size_t used;         /* bytes handed out since the last reset   */
    size_t high;         /* the most ever used (pages touched)      */
} rm_arena;

int rm_arena_init(rm_arena *a, size_t max);   /* 0, or -1 (no address space) */
void rm_arena_destroy(rm_arena *a);
void *rm_arena_alloc(rm_arena *a, size_t n);  /* zeroed; NULL past 'max' (n == 0 gives a valid pointer) */
void *rm_arena_alloc_raw(rm_arena *a, size_t n);  /* the same, not zeroed: for a block the caller fills whole */
void rm_arena_reset(rm_arena *a);

#endif /* RM_ARENA_H */
