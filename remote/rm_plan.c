/*
 * rm_plan.c - the classification walker: one rm_plan per API from the generated
 * metadata, built once at start (rm_plan.h says what a plan holds).
 *
 * A parameter is carried when the metadata says how many bytes it stands for:
 * a value ('size' bytes), a string, a pointer to elements of a known size whose
 * count is another parameter (count_param, count_indirect), a fixed count
 * (fixed_count) or one element; a struct only when its field descriptors show no
 * pointer inside (or, on the way in, when those pointers are NULL). Anything else
 * is a pointer the codec cannot carry (forwarded only when NULL) or, for a
 * callback, a parameter that needs hand-written code. rm_special.c overrides.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_plan.h"
#include "rm_wire.h"

void rm_meta_from_host(rm_meta *m, const cushim_host *host)
{
    m->api_count = host->api_count;
    m->api_at = host->api_at;
    m->api_param = host->api_param;
    m->api_id_limit = host->api_id_limit;
    m->cuda_version = host->cuda_version;
    m->struct_field = CUSHIM_HOST_HAS(host, struct_field) ? host->struct_field : NULL;
}

/* How struct fields are read (set by rm_plans_build from its rm_meta; never fields[i] with this build's size as
   the stride when a host gives an accessor). */
static const cushim_field_info *(*rm_struct_field)(const cushim_struct_info *s, uint32_t index);

static const cushim_field_info *rm_field(const cushim_struct_info *st, uint32_t i)
{
    return rm_struct_field != NULL ? rm_struct_field(st, i) : &st->fields[i];
}

const char *rm_class_name(int cls)
{
    switch (cls) {
    case RM_CLASS_FORWARD: return "forward";
    case RM_CLASS_FORWARD_NULL: return "forward-if-null";
    case RM_CLASS_HAND: return "hand-written";
    case RM_CLASS_NEEDS_HAND: return "needs-hand";
    case RM_CLASS_UNSUPPORTED: return "unsupported";
    default: return "?";
    }
}

const char *rm_op_name(int op)
{
    static const char *const names[] = { "?", "value", "string-in", "array", "string-out", "null-only",
                                         "image", "kparams", "opaque", "client", "knode", "owned-out", "scalar",
                                         "attr", "attrs", "addr", "lconfig", "jitopts" };
    return op > 0 && op <= RM_OP_JITOPTS ? names[op] : "?";
}

/* ---- structs ---- */
#define RM_ST_PLAIN 0      /* bytes only: scalars, enums, handles, device addresses */
#define RM_ST_POINTERS 1   /* some field is a host pointer (or string, or callback) */
#define RM_ST_UNKNOWN 2    /* some field has no descriptor (a union the overlay does not list) */

static int rm_struct_scan(const cushim_struct_info *st, int depth, const char **field)
{
    int worst = RM_ST_PLAIN;
    if (depth > 8)
        return RM_ST_UNKNOWN;
    for (uint32_t i = 0; i < st->nfields; i++) {
        const cushim_field_info *f = rm_field(st, i);
        int r;
        if (f == NULL)
            return RM_ST_UNKNOWN;
        switch (f->kind) {
        case CUSHIM_KIND_SCALAR:
        case CUSHIM_KIND_ENUM:
        case CUSHIM_KIND_HANDLE:
        case CUSHIM_KIND_DEVPTR:
            r = RM_ST_PLAIN;
            break;
        case CUSHIM_KIND_POINTER:
        case CUSHIM_KIND_STRING:
        case CUSHIM_KIND_CALLBACK:
            r = f->size == 8 * (f->array_len ? f->array_len : 1) ? RM_ST_POINTERS : RM_ST_UNKNOWN;
            break;
        case CUSHIM_KIND_STRUCT:
            r = f->struct_type ? rm_struct_scan(f->struct_type, depth + 1, field) : RM_ST_UNKNOWN;
            break;
        default:
            r = RM_ST_UNKNOWN;
        }
        if (r > worst) {
            worst = r;
            if (field != NULL && (r == RM_ST_UNKNOWN || *field == NULL))
                *field = f->name;
        }
    }
    return worst;
}

static int rm_struct_nulls_at(const cushim_struct_info *st, const uint8_t *base, int depth)
{
    if (depth > 8)
        return 0;
    for (uint32_t i = 0; i < st->nfields; i++) {
        const cushim_field_info *f = rm_field(st, i);
        if (f == NULL)
            return 0;
        uint32_t n = f->array_len ? f->array_len : 1;
        if (f->kind == CUSHIM_KIND_POINTER || f->kind == CUSHIM_KIND_STRING || f->kind == CUSHIM_KIND_CALLBACK) {
            for (uint32_t k = 0; k < n; k++) {
                uint64_t v;
                memcpy(&v, base + f->offset + 8u * k, 8);
                if (v != 0)
                    return 0;
            }
        } else if (f->kind == CUSHIM_KIND_STRUCT && f->struct_type != NULL) {
            uint32_t stride = f->size / n;
            for (uint32_t k = 0; k < n; k++)
                if (!rm_struct_nulls_at(f->struct_type, base + f->offset + (size_t)stride * k, depth + 1))
                    return 0;
        }
    }
    return 1;
}

int rm_struct_nulls(const cushim_struct_info *st, const void *elem)
{
    return rm_struct_nulls_at(st, elem, 0);
}

/* ---- parameters ---- */
static int rm_is_signed(const char *canonical)
{
    return canonical != NULL && strstr(canonical, "unsigned") == NULL && strncmp(canonical, "size_t", 6) != 0;
}

static int rm_int_size(uint32_t n)
{
    return n == 1 || n == 2 || n == 4 || n == 8;
}

/* One parameter's plan; a parameter that cannot be carried gets NULL_ONLY or OPAQUE and a reason in 'why'
   (only the first reason of an API is kept). */
static void rm_plan_param(rm_plan *pl, const rm_meta *m, uint32_t i, const cushim_param_info *p, int vouched,
                          char *why, size_t whylen)
{
    rm_pplan *pp = &pl->p[i];
    const cushim_api_info *a = pl->info;
    why[0] = '\0';
    memset(pp, 0, sizeof *pp);
    pp->offset = p->offset;
    pp->size = p->size;
    pp->dir = p->dir;
    pp->count_param = -1;
    pp->func_param = -1;
    switch (p->kind) {
    case CUSHIM_KIND_SCALAR:
    case CUSHIM_KIND_ENUM:
    case CUSHIM_KIND_HANDLE:
    case CUSHIM_KIND_DEVPTR:
        pp->op = RM_OP_VALUE;
        break;
    case CUSHIM_KIND_STRUCT: {
        const char *field = NULL;
        int s = p->struct_type ? rm_struct_scan(p->struct_type, 0, &field) : RM_ST_UNKNOWN;
        if (s == RM_ST_PLAIN) {
            pp->op = RM_OP_VALUE;
        } else {
            pp->op = RM_OP_OPAQUE;   /* by value: cannot be NULL */
            if (p->struct_type == NULL)
                snprintf(why, whylen, "'%s': struct by value without field metadata", p->name);
            else
                snprintf(why, whylen, "'%s': struct %s holds %s '%s'", p->name, p->struct_type->name,
                         s == RM_ST_POINTERS ? "a pointer" : "a field without metadata", field ? field : "?");
        }
        break;
    }
    case CUSHIM_KIND_STRING:
        if (p->dir == CUSHIM_DIR_IN) {
            pp->op = RM_OP_STRING_IN;
        } else {
            pp->op = RM_OP_NULL_ONLY;
            snprintf(why, whylen, "'%s': string written by the callee", p->name);
        }
        break;
    case CUSHIM_KIND_CALLBACK:
        pp->op = RM_OP_OPAQUE;
        snprintf(why, whylen, "'%s': a callback (runs in the client)", p->name);
        break;
    case CUSHIM_KIND_POINTER: {
        if (p->dir == CUSHIM_DIR_UNKNOWN) {
            pp->op = RM_OP_NULL_ONLY;
            snprintf(why, whylen, "'%s': direction unknown", p->name);
            break;
        }
        if (p->pointee == CUSHIM_KIND_STRING && p->dir == CUSHIM_DIR_OUT && p->count_param < 0 && p->fixed_count == 0) {
            pp->op = RM_OP_STRING_OUT;
            break;
        }
        if (p->pointee == CUSHIM_KIND_POINTER || p->pointee == CUSHIM_KIND_CALLBACK ||
            p->pointee == CUSHIM_KIND_STRING) {
            pp->op = RM_OP_NULL_ONLY;
            snprintf(why, whylen, "'%s': pointer to %s", p->name,
                     p->pointee == CUSHIM_KIND_CALLBACK ? "a callback" : p->pointee == CUSHIM_KIND_STRING ?
                     "strings" : "host pointers");
            break;
        }
        uint32_t elem = p->elem_size;
        if (elem == 0 && p->count_param >= 0 && (p->pointee == CUSHIM_KIND_UNKNOWN))
            elem = 1;   /* void * counted in bytes (count=ByteCount in the overlay) */
        if (elem == 0) {
            pp->op = RM_OP_NULL_ONLY;
            snprintf(why, whylen, "'%s': host buffer whose size the metadata does not give", p->name);
            break;
        }
        if (p->pointee == CUSHIM_KIND_STRUCT && !vouched) {   /* vouched: rm_special.c says it holds no pointer */
            const char *field = NULL;
            int s = p->struct_type ? rm_struct_scan(p->struct_type, 0, &field) : RM_ST_UNKNOWN;
            if (s == RM_ST_UNKNOWN) {
                pp->op = RM_OP_NULL_ONLY;
                if (p->struct_type == NULL)
                    snprintf(why, whylen, "'%s': struct without field metadata (%s)", p->name, p->type);
                else
                    snprintf(why, whylen, "'%s': struct %s has field '%s' without metadata", p->name,
                             p->struct_type->name, field ? field : "?");
                break;
            }
            if (s == RM_ST_POINTERS) {
                /* carried while its pointers are NULL: on the way in the client checks them, on the way out the
                   server (the callee's own host pointers mean nothing to the client: rm_encode_reply refuses the
                   answer). Only pure outputs of an API that creates nothing: refused after the call, an API
                   that creates (memory, a graph node) would leak it */
                if (p->dir == CUSHIM_DIR_INOUT || (p->dir == CUSHIM_DIR_OUT && (a->categories & CUSHIM_CAT_ALLOC))) {
                    pp->op = RM_OP_NULL_ONLY;
                    snprintf(why, whylen, "'%s': struct %s returns pointer '%s'", p->name,
                             p->struct_type->name, field ? field : "?");
                    break;
                }
                pp->null_fields = 1;
                pp->st = p->struct_type;
                if (p->dir == CUSHIM_DIR_IN)
                    snprintf(why, whylen, "'%s': struct %s pointer field '%s'", p->name, p->struct_type->name,
                             field ? field : "?");
                else
                    snprintf(why, whylen, "'%s': struct %s returns pointer '%s' (refused unless NULL)", p->name,
                             p->struct_type->name, field ? field : "?");
            }
        }
        pp->op = RM_OP_ARRAY;
        pp->elem = elem;
        pp->fixed = p->fixed_count;
        if (p->count_param >= 0 && p->fixed_count == 0) {
            const cushim_param_info *c = p->count_param < a->nparams ? m->api_param(a, (uint32_t)p->count_param) : NULL;
            int ok = c != NULL;
            if (ok && !p->count_indirect)
                ok = (c->kind == CUSHIM_KIND_SCALAR || c->kind == CUSHIM_KIND_ENUM) && rm_int_size(c->size);
            else if (ok)
                ok = c->kind == CUSHIM_KIND_POINTER && c->pointee == CUSHIM_KIND_SCALAR && rm_int_size(c->elem_size) &&
                     c->count_param < 0 && c->fixed_count == 0 && (c->dir == CUSHIM_DIR_IN || c->dir == CUSHIM_DIR_INOUT);
            if (!ok) {
                pp->op = RM_OP_NULL_ONLY;
                snprintf(why, whylen, "'%s': its count '%s' is %s", p->name, c ? c->name : "?",
                         c && p->count_indirect && c->dir == CUSHIM_DIR_OUT ? "known only after the call" : "unusable");
                break;
            }
            pp->counted = 1;
            pp->count_param = p->count_param;
            pp->count_indirect = p->count_indirect;
            pp->count_size = (uint8_t)(p->count_indirect ? c->elem_size : c->size);
            pp->count_signed = (uint8_t)rm_is_signed(c->canonical_type);
        }
        break;
    }
    default:
        pp->op = RM_OP_OPAQUE;
        snprintf(why, whylen, "'%s': unclassified", p->name);
    }
}

int rm_struct_field_at(const cushim_struct_info *st, const char *name, uint32_t *offset, uint32_t *size)
{
    for (uint32_t i = 0; st != NULL && i < st->nfields; i++) {
        const cushim_field_info *f = rm_field(st, i);
        if (f != NULL && f->name != NULL && strcmp(f->name, name) == 0) {
            *offset = f->offset;
            *size = f->size;
            return 1;
        }
    }
    return 0;
}

int rm_lconfig_fields(const cushim_struct_info *st, uint32_t *attrs_off, uint32_t *num_off,
                      const cushim_struct_info **attr_st)
{
    const cushim_field_info *fa = NULL, *fn = NULL;
    for (uint32_t i = 0; st != NULL && i < st->nfields; i++) {
        const cushim_field_info *f = rm_field(st, i);
        if (f != NULL && f->name != NULL && strcmp(f->name, "attrs") == 0)
            fa = f;
        if (f != NULL && f->name != NULL && strcmp(f->name, "numAttrs") == 0)
            fn = f;
    }
    if (fa == NULL || fn == NULL || fa->kind != CUSHIM_KIND_POINTER || fa->size != 8 || fa->struct_type == NULL ||
        fn->size != 4 || fa->offset + 8 > st->size || fn->offset + 4 > st->size)
        return 0;
    /* every other pointer field must be NULL (rm_struct_nulls); the attribute: an enum 'id', no pointer */
    uint32_t io, is;
    const cushim_struct_info *at = fa->struct_type;
    if (!rm_struct_field_at(at, "id", &io, &is) || is != 4 || at->size == 0)
        return 0;
    for (uint32_t i = 0; i < at->nfields; i++) {
        const cushim_field_info *f = rm_field(at, i);
        if (f == NULL || f->kind == CUSHIM_KIND_POINTER || f->kind == CUSHIM_KIND_STRING)
            return 0;
    }
    *attrs_off = fa->offset;
    *num_off = fn->offset;
    *attr_st = at;
    return 1;
}

/* ---- hashing: FNV-1a ---- */
static uint64_t rm_fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t rm_fnv_u32(uint64_t h, uint32_t v)
{
    return rm_fnv(h, &v, sizeof v);
}

static uint32_t rm_plan_hash(const rm_plan *pl)
{
    const cushim_api_info *a = pl->info;
    uint64_t h = 14695981039346656037ull;
    h = rm_fnv(h, a->name, strlen(a->name) + 1);
    h = rm_fnv_u32(h, a->params_size);
    h = rm_fnv_u32(h, a->ret_size);
    h = rm_fnv_u32(h, pl->ret_status);
    h = rm_fnv_u32(h, pl->ret_string);
    h = rm_fnv_u32(h, pl->cls);
    h = rm_fnv_u32(h, pl->nparams);
    h = rm_fnv_u32(h, (uint32_t)(pl->link_param + 1) | (uint32_t)pl->link_drop << 8);
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *p = &pl->p[i];
        uint32_t w[] = { p->op, p->dir, p->counted, p->count_indirect, p->count_size, p->count_signed, p->null_fields,
                         (uint32_t)(int32_t)p->count_param, (uint32_t)(int32_t)p->func_param, p->offset, p->size,
                         p->elem, p->fixed, p->st ? p->st->size : 0, p->st ? p->st->nfields : 0, p->zero_off,
                         p->zero_size, p->attrs != NULL ? rm_attr_hash(p->attrs, p->attr_enum) : 0, p->count_less,
                         p->count_max, p->jit_retained, p->jit != NULL ? rm_jit_hash(p->jit, p->attr_enum) : 0,
                         p->align, p->num };
        h = rm_fnv(h, w, sizeof w);
    }
    uint32_t nums[] = { pl->num_create, pl->num_destroy, pl->num_attr_kind, pl->num_attr_out,
                        (uint32_t)(int32_t)pl->num_attr_param, (uint32_t)pl->num_attr_value,
                        (uint32_t)(int32_t)pl->num_out_param };
    h = rm_fnv(h, nums, sizeof nums);
    return (uint32_t)(h ^ (h >> 32));
}

/* A pointer-mode scalar (rm_special.c, rm_scalars): a host value or a device address, as the call's pointer
   mode says (the client decides per call, rm_ctx.scalar). 1 when parameter i is one. */
static int rm_plan_scalar(rm_plan *pl, const cushim_param_info *p, uint32_t i, const rm_special *sp)
{
    /* a number: a scalar, a void * sized by the call, or a small struct of numbers (cuComplex) */
    int number = p->pointee == CUSHIM_KIND_SCALAR || p->pointee == CUSHIM_KIND_UNKNOWN ||
                 (p->pointee == CUSHIM_KIND_STRUCT && p->elem_size != 0 && p->elem_size <= RM_SCALAR_MAX);
    if ((sp != NULL && sp->cls != RM_CLASS_HAND) || p->kind != CUSHIM_KIND_POINTER || !number ||
        !rm_scalar_find(pl->info->name, p->name))
        return 0;
    rm_pplan *pp = &pl->p[i];
    memset(pp, 0, sizeof *pp);
    pp->op = RM_OP_SCALAR;
    pp->dir = p->dir == CUSHIM_DIR_OUT || p->dir == CUSHIM_DIR_INOUT ? p->dir : CUSHIM_DIR_IN;
    pp->offset = p->offset;
    pp->size = p->size;
    pp->elem = p->elem_size;   /* 0 (void *): sized by the call's compute or scale type */
    pp->count_param = -1;
    pp->func_param = -1;
    return 1;
}

/* A value sized by its attribute (RM_OP_ATTR, RM_OP_ATTRS): the attribute parameter named by the row's 'func' is an
   enum by value (ATTR) or an array of them counted as the values are (ATTRS, decoded after them). Anything else,
   or an enum without a table: the value stays NULL-only. */
static void rm_plan_attr_link(rm_plan *pl, const rm_meta *m, const cushim_api_info *a, const rm_special *sp)
{
    int ai = -1, vi = -1;
    for (uint32_t i = 0; i < a->nparams; i++) {
        if (strcmp(m->api_param(a, i)->name, sp->func) == 0)
            ai = (int)i;
        if (strcmp(m->api_param(a, i)->name, sp->param) == 0 && pl->p[i].op == sp->op)
            vi = (int)i;
    }
    if (vi < 0)
        return;
    rm_pplan *vp = &pl->p[vi], *ap = ai >= 0 ? &pl->p[ai] : NULL;
    const cushim_param_info *p = ai >= 0 ? m->api_param(a, (uint32_t)ai) : NULL;
    const rm_attr_table *t = p != NULL && p->enum_type != NULL ? rm_attr_table_find(p->enum_type->name) : NULL;
    int byval = sp->op == RM_OP_ATTR && ap != NULL && ap->op == RM_OP_VALUE && p->enum_type->size == 4;
    int array = sp->op == RM_OP_ATTRS && ap != NULL && ap->op == RM_OP_ARRAY && ap->counted && ap->elem == 4 &&
                ap->dir == CUSHIM_DIR_IN;
    if (t == NULL || (!byval && !array)) {
        vp->op = RM_OP_NULL_ONLY;
        return;
    }
    vp->func_param = (int16_t)ai;
    vp->attrs = t;
    vp->attr_enum = p->enum_type;
    if (array) {
        vp->counted = 1;
        vp->count_param = ap->count_param;
        vp->count_indirect = ap->count_indirect;
        vp->count_size = ap->count_size;
        vp->count_signed = ap->count_signed;
    }
}

/* An array counted by a rank (rm_ranks in rm_special.c): 'count' an unsigned value parameter of 4 or 8 bytes. */
static void rm_plan_rank(rm_plan *pl, const rm_meta *m, const cushim_api_info *a, uint32_t i)
{
    const rm_rank *rk = rm_rank_find(a->name, m->api_param(a, i)->name);
    rm_pplan *pp = &pl->p[i];
    if (rk == NULL || pp->op != RM_OP_ARRAY || pp->counted || pp->fixed > 1 || pp->dir != CUSHIM_DIR_IN)
        return;
    for (uint32_t k = 0; k < a->nparams; k++) {
        const cushim_param_info *c = m->api_param(a, k);
        if (strcmp(c->name, rk->count) != 0 || pl->p[k].op != RM_OP_VALUE || c->kind != CUSHIM_KIND_SCALAR ||
            (c->size != 4 && c->size != 8) || rm_is_signed(c->canonical_type))
            continue;
        pp->counted = 1;
        pp->fixed = 0;
        pp->count_param = (int16_t)k;
        pp->count_size = (uint8_t)c->size;
        pp->count_less = rk->less;
        pp->count_max = rk->max;
        return;
    }
    pp->op = RM_OP_NULL_ONLY;   /* the row names no usable count: carried only while NULL */
}

/* Option values (RM_OP_JITOPTS, rm_jit.c): the option array must be an enum array counted by a value, decoded
   before the values (an earlier parameter), its enum one rm_jit.c has a table for. 1 when planned. */
static int rm_plan_jitopts(rm_plan *pl, const rm_meta *m, const cushim_api_info *a, uint32_t i)
{
    const cushim_param_info *p = m->api_param(a, i);
    const rm_jitopts *jo = rm_jitopts_find(a->name, p->name);
    if (jo == NULL || p->kind != CUSHIM_KIND_POINTER || p->size != 8)
        return 0;
    for (uint32_t k = 0; k < i; k++) {
        const cushim_param_info *o = m->api_param(a, k);
        const rm_pplan *op = &pl->p[k];
        const rm_jit_table *t = o->enum_type != NULL ? rm_jit_table_find(o->enum_type->name) : NULL;
        if (strcmp(o->name, jo->options) != 0 || t == NULL || op->op != RM_OP_ARRAY || !op->counted ||
            op->count_indirect || op->elem != 4 || op->dir != CUSHIM_DIR_IN || o->enum_type->size != 4)
            continue;
        rm_pplan *pp = &pl->p[i];
        memset(pp, 0, sizeof *pp);
        pp->op = RM_OP_JITOPTS;
        pp->dir = CUSHIM_DIR_INOUT;
        pp->offset = p->offset;
        pp->size = p->size;
        pp->elem = 8;
        pp->counted = 1;
        pp->count_param = op->count_param;
        pp->count_size = op->count_size;
        pp->count_signed = op->count_signed;
        pp->func_param = (int16_t)k;
        pp->attr_enum = o->enum_type;
        pp->jit = t;
        pp->jit_retained = jo->retained;
        return 1;
    }
    return 0;
}

/* ---- one API ---- */
static void rm_plan_api(rm_plan *pl, const rm_meta *m, const cushim_api_info *a)
{
    memset(pl, 0, sizeof *pl);
    pl->info = a;
    pl->id = a->id;
    pl->ret_status = (uint8_t)cushim_ret_is_status(a->ret_kind);
    pl->nparams = (uint8_t)(a->nparams <= RM_MAX_PARAMS ? a->nparams : 0);
    pl->link_param = -1;
    const rm_special *sp = rm_special_find(a->name, a->categories);
    if (a->nparams > RM_MAX_PARAMS) {
        pl->cls = RM_CLASS_UNSUPPORTED;
        snprintf(pl->why, sizeof pl->why, "more than %d parameters", RM_MAX_PARAMS);
        pl->reason = pl->why;
        return;
    }
    /* the reason kept: the first parameter that stops the API, else the first that must be NULL */
    char why[120], first_null[120] = "";
    const char *zreason = NULL;   /* a field that must be 0 (rm_zero_field): the reason a refusal logs */
    int scalars = 0, jit = 0;
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = m->api_param(a, i);
        int vouched = sp != NULL && sp->cls == RM_CLASS_HAND && sp->op == RM_OP_ARRAY && sp->param != NULL &&
                      strcmp(p->name, sp->param) == 0 && p->count_param >= 0;
        if (rm_plan_scalar(pl, p, i, sp)) {
            scalars = 1;
            continue;
        }
        if (sp != NULL && sp->cls == RM_CLASS_HAND && p->kind == CUSHIM_KIND_DEVPTR && p->size == 8 &&
            rm_addr_find(a->name, p->name)) {   /* an address looked up: shared pinned memory translated */
            memset(&pl->p[i], 0, sizeof pl->p[i]);
            pl->p[i].op = RM_OP_ADDR;
            pl->p[i].dir = CUSHIM_DIR_IN;
            pl->p[i].offset = p->offset;
            pl->p[i].size = p->size;
            pl->p[i].count_param = -1;
            pl->p[i].func_param = -1;
            continue;
        }
        rm_plan_param(pl, m, i, p, vouched, why, sizeof why);
        rm_plan_rank(pl, m, a, i);
        if (pl->p[i].op == RM_OP_VALUE && p->size == 8 && rm_link_find(a->name, p->name, &pl->link_drop))
            pl->link_param = (int8_t)i;   /* its reply carries the link's kept option outputs */
        if (rm_plan_jitopts(pl, m, a, i)) {
            jit = 1;
            continue;
        }
        const rm_zero_field *zf = rm_zero_field_find(a->name, p->name);
        if (zf != NULL && pl->p[i].op == RM_OP_ARRAY && pl->p[i].dir == CUSHIM_DIR_IN && p->struct_type != NULL) {
            if (rm_struct_field_at(p->struct_type, zf->field, &pl->p[i].zero_off, &pl->p[i].zero_size) &&
                pl->p[i].zero_size != 0 && pl->p[i].zero_off + pl->p[i].zero_size <= pl->p[i].elem)
                zreason = zf->reason;
            else
                pl->p[i].zero_off = pl->p[i].zero_size = 0;
        }
        if (why[0] != '\0' && pl->p[i].op == RM_OP_OPAQUE && pl->why[0] == '\0')
            snprintf(pl->why, sizeof pl->why, "%s", why);
        else if (why[0] != '\0' && first_null[0] == '\0')
            snprintf(first_null, sizeof first_null, "%s", why);
    }
    if (pl->why[0] == '\0')
        snprintf(pl->why, sizeof pl->why, "%s", first_null);

    int opaque = 0, nullonly = 0, hand = 0;
    if (sp != NULL && sp->cls == RM_CLASS_HAND && sp->param != NULL) {
        for (uint32_t i = 0; i < a->nparams; i++) {
            const cushim_param_info *p = m->api_param(a, i);
            if (strcmp(p->name, sp->param) == 0 && sp->op == RM_OP_ARRAY && p->count_param >= 0) {
                /* a counted array of structs the row vouches for (cuBLASLt's heuristic results): planned by
                   rm_plan_param as the metadata counts it, in its direction */
                hand = 1;
            } else if (strcmp(p->name, sp->param) == 0) {
                pl->p[i].op = sp->op;
                pl->p[i].counted = 0;
                pl->p[i].count_param = -1;
                hand = 1;
                /* runtime and NVML (rm_special.c): one element of the pointee, which the row vouches holds no
                   host pointer (a device address, cudaDeviceProp, nvmlMemory_v2_t); in and out, as a versioned
                   struct's 'version' field is read by the callee */
                /* a kernel node's parameters: one struct, read by the callee only */
                if (sp->op == RM_OP_KNODE) {
                    int ok = p->kind == CUSHIM_KIND_POINTER && p->pointee == CUSHIM_KIND_STRUCT &&
                             p->struct_type != NULL && p->elem_size != 0 && p->dir == CUSHIM_DIR_IN;
                    pl->p[i].op = ok ? RM_OP_KNODE : RM_OP_NULL_ONLY;
                    pl->p[i].dir = CUSHIM_DIR_IN;
                    pl->p[i].elem = p->elem_size;
                    pl->p[i].fixed = 1;
                    pl->p[i].null_fields = 0;
                    pl->p[i].st = p->struct_type;
                }
                /* an array the callee owns, returned by pointer: its elements are handles (8 bytes) */
                if (sp->op == RM_OP_OWNED_OUT) {
                    int ok = p->kind == CUSHIM_KIND_POINTER && p->pointee == CUSHIM_KIND_POINTER && p->size == 8;
                    pl->p[i].op = ok ? RM_OP_OWNED_OUT : RM_OP_NULL_ONLY;
                    pl->p[i].dir = CUSHIM_DIR_OUT;
                    /* handles (8 bytes each), or the bytes of an image ('void **': cuLinkComplete's cubin) */
                    pl->p[i].elem = p->type != NULL && strcmp(p->type, "void **") == 0 ? 1 : 8;
                    pl->p[i].fixed = 0;
                    pl->p[i].null_fields = 0;
                    pl->p[i].st = NULL;
                }
                /* a value sized by its attribute (func: the attribute parameter, planned below) */
                if (sp->op == RM_OP_ATTR || sp->op == RM_OP_ATTRS) {
                    int ok = p->kind == CUSHIM_KIND_POINTER && p->size == 8;
                    pl->p[i].op = ok ? sp->op : RM_OP_NULL_ONLY;
                    pl->p[i].dir = sp->op == RM_OP_ATTRS || p->dir == CUSHIM_DIR_OUT ? CUSHIM_DIR_OUT : CUSHIM_DIR_IN;
                    /* ATTRS: pointers; ATTR: the pointee's size, for a value union (RM_ATTR_POINTEE), if it fits */
                    pl->p[i].elem = sp->op == RM_OP_ATTRS ? 8 : p->elem_size <= RM_ATTR_STAGE ? p->elem_size : 0;
                    pl->p[i].fixed = 0;
                    pl->p[i].null_fields = 0;
                    pl->p[i].st = NULL;
                }
                if (sp->op == RM_OP_ARRAY) {
                    /* a driver struct passed in (CUmemAllocationProp): in only, its described pointers NULL */
                    int in = a->library == CUSHIM_LIB_DRIVER && p->dir == CUSHIM_DIR_IN && p->struct_type != NULL;
                    pl->p[i].op = p->elem_size != 0 ? RM_OP_ARRAY : RM_OP_NULL_ONLY;
                    /* the driver's (a CUtensorMap, opaque bytes) and cuBLASLt's algo: their own direction (a
                       const one is never written back) */
                    pl->p[i].dir = a->library == CUSHIM_LIB_CUBLASLT || a->library == CUSHIM_LIB_DRIVER ? p->dir :
                                   CUSHIM_DIR_INOUT;
                    pl->p[i].elem = p->elem_size;
                    pl->p[i].fixed = 1;
                    pl->p[i].null_fields = (uint8_t)in;
                    pl->p[i].st = in ? p->struct_type : NULL;
                    pl->p[i].align = rm_align_find(a->name, p->name);
                }
            }
            if (sp->op == RM_OP_ARRAY && sp->func != NULL && strcmp(p->name, sp->func) == 0 &&
                p->kind == CUSHIM_KIND_POINTER && p->size == 8) {
                pl->p[i].op = RM_OP_VALUE;   /* an address looked up, never read: its value */
                continue;
            }
            if ((sp->op == RM_OP_ATTR || sp->op == RM_OP_ATTRS) && sp->func != NULL && strcmp(p->name, sp->func) == 0)
                continue;   /* linked below, once every parameter is planned */
            if (sp->func != NULL && strcmp(p->name, sp->func) == 0)
                for (uint32_t k = 0; k < a->nparams; k++)
                    if (m->api_param(a, k)->kind == CUSHIM_KIND_POINTER && strcmp(m->api_param(a, k)->name, sp->param) == 0)
                        pl->p[k].func_param = (int16_t)i;
        }
    }
    if (sp != NULL && sp->cls == RM_CLASS_HAND && (sp->op == RM_OP_ATTR || sp->op == RM_OP_ATTRS) && sp->func != NULL)
        rm_plan_attr_link(pl, m, a, sp);
    /* a driver launch configuration passed in (CUlaunchConfig): its attributes carried with it */
    for (uint32_t i = 0; a->library == CUSHIM_LIB_DRIVER && i < a->nparams; i++) {
        rm_pplan *pp = &pl->p[i];
        uint32_t ao, no;
        const cushim_struct_info *at;
        if (pp->op == RM_OP_ARRAY && pp->null_fields && pp->dir == CUSHIM_DIR_IN && !pp->counted && pp->fixed <= 1 &&
            pp->st != NULL && pp->elem == pp->st->size && rm_lconfig_fields(pp->st, &ao, &no, &at)) {
            pp->op = RM_OP_LCONFIG;
            pp->null_fields = 0;
        }
    }
    for (uint32_t i = 0; i < a->nparams; i++) {
        opaque |= pl->p[i].op == RM_OP_OPAQUE;
        nullonly |= pl->p[i].op == RM_OP_NULL_ONLY || pl->p[i].null_fields || pl->p[i].zero_size != 0;
        if ((pl->p[i].op == RM_OP_KPARAMS || pl->p[i].op == RM_OP_ATTR || pl->p[i].op == RM_OP_ATTRS ||
             pl->p[i].op == RM_OP_JITOPTS) && pl->p[i].func_param < 0)
            opaque = 1;
        if (pl->p[i].op == RM_OP_OWNED_OUT &&   /* its count: a size_t output carried as one element */
            (pl->p[i].func_param < 0 || pl->p[pl->p[i].func_param].op != RM_OP_ARRAY ||
             pl->p[pl->p[i].func_param].elem != 8 || pl->p[pl->p[i].func_param].dir != CUSHIM_DIR_OUT))
            opaque = 1;
    }
    /* wire order of the pointers: uncounted ones first (an indirect count is one of them), then counted */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < a->nparams; i++)
            if (pl->p[i].op != RM_OP_VALUE && pl->p[i].op != RM_OP_OPAQUE && pl->p[i].counted == pass)
                pl->order[pl->nptr++] = (uint8_t)i;

    int pointer_ret = a->return_type != NULL && strchr(a->return_type, '*') != NULL;
    pl->ret_string = pointer_ret && a->ret_size == sizeof(void *) && strcmp(a->return_type, "const char *") == 0 &&
                     rm_ret_string_find(a->name);
    if (sp != NULL && sp->cls != RM_CLASS_HAND) {
        pl->cls = sp->cls;
        pl->reason = sp->reason;
    } else if (pl->ret_string && !opaque && !hand) {
        pl->cls = RM_CLASS_HAND;
        pl->reason = "returns a text: its bytes carried (at most RM_MAX_RET_STRING), kept by the client";
    } else if (pointer_ret) {
        pl->cls = RM_CLASS_NEEDS_HAND;
        snprintf(pl->why, sizeof pl->why, "returns a pointer (%s)", a->return_type);
        pl->reason = pl->why;
    } else if (opaque) {
        pl->cls = RM_CLASS_NEEDS_HAND;
        pl->reason = pl->why;
    } else if (hand) {
        pl->cls = RM_CLASS_HAND;
        pl->reason = sp->reason;
    } else if (jit && !nullonly) {
        pl->cls = RM_CLASS_HAND;
        pl->reason = "JIT options: each value carried by its option (rm_jit.c)";
    } else if (scalars && !nullonly) {
        pl->cls = RM_CLASS_HAND;
        pl->reason = a->library == CUSHIM_LIB_NCCL ? "scalar: a host value sized by its datatype, or a device address, by its residence" :
                     "alpha/beta/result: a host value or a device address by the pointer mode";
    } else if (nullonly) {
        pl->cls = RM_CLASS_FORWARD_NULL;
        pl->reason = zreason != NULL ? zreason : pl->why;
    } else {
        pl->cls = RM_CLASS_FORWARD;
        pl->reason = NULL;
    }
}

/* ---- timing and answers (docs/remote.md, "Fast paths") ---- */
static int rm_forwarded(const rm_plan *pl)
{
    return pl->cls == RM_CLASS_FORWARD || pl->cls == RM_CLASS_FORWARD_NULL || pl->cls == RM_CLASS_HAND;
}

/* Asynchronous by the metadata: stream-ordered work of the driver (a copy, set, launch or event record, not a
   wait, query, allocation or free), with a CUstream parameter, every parameter carried by value (so no output
   and no host pointer) and a status as its result. */
static int rm_async_by_meta(const rm_plan *pl, const rm_meta *m)
{
    const cushim_api_info *a = pl->info;
    int stream = 0;
    if (pl->cls != RM_CLASS_FORWARD || !pl->ret_status || a->library != CUSHIM_LIB_DRIVER ||
        !(a->categories & (CUSHIM_CAT_COPY | CUSHIM_CAT_SET | CUSHIM_CAT_LAUNCH | CUSHIM_CAT_EVENT)) ||
        (a->categories & (CUSHIM_CAT_SYNC | CUSHIM_CAT_QUERY | CUSHIM_CAT_ALLOC | CUSHIM_CAT_FREE)))
        return 0;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const cushim_param_info *p = m->api_param(a, i);
        if (pl->p[i].op != RM_OP_VALUE)
            return 0;
        stream |= p->kind == CUSHIM_KIND_HANDLE && p->type != NULL && strcmp(p->type, "CUstream") == 0;
    }
    return stream;
}

/* Asynchronous because rm_special.c says so: still never with an output, and its pointers must be inputs the
   codec copies at call time (kernel arguments, structs whose pointer fields are NULL) or NULL. */
static int rm_async_allowed(const rm_plan *pl)
{
    if ((pl->cls != RM_CLASS_FORWARD && pl->cls != RM_CLASS_HAND) || !pl->ret_status)
        return 0;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i];
        if (pp->op != RM_OP_VALUE && pp->op != RM_OP_NULL_ONLY && pp->dir != CUSHIM_DIR_IN)
            return 0;
        if (pp->op == RM_OP_STRING_OUT || pp->op == RM_OP_OPAQUE)
            return 0;
    }
    return 1;
}

/* A copy of ByteCount bytes between a device address and a host buffer, nothing else: the client may split
   it into several calls, each advancing both addresses. */
static void rm_plan_chunk(rm_plan *pl, const rm_meta *m)
{
    const cushim_api_info *a = pl->info;
    int dev = -1, host = -1, other = 0;
    pl->chunk_dev = pl->chunk_host = pl->chunk_count = -1;
    if (pl->cls != RM_CLASS_FORWARD || !pl->ret_status || !(a->categories & CUSHIM_CAT_COPY))
        return;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i];
        if (pp->op == RM_OP_VALUE && m->api_param(a, i)->kind == CUSHIM_KIND_DEVPTR)
            other += dev >= 0, dev = (int)i;
        else if (pp->op == RM_OP_ARRAY && pp->elem == 1 && pp->counted && !pp->count_indirect && !pp->null_fields &&
                 (pp->dir == CUSHIM_DIR_IN || pp->dir == CUSHIM_DIR_OUT))
            other += host >= 0, host = (int)i;
        else if (pp->op != RM_OP_VALUE)
            other++;
    }
    if (other || dev < 0 || host < 0 || pl->p[pl->p[host].count_param].op != RM_OP_VALUE)
        return;
    pl->chunk_dev = (int8_t)dev;
    pl->chunk_host = (int8_t)host;
    pl->chunk_count = (int8_t)pl->p[host].count_param;
}

static void rm_plan_timing(rm_plan *pl, const rm_meta *m)
{
    const cushim_api_info *a = pl->info;
    const rm_trait *t = rm_trait_find(a->name);
    pl->cache_skip_param = -1;
    pl->devcopy_param = -1;
    rm_plan_chunk(pl, m);
    if (rm_async_by_meta(pl, m)) {
        pl->async = RM_ASYNC_META;
        pl->async_reason = "stream-ordered work, every parameter by value";
    } else if (t != NULL && (t->flags & RM_TRAIT_ASYNC) && rm_async_allowed(pl)) {
        pl->async = RM_ASYNC_SPECIAL;
        pl->async_reason = t->reason;
    }
    if (pl->async == RM_ASYNC_NO && t != NULL && (t->flags & RM_TRAIT_GROUP) && rm_async_allowed(pl)) {
        pl->async = RM_ASYNC_GROUP;
        pl->async_reason = t->reason;
    }
    if (t == NULL || !rm_forwarded(pl))
        return;
    if (t->flags & (RM_TRAIT_CAPTURE_BEGIN | RM_TRAIT_CAPTURE_END))
        pl->capture = t->flags & RM_TRAIT_CAPTURE_BEGIN ? RM_CAPTURE_BEGIN : RM_CAPTURE_END;
    for (uint32_t i = 0; (t->flags & RM_TRAIT_DEVCOPY) && i < pl->nparams; i++) {
        const cushim_param_info *p = m->api_param(a, i);
        if (strcmp(p->name, t->skip_param) == 0 && p->struct_type != NULL && pl->p[i].op == RM_OP_ARRAY)
            pl->devcopy_param = (int8_t)i;
    }
    if (t->flags & RM_TRAIT_FORGET)
        pl->cache = RM_CACHE_FORGET;
    else if ((t->flags & (RM_TRAIT_CACHE | RM_TRAIT_CACHE_FUNC)) && pl->ret_status && !pl->async)
        pl->cache = t->flags & RM_TRAIT_CACHE ? RM_CACHE_PROCESS : RM_CACHE_FUNC;
    for (uint32_t i = 0; pl->cache && t->skip_param != NULL && i < pl->nparams; i++) {
        const cushim_param_info *p = m->api_param(a, i);
        if (strcmp(p->name, t->skip_param) != 0 || p->enum_type == NULL || pl->p[i].op != RM_OP_VALUE)
            continue;
        for (uint32_t k = 0; k < p->enum_type->nvalues; k++)
            if (strcmp(p->enum_type->values[k].name, t->skip_value) == 0) {
                pl->cache_skip_param = (int8_t)i;
                pl->cache_skip_value = p->enum_type->values[k].value;
            }
        if (pl->cache_skip_param < 0)
            pl->cache = RM_CACHE_NO;   /* the exception cannot be told: keep nothing */
    }
}

/* Objects by number (rm_numbered): the parameters of those types by value, the API's Create or Destroy, an attribute
   whose value is one. Only for forwarded APIs' by-value parameters of 8 bytes (a handle type). */
static void rm_plan_numbers(rm_plan *pl, const rm_meta *m, const cushim_api_info *a)
{
    size_t i_api = 0;
    pl->num_attr_param = pl->num_buf_param = pl->num_size_param = pl->num_out_param = -1;
    for (const rm_num_api *na; (na = rm_num_api_at(i_api++)) != NULL;) {
        if (fnmatch(na->glob, a->name, 0) != 0)
            continue;
        int k = rm_numbered_type(na->type);
        if (na->role == RM_NUM_END)
            pl->num_destroy = (uint8_t)k;
        for (uint32_t i = 0; na->param != NULL && i < pl->nparams; i++) {
            if (strcmp(m->api_param(a, i)->name, na->param) != 0)
                continue;
            if (na->role != RM_NUM_MAKE && pl->p[i].op == RM_OP_VALUE && pl->p[i].size == 8)
                pl->p[i].num = (uint8_t)k;   /* named by value where its C type says nothing ('void *') */
            /* one object out, through a pointer (an in/out one's value in is the library's to overwrite) */
            if (na->role == RM_NUM_MAKE && pl->p[i].op == RM_OP_ARRAY && pl->p[i].elem == 8 &&
                (pl->p[i].dir & CUSHIM_DIR_OUT) && !pl->p[i].counted && pl->p[i].fixed <= 1) {
                pl->num_create = (uint8_t)k;
                pl->num_out_param = (int8_t)i;
            }
        }
    }
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const cushim_param_info *p = m->api_param(a, i);
        int k = rm_numbered_type(p->type);
        if (k != 0 && pl->p[i].op == RM_OP_VALUE && pl->p[i].size == 8 && pl->p[i].num == 0)
            pl->p[i].num = (uint8_t)k;
    }
    const rm_num_attr *na = rm_num_attr_find(a->name);
    if (na == NULL)
        return;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const cushim_param_info *p = m->api_param(a, i);
        if (strcmp(p->name, "attr") == 0 && pl->p[i].op == RM_OP_VALUE && p->enum_type != NULL)
            for (uint32_t v = 0; v < p->enum_type->nvalues; v++)
                if (strcmp(p->enum_type->values[v].name, na->attr) == 0) {
                    pl->num_attr_param = (int8_t)i;
                    pl->num_attr_value = p->enum_type->values[v].value;
                }
        if (strcmp(p->name, "buf") == 0 && pl->p[i].op == RM_OP_ARRAY)
            pl->num_buf_param = (int8_t)i;
        if (strcmp(p->name, "sizeInBytes") == 0 && pl->p[i].op == RM_OP_VALUE && pl->p[i].size == 8)
            pl->num_size_param = (int8_t)i;
    }
    if (pl->num_attr_param >= 0 && pl->num_buf_param >= 0 && pl->num_size_param >= 0) {
        pl->num_attr_kind = (uint8_t)rm_numbered_type(na->type);
        pl->num_attr_out = pl->p[pl->num_buf_param].dir == CUSHIM_DIR_OUT;
    }
}

rm_plans *rm_plans_build(const rm_meta *m)
{
    rm_struct_field = m->struct_field;
    rm_plans *ps = calloc(1, sizeof *ps);
    if (ps == NULL)
        return NULL;
    ps->id_limit = m->api_id_limit();
    ps->count = m->api_count();
    ps->cuda_version = m->cuda_version;
    ps->by_id = calloc(ps->id_limit ? ps->id_limit : 1, sizeof *ps->by_id);
    ps->all = calloc(ps->count ? ps->count : 1, sizeof *ps->all);
    if (ps->by_id == NULL || ps->all == NULL) {
        rm_plans_free(ps);
        return NULL;
    }
    for (uint32_t i = 0; i < ps->count; i++) {
        const cushim_api_info *a = m->api_at(i);
        rm_plan *pl = &ps->all[i];
        rm_plan_api(pl, m, a);
        rm_plan_numbers(pl, m, a);
        pl->hash = rm_plan_hash(pl);   /* the wire layout only: timing and answers are the client's */
        rm_plan_timing(pl, m);
        if (a->id < ps->id_limit)
            ps->by_id[a->id] = pl;
    }
    uint64_t h = 14695981039346656037ull;
    for (uint32_t id = 0; id < ps->id_limit; id++)
        if (ps->by_id[id] != NULL) {
            h = rm_fnv_u32(h, id);
            h = rm_fnv_u32(h, ps->by_id[id]->hash);
        }
    ps->tree_hash = h;
    return ps;
}

void rm_plans_free(rm_plans *ps)
{
    if (ps == NULL)
        return;
    free(ps->by_id);
    free(ps->all);
    free(ps);
}
