/*
 * rm_codec.h - the codec: runs an API's plan (rm_plan.h) over a params struct
 * (cushim_params_<name>, laid out as the metadata says) to write or read the
 * payloads of rm_wire.h (docs/remote.md, "Wire format").
 *
 *   client                                    server
 *   rm_encode_call(params)      -- CALL -->   rm_decode_call: a params struct whose
 *                                             pointers all point into the arena
 *                                             ... the real function runs ...
 *   rm_decode_reply(params)     <-- REPLY --  rm_encode_reply(params, result)
 *
 * Decoding never reads outside the payload it is given nor writes outside the
 * arena (server) or the caller's own buffers, sized before the call (client);
 * every count and length is checked against the bounds of rm_wire.h.
 */
#ifndef RM_CODEC_H
#define RM_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "rm_arena.h"
#include "rm_plan.h"
#include "rm_wire.h"

/* What the codec asks of its side (any member may be NULL where that side never needs it). */
typedef struct rm_ctx {
    /* client, RM_OP_KPARAMS: the argument sizes of function 'func' (its handle's value): *n of them into
       sizes[0..cap-1]. RM_OK, or an RM_E* code (RM_EUNSUPPORTED: unknown). */
    int (*kparam_sizes)(void *user, uint64_t func, uint32_t *n, uint32_t *sizes, uint32_t cap);
    /* server, RM_OP_KPARAMS: may 'func' be launched with these argument sizes? RM_OK or RM_EMALFORMED.
       NULL: not checked. */
    int (*kparam_check)(void *user, uint64_t func, uint32_t n, const uint32_t *sizes);
    /* client, RM_OP_STRING_OUT: a copy of a string the server returned that lives as long as the process
       (strings such as cuGetErrorName's are static in the driver). NULL: out of memory. */
    const char *(*intern)(void *user, const char *s, size_t n);
    /* client, rm_plan.ret_string: a copy of the text a call returned (n bytes, not NUL-terminated), readable at
       least until a later call returns one (as NCCL keeps its last error). NULL: out of memory. */
    const char *(*ret_text)(void *user, const char *s, size_t n);
    /* client, RM_OP_OWNED_OUT: a copy of n bytes the server returned for parameter 'param', kept until this
       thread's next call that returns such an array (as the driver keeps its own until the stream's next capture
       call). NULL: out of memory. */
    const void *(*keep)(void *user, uint32_t param, const void *bytes, size_t n);
    /* client, RM_OP_SCALAR: how parameter 'param' of this call goes: RM_SCALAR_HOST with *bytes (1..RM_SCALAR_MAX)
       of host value, RM_SCALAR_DEVICE (a device address, its value), or an RM_E* code (RM_EUNSUPPORTED: the
       size or the mode is not known). NULL: no scalar is carried. */
    int (*scalar)(void *user, const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes);
    /* server, RM_OP_SCALAR: may parameter 'param' go this way (RM_SCALAR_HOST or RM_SCALAR_DEVICE) with these
       values (the handle or descriptor, decoded before the pointers)? RM_OK or RM_EMALFORMED. NULL: not checked. */
    int (*scalar_check)(void *user, const rm_plan *pl, const void *params, uint32_t param, int how);
    /* RM_OP_ADDR and RM_ATTR_HOSTPTR values: this side's address in one of the client's shared pinned regions
       (1..RM_SHM_REGIONS-1, never the staging area): 1 with its region and offset, 0 when it lies in none. */
    int (*addr_out)(void *user, uint64_t addr, uint32_t *region, uint64_t *off);
    /* ... and back: region and offset to this side's address. RM_OK, or RM_EMALFORMED (no such region, or the
       offset past its end). NULL on either side: addresses go as they are, and a host address is refused. */
    int (*addr_in)(void *user, uint32_t region, uint64_t off, uint64_t *addr);
    /* server: the kept option outputs of link 'state' (cuLinkCreate's logs, sizes, wall time: rb_link.c) after a
       call of that link: u8 0 (none kept), or u8 1 and rm_jit_outputs_write's bytes. NULL: u8 0. */
    void (*link_out)(void *user, uint64_t state, rm_wr *w);
    /* client: ... read into the program's buffers it gave cuLinkCreate (rp_jit.c). RM_OK or RM_EMALFORMED. */
    int (*link_in)(void *user, uint64_t state, rm_rd *r);
    void *user;
    /* server: an input-only byte array of at least this many bytes is handed to the driver where it lies in
       the received message, not copied into the arena (the driver only reads it; the message outlives the
       call). 0: everything is staged in the arena. */
    size_t in_place_min;
} rm_ctx;

#define RM_SCALAR_HOST 1         /* rm_ctx.scalar: a host value (and the 'present' byte on the wire)         */
#define RM_SCALAR_DEVICE 2       /* a device address                                                       */

/* One call in flight on either side. */
typedef struct rm_call {
    const rm_plan *plan;
    void *params;                    /* client: the program's; server: in the arena             */
    uint64_t cap[RM_MAX_PARAMS];     /* RM_OP_ARRAY: elements the buffer holds, before the call;
                                        RM_OP_SCALAR: bytes of a host value (0: a device address);
                                        RM_OP_ATTR: bytes of the value; RM_OP_ATTRS: the values   */
    const rm_ctx *cx;                /* server: the decoder's context, for the reply (addr_out)   */
    const char *refused;             /* RM_EUNSUPPORTED because of this option (a static name), or
                                        NULL; 'refused_why' says why (JIT options, rm_jit.c)       */
    const char *refused_why;
} rm_call;

/* Client: the CALL payload of 'params' into 'w' (appended). RM_EUNSUPPORTED for a non-NULL pointer the
   plan cannot carry, RM_EBOUNDS for a count or size over a bound. 'c' keeps what the reply needs. */
int rm_encode_call(const rm_plan *pl, void *params, const rm_ctx *cx, rm_wr *w, rm_call *c);

/* Server: decodes a CALL payload. On RM_OK, c->params is staged in 'a' (reset by the caller after the
   reply). RM_ELAYOUT: unknown id or layout hash (*status says which); RM_EUNSUPPORTED: the API's class
   is not forwarded; else RM_EMALFORMED / RM_EBOUNDS / RM_ENOMEM. 'status' gets the RM_ST_* to reply. */
int rm_decode_call(const rm_plans *ps, const uint8_t *msg, size_t len, rm_arena *a, const rm_ctx *cx, rm_call *c,
                   uint32_t *status);

/* Server: the REPLY payload: status, result (ret_size bytes, zeros when NULL), and, when the call ran
   and succeeded (or returns no status), every output. 'c' may have no plan for a refused call: then
   'api_id' names it and only the status goes. */
int rm_encode_reply(const rm_call *c, uint32_t api_id, uint32_t status, const void *retval, rm_wr *w);

/* Client: reads a REPLY into the program's outputs and 'retval'. *status gets the server's RM_ST_*. */
int rm_decode_reply(const rm_call *c, void *retval, const uint8_t *msg, size_t len, const rm_ctx *cx,
                    uint32_t *status);

/* Option outputs (RM_OP_JITOPTS): each present log buffer (u32 n, n bytes: its text and NUL, at most its size), then
   each value written back (8 bytes), of n options whose slots and log sizes ('caps') are given. The reader writes
   them into 'slots' and the buffers they point to; 'caps' NULL: the sizes are read from the slots as they are
   before any is written back. RM_OK or RM_EMALFORMED. (A link's kept outputs: rm_ctx.link_out, link_in.) */
void rm_jit_outputs_write(const rm_pplan *pp, const int32_t *opts, uint64_t n, const uint8_t *slots,
                          const uint32_t *caps, rm_wr *w);
int rm_jit_outputs_read(const rm_pplan *pp, const int32_t *opts, uint64_t n, void *slots, const uint32_t *caps,
                        rm_rd *r);

/* Batches: n CALL payloads, each prefixed with its u32 length. rm_batch_next walks one. */
int rm_batch_next(rm_rd *r, const uint8_t **call, size_t *len);

/* The hello of this side (rm_wire.h). */
void rm_hello_make(rm_hello *h, const rm_plans *ps, const char *tree_name, uint32_t pid);

#endif /* RM_CODEC_H */
