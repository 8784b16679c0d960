/*
 * rm_codec.c - encoder and decoder of calls and replies, driven by the plans
 * (rm_codec.h). Layout of a CALL payload:
 *
 *   u32 api_id, u32 layout_hash,
 *   the VALUE parameters' bytes in parameter order,
 *   then per pointer parameter in plan order (uncounted first, then counted):
 *     u8 present (0: NULL), and when present
 *       STRING_IN  u32 n, n bytes (the NUL is the server's)
 *       ARRAY      count x elem bytes when the data goes in (the count is the decoded parameter's)
 *       IMAGE      u32 n, n bytes
 *       KPARAMS    u32 n, n x u32 size, the n values
 *       KNODE      the struct's bytes (kernelParams zeroed), u8 present, and when present the arguments as KPARAMS
 *       STRING_OUT, OWNED_OUT, ARRAY out: nothing
 *     SCALAR (a pointer-mode scalar): u8 0 NULL, 1 a host value: u8 n (1..16) and, going in, n bytes;
 *       2 a device address: u64
 *     ADDR (an address looked up): u8 0 and the u64 value, or u8 1, u32 region, u64 offset (shared pinned memory)
 *     ATTR (a value sized by its attribute): u8 present, and going in its n bytes (n: the attribute's size)
 *     ATTRS: u8 present, and per attribute u8 present (out only)
 *     LCONFIG (a launch configuration): u8 present, the struct's bytes (attrs zeroed), u32 n (its numAttrs), and
 *       n attributes' bytes
 *     JITOPTS (option values): u8 present, and per option (the option array, decoded before): a value or a value
 *       written back, the slot's 8 bytes; a log buffer u8 present (its size is its companion option's value);
 *       RM_JIT_ZERO nothing (the server passes 0)
 *
 * A REPLY payload: u32 api_id, u32 status, ret_size bytes, u8 outputs (1 after success, after NVML's
 * INSUFFICIENT_SIZE with its counted arrays empty, and after an NCCL maker's ncclInProgress; 2 after a failed call with option values: only those, so
 * that the program gets the JIT's error log), and when outputs is 1, per present
 * output in plan order: ARRAY out/inout u32 n, n x elem bytes; STRING_OUT u32 n (0xffffffff: NULL), n bytes;
 * OWNED_OUT u32 n (0xffffffff: NULL), n x elem bytes (n: its count output's value, at most RM_MAX_OWNED elements,
 * or RM_MAX_OWNED_BYTES of an image).
 * JITOPTS: each present log buffer u32 n (at most its size: the text the callee wrote and its NUL) and n bytes,
 * then each value written back, the slot's 8 bytes.
 * SCALAR out as a host value: u32 n, n bytes. ATTR out, and each present value of ATTRS: u32 n, n bytes, and
 * for an address (RM_ATTR_HOSTPTR, RM_ATTR_ADDR) u32 region: the bytes are the offset in that shared region, or
 * with 0xffffffff the value as it is (a host address only when NULL: any other host address of the server is
 * refused, RM_ST_REFUSED with no outputs).
 */
#include <stdlib.h>
#include <string.h>

#include "rm_codec.h"

#define RM_NULL_STRING 0xffffffffu
#define RM_MAX_OWNED 65536u   /* elements of an array the callee owns (OWNED_OUT) sent back */
#define RM_MAX_OWNED_BYTES (32u << 20)   /* ... of bytes (an image: cuLinkComplete's cubin) */
#define RM_OWNED_MAX(pp) ((pp)->elem == 1 ? RM_MAX_OWNED_BYTES : RM_MAX_OWNED)

static void *rm_ptr_at(const void *params, const rm_pplan *pp)
{
    void *v;
    memcpy(&v, (const uint8_t *)params + pp->offset, sizeof v);
    return v;
}

static void rm_ptr_set(void *params, const rm_pplan *pp, const void *v)
{
    memcpy((uint8_t *)params + pp->offset, &v, sizeof v);
}

/* An integer of 'size' bytes at 'p'; negative signed values give RM_EBOUNDS. */
static int rm_int_at(const void *p, unsigned size, int is_signed, uint64_t *out)
{
    int64_t s;
    switch (size) {
    case 1: { int8_t v; memcpy(&v, p, 1); s = is_signed ? v : (int64_t)(uint8_t)v; break; }
    case 2: { int16_t v; memcpy(&v, p, 2); s = is_signed ? v : (int64_t)(uint16_t)v; break; }
    case 4: { int32_t v; memcpy(&v, p, 4); s = is_signed ? v : (int64_t)(uint32_t)v; break; }
    case 8: { uint64_t v; memcpy(&v, p, 8); *out = v; return is_signed && (int64_t)v < 0 ? RM_EBOUNDS : RM_OK; }
    default: return RM_EMALFORMED;
    }
    if (s < 0)
        return RM_EBOUNDS;
    *out = (uint64_t)s;
    return RM_OK;
}

/* Elements behind an ARRAY pointer, from the parameters as they are now (before the call: the capacity). */
static int rm_count_of(const rm_plan *pl, const rm_pplan *pp, const void *params, uint64_t *count)
{
    if (!pp->counted) {
        *count = pp->fixed ? pp->fixed : 1;
        return RM_OK;
    }
    const rm_pplan *cp = &pl->p[pp->count_param];
    const void *src = (const uint8_t *)params + cp->offset;
    if (pp->count_indirect) {
        src = rm_ptr_at(params, cp);
        if (src == NULL) {
            *count = 0;
            return RM_OK;
        }
    }
    int rc = rm_int_at(src, pp->count_size, pp->count_signed, count);
    if (rc == RM_OK && pp->count_max != 0)   /* a rank: less 'count_less', none outside the ranks taken */
        *count = *count < pp->count_less || *count > pp->count_max ? 0 : *count - pp->count_less;
    return rc;
}

/* count x elem within 'limit' bytes */
static int rm_bytes_of(uint64_t count, uint32_t elem, uint64_t limit, uint64_t *bytes)
{
    if (elem != 0 && count > limit / elem)
        return RM_EBOUNDS;
    *bytes = count * elem;
    return RM_OK;
}

static int rm_dir_in(const rm_pplan *pp)
{
    return pp->dir == CUSHIM_DIR_IN || pp->dir == CUSHIM_DIR_INOUT;
}

static int rm_dir_out(const rm_pplan *pp)
{
    return pp->dir == CUSHIM_DIR_OUT || pp->dir == CUSHIM_DIR_INOUT;
}

static int rm_elems_null_fields(const rm_pplan *pp, const uint8_t *buf, uint64_t count)
{
    for (uint64_t k = 0; k < count; k++)
        if (!rm_struct_nulls(pp->st, buf + k * pp->elem))
            return 0;
    return 1;
}

/* The field each element must hold 0 in (rm_zero_field: an exportable VMM handle type). */
static int rm_elems_zero_field(const rm_pplan *pp, const uint8_t *buf, uint64_t count)
{
    for (uint64_t k = 0; k < count; k++)
        for (uint32_t b = 0; b < pp->zero_size; b++)
            if (buf[k * pp->elem + pp->zero_off + b] != 0)
                return 0;
    return 1;
}

/* ---- values sized by their attribute (RM_OP_ATTR, RM_OP_ATTRS) and addresses looked up (RM_OP_ADDR) ---- */
static int rm_attr_of(const rm_plan *pl, const rm_pplan *pp, const void *params, int32_t *attr)
{
    memcpy(attr, (const uint8_t *)params + pl->p[pp->func_param].offset, sizeof *attr);
    return RM_OK;
}

/* Values by attribute (RM_ATTR_SENT): each goes in with the program's bytes, also one only read back: the server
   stages them and sends back the attribute's size of them, so the bytes a driver leaves untouched (an int's width
   over a narrower table size, a struct's tail padding, all of them when a failed call writes nothing) come back as
   they were, whatever width it writes. An address read back is the driver's on success (it writes all 8 bytes);
   after a failure the program's own bytes are left as a host address the client does not share (not sent back) or a
   device address (sent back as it is). Only a set host address is refused before it goes. */
#define RM_ATTR_SENT 1

/* ATTRS: the attribute array and its count, from the parameters as they are (client: the program's; server:
   decoded before the values). */
static int rm_attrs_of(const rm_plan *pl, const rm_pplan *pp, const void *params, const int32_t **attrs, uint64_t *n)
{
    int rc = rm_count_of(pl, pp, params, n);
    if (rc != RM_OK)
        return rc;
    if (*n > RM_MAX_ATTRS)
        return RM_EBOUNDS;
    *attrs = rm_ptr_at(params, &pl->p[pp->func_param]);
    return *attrs == NULL && *n != 0 ? RM_EMALFORMED : RM_OK;
}

/* A launch attribute's id: one this tree names, and none whose value holds a host pointer. */
static int rm_lattr_ok(const cushim_struct_info *at, const uint8_t *attr)
{
    uint32_t io, is;
    int32_t id;
    if (!rm_struct_field_at(at, "id", &io, &is))
        return 0;
    memcpy(&id, attr + io, sizeof id);
    const cushim_enum_info *e = NULL;
    for (uint32_t i = 0; i < at->nfields; i++)
        if (at->fields[i].name != NULL && strcmp(at->fields[i].name, "id") == 0)
            e = at->fields[i].enum_type;
    for (uint32_t k = 0; e != NULL && k < e->nvalues; k++)
        if (e->values[k].value == id)
            return !rm_lattr_refused(e->values[k].name);
    return 0;
}

static int rm_encode_lconfig(const rm_pplan *pp, const void *cfg, rm_wr *w)
{
    uint32_t ao, no, n;
    const cushim_struct_info *at;
    const uint8_t *attrs;
    uint8_t *copy;
    if (!rm_lconfig_fields(pp->st, &ao, &no, &at))
        return RM_EUNSUPPORTED;
    memcpy(&attrs, (const uint8_t *)cfg + ao, sizeof attrs);
    memcpy(&n, (const uint8_t *)cfg + no, sizeof n);
    if (n > RM_MAX_LATTRS)
        return RM_EBOUNDS;
    if (n != 0 && attrs == NULL)
        return RM_EUNSUPPORTED;   /* the driver's error; refused here rather than guessed */
    for (uint32_t k = 0; k < n; k++)
        if (!rm_lattr_ok(at, attrs + (size_t)k * at->size))
            return RM_EUNSUPPORTED;
    if ((copy = malloc(pp->elem)) == NULL)
        return RM_ENOMEM;
    memcpy(copy, cfg, pp->elem);
    memset(copy + ao, 0, 8);
    int ok = rm_struct_nulls(pp->st, copy);
    if (ok) {
        rm_wr_bytes(w, copy, pp->elem);
        rm_wr_u32(w, n);
        rm_wr_bytes(w, attrs, (size_t)n * at->size);
    }
    free(copy);
    return ok ? RM_OK : RM_EUNSUPPORTED;
}

static int rm_decode_lconfig(const rm_pplan *pp, rm_rd *r, rm_arena *a, void **out)
{
    uint32_t ao, no, n, want;
    const cushim_struct_info *at;
    const uint8_t *s, *v;
    uint8_t *cfg, *attrs = NULL;
    if (!rm_lconfig_fields(pp->st, &ao, &no, &at))
        return RM_EMALFORMED;
    if ((s = rm_rd_take(r, pp->elem)) == NULL || rm_rd_u32(r, &n) != RM_OK)
        return RM_EMALFORMED;
    if ((cfg = rm_arena_alloc_raw(a, pp->elem)) == NULL)
        return RM_ENOMEM;
    memcpy(cfg, s, pp->elem);
    memcpy(&want, cfg + no, sizeof want);
    if (!rm_struct_nulls(pp->st, cfg) || n != want)   /* attrs comes zeroed; its count is the struct's */
        return RM_EMALFORMED;
    if (n > RM_MAX_LATTRS)
        return RM_EBOUNDS;
    if (n != 0) {
        if ((v = rm_rd_take(r, (size_t)n * at->size)) == NULL)
            return RM_EMALFORMED;
        if ((attrs = rm_arena_alloc_raw(a, (size_t)n * at->size)) == NULL)
            return RM_ENOMEM;
        memcpy(attrs, v, (size_t)n * at->size);
        for (uint32_t k = 0; k < n; k++)
            if (!rm_lattr_ok(at, attrs + (size_t)k * at->size))
                return RM_EUNSUPPORTED;
    }
    memcpy(cfg + ao, &attrs, sizeof attrs);
    *out = cfg;
    return RM_OK;
}

static void rm_encode_addr(const rm_pplan *pp, const void *params, const rm_ctx *cx, rm_wr *w)
{
    uint64_t v, off;
    uint32_t region;
    memcpy(&v, (const uint8_t *)params + pp->offset, sizeof v);
    if (v != 0 && cx != NULL && cx->addr_out != NULL && cx->addr_out(cx->user, v, &region, &off)) {
        rm_wr_u8(w, 1);
        rm_wr_u32(w, region);
        rm_wr_bytes(w, &off, sizeof off);
    } else {
        rm_wr_u8(w, 0);
        rm_wr_bytes(w, &v, sizeof v);
    }
}

static int rm_decode_addr(const rm_pplan *pp, rm_call *c, rm_rd *r, const rm_ctx *cx)
{
    uint8_t form;
    uint64_t v;
    if (rm_rd_u8(r, &form) != RM_OK || form > 1)
        return RM_EMALFORMED;
    if (form == 1) {
        uint32_t region;
        uint64_t off;
        if (rm_rd_u32(r, &region) != RM_OK || rm_rd_bytes(r, &off, sizeof off) != RM_OK || cx == NULL ||
            cx->addr_in == NULL || cx->addr_in(cx->user, region, off, &v) != RM_OK)
            return RM_EMALFORMED;
    } else if (rm_rd_bytes(r, &v, sizeof v) != RM_OK) {
        return RM_EMALFORMED;
    }
    memcpy((uint8_t *)c->params + pp->offset, &v, sizeof v);
    return RM_OK;
}

/* ---- option values (RM_OP_JITOPTS, rm_jit.c) ---- */
/* The option array and its count, from the parameters as they are (client: the program's; server: decoded). */
static int rm_jitopts_of(const rm_plan *pl, const rm_pplan *pp, const void *params, const int32_t **opts, uint64_t *n)
{
    int rc = rm_count_of(pl, pp, params, n);
    if (rc != RM_OK)
        return rc;
    if (*n > RM_MAX_JITOPTS)
        return RM_EBOUNDS;
    *opts = rm_ptr_at(params, &pl->p[pp->func_param]);
    return *opts == NULL && *n != 0 ? RM_EMALFORMED : RM_OK;
}

static uint64_t rm_slot(const void *slots, uint64_t k)
{
    uint64_t v;
    memcpy(&v, (const uint8_t *)slots + k * 8, 8);
    return v;
}

/* Option k's row, checked against the call: known, carried, not written back by an API that keeps its values, a
   log's size option given once. *cap: a log buffer's size (the size option's value: read from 'slots' as they
   are now, which on the server are the decoded ones). RM_OK, RM_EUNSUPPORTED (c->refused says which option and
   why), RM_EBOUNDS (a log over RM_MAX_JIT_LOG). */
static int rm_jit_check(const rm_pplan *pp, const int32_t *opts, uint64_t n, const void *slots, uint64_t k,
                        const rm_jit_opt **row, uint32_t *cap, rm_call *c)
{
    const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
    *row = o;
    *cap = 0;
    if (o == NULL) {
        c->refused = "an option id";
        c->refused_why = "an option this tree's table does not name (rm_jit.c)";
        return RM_EUNSUPPORTED;
    }
    c->refused = o->name;
    if (o->kind == 0) {
        c->refused_why = o->why;
        return RM_EUNSUPPORTED;
    }
    if (o->kind == RM_JIT_LOG) {
        int32_t sid;
        uint64_t at = n, seen = 0;
        if (rm_jit_value_of(pp, o->size_opt, &sid))
            for (uint64_t j = 0; j < n; j++)
                if (opts[j] == sid)
                    at = j, seen++;
        if (seen != 1) {
            c->refused_why = "a log buffer needs its size option once in the same array";
            return RM_EUNSUPPORTED;
        }
        uint64_t size = rm_slot(slots, at);
        if (size > RM_MAX_JIT_LOG)
            return RM_EBOUNDS;
        *cap = (uint32_t)size;
    }
    c->refused = c->refused_why = NULL;
    return RM_OK;
}

static int rm_encode_jitopts(const rm_plan *pl, const rm_pplan *pp, const void *params, void *const *vals, rm_wr *w,
                             rm_call *c, uint64_t *nout)
{
    const int32_t *opts;
    uint64_t n;
    int rc = rm_jitopts_of(pl, pp, params, &opts, &n);
    for (uint64_t k = 0; rc == RM_OK && k < n; k++) {
        const rm_jit_opt *o;
        uint32_t cap;
        rc = rm_jit_check(pp, opts, n, vals, k, &o, &cap, c);
        if (rc != RM_OK)
            break;
        if (o->kind == RM_JIT_VALUE || o->kind == RM_JIT_INOUT)
            rm_wr_bytes(w, (const uint8_t *)vals + k * 8, 8);
        else if (o->kind == RM_JIT_LOG)
            rm_wr_u8(w, vals[k] != NULL);
    }
    *nout = n;
    return rc;
}

/* Server: the slots (n void *) and after them each log's size (n u32), in one arena block. */
static int rm_decode_jitopts(const rm_plan *pl, const rm_pplan *pp, rm_call *c, rm_rd *r, rm_arena *a, void **out,
                             uint64_t *nout)
{
    const int32_t *opts;
    uint64_t n;
    int rc = rm_jitopts_of(pl, pp, c->params, &opts, &n);
    if (rc != RM_OK)
        return rc;
    uint8_t *slots = rm_arena_alloc(a, (size_t)n * 12 + 8), present[RM_MAX_JITOPTS];
    if (slots == NULL)
        return RM_ENOMEM;
    uint32_t *caps = (uint32_t *)(slots + n * 8);
    for (uint64_t k = 0; k < n; k++) {   /* the values first: a log's size may come after it */
        const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
        present[k] = 0;
        if (o != NULL && (o->kind == RM_JIT_VALUE || o->kind == RM_JIT_INOUT) &&
            rm_rd_bytes(r, slots + k * 8, 8) != RM_OK)
            return RM_EMALFORMED;
        if (o != NULL && o->kind == RM_JIT_LOG && (rm_rd_u8(r, &present[k]) != RM_OK || present[k] > 1))
            return RM_EMALFORMED;
    }
    for (uint64_t k = 0; k < n; k++) {
        const rm_jit_opt *o;
        if ((rc = rm_jit_check(pp, opts, n, slots, k, &o, &caps[k], c)) != RM_OK)
            return rc;
        if (o->kind == RM_JIT_LOG && present[k]) {
            void *buf = rm_arena_alloc(a, caps[k] ? caps[k] : 1);
            if (buf == NULL)
                return RM_ENOMEM;
            memcpy(slots + k * 8, &buf, sizeof buf);
        }
    }
    *out = slots;
    *nout = n;
    return RM_OK;
}

/* Server: a call's option outputs (logs, then the values written back); the sizes after the slots. */
static void rm_encode_jitopts_out(const rm_plan *pl, const rm_pplan *pp, const rm_call *c, const uint8_t *slots,
                                  uint64_t n, rm_wr *w)
{
    rm_jit_outputs_write(pp, rm_ptr_at(c->params, &pl->p[pp->func_param]), n, slots,
                         (const uint32_t *)(slots + n * 8), w);
}

void rm_jit_outputs_write(const rm_pplan *pp, const int32_t *opts, uint64_t n, const uint8_t *slots,
                          const uint32_t *caps, rm_wr *w)
{
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t k = 0; k < n; k++) {
            const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
            const char *buf = (const char *)(uintptr_t)rm_slot(slots, k);
            if (o == NULL)
                continue;   /* not after a decoded call: every option was checked */
            if (pass == 0 && o->kind == RM_JIT_LOG && buf != NULL) {
                size_t len = strnlen(buf, caps[k]);
                len = len < caps[k] ? len + 1 : caps[k];   /* the text and its NUL, never past the size */
                rm_wr_u32(w, (uint32_t)len);
                rm_wr_bytes(w, buf, len);
            } else if (pass == 1 && o->kind == RM_JIT_INOUT) {
                rm_wr_bytes(w, slots + k * 8, 8);
            }
        }
}

/* Client: into the program's buffers and slots, logs first (their sizes are the slots as the program gave them). */
static int rm_decode_jitopts_out(const rm_plan *pl, const rm_pplan *pp, const rm_call *c, void *slots, uint64_t n,
                                 rm_rd *r)
{
    return rm_jit_outputs_read(pp, rm_ptr_at(c->params, &pl->p[pp->func_param]), n, slots, NULL, r);
}

int rm_jit_outputs_read(const rm_pplan *pp, const int32_t *opts, uint64_t n, void *slots, const uint32_t *caps,
                        rm_rd *r)
{
    rm_call scratch = { 0 };
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t k = 0; k < n; k++) {
            const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
            uint32_t cap = 0, len;
            const uint8_t *s;
            /* the logs' sizes as the program gave them: checked before any slot is written back (or kept) */
            if (pass == 0 && caps == NULL && rm_jit_check(pp, opts, n, slots, k, &o, &cap, &scratch) != RM_OK)
                return RM_EMALFORMED;
            if (caps != NULL)
                cap = caps[k];
            if (o == NULL)
                return RM_EMALFORMED;
            void *buf = (void *)(uintptr_t)rm_slot(slots, k);
            if (pass == 0 && o->kind == RM_JIT_LOG && buf != NULL) {
                if (rm_rd_u32(r, &len) != RM_OK || len > cap || (s = rm_rd_take(r, len)) == NULL)
                    return RM_EMALFORMED;
                memcpy(buf, s, len);
            } else if (pass == 1 && o->kind == RM_JIT_INOUT) {
                if ((s = rm_rd_take(r, 8)) == NULL)
                    return RM_EMALFORMED;
                memcpy((uint8_t *)slots + k * 8, s, 8);
            }
        }
    return RM_OK;
}

static int rm_has_jitopts(const rm_plan *pl)
{
    for (uint32_t k = 0; k < pl->nptr; k++)
        if (pl->p[pl->order[k]].op == RM_OP_JITOPTS)
            return 1;
    return 0;
}

/* ---- client: encode a call ---- */
static int rm_encode_kparams(uint64_t func, void **args, const rm_ctx *cx, rm_wr *w)
{
    uint32_t n = 0, *sizes = malloc(RM_MAX_KPARAMS * sizeof *sizes);
    int rc;
    if (sizes == NULL)
        return RM_ENOMEM;
    rc = cx && cx->kparam_sizes ? cx->kparam_sizes(cx->user, func, &n, sizes, RM_MAX_KPARAMS) : RM_EUNSUPPORTED;
    if (rc == RM_OK && n > RM_MAX_KPARAMS)
        rc = RM_EBOUNDS;
    for (uint32_t i = 0; rc == RM_OK && i < n; i++)
        if (sizes[i] > RM_MAX_KPARAM_BYTES || (sizes[i] != 0 && args[i] == NULL))
            rc = RM_EBOUNDS;
    if (rc == RM_OK) {
        rm_wr_u32(w, n);
        for (uint32_t i = 0; i < n; i++)
            rm_wr_u32(w, sizes[i]);
        for (uint32_t i = 0; i < n; i++)
            rm_wr_bytes(w, args[i], sizes[i]);
    }
    free(sizes);
    return rc;
}

/* A kernel node's parameters (RM_OP_KNODE): which handle names the function ('func', else 'kern') and where its
   kernelParams lie. RM_OK, or RM_EUNSUPPORTED for a struct without those fields. */
static int rm_knode_fields(const rm_pplan *pp, const uint8_t *node, uint64_t *func, uint32_t *kp_off)
{
    uint32_t fo, fs, ko, ks, no, ns;
    if (pp->st == NULL || !rm_struct_field_at(pp->st, "func", &fo, &fs) ||
        !rm_struct_field_at(pp->st, "kernelParams", &ko, &ks) || fs != 8 || ks != 8 || fo + 8 > pp->elem ||
        ko + 8 > pp->elem)
        return RM_EUNSUPPORTED;
    memcpy(func, node + fo, 8);
    if (*func == 0 && rm_struct_field_at(pp->st, "kern", &no, &ns) && ns == 8 && no + 8 <= pp->elem)
        memcpy(func, node + no, 8);   /* a CUkernel, as cuLaunchKernel takes one for a CUfunction */
    *kp_off = ko;
    return RM_OK;
}

/* KNODE on the wire: the struct's bytes with kernelParams zeroed (every other pointer field must be NULL: 'extra'
   is not carried), u8 present, and when present the arguments as a launch's (KPARAMS). */
static int rm_encode_knode(const rm_pplan *pp, const void *node, const rm_ctx *cx, rm_wr *w)
{
    uint8_t *copy = malloc(pp->elem);
    uint64_t func;
    uint32_t ko;
    void **args;
    int rc;
    if (copy == NULL)
        return RM_ENOMEM;
    memcpy(copy, node, pp->elem);
    rc = rm_knode_fields(pp, copy, &func, &ko);
    if (rc == RM_OK) {
        memcpy(&args, copy + ko, sizeof args);
        memset(copy + ko, 0, 8);
        if (!rm_struct_nulls(pp->st, copy))
            rc = RM_EUNSUPPORTED;   /* 'extra' (launch options by pointer) is not carried */
    }
    if (rc == RM_OK) {
        rm_wr_bytes(w, copy, pp->elem);
        rm_wr_u8(w, args != NULL);
        if (args != NULL)
            rc = rm_encode_kparams(func, args, cx, w);
    }
    free(copy);
    return rc;
}

/* A pointer-mode scalar: the client's side says how it goes this call (rm_ctx.scalar). */
static int rm_encode_scalar(const rm_plan *pl, uint32_t i, const void *params, const void *ptr, const rm_ctx *cx,
                            rm_wr *w, rm_call *c)
{
    uint32_t n = 0;
    int how = cx && cx->scalar ? cx->scalar(cx->user, pl, i, params, &n) : RM_EUNSUPPORTED;
    if (how == RM_SCALAR_DEVICE) {
        uint64_t v = (uint64_t)(uintptr_t)ptr;
        rm_wr_u8(w, RM_SCALAR_DEVICE);
        rm_wr_bytes(w, &v, sizeof v);
        c->cap[i] = 0;
        return RM_OK;
    }
    if (how != RM_SCALAR_HOST)
        return how < 0 ? how : RM_EUNSUPPORTED;
    if (n == 0 || n > RM_SCALAR_MAX)
        return RM_EBOUNDS;
    rm_wr_u8(w, RM_SCALAR_HOST);
    rm_wr_u8(w, (uint8_t)n);
    if (rm_dir_in(&pl->p[i]))
        rm_wr_bytes(w, ptr, n);
    c->cap[i] = n;
    return RM_OK;
}

int rm_encode_call(const rm_plan *pl, void *params, const rm_ctx *cx, rm_wr *w, rm_call *c)
{
    memset(c, 0, sizeof *c);
    c->plan = pl;
    c->params = params;
    if (pl->cls != RM_CLASS_FORWARD && pl->cls != RM_CLASS_FORWARD_NULL && pl->cls != RM_CLASS_HAND)
        return RM_EUNSUPPORTED;
    rm_wr_u32(w, pl->id);
    rm_wr_u32(w, pl->hash);
    for (uint32_t i = 0; i < pl->nparams; i++)
        if (pl->p[i].op == RM_OP_VALUE)
            rm_wr_bytes(w, (const uint8_t *)params + pl->p[i].offset, pl->p[i].size);
    for (uint32_t k = 0; k < pl->nptr; k++) {
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        void *ptr = rm_ptr_at(params, pp);
        if (pp->op == RM_OP_NULL_ONLY && ptr != NULL)
            return RM_EUNSUPPORTED;
        if (pp->op == RM_OP_SCALAR && ptr != NULL) {
            int rc = rm_encode_scalar(pl, i, params, ptr, cx, w, c);
            if (rc != RM_OK)
                return rc;
            continue;
        }
        if (pp->op == RM_OP_ADDR) {
            rm_encode_addr(pp, params, cx, w);
            continue;
        }
        rm_wr_u8(w, ptr != NULL);
        if (ptr == NULL)
            continue;
        switch (pp->op) {
        case RM_OP_STRING_IN: {
            size_t n = strnlen(ptr, RM_MAX_STRING + 1);
            if (n > RM_MAX_STRING)
                return RM_EBOUNDS;
            rm_wr_u32(w, (uint32_t)n);
            rm_wr_bytes(w, ptr, n);
            break;
        }
        case RM_OP_STRING_OUT:
        case RM_OP_OWNED_OUT:
            break;
        case RM_OP_ARRAY: {
            uint64_t count, bytes;
            int rc = rm_count_of(pl, pp, params, &count);
            if (rc == RM_OK)
                rc = rm_bytes_of(count, pp->elem, rm_dir_in(pp) ? RM_MAX_PAYLOAD : RM_MAX_ARENA, &bytes);
            if (rc != RM_OK)
                return rc;
            c->cap[i] = count;
            if (rm_dir_in(pp)) {
                if (pp->null_fields && !rm_elems_null_fields(pp, ptr, count))
                    return RM_EUNSUPPORTED;
                if (pp->zero_size != 0 && !rm_elems_zero_field(pp, ptr, count))
                    return RM_EUNSUPPORTED;
                rm_wr_ref(w, ptr, bytes);   /* a large buffer is sent from the program's memory */
            }
            break;
        }
        case RM_OP_IMAGE: {
            uint64_t n = rm_image_size(ptr, RM_MAX_PAYLOAD);
            if (n == 0)
                return RM_EBOUNDS;
            rm_wr_u32(w, (uint32_t)n);
            rm_wr_bytes(w, ptr, n);
            break;
        }
        case RM_OP_KPARAMS: {
            uint64_t func;
            memcpy(&func, (uint8_t *)params + pl->p[pp->func_param].offset, sizeof func);
            int rc = rm_encode_kparams(func, ptr, cx, w);
            if (rc != RM_OK)
                return rc;
            break;
        }
        case RM_OP_KNODE: {
            int rc = rm_encode_knode(pp, ptr, cx, w);
            if (rc != RM_OK)
                return rc;
            break;
        }
        case RM_OP_LCONFIG: {
            int rc = rm_encode_lconfig(pp, ptr, w);
            if (rc != RM_OK)
                return rc;
            break;
        }
        case RM_OP_ATTR: {
            int32_t attr;
            uint8_t kind = 0;
            rm_attr_of(pl, pp, params, &attr);
            uint32_t n = rm_attr_size_of(pp, attr, &kind);
            if (n == 0 || (kind == RM_ATTR_HOSTPTR && rm_dir_in(pp)))
                return RM_EUNSUPPORTED;   /* an attribute the table does not know (or a host address set) */
            c->cap[i] = n;
            rm_wr_bytes(w, ptr, n);   /* RM_ATTR_SENT */
            break;
        }
        case RM_OP_JITOPTS: {
            uint64_t n;
            int rc = rm_encode_jitopts(pl, pp, params, ptr, w, c, &n);
            if (rc != RM_OK)
                return rc;
            c->cap[i] = n;
            break;
        }
        case RM_OP_ATTRS: {
            const int32_t *attrs;
            uint64_t n;
            int rc = rm_attrs_of(pl, pp, params, &attrs, &n);
            if (rc != RM_OK)
                return rc == RM_EMALFORMED ? RM_EUNSUPPORTED : rc;
            for (uint64_t k = 0; k < n; k++) {
                uint8_t kind;
                void *v;
                memcpy(&v, (const uint8_t *)ptr + k * sizeof v, sizeof v);
                uint32_t size = rm_attr_size_of(pp, attrs[k], &kind);
                if (size == 0)
                    return RM_EUNSUPPORTED;
                rm_wr_u8(w, v != NULL);
                if (v != NULL)
                    rm_wr_bytes(w, v, size);   /* the program's bytes, staged by the server */
            }
            c->cap[i] = n;
            break;
        }
        default:
            return RM_EUNSUPPORTED;
        }
    }
    return w->err;
}

/* ---- server: decode a call ---- */
static int rm_decode_kparams(uint64_t func, rm_rd *r, rm_arena *a, const rm_ctx *cx, void **out)
{
    uint32_t n;
    if (rm_rd_u32(r, &n) != RM_OK)
        return RM_EMALFORMED;
    if (n > RM_MAX_KPARAMS)
        return RM_EBOUNDS;
    const uint8_t *sz = rm_rd_take(r, (size_t)n * 4);
    void **args = rm_arena_alloc(a, (size_t)n * sizeof(void *));
    uint32_t *sizes = rm_arena_alloc(a, (size_t)n * sizeof(uint32_t));
    if (sz == NULL)
        return RM_EMALFORMED;
    if (args == NULL || sizes == NULL)
        return RM_ENOMEM;
    memcpy(sizes, sz, (size_t)n * 4);
    for (uint32_t i = 0; i < n; i++) {
        if (sizes[i] > RM_MAX_KPARAM_BYTES)
            return RM_EBOUNDS;
        const uint8_t *v = rm_rd_take(r, sizes[i]);
        if (v == NULL)
            return RM_EMALFORMED;
        args[i] = rm_arena_alloc(a, sizes[i]);
        if (args[i] == NULL)
            return RM_ENOMEM;
        memcpy(args[i], v, sizes[i]);
    }
    if (cx != NULL && cx->kparam_check != NULL && cx->kparam_check(cx->user, func, n, sizes) != RM_OK)
        return RM_EMALFORMED;
    *out = args;
    return RM_OK;
}

static int rm_decode_knode(const rm_pplan *pp, rm_rd *r, rm_arena *a, const rm_ctx *cx, void **out)
{
    const uint8_t *s = rm_rd_take(r, pp->elem);
    uint8_t *node, present;
    uint64_t func;
    uint32_t ko;
    void *args = NULL;
    int rc;
    if (s == NULL || rm_rd_u8(r, &present) != RM_OK || present > 1)
        return RM_EMALFORMED;
    if ((node = rm_arena_alloc_raw(a, pp->elem)) == NULL)
        return RM_ENOMEM;
    memcpy(node, s, pp->elem);
    if (!rm_struct_nulls(pp->st, node))   /* kernelParams comes zeroed, and nothing else is carried */
        return RM_EMALFORMED;
    if ((rc = rm_knode_fields(pp, node, &func, &ko)) != RM_OK)
        return RM_EMALFORMED;
    if (present && (rc = rm_decode_kparams(func, r, a, cx, &args)) != RM_OK)
        return rc;
    memcpy(node + ko, &args, sizeof args);
    *out = node;
    return RM_OK;
}

/* A value of n bytes staged in 'cap' zeroed bytes (a scalar, an attribute): the bytes read from the message when
   the callee reads them, left zero for an output. */
static int rm_stage(int in, rm_rd *r, rm_arena *a, size_t cap, uint32_t n, void **out)
{
    void *buf;
    if (n > cap)
        return RM_EMALFORMED;
    if ((buf = rm_arena_alloc(a, cap)) == NULL)
        return RM_ENOMEM;
    if (in) {
        const uint8_t *s = rm_rd_take(r, n);
        if (s == NULL)
            return RM_EMALFORMED;
        memcpy(buf, s, n);
    }
    *out = buf;
    return RM_OK;
}

/* A pointer-mode scalar: a host value staged in RM_SCALAR_MAX zeroed bytes (whatever the library reads for the
   type it was told lies inside them), or a device address passed as it came. */
static int rm_decode_scalar(const rm_plan *pl, uint32_t i, rm_call *c, rm_rd *r, rm_arena *a, const rm_ctx *cx)
{
    const rm_pplan *pp = &pl->p[i];
    uint8_t how, n;
    void *buf;
    if (rm_rd_u8(r, &how) != RM_OK)
        return RM_EMALFORMED;
    c->cap[i] = 0;
    if (how == 0) {
        rm_ptr_set(c->params, pp, NULL);
        return RM_OK;
    }
    /* the way the client claims against the server's own handle or descriptor (the values are decoded) */
    if ((how == RM_SCALAR_HOST || how == RM_SCALAR_DEVICE) && cx != NULL && cx->scalar_check != NULL &&
        cx->scalar_check(cx->user, pl, c->params, i, how) != RM_OK)
        return RM_EMALFORMED;
    if (how == RM_SCALAR_DEVICE) {
        uint64_t v;
        if (rm_rd_bytes(r, &v, sizeof v) != RM_OK || v == 0)
            return RM_EMALFORMED;
        rm_ptr_set(c->params, pp, (const void *)(uintptr_t)v);
        return RM_OK;
    }
    if (how != RM_SCALAR_HOST || rm_rd_u8(r, &n) != RM_OK || n == 0 || n > RM_SCALAR_MAX)
        return RM_EMALFORMED;
    int rc = rm_stage(rm_dir_in(pp), r, a, RM_SCALAR_MAX, n, &buf);
    if (rc != RM_OK)
        return rc;
    c->cap[i] = n;
    rm_ptr_set(c->params, pp, buf);
    return RM_OK;
}

static int rm_decode_pointer(const rm_plan *pl, uint32_t i, rm_call *c, rm_rd *r, rm_arena *a, const rm_ctx *cx)
{
    const rm_pplan *pp = &pl->p[i];
    uint8_t present;
    void *buf = NULL;
    if (pp->op == RM_OP_SCALAR)
        return rm_decode_scalar(pl, i, c, r, a, cx);
    if (pp->op == RM_OP_ADDR)
        return rm_decode_addr(pp, c, r, cx);
    if (rm_rd_u8(r, &present) != RM_OK || present > 1)
        return RM_EMALFORMED;
    if (!present) {
        rm_ptr_set(c->params, pp, NULL);
        return RM_OK;
    }
    switch (pp->op) {
    case RM_OP_STRING_IN: {
        uint32_t n;
        const uint8_t *s;
        if (rm_rd_u32(r, &n) != RM_OK)
            return RM_EMALFORMED;
        if (n > RM_MAX_STRING)
            return RM_EBOUNDS;
        if ((s = rm_rd_take(r, n)) == NULL)
            return RM_EMALFORMED;
        if ((buf = rm_arena_alloc(a, (size_t)n + 1)) == NULL)
            return RM_ENOMEM;
        memcpy(buf, s, n);   /* the arena zeroed the NUL */
        break;
    }
    case RM_OP_STRING_OUT:
    case RM_OP_OWNED_OUT:   /* the slot the callee stores its pointer in */
        if ((buf = rm_arena_alloc(a, sizeof(char *))) == NULL)
            return RM_ENOMEM;
        break;
    case RM_OP_ARRAY: {
        uint64_t count, bytes;
        int rc = rm_count_of(pl, pp, c->params, &count);
        if (rc == RM_OK)
            rc = rm_bytes_of(count, pp->elem, rm_dir_in(pp) ? RM_MAX_PAYLOAD : RM_MAX_ARENA, &bytes);
        if (rc != RM_OK)
            return rc;
        c->cap[i] = count;
        if (pp->dir == CUSHIM_DIR_IN && pp->elem == 1 && !pp->null_fields && cx != NULL && cx->in_place_min != 0 &&
            bytes >= cx->in_place_min) {   /* read in place: no copy */
            if ((buf = (void *)rm_rd_take(r, bytes)) == NULL)
                return RM_EMALFORMED;
            break;
        }
        /* blocks filled whole are not zeroed first: inputs copied from the message, and the host buffer of
           a byte copy (the driver writes all of it when it succeeds; outputs go only after success) */
        int filled = rm_dir_in(pp) || pl->chunk_host == (int)i;
        if (pp->align > 16 && pp->align <= 4096 && (pp->align & (pp->align - 1)) == 0) {   /* a CUtensorMap */
            uint8_t *raw = rm_arena_alloc(a, bytes + pp->align);
            if (raw == NULL)
                return RM_ENOMEM;
            buf = raw + ((pp->align - ((uintptr_t)raw & (pp->align - 1))) & (pp->align - 1));
        } else if ((buf = filled ? rm_arena_alloc_raw(a, bytes) : rm_arena_alloc(a, bytes)) == NULL) {
            return RM_ENOMEM;
        }
        if (rm_dir_in(pp)) {
            const uint8_t *s = rm_rd_take(r, bytes);
            if (s == NULL)
                return RM_EMALFORMED;
            memcpy(buf, s, bytes);
            if (pp->null_fields && !rm_elems_null_fields(pp, buf, count))
                return RM_EMALFORMED;
            if (pp->zero_size != 0 && !rm_elems_zero_field(pp, buf, count))
                return RM_EUNSUPPORTED;   /* refused (RM_ST_REFUSED), as the client would have */
        }
        break;
    }
    case RM_OP_IMAGE: {
        uint32_t n;
        const uint8_t *s;
        if (rm_rd_u32(r, &n) != RM_OK || (s = rm_rd_take(r, n)) == NULL)
            return RM_EMALFORMED;
        if ((buf = rm_arena_alloc(a, (size_t)n + RM_IMAGE_PAD)) == NULL)
            return RM_ENOMEM;
        memcpy(buf, s, n);
        if (rm_image_size(buf, n) == 0)   /* whatever the driver will read lies within the n bytes */
            return RM_EMALFORMED;
        break;
    }
    case RM_OP_KPARAMS: {
        uint64_t func;
        memcpy(&func, (uint8_t *)c->params + pl->p[pp->func_param].offset, sizeof func);
        int rc = rm_decode_kparams(func, r, a, cx, &buf);
        if (rc != RM_OK)
            return rc;
        break;
    }
    case RM_OP_KNODE: {
        int rc = rm_decode_knode(pp, r, a, cx, &buf);
        if (rc != RM_OK)
            return rc;
        break;
    }
    case RM_OP_LCONFIG: {
        int rc = rm_decode_lconfig(pp, r, a, &buf);
        if (rc != RM_OK)
            return rc;
        break;
    }
    case RM_OP_ATTR: {   /* staged in RM_ATTR_STAGE zeroed bytes, whatever the attribute's size, the program's
                            bytes first (RM_ATTR_SENT) */
        int32_t attr;
        uint8_t kind = 0;
        rm_attr_of(pl, pp, c->params, &attr);
        uint32_t n = rm_attr_size_of(pp, attr, &kind);
        if (n == 0 || (kind == RM_ATTR_HOSTPTR && rm_dir_in(pp)))
            return RM_EUNSUPPORTED;
        int rc = rm_stage(RM_ATTR_SENT, r, a, RM_ATTR_STAGE, n, &buf);
        if (rc != RM_OK)
            return rc;
        c->cap[i] = n;
        break;
    }
    case RM_OP_JITOPTS: {
        uint64_t n;
        int rc = rm_decode_jitopts(pl, pp, c, r, a, &buf, &n);
        if (rc != RM_OK)
            return rc;
        c->cap[i] = n;
        break;
    }
    case RM_OP_ATTRS: {
        const int32_t *attrs;
        uint64_t n;
        int rc = rm_attrs_of(pl, pp, c->params, &attrs, &n);
        if (rc != RM_OK)
            return rc;
        void **vals = rm_arena_alloc(a, (size_t)(n ? n : 1) * sizeof(void *));
        if (vals == NULL)
            return RM_ENOMEM;
        for (uint64_t k = 0; k < n; k++) {
            uint8_t kind, here;
            if (rm_rd_u8(r, &here) != RM_OK || here > 1)
                return RM_EMALFORMED;
            uint32_t size = rm_attr_size_of(pp, attrs[k], &kind);
            if (size == 0)
                return RM_EUNSUPPORTED;
            vals[k] = NULL;
            if (here && (rc = rm_stage(RM_ATTR_SENT, r, a, RM_ATTR_STAGE, size, &vals[k])) != RM_OK)
                return rc;
        }
        c->cap[i] = n;
        buf = vals;
        break;
    }
    default:   /* NULL_ONLY: only absent */
        return RM_EMALFORMED;
    }
    rm_ptr_set(c->params, pp, buf);
    return RM_OK;
}

static uint32_t rm_status_of(int rc)
{
    switch (rc) {
    case RM_EBOUNDS:
    case RM_ENOMEM: return RM_ST_TOO_LARGE;
    case RM_EUNSUPPORTED: return RM_ST_REFUSED;
    default: return RM_ST_MALFORMED;
    }
}

int rm_decode_call(const rm_plans *ps, const uint8_t *msg, size_t len, rm_arena *a, const rm_ctx *cx, rm_call *c,
                   uint32_t *status)
{
    rm_rd r = { .p = msg, .len = len, .pos = 0 };
    uint32_t id, hash;
    int rc;
    memset(c, 0, sizeof *c);
    c->cx = cx;
    *status = RM_ST_MALFORMED;
    if (rm_rd_u32(&r, &id) != RM_OK || rm_rd_u32(&r, &hash) != RM_OK)
        return RM_EMALFORMED;
    const rm_plan *pl = rm_plan_of(ps, id);
    if (pl == NULL) {
        *status = RM_ST_UNKNOWN_API;
        return RM_ELAYOUT;
    }
    c->plan = pl;
    if (pl->hash != hash) {
        *status = RM_ST_LAYOUT;
        return RM_ELAYOUT;
    }
    if (pl->cls != RM_CLASS_FORWARD && pl->cls != RM_CLASS_FORWARD_NULL && pl->cls != RM_CLASS_HAND) {
        *status = RM_ST_REFUSED;
        return RM_EUNSUPPORTED;
    }
    if ((c->params = rm_arena_alloc(a, pl->info->params_size)) == NULL) {
        *status = RM_ST_TOO_LARGE;
        return RM_ENOMEM;
    }
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i];
        if (pp->op == RM_OP_VALUE && rm_rd_bytes(&r, (uint8_t *)c->params + pp->offset, pp->size) != RM_OK)
            return RM_EMALFORMED;
    }
    for (uint32_t k = 0; k < pl->nptr; k++)
        if ((rc = rm_decode_pointer(pl, pl->order[k], c, &r, a, cx)) != RM_OK) {
            *status = rm_status_of(rc);
            return rc;
        }
    if (r.pos != r.len)
        return RM_EMALFORMED;
    *status = RM_ST_OK;
    return RM_OK;
}

/* ---- server: encode a reply ---- */
/* An output struct whose pointer fields the callee filled (null_fields): its host pointers mean nothing to the
   client. 1 when one of the call's outputs holds one. */
static int rm_out_pointers(const rm_call *c)
{
    const rm_plan *pl = c->plan;
    for (uint32_t k = 0; k < pl->nptr; k++) {
        const rm_pplan *pp = &pl->p[pl->order[k]];
        const void *ptr = rm_ptr_at(c->params, pp);
        if (pp->op == RM_OP_ARRAY && pp->null_fields && rm_dir_out(pp) && ptr != NULL &&
            !rm_elems_null_fields(pp, ptr, c->cap[pl->order[k]]))
            return 1;
    }
    return 0;
}

/* One attribute value of a reply: u32 n, n bytes, and for a host address u32 region (the bytes its offset there,
   or 0xffffffff for NULL). 0 when it cannot go: a host address of the server outside the shared regions, which
   would mean nothing to the client. 'w' NULL: only that check. */
static int rm_attr_out(const rm_call *c, const rm_pplan *pp, int32_t attr, const void *val, rm_wr *w)
{
    uint8_t kind = 0;
    uint32_t n = rm_attr_size_of(pp, attr, &kind), region = RM_NULL_STRING;
    uint64_t v = 0, off = 0;
    int addr = kind == RM_ATTR_HOSTPTR || kind == RM_ATTR_ADDR;
    if (addr) {
        memcpy(&v, val, sizeof v);
        if (v != 0 && (c->cx == NULL || c->cx->addr_out == NULL || !c->cx->addr_out(c->cx->user, v, &region, &off))) {
            if (kind == RM_ATTR_HOSTPTR)
                return 0;
            off = v;   /* a device address of the server's: as it is */
        }
    }
    if (w == NULL)
        return 1;
    rm_wr_u32(w, n);
    if (addr) {
        rm_wr_bytes(w, &off, sizeof off);
        rm_wr_u32(w, region);
    } else {
        rm_wr_bytes(w, val, n);
    }
    return 1;
}

/* Every attribute value of the call, sent or checked (w NULL). */
static int rm_attrs_out(const rm_call *c, rm_wr *w)
{
    const rm_plan *pl = c->plan;
    for (uint32_t k = 0; k < pl->nptr; k++) {
        const rm_pplan *pp = &pl->p[pl->order[k]];
        void *ptr = rm_ptr_at(c->params, pp);
        if (ptr == NULL || !rm_dir_out(pp))
            continue;
        if (pp->op == RM_OP_ATTR) {
            int32_t attr;
            rm_attr_of(pl, pp, c->params, &attr);
            if (!rm_attr_out(c, pp, attr, ptr, w))
                return 0;
        } else if (pp->op == RM_OP_ATTRS) {
            const int32_t *attrs = rm_ptr_at(c->params, &pl->p[pp->func_param]);
            void *const *vals = ptr;
            for (uint64_t j = 0; j < c->cap[pl->order[k]]; j++)
                if (vals[j] != NULL && !rm_attr_out(c, pp, attrs[j], vals[j], w))
                    return 0;
        }
    }
    return 1;
}

/* A text the callee returned, at *(const char **)slot: u32 n (RM_NULL_STRING: NULL), then n bytes (at most max). */
static void rm_wr_text(rm_wr *w, const void *slot, size_t max)
{
    const char *t;
    memcpy(&t, slot, sizeof t);
    if (t == NULL) {
        rm_wr_u32(w, RM_NULL_STRING);
    } else {
        size_t n = strnlen(t, max);
        rm_wr_u32(w, (uint32_t)n);
        rm_wr_bytes(w, t, n);
    }
}

/* The same read back: the text kept by 'keep' (the client's copy) stored at *(const char **)slot, NULL for
   RM_NULL_STRING. RM_EMALFORMED for a length over max or past the message, RM_ENOMEM when nothing keeps it. */
static int rm_rd_text(rm_rd *r, uint32_t max, const char *(*keep)(void *, const char *, size_t), const rm_ctx *cx,
                      void *slot)
{
    uint32_t n;
    const uint8_t *t = NULL;
    const char *v = NULL;
    if (rm_rd_u32(r, &n) != RM_OK)
        return RM_EMALFORMED;
    if (n != RM_NULL_STRING) {
        if (n > max || (t = rm_rd_take(r, n)) == NULL)
            return RM_EMALFORMED;
        if (keep == NULL || (v = keep(cx->user, (const char *)t, n)) == NULL)
            return RM_ENOMEM;
    }
    memcpy(slot, &v, sizeof v);
    return RM_OK;
}

static int32_t rm_attr_at(const rm_plan *pl, const rm_pplan *pp, const void *params)
{
    int32_t attr;
    rm_attr_of(pl, pp, params, &attr);
    return attr;
}

/* Whether the plan reads a value by attribute back (what a failed call may still have written). */
static int rm_has_attr_out(const rm_plan *pl)
{
    for (uint32_t k = 0; k < pl->nptr; k++) {
        const rm_pplan *pp = &pl->p[pl->order[k]];
        if ((pp->op == RM_OP_ATTR && rm_dir_out(pp)) || pp->op == RM_OP_ATTRS)
            return 1;
    }
    return 0;
}

/* A failed call's value by attribute: u8 1 and rm_attr_out's layout (the staged bytes: the program's where the
   callee wrote nothing), or u8 0 for a host address the client does not share (the program's bytes left as they
   are: it holds its own there unless the callee wrote one of the server's). */
static void rm_attr_out_failed(const rm_call *c, const rm_pplan *pp, int32_t attr, const void *val, rm_wr *w)
{
    int ok = rm_attr_out(c, pp, attr, val, NULL);
    rm_wr_u8(w, (uint8_t)ok);
    if (ok)
        rm_attr_out(c, pp, attr, val, w);
}

/* Client: one value of a failed call (rm_attr_out_failed's layout). */
static int rm_attr_in(const rm_pplan *pp, int32_t attr, void *dst, rm_rd *r, const rm_ctx *cx);
static int rm_attr_in_failed(const rm_pplan *pp, int32_t attr, void *dst, rm_rd *r, const rm_ctx *cx)
{
    uint8_t sent;
    if (rm_rd_u8(r, &sent) != RM_OK || sent > 1)
        return RM_EMALFORMED;
    return sent ? rm_attr_in(pp, attr, dst, r, cx) : RM_OK;
}

/* A link's kept option outputs after the call's own (rm_ctx.link_out, the back end's record of the link). */
static void rm_encode_link_out(const rm_call *c, rm_wr *w)
{
    const rm_plan *pl = c->plan;
    uint64_t state;
    if (pl->link_param < 0)
        return;
    memcpy(&state, (const uint8_t *)c->params + pl->p[pl->link_param].offset, sizeof state);
    if (c->cx != NULL && c->cx->link_out != NULL)
        c->cx->link_out(c->cx->user, state, w);
    else
        rm_wr_u8(w, 0);
}

int rm_encode_reply(const rm_call *c, uint32_t api_id, uint32_t status, const void *retval, rm_wr *w)
{
    const rm_plan *pl = c != NULL ? c->plan : NULL;
    if (pl != NULL && status == RM_ST_OK && pl->info->ret_size != 0 && pl->ret_status &&
        *(const int32_t *)retval == 0 && rm_out_pointers(c))
        status = RM_ST_REFUSED;
    /* an attribute value that cannot go (a host address of the server's own): the call is refused, nothing sent */
    if (pl != NULL && status == RM_ST_OK && pl->info->ret_size != 0 && (!pl->ret_status || *(const int32_t *)retval == 0) &&
        !rm_attrs_out(c, NULL)) {
        api_id = pl->id;
        status = RM_ST_REFUSED;
        pl = NULL;
    }
    uint32_t ret_size = pl != NULL && status == RM_ST_OK ? pl->info->ret_size : 0;
    rm_wr_u32(w, pl != NULL ? pl->id : api_id);
    rm_wr_u32(w, status);
    rm_wr_u32(w, ret_size);
    if (ret_size != 0 && pl->ret_string)
        rm_wr_bytes(w, (const uint8_t[sizeof(void *)]){0}, ret_size);   /* the text follows: never the server's pointer */
    else if (ret_size != 0)
        rm_wr_bytes(w, retval, ret_size);
    int32_t ret = ret_size != 0 && pl->ret_status ? *(const int32_t *)retval : 0;
    /* NVML_ERROR_INSUFFICIENT_SIZE (7): NVML says how much room it needs through the count it was given (a
       process list's *infoCount, asked with room 0 first): that count goes back, the arrays it did not fill
       do not (sent empty) */
    int sizing = ret == 7 && pl->info->library == CUSHIM_LIB_NVML;
    /* ncclInProgress (7) of a maker: a non-blocking communicator is made, and initialises in the background */
    int in_progress = ret == 7 && pl->info->library == CUSHIM_LIB_NCCL && pl->num_create != 0;
    int outputs = ret_size != 0 && (ret == 0 || sizing || in_progress);
    if (ret_size != 0 && ret != 0 && !sizing && pl->ret_status &&
        (rm_has_jitopts(pl) || pl->link_param >= 0 || rm_has_attr_out(pl))) {
        rm_wr_u8(w, 2);   /* failed: the JIT's logs still go, and what the callee wrote of a value by attribute */
        for (uint32_t k = 0; k < pl->nptr; k++) {
            const rm_pplan *pp = &pl->p[pl->order[k]];
            const uint8_t *slots = rm_ptr_at(c->params, pp);
            if (pp->op == RM_OP_JITOPTS && slots != NULL)
                rm_encode_jitopts_out(pl, pp, c, slots, c->cap[pl->order[k]], w);
            else if (pp->op == RM_OP_ATTR && rm_dir_out(pp) && slots != NULL)
                rm_attr_out_failed(c, pp, rm_attr_at(pl, pp, c->params), slots, w);
            else if (pp->op == RM_OP_ATTRS && slots != NULL) {
                const int32_t *attrs = rm_ptr_at(c->params, &pl->p[pp->func_param]);
                void *const *vals = (void *const *)slots;
                for (uint64_t j = 0; j < c->cap[pl->order[k]]; j++)
                    if (vals[j] != NULL)
                        rm_attr_out_failed(c, pp, attrs[j], vals[j], w);
            }
        }
        rm_encode_link_out(c, w);
        return w->err;
    }
    rm_wr_u8(w, (uint8_t)outputs);
    if (!outputs)
        return w->err;
    for (uint32_t k = 0; k < pl->nptr; k++) {
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        void *ptr = rm_ptr_at(c->params, pp);
        if (ptr == NULL)
            continue;
        if (pp->op == RM_OP_ARRAY && rm_dir_out(pp)) {
            uint64_t n = c->cap[i], now;
            /* an array counted through a pointer: the callee may say it filled fewer */
            if (pp->counted && pp->count_indirect && rm_count_of(pl, pp, c->params, &now) == RM_OK && now < n)
                n = now;
            if (sizing && pp->counted)
                n = 0;
            rm_wr_u32(w, (uint32_t)n);
            rm_wr_ref(w, ptr, n * pp->elem);   /* a large output is sent from the arena (the owner's choice) */
        } else if (pp->op == RM_OP_OWNED_OUT) {
            const uint8_t *arr;
            uint64_t n = 0;
            const void *cnt = rm_ptr_at(c->params, &pl->p[pp->func_param]);
            memcpy(&arr, ptr, sizeof arr);
            if (cnt != NULL)
                memcpy(&n, cnt, 8);
            if (arr == NULL) {
                rm_wr_u32(w, RM_NULL_STRING);
            } else {
                if (n > RM_OWNED_MAX(pp))
                    n = RM_OWNED_MAX(pp);   /* the client finds its count differs and fails the call */
                rm_wr_u32(w, (uint32_t)n);
                rm_wr_bytes(w, arr, n * pp->elem);
            }
        } else if (pp->op == RM_OP_JITOPTS) {
            rm_encode_jitopts_out(pl, pp, c, ptr, c->cap[i], w);
        } else if (pp->op == RM_OP_SCALAR && rm_dir_out(pp) && c->cap[i] != 0) {
            rm_wr_u32(w, (uint32_t)c->cap[i]);
            rm_wr_bytes(w, ptr, (size_t)c->cap[i]);
        } else if (pp->op == RM_OP_ATTR && rm_dir_out(pp)) {
            int32_t attr;
            rm_attr_of(pl, pp, c->params, &attr);
            rm_attr_out(c, pp, attr, ptr, w);
        } else if (pp->op == RM_OP_ATTRS) {
            const int32_t *attrs = rm_ptr_at(c->params, &pl->p[pp->func_param]);
            void *const *vals = ptr;
            for (uint64_t j = 0; j < c->cap[i]; j++)
                if (vals[j] != NULL)
                    rm_attr_out(c, pp, attrs[j], vals[j], w);
        } else if (pp->op == RM_OP_STRING_OUT) {
            rm_wr_text(w, ptr, RM_MAX_STRING);
        }
    }
    if (pl->ret_string)   /* the returned text (rm_plan.ret_string) */
        rm_wr_text(w, retval, RM_MAX_RET_STRING);
    rm_encode_link_out(c, w);
    return w->err;
}

/* ---- client: decode a reply ---- */
/* A link's kept option outputs after the call's own (rm_ctx.link_in): u8 0, or u8 1 and the outputs. */
static int rm_decode_link_in(const rm_call *c, rm_rd *r, const rm_ctx *cx)
{
    const rm_plan *pl = c->plan;
    uint8_t has;
    uint64_t state;
    if (pl->link_param < 0)
        return RM_OK;
    memcpy(&state, (const uint8_t *)c->params + pl->p[pl->link_param].offset, sizeof state);
    if (rm_rd_u8(r, &has) != RM_OK || has > 1)
        return RM_EMALFORMED;
    if (!has)
        return RM_OK;
    return cx != NULL && cx->link_in != NULL ? cx->link_in(cx->user, state, r) : RM_EMALFORMED;
}

/* One attribute value into the program's 'dst' (rm_attr_out's layout): exactly the attribute's size, a host
   address only as a region this client shares, or NULL. */
static int rm_attr_in(const rm_pplan *pp, int32_t attr, void *dst, rm_rd *r, const rm_ctx *cx)
{
    uint8_t kind = 0;
    uint32_t n, want = rm_attr_size_of(pp, attr, &kind), region;
    const uint8_t *s;
    if (rm_rd_u32(r, &n) != RM_OK || n != want || want == 0 || (s = rm_rd_take(r, n)) == NULL)
        return RM_EMALFORMED;
    if (kind != RM_ATTR_HOSTPTR && kind != RM_ATTR_ADDR) {
        memcpy(dst, s, n);
        return RM_OK;
    }
    uint64_t off, v;
    memcpy(&off, s, sizeof off);
    v = off;   /* no region: the value as it is (a host address only when NULL) */
    if (n != sizeof v || rm_rd_u32(r, &region) != RM_OK)
        return RM_EMALFORMED;
    if (region == RM_NULL_STRING ? kind == RM_ATTR_HOSTPTR && off != 0 :
        cx == NULL || cx->addr_in == NULL || cx->addr_in(cx->user, region, off, &v) != RM_OK)
        return RM_EMALFORMED;
    memcpy(dst, &v, sizeof v);
    return RM_OK;
}

int rm_decode_reply(const rm_call *c, void *retval, const uint8_t *msg, size_t len, const rm_ctx *cx,
                    uint32_t *status)
{
    const rm_plan *pl = c->plan;
    rm_rd r = { .p = msg, .len = len, .pos = 0 };
    uint32_t id, ret_size;
    uint8_t outputs;
    if (rm_rd_u32(&r, &id) != RM_OK || rm_rd_u32(&r, status) != RM_OK || rm_rd_u32(&r, &ret_size) != RM_OK ||
        id != pl->id)
        return RM_EMALFORMED;
    if (ret_size != 0 && (ret_size != pl->info->ret_size || rm_rd_bytes(&r, retval, ret_size) != RM_OK))
        return RM_EMALFORMED;
    if (rm_rd_u8(&r, &outputs) != RM_OK || outputs > 2 || (outputs && ret_size == 0))
        return RM_EMALFORMED;
    if (outputs == 2) {   /* a failed call's option outputs (its JIT logs) and values by attribute only */
        if (!pl->ret_status || *(const int32_t *)retval == 0)
            return RM_EMALFORMED;
        for (uint32_t k = 0; k < pl->nptr; k++) {
            const rm_pplan *pp = &pl->p[pl->order[k]];
            void *slots = rm_ptr_at(c->params, pp);
            if (pp->op == RM_OP_JITOPTS && slots != NULL &&
                rm_decode_jitopts_out(pl, pp, c, slots, c->cap[pl->order[k]], &r) != RM_OK)
                return RM_EMALFORMED;
            if (pp->op == RM_OP_ATTR && rm_dir_out(pp) && slots != NULL &&
                rm_attr_in_failed(pp, rm_attr_at(pl, pp, c->params), slots, &r, cx) != RM_OK)
                return RM_EMALFORMED;
            if (pp->op == RM_OP_ATTRS && slots != NULL) {
                const int32_t *attrs = rm_ptr_at(c->params, &pl->p[pp->func_param]);
                void *const *vals = slots;
                for (uint64_t j = 0; j < c->cap[pl->order[k]]; j++)
                    if (vals[j] != NULL && rm_attr_in_failed(pp, attrs[j], vals[j], &r, cx) != RM_OK)
                        return RM_EMALFORMED;
            }
        }
        if (rm_decode_link_in(c, &r, cx) != RM_OK)
            return RM_EMALFORMED;
        return r.pos == r.len ? RM_OK : RM_EMALFORMED;
    }
    int owned = -1;
    uint32_t owned_n = 0;
    for (uint32_t k = 0; outputs && k < pl->nptr; k++) {
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        void *ptr = rm_ptr_at(c->params, pp);
        if (ptr == NULL)
            continue;
        if (pp->op == RM_OP_OWNED_OUT) {
            uint32_t n;
            const void *v = NULL;
            const uint8_t *s;
            if (rm_rd_u32(&r, &n) != RM_OK)
                return RM_EMALFORMED;
            if (n != RM_NULL_STRING) {
                if (n > RM_OWNED_MAX(pp) || (s = rm_rd_take(&r, (size_t)n * pp->elem)) == NULL)
                    return RM_EMALFORMED;
                if (cx == NULL || cx->keep == NULL || (v = cx->keep(cx->user, i, s, (size_t)n * pp->elem)) == NULL)
                    return RM_ENOMEM;
                owned = (int)i;
                owned_n = n;
            }
            memcpy(ptr, &v, sizeof v);
        } else if (pp->op == RM_OP_ARRAY && rm_dir_out(pp)) {
            uint32_t n;
            const uint8_t *s;
            if (rm_rd_u32(&r, &n) != RM_OK || n > c->cap[i] || (s = rm_rd_take(&r, (size_t)n * pp->elem)) == NULL)
                return RM_EMALFORMED;
            memcpy(ptr, s, (size_t)n * pp->elem);
        } else if (pp->op == RM_OP_JITOPTS) {
            if (rm_decode_jitopts_out(pl, pp, c, ptr, c->cap[i], &r) != RM_OK)
                return RM_EMALFORMED;
        } else if (pp->op == RM_OP_SCALAR && rm_dir_out(pp) && c->cap[i] != 0) {
            uint32_t n;
            const uint8_t *s;
            if (rm_rd_u32(&r, &n) != RM_OK || n != c->cap[i] || (s = rm_rd_take(&r, n)) == NULL)
                return RM_EMALFORMED;
            memcpy(ptr, s, n);
        } else if (pp->op == RM_OP_ATTR && rm_dir_out(pp)) {
            int32_t attr;
            rm_attr_of(pl, pp, c->params, &attr);
            if (rm_attr_in(pp, attr, ptr, &r, cx) != RM_OK)
                return RM_EMALFORMED;
        } else if (pp->op == RM_OP_ATTRS) {
            const int32_t *attrs = rm_ptr_at(c->params, &pl->p[pp->func_param]);
            void *const *vals = ptr;
            for (uint64_t j = 0; j < c->cap[i]; j++)
                if (vals[j] != NULL && rm_attr_in(pp, attrs[j], vals[j], &r, cx) != RM_OK)
                    return RM_EMALFORMED;
        } else if (pp->op == RM_OP_STRING_OUT) {
            int rc = rm_rd_text(&r, RM_MAX_STRING, cx != NULL ? cx->intern : NULL, cx, ptr);
            if (rc != RM_OK)
                return rc;
        }
    }
    if (outputs && pl->ret_string) {   /* the returned text: kept by the client (rm_ctx.ret_text) */
        int rc = rm_rd_text(&r, RM_MAX_RET_STRING, cx != NULL ? cx->ret_text : NULL, cx, retval);
        if (rc != RM_OK)
            return rc;
    }
    if (outputs && rm_decode_link_in(c, &r, cx) != RM_OK)
        return RM_EMALFORMED;
    if (owned >= 0) {   /* the array's length is what its count output says */
        const void *cnt = rm_ptr_at(c->params, &pl->p[pl->p[owned].func_param]);
        uint64_t n;
        if (cnt == NULL)
            return owned_n == 0 ? RM_OK : RM_EMALFORMED;
        memcpy(&n, cnt, 8);
        if (n != owned_n)
            return RM_EMALFORMED;
    }
    return r.pos == r.len ? RM_OK : RM_EMALFORMED;
}

int rm_batch_next(rm_rd *r, const uint8_t **call, size_t *len)
{
    uint32_t n;
    if (rm_rd_u32(r, &n) != RM_OK || (*call = rm_rd_take(r, n)) == NULL)
        return RM_EMALFORMED;
    *len = n;
    return RM_OK;
}

void rm_hello_make(rm_hello *h, const rm_plans *ps, const char *tree_name, uint32_t pid)
{
    memset(h, 0, sizeof *h);
    h->cuda_version = ps->cuda_version;
    h->api_id_limit = ps->id_limit;
    h->tree_hash = ps->tree_hash;
    h->ptr_bytes = (uint16_t)sizeof(void *);
    h->pid = pid;
    if (tree_name != NULL)
        strncpy(h->tree, tree_name, sizeof h->tree - 1);
}
