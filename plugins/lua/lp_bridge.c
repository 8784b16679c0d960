/*
 * lp_bridge.c - the 'cushim' module a policy sees, and the call object.
 *
 * The call object is a full userdata per nesting depth per state, reused for
 * every call (no allocation per call); it points at the host's call frame
 * only while its hook runs. Parameters are found by their header names in the
 * API's metadata (host->api_param) and converted by a descriptor computed once
 * per API (lp_pdesc): integers, floats, C strings, and for output pointers the
 * value they point to. docs/lua-policies.md is the reference.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_internal.h"

char lp_skip_key;

#define LP_CALL_MT "cushim.call"

/* ------------------------------------------------------------------------ */
/* Parameter descriptors                                                    */
/* ------------------------------------------------------------------------ */
enum { LC_NONE, LC_INT, LC_UINT, LC_FLOAT, LC_DOUBLE, LC_STRING, LC_CHARBUF };

typedef struct lp_pdesc {
    uint8_t conv, size;     /* the parameter's own value                         */
    uint8_t deref;          /* an output pointer read/written through            */
    uint8_t pconv, psize;   /* the pointee's conversion                          */
    const cushim_enum_info *etype;     /* values shown by name (type metadata)   */
    const cushim_struct_info *stype;   /* a struct by value, or pointed to      */
    uint8_t sptr;                      /* stype is pointed to (read-only)        */
} lp_pdesc;

/* Does the host's parameter metadata carry the type fields (enum_type, struct_type)? */
static int lp_has_types(void)
{
    return lp_eng.host->sizeof_param_info >=
           offsetof(cushim_param_info, struct_type) + sizeof(((cushim_param_info *)0)->struct_type);
}

static _Atomic(lp_pdesc *) *lp_descs;   /* per API id (lp_bridge_init), each built on first use */

static int lp_starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Conversion of a value of canonical type 'ct' (no trailing pointer stripped). */
static uint8_t lp_conv_of_type(const char *ct, size_t len)
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

int lp_bridge_init(void)
{
    lp_descs = calloc(lp_eng.id_limit + 1, sizeof *lp_descs);
    return lp_descs != NULL ? 0 : -1;
}

static const lp_pdesc *lp_desc(const cushim_api_info *info)
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

static void lp_push_result(lua_State *L, uint32_t kind, int32_t code)
{
    const char *n = lp_result_name(kind, code);
    if (n != NULL)
        lua_pushstring(L, n);
    else
        lua_pushinteger(L, code);
}

/* An error code from a name or number at 'idx', for an API returning 'ret_kind'.
   0; or -1 with a message pushed. */
int lp_result_code(lua_State *L, int idx, uint32_t ret_kind, int32_t *code)
{
    uint32_t kind = 0;
    if (ret_kind != CUSHIM_RET_CURESULT && ret_kind != CUSHIM_RET_CUDAERROR) {
        lua_pushstring(L, "this API returns no error code");
        return -1;
    }
    if (lua_type(L, idx) == LUA_TNUMBER) {
        int isint = 0;
        lua_Integer v = lua_tointegerx(L, idx, &isint);
        if (!isint || v < INT32_MIN || v > INT32_MAX) {
            lua_pushstring(L, "an error code is an integer");
            return -1;
        }
        *code = (int32_t)v;
        return 0;
    }
    if (lua_type(L, idx) != LUA_TSTRING) {
        lua_pushfstring(L, "an error code is a name or a number, not a %s", luaL_typename(L, idx));
        return -1;
    }
    const char *name = lua_tostring(L, idx);
    if (lp_eng.host->result_by_name(name, &kind, code) != CUSHIM_OK) {
        lua_pushfstring(L, "unknown error name '%s'", name);
        return -1;
    }
    if (kind != ret_kind) {
        lua_pushfstring(L, "'%s' is a %s error; this API returns a %s", name,
                        kind == CUSHIM_RET_CURESULT ? "driver (CUresult)" : "runtime (cudaError_t)",
                        ret_kind == CUSHIM_RET_CURESULT ? "CUresult" : "cudaError_t");
        return -1;
    }
    return 0;
}

/* A named constant: an error code (any library), else nil. */
static int lp_const_value(lua_State *L, const char *name, lua_Integer *out)
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
static void lp_push_mem(lua_State *L, const void *p, uint8_t conv, uint8_t size)
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
            lua_pushstring(L, s);
        else
            lua_pushnil(L);
        return;
    }
    }
    lua_pushnil(L);
}

/* Lua value at idx → memory; 0, or -1 with a message pushed. */
static int lp_store_mem(lua_State *L, int idx, void *p, uint8_t conv, uint8_t size)
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

static int lp_param_index(const cushim_api_info *info, const char *key)
{
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = lp_eng.host->api_param(info, i);
        if (p != NULL && strcmp(p->name, key) == 0)
            return (int)i;
    }
    return -1;
}

static void lp_push_sview(lua_State *L, lp_proxy *px, unsigned char *base, const cushim_struct_info *si,
                          int writable);

/* An integer value of an enum type: its name when it has one. */
static void lp_push_enum(lua_State *L, const cushim_enum_info *e)
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

/* Reads parameter i of 'params' (through an output pointer where the
   descriptor says so; a struct as a view). */
static void lp_push_param(lua_State *L, lp_proxy *px, const cushim_api_info *info, const lp_pdesc *d, void *params,
                          int i)
{
    const cushim_param_info *p = lp_eng.host->api_param(info, (uint32_t)i);
    const char *at = (const char *)params + p->offset;
    if (d[i].stype != NULL) {
        unsigned char *base = d[i].sptr ? *(unsigned char *const *)at : (unsigned char *)at;
        if (base == NULL)
            lua_pushnil(L);
        else
            lp_push_sview(L, px, base, d[i].stype, !d[i].sptr && !px->after);
        return;
    }
    if (d[i].deref) {
        const void *ptr = *(void *const *)at;
        if (ptr == NULL) {
            lua_pushnil(L);
        } else if (d[i].pconv == LC_CHARBUF) {
            lua_Integer n = 0;
            const cushim_param_info *c = lp_eng.host->api_param(info, (uint32_t)p->count_param);
            if (c != NULL && d[p->count_param].conv != LC_NONE && d[p->count_param].size <= 8) {
                lp_push_mem(L, (const char *)params + c->offset, d[p->count_param].conv, d[p->count_param].size);
                n = lua_tointegerx(L, -1, NULL);
                lua_pop(L, 1);
            }
            lua_pushlstring(L, ptr, n > 0 ? strnlen(ptr, (size_t)n) : 0);
        } else {
            lp_push_mem(L, ptr, d[i].pconv, d[i].psize);
            if (d[i].etype != NULL && lua_isinteger(L, -1))
                lp_push_enum(L, d[i].etype);
        }
        return;
    }
    lp_push_mem(L, at, d[i].conv, d[i].size);
    if (d[i].etype != NULL && lua_isinteger(L, -1))
        lp_push_enum(L, d[i].etype);
}

/* ------------------------------------------------------------------------ */
/* Metadata tables                                                          */
/* ------------------------------------------------------------------------ */
static const char *const lp_kind_names[] = {"unknown", "scalar", "enum", "handle", "pointer",
                                            "string", "struct", "callback", "devptr"};
static const char *const lp_dir_names[] = {"unknown", "in", "out", "inout"};

static void lp_push_api(lua_State *L, const cushim_api_info *info)
{
    int n = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, "cushim.apis");
    if (lua_rawgeti(L, -1, info->id) == LUA_TTABLE) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 12);
    lua_pushinteger(L, info->id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, info->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, info->base_name);
    lua_setfield(L, -2, "base");
    lua_pushstring(L, info->library == CUSHIM_LIB_RUNTIME ? "runtime" : "driver");
    lua_setfield(L, -2, "library");
    lua_pushinteger(L, info->abi_version);
    lua_setfield(L, -2, "abi_version");
    lua_pushstring(L, info->return_type);
    lua_setfield(L, -2, "returns");
    lua_pushstring(L, info->header);
    lua_setfield(L, -2, "header");
    lua_pushinteger(L, info->line);
    lua_setfield(L, -2, "line");
    lua_pushboolean(L, info->deprecated);
    lua_setfield(L, -2, "deprecated");
    lua_newtable(L);
#define LP_CAT(word, bit)                                          \
    if (info->categories & (bit)) {                                \
        lua_pushstring(L, #word);                                  \
        lua_rawseti(L, -2, ++n);                                   \
        lua_pushboolean(L, 1);                                     \
        lua_setfield(L, -2, #word);                                \
    }
    CUSHIM_CATEGORY_LIST(LP_CAT)
#undef LP_CAT
    lua_setfield(L, -2, "categories");
    lua_createtable(L, info->nparams, 0);
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = lp_eng.host->api_param(info, i);
        lua_createtable(L, 0, 5);
        lua_pushstring(L, p->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, p->type);
        lua_setfield(L, -2, "type");
        lua_pushstring(L, p->kind <= CUSHIM_KIND_DEVPTR ? lp_kind_names[p->kind] : "unknown");
        lua_setfield(L, -2, "kind");
        lua_pushstring(L, p->dir <= CUSHIM_DIR_INOUT ? lp_dir_names[p->dir] : "unknown");
        lua_setfield(L, -2, "dir");
        lua_pushinteger(L, i + 1);
        lua_setfield(L, -2, "index");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "params");
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, info->id);
    lua_remove(L, -2);
}

static const cushim_api_info *lp_api_arg(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        return lp_eng.host->api_by_id((uint32_t)luaL_checkinteger(L, idx));
    return lp_eng.host->api_by_name(luaL_checkstring(L, idx));
}

/* cushim.api(name or id) -> metadata table or nil */
static int lp_f_api(lua_State *L)
{
    const cushim_api_info *info = lp_api_arg(L, 1);
    if (info == NULL)
        return 0;
    lp_push_api(L, info);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Struct views: call.config.gridDimX, call.gridDim.x (type metadata)       */
/* ------------------------------------------------------------------------ */
#define LP_SVIEW_MT "cushim.struct"

typedef struct lp_sview {
    lp_proxy *px;               /* valid while px->call is the call it was made for */
    uint64_t seq;
    unsigned char *base;
    const cushim_struct_info *si;
    int writable;
} lp_sview;

static void lp_push_sview(lua_State *L, lp_proxy *px, unsigned char *base, const cushim_struct_info *si, int writable)
{
    lp_sview *v = lua_newuserdatauv(L, sizeof *v, 0);
    v->px = px;
    v->seq = px->call->seq;
    v->base = base;
    v->si = si;
    v->writable = writable;
    luaL_setmetatable(L, LP_SVIEW_MT);
}

static lp_sview *lp_sview_live(lua_State *L)
{
    lp_sview *v = lua_touserdata(L, 1);
    if (v == NULL || v->px->call == NULL || v->px->call->seq != v->seq)
        luaL_error(L, "a struct view is valid only while the hook of its call runs");
    return v;
}

static const cushim_field_info *lp_field(const cushim_struct_info *si, const char *name)
{
    for (uint32_t i = 0; name != NULL && i < si->nfields; i++)
        if (!strcmp(si->fields[i].name, name))
            return &si->fields[i];
    return NULL;
}

static uint8_t lp_field_conv(const cushim_field_info *f, uint32_t size)
{
    switch (f->kind) {
    case CUSHIM_KIND_SCALAR:
        return lp_conv_of_type(f->type, strlen(f->type));
    case CUSHIM_KIND_ENUM:
        return LC_INT;
    case CUSHIM_KIND_STRING:
        return LC_STRING;
    case CUSHIM_KIND_HANDLE:
    case CUSHIM_KIND_POINTER:
    case CUSHIM_KIND_DEVPTR:
    case CUSHIM_KIND_CALLBACK:
        return size <= 8 ? LC_UINT : LC_NONE;
    default:
        return LC_NONE;
    }
}

static int lp_sview_index(lua_State *L)
{
    lp_sview *v = lp_sview_live(L);
    const cushim_field_info *f = lp_field(v->si, lua_tostring(L, 2));
    uint32_t esize;
    uint8_t conv;
    if (f == NULL)
        return 0;
    if (f->kind == CUSHIM_KIND_STRUCT && f->struct_type != NULL && f->array_len == 0) {
        lp_push_sview(L, v->px, v->base + f->offset, f->struct_type, v->writable);
        return 1;
    }
    esize = f->array_len ? f->size / f->array_len : f->size;
    conv = lp_field_conv(f, esize);
    if (conv == LC_NONE || (conv != LC_STRING && esize != 1 && esize != 2 && esize != 4 && esize != 8))
        return 0;
    if (f->array_len) {   /* a copy of the elements */
        lua_createtable(L, (int)f->array_len, 0);
        for (uint32_t i = 0; i < f->array_len; i++) {
            lp_push_mem(L, v->base + f->offset + i * esize, conv, (uint8_t)esize);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return 1;
    }
    lp_push_mem(L, v->base + f->offset, conv, (uint8_t)esize);
    if (f->kind == CUSHIM_KIND_ENUM && f->enum_type != NULL && lua_isinteger(L, -1))
        lp_push_enum(L, f->enum_type);
    return 1;
}

static int lp_sview_newindex(lua_State *L)
{
    lp_sview *v = lp_sview_live(L);
    const char *name = luaL_checkstring(L, 2);
    const cushim_field_info *f = lp_field(v->si, name);
    uint8_t conv;
    if (f == NULL)
        return luaL_error(L, "%s has no field '%s'", v->si->name, name);
    if (!v->writable)
        return luaL_error(L, "%s.%s: only a struct passed by value can be changed, before the call", v->si->name,
                          name);
    conv = lp_field_conv(f, f->size);
    if (f->array_len || (conv != LC_INT && conv != LC_UINT && conv != LC_FLOAT && conv != LC_DOUBLE))
        return luaL_error(L, "%s.%s cannot be written from Lua", v->si->name, name);
    if (lp_store_mem(L, 3, v->base + f->offset, conv, (uint8_t)f->size) != 0)
        return luaL_error(L, "%s.%s: %s", v->si->name, name, lua_tostring(L, -1));
    return 0;
}

static int lp_sview_tostring(lua_State *L)
{
    lp_sview *v = lua_touserdata(L, 1);
    lua_pushfstring(L, "%s (struct view)", v->si->name);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The call object                                                          */
/* ------------------------------------------------------------------------ */
static lp_proxy *lp_proxy_live(lua_State *L)
{
    lp_proxy *p = lua_touserdata(L, 1);   /* only our metatable leads here (__metatable hides it) */
    if (p == NULL || p->call == NULL)
        luaL_error(L, "a call object is valid only while its hook runs");
    return p;
}

/* call:raw(name) -> the parameter's own value (a pointer as an integer) */
static int lp_call_raw(lua_State *L)
{
    lp_proxy *p = lp_proxy_live(L);
    const cushim_api_info *info = p->call->info;
    const lp_pdesc *d = lp_desc(info);
    int i = lp_param_index(info, luaL_checkstring(L, 2));
    if (i < 0 || d == NULL)
        return luaL_error(L, "%s has no parameter '%s'", info->name, lua_tostring(L, 2));
    lp_push_mem(L, (char *)p->call->params + lp_eng.host->api_param(info, (uint32_t)i)->offset,
                d[i].conv == LC_STRING ? LC_UINT : d[i].conv, d[i].size);
    return 1;
}

/* call:set_raw(name, value): write the parameter itself, even an output pointer (before only) */
static int lp_call_set_raw(lua_State *L)
{
    lp_proxy *p = lp_proxy_live(L);
    const cushim_api_info *info = p->call->info;
    const lp_pdesc *d = lp_desc(info);
    int i = lp_param_index(info, luaL_checkstring(L, 2));
    if (i < 0 || d == NULL)
        return luaL_error(L, "%s has no parameter '%s'", info->name, lua_tostring(L, 2));
    if (p->after)
        return luaL_error(L, "%s: parameters are changed before the call, not after", info->name);
    if (lp_store_mem(L, 3, (char *)p->call->params + lp_eng.host->api_param(info, (uint32_t)i)->offset,
                     d[i].conv == LC_STRING ? LC_UINT : d[i].conv, d[i].size) != 0)
        return luaL_error(L, "%s.%s: %s", info->name, lua_tostring(L, 2), lua_tostring(L, -1));
    return 0;
}

static int lp_call_index(lua_State *L)
{
    lp_proxy *p = lp_proxy_live(L);
    cushim_call *c = p->call;
    const cushim_api_info *info = c->info;
    const char *key = lua_tostring(L, 2);
    int i;
    if (key == NULL)
        return 0;
    i = lp_param_index(info, key);
    if (i >= 0) {
        const lp_pdesc *d = lp_desc(info);
        if (d == NULL)
            return luaL_error(L, "out of memory");
        lp_push_param(L, p, info, d, c->params, i);
        return 1;
    }
    switch (key[0]) {
    case 'a':
        if (!strcmp(key, "api")) {
            lp_push_api(L, info);
            return 1;
        }
        if (!strcmp(key, "after")) {
            lua_pushboolean(L, p->after);
            return 1;
        }
        break;
    case 'c':
        if (!strcmp(key, "code")) {
            if (!p->after || info->ret_kind == CUSHIM_RET_OTHER)
                return 0;
            lua_pushinteger(L, cushim_call_result(c));
            return 1;
        }
        break;
    case 'd':
        if (!strcmp(key, "depth")) {
            lua_pushinteger(L, c->depth);
            return 1;
        }
        break;
    case 'n':
        if (!strcmp(key, "name")) {
            lua_pushstring(L, info->name);
            return 1;
        }
        break;
    case 'r':
        if (!strcmp(key, "result")) {
            if (!p->after || info->ret_kind == CUSHIM_RET_OTHER)
                return 0;
            lp_push_result(L, info->ret_kind, cushim_call_result(c));
            return 1;
        }
        if (!strcmp(key, "raw")) {
            lua_pushcfunction(L, lp_call_raw);
            return 1;
        }
        break;
    case 's':
        if (!strcmp(key, "seq")) {
            lua_pushinteger(L, (lua_Integer)c->seq);
            return 1;
        }
        if (!strcmp(key, "state")) {
            if (p->state_ref == LUA_NOREF) {
                lua_newtable(L);
                lua_pushvalue(L, -1);
                p->state_ref = luaL_ref(L, LUA_REGISTRYINDEX);
                return 1;
            }
            lua_rawgeti(L, LUA_REGISTRYINDEX, p->state_ref);
            return 1;
        }
        if (!strcmp(key, "skipped")) {
            lua_pushboolean(L, (c->flags & CUSHIM_CALL_SKIPPED) != 0);
            return 1;
        }
        if (!strcmp(key, "set_raw")) {
            lua_pushcfunction(L, lp_call_set_raw);
            return 1;
        }
        break;
    case 't':
        if (!strcmp(key, "tid")) {
            lua_pushinteger(L, (lua_Integer)c->tid);
            return 1;
        }
        break;
    }
    return 0;
}

static int lp_call_newindex(lua_State *L)
{
    lp_proxy *p = lp_proxy_live(L);
    cushim_call *c = p->call;
    const cushim_api_info *info = c->info;
    const char *key = luaL_checkstring(L, 2);
    int i = lp_param_index(info, key);
    if (i >= 0) {
        const lp_pdesc *d = lp_desc(info);
        const cushim_param_info *pi = lp_eng.host->api_param(info, (uint32_t)i);
        char *at = (char *)c->params + pi->offset;
        if (d == NULL)
            return luaL_error(L, "out of memory");
        if (d[i].stype != NULL)
            return luaL_error(L, "%s.%s is a struct: write its fields (call.%s.FIELD = v)", info->name, key, key);
        if (d[i].deref) {
            void *ptr = *(void **)at;
            if (d[i].pconv == LC_STRING || d[i].pconv == LC_CHARBUF)
                return luaL_error(L, "%s.%s: a string output cannot be written", info->name, key);
            if (ptr == NULL)
                return luaL_error(L, "%s.%s: the output pointer is NULL", info->name, key);
            if (lp_store_mem(L, 3, ptr, d[i].pconv, d[i].psize) != 0)
                return luaL_error(L, "%s.%s: %s", info->name, key, lua_tostring(L, -1));
            return 0;
        }
        if (p->after)
            return luaL_error(L, "%s.%s: parameters are changed before the call, not after", info->name, key);
        if (d[i].conv == LC_STRING || d[i].conv == LC_NONE)
            return luaL_error(L, "%s.%s: a %s parameter cannot be written from Lua", info->name, key,
                              d[i].conv == LC_STRING ? "string" : "struct");
        if (lp_store_mem(L, 3, at, d[i].conv, d[i].size) != 0)
            return luaL_error(L, "%s.%s: %s", info->name, key, lua_tostring(L, -1));
        return 0;
    }
    if (!strcmp(key, "result") || !strcmp(key, "code")) {
        int32_t code;
        if (!p->after)
            return luaL_error(L, "%s: the result is set after the call (use 'return cushim.skip(ERROR)' before)",
                              info->name);
        if (lp_result_code(L, 3, info->ret_kind, &code) != 0)
            return luaL_error(L, "%s.result: %s", info->name, lua_tostring(L, -1));
        cushim_call_set_result(c, code);
        return 0;
    }
    return luaL_error(L, "%s has no parameter '%s' (call.state is the place for per-call data)", info->name, key);
}

static int lp_call_tostring(lua_State *L)
{
    lp_proxy *p = lua_touserdata(L, 1);
    if (p == NULL || p->call == NULL)
        lua_pushstring(L, "cushim.call (finished)");
    else
        lua_pushfstring(L, "cushim.call %s #%d", p->call->info->name, (int)p->call->seq);
    return 1;
}

void lp_proxy_new(lua_State *L, lp_thread *t, int depth)
{
    lp_proxy *p = lua_newuserdatauv(L, sizeof *p, 0);
    p->call = NULL;
    p->t = t;
    p->after = 0;
    p->state_ref = LUA_NOREF;
    luaL_setmetatable(L, LP_CALL_MT);
    t->proxy[depth] = p;
    t->proxy_ref[depth] = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* ------------------------------------------------------------------------ */
/* Hook declarations                                                        */
/* ------------------------------------------------------------------------ */
static lp_thread *lp_t(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "cushim.thread");
    lp_thread *t = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return t;
}

static int lp_decl_grow(lp_thread *t)
{
    uint32_t cap = t->capdecl ? t->capdecl * 2 : 16;
    lp_hookdef *d = realloc(t->decl, cap * sizeof *d);
    if (d == NULL)
        return -1;
    t->decl = d;
    int *b = realloc(t->fn_before, cap * sizeof *b);
    if (b == NULL)
        return -1;
    t->fn_before = b;
    int *a = realloc(t->fn_after, cap * sizeof *a);
    if (a == NULL)
        return -1;
    t->fn_after = a;
    t->capdecl = cap;
    return 0;
}

/* Declares (or, in table form, replaces) a hook. Stack: fn_before or nil at bi,
   fn_after or nil at ai (0: absent). */
static void lp_declare(lua_State *L, lp_thread *t, const char *sel, int table_form, int bi, int ai)
{
    uint32_t k = t->ndecl;
    if (!t->loading)
        luaL_error(L, "hooks are declared by the policy's top level, while it loads");
    if (sel[0] == '\0')
        luaL_error(L, "an empty selector");
    if (table_form)
        for (uint32_t i = 0; i < t->ndecl; i++)
            if (t->decl[i].table_form && !strcmp(t->decl[i].select, sel)) {
                k = i;
                break;
            }
    if (k == t->ndecl) {
        char *s, *w;
        luaL_where(L, 2);
        if (t->ndecl == t->capdecl && lp_decl_grow(t) != 0)
            luaL_error(L, "out of memory");
        s = strdup(sel);
        w = strdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        if (s == NULL || w == NULL) {
            free(s);
            free(w);
            luaL_error(L, "out of memory");
        }
        t->decl[k] = (lp_hookdef){.select = s, .where = w, .table_form = (uint8_t)table_form};
        t->fn_before[k] = t->fn_after[k] = LUA_NOREF;
        t->ndecl++;
    }
    if (bi) {
        luaL_unref(L, LUA_REGISTRYINDEX, t->fn_before[k]);
        lua_pushvalue(L, bi);
        t->fn_before[k] = luaL_ref(L, LUA_REGISTRYINDEX);
        t->decl[k].before = 1;
    }
    if (ai) {
        luaL_unref(L, LUA_REGISTRYINDEX, t->fn_after[k]);
        lua_pushvalue(L, ai);
        t->fn_after[k] = luaL_ref(L, LUA_REGISTRYINDEX);
        t->decl[k].after = 1;
    }
}

/* cushim.before[SEL] = f / cushim.after[SEL] = f (upvalue 1: 0 before, 1 after) */
static int lp_decl_set(lua_State *L)
{
    int after = (int)lua_tointegerx(L, lua_upvalueindex(1), NULL);
    lp_thread *t = lp_t(L);
    const char *sel = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    lp_declare(L, t, sel, 1, after ? 0 : 3, after ? 3 : 0);
    return 0;
}

static int lp_decl_get(lua_State *L)
{
    int after = (int)lua_tointegerx(L, lua_upvalueindex(1), NULL);
    lp_thread *t = lp_t(L);
    const char *sel = lua_tostring(L, 2);
    for (uint32_t i = 0; sel != NULL && i < t->ndecl; i++)
        if (t->decl[i].table_form && !strcmp(t->decl[i].select, sel)) {
            int ref = after ? t->fn_after[i] : t->fn_before[i];
            if (ref == LUA_NOREF)
                return 0;
            lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
            return 1;
        }
    return 0;
}

/* cushim.on{select=SEL, before=f, after=g} */
static int lp_f_on(lua_State *L)
{
    lp_thread *t = lp_t(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_getfield(L, 1, "select");   /* 2 */
    lua_getfield(L, 1, "before");   /* 3 */
    lua_getfield(L, 1, "after");    /* 4 */
    if (lua_type(L, 2) != LUA_TSTRING)
        return luaL_error(L, "cushim.on: 'select' must be a selector string");
    if (!lua_isnil(L, 3) && lua_type(L, 3) != LUA_TFUNCTION)
        return luaL_error(L, "cushim.on: 'before' must be a function");
    if (!lua_isnil(L, 4) && lua_type(L, 4) != LUA_TFUNCTION)
        return luaL_error(L, "cushim.on: 'after' must be a function");
    if (lua_isnil(L, 3) && lua_isnil(L, 4))
        return luaL_error(L, "cushim.on: give 'before', 'after' or both");
    lp_declare(L, t, lua_tostring(L, 2), 0, lua_isnil(L, 3) ? 0 : 3, lua_isnil(L, 4) ? 0 : 4);
    return 0;
}

static void lp_decl_table(lua_State *L, int after)
{
    lua_newtable(L);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, after);
    lua_pushcclosure(L, lp_decl_set, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushinteger(L, after);
    lua_pushcclosure(L, lp_decl_get, 1);
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, "cushim hook table");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
}

/* ------------------------------------------------------------------------ */
/* Module functions                                                         */
/* ------------------------------------------------------------------------ */
/* cushim.skip(error) -> (marker, error): 'return cushim.skip(...)' from a before hook */
static int lp_f_skip(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_pushlightuserdata(L, &lp_skip_key);
    lua_pushvalue(L, 1);
    return 2;
}

static int lp_f_now(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)lp_eng.host->now_ns());
    return 1;
}

static int lp_f_thread_id(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)lp_eng.host->thread_id());
    return 1;
}

static void lp_join_args(lua_State *L, int first)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = first; i <= n; i++) {
        luaL_tolstring(L, i, NULL);
        if (i > first)
            luaL_addchar(&b, ' ');
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
}

/* cushim.log(level, ...): one line in the shim's log */
static int lp_f_log(lua_State *L)
{
    static const char *const levels[] = {"debug", "info", "warn", "error", NULL};
    const char *lv = luaL_checkstring(L, 1);
    int level = -1;
    for (int i = 0; levels[i]; i++)
        if (!strcmp(lv, levels[i]))
            level = i;
    if (level < 0)
        return luaL_argerror(L, 1, "debug, info, warn or error");
    if (!lp_eng.host->log_enabled(level))
        return 0;
    lp_join_args(L, 2);
    lp_eng.host->log(lp_eng.self, level, "%s", lua_tostring(L, -1));
    return 0;
}

/* cushim.report(...): one line to report= (default stderr), like print */
static int lp_f_report(lua_State *L)
{
    size_t len;
    const char *s;
    lp_join_args(L, 1);
    s = lua_tolstring(L, -1, &len);
    fwrite(s, 1, len, lp_eng.report);
    fputc('\n', lp_eng.report);
    fflush(lp_eng.report);
    return 0;
}

static int lp_f_at_exit(lua_State *L)
{
    lp_thread *t = lp_t(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->exit_ref);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
}

static int lp_f_stats(lua_State *L)
{
    lp_thread *t = lp_t(L);
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, atomic_load(&lp_eng.live_states));
    lua_setfield(L, -2, "states");
    lua_pushinteger(L, atomic_load(&lp_eng.live_gens));
    lua_setfield(L, -2, "generations");
    lua_pushinteger(L, atomic_load(&lp_eng.reloads));
    lua_setfield(L, -2, "reloads");
    lua_pushinteger(L, atomic_load(&lp_eng.failed_reloads));
    lua_setfield(L, -2, "failed_reloads");
    lua_pushinteger(L, atomic_load(&lp_eng.errors));
    lua_setfield(L, -2, "errors");
    lua_pushinteger(L, (lua_Integer)t->mem.used);
    lua_setfield(L, -2, "memory");
    lua_pushinteger(L, t->gen ? (lua_Integer)t->gen->number : 0);
    lua_setfield(L, -2, "generation");
    return 1;
}

/* cushim.error(name) -> number (any CUresult or cudaError_t name) */
static int lp_f_error(lua_State *L)
{
    uint32_t kind;
    int32_t code;
    const char *name = luaL_checkstring(L, 1);
    if (lp_eng.host->result_by_name(name, &kind, &code) != CUSHIM_OK)
        return luaL_error(L, "unknown error name '%s'", name);
    lua_pushinteger(L, code);
    return 1;
}

/* cushim.C.NAME -> the constant's value (error codes; enum constants with the metadata) */
static int lp_const_index(lua_State *L)
{
    lua_Integer v;
    const char *name = luaL_checkstring(L, 2);
    if (!lp_const_value(L, name, &v))
        return luaL_error(L, "cushim.C: unknown constant '%s'", name);
    lua_pushinteger(L, v);
    return 1;
}

/* cushim.parse_bytes("8GiB") -> 8589934592 */
static int lp_f_parse_bytes(lua_State *L)
{
    const char *s = luaL_checkstring(L, 1);
    char *end;
    double v = strtod(s, &end);
    double mult = 1;
    while (*end == ' ')
        end++;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; break;
    case 'm': case 'M': mult = 1024.0 * 1024; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
    case '\0': case 'b': case 'B': break;
    default: return luaL_error(L, "parse_bytes: '%s' is not a size like 4096, 512K, 8MiB, 8GiB", s);
    }
    if (*end && *end != 'b' && *end != 'B') {
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
    } else if (*end) {
        end++;
    }
    if (*end != '\0' || end == s || v < 0)
        return luaL_error(L, "parse_bytes: '%s' is not a size like 4096, 512K, 8MiB, 8GiB", s);
    lua_pushinteger(L, (lua_Integer)(v * mult));
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Real functions: cushim.real.NAME(inputs...) -> result, outputs...        */
/* ------------------------------------------------------------------------ */
static int lp_real_call(lua_State *L)
{
    const cushim_host *h = lp_eng.host;
    uint32_t id = (uint32_t)lua_tointegerx(L, lua_upvalueindex(1), NULL);
    const cushim_api_info *info = h->api_by_id(id);
    const lp_pdesc *d = info ? lp_desc(info) : NULL;
    _Alignas(16) unsigned char params[512], ret[64];
    uint64_t out[32];
    int arg = 1, nout = 0;
    if (info == NULL || d == NULL)
        return luaL_error(L, "cushim.real: no such API");
    if (!CUSHIM_HOST_HAS(h, call_real))
        return luaL_error(L, "cushim.real: this shim cannot call real functions for plugins (SDK ABI too old)");
    if (info->params_size > sizeof params || info->ret_size > sizeof ret || info->nparams > 32)
        return luaL_error(L, "cushim.real.%s: parameters too large", info->name);
    memset(params, 0, sizeof params);
    memset(ret, 0, sizeof ret);
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = h->api_param(info, i);
        unsigned char *at = params + p->offset;
        if (d[i].deref && d[i].pconv != LC_CHARBUF) {
            out[i] = 0;
            if (p->dir == CUSHIM_DIR_INOUT && !lua_isnoneornil(L, arg)) {
                if (lp_store_mem(L, arg, &out[i], d[i].pconv, d[i].psize) != 0)
                    return luaL_error(L, "cushim.real.%s: argument %d (%s): %s", info->name, arg, p->name,
                                      lua_tostring(L, -1));
            }
            if (p->dir == CUSHIM_DIR_INOUT)
                arg++;
            *(void **)at = &out[i];
            nout++;
            continue;
        }
        if (d[i].conv == LC_STRING) {
            *(const char **)at = lua_isnoneornil(L, arg) ? NULL : luaL_checkstring(L, arg);
            arg++;
            continue;
        }
        if (d[i].conv == LC_NONE || d[i].deref)
            return luaL_error(L, "cushim.real.%s: parameter '%s' (%s) cannot be passed from Lua", info->name,
                              p->name, p->type);
        if (lp_store_mem(L, arg, at, d[i].conv, d[i].size) != 0)
            return luaL_error(L, "cushim.real.%s: argument %d (%s): %s", info->name, arg, p->name,
                              lua_tostring(L, -1));
        arg++;
    }
    if (h->call_real(id, params, ret) != CUSHIM_OK)
        return luaL_error(L, "cushim.real.%s: the real function is not available", info->name);
    if (info->ret_kind == CUSHIM_RET_OTHER)
        lua_pushnil(L);
    else
        lp_push_result(L, info->ret_kind, *(int32_t *)ret);
    luaL_checkstack(L, nout + 1, NULL);
    for (uint32_t i = 0; i < info->nparams; i++)
        if (d[i].deref && d[i].pconv != LC_CHARBUF)
            lp_push_mem(L, &out[i], d[i].pconv, d[i].psize);
    return 1 + nout;
}

/* cushim.real.NAME: NAME exported, or a base name (its newest _vN variant). */
static int lp_real_index(lua_State *L)
{
    static const char *const sfx[] = {"_v4", "_v3", "_v2", ""};
    const char *name = luaL_checkstring(L, 2);
    const cushim_api_info *info = NULL;
    for (int i = 0; i < 4 && info == NULL; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s%s", name, sfx[i]);
        info = lp_eng.host->api_by_name(buf);
    }
    if (info == NULL)
        return luaL_error(L, "cushim.real: no API named '%s' in this build", lua_tostring(L, 2));
    lua_pushinteger(L, info->id);
    lua_pushcclosure(L, lp_real_call, 1);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The module                                                               */
/* ------------------------------------------------------------------------ */
static void lp_meta_table(lua_State *L, lua_CFunction index, const char *name)
{
    lua_newtable(L);
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, index);
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
}

void lp_bridge_open(lua_State *L, lp_thread *t)
{
    static const luaL_Reg funcs[] = {
        {"on", lp_f_on},           {"skip", lp_f_skip},       {"now", lp_f_now},
        {"thread_id", lp_f_thread_id}, {"log", lp_f_log},     {"report", lp_f_report},
        {"at_exit", lp_f_at_exit}, {"stats", lp_f_stats},     {"api", lp_f_api},
        {"error", lp_f_error},     {"parse_bytes", lp_f_parse_bytes}, {NULL, NULL},
    };
    lua_pushlightuserdata(L, t);
    lua_setfield(L, LUA_REGISTRYINDEX, "cushim.thread");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "cushim.apis");
    /* the call object's metatable */
    luaL_newmetatable(L, LP_CALL_MT);
    lua_pushcfunction(L, lp_call_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lp_call_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, lp_call_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, LP_CALL_MT);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    luaL_newmetatable(L, LP_SVIEW_MT);
    lua_pushcfunction(L, lp_sview_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lp_sview_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, lp_sview_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, LP_SVIEW_MT);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);

    lua_newtable(L);
    luaL_setfuncs(L, funcs, 0);
    lp_decl_table(L, 0);
    lua_setfield(L, -2, "before");
    lp_decl_table(L, 1);
    lua_setfield(L, -2, "after");
    lp_meta_table(L, lp_real_index, "cushim.real");
    lua_setfield(L, -2, "real");
    lp_meta_table(L, lp_const_index, "cushim.C");
    lua_setfield(L, -2, "C");
    lp_shared_open(L);
    lua_setfield(L, -2, "shared");
    lua_newtable(L);
    for (uint32_t i = 0; i < lp_eng.o.nopts; i++) {
        lua_pushstring(L, lp_eng.o.values[i]);
        lua_setfield(L, -2, lp_eng.o.keys[i]);
    }
    lua_setfield(L, -2, "options");
    lua_pushinteger(L, t->gen ? (lua_Integer)t->gen->number : 0);
    lua_setfield(L, -2, "generation");
    lua_pushstring(L, lp_eng.o.script);
    lua_setfield(L, -2, "script");
    lua_pushinteger(L, (lua_Integer)lp_eng.host->cuda_version);
    lua_setfield(L, -2, "cuda_version");
    lua_setglobal(L, "cushim");
}
