/*
 * tr_plan.c - per API, from the metadata alone: which input pointers are read
 * (a string, a struct the metadata lists, an array whose count another
 * parameter or the overlay gives), which output pointers (the element, or the
 * array whose count another parameter holds, directly or behind a pointer),
 * both after the call, and which parameter names the kernel of a launch. And
 * the read of an input the driver may not have read (cushim_read_mem).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <cushim/cushim_io.h>

#include "tr_plan.h"

void tr_copy_params_odd(unsigned char *dst, const unsigned char *src, uint32_t n)
{
    memcpy(dst, src, n);
    if (tr_pad8(n) > n)
        memset(dst + n, 0, tr_pad8(n) - n);
}

uint32_t tr_cap_safe_room(const tr_cap *c, const unsigned char *pv)
{
    uint64_t bytes;
    if (tr_rd_uint(pv + c->off, c->size) == 0)
        return 0;
    if (c->mode == TR_CAP_STRING)
        return (uint32_t)sizeof(tr_blob) + tr_pad8(TR_STR_MAX);
    if (c->count_param >= 0 && c->count_indirect)   /* the count itself may be unreadable: the most */
        return (uint32_t)sizeof(tr_blob) + TR_BLOB_MAX;
    bytes = tr_cap_count(c, pv);
    bytes = bytes > TR_BLOB_MAX ? TR_BLOB_MAX : bytes * c->elem_size;   /* no product that wraps */
    return (uint32_t)sizeof(tr_blob) + tr_pad8((uint32_t)(bytes < TR_BLOB_MAX ? bytes : TR_BLOB_MAX));
}

unsigned char *tr_cap_write_safe(const tr_cap *c, const unsigned char *pv, unsigned char *out)
{
    const void *ptr = (const void *)(uintptr_t)tr_rd_uint(pv + c->off, c->size);
    unsigned char *d = out + sizeof(tr_blob);
    tr_blob b = {.param = c->param, .flags = 0, .len = 0, .count = 0};
    long got;
    if (ptr == NULL)
        return out;
    if (!cushim_read_mem_usable()) {   /* no safe read here (a seccomp filter that refuses both): the plain capture */
        uint32_t size;
        uint64_t count;
        int trunc;
        if (!tr_cap_size(c, pv, &size, &count, &trunc))
            return out;
        return tr_cap_write(c, pv, out, size, count, trunc);
    }
    if (c->mode == TR_CAP_STRING) {
        char s[TR_STR_MAX + 1];
        size_t n;
        got = cushim_read_mem(s, ptr, sizeof s);
        if (got < 0) {
            b.flags = TR_BLOB_UNCHECKED;
        } else if (got == 0) {
            b.flags = TR_BLOB_UNREAD;
        } else {
            n = strnlen(s, (size_t)got);
            b.count = n;
            if (n == sizeof s) {   /* longer than kept, as tr_cap_size says */
                n = TR_STR_MAX;
                b.flags = TR_BLOB_TRUNC;
            } else if (n == (size_t)got) {   /* runs into unreadable memory before its end */
                b.flags = TR_BLOB_TRUNC | TR_BLOB_UNREAD;
            }
            b.len = (uint32_t)n;
            memcpy(d, s, n);
        }
    } else {
        uint64_t count = 0, bytes;
        int readable = 1;
        if (c->count_param >= 0 && c->count_indirect) {
            const void *cp = (const void *)(uintptr_t)tr_rd_uint(pv + c->coff, c->csize);
            unsigned char w[8] = {0};
            long r = cp == NULL ? 0 : cushim_read_mem(w, cp, c->cpointee);
            if (cp != NULL && r < 0)
                readable = -1;
            else if (cp != NULL && r != (long)c->cpointee)
                readable = 0;
            else if (cp != NULL)
                count = tr_rd_uint(w, c->cpointee);
            if (c->cpointee == 4 && (count >> 31))   /* a negative int count */
                count = 0;
        } else {
            count = tr_cap_count(c, pv);
        }
        b.count = count;
        bytes = count * c->elem_size;
        if (count > TR_BLOB_MAX || bytes > TR_BLOB_MAX) {
            b.flags = TR_BLOB_TRUNC;
            bytes = (TR_BLOB_MAX / c->elem_size) * c->elem_size;
        }
        got = readable > 0 ? cushim_read_mem(d, ptr, (size_t)bytes) : readable;
        if (got < 0) {
            b.flags = TR_BLOB_UNCHECKED;
        } else if (readable == 0 || (got == 0 && bytes > 0)) {
            b.flags = TR_BLOB_UNREAD;
        } else {
            uint64_t kept = ((uint64_t)got / c->elem_size) * c->elem_size;
            if (kept < bytes)
                b.flags = TR_BLOB_TRUNC | TR_BLOB_UNREAD;
            b.len = (uint32_t)kept;
        }
    }
    memcpy(out, &b, sizeof b);
    if (tr_pad8(b.len) > b.len)
        memset(d + b.len, 0, tr_pad8(b.len) - b.len);
    return d + tr_pad8(b.len);
}

/* The word behind a scalar output, read safely; 0 when there is none to keep. */
static int tr_cap_word_safe(const tr_cap *c, const unsigned char *pv, uint64_t *w)
{
    const void *ptr;
    unsigned char b[8] = {0};
    memcpy(&ptr, pv + c->off, sizeof ptr);
    if (ptr == NULL || c->elem_size > sizeof b || cushim_read_mem(b, ptr, c->elem_size) != (long)c->elem_size)
        return 0;
    *w = tr_scalar_word(b, c->elem_size);
    return 1;
}

unsigned char *tr_cap_inline_safe(const tr_cap *c, const unsigned char *pv, unsigned char *out, uint16_t *flags)
{
    uint64_t w;
    return tr_cap_word_safe(c, pv, &w) ? tr_put_inline(c, out, w, flags) : out;
}

unsigned char *tr_cap_scalar_safe(const tr_cap *c, const unsigned char *pv, unsigned char *out)
{
    uint64_t w;
    return tr_cap_word_safe(c, pv, &w) ? tr_put_scalar(c, out, w) : out;
}

static int typed_params(void)
{
    return tr_host->sizeof_param_info >= offsetof(cushim_param_info, struct_type) + sizeof(void *);
}

static int tr_cap_for(const cushim_api_info *info, uint32_t i, int out, tr_cap *c)
{
    const cushim_param_info *p = tr_host->api_param(info, i);
    int typed = typed_params();
    memset(c, 0, sizeof *c);
    if (p == NULL || p->offset + p->size > info->params_size || p->size != sizeof(void *))
        return 0;
    c->param = (uint16_t)i;
    c->off = p->offset;
    c->size = p->size;
    c->count_param = -1;
    if (!out && p->kind == CUSHIM_KIND_STRING && p->dir == CUSHIM_DIR_IN) {
        c->mode = TR_CAP_STRING;
        return 1;
    }
    if (p->kind != CUSHIM_KIND_POINTER)
        return 0;
    c->mode = TR_CAP_ARRAY;
    c->elem_size = p->elem_size;
    if (typed && p->struct_type != NULL && c->elem_size == 0)
        c->elem_size = p->struct_type->size;
    if (c->elem_size == 0)
        return 0;
    if (p->count_param >= 0 && (uint32_t)p->count_param < info->nparams) {
        const cushim_param_info *cp = tr_host->api_param(info, (uint32_t)p->count_param);
        if (cp == NULL || cp->offset + cp->size > info->params_size)
            return 0;
        c->count_param = p->count_param;
        c->coff = cp->offset;
        c->csize = cp->size;
        c->count_indirect = typed ? p->count_indirect : 0;
        if (c->count_indirect) {
            if (cp->size != sizeof(void *) || cp->elem_size == 0 || cp->elem_size > 8)
                return 0;
            c->cpointee = cp->elem_size;
        }
    } else {
        c->fixed = p->fixed_count;
    }
    if (out)
        return p->dir == CUSHIM_DIR_OUT || p->dir == CUSHIM_DIR_INOUT;
    /* inputs: a struct the metadata describes, or a counted/fixed array */
    if (p->dir != CUSHIM_DIR_IN)
        return 0;
    return (typed && p->struct_type != NULL) || c->count_param >= 0 || c->fixed > 0;
}

static int launch_kind(const cushim_api_info *info, uint16_t *off)
{
    if (!(info->categories & CUSHIM_CAT_LAUNCH))
        return 0;
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = tr_host->api_param(info, i);
        const char *ct = p ? p->canonical_type : NULL;
        if (ct == NULL || p->size != sizeof(void *))
            continue;
        *off = p->offset;
        if (strcmp(ct, "struct CUfunc_st *") == 0)
            return TR_LAUNCH_FUNC;
        if (strcmp(ct, "struct CUkern_st *") == 0)
            return TR_LAUNCH_KERNEL;
        if (info->library == CUSHIM_LIB_RUNTIME && strcmp(p->name, "func") == 0 && strcmp(ct, "const void *") == 0)
            return TR_LAUNCH_STUB;
    }
    return 0;
}

/* A capture of one element of 1, 2, 4 or 8 bytes: its blob has a fixed size. */
static int cap_is_scalar(const tr_cap *c)
{
    return c->mode == TR_CAP_ARRAY && c->count_param < 0 && c->fixed <= 1 &&
           (c->elem_size == 1 || c->elem_size == 2 || c->elem_size == 4 || c->elem_size == 8);
}

void tr_plan_fast(tr_plan *pl, const cushim_api_info *info, int kernel_names)
{
    pl->params_size = info->params_size;
    pl->enter_len = (uint32_t)sizeof(tr_rec) + tr_pad8(info->params_size);
    pl->ret_size = (uint8_t)(info->ret_size < 8 ? info->ret_size : 8);
    pl->ret_result = (uint8_t)cushim_ret_is_status(info->ret_kind);
    pl->outs_scalar = 1;
    pl->exit_max = (uint32_t)sizeof(tr_exit);
    for (uint32_t i = 0; i < (uint32_t)pl->nin + pl->nout; i++) {
        pl->caps[i].scalar = (uint16_t)cap_is_scalar(&pl->caps[i]);
        pl->caps[i].inl = 0;
        if (i >= pl->nin && pl->caps[i].scalar && pl->caps[i].param < 256)
            pl->caps[i].inl = TR_F_INLINE_OF(pl->caps[i].param, pl->caps[i].elem_size == 1   ? 0
                                                                 : pl->caps[i].elem_size == 2 ? 1
                                                                 : pl->caps[i].elem_size == 4 ? 2
                                                                                              : 3);
        if (i >= pl->nin) {
            pl->outs_scalar &= (uint8_t)pl->caps[i].scalar;
            pl->exit_max += (uint32_t)sizeof(tr_blob) + 8u;
        }
    }
    pl->pre_fast = !pl->corr && !(pl->launch && kernel_names);   /* input captures: at exit (tr_plan.h) */
    pl->out_inline = pl->nout == 1 && pl->caps[pl->nin].inl != 0;
    if (pl->out_inline)
        pl->exit_max = (uint32_t)sizeof(tr_exit) + 8u;   /* the word, no blob header */
    pl->post_fast = !pl->corr && pl->ret_size == 4 && pl->nin == 0 && (pl->nout == 0 || pl->out_inline);
    pl->call = pl->pre_fast && pl->post_fast ? TR_CALL_PLAIN : 0;
    /* a launch whose ENTER would only add the kernel's name: one CALL record too, the name in it (GPU tracing
       keeps the ENTER: its pre hook pushes the correlation id) */
    if (pl->launch && kernel_names && pl->nin == 0 && !pl->corr && pl->post_fast)
        pl->call = TR_CALL_KNAME;
    pl->post_only = pl->call == TR_CALL_PLAIN && (info->categories & CUSHIM_CAT_QUERY) &&
                    !(info->categories & CUSHIM_CAT_SYNC);
    pl->call_max = (uint32_t)sizeof(tr_call) + tr_pad8(info->params_size) + (pl->out_inline ? 8u : 0u) +
                   (pl->call == TR_CALL_KNAME ? 8u : 0u) + 8u;
    pl->q_len = (uint32_t)sizeof(tr_call) + tr_pad8(info->params_size);
    pl->q_ok_mask = pl->ret_result ? ~0u : 0u;
    pl->q_inl = pl->out_inline ? pl->caps[pl->nin].inl : 0;
    pl->q_out_off = pl->out_inline ? pl->caps[pl->nin].off : 0;
    pl->q_out_size = pl->out_inline ? pl->caps[pl->nin].elem_size : 0;
}

uint32_t tr_call_write_cold(unsigned char *p, const tr_plan *pl, const cushim_call *call, uint64_t t0, uint64_t t)
{
    return tr_call_write(p, pl, call, t0, t, 0);
}

tr_plan *tr_plan_make(tr_state *st, const cushim_api_info *info)
{
    tr_cap tmp[32];
    uint32_t nin = 0, nout = 0;
    tr_plan *pl;
    for (uint32_t i = 0; i < info->nparams && nin < 16; i++)
        if (tr_cap_for(info, i, 0, &tmp[nin]))
            nin++;
    for (uint32_t i = 0; i < info->nparams && nout < 16; i++)
        if (tr_cap_for(info, i, 1, &tmp[16 + nout]))
            nout++;
    if ((pl = calloc(1, sizeof *pl + (nin + nout) * sizeof(tr_cap))) == NULL)
        return NULL;
    memcpy(pl->caps, tmp, nin * sizeof(tr_cap));
    memcpy(pl->caps + nin, tmp + 16, nout * sizeof(tr_cap));
    pl->nin = (uint16_t)nin;
    pl->nout = (uint16_t)nout;
    pl->launch = (uint8_t)launch_kind(info, &pl->fparam_off);
    pl->corr = st->gpu && (info->categories & (CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET));
    tr_plan_fast(pl, info, st->kernel_names);
    return pl;
}

uint32_t tr_api_id_of(const char *name)
{
    const cushim_api_info *i = tr_host->api_by_name(name);
    return i ? i->id : 0;
}


/* Found lower: the calls above it never came back to their post hook (their entries are dropped). Not found:
   'n' when the call was only counted (over TR_OPEN_MAX: one off the count), n + 1 when the stack does not hold
   it at all (written, nothing popped), 0 when nothing is open. */
uint32_t tr_open_find(const tr_tbuf *tb, uint64_t seq, uint32_t n)
{
    for (uint32_t i = n < TR_OPEN_MAX ? n : TR_OPEN_MAX; i > 0; i--)
        if (atomic_load_explicit(&tb->opens[i - 1].seq, memory_order_relaxed) == seq)
            return i;
    return n > TR_OPEN_MAX ? n : n == 0 ? 0 : n + 1;
}

/* A runtime launch learns its kernel's name from the driver launch inside it: as the writer gives an ENTER on
   its stack the name of the launch whose EXIT closes above it, the entry of the enclosing call on the open-call
   stack gets 'name' when it is a TR_CALL_KNAME launch without one. At the inner launch's entry, before its
   push (its name is known there, whichever record it makes). */
void tr_open_kname_up(tr_tbuf *tb, const cushim_call *call, uint64_t name, tr_plan *const *plans, uint32_t nplans)
{
    uint32_t n = atomic_load_explicit(&tb->nopen, memory_order_relaxed), id;
    const tr_plan *ppl;
    tr_open *o;
    if (call->parent == NULL || n - 1u >= TR_OPEN_MAX)
        return;
    o = &tb->opens[n - 1];
    if (atomic_load_explicit(&o->seq, memory_order_relaxed) != call->parent->seq ||
        atomic_load_explicit(&o->kname, memory_order_relaxed) != 0)
        return;
    id = (uint32_t)atomic_load_explicit(&o->id_depth, memory_order_relaxed);
    ppl = id < nplans ? plans[id] : NULL;
    if (ppl != NULL && ppl->call == TR_CALL_KNAME)
        atomic_store_explicit(&o->kname, name, memory_order_relaxed);
}
