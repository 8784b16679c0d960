/*
 * lp_values.c - C values <-> Lua values for the policy bridge: a conversion
 * descriptor per API parameter (computed once per API from the metadata),
 * integers, floats, C strings, output pointers read through, enum values by
 * name, error codes by name and number, and named constants.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cushim/cushim_io.h>

#include "lp_engine.h"
#include "lp_load.h"
#include "lp_values.h"

/* ------------------------------------------------------------------------ */
/* Parameter descriptors                                                    */
/* ------------------------------------------------------------------------ */

/* Does the host's parameter metadata carry the type fields (enum_type, struct_type)? */
int lp_has_types(void)
{
    return lp_eng.host->sizeof_param_info >=
           offsetof(cushim_param_info, struct_type) + sizeof(((cushim_param_info *)0)->struct_type);
}

static _Atomic(lp_pdesc *) *lp_descs;   /* per API id (lp_values_init), each built on first use */

static int lp_starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Conversion of a value of canonical type 'ct' (no trailing pointer stripped). */
uint8_t lp_conv_of_type(const char *ct, size_t len)
{
    while (len > 0 && ct[len - 1] == ' ')
        len--;
    if (len > 0 && ct[len - 1] == '*')
        return LC_UINT;
    if (lp_starts(ct, "const "))
        ct += 6, len -= 6;
    if (len == 5 && !strncmp(ct, "float", 5))
        return LC_FLOAT;
    if (len == 6 && !strncmp(ct, "double", 6))
        return LC_DOUBLE;
    if (lp_starts(ct, "struct ") || lp_starts(ct, "union ") || (len == 4 && !strncmp(ct, "void", 4)))
        return LC_NONE;
    if (lp_starts(ct, "unsigned") || lp_starts(ct, "_Bool"))
        return LC_UINT;
    return LC_INT;
}

static void lp_desc_one(const cushim_param_info *p, lp_pdesc *d)
{
    const char *ct = p->canonical_type ? p->canonical_type : p->type;
    size_t len = strlen(ct);
    memset(d, 0, sizeof *d);
    d->offset = p->offset;
    d->size = (uint8_t)(p->size <= 8 ? p->size : 0);
    switch (p->kind) {
    case CUSHIM_KIND_STRING:
        d->conv = LC_STRING;
        break;
    case CUSHIM_KIND_STRUCT:
        d->conv = LC_NONE;
        break;
    case CUSHIM_KIND_SCALAR:
    case CUSHIM_KIND_ENUM:
        d->conv = p->kind == CUSHIM_KIND_ENUM ? LC_INT : lp_conv_of_type(ct, len);
        break;
    default:
        d->conv = d->size ? LC_UINT : LC_NONE;
        break;
    }
    if (d->size == 0)
        d->conv = LC_NONE;
    if (lp_has_types()) {
        d->etype = p->enum_type;
        if (p->struct_type != NULL && p->kind == CUSHIM_KIND_STRUCT) {
            d->stype = p->struct_type;
        } else if (p->struct_type != NULL && p->pointee == CUSHIM_KIND_STRUCT && p->size == sizeof(void *)) {
            d->stype = p->struct_type;
            d->sptr = 1;
        }
        if (d->stype != NULL)
            return;   /* read as a struct view */
    }
    /* An output pointer to one scalar, pointer or string: read through. */
    if ((p->dir == CUSHIM_DIR_OUT || p->dir == CUSHIM_DIR_INOUT) && p->size == sizeof(void *) && len > 1 &&
        ct[len - 1] == '*') {
        size_t plen = len - 1;
        while (plen > 0 && ct[plen - 1] == ' ')
            plen--;
        const char *pt = ct;
        if (lp_starts(pt, "const ") && plen > 6)
            pt += 6, plen -= 6;
        if (plen == 6 && !strncmp(pt, "char *", 6)) {   /* const char **: a string out */
            d->deref = 1;
            d->pconv = LC_STRING;
            d->psize = sizeof(char *);
        } else if (plen == 4 && !strncmp(pt, "char", 4) && p->count_param >= 0) {
            d->deref = 1;   /* char *buf with its length in another parameter: a string */
            d->pconv = LC_CHARBUF;
            d->psize = 1;
        } else if (p->count_param < 0 && p->fixed_count <= 1) {
            uint8_t c = lp_conv_of_type(pt, plen);
            uint32_t es = p->elem_size;
            if (plen > 0 && pt[plen - 1] == '*')
                es = sizeof(void *);
            if (c != LC_NONE && (es == 1 || es == 2 || es == 4 || es == 8)) {
                d->deref = 1;
                d->pconv = c;
                d->psize = (uint8_t)es;
            }
        }
    }
}

int lp_values_init(void)
{
    lp_descs = calloc(lp_eng.id_limit + 1, sizeof *lp_descs);
    return lp_descs != NULL ? 0 : -1;
}

const lp_pdesc *lp_desc(const cushim_api_info *info)
{
    const cushim_host *h = lp_eng.host;
    lp_pdesc *d, *expect = NULL;
    if (info->id >= lp_eng.id_limit)
        return NULL;
    d = atomic_load_explicit(&lp_descs[info->id], memory_order_acquire);
    if (d != NULL)
        return d;
    d = calloc(info->nparams + 1u, sizeof *d);
    if (d == NULL)
        return NULL;
    for (uint32_t i = 0; i < info->nparams; i++)
        lp_desc_one(h->api_param(info, i), &d[i]);
    if (!atomic_compare_exchange_strong(&lp_descs[info->id], &expect, d)) {
        free(d);
        d = expect;
    }
    return d;
}

/* ------------------------------------------------------------------------ */
/* Results and constants by name                                            */
/* ------------------------------------------------------------------------ */
#define LP_RNAME_MAX 1024
static _Atomic(const char *) lp_rnames[2][LP_RNAME_MAX];
static const char lp_unknown_name[] = "";

const char *lp_result_name(uint32_t kind, int32_t code)
{
    const char *n;
    if ((kind != CUSHIM_RET_CURESULT && kind != CUSHIM_RET_CUDAERROR) || code < 0 || code >= LP_RNAME_MAX)
        return lp_eng.host->result_name(kind, code);
    n = atomic_load_explicit(&lp_rnames[kind - 1][code], memory_order_relaxed);
    if (n == NULL) {
        n = lp_eng.host->result_name(kind, code);
        atomic_store_explicit(&lp_rnames[kind - 1][code], n ? n : lp_unknown_name, memory_order_relaxed);
    }
    return n == lp_unknown_name ? NULL : n;
}

void lp_push_result(lua_State *L, uint32_t kind, int32_t code)
{
    const char *n = lp_result_name(kind, code);
    if (n != NULL)
        lua_pushstring(L, n);
    else
        lua_pushinteger(L, code);
}

/* An error code from a name or number at 'idx', for an API returning 'ret_kind'.
   0; or -1 with a message pushed. */
/* The same without touching Lua's memory (usable outside a protected call):
   0, or -1 with the reason in 'err'. */
int lp_code_of(lua_State *L, int idx, uint32_t ret_kind, int32_t *code, char *err, size_t errlen)
{
    uint32_t kind = 0;
    const char *name;
    if (!cushim_ret_is_status(ret_kind)) {
        snprintf(err, errlen, "this API returns no error code");
        return -1;
    }
    if (lua_type(L, idx) == LUA_TNUMBER) {
        int isint = 0;
        lua_Integer v = lua_tointegerx(L, idx, &isint);
        if (!isint || v < INT32_MIN || v > INT32_MAX) {
            snprintf(err, errlen, "an error code is an integer");
            return -1;
        }
        *code = (int32_t)v;
        return 0;
    }
    if (lua_type(L, idx) != LUA_TSTRING) {
        snprintf(err, errlen, "an error code is a name or a number, not a %s", lua_typename(L, lua_type(L, idx)));
        return -1;
    }
    name = lua_tostring(L, idx);   /* a string already: no conversion, no allocation */
    if (lp_eng.host->result_by_name(name, &kind, code) != CUSHIM_OK) {
        snprintf(err, errlen, "unknown error name '%.200s'", name);
        return -1;
    }
    if (kind != ret_kind) {
        snprintf(err, errlen, "'%.200s' is %s; this API returns a %s", name, cushim_ret_error_text(kind),
                 cushim_ret_type_name(ret_kind));
        return -1;
    }
    return 0;
}

int lp_result_code(lua_State *L, int idx, uint32_t ret_kind, int32_t *code)
{
    char err[512];
    if (lp_code_of(L, idx, ret_kind, code, err, sizeof err) == 0)
        return 0;
    lua_pushstring(L, err);
    return -1;
}

/* A named constant: an error code (any library), else nil. */
int lp_const_value(lua_State *L, const char *name, lua_Integer *out)
{
    uint32_t kind;
    int32_t code;
    (void)L;
    if (lp_eng.host->result_by_name(name, &kind, &code) == CUSHIM_OK) {
        *out = code;
        return 1;
    }
    if (CUSHIM_HOST_HAS(lp_eng.host, enum_constant)) {
        int64_t v;
        if (lp_eng.host->enum_constant(name, &v, NULL) == CUSHIM_OK) {
            *out = (lua_Integer)v;
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

void lp_push_cstr(lua_State *L, const char *s, size_t max)
{
    /* page by page through cushim_read_mem: a string is read up to its NUL and never past the first page that
       cannot be read (one system call a page; strings are names, read by few policies) */
    luaL_Buffer b;
    size_t total = 0;
    luaL_buffinit(L, &b);
    while (total < max) {
        size_t room = 4096u - (((uintptr_t)s + total) & 4095u), n;
        char *dst;
        long got;
        if (room > max - total)
            room = max - total;
        dst = luaL_prepbuffsize(&b, room);
        got = cushim_read_mem(dst, s + total, room);
        if (got < 0) {   /* no such read on this system: the plain read */
            luaL_addlstring(&b, s + total, strnlen(s + total, max - total));
            break;
        }
        n = strnlen(dst, (size_t)got);
        luaL_addsize(&b, n);
        total += n;
        if (n < (size_t)got)   /* its NUL */
            break;
        if ((size_t)got < room) {   /* memory that cannot be read before its end */
            luaL_pushresult(&b);
            lua_pop(L, 1);
            lua_pushnil(L);
            return;
        }
    }
    luaL_pushresult(&b);
}

/* Where the system has no safe read, the plain read (as a hook always did before). */
int lp_read_in(void *dst, const void *p, size_t n)
{
    long got = cushim_read_mem(dst, p, n);
    if (got < 0) {
        memcpy(dst, p, n);
        return 1;
    }
    return (size_t)got == n;
}

void lp_push_mem(lua_State *L, const void *p, uint8_t conv, uint8_t size)
{
    switch (conv) {
    case LC_INT:
        switch (size) {
        case 1: lua_pushinteger(L, *(const int8_t *)p); return;
        case 2: lua_pushinteger(L, *(const int16_t *)p); return;
        case 4: lua_pushinteger(L, *(const int32_t *)p); return;
        case 8: lua_pushinteger(L, (lua_Integer) * (const int64_t *)p); return;
        }
        break;
    case LC_UINT:
        switch (size) {
        case 1: lua_pushinteger(L, *(const uint8_t *)p); return;
        case 2: lua_pushinteger(L, *(const uint16_t *)p); return;
        case 4: lua_pushinteger(L, *(const uint32_t *)p); return;
        case 8: lua_pushinteger(L, (lua_Integer) * (const uint64_t *)p); return;
        }
        break;
    case LC_FLOAT:
        lua_pushnumber(L, *(const float *)p);
        return;
    case LC_DOUBLE:
        lua_pushnumber(L, *(const double *)p);
        return;
    case LC_STRING: {
        const char *s = *(const char *const *)p;
        if (s != NULL)
            lp_push_cstr(L, s, LP_STR_MAX);
        else
            lua_pushnil(L);
        return;
    }
    }
    lua_pushnil(L);
}

/* Lua value at idx → memory; 0, or -1 with a message pushed. */
int lp_store_mem(lua_State *L, int idx, void *p, uint8_t conv, uint8_t size)
{
    lua_Integer v = 0;
    if (conv == LC_FLOAT || conv == LC_DOUBLE) {
        int isnum = 0;
        lua_Number n = lua_tonumberx(L, idx, &isnum);
        if (!isnum) {
            lua_pushfstring(L, "expected a number, got a %s", luaL_typename(L, idx));
            return -1;
        }
        if (conv == LC_FLOAT)
            *(float *)p = (float)n;
        else
            *(double *)p = n;
        return 0;
    }
    if (conv != LC_INT && conv != LC_UINT) {
        lua_pushstring(L, "this value cannot be written from Lua");
        return -1;
    }
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER: {
        int isint = 0;
        v = lua_tointegerx(L, idx, &isint);
        if (!isint) {
            lua_pushstring(L, "expected an integer");
            return -1;
        }
        break;
    }
    case LUA_TBOOLEAN:
        v = lua_toboolean(L, idx);
        break;
    case LUA_TSTRING:
        if (!lp_const_value(L, lua_tostring(L, idx), &v)) {
            lua_pushfstring(L, "unknown constant '%s'", lua_tostring(L, idx));
            return -1;
        }
        break;
    case LUA_TNIL:
        v = 0;
        break;
    default:
        lua_pushfstring(L, "expected an integer, got a %s", luaL_typename(L, idx));
        return -1;
    }
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: *(uint16_t *)p = (uint16_t)v; break;
    case 4: *(uint32_t *)p = (uint32_t)v; break;
    case 8: *(uint64_t *)p = (uint64_t)v; break;
    default:
        lua_pushstring(L, "unsupported size");
        return -1;
    }
    return 0;
}

int lp_param_index(const cushim_api_info *info, const char *key)
{
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = lp_eng.host->api_param(info, i);
        if (p != NULL && strcmp(p->name, key) == 0)
            return (int)i;
    }
    return -1;
}

/* An integer value of an enum type: its name when it has one. */
void lp_push_enum(lua_State *L, const cushim_enum_info *e)
{
    lua_Integer v = lua_tointegerx(L, -1, NULL);
    const char *n = e != NULL && CUSHIM_HOST_HAS(lp_eng.host, enum_value_name)
                        ? lp_eng.host->enum_value_name(e, (int64_t)v)
                        : NULL;
    if (n != NULL) {
        lua_pop(L, 1);
        lua_pushstring(L, n);
    }
}

int lp_mem_readable(const void *p, size_t n)
{
    return cushim_mem_readable(p, n);
}
