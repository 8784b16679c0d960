/*
 * tr_rec.h - the records the trace plugin's hooks store and its writer reads.
 *
 * Every record but EXIT and CALL starts with 'tr_rec' (48 bytes); every record is a
 * multiple of 8 bytes and starts with its uint32_t len and uint16_t type.
 *   ENTER  tr_rec, the API's raw params struct (info->params_size, padded to 8),
 *          then blobs: bytes behind input pointers (strings, structs by pointer,
 *          counted arrays).
 *   EXIT   tr_exit (32 bytes: what the ENTER it pairs with by seq does not
 *          already say; aux = the first 8 bytes of the return value), then
 *          blobs: bytes behind output pointers, read after a successful call.
 *          With TR_F_INLINE, instead: the call's one output, a single element
 *          of 1, 2, 4 or 8 bytes, as one 8-byte word without its tr_blob (the
 *          flags say which parameter and how many bytes; tr_render.h tr_exit_blob).
 *   CALL   a whole call of a fast-path API (tr_plan.h: pl->call), written
 *          at its exit instead of an ENTER/EXIT pair: tr_call (48 bytes), the raw
 *          params struct (padded to 8), with TR_F_INLINE the one output word, with
 *          TR_F_KNAME the kernel's interned name (8 bytes: what the ENTER's aux would
 *          hold; a launch without GPU tracing whose kernel is named), with TR_F_LONG
 *          the exit time (8 bytes, last). In that order. The writer renders it as
 *          the pair it replaces, byte for byte.
 *   NVTX_* tr_rec (api_id = 0, seq = range id for start/end, parent = the
 *          domain: 0 the default one), a blob with the message (param = 0),
 *          for a named domain a blob with its name (param = 1). NVTX_TNAME:
 *          seq = the thread named, the name as blob 0.
 *   GPU    tr_rec with a tr_gpu after it, then the kernel's name as a blob.
 *   CORR   a CUPTI correlation id (seq) mapped to an external one (parent).
 * A blob is a tr_blob followed by its bytes, padded to 8.
 * Times: the ENTER, EXIT and CALL records' and the open-call stack's are the recording hooks' clock - raw TSC
 * ticks where the trace's clock is the TSC (tr_state.tsc, the clock= option), which the writer converts
 * (tr_clock.h), else the host's ns - but the CALL records of the APIs the core times (the read-only queries'
 * exit hook, tr_query.c; tr_writer.core_timed), which are the host's ns, as every other record's time is.
 */
#ifndef TR_REC_H
#define TR_REC_H

#include <stdint.h>

#define TR_REC_ENTER 1
#define TR_REC_EXIT 2
#define TR_REC_NVTX_PUSH 3
#define TR_REC_NVTX_POP 4
#define TR_REC_NVTX_START 5
#define TR_REC_NVTX_END 6
#define TR_REC_NVTX_MARK 7
#define TR_REC_GPU 8
#define TR_REC_CORR 9
#define TR_REC_RTAPI 10   /* CUPTI's runtime API record: seq = its correlation id, parent = its thread,
                             t = start; extra: uint64_t end (tr_link.h) */
#define TR_REC_CALL 11    /* tr_call: one fast-path call, entry and exit */
#define TR_REC_NVTX_TNAME 12   /* nvtxNameOsThread: seq = the named OS thread id, blob 0 = its name */

/* tr_exit.flags */
#define TR_F_SKIPPED 1u   /* EXIT: a pre hook skipped the real call */
#define TR_F_TRIMMED 2u   /* EXIT: stored without its output bytes (buffer full) */
#define TR_F_INLINE 4u    /* EXIT: one output word after the header, no blob; bits 4-5: log2 of the bytes
                             kept, bits 8-15: the parameter index (TR_F_INLINE_OF) */
#define TR_F_LONG 8u      /* CALL: the duration does not fit tr_call.dur: the exit time is the record's last
                             8 bytes */
#define TR_F_KNAME 64u     /* CALL: a launch's kernel name (const char *, interned) after the params and the
                             inline word, before the long exit time (without it: no name) */
#define TR_F_INLINE_OF(param, elem_log2) \
    ((uint16_t)(TR_F_INLINE | ((uint32_t)(elem_log2) << 4) | ((uint32_t)(param) << 8)))

typedef struct tr_rec {
    uint32_t len;         /* the whole record                                     */
    uint16_t type;        /* TR_REC_*                                              */
    uint16_t flags;
    uint32_t api_id;
    uint32_t depth;       /* enclosing hooked calls on the thread                  */
    uint64_t seq;         /* the call's seq (correlation id)                       */
    uint64_t parent;      /* ENTER: the enclosing call's seq, 0 if none            */
    uint64_t t;           /* ENTER: the hooks' clock (tr_clock.h); others: ns, host->now_ns clock */
    uint64_t aux;         /* ENTER: interned kernel name (const char *) or 0      */
} tr_rec;

/* An EXIT record's header: the api, depth and parent are its ENTER's (same seq, same thread). */
typedef struct tr_exit {
    uint32_t len;         /* the whole record                                     */
    uint16_t type;        /* TR_REC_EXIT                                           */
    uint16_t flags;       /* TR_F_*                                                */
    uint64_t seq;         /* the call's seq: its ENTER's                           */
    uint64_t t;           /* the hooks' clock: exit                                 */
    uint64_t aux;         /* the return value's first 8 bytes                      */
} tr_exit;

/* A CALL record's header: what the ENTER and the EXIT of the call held, once. */
typedef struct tr_call {
    uint32_t len;         /* the whole record                                     */
    uint16_t type;        /* TR_REC_CALL                                           */
    uint16_t flags;       /* TR_F_SKIPPED, TR_F_INLINE (as in an EXIT), TR_F_LONG, TR_F_KNAME */
    uint32_t api_id;
    uint32_t depth;
    uint64_t seq;
    uint64_t parent;      /* the enclosing call's seq, 0 if none                   */
    uint64_t t;           /* the hooks' clock (or ns: tr_writer.core_timed): entry */
    uint32_t dur;         /* the same clock: exit - entry (TR_F_LONG: see there)   */
    uint32_t result;      /* the 4-byte return value (an EXIT's aux, zero-extended) */
} tr_call;

_Static_assert(sizeof(tr_call) == 48, "the CALL header: no padding");
_Static_assert(sizeof(tr_rec) == 48 && sizeof(tr_exit) == 32, "record headers: no padding, multiples of 8");

#define TR_BLOB_TRUNC 1u  /* fewer bytes than the parameter describes were kept   */
#define TR_BLOB_UNREAD 2u /* an input after a call that failed: its pointer points at nothing readable
                             (no bytes kept; with TR_BLOB_TRUNC, a readable prefix was kept) */
#define TR_BLOB_UNCHECKED 4u /* an input after a call that failed, on a system without a safe read
                                (process_vm_readv refused): no bytes kept          */

typedef struct tr_blob {
    uint16_t param;       /* parameter index                                      */
    uint16_t flags;       /* TR_BLOB_*                                             */
    uint32_t len;         /* bytes kept (the padding not counted)                  */
    uint64_t count;       /* elements the parameter describes (before truncation)  */
} tr_blob;

#define TR_GPU_KERNEL 1
#define TR_GPU_MEMCPY 2
#define TR_GPU_MEMSET 3

typedef struct tr_gpu {
    uint64_t start, end;  /* ns, host clock                                        */
    uint64_t bytes;       /* copies and sets                                       */
    uint32_t kind;        /* TR_GPU_*                                              */
    uint32_t device;
    uint32_t stream;
    uint32_t correlation; /* CUPTI's                                               */
    uint32_t copy_kind;   /* CUpti_ActivityMemcpyKind                              */
    uint32_t grid[3], block[3];
    uint32_t pad_;
} tr_gpu;

static inline uint32_t tr_pad8(uint64_t n)
{
    return (uint32_t)((n + 7u) & ~(uint64_t)7u);
}

#endif /* TR_REC_H */
