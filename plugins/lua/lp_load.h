/*
 * lp_load.h - the Lua 5.4 C API, called through a table of pointers.
 *
 * The plugin never links liblua: a host program may have its own Lua or
 * LuaJIT loaded globally, and 'lua_*' symbols of ours would bind to it (or
 * its to ours). lp_lua_open() (lp_load.c) opens liblua5.4.so.0 privately
 * (RTLD_DEEPBIND, or a new link-map namespace) and fills 'lp_lua' with dlsym
 * on that handle. Below, every API name is redefined to its slot, so the
 * headers' own macros (lua_pop, lua_pcall, luaL_checkstring, ...) expand to
 * calls through the table too. A name missing from the list is an undefined
 * reference, which the plugin's -Wl,--no-undefined link refuses.
 */
#ifndef LP_LOAD_H
#define LP_LOAD_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define LP_LUA_FUNCS(X)                                                                          \
    X(lua_newstate) X(lua_close) X(lua_atpanic) X(lua_version) X(lua_settop) X(lua_gettop)       \
    X(lua_pushvalue) X(lua_rotate) X(lua_copy) X(lua_absindex) X(lua_checkstack) X(lua_type)     \
    X(lua_typename) X(lua_tonumberx) X(lua_tointegerx) X(lua_toboolean) X(lua_tolstring)         \
    X(lua_touserdata) X(lua_rawlen) X(lua_isinteger) X(lua_isnumber) X(lua_isstring)             \
    X(lua_rawequal) X(lua_pushnil) X(lua_pushnumber) X(lua_pushinteger) X(lua_pushlstring)       \
    X(lua_pushstring) X(lua_pushfstring) X(lua_pushcclosure) X(lua_pushboolean)                  \
    X(lua_pushlightuserdata) X(lua_getglobal) X(lua_setglobal) X(lua_getfield) X(lua_setfield)   \
    X(lua_gettable) X(lua_settable) X(lua_rawget) X(lua_rawgeti) X(lua_rawset) X(lua_rawseti)   \
    X(lua_createtable) X(lua_newuserdatauv) X(lua_getmetatable) X(lua_setmetatable)             \
    X(lua_pcallk) X(lua_callk) X(lua_error) X(lua_next) X(lua_sethook) X(lua_gc) X(lua_concat)   \
    X(lua_getiuservalue) X(lua_setiuservalue) X(lua_setwarnf) X(lua_gethookcount) X(lua_tocfunction) \
    X(lua_tothread) X(lua_status)                                                                \
    X(luaL_loadbufferx) X(luaL_traceback) X(luaL_error) X(luaL_checklstring)                     \
    X(luaL_optlstring) X(luaL_checkinteger) X(luaL_optinteger) X(luaL_checknumber)               \
    X(luaL_optnumber) X(luaL_checktype) X(luaL_checkany) X(luaL_argerror) X(luaL_typeerror)      \
    X(luaL_newmetatable) X(luaL_setmetatable) X(luaL_checkudata) X(luaL_testudata)               \
    X(luaL_setfuncs) X(luaL_requiref) X(luaL_ref) X(luaL_unref) X(luaL_tolstring)               \
    X(luaL_checkstack) X(luaL_checkversion_) X(luaL_getsubtable) X(luaL_where)  \
    X(luaL_buffinit) X(luaL_addvalue) X(luaL_pushresult) X(luaL_prepbuffsize) X(luaL_addlstring)                   \
    X(luaopen_base) X(luaopen_string) X(luaopen_table) X(luaopen_math) X(luaopen_utf8)           \
    X(luaopen_coroutine) X(luaopen_os) X(luaopen_io) X(luaopen_debug) X(luaopen_package)

typedef struct lp_lua_api {
#define LP_LUA_SLOT(n) __typeof__(&n) p_##n;
    LP_LUA_FUNCS(LP_LUA_SLOT)
#undef LP_LUA_SLOT
} lp_lua_api;

/* Filled once by lp_lua_open; read-only afterwards. */
extern lp_lua_api lp_lua __attribute__((visibility("hidden")));

/* Every name of LP_LUA_FUNCS, redirected to its slot. */
#define lua_newstate (lp_lua.p_lua_newstate)
#define lua_close (lp_lua.p_lua_close)
#define lua_atpanic (lp_lua.p_lua_atpanic)
#define lua_version (lp_lua.p_lua_version)
#define lua_settop (lp_lua.p_lua_settop)
#define lua_gettop (lp_lua.p_lua_gettop)
#define lua_pushvalue (lp_lua.p_lua_pushvalue)
#define lua_rotate (lp_lua.p_lua_rotate)
#define lua_copy (lp_lua.p_lua_copy)
#define lua_absindex (lp_lua.p_lua_absindex)
#define lua_checkstack (lp_lua.p_lua_checkstack)
#define lua_type (lp_lua.p_lua_type)
#define lua_typename (lp_lua.p_lua_typename)
#define lua_tonumberx (lp_lua.p_lua_tonumberx)
#define lua_tointegerx (lp_lua.p_lua_tointegerx)
#define lua_toboolean (lp_lua.p_lua_toboolean)
#define lua_tolstring (lp_lua.p_lua_tolstring)
#define lua_touserdata (lp_lua.p_lua_touserdata)
#define lua_rawlen (lp_lua.p_lua_rawlen)
#define lua_isinteger (lp_lua.p_lua_isinteger)
#define lua_isnumber (lp_lua.p_lua_isnumber)
#define lua_isstring (lp_lua.p_lua_isstring)
#define lua_rawequal (lp_lua.p_lua_rawequal)
#define lua_pushnil (lp_lua.p_lua_pushnil)
#define lua_pushnumber (lp_lua.p_lua_pushnumber)
#define lua_pushinteger (lp_lua.p_lua_pushinteger)
#define lua_pushlstring (lp_lua.p_lua_pushlstring)
#define lua_pushstring (lp_lua.p_lua_pushstring)
#define lua_pushfstring (lp_lua.p_lua_pushfstring)
#define lua_pushcclosure (lp_lua.p_lua_pushcclosure)
#define lua_pushboolean (lp_lua.p_lua_pushboolean)
#define lua_pushlightuserdata (lp_lua.p_lua_pushlightuserdata)
#define lua_getglobal (lp_lua.p_lua_getglobal)
#define lua_setglobal (lp_lua.p_lua_setglobal)
#define lua_getfield (lp_lua.p_lua_getfield)
#define lua_setfield (lp_lua.p_lua_setfield)
#define lua_gettable (lp_lua.p_lua_gettable)
#define lua_settable (lp_lua.p_lua_settable)
#define lua_rawget (lp_lua.p_lua_rawget)
#define lua_rawgeti (lp_lua.p_lua_rawgeti)
#define lua_rawset (lp_lua.p_lua_rawset)
#define lua_rawseti (lp_lua.p_lua_rawseti)
#define lua_createtable (lp_lua.p_lua_createtable)
#define lua_newuserdatauv (lp_lua.p_lua_newuserdatauv)
#define lua_getmetatable (lp_lua.p_lua_getmetatable)
#define lua_setmetatable (lp_lua.p_lua_setmetatable)
#define lua_pcallk (lp_lua.p_lua_pcallk)
#define lua_callk (lp_lua.p_lua_callk)
#define lua_error (lp_lua.p_lua_error)
#define lua_next (lp_lua.p_lua_next)
#define lua_sethook (lp_lua.p_lua_sethook)
#define lua_gc (lp_lua.p_lua_gc)
#define lua_concat (lp_lua.p_lua_concat)
#define lua_getiuservalue (lp_lua.p_lua_getiuservalue)
#define lua_setiuservalue (lp_lua.p_lua_setiuservalue)
#define lua_setwarnf (lp_lua.p_lua_setwarnf)
#define lua_gethookcount (lp_lua.p_lua_gethookcount)
#define lua_tocfunction (lp_lua.p_lua_tocfunction)
#define lua_tothread (lp_lua.p_lua_tothread)
#define lua_status (lp_lua.p_lua_status)
#define luaL_loadbufferx (lp_lua.p_luaL_loadbufferx)
#define luaL_traceback (lp_lua.p_luaL_traceback)
#define luaL_error (lp_lua.p_luaL_error)
#define luaL_checklstring (lp_lua.p_luaL_checklstring)
#define luaL_optlstring (lp_lua.p_luaL_optlstring)
#define luaL_checkinteger (lp_lua.p_luaL_checkinteger)
#define luaL_optinteger (lp_lua.p_luaL_optinteger)
#define luaL_checknumber (lp_lua.p_luaL_checknumber)
#define luaL_optnumber (lp_lua.p_luaL_optnumber)
#define luaL_checktype (lp_lua.p_luaL_checktype)
#define luaL_checkany (lp_lua.p_luaL_checkany)
#define luaL_argerror (lp_lua.p_luaL_argerror)
#define luaL_typeerror (lp_lua.p_luaL_typeerror)
#define luaL_newmetatable (lp_lua.p_luaL_newmetatable)
#define luaL_setmetatable (lp_lua.p_luaL_setmetatable)
#define luaL_checkudata (lp_lua.p_luaL_checkudata)
#define luaL_testudata (lp_lua.p_luaL_testudata)
#define luaL_setfuncs (lp_lua.p_luaL_setfuncs)
#define luaL_requiref (lp_lua.p_luaL_requiref)
#define luaL_ref (lp_lua.p_luaL_ref)
#define luaL_unref (lp_lua.p_luaL_unref)
#define luaL_tolstring (lp_lua.p_luaL_tolstring)
#define luaL_checkstack (lp_lua.p_luaL_checkstack)
#define luaL_checkversion_ (lp_lua.p_luaL_checkversion_)
#define luaL_getsubtable (lp_lua.p_luaL_getsubtable)
#define luaL_where (lp_lua.p_luaL_where)
#define luaL_buffinit (lp_lua.p_luaL_buffinit)
#define luaL_addvalue (lp_lua.p_luaL_addvalue)
#define luaL_pushresult (lp_lua.p_luaL_pushresult)
#define luaL_prepbuffsize (lp_lua.p_luaL_prepbuffsize)
#define luaL_addlstring (lp_lua.p_luaL_addlstring)
#define luaopen_base (lp_lua.p_luaopen_base)
#define luaopen_string (lp_lua.p_luaopen_string)
#define luaopen_table (lp_lua.p_luaopen_table)
#define luaopen_math (lp_lua.p_luaopen_math)
#define luaopen_utf8 (lp_lua.p_luaopen_utf8)
#define luaopen_coroutine (lp_lua.p_luaopen_coroutine)
#define luaopen_os (lp_lua.p_luaopen_os)
#define luaopen_io (lp_lua.p_luaopen_io)
#define luaopen_debug (lp_lua.p_luaopen_debug)
#define luaopen_package (lp_lua.p_luaopen_package)

/* How the library was found and isolated: for the log and the tests. */
typedef struct lp_lua_lib {
    char path[512];        /* the file opened                                   */
    const char *isolation; /* "deepbind", "namespace" or "plain"                */
} lp_lua_lib;

/* Opens liblua 5.4 once for the process: 'explicit_path' (the lualib option)
   if not NULL, else "liblua5.4.so.0" through the loader's search, else the
   copy next to the plugin. 'isolation' is "auto", "deepbind", "namespace" or
   "plain". 0, or -1 with a reason in 'err'. */
int lp_lua_open(const char *explicit_path, const char *isolation, lp_lua_lib *out, char *err, size_t errlen)
    __attribute__((visibility("hidden")));

#endif /* LP_LOAD_H */
