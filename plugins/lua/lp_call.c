/*
 * lp_call.c - the call object a hook receives (struct views: lp_params.c), and the API
 * metadata tables. The call object is a full userdata per nesting depth per
 * state, reused for every call (no allocation per call); it points at the
 * host's call frame only while its hook runs. Parameters are found by their
 * header names (host->api_param) and read by lp_params.c, lp_values.c.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cushim/cushim_io.h>

#include "lp_call.h"
#include "lp_engine.h"
#include "lp_gen.h"
#include "lp_load.h"
#include "lp_params.h"
#include "lp_values.h"

#define LP_CALL_MT "cushim.call"

/* ------------------------------------------------------------------------ */
/* Metadata tables                                                          */
/* ------------------------------------------------------------------------ */
static const char *const lp_kind_names[] = {"unknown", "scalar", "enum", "handle", "pointer",
                                            "string", "struct", "callback", "devptr"};
static const char *const lp_dir_names[] = {"unknown", "in", "out", "inout"};

void lp_push_api(lua_State *L, const cushim_api_info *info)
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
int lp_f_api(lua_State *L)
{
    const cushim_api_info *info = lp_api_arg(L, 1);
    if (info == NULL)
        return 0;
    lp_push_api(L, info);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Parameter names as strings of one state                                  */
/* ------------------------------------------------------------------------ */
/* Lua interns its short strings: within one state, every string with the
   text of a parameter name (the constant "bytesize" of call.bytesize, or one
   made at run time) is the one object, as long as that object lives. So
   once per API per state the names are pushed (and kept alive as the user
   values of this record's userdata) and their addresses recorded: the call
   object's __index and __newindex then find a parameter by comparing the
   key's address with these, no string compared. A name Lua does not intern
   (longer than its short-string limit) makes 'interned' 0, and a key that
   matches no address is then looked up by text too. */
typedef struct lp_pnames {
    const cushim_api_info *info;
    const lp_pdesc *d;          /* the API's conversion descriptors               */
    uint32_t n;
    int interned;               /* every name's text has only this one object     */
    const char *key[];          /* per parameter: the name's address, NULL if none */
} lp_pnames;

void lp_pnames_free(lp_thread *t)
{
    free(t->pnames);   /* the records are Lua's, freed with the state */
    t->pnames = NULL;
}

/* Inside a protected call (a Lua error is caught by its pcall). NULL: no record
   (out of memory): the caller looks the name up by text. */
static lp_pnames *lp_pnames_of(lua_State *L, lp_thread *t, const cushim_api_info *info)
{
    const lp_gen *g = t->gen;
    uint32_t slot;
    lp_pnames *pn;
    const lp_pdesc *d;
    if (g == NULL || info->id >= g->id_limit || (slot = g->dense[info->id]) == 0)
        return NULL;
    if (t->pnames == NULL && (t->pnames = calloc(g->nhooked, sizeof *t->pnames)) == NULL)
        return NULL;
    if ((pn = t->pnames[slot - 1]) != NULL)
        return pn;
    if ((d = lp_desc(info)) == NULL)
        return NULL;
    pn = lua_newuserdatauv(L, sizeof *pn + sizeof(const char *) * info->nparams, (int)info->nparams);
    pn->info = info;
    pn->d = d;
    pn->n = info->nparams;
    pn->interned = 1;
    for (uint32_t i = 0; i < info->nparams; i++) {
        const cushim_param_info *p = lp_eng.host->api_param(info, i);
        size_t len = p != NULL && p->name != NULL ? strlen(p->name) : 0;
        const char *a, *b;
        pn->key[i] = NULL;
        if (len == 0)
            continue;
        a = lua_pushlstring(L, p->name, len);
        b = lua_pushlstring(L, p->name, len);   /* the same object only if interned */
        if (a != b)
            pn->interned = 0;
        lua_pop(L, 1);
        lua_setiuservalue(L, -2, (int)i + 1);
        pn->key[i] = a;
    }
    (void)luaL_ref(L, LUA_REGISTRYINDEX);   /* kept until the state closes */
    t->pnames[slot - 1] = pn;
    return pn;
}

/* The parameter named by the string 'key' (stack index 2), or -1; *d its API's descriptors. */
static int lp_param_of(lua_State *L, lp_proxy *p, const char *key, const lp_pdesc **d)
{
    const cushim_api_info *info = p->call->info;
    lp_pnames *pn = lp_pnames_of(L, p->t, info);
    int i;
    if (pn != NULL) {
        p->pn = pn;
        *d = pn->d;
        for (uint32_t k = 0; k < pn->n; k++)
            if (pn->key[k] == key)
                return (int)k;
        if (pn->interned)
            return -1;
    }
    i = lp_param_index(info, key);
    if (i >= 0 && (*d = lp_desc(info)) == NULL)
        luaL_error(L, "out of memory");
    return i;
}

/* ------------------------------------------------------------------------ */
/* The call object                                                          */
/* ------------------------------------------------------------------------ */
/* Argument 1 as one of this state's call objects, or NULL. Every C function that takes a call object
   checks it: they are reachable with anything in their place (call.raw(call.config, ...) passed a struct
   view; debug.getmetatable hands out the metamethods). The check is identity with the state's own call
   objects (t->proxy, one per depth): what luaL_testudata(L, 1, LP_CALL_MT) would say, and more (not
   another state's), without its registry lookup on the hot path (lp_call_index). */
static inline lp_proxy *lp_proxy_test(lua_State *L)
{
    void *p = lua_touserdata(L, 1);   /* NULL, a light userdata or a full userdata's block */
    lp_thread *t = lp_state_thread(L);
    for (int d = 0; p != NULL && d < LP_MAX_DEPTH; d++)
        if (p == t->proxy[d])
            return p;
    return NULL;
}

static lp_proxy *lp_proxy_live(lua_State *L)
{
    lp_proxy *p = lp_proxy_test(L);
    if (p == NULL)
        luaL_typeerror(L, 1, LP_CALL_MT);
    if (p->call == NULL)
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

static int lp_call_index_slow(lua_State *L, lp_proxy *p, const char *key, int not_param);

/* call.NAME: the hot path reads a parameter of the API whose names this call object matched last
   (lp_pnames), everything else goes to lp_call_index_slow. */
static int lp_call_index(lua_State *L)
{
    lp_proxy *p = lp_proxy_test(L);
    const char *key = lua_tostring(L, 2);
    const lp_pnames *pn;
    if (p != NULL && p->call != NULL && key != NULL && (pn = p->pn) != NULL && pn->info == p->call->info) {
        for (uint32_t k = 0; k < pn->n; k++)
            if (pn->key[k] == key) {
                lp_push_param_inl(L, p, pn->info, pn->d, p->call->params, (int)k);
                return 1;
            }
        return lp_call_index_slow(L, p, key, pn->interned);   /* call.result, call.state, ... */
    }
    return lp_call_index_slow(L, p, key, 0);
}

/* 'not_param': the key is known to name no parameter. */
static __attribute__((noinline)) int lp_call_index_slow(lua_State *L, lp_proxy *p, const char *key, int not_param)
{
    cushim_call *c;
    const cushim_api_info *info;
    const lp_pdesc *d = NULL;
    int i;
    if (p == NULL)
        return luaL_typeerror(L, 1, LP_CALL_MT);
    if (p->call == NULL)
        return luaL_error(L, "a call object is valid only while its hook runs");
    c = p->call;
    info = c->info;
    if (key == NULL)
        return 0;
    i = not_param ? -1 : lp_param_of(L, p, key, &d);
    if (i >= 0) {
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
    const lp_pdesc *d = NULL;
    int i = lp_param_of(L, p, key, &d);
    if (i >= 0) {
        char *at = (char *)c->params + d[i].offset;
        if (d[i].stype != NULL)
            return luaL_error(L, "%s.%s is a struct: write its fields (call.%s.FIELD = v)", info->name, key, key);
        if (d[i].deref) {
            void *ptr = *(void **)at;
            if (d[i].pconv == LC_STRING || d[i].pconv == LC_CHARBUF)
                return luaL_error(L, "%s.%s: a string output cannot be written", info->name, key);
            if (ptr == NULL)
                return luaL_error(L, "%s.%s: the output pointer is NULL", info->name, key);
            /* not vouched for (lp_trusted): a pointer the driver would refuse with an error must not fault */
            if (!lp_trusted(p, info) && lp_mem_readable(ptr, d[i].psize) == 0)
                return luaL_error(L, "%s.%s: the output pointer %p points at no memory of the program", info->name,
                                  key, ptr);
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
    lp_proxy *p = lp_proxy_test(L);
    if (p == NULL)
        return luaL_typeerror(L, 1, LP_CALL_MT);
    if (p->call == NULL)
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
    p->vouched = 0;
    p->state_ref = LUA_NOREF;
    p->pn = NULL;
    luaL_setmetatable(L, LP_CALL_MT);
    t->proxy[depth] = p;
    t->proxy_ref[depth] = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* The metatables of call objects and struct views (once per state). */
void lp_call_metatables(lua_State *L)
{
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
    lp_sview_metatable(L);

}
