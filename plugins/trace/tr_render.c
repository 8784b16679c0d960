/*
 * tr_render.c - JSON text of recorded calls from the generated metadata
 * (tr_render.h). Parameters render by kind: integers and floats as numbers,
 * enums by name, handles, device pointers, callbacks and uncaptured pointers
 * as "0x..." text, strings bounded, structs (by value or behind a pointer)
 * field by field when the metadata describes them, output parameters as the
 * value the call wrote, counted arrays as JSON arrays.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_json.h"   /* tr_c_number */
#include "tr_render.h"

/* ---- metadata access ---- */

int tr_meta_typed(const tr_meta *m)
{
    return m->sizeof_param_info >= offsetof(cushim_param_info, struct_type) + sizeof(void *);
}

uint32_t tr_enter_fixed(const cushim_api_info *info)
{
    return (uint32_t)sizeof(tr_rec) + tr_pad8(info->params_size);
}

const tr_blob *tr_rec_blob(const void *r, uint32_t fixed, uint32_t param)
{
    const unsigned char *base = r;
    uint32_t off = fixed, len;
    memcpy(&len, base, sizeof len);   /* every record starts with its length */
    while (off + sizeof(tr_blob) <= len) {
        const tr_blob *b = (const tr_blob *)(base + off);
        if (b->param == param)
            return b;
        off += (uint32_t)sizeof(tr_blob) + tr_pad8(b->len);
    }
    return NULL;
}

/* ---- values ---- */

static uint64_t rd_u(const unsigned char *p, uint32_t size)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64 = 0;
    switch (size) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    default: memcpy(&u64, p, size < 8 ? size : 8); return u64;
    }
}

static int64_t rd_s(const unsigned char *p, uint32_t size)
{
    uint64_t u = rd_u(p, size);
    if (size < 8 && (u >> (size * 8 - 1)) & 1)
        u |= ~(uint64_t)0 << (size * 8);
    return (int64_t)u;
}

static const char *skip_const(const char *t)
{
    while (t != NULL && strncmp(t, "const ", 6) == 0)
        t += 6;
    return t;
}

/* A C type's name as a renderer row lists it: the whole name, a prefix ("uint" for uint32_t...), or a part of it
   ("unsigned"). */
#define TR_T_EXACT 0
#define TR_T_PREFIX 1
#define TR_T_CONTAINS 2
typedef struct tr_type_pat {
    int mode;           /* TR_T_*; the list ends with text NULL */
    const char *text;
    size_t len;
} tr_type_pat;
#define TR_T(mode, text) {mode, text, sizeof text - 1}

static const tr_type_pat tr_t_float[] = {TR_T(TR_T_EXACT, "float"), TR_T(TR_T_EXACT, "double"), {0, NULL, 0}};
static const tr_type_pat tr_t_unsigned[] = {
    TR_T(TR_T_CONTAINS, "unsigned"), TR_T(TR_T_EXACT, "size_t"), TR_T(TR_T_PREFIX, "uint"),
    TR_T(TR_T_PREFIX, "cuuint"),     TR_T(TR_T_EXACT, "_Bool"),  TR_T(TR_T_EXACT, "bool"),
    {0, NULL, 0},
};
/* The types whose values, one byte each, are text: a char array in a struct ("char[16]"), a char pointer's bytes. */
static const tr_type_pat tr_t_text[] = {TR_T(TR_T_EXACT, "char"), TR_T(TR_T_EXACT, "signed char"),
                                        TR_T(TR_T_EXACT, "unsigned char"), {0, NULL, 0}};

/* Is C type 't' (its leading "const "s aside) one of 'pats'? */
static int type_in(const char *t, const tr_type_pat *pats)
{
    t = skip_const(t);
    if (t == NULL)
        return 0;
    for (const tr_type_pat *p = pats; p->text != NULL; p++)
        if (p->mode == TR_T_EXACT ? strcmp(t, p->text) == 0
            : p->mode == TR_T_PREFIX ? strncmp(t, p->text, p->len) == 0
                                     : strstr(t, p->text) != NULL)
            return 1;
    return 0;
}

/* Is 't', or the element type of an array type ("char[16]"), one of tr_t_text? */
static int type_is_text(const char *t)
{
    size_t n;
    t = skip_const(t);
    if (t == NULL)
        return 0;
    n = strcspn(t, "[");
    while (n > 0 && t[n - 1] == ' ')
        n--;
    for (const tr_type_pat *p = tr_t_text; p->text != NULL; p++)
        if (n == p->len && strncmp(t, p->text, n) == 0)
            return 1;
    return 0;
}

static void r_hex(tr_sb *sb, uint64_t v)
{
    tr_sb_hexq(sb, v);
}

static void r_bytes(tr_sb *sb, const unsigned char *p, uint32_t n)
{
    tr_sb_puts(sb, "\"");
    for (uint32_t i = 0; i < n && i < 64; i++)
        tr_sb_printf(sb, "%02x", p[i]);
    if (n > 64)
        tr_sb_puts(sb, "...");
    tr_sb_puts(sb, "\"");
}

/* One value to render: 'size' bytes at 'p', of a C type, with its enum or struct metadata (NULL: none). */
typedef struct tr_value {
    const tr_meta *m;
    const unsigned char *p;
    uint32_t size;
    const char *ctype;
    const cushim_enum_info *e;
    const cushim_struct_info *s;
    int depth;   /* structs within structs: rendered field by field down to 4 */
} tr_value;

static void v_float(tr_sb *sb, const tr_value *v)
{
    double d;
    char num[64];
    if (v->size == 4) {
        float f;
        memcpy(&f, v->p, 4);
        d = f;
    } else {
        memcpy(&d, v->p, 8);
    }
    snprintf(num, sizeof num, "%.9g", d);
    tr_c_number(num);   /* the program's LC_NUMERIC may say ',' */
    if (d != d || d - d != 0)   /* NaN, infinities: no JSON number */
        tr_sb_printf(sb, "\"%s\"", num);
    else
        tr_sb_puts(sb, num);
}

static void v_unsigned(tr_sb *sb, const tr_value *v)
{
    tr_sb_u64(sb, rd_u(v->p, v->size));
}

static void v_signed(tr_sb *sb, const tr_value *v)
{
    tr_sb_i64(sb, rd_s(v->p, v->size));
}

static void v_bytes(tr_sb *sb, const tr_value *v)
{
    r_bytes(sb, v->p, v->size);
}

static void v_hex(tr_sb *sb, const tr_value *v)
{
    r_hex(sb, rd_u(v->p, v->size));
}

static void v_enum(tr_sb *sb, const tr_value *v)
{
    int64_t x = rd_s(v->p, v->size);
    const char *name = (v->e != NULL && v->m->enum_value_name != NULL) ? v->m->enum_value_name(v->e, x) : NULL;
    if (name != NULL)
        tr_sb_json_str(sb, name, strlen(name), TR_STR_MAX);
    else
        tr_sb_i64(sb, x);
}

/* A callback as "0x... SYMBOL" when it is a symbol's address. The symbol's name is the ELF file's: any bytes but
   NUL may stand in it (a '"' ended the JSON string early), so it is escaped as every other string is. */
static void v_callback(tr_sb *sb, const tr_value *v)
{
    uint64_t x = rd_u(v->p, v->size);
    Dl_info di;
    if (x != 0 && dladdr((void *)(uintptr_t)x, &di) != 0 && di.dli_sname != NULL &&
        (uint64_t)(uintptr_t)di.dli_saddr == x) {
        char *text = NULL;
        int n = asprintf(&text, "0x%llx %s", (unsigned long long)x, di.dli_sname);
        if (n > 0) {
            tr_sb_json_str(sb, text, (size_t)n, TR_NAME_MAX);   /* as long as a kernel's name (C++'s run long) */
            free(text);
        } else {
            r_hex(sb, x);
        }
    } else {
        r_hex(sb, x);
    }
}

static void r_struct(tr_sb *sb, const tr_meta *m, const unsigned char *p, uint32_t avail,
                     const cushim_struct_info *s, int depth);

static void v_struct(tr_sb *sb, const tr_value *v)
{
    if (v->s != NULL && v->depth < 4)
        r_struct(sb, v->m, v->p, v->size, v->s, v->depth + 1);
    else
        r_bytes(sb, v->p, v->size);
}

/* ---- the renderer table ----
   How one value renders, by its kind (the metadata's CUSHIM_KIND_*) and its C type: the first row that matches
   wins. This is the one place to extend: a type that needs its own text is a row here, above the row that takes
   it now (docs/plugins/trace.md "How parameters render"). Where a value comes from is decided elsewhere: which
   bytes behind a pointer a record keeps, tr_plan.c; which structs have their fields described,
   codegen/overlay.txt; the bytes of a char array or pointer render as a string (type_is_text: r_blob, r_struct). */
#define TR_ANY_KIND (-1)
typedef struct tr_renderer {
    int kind;                     /* CUSHIM_KIND_*, or TR_ANY_KIND                                   */
    const tr_type_pat *types;     /* NULL: any type; else the types (type_in)                        */
    uint32_t size_min, size_max;  /* the value's size in bytes, inclusive; size_max 0: no upper bound */
    void (*render)(tr_sb *sb, const tr_value *v);
} tr_renderer;

static const tr_renderer tr_renderers[] = {
    {CUSHIM_KIND_SCALAR, tr_t_float, 4, 4, v_float},   /* %.9g; NaN and infinities as strings */
    {CUSHIM_KIND_SCALAR, tr_t_float, 8, 8, v_float},
    {CUSHIM_KIND_SCALAR, NULL, 9, 0, v_bytes},             /* wider than a register: its bytes in hex */
    {CUSHIM_KIND_SCALAR, tr_t_unsigned, 0, 0, v_unsigned},
    {CUSHIM_KIND_SCALAR, NULL, 0, 0, v_signed},
    {CUSHIM_KIND_ENUM, NULL, 0, 0, v_enum},                /* the enumerator's name, else the number */
    {CUSHIM_KIND_CALLBACK, NULL, 0, 0, v_callback},        /* "0x... SYMBOL" */
    {CUSHIM_KIND_HANDLE, NULL, 0, 0, v_hex},
    {CUSHIM_KIND_DEVPTR, NULL, 0, 0, v_hex},
    {CUSHIM_KIND_POINTER, NULL, 0, 0, v_hex},              /* a pointer without its bytes */
    {CUSHIM_KIND_STRING, NULL, 0, 0, v_hex},
    {CUSHIM_KIND_STRUCT, NULL, 0, 0, v_struct},            /* field by field when described, else its bytes */
    {TR_ANY_KIND, NULL, 0, 8, v_hex},
    {TR_ANY_KIND, NULL, 0, 0, v_bytes},
};

/* The row for a value: the first of tr_renderers that matches. The choice depends only on the kind, the size and
   the type's text, so it is remembered for a type named by the metadata, whose text lives as long as the process
   (the host's generated tables; 'key': that text's address, NULL for text made on the stack; 'derived': the type is the pointee of 'key's, not 'key' itself) in tr_render_memo: one
   word an entry - the address in the low 48 bits, the kind, the size, 'derived' and the row + 1 - so that a
   renderer racing another reads a whole entry or a miss; a miss only finds the same row again. */
#define TR_MEMO 256u
static _Atomic uint64_t tr_render_memo[TR_MEMO];
_Static_assert(sizeof tr_renderers / sizeof tr_renderers[0] < 16, "tr_render_memo keeps a row + 1 in 4 bits");

static const tr_renderer *renderer_of(int kind, uint32_t size, const char *ctype, const char *key, int derived)
{
    uintptr_t a = (uintptr_t)key;
    uint64_t want = 0;
    size_t slot = 0;
    if (key != NULL && a < (1ull << 48) && kind >= 0 && kind < 16 && size < 128) {
        uint64_t e;
        want = (uint64_t)a | (uint64_t)kind << 48 | (uint64_t)size << 52 | (uint64_t)(derived != 0) << 59;
        slot = (size_t)((a >> 4) ^ (a >> 12) ^ size ^ (uint32_t)kind) & (TR_MEMO - 1);
        e = atomic_load_explicit(&tr_render_memo[slot], memory_order_relaxed);
        if ((e & ((1ull << 60) - 1)) == want && (e >> 60) != 0)
            return &tr_renderers[(e >> 60) - 1];
    }
    for (size_t i = 0; i < sizeof tr_renderers / sizeof tr_renderers[0]; i++) {
        const tr_renderer *r = &tr_renderers[i];
        if ((r->kind == TR_ANY_KIND || r->kind == kind) && size >= r->size_min &&
            (r->size_max == 0 || size <= r->size_max) && (r->types == NULL || type_in(ctype, r->types))) {
            if (want != 0)
                atomic_store_explicit(&tr_render_memo[slot], want | (uint64_t)(i + 1) << 60, memory_order_relaxed);
            return r;
        }
    }
    return NULL;   /* not reached: the last row takes any value */
}

/* One value of 'size' bytes at 'p' of a given kind, as its row renders it ('key', 'derived': renderer_of). */
static void r_value(tr_sb *sb, const tr_meta *m, const unsigned char *p, uint32_t size, int kind, const char *ctype,
                    const cushim_enum_info *e, const cushim_struct_info *s, int depth, const char *key, int derived)
{
    const tr_renderer *r = renderer_of(kind, size, ctype, key, derived);
    tr_value v = {.m = m, .p = p, .size = size, .ctype = ctype, .e = e, .s = s, .depth = depth};
    if (r != NULL)
        r->render(sb, &v);
}

static void r_struct(tr_sb *sb, const tr_meta *m, const unsigned char *p, uint32_t avail,
                     const cushim_struct_info *s, int depth)
{
    tr_sb_puts(sb, "{");
    for (uint32_t i = 0, first = 1; i < s->nfields; i++) {
        const cushim_field_info *f = m->struct_field != NULL ? m->struct_field(s, i) : &s->fields[i];
        if (f == NULL || f->offset + f->size > avail)
            break;
        if (!first)
            tr_sb_puts(sb, ",");
        first = 0;
        tr_sb_json_str(sb, f->name && f->name[0] ? f->name : "_", strlen(f->name && f->name[0] ? f->name : "_"),
                       TR_STR_MAX);
        tr_sb_puts(sb, ":");
        if (f->array_len > 0) {
            uint32_t esz = f->size / f->array_len;
            if (esz == 1 && type_is_text(f->type)) {
                const char *c = (const char *)p + f->offset;
                tr_sb_json_str(sb, c, strnlen(c, f->array_len), TR_STR_MAX);
                continue;
            }
            tr_sb_puts(sb, "[");
            for (uint32_t k = 0; k < f->array_len && k < TR_ARRAY_MAX && esz > 0; k++) {
                if (k)
                    tr_sb_puts(sb, ",");
                r_value(sb, m, p + f->offset + k * esz, esz, f->kind, f->type, f->enum_type, f->struct_type, depth,
                        f->type, 0);
            }
            tr_sb_puts(sb, "]");
            continue;
        }
        r_value(sb, m, p + f->offset, f->size, f->kind, f->type, f->enum_type, f->struct_type, depth, f->type, 0);
    }
    tr_sb_puts(sb, "}");
}

/* What a pointer parameter points to: kind, element type text, enum and struct. */
typedef struct tr_pointee {
    int kind;
    char ctype[96];
    const cushim_enum_info *e;
    const cushim_struct_info *s;
} tr_pointee;

static void pointee_of(const tr_meta *m, const cushim_param_info *p, tr_pointee *pt)
{
    const char *c = p->canonical_type ? p->canonical_type : "";
    size_t n = strlen(c);
    while (n > 0 && c[n - 1] == ' ')
        n--;
    if (n > 0 && c[n - 1] == '*')
        n--;
    while (n > 0 && c[n - 1] == ' ')
        n--;
    if (n >= sizeof pt->ctype)
        n = sizeof pt->ctype - 1;
    memcpy(pt->ctype, c, n);
    pt->ctype[n] = '\0';
    pt->e = NULL;
    pt->s = NULL;
    if (tr_meta_typed(m) && p->pointee != 0) {
        pt->kind = p->pointee;
        pt->e = p->enum_type;
        pt->s = p->struct_type;
        return;
    }
    /* no type metadata: from the canonical type */
    const char *t = skip_const(pt->ctype);
    size_t tl = strlen(t);
    if (tl > 0 && t[tl - 1] == '*')
        pt->kind = CUSHIM_KIND_POINTER;
    else if (strncmp(t, "enum ", 5) == 0)
        pt->kind = CUSHIM_KIND_ENUM;
    else if (strncmp(t, "struct ", 7) == 0 || strncmp(t, "union ", 6) == 0)
        pt->kind = CUSHIM_KIND_STRUCT;
    else
        pt->kind = CUSHIM_KIND_SCALAR;
}

/* The bytes a blob holds: one element, or an array (a count parameter, a fixed count, a truncation). */
static void r_blob(tr_sb *sb, const tr_meta *m, const cushim_param_info *p, const tr_blob *b)
{
    tr_pointee pt;
    const unsigned char *d = (const unsigned char *)(b + 1);
    uint32_t esz;
    int array;
    pointee_of(m, p, &pt);
    if (type_is_text(pt.ctype) || p->kind == CUSHIM_KIND_STRING) {
        size_t n = strnlen((const char *)d, b->len);
        if (n == b->len && (b->flags & TR_BLOB_TRUNC))   /* cut short: say so */
            tr_sb_json_str(sb, (const char *)d, n + 1, n);
        else
            tr_sb_json_str(sb, (const char *)d, n, TR_STR_MAX);
        return;
    }
    esz = p->elem_size;
    if (esz == 0 && pt.s != NULL)
        esz = pt.s->size;
    array = p->count_param >= 0 || p->fixed_count > 0 || b->count != 1;
    if (array && b->count == 0) {
        tr_sb_puts(sb, "[]");
        return;
    }
    if (esz == 0 || esz > b->len) {
        r_bytes(sb, d, b->len);
        return;
    }
    if (!array) {
        r_value(sb, m, d, esz, pt.kind, pt.ctype, pt.e, pt.s, 0, p->canonical_type, 1);
        return;
    }
    tr_sb_puts(sb, "[");
    for (uint32_t k = 0; (uint64_t)(k + 1) * esz <= b->len && k < TR_ARRAY_MAX; k++) {
        if (k)
            tr_sb_puts(sb, ",");
        r_value(sb, m, d + (size_t)k * esz, esz, pt.kind, pt.ctype, pt.e, pt.s, 0, p->canonical_type, 1);
    }
    if (b->count > TR_ARRAY_MAX || (b->flags & TR_BLOB_TRUNC))
        tr_sb_printf(sb, ",\"... %llu in all\"", (unsigned long long)b->count);
    tr_sb_puts(sb, "]");
}

/* What became of the call, for output pointers without their bytes. */
#define TR_CALL_RUNNING 0
#define TR_CALL_OK 1
#define TR_CALL_FAILED 2
#define TR_CALL_PENDING 4 /* NCCL's ncclInProgress (a non-blocking communicator): not failed, outputs not kept */
#define TR_CALL_TRIMMED 3

static void r_param(tr_sb *sb, const tr_meta *m, const cushim_param_info *p, const unsigned char *pv,
                    const tr_blob *in, const tr_blob *out, int state)
{
    const cushim_enum_info *e = tr_meta_typed(m) ? p->enum_type : NULL;
    const cushim_struct_info *s = tr_meta_typed(m) ? p->struct_type : NULL;
    uint64_t v = p->size <= 8 ? rd_u(pv + p->offset, p->size) : 0;
    if (p->kind == CUSHIM_KIND_POINTER || p->kind == CUSHIM_KIND_STRING) {
        if (in != NULL && (in->flags & TR_BLOB_UNCHECKED))
            tr_sb_printf(sb, "\"0x%llx (not read: the call failed)\"", (unsigned long long)v);
        else if (in != NULL && (in->flags & TR_BLOB_UNREAD) && !(in->flags & TR_BLOB_TRUNC))
            tr_sb_printf(sb, "\"0x%llx (not readable)\"", (unsigned long long)v);
        else if (out != NULL && (out->flags & TR_BLOB_UNCHECKED))   /* read safely (a skipped call's output) */
            tr_sb_printf(sb, "\"0x%llx (not read)\"", (unsigned long long)v);
        else if (out != NULL && (out->flags & TR_BLOB_UNREAD) && !(out->flags & TR_BLOB_TRUNC))
            tr_sb_printf(sb, "\"0x%llx (not readable)\"", (unsigned long long)v);
        else if (out != NULL)
            r_blob(sb, m, p, out);
        else if (in != NULL)
            r_blob(sb, m, p, in);
        else if (v == 0)
            tr_sb_puts(sb, "null");
        else if ((p->dir == CUSHIM_DIR_OUT || p->dir == CUSHIM_DIR_INOUT) && state == TR_CALL_FAILED)
            tr_sb_printf(sb, "\"0x%llx (not written: the call failed)\"", (unsigned long long)v);
        else if ((p->dir == CUSHIM_DIR_OUT || p->dir == CUSHIM_DIR_INOUT) && state == TR_CALL_PENDING)
            tr_sb_printf(sb, "\"0x%llx (not kept: in progress)\"", (unsigned long long)v);
        else if ((p->dir == CUSHIM_DIR_OUT || p->dir == CUSHIM_DIR_INOUT) && state == TR_CALL_TRIMMED &&
                 p->elem_size > 0)
            tr_sb_printf(sb, "\"0x%llx (output not kept: buffer full)\"", (unsigned long long)v);
        else
            r_hex(sb, v);
        return;
    }
    r_value(sb, m, pv + p->offset, p->size, p->kind, p->canonical_type, e, s, 0, p->canonical_type, 0);
}

const tr_blob *tr_exit_blob(const tr_exit *exit, uint32_t param, tr_exit_inline *one)
{
    if (!(exit->flags & TR_F_INLINE))
        return tr_rec_blob(exit, sizeof *exit, param);
    if (param != (uint32_t)(exit->flags >> 8) || exit->len < sizeof *exit + sizeof one->word)
        return NULL;
    one->blob.param = (uint16_t)param;
    one->blob.flags = 0;
    one->blob.len = 1u << ((exit->flags >> 4) & 3u);
    one->blob.count = 1;
    memcpy(&one->word, exit + 1, sizeof one->word);
    return &one->blob;
}

void tr_render_args(tr_sb *sb, const tr_meta *m, const cushim_api_info *info, const tr_rec *enter,
                    const tr_exit *exit)
{
    tr_exit_inline one;
    const unsigned char *pv = (const unsigned char *)(enter + 1);
    uint32_t fixed = tr_enter_fixed(info);
    int ok = exit != NULL, state = TR_CALL_RUNNING;
    if (exit != NULL && cushim_ret_is_status(info->ret_kind))
        ok = (int32_t)exit->aux == 0;   /* other return types: no error to tell, the outputs count */
    if (exit != NULL)
        state = (exit->flags & TR_F_TRIMMED) ? TR_CALL_TRIMMED : ok ? TR_CALL_OK : TR_CALL_FAILED;
    if (state == TR_CALL_FAILED && info->ret_kind == CUSHIM_RET_NCCLRESULT && m->result_name != NULL) {
        /* a non-blocking communicator's call that goes on in the background: what it wrote (the new
           communicator of an init, nothing from a query before the communicator is ready) is not told apart,
           and the recorder kept no output of a call with a status other than success */
        const char *rn = m->result_name(info->ret_kind, (int32_t)exit->aux);
        if (rn != NULL && strcmp(rn, "ncclInProgress") == 0)
            state = TR_CALL_PENDING;
    }
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = m->api_param(info, i);
        const tr_blob *in;
        const char *name;
        if (p == NULL || p->offset + p->size > info->params_size)
            continue;
        name = p->name ? p->name : "?";
        tr_sb_puts(sb, ",");
        tr_sb_json_str(sb, name, strlen(name), 64);
        tr_sb_puts(sb, ":");
        /* an input's bytes: in the EXIT (read after the call, tr_post_caps), or in the ENTER (hand-made records
           and files of older builds) */
        in = tr_rec_blob(enter, fixed, i);
        if (in == NULL && exit != NULL && p->dir == CUSHIM_DIR_IN && !(exit->flags & TR_F_INLINE))
            in = tr_rec_blob(exit, sizeof *exit, i);
        r_param(sb, m, p, pv, in, ok && p->dir != CUSHIM_DIR_IN ? tr_exit_blob(exit, i, &one) : NULL, state);
    }
    if (enter->aux != 0) {
        const char *k = (const char *)(uintptr_t)enter->aux;
        tr_sb_puts(sb, ",\"kernel\":");
        tr_sb_json_str(sb, k, strlen(k), TR_NAME_MAX);
    }
    if (exit == NULL) {
        tr_sb_puts(sb, ",\"unfinished\":true");
        return;
    }
    tr_sb_puts(sb, ",\"result\":");
    if (cushim_ret_is_status(info->ret_kind)) {   /* CUresult, cudaError_t, nvmlReturn_t...: by name */
        const char *rn = m->result_name ? m->result_name(info->ret_kind, (int32_t)exit->aux) : NULL;
        if (rn != NULL)
            tr_sb_json_str(sb, rn, strlen(rn), TR_STR_MAX);
        else
            tr_sb_i64(sb, (int32_t)exit->aux);
    } else if (info->ret_size == 0) {
        tr_sb_puts(sb, "null");
    } else {
        r_hex(sb, exit->aux);
    }
    if (exit->flags & TR_F_SKIPPED)
        tr_sb_puts(sb, ",\"skipped\":true");
}
