/*
 * rm_num.h - the back end's objects by number (docs/remote.md, "cuBLAS and cuBLASLt" and "NCCL"): cuBLAS and
 * cuBLASLt handles, cuBLASLt descriptors and NCCL communicators (rm_numbered in rm_special.c) are, on the wire and
 * in the client, numbers this back end gave (rm_ltid.h), never the library's pointers. Each Create call message
 * (rm_num_apis: a maker and its output parameter) is the next number, whether it runs or not, as the client counts
 * them; a Create that succeeds maps its number to the library's object and returns the number; before a call runs each parameter of a numbered type (and an attribute value holding one)
 * must be a live number of that kind (or of the kind its row accepts too: a cuBLAS handle's as a cuBLASLt handle, but
 * not in the cuBLASLt handle's Destroy), or NULL, and becomes the library's pointer; a Destroy drops its number.
 * Pure: no library call, so the fuzz harness runs it on decoded calls (tools/fuzz.sh remote).
 */
#ifndef RM_NUM_H
#define RM_NUM_H

#include <stdint.h>

#include "rm_plan.h"

#define RM_NUM_MAX (1u << 20)    /* live objects of one back end: past it a Create's number stays unknown   */
#define RM_NUM_BAD_HANDLE 1      /* rm_num_pre: an unknown library handle; the call is answered with the
                                    library's bad-handle status (CUBLAS_STATUS_NOT_INITIALIZED), not run    */

typedef struct rm_num_entry {
    uint64_t id;                 /* the number (rm_ltid)                                                    */
    uint64_t real;               /* the library's object                                                    */
    uint8_t kind;                /* rm_numbered                                                             */
} rm_num_entry;

typedef struct rm_numtab {
    uint64_t creates;            /* Create messages so far: the next one's number is rm_ltid(creates)        */
    uint64_t pending;            /* the number of the Create being run; 0: none                             */
    uint64_t destroyed;          /* the number a Destroy being run names; 0: none                           */
    uint8_t destroyed_kind;
    void *attr_out;              /* a getter's attribute buffer whose object goes back as its number          */
    rm_num_entry *e;
    uint32_t n, cap;
    uint32_t full;               /* Creates not numbered for want of room (RM_NUM_MAX or memory)             */
} rm_numtab;

/* Every call message, before it runs or is refused (pl NULL: an unknown API): counts the Creates. */
void rm_num_message(rm_numtab *t, const rm_plan *pl);
/* The decoded call's numbers made the library's objects. RM_OK; RM_NUM_BAD_HANDLE (a library handle not live);
   RM_EMALFORMED (any other value that is not a live number of its kind). */
int rm_num_pre(rm_numtab *t, const rm_plan *pl, void *params);
/* After the call: 'ok' when it ran and returned success. A Create's object numbered (its output rewritten), a
   Destroy's number dropped (whatever the library said), a getter's object turned back into its number. */
void rm_num_post(rm_numtab *t, const rm_plan *pl, void *params, int ok);
/* The library's object of number 'v' of 'kind'; 0 for anything else. */
uint64_t rm_num_real(const rm_numtab *t, uint64_t v, int kind);
void rm_num_free(rm_numtab *t);

#endif /* RM_NUM_H */
