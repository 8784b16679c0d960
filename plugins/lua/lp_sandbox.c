/*
 * lp_sandbox.c - what a policy can reach, and the bounds it cannot get out of
 * (docs/lua-policies.md, "Bounds").
 *
 *   the sandbox   the libraries allow= permits; load() of text only; print() to report=
 *   the budget    (lp_budget.c) resumed coroutines charged, and stopped ones recognised
 *   its guards    what would run Lua code out of the hook's sight or take the hook away:
 *                 a metatable with '__gc' (Lua runs finalizers with hooks off); an xpcall
 *                 message handler or a coroutine's __close run for an error the hook raised
 *                 (Lua runs both with hooks still off); debug.sethook
 *
 * Lua's pcall, xpcall and coroutines catch every error, the budget's too. So a run that has
 * spent its budget is not stopped by one error: the hook then fires on every instruction of
 * the thread that runs and raises each time. Whatever catches the error, its next instruction
 * raises again, until the error leaves the policy's outermost function for the plugin's
 * lua_pcall. A coroutine that spends it dies the same way, and so does every coroutine or
 * function that runs after it (lp_state.c and lp_hooks.c also fail a run that returned with 'spent' set).
 *
 * The wrappers call the library's own C functions by pointer (lp_orig), never through an
 * upvalue: with allow=debug, debug.getupvalue would hand the original to the policy.
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include "lp_budget.h"
#include "lp_engine.h"
#include "lp_load.h"
#include "lp_pattern.h"
#include "lp_report.h"
#include "lp_sandbox.h"

/* ------------------------------------------------------------------------ */
/* The library's functions that the guards wrap                             */
/* ------------------------------------------------------------------------ */
enum { LP_O_LOAD, LP_O_SETMT, LP_O_XPCALL, LP_O_RESUME, LP_O_CREATE, LP_O_CLOSE, LP_O_DEBUG_SETMT, LP_O_N };
/* Every state's liblua is the one library (lp_load.c): the same functions for all. */
static _Atomic(lua_CFunction) lp_orig[LP_O_N];

static inline lua_CFunction lp_original(int slot)
{
    return atomic_load_explicit(&lp_orig[slot], memory_order_relaxed);
}

/* Field 'name' of the table at -1: its C function kept in lp_orig[slot], and replaced by 'f' unless NULL. */
static void lp_guard(lua_State *L, const char *name, int slot, lua_CFunction f)
{
    lua_CFunction o;
    lua_getfield(L, -1, name);
    o = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    if (o == NULL)
        luaL_error(L, "this liblua's '%s' is not a C function: cannot guard it", name);
    atomic_store_explicit(&lp_orig[slot], o, memory_order_relaxed);
    if (f != NULL) {
        lua_pushcfunction(L, f);
        lua_setfield(L, -2, name);
    }
}

/* load(chunk [, name [, mode [, env]]]) with mode "t" unless allow=bytecode. */
static int lp_load_text(lua_State *L)
{
    if (lua_gettop(L) < 3)
        lua_settop(L, 3);
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    return lp_original(LP_O_LOAD)(L);
}

/* A metatable with a '__gc' field makes its object finalizable, and Lua runs finalizers with
   hooks off (lgc.c, GCTM) in whatever allocation of a later run collects the object, or in
   lua_close: a finalizer that loops would hang a CUDA call, the program's start or its exit.
   Refused, whatever the field holds (the object is marked by the field's presence, at
   setmetatable; a field added later marks nothing). */
static void lp_no_finalizer(lua_State *L, int mt)
{
    if (lua_type(L, mt) != LUA_TTABLE)
        return;
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, mt) != LUA_TNIL)
        luaL_error(L, "a metatable with __gc: finalizers run outside the instruction budget, so a policy "
                      "cannot have them");
    lua_pop(L, 1);
}

static int lp_setmetatable(lua_State *L)
{
    lp_no_finalizer(L, 2);
    return lp_original(LP_O_SETMT)(L);
}

static int lp_debug_setmetatable(lua_State *L)
{
    lp_no_finalizer(L, 2);
    return lp_original(LP_O_DEBUG_SETMT)(L);
}

static int lp_debug_sethook(lua_State *L)
{
    return luaL_error(L, "debug.sethook: the count hook is the plugin's instruction budget (budget=)");
}

/* The message handler xpcall gets: the policy's (upvalue 1), unless the budget is spent. Lua calls
   the handler of an error the hook raised from inside the hook, with hooks off (ldebug.c,
   luaG_errormsg): a handler that loops would never be stopped. Then the error is left as it is. */
static int lp_msgh(lua_State *L)
{
    if (lp_state_thread(L)->spent)
        return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* xpcall(f, msgh, ...) */
static int lp_xpcall(lua_State *L)
{
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, lp_msgh, 1);
    lua_replace(L, 2);
    return lp_original(LP_O_XPCALL)(L);   /* yieldable: its continuation finishes this frame */
}

/* coroutine.resume(co, ...) */
static int lp_co_resume(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    int n;
    if (co != NULL)
        lp_budget_resume(L, co);
    n = lp_original(LP_O_RESUME)(L);   /* a type error when arg 1 is no coroutine */
    if (lp_state_thread(L)->spent)     /* the coroutine spent it: this thread's next instruction raises */
        lua_sethook(L, lp_budget_hook, LUA_MASKCOUNT, 1);
    return n;
}

/* coroutine.close(co) */
static int lp_co_close(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    if (co != NULL && co != L && lua_status(co) != LUA_OK && lua_status(co) != LUA_YIELD && lp_budget_stopped(co)) {
        lua_pushboolean(L, 0);
        lua_pushfstring(L, "instruction budget of %d exceeded (budget=): its to-be-closed variables are not closed",
                        (int)lp_eng.o.budget);
        return 2;
    }
    return lp_original(LP_O_CLOSE)(L);
}

/* The function coroutine.wrap returns: a resume as above, then what 5.4's own does (lcorolib.c,
   auxwrap): the values yielded or returned; or the coroutine's error raised again, after its
   pending to-be-closed variables are closed (coroutine.close), with its position when a string. */
static int lp_co_wrapped(lua_State *L)
{
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int n, st;
    if (co == NULL)   /* debug.setupvalue replaced it */
        return luaL_error(L, "a wrapped coroutine's function whose coroutine is gone");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    n = lp_co_resume(L);
    if (lua_toboolean(L, -n))
        return n - 1;
    st = lua_status(co);
    if (st != LUA_OK && st != LUA_YIELD && !lp_budget_stopped(co)) {   /* it died of the error */
        lua_pushcfunction(L, lp_original(LP_O_CLOSE));
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_call(L, 1, 2);                   /* false and the error (of a closing method, if one raised) */
        if (lua_toboolean(L, -2))
            lua_pop(L, 2);
    }
    if (st != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

/* coroutine.wrap(f) */
static int lp_co_wrap(lua_State *L)
{
    lp_original(LP_O_CREATE)(L);   /* checks f; pushes the new coroutine */
    lua_pushcclosure(L, lp_co_wrapped, 1);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The sandbox                                                              */
/* ------------------------------------------------------------------------ */
/* print(...): one line to the report sink (report=, default stderr). */
static int lp_print(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        luaL_tolstring(L, i, NULL);
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    {
        size_t l;
        const char *s = lua_tolstring(L, -1, &l);
        lp_report_write(s, l);
    }
    return 0;
}

/* Opens a library; leaves its table on the stack. */
static void lp_open_lib(lua_State *L, const char *name, lua_CFunction f)
{
    luaL_requiref(L, name, f, 1);
}

void lp_sandbox_open(lua_State *L)
{
    uint32_t allow = lp_eng.o.allow;
    lp_open_lib(L, LUA_GNAME, luaopen_base);
    lp_guard(L, "setmetatable", LP_O_SETMT, lp_setmetatable);
    lp_guard(L, "xpcall", LP_O_XPCALL, lp_xpcall);
    if (!(allow & LP_ALLOW_BYTECODE))
        lp_guard(L, "load", LP_O_LOAD, lp_load_text);
    if (!(allow & LP_ALLOW_IO)) {   /* the base library's file access goes with io */
        lua_pushnil(L);
        lua_setfield(L, -2, "dofile");
        lua_pushnil(L);
        lua_setfield(L, -2, "loadfile");
    }
    lua_pushcfunction(L, lp_print);
    lua_setfield(L, -2, "print");
    lua_pop(L, 1);
    lp_open_lib(L, LUA_COLIBNAME, luaopen_coroutine);
    lp_guard(L, "create", LP_O_CREATE, NULL);
    lp_guard(L, "close", LP_O_CLOSE, lp_co_close);
    lp_guard(L, "resume", LP_O_RESUME, lp_co_resume);
    lua_pushcfunction(L, lp_co_wrap);
    lua_setfield(L, -2, "wrap");
    lua_pop(L, 1);
    lp_open_lib(L, LUA_STRLIBNAME, luaopen_string);
    lp_pattern_open(L);   /* the matcher that charges its steps (the string metatable's __index is this table) */
    lp_open_lib(L, LUA_TABLIBNAME, luaopen_table);
    lp_open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    lp_open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
    lua_pop(L, 4);
    if (allow & LP_ALLOW_OS) {
        lp_open_lib(L, LUA_OSLIBNAME, luaopen_os);
        lua_pop(L, 1);
    }
    if (allow & LP_ALLOW_IO) {
        lp_open_lib(L, LUA_IOLIBNAME, luaopen_io);
        lua_pop(L, 1);
    }
    if (allow & LP_ALLOW_DEBUG) {
        lp_open_lib(L, LUA_DBLIBNAME, luaopen_debug);
        lp_guard(L, "setmetatable", LP_O_DEBUG_SETMT, lp_debug_setmetatable);
        lua_pushcfunction(L, lp_debug_sethook);
        lua_setfield(L, -2, "sethook");
        lua_pop(L, 1);
    }
    if (allow & LP_ALLOW_REQUIRE) {
        lp_open_lib(L, LUA_LOADLIBNAME, luaopen_package);
        if (!(allow & LP_ALLOW_CMODULES)) {
            /* searchers: preload and Lua files only; no C libraries */
            lua_getfield(L, -1, "searchers");
            lua_pushnil(L);
            lua_rawseti(L, -2, 4);
            lua_pushnil(L);
            lua_rawseti(L, -2, 3);
            lua_pop(L, 1);
            lua_pushliteral(L, "");
            lua_setfield(L, -2, "cpath");
            lua_pushnil(L);
            lua_setfield(L, -2, "loadlib");
        }
        lua_pop(L, 1);
    }
}
