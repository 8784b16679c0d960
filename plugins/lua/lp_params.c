/*
 * lp_params.c - a call's parameters read for Lua: the common kinds inline (lp_params.h), the others
 * here - struct views (call.config.gridDimX, call.gridDim.x, from the type metadata), character
 * buffers sized by another parameter, enums by name, and reads the driver did not vouch for.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_engine.h"
#include "lp_load.h"
#include "lp_params.h"
#include "lp_values.h"

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

void lp_push_sview(lua_State *L, lp_proxy *px, unsigned char *base, const cushim_struct_info *si, int writable)
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
    lp_sview *v = luaL_checkudata(L, 1, LP_SVIEW_MT);
    if (v->px->call == NULL || v->px->call->seq != v->seq)
        luaL_error(L, "a struct view is valid only while the hook of its call runs");
    return v;
}

static const cushim_field_info *lp_field(const cushim_struct_info *si, const char *name)
{
    for (uint32_t i = 0; name != NULL && i < si->nfields; i++) {
        const cushim_field_info *f = cushim_struct_field(lp_eng.host, si, i);   /* never si->fields[i] */
        if (f != NULL && !strcmp(f->name, name))
            return f;
    }
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
    lp_sview *v = luaL_checkudata(L, 1, LP_SVIEW_MT);
    lua_pushfstring(L, "%s (struct view)", v->si->name);
    return 1;
}

/* The struct views' metatable (once per state, lp_call_metatables). */
void lp_sview_metatable(lua_State *L)
{
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
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */
/* The uncommon kinds: a struct view, a char buffer sized by another parameter, an enum by name. */
static __attribute__((noinline)) void lp_push_param_other(lua_State *L, lp_proxy *px, const cushim_api_info *info,
                                                          const lp_pdesc *d, void *params, int i)
{
    const char *at = (const char *)params + d[i].offset;
    int trusted = lp_trusted(px, info);
    if (d[i].stype != NULL) {
        unsigned char *base = d[i].sptr ? *(unsigned char *const *)at : (unsigned char *)at;
        /* a struct by pointer the driver did not vouch for: nil where it cannot be read (one check a view) */
        if (base == NULL || (d[i].sptr && !trusted && lp_mem_readable(base, d[i].stype->size) == 0))
            lua_pushnil(L);
        else
            lp_push_sview(L, px, base, d[i].stype, !d[i].sptr && !px->after);
        return;
    }
    if (d[i].deref) {
        const void *ptr = *(void *const *)at;
        uint64_t w = 0;
        if (ptr == NULL) {
            lua_pushnil(L);
        } else if (d[i].pconv == LC_CHARBUF) {
            lua_Integer n = 0;
            const cushim_param_info *p = lp_eng.host->api_param(info, (uint32_t)i);
            const cushim_param_info *c = lp_eng.host->api_param(info, (uint32_t)p->count_param);
            if (c != NULL && d[p->count_param].conv != LC_NONE && d[p->count_param].size <= 8) {
                lp_push_mem(L, (const char *)params + c->offset, d[p->count_param].conv, d[p->count_param].size);
                n = lua_tointegerx(L, -1, NULL);
                lua_pop(L, 1);
            }
            if (n <= 0)
                lua_pushliteral(L, "");
            else if (trusted)
                lua_pushlstring(L, ptr, strnlen(ptr, (size_t)n));
            else   /* the length the program gave, which the driver has not checked: at most LP_STR_MAX */
                lp_push_cstr(L, ptr, (uint64_t)n < LP_STR_MAX ? (size_t)n : LP_STR_MAX);
        } else if (!trusted && !lp_read_in(&w, ptr, d[i].psize)) {
            lua_pushnil(L);
        } else {
            lp_push_mem(L, trusted ? ptr : (const void *)&w, d[i].pconv, d[i].psize);
            if (d[i].etype != NULL && lua_isinteger(L, -1))
                lp_push_enum(L, d[i].etype);
        }
        return;
    }
    lp_push_mem(L, at, d[i].conv, d[i].size);
    if (d[i].etype != NULL && lua_isinteger(L, -1))
        lp_push_enum(L, d[i].etype);
}

/* Reads parameter i of 'params' (through an output pointer where the
   descriptor says so; a struct as a view). */
void lp_push_param(lua_State *L, lp_proxy *px, const cushim_api_info *info, const lp_pdesc *d, void *params,
                   int i)
{
    const lp_pdesc *e = &d[i];
    const char *at = (const char *)params + e->offset;
    if (e->stype == NULL && e->etype == NULL) {   /* the usual: a number, or one read through a pointer */
        if (!e->deref) {
            lp_push_mem(L, at, e->conv, e->size);
            return;
        }
        if (e->pconv != LC_CHARBUF && lp_trusted(px, info)) {
            const void *ptr = *(void *const *)at;
            if (ptr != NULL)
                lp_push_mem(L, ptr, e->pconv, e->psize);
            else
                lua_pushnil(L);
            return;
        }
    }
    lp_push_param_other(L, px, info, d, params, i);
}
