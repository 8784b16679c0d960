/*
 * tr_plan.h - what the trace plugin captures of each selected API, decided once
 * at start from the generated metadata (tr_plan.c), and the capture itself,
 * inlined into the hooks: the bytes behind input pointers (strings, listed
 * structs, counted arrays) and behind output pointers, both after the call.
 * Inputs are read after it so that a pointer the driver refused is never
 * dereferenced blindly: after a successful call the driver has read them
 * (plain copies); after one that failed, was skipped by a plugin or returns
 * no result, through cushim_read_mem (cushim_io.h: no fault on a bad pointer).
 */
#ifndef TR_PLAN_H
#define TR_PLAN_H

#include <stdint.h>
#include <string.h>

#include "tr_base.h"

/* Launch kinds of a plan: which parameter names the kernel. */
#define TR_LAUNCH_FUNC 1        /* a CUfunction parameter                 */
#define TR_LAUNCH_KERNEL 2      /* a CUkernel parameter                   */
#define TR_LAUNCH_STUB 3        /* a runtime host stub (const void *func) */

#define TR_BLOB_MAX 4096u     /* bytes kept per pointer parameter */

#define TR_CAP_STRING 1
#define TR_CAP_ARRAY 2

typedef struct tr_cap {
    uint16_t param;
    uint8_t mode;               /* TR_CAP_*                                       */
    uint8_t count_indirect;     /* the count is behind the count parameter        */
    int16_t count_param;        /* -1: 'fixed' elements                            */
    uint16_t off, size;         /* the pointer in the params struct               */
    uint16_t coff, csize;       /* the count parameter                             */
    uint32_t elem_size;
    uint32_t fixed;
    uint32_t cpointee;          /* size of a count held behind a pointer           */
    uint16_t scalar;            /* one element of 1, 2, 4 or 8 bytes (no count, never
                                   truncated): tr_cap_scalar writes it inline           */
    uint16_t inl;               /* a scalar output: the EXIT flags (TR_F_INLINE_OF) of
                                   tr_cap_inline; 0: the parameter index is over 255    */
} tr_cap;

#define TR_CALL_PLAIN 1
#define TR_CALL_KNAME 2

struct tr_plan {
    uint8_t launch;
    uint8_t corr;               /* push an external correlation id (GPU tracing)  */
    uint16_t fparam_off;
    uint16_t nin, nout;
    /* the hooks' fast path, from the metadata once (trace.c) */
    uint32_t params_size;       /* info->params_size                               */
    uint32_t enter_len;         /* sizeof(tr_rec) + params_size padded to 8        */
    uint32_t exit_max;          /* sizeof(tr_exit) + every output blob, when all outputs
                                   are scalars (outs_scalar); + 8 with out_inline    */
    uint8_t ret_size;           /* bytes of the return value kept in aux (<= 8)    */
    uint8_t ret_result;         /* a status (cushim_ret_is_status): outputs only after success */
    uint8_t outs_scalar;        /* every output capture is a scalar                 */
    uint8_t pre_fast;           /* an ENTER without kernel name or correlation id (input captures
                                   are the EXIT's)                                   */
    uint8_t post_fast;          /* a 4-byte result, no input capture, at most one output, a
                                   scalar with 'inl' (written inline); no correlation id */
    uint8_t out_inline;         /* exactly one output, a scalar with 'inl'          */
    uint8_t call;               /* one CALL record at exit, no ENTER/EXIT: TR_CALL_PLAIN (pre_fast &&
                                   post_fast) or TR_CALL_KNAME (a launch with kernel names, no input capture,
                                   post_fast, no correlation id: the name looked up at entry, kept on the
                                   open-call stack, written in the record), else 0 */
    uint8_t post_only;          /* call, and a read-only query that does not wait (category query, not
                                   sync): hooked at exit alone, never on the open-call stack (trace.c)  */
    uint32_t call_max;          /* the longest CALL record: tr_call, params, the inline word, the
                                   kernel name (TR_CALL_KNAME), the long exit time */
    /* a post_only query's record, fixed when the plan is made (tr_query_write): no capture walked per call */
    uint32_t q_len;             /* tr_call and the params padded to 8: the record without its output word */
    uint32_t q_ok_mask;         /* ~0u: the output only with a result of 0 (ret_result); 0: always */
    uint16_t q_inl;             /* the one output's TR_F_INLINE_OF flags; 0: no output */
    uint16_t q_out_off;         /* the output pointer's offset in the params struct */
    uint32_t q_out_size;        /* the bytes it points to: 1, 2, 4 or 8 */
    tr_cap caps[];
};

static inline uint64_t tr_rd_uint(const void *p, uint32_t size)
{
    uint64_t v = 0;
    uint32_t u32;
    uint16_t u16;
    uint8_t u8;
    switch (size) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    case 8: memcpy(&v, p, 8); return v;
    default: return 0;
    }
}

static inline uint64_t tr_cap_count(const tr_cap *c, const unsigned char *pv)
{
    uint64_t v;
    if (c->count_param < 0)
        return c->fixed ? c->fixed : 1;
    v = tr_rd_uint(pv + c->coff, c->csize);
    if (c->count_indirect) {
        if (v == 0)
            return 0;
        v = tr_rd_uint((const void *)(uintptr_t)v, c->cpointee);
    }
    if (c->csize == 4 && (v >> 31))   /* a negative int count */
        return 0;
    return v;
}

/* 1 when the capture makes a blob (the pointer is not NULL): 'size' bytes kept of 'count' elements. */
static inline int tr_cap_size(const tr_cap *c, const unsigned char *pv, uint32_t *size, uint64_t *count, int *trunc)
{
    const void *ptr = (const void *)(uintptr_t)tr_rd_uint(pv + c->off, c->size);
    uint64_t bytes;
    *trunc = 0;
    *count = 0;
    *size = 0;
    if (ptr == NULL)
        return 0;
    if (c->mode == TR_CAP_STRING) {
        size_t n = strnlen(ptr, TR_STR_MAX + 1);
        *count = n;
        if (n > TR_STR_MAX) {
            *trunc = 1;
            n = TR_STR_MAX;
        }
        *size = (uint32_t)n;
        return 1;
    }
    *count = tr_cap_count(c, pv);
    bytes = *count * c->elem_size;
    if (*count > TR_BLOB_MAX || bytes > TR_BLOB_MAX) {
        *trunc = 1;
        bytes = (TR_BLOB_MAX / c->elem_size) * c->elem_size;
    }
    *size = (uint32_t)bytes;
    return 1;
}

static inline unsigned char *tr_cap_write(const tr_cap *c, const unsigned char *pv, unsigned char *out, uint32_t n,
                                uint64_t count, int trunc)
{
    tr_blob b = {.param = c->param, .flags = trunc ? TR_BLOB_TRUNC : 0, .len = n, .count = count};
    memcpy(out, &b, sizeof b);
    if (n > 0)
        memcpy(out + sizeof b, (const void *)(uintptr_t)tr_rd_uint(pv + c->off, c->size), n);
    if (tr_pad8(n) > n)
        memset(out + sizeof b + n, 0, tr_pad8(n) - n);
    return out + sizeof b + tr_pad8(n);
}

/* The bytes of a scalar at 'src' ('n' of 1, 2, 4, 8) in the first bytes of a zeroed word: what
   tr_cap_write stores for a one-element capture, without a call to memcpy or memset. */
static inline uint64_t tr_scalar_word(const void *src, uint32_t n)
{
    /* the usual sizes first (an int or an enum, a handle or a size): tests in line, not a table */
    uint32_t u32;
    uint16_t u16;
    uint8_t u8;
    uint64_t w;
    if (__builtin_expect(n == 4, 1)) {
        memcpy(&u32, src, 4);
        return u32;
    }
    if (n == 8) {
        memcpy(&w, src, 8);
        return w;
    }
    if (n == 2) {
        memcpy(&u16, src, 2);
        return u16;
    }
    if (n == 1) {
        memcpy(&u8, src, 1);
        return u8;
    }
    return 0;
}

/* The element a scalar capture's pointer parameter points to, as one word in *w; 0 when the
   pointer is NULL (nothing is captured then). */
static inline int tr_cap_word(const tr_cap *c, const unsigned char *pv, uint64_t *w)
{
    const void *ptr;   /* captures are of pointer-sized parameters (tr_plan.c) */
    memcpy(&ptr, pv + c->off, sizeof ptr);
    if (ptr == NULL)
        return 0;
    *w = tr_scalar_word(ptr, c->elem_size);
    return 1;
}

/* A scalar capture's blob holding word w; an inline output's word (the EXIT's flags get c->inl). Return the end. */
static inline unsigned char *tr_put_scalar(const tr_cap *c, unsigned char *out, uint64_t w)
{
    tr_blob b = {.param = c->param, .flags = 0, .len = c->elem_size, .count = 1};
    memcpy(out, &b, sizeof b);
    memcpy(out + sizeof b, &w, sizeof w);
    return out + sizeof b + sizeof w;
}
static inline unsigned char *tr_put_inline(const tr_cap *c, unsigned char *out, uint64_t w, uint16_t *flags)
{
    memcpy(out, &w, sizeof w);
    *flags |= c->inl;
    return out + sizeof w;
}

/* A scalar capture (c->scalar): the blob tr_cap_write would write, byte for byte, or nothing
   when the pointer is NULL. Returns the end. */
static inline unsigned char *tr_cap_scalar(const tr_cap *c, const unsigned char *pv, unsigned char *out)
{
    uint64_t w;
    return tr_cap_word(c, pv, &w) ? tr_put_scalar(c, out, w) : out;
}

/* A scalar output capture with c->inl, an EXIT's only output: its word right after the header, without the
   blob header (the EXIT's flags get c->inl), or nothing when the pointer is NULL. Returns the end. */
static inline unsigned char *tr_cap_inline(const tr_cap *c, const unsigned char *pv, unsigned char *out,
                                           uint16_t *flags)
{
    uint64_t w;
    return tr_cap_word(c, pv, &w) ? tr_put_inline(c, out, w, flags) : out;
}

/* An input capture's blob after a call the driver may not have read it for (it failed, a plugin skipped it, it
   returns no result): tr_cap_write's blob with the bytes read through cushim_read_mem - only what is readable
   (TR_BLOB_TRUNC with a prefix, TR_BLOB_UNREAD with nothing; TR_BLOB_UNCHECKED if the read is refused midway).
   Where no safe read exists (a seccomp filter that refuses process_vm_readv's stand-in too:
   cushim_read_mem_usable), the plain capture, as before the inputs moved to the exit.
   tr_cap_safe_room: the most it writes, 0 when the pointer is NULL (no blob); tr_cap_write_safe writes it at
   'out' and returns the end. */
uint32_t tr_cap_safe_room(const tr_cap *c, const unsigned char *pv);
unsigned char *tr_cap_write_safe(const tr_cap *c, const unsigned char *pv, unsigned char *out);
/* tr_cap_inline and tr_cap_scalar after a call a plugin skipped with a success status: the output holds what
   that plugin wrote, or what the program left there - behind a pointer no library has vouched for - so it is
   read through cushim_read_mem; nothing is kept where it cannot be read (the pointer renders as its address). */
unsigned char *tr_cap_inline_safe(const tr_cap *c, const unsigned char *pv, unsigned char *out, uint16_t *flags);
unsigned char *tr_cap_scalar_safe(const tr_cap *c, const unsigned char *pv, unsigned char *out);
/* The output captures of an exit whose flags are 'flags': plain, or read safely when TR_F_SKIPPED says a plugin
   skipped the call. */
static inline unsigned char *tr_cap_out_inline(const tr_cap *c, const unsigned char *pv, unsigned char *out,
                                               uint16_t *flags)
{
    if (__builtin_expect(!(*flags & TR_F_SKIPPED), 1))
        return tr_cap_inline(c, pv, out, flags);
    return tr_cap_inline_safe(c, pv, out, flags);
}
static inline unsigned char *tr_cap_out_scalar(const tr_cap *c, const unsigned char *pv, unsigned char *out,
                                               uint16_t flags)
{
    return (flags & TR_F_SKIPPED) ? tr_cap_scalar_safe(c, pv, out) : tr_cap_scalar(c, pv, out);
}

/* A params struct of a size that is no multiple of 8 (integers alone: cuInit's, cudaSetDevice's; a struct
   that holds a pointer is padded to 8), zero-padded: out of line (tr_plan.c). */
void tr_copy_params_odd(unsigned char *dst, const unsigned char *src, uint32_t n);

/* 'n' bytes of a params struct into a record, zero-padded to 8: a loop of word moves (one code line for every
   size: a jump table of unrolled moves ran three lines of its own, and a line costs a recorded call ~2-3 ns in
   a real program - docs/benchmarks.md "The floor of any recorder"). */
static inline void tr_copy_params(unsigned char *dst, const unsigned char *src, uint32_t n)
{
    if (__builtin_expect((n & 7u) != 0, 0)) {
        tr_copy_params_odd(dst, src, n);
        return;
    }
    for (uint32_t i = 0; i < n; i += 8) {
        uint64_t w;
        memcpy(&w, src + i, 8);
        memcpy(dst + i, &w, 8);
    }
}

/* The same for a launch's params (64 bytes for cuLaunchKernel): an odd word first, then 16 bytes a step (5
   instructions a step: 20 for 64 bytes instead of the word loop's 48). Not for the queries: the longer code
   costs their small structs a code line. */
typedef uint64_t tr_v16 __attribute__((vector_size(16)));
static inline void tr_copy_params_wide(unsigned char *dst, const unsigned char *src, uint32_t n)
{
    uint32_t i = n & 8u;
    if (__builtin_expect((n & 7u) != 0, 0)) {
        tr_copy_params_odd(dst, src, n);
        return;
    }
    if (i != 0) {
        uint64_t w;
        memcpy(&w, src, 8);
        memcpy(dst, &w, 8);
    }
    for (; i < n; i += 16) {
        tr_v16 v;
        __builtin_memcpy(&v, src + i, 16);
        __builtin_memcpy(dst + i, &v, 16);
        __asm__("" ::: "memory");   /* keeps the compiler from making the loop a call to memcpy */
    }
}

/* The ENTER and EXIT headers at 'p' (8-aligned in a chunk; sizeof(tr_rec) and sizeof(tr_exit) bytes), stored
   field by field in place (neither has padding: every byte is written). */
static inline void tr_put_enter(unsigned char *p, const cushim_call *call, uint32_t len, uint64_t t, uint64_t aux)
{
    tr_rec *r = (tr_rec *)(void *)p;
    r->len = len;
    r->type = TR_REC_ENTER;
    r->flags = 0;
    r->api_id = call->api_id;
    r->depth = call->depth;
    r->seq = call->seq;
    r->parent = call->parent ? call->parent->seq : 0;
    r->t = t;
    r->aux = aux;
}

static inline void tr_put_exit(unsigned char *p, const cushim_call *call, uint32_t len, uint16_t flags, uint64_t t,
                               uint64_t aux)
{
    tr_exit *r = (tr_exit *)(void *)p;
    r->len = len;
    r->type = TR_REC_EXIT;
    r->flags = flags;
    r->seq = call->seq;
    r->t = t;
    r->aux = aux;
}

/* A CALL record's header at 'p' (8-aligned; every byte written): the entry half from the call frame. */
static inline __attribute__((always_inline)) void tr_put_call(unsigned char *p, const cushim_call *call, uint32_t len,
                                                              uint16_t flags, uint64_t t, uint32_t dur,
                                                              uint32_t result)
{
    tr_call *r = (tr_call *)(void *)p;
    r->len = len;
    r->type = TR_REC_CALL;
    r->flags = flags;
    r->api_id = call->api_id;
    r->depth = call->depth;
    r->seq = call->seq;
    r->parent = call->parent ? call->parent->seq : 0;
    r->t = t;
    r->dur = dur;
    r->result = result;
}

/* ---- CALL records: the open-call stack (tr_buf.h) and the record ---- */

/* The pre hook of a fast-path call: the call on its thread's open-call stack (beyond TR_OPEN_MAX only counted),
   with its kernel's name (a TR_CALL_KNAME launch; else 0). */
static inline void tr_open_push(tr_tbuf *tb, const cushim_call *call, uint64_t t, uint64_t kname)
{
    uint32_t n = atomic_load_explicit(&tb->nopen, memory_order_relaxed);
    if (n < TR_OPEN_MAX) {
        tr_open *o = &tb->opens[n];
        atomic_store_explicit(&o->seq, call->seq, memory_order_relaxed);
        atomic_store_explicit(&o->parent, call->parent ? call->parent->seq : 0, memory_order_relaxed);
        atomic_store_explicit(&o->t, t, memory_order_relaxed);
        atomic_store_explicit(&o->id_depth, (uint64_t)call->api_id | (uint64_t)call->depth << 32,
                              memory_order_relaxed);
        atomic_store_explicit(&o->kname, kname, memory_order_relaxed);
    }
    atomic_store_explicit(&tb->nopen, n + 1, memory_order_release);   /* after the entry: tw_open_read */
}

/* A launch named 'name' entered inside a TR_CALL_KNAME launch on the open-call stack that has no name: the
   enclosing one gets it ('plans': the plans by api id, 'nplans' of them; tr_plan.c). */
void tr_open_kname_up(tr_tbuf *tb, const cushim_call *call, uint64_t name, tr_plan *const *plans, uint32_t nplans);

/* The stack's depth + 1 once the call of 'seq' is off it, when its entry is not on top (tr_plan.c). */
uint32_t tr_open_find(const tr_tbuf *tb, uint64_t seq, uint32_t n);

/* The post hook of a fast-path call: takes it off the stack; 0 when it is not to be written (nothing is open
   on this buffer: the post hook, in a forked child, of a call its parent entered), else 1 with its entry time
   in *t0 (the frame's; the stack's when the frame has none; 't' as a last resort) and its entry's kernel name
   in *kname (0 when its entry is not on the stack: only counted, or never pushed). Before the record is
   published, so that a finishing writer that has drained the record never sees the call open too.
   'frame_t0': the frame's entry time when it is on the hooks' clock (the host's: t_enter_ns), else 0. */
static inline int tr_open_pop(tr_tbuf *tb, const cushim_call *call, uint64_t frame_t0, uint64_t t, uint64_t *t0,
                              uint64_t *kname)
{
    uint32_t n = atomic_load_explicit(&tb->nopen, memory_order_relaxed);
    if (n == 0 || n > TR_OPEN_MAX || atomic_load_explicit(&tb->opens[n - 1].seq, memory_order_relaxed) != call->seq)
        if ((n = tr_open_find(tb, call->seq, n)) == 0)
            return 0;
    *t0 = frame_t0;
    if (*t0 == 0)
        *t0 = n <= TR_OPEN_MAX ? atomic_load_explicit(&tb->opens[n - 1].t, memory_order_relaxed) : t;
    *kname = n <= TR_OPEN_MAX && atomic_load_explicit(&tb->opens[n - 1].seq, memory_order_relaxed) == call->seq
                 ? atomic_load_explicit(&tb->opens[n - 1].kname, memory_order_relaxed)
                 : 0;
    atomic_store_explicit(&tb->nopen, n - 1, memory_order_relaxed);
    return 1;
}

/* A fast-path call's CALL record at 'p' (room for pl->call_max bytes), entered at 't0' and returned at 't':
   what its ENTER and EXIT would hold ('kname': a TR_CALL_KNAME launch's kernel name, from its open-call stack
   entry; 0: none, no word). Returns its length. */
static inline __attribute__((always_inline)) uint32_t tr_call_write_as(unsigned char *p, const tr_plan *pl,
                                                                      const cushim_call *call, uint64_t t0,
                                                                      uint64_t t, uint64_t kname, const int wide)
{
    uint32_t result, len;
    uint64_t d = t - t0;
    uint16_t flags = (call->flags & CUSHIM_CALL_SKIPPED) ? TR_F_SKIPPED : 0;
    unsigned char *o = p + sizeof(tr_call) + (pl->enter_len - sizeof(tr_rec));
    memcpy(&result, call->retval, sizeof result);
    if (wide)   /* a constant: one copy loop or the other in line */
        tr_copy_params_wide(p + sizeof(tr_call), call->params, pl->params_size);
    else
        tr_copy_params(p + sizeof(tr_call), call->params, pl->params_size);
    if (__builtin_expect(pl->nout != 0 && (!pl->ret_result || (int32_t)result == 0), 1))   /* the one output, inline */
        o = tr_cap_out_inline(&pl->caps[pl->nin], call->params, o, &flags);
    if (kname != 0) {   /* a launch's kernel name: the ENTER's aux (0: none; an aux of 0 says nothing) */
        flags |= TR_F_KNAME;
        memcpy(o, &kname, sizeof kname);
        o += sizeof kname;
    }
    if (d >= UINT32_MAX) {   /* over 4.29 s (or a clock that went back): the exit time itself */
        flags |= TR_F_LONG;
        memcpy(o, &t, sizeof t);
        o += sizeof t;
        d = UINT32_MAX;
    }
    len = (uint32_t)(o - p);
    tr_put_call(p, call, len, flags, t0, (uint32_t)d, result);
    return len;
}

/* tr_call_write_as with the word loop (every call but a named launch's one-record exit). */
static inline __attribute__((always_inline)) uint32_t tr_call_write(unsigned char *p, const tr_plan *pl,
                                                                   const cushim_call *call, uint64_t t0, uint64_t t,
                                                                   uint64_t kname)
{
    return tr_call_write_as(p, pl, call, t0, t, kname, 0);
}

/* tr_call_write out of line: tr_query_write's rare cases (tr_plan.c). */
uint32_t tr_call_write_cold(unsigned char *p, const tr_plan *pl, const cushim_call *call, uint64_t t0, uint64_t t);

/* A read-only query's CALL record (pl->post_only: no input, no kernel name, at most one output, a scalar kept
   inline) at 'p' (room for pl->call_max bytes) for a call no plugin skipped, of a duration 't' - 't0' below
   UINT32_MAX, its params a multiple of 8 bytes (tr_query_usual): tr_call_write's bytes, from the plan's q_ fields rather than its output capture.
   Returns its length. */
static inline __attribute__((always_inline)) uint32_t tr_query_put(unsigned char *p, const tr_plan *pl,
                                                                  const cushim_call *call, uint64_t t0, uint64_t t)
{
    uint32_t result, len = pl->q_len;
    uint16_t flags = 0;
    const void *out;
    memcpy(&result, call->retval, sizeof result);
    for (uint32_t i = 0; i < pl->params_size; i += 8) {   /* tr_copy_params' loop: a multiple of 8 here */
        uint64_t w;
        memcpy(&w, (const unsigned char *)call->params + i, 8);
        memcpy(p + sizeof(tr_call) + i, &w, 8);
    }
    if (__builtin_expect(pl->q_inl != 0 && (result & pl->q_ok_mask) == 0, 1)) {
        memcpy(&out, (const unsigned char *)call->params + pl->q_out_off, sizeof out);
        if (__builtin_expect(out != NULL, 1)) {
            uint64_t w = tr_scalar_word(out, pl->q_out_size);
            memcpy(p + len, &w, sizeof w);
            len += (uint32_t)sizeof w;
            flags = pl->q_inl;
        }
    }
    tr_put_call(p, call, len, flags, t0, (uint32_t)(t - t0), result);
    return len;
}

/* 1 when tr_query_put writes a query's record: its params struct is a multiple of 8 bytes (else padded by a
   call: tr_copy_params_odd), no plugin skipped the call (its output is then read safely) and its duration fits
   32 bits (else TR_F_LONG, or a clock that went back). */
static inline int tr_query_usual(const tr_plan *pl, const cushim_call *call, uint64_t t0, uint64_t t)
{
    return (pl->params_size & 7u) == 0 && !(call->flags & CUSHIM_CALL_SKIPPED) && t - t0 < UINT32_MAX;
}

/* tr_call_write out of line: tr_query_write's other cases (tr_plan.c). */
uint32_t tr_call_write_cold(unsigned char *p, const tr_plan *pl, const cushim_call *call, uint64_t t0, uint64_t t);

/* A read-only query's CALL record at 'p' (room for pl->call_max bytes), in every case: tr_call_write's bytes.
   Returns its length. */
static inline uint32_t tr_query_write(unsigned char *p, const tr_plan *pl, const cushim_call *call, uint64_t t0,
                                      uint64_t t)
{
    if (__builtin_expect(tr_query_usual(pl, call, t0, t), 1))
        return tr_query_put(p, pl, call, t0, t);
    return tr_call_write_cold(p, pl, call, t0, t);
}

/* The plan of an API (NULL when out of memory). */
tr_plan *tr_plan_make(tr_state *st, const cushim_api_info *info);
/* The fast-path fields of a plan whose captures are set (tr_plan_make calls it). */
void tr_plan_fast(tr_plan *pl, const cushim_api_info *info, int kernel_names);
/* An API's id by exported name, 0 if this build has none. */
uint32_t tr_api_id_of(const char *name);

#endif /* TR_PLAN_H */
