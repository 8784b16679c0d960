/*
 * fl_render.c - parameters and results of recorded calls as text or JSON, from the generated metadata
 * (fl_render.h). The dump tool's own small renderer over the raw params struct: the trace plugin's renders its
 * captures (bytes behind pointers), which the flight recorder never takes on its hot path. It runs in the dump
 * tool over the generated tables it links itself (no host table): indexing fields[] and values[] there is this
 * build's own layout, unlike a plugin's (cushim_struct_field, cushim.h).
 */
#define _GNU_SOURCE
#include "fl_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cushim_api_ids.h"

extern const cushim_api_info cushim_gen_apis[];
extern const int16_t cushim_gen_index_of_id[];

/* ---- strings and numbers (the buffer is the trace's text library's: tr_json.h) ---- */

void fl_text_str(tr_sb *sb, const char *str, size_t max)
{
    size_t n = strnlen(str, max);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)str[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            tr_sb_putn(sb, str + i, 1);
        else
            tr_sb_printf(sb, "\\x%02x", c);
    }
}

void fl_hex(tr_sb *sb, uint64_t v, int json)
{
    if (json)
        tr_sb_hexq(sb, v);
    else
        tr_sb_printf(sb, "0x%llx", (unsigned long long)v);
}

/* ---- metadata ---- */

const cushim_api_info *fl_meta_api(uint32_t id)
{
    if (id >= CUSHIM_API_ID_LIMIT || cushim_gen_index_of_id[id] < 0)
        return NULL;
    return &cushim_gen_apis[cushim_gen_index_of_id[id]];
}

const cushim_param_info *fl_meta_param(const cushim_api_info *a, uint32_t i)
{
    return a != NULL && i < a->nparams ? &a->params[i] : NULL;
}

static const struct {
    uint32_t kind;
    int32_t code;
    const char *name;
} fl_results[] = {
#define CUSHIM_RESULT(kind, value, name) {kind, value, name},
#include "cushim_results.inc"
#undef CUSHIM_RESULT
};

const char *fl_meta_result(uint32_t ret_kind, int32_t code)
{
    for (size_t i = 0; i < sizeof fl_results / sizeof fl_results[0]; i++)
        if (fl_results[i].kind == ret_kind && fl_results[i].code == code)
            return fl_results[i].name;
    return NULL;
}

void fl_meta_categories(uint32_t cats, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
#define FL_CAT(word, bit)                                                                         \
    if ((cats & (bit)) && len + sizeof #word + 1 < cap) {                                          \
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "," : "", #word);              \
    }
    CUSHIM_CATEGORY_LIST(FL_CAT)
#undef FL_CAT
}

/* ---- values ---- */

static uint64_t fl_rd(const unsigned char *p, uint32_t size)
{
    uint64_t v = 0;
    memcpy(&v, p, size < 8 ? size : 8);   /* little-endian */
    return v;
}

static int64_t fl_rds(const unsigned char *p, uint32_t size)
{
    uint64_t u = fl_rd(p, size);
    if (size > 0 && size < 8 && ((u >> (size * 8 - 1)) & 1))
        u |= ~(uint64_t)0 << (size * 8);
    return (int64_t)u;
}

static const char *fl_skip_const(const char *t)
{
    while (t != NULL && strncmp(t, "const ", 6) == 0)
        t += 6;
    return t != NULL ? t : "";
}

static int fl_is_unsigned(const char *t)
{
    t = fl_skip_const(t);
    return strstr(t, "unsigned") != NULL || strcmp(t, "size_t") == 0 || strncmp(t, "uint", 4) == 0 ||
           strncmp(t, "cuuint", 6) == 0 || strcmp(t, "_Bool") == 0 || strcmp(t, "bool") == 0;
}

static int fl_is_char(const char *t)
{
    size_t n;
    t = fl_skip_const(t);
    n = strcspn(t, "[");
    while (n > 0 && t[n - 1] == ' ')
        n--;
    return (n == 4 && strncmp(t, "char", 4) == 0) || (n == 13 && strncmp(t, "unsigned char", 13) == 0) ||
           (n == 11 && strncmp(t, "signed char", 11) == 0);
}

static void fl_bytes(tr_sb *sb, const unsigned char *p, uint32_t n, int json)
{
    tr_sb_puts(sb, json ? "\"" : "<");
    for (uint32_t i = 0; i < n && i < 64; i++)
        tr_sb_printf(sb, "%02x", p[i]);
    tr_sb_puts(sb, n > 64 ? "...": "");
    tr_sb_puts(sb, json ? "\"" : ">");
}

static void fl_value(tr_sb *sb, const unsigned char *p, uint32_t size, int kind, const char *ctype,
                     const cushim_enum_info *e, const cushim_struct_info *s, int json, int depth);

static void fl_struct(tr_sb *sb, const unsigned char *p, uint32_t avail, const cushim_struct_info *s, int json,
                      int depth)
{
    tr_sb_puts(sb, "{");
    for (uint32_t i = 0, first = 1; i < s->nfields; i++) {
        const cushim_field_info *f = &s->fields[i];
        const char *name = f->name != NULL && f->name[0] != '\0' ? f->name : "_";
        if ((uint64_t)f->offset + f->size > avail)
            break;
        tr_sb_puts(sb, first ? "" : json ? "," : ", ");
        first = 0;
        if (json) {
            fl_json_cstr(sb, name, 128);
            tr_sb_puts(sb, ":");
        } else {
            tr_sb_printf(sb, "%s=", name);
        }
        if (f->array_len > 0) {
            uint32_t esz = f->size / f->array_len;
            if (esz == 1 && fl_is_char(f->type)) {
                char tmp[257];
                uint32_t n = f->array_len < 256 ? f->array_len : 256;
                memcpy(tmp, p + f->offset, n);
                tmp[n] = '\0';
                if (json) {
                    fl_json_cstr(sb, tmp, n);
                } else {
                    tr_sb_puts(sb, "\"");
                    fl_text_str(sb, tmp, n);
                    tr_sb_puts(sb, "\"");
                }
                continue;
            }
            tr_sb_puts(sb, "[");
            for (uint32_t k = 0; k < f->array_len && k < 16 && esz > 0; k++) {
                tr_sb_puts(sb, k ? (json ? "," : ", ") : "");
                fl_value(sb, p + f->offset + k * esz, esz, f->kind, f->type, f->enum_type, f->struct_type, json,
                         depth);
            }
            tr_sb_puts(sb, f->array_len > 16 ? (json ? ",\"...\"]" : ", ...]") : "]");
            continue;
        }
        fl_value(sb, p + f->offset, f->size, f->kind, f->type, f->enum_type, f->struct_type, json, depth);
    }
    tr_sb_puts(sb, "}");
}

static void fl_value(tr_sb *sb, const unsigned char *p, uint32_t size, int kind, const char *ctype,
                     const cushim_enum_info *e, const cushim_struct_info *s, int json, int depth)
{
    switch (kind) {
    case CUSHIM_KIND_SCALAR: {
        const char *t = fl_skip_const(ctype);
        if ((strcmp(t, "float") == 0 && size == 4) || (strcmp(t, "double") == 0 && size == 8)) {
            double d;
            if (size == 4) {
                float fv;
                memcpy(&fv, p, 4);
                d = fv;
            } else {
                memcpy(&d, p, 8);
            }
            tr_sb_printf(sb, (d != d || d - d != 0) && json ? "\"%.9g\"" : "%.9g", d);
        } else if (size > 8) {
            fl_bytes(sb, p, size, json);
        } else if (fl_is_unsigned(ctype)) {
            tr_sb_printf(sb, "%llu", (unsigned long long)fl_rd(p, size));
        } else {
            tr_sb_printf(sb, "%lld", (long long)fl_rds(p, size));
        }
        return;
    }
    case CUSHIM_KIND_ENUM: {
        int64_t v = fl_rds(p, size);
        for (uint32_t i = 0; e != NULL && i < e->nvalues; i++)
            if (e->values[i].value == v) {
                if (json)
                    fl_json_cstr(sb, e->values[i].name, 128);
                else
                    tr_sb_puts(sb, e->values[i].name);
                return;
            }
        tr_sb_printf(sb, "%lld", (long long)v);
        return;
    }
    case CUSHIM_KIND_STRUCT:
        if (s != NULL && depth < 4)
            fl_struct(sb, p, size, s, json, depth + 1);
        else
            fl_bytes(sb, p, size, json);
        return;
    default:
        if (size > 8) {
            fl_bytes(sb, p, size, json);
        } else {
            uint64_t v = fl_rd(p, size);
            if (v == 0 && kind != CUSHIM_KIND_UNKNOWN)
                tr_sb_puts(sb, json ? "null" : "NULL");
            else
                fl_hex(sb, v, json);
        }
    }
}

void fl_render_param(tr_sb *sb, const cushim_param_info *p, const unsigned char *v, int json)
{
    fl_value(sb, v, p->size, p->kind, p->canonical_type, p->enum_type, p->struct_type, json, 0);
}

void fl_render_params(tr_sb *sb, const cushim_api_info *api, const unsigned char *params, uint32_t plen, int json)
{
    for (uint32_t i = 0; i < api->nparams; i++) {
        const cushim_param_info *p = fl_meta_param(api, i);
        const char *name = p->name != NULL ? p->name : "?";
        if (json) {
            tr_sb_puts(sb, ",");
            fl_json_cstr(sb, name, 128);
            tr_sb_puts(sb, ":");
        } else {
            tr_sb_printf(sb, "%s%s=", i ? ", " : "", name);
        }
        if ((uint32_t)p->offset + p->size > plen)
            tr_sb_puts(sb, json ? "\"(not kept)\"" : "(not kept)");
        else
            fl_render_param(sb, p, params + p->offset, json);
    }
}

void fl_render_result(tr_sb *sb, const cushim_api_info *api, int32_t r, int json)
{
    const char *n = api != NULL ? fl_meta_result(api->ret_kind, r) : NULL;
    if (n != NULL) {
        if (json)
            fl_json_cstr(sb, n, 128);
        else
            tr_sb_puts(sb, n);
    } else {
        tr_sb_printf(sb, "%d", (int)r);
    }
}
