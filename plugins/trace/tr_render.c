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

static int type_is_float(const char *t)
{
    t = skip_const(t);
    return t != NULL && (strcmp(t, "float") == 0 || strcmp(t, "double") == 0);
}

static int type_is_unsigned(const char *t)
{
    t = skip_const(t);
    return t != NULL && (strstr(t, "unsigned") != NULL || strcmp(t, "size_t") == 0 || strncmp(t, "uint", 4) == 0 ||
                         strncmp(t, "cuuint", 6) == 0 || strcmp(t, "_Bool") == 0 || strcmp(t, "bool") == 0);
}

/* "char", "const char", "char[16]" */
static int type_is_char(const char *t)
{
    size_t n;
    t = skip_const(t);
    if (t == NULL)
        return 0;
    n = strcspn(t, "[");
    while (n > 0 && t[n - 1] == ' ')
        n--;
    return (n == 4 && strncmp(t, "char", 4) == 0) || (n == 11 && strncmp(t, "signed char", 11) == 0) ||
           (n == 13 && strncmp(t, "unsigned char", 13) == 0);
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

static void r_number(tr_sb *sb, const unsigned char *p, uint32_t size, const char *ctype)
{
    if (type_is_float(ctype) && (size == 4 || size == 8)) {
        double d;
        if (size == 4) {
            float f;
            memcpy(&f, p, 4);
            d = f;
        } else {
            memcpy(&d, p, 8);
        }
        char num[64];
        snprintf(num, sizeof num, "%.9g", d);
        tr_c_number(num);   /* the program's LC_NUMERIC may say ',' */
        if (d != d || d - d != 0)   /* NaN, infinities: no JSON number */
            tr_sb_printf(sb, "\"%s\"", num);
        else
            tr_sb_puts(sb, num);
    } else if (size > 8) {
        r_bytes(sb, p, size);
    } else if (type_is_unsigned(ctype)) {
        tr_sb_u64(sb, rd_u(p, size));
    } else {
        tr_sb_i64(sb, rd_s(p, size));
    }
}

static void r_enum(tr_sb *sb, const tr_meta *m, const unsigned char *p, uint32_t size, const cushim_enum_info *e)
{
    int64_t v = rd_s(p, size);
    const char *name = (e != NULL && m->enum_value_name != NULL) ? m->enum_value_name(e, v) : NULL;
    if (name != NULL)
        tr_sb_json_str(sb, name, strlen(name), TR_STR_MAX);
    else
        tr_sb_i64(sb, v);
}

/* A callback as "0x... SYMBOL" when it is a symbol's address. The symbol's name is the ELF file's: any bytes but
   NUL may stand in it (a '"' ended the JSON string early), so it is escaped as every other string is. */
static void r_callback(tr_sb *sb, uint64_t v)
{
    Dl_info di;
    if (v != 0 && dladdr((void *)(uintptr_t)v, &di) != 0 && di.dli_sname != NULL &&
        (uint64_t)(uintptr_t)di.dli_saddr == v) {
        char *text = NULL;
        int n = asprintf(&text, "0x%llx %s", (unsigned long long)v, di.dli_sname);
        if (n > 0) {
            tr_sb_json_str(sb, text, (size_t)n, TR_NAME_MAX);   /* as long as a kernel's name (C++'s run long) */
            free(text);
        } else {
            r_hex(sb, v);
        }
    } else {
        r_hex(sb, v);
    }
}

static void r_struct(tr_sb *sb, const tr_meta *m, const unsigned char *p, uint32_t avail,
                     const cushim_struct_info *s, int depth);

/* One value of 'size' bytes at 'p' of a given kind. */
static void r_value(tr_sb *sb, const tr_meta *m, const unsigned char *p, uint32_t size, int kind, const char *ctype,
                    const cushim_enum_info *e, const cushim_struct_info *s, int depth)
{
    switch (kind) {
    case CUSHIM_KIND_SCALAR:
        r_number(sb, p, size, ctype);
        break;
    case CUSHIM_KIND_ENUM:
        r_enum(sb, m, p, size, e);
        break;
    case CUSHIM_KIND_CALLBACK:
        r_callback(sb, rd_u(p, size));
        break;
    case CUSHIM_KIND_HANDLE:
    case CUSHIM_KIND_DEVPTR:
    case CUSHIM_KIND_POINTER:
    case CUSHIM_KIND_STRING:
        r_hex(sb, rd_u(p, size));
        break;
    case CUSHIM_KIND_STRUCT:
        if (s != NULL && depth < 4)
            r_struct(sb, m, p, size, s, depth + 1);
        else
            r_bytes(sb, p, size);
        break;
    default:
        if (size <= 8)
            r_hex(sb, rd_u(p, size));
        else
            r_bytes(sb, p, size);
    }
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
            if (esz == 1 && type_is_char(f->type)) {
                const char *c = (const char *)p + f->offset;
                tr_sb_json_str(sb, c, strnlen(c, f->array_len), TR_STR_MAX);
                continue;
            }
            tr_sb_puts(sb, "[");
            for (uint32_t k = 0; k < f->array_len && k < TR_ARRAY_MAX && esz > 0; k++) {
                if (k)
                    tr_sb_puts(sb, ",");
                r_value(sb, m, p + f->offset + k * esz, esz, f->kind, f->type, f->enum_type, f->struct_type, depth);
            }
            tr_sb_puts(sb, "]");
            continue;
        }
        r_value(sb, m, p + f->offset, f->size, f->kind, f->type, f->enum_type, f->struct_type, depth);
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
    if (type_is_char(pt.ctype) || p->kind == CUSHIM_KIND_STRING) {
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
        r_value(sb, m, d, esz, pt.kind, pt.ctype, pt.e, pt.s, 0);
        return;
    }
    tr_sb_puts(sb, "[");
    for (uint32_t k = 0; (uint64_t)(k + 1) * esz <= b->len && k < TR_ARRAY_MAX; k++) {
        if (k)
            tr_sb_puts(sb, ",");
        r_value(sb, m, d + (size_t)k * esz, esz, pt.kind, pt.ctype, pt.e, pt.s, 0);
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
    r_value(sb, m, pv + p->offset, p->size, p->kind, p->canonical_type, e, s, 0);
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
