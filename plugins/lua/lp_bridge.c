/*
 * lp_bridge.c - the 'cushim' module a policy sees: hook declarations, skip,
 * shared state, clock, logging, options, real functions, constants
 * (docs/lua-policies.md is the reference). The call object is in lp_call.c,
 * value conversions in lp_values.c.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cushim/cushim_io.h"
#include "lp_bridge.h"
#include "lp_call.h"
#include "lp_engine.h"
#include "lp_gen.h"
#include "lp_load.h"
#include "lp_report.h"
#include "lp_shared.h"
#include "lp_values.h"

char lp_skip_key;

/* ------------------------------------------------------------------------ */
/* Hook declarations                                                        */
/* ------------------------------------------------------------------------ */
static lp_thread *lp_t(lua_State *L)
{
    return lp_state_thread(L);
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

static char *lp_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *lp_format(const char *fmt, ...)
{
    char *out = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&out, fmt, ap) < 0)
        out = NULL;
    va_end(ap);
    return out;
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
        if (t->ndecl >= LP_MAX_HOOKS)
            luaL_error(L, "more than %d hook declarations", LP_MAX_HOOKS);
        luaL_where(L, 1);   /* the Lua line that declares the hook */
        if (t->ndecl == t->capdecl && lp_decl_grow(t) != 0)
            luaL_error(L, "out of memory");
        s = strdup(sel);
        {   /* "policy.lua:12: " -> "/dir/policy.lua:12:" (Lua names the chunk by its base name) */
            const char *lw = lua_tostring(L, -1), *base = lp_script_base();
            size_t bn = strlen(base), wn = strlen(lw);
            while (wn > 0 && lw[wn - 1] == ' ')
                wn--;
            if (!strncmp(lw, base, bn) && lw[bn] == ':')
                w = lp_format("%s%.*s", lp_eng.o.script, (int)(wn - bn), lw + bn);
            else
                w = lp_format("%.*s", (int)wn, lw);
        }
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
    lua_pushliteral(L, "\n");
    lua_concat(L, 2);
    s = lua_tolstring(L, -1, &len);
    lp_report_write(s, len);
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
    double v = cushim_strtod(s, &end);   /* "1.5GiB" whatever the program's LC_NUMERIC */
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
    /* NaN and sizes past 2^63 are no lua_Integer (their conversion is undefined) */
    if (*end != '\0' || end == s || !(v >= 0) || !(v * mult < 9223372036854775808.0))
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
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "cushim.apis");
    lp_call_metatables(L);

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
