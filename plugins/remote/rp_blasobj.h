/*
 * rp_blasobj.h - the cuBLAS handles and cuBLASLt objects the client saw created, and the values the library
 * accepted on them (rp_blasobj.c; docs/remote.md, "cuBLAS and cuBLASLt"). rp_cublas.c reads them to decide a
 * call's way and writes them after a call succeeded, always between rbo_lock and rbo_unlock.
 */
#ifndef RP_BLASOBJ_H
#define RP_BLASOBJ_H

#include <stddef.h>
#include <stdint.h>

/* What is kept of each: a cuBLAS handle, a cuBLASLt matmul descriptor, matrix layout, matmul preference. */
enum { RPB_HANDLE, RPB_DESC, RPB_LAYOUT, RPB_PREF, RPB_LTHANDLE };
/* rpb_entry.known: which of a handle's values the client saw the library accept (set with success) */
#define RPB_K_STREAM 1u
#define RPB_K_WS 2u          /* ws, ws_size: set since the last stream set */
#define RPB_K_WS_DEFAULT 4u  /* the library's own workspace: cublasSetStream_v2 resets it, unconditionally */
#define RPB_K_MATH 8u
#define RPB_K_PMODE 16u
#define RPB_K_ATOMICS 32u

/* An attribute value a cuBLASLt object holds (set with success): part of a heuristic's key (rbo_content_locked). */
#define RPB_KEY_ATTRS 12
#define RPB_KEY_BYTES 16
typedef struct rpb_kattr {
    int32_t attr;
    uint8_t size;
    uint8_t v[RPB_KEY_BYTES];
} rpb_kattr;

/* A handle's or descriptor's state. */
typedef struct rpb_entry {
    uint64_t key;        /* the server's handle or descriptor; 0: free */
    int64_t scale;       /* Lt descriptor: its scale type (cudaDataType) */
    int64_t mode;        /* cuBLAS: cublasPointerMode_t; Lt: cublasLtPointerMode_t */
    uint64_t stream, ws, ws_size;   /* cuBLAS handle: the values last set (RPB_K_*) */
    int64_t math, atomics;
    uint8_t kind;        /* RPB_HANDLE... */
    uint8_t created;     /* created through this client and not destroyed: its setters may be batched */
    uint8_t known;       /* RPB_K_* */
    uint8_t exact;       /* cuBLASLt object: its content is whole in cargs and kattr (every value set is there) */
    uint8_t nkattr;
    int64_t cargs[4];    /* its Create's arguments: descriptor (compute, scale type); layout (type, rows, cols, ld) */
    rpb_kattr kattr[RPB_KEY_ATTRS];   /* sorted by attribute, the padding zero: compared as bytes */
} rpb_entry;

void rbo_lock(void);
void rbo_unlock(void);
/* The live entry of 'key' of that kind, or NULL. (rbo_lock held, as for every rbo_*_locked) */
rpb_entry *rbo_find_locked(uint64_t key, int kind);
/* The entry of 'key', made when there is none; fresh: a new one, or the old one emptied (a handle or descriptor
   created at the address of one destroyed). NULL: no memory (nothing is then known of it: calls stay forwarded). */
rpb_entry *rbo_add_locked(uint64_t key, int kind, int fresh);
/* An attribute set with success on a cuBLASLt object: kept, sorted, for the heuristic's key; a value that does not
   fit makes the object's content unknown (its heuristics then always go to the server). */
void rbo_keep_attr_locked(rpb_entry *e, int64_t attr, const void *buf, int64_t size);
/* A cuBLASLt object's full content as bytes at 'out' (its kind, Create's arguments, the attributes set): their
   count, or 0 when it is not known whole or does not fit in 'cap'. */
size_t rbo_content_locked(const rpb_entry *e, uint8_t *out, size_t cap);
/* In a forked child: the parent's handles were its back end's. */
void rbo_fork_child(void);

#endif /* RP_BLASOBJ_H */
