/*
 * lp_state.c - one Lua state of one generation: built on the thread that runs
 * it, with the sandbox, a memory cap, and the policy's top level run once; the
 * threads' records; the at_exit functions. The hooks that run it: lp_hooks.c.
 *
 * Everything that touches a state runs inside lua_pcall (a C function pushed
 * with lua_pushcfunction, which allocates nothing): a Lua error, a refused
 * allocation or an exceeded instruction budget unwinds only Lua's own frames,
 * never the shim's or the application's.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lp_bridge.h"
#include "lp_budget.h"
#include "lp_call.h"
#include "lp_engine.h"
#include "lp_gen.h"
#include "lp_load.h"
#include "lp_sandbox.h"
#include "lp_state.h"

/* ------------------------------------------------------------------------ */
/* Allocation with a cap                                                    */
/* ------------------------------------------------------------------------ */
/* Growth is charged to the run's instruction budget too, LP_ALLOC_BYTES to an instruction: a
   library call that makes a large string or table (string.rep, table.concat, gsub) is one
   instruction of the VM's, but its work is in its bytes. A run that this takes past its limit
   stops at its next instruction (the main thread's count set to 1; a coroutine's own count
   brings it there within LP_CO_TICK). lua_sethook may be called anywhere, even in a signal
   handler (ldebug.c): inside an allocation too. */
#define LP_ALLOC_BYTES 64

static void *lp_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lp_mem *m = ud;
    size_t old = ptr != NULL ? osize : 0;
    void *p;
    if (nsize == 0) {
        m->used -= old;
        free(ptr);
        return NULL;
    }
    if (nsize > old) {
        lp_thread *t = (lp_thread *)(void *)((char *)m - offsetof(lp_thread, mem));
        if (m->used - old + nsize > m->cap) {
            m->over = 1;
            return NULL;
        }
        t->used += (int64_t)((nsize - old + LP_ALLOC_BYTES - 1) / LP_ALLOC_BYTES);
        if (t->used > t->limit && t->limit != 0 && !t->spent && t->L != NULL)
            lua_sethook(t->L, lp_budget_hook, LUA_MASKCOUNT, 1);
    }
    p = realloc(ptr, nsize);
    if (p == NULL)
        return NULL;
    m->used = m->used - old + nsize;
    return p;
}

static int lp_panic(lua_State *L)
{
    /* Unreachable by construction (every entry is protected); say so if not. */
    const char *msg = lua_tostring(L, -1);
    lp_eng.host->log(lp_eng.self, CUSHIM_LOG_ERROR, "unprotected Lua error: %s", msg ? msg : "?");
    return 0;
}

static int lp_traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* The argument of one of the plugin's own C functions, which it runs with lua_pcall (lp_setup,
   lp_run_hooks, lp_run_exit_cfn): with allow=debug a policy can reach them too
   (debug.getinfo(level, "f")), so each takes only the token set for its one call. */
void *lp_enter(lua_State *L)
{
    lp_thread *t = lp_state_thread(L);
    void *p = lua_touserdata(L, 1);
    if (p == NULL || p != t->entry)
        luaL_error(L, "a function of the lua plugin's own, called by the policy");
    t->entry = NULL;
    return p;
}

/* ------------------------------------------------------------------------ */
/* Building a state                                                         */
/* ------------------------------------------------------------------------ */
static int lp_setup(lua_State *L)
{
    lp_thread *t = lp_enter(L);
    lp_gen *g = t->gen;
    char chunk[600];
    lua_settop(L, 0);
    lua_gc(L, LUA_GCGEN, 0, 0);
    lp_sandbox_open(L);
    lp_bridge_open(L, t);
    for (int d = 0; d < LP_MAX_DEPTH; d++)
        lp_proxy_new(L, t, d);
    lua_newtable(L);
    t->exit_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    /* the file's name as Lua's messages show it: Lua cuts longer chunk names to 60 bytes; load errors
       get the full path back (lua.c) */
    snprintf(chunk, sizeof chunk, "@%s", lp_script_base());
    if (luaL_loadbufferx(L, g->source, g->len, chunk, (lp_eng.o.allow & LP_ALLOW_BYTECODE) ? "bt" : "t") !=
        LUA_OK)
        return lua_error(L);
    t->loading = 1;
    lp_budget_start(L, t, lp_eng.o.budget * 10);
    lua_call(L, 0, 0);
    if (t->spent)   /* a coroutine spent it and the top level still returned */
        return luaL_error(L, "instruction budget of %d exceeded (budget=)", (int)lp_eng.o.budget);
    t->loading = 0;
    /* the fixed stack above the message handler (LP_SLOT_*), returned to lp_state_build */
    lua_settop(L, 0);
    luaL_checkstack(L, LP_MAX_DEPTH + 2 * (int)t->ndecl + LUA_MINSTACK, "too many hooks for one Lua state");
    for (int d = 0; d < LP_MAX_DEPTH; d++)
        lua_rawgeti(L, LUA_REGISTRYINDEX, t->proxy_ref[d]);
    for (uint32_t k = 0; k < t->ndecl; k++) {
        if (t->fn_before[k] != LUA_NOREF)
            lua_rawgeti(L, LUA_REGISTRYINDEX, t->fn_before[k]);
        else
            lua_pushnil(L);
        if (t->fn_after[k] != LUA_NOREF)
            lua_rawgeti(L, LUA_REGISTRYINDEX, t->fn_after[k]);
        else
            lua_pushnil(L);
    }
    return lua_gettop(L);
}

/* Every thread's record is on one list: found at exit, and reachable for leak checkers (the host keeps
   its per-thread values in memory they do not scan). */
static pthread_mutex_t lp_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static lp_thread *lp_threads;

lp_thread *lp_thread_new(void)
{
    lp_thread *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    pthread_mutex_lock(&lp_threads_lock);
    t->next = lp_threads;
    if (lp_threads != NULL)
        lp_threads->prev = t;
    lp_threads = t;
    pthread_mutex_unlock(&lp_threads_lock);
    for (int d = 0; d < LP_MAX_DEPTH; d++)
        t->proxy_ref[d] = LUA_NOREF;
    t->exit_ref = LUA_NOREF;
    return t;
}

static void lp_decl_free(lp_thread *t)
{
    for (uint32_t i = 0; i < t->ndecl; i++) {
        free(t->decl[i].select);
        free(t->decl[i].where);
    }
    free(t->decl);
    t->decl = NULL;
    t->ndecl = t->capdecl = 0;
}

/* Closes the Lua state; the generation reference stays. */
static void lp_state_drop(lp_thread *t)
{
    if (t->L != NULL) {
        lua_close(t->L);
        t->L = NULL;
        atomic_fetch_sub_explicit(&lp_eng.live_states, 1, memory_order_relaxed);
    }
    free(t->fn_before);
    free(t->fn_after);
    t->fn_before = t->fn_after = NULL;
    lp_pnames_free(t);
    t->top = 0;
    lp_decl_free(t);
    for (int d = 0; d < LP_MAX_DEPTH; d++) {
        t->proxy_ref[d] = LUA_NOREF;
        t->proxy[d] = NULL;
    }
    t->broken = 0;
    t->pending = 0;
    t->loading = 0;
}

void lp_state_close(lp_thread *t)
{
    lp_state_drop(t);
    if (t->gen != NULL) {
        lp_gen_release(t->gen);
        t->gen = NULL;
    }
}

void lp_thread_free(lp_thread *t)
{
    if (t == NULL)
        return;
    lp_state_close(t);
    pthread_mutex_lock(&lp_threads_lock);
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        lp_threads = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&lp_threads_lock);
    free(t);
}

void lp_threads_fork_child(void)
{
    pthread_mutex_init(&lp_threads_lock, NULL);
}

/* The declarations of a thread's run must be those of the validation run. */
static int lp_same_decls(const lp_thread *t, const lp_gen *g)
{
    if (t->ndecl != g->nhooks)
        return 0;
    for (uint32_t i = 0; i < g->nhooks; i++)
        if (strcmp(t->decl[i].select, g->hooks[i].select) || t->decl[i].before != g->hooks[i].before ||
            t->decl[i].after != g->hooks[i].after)
            return 0;
    return 1;
}

int lp_state_build(lp_thread *t, lp_gen *g, int validating, char *err, size_t errlen)
{
    lua_State *L;
    int st;
    t->gen = g;
    t->validating = validating;
    t->mem.used = 0;
    t->mem.cap = lp_eng.o.mem;
    t->mem.over = 0;
    t->used = t->limit = 0;   /* no run yet: nothing charged (lp_alloc) */
    t->spent = 0;
    L = lua_newstate(lp_alloc, &t->mem);
    if (L == NULL) {
        snprintf(err, errlen, "cannot create a Lua state within mem=%llu bytes", (unsigned long long)t->mem.cap);
        return -1;
    }
    atomic_fetch_add_explicit(&lp_eng.live_states, 1, memory_order_relaxed);
    t->L = L;
    *(lp_thread **)lua_getextraspace(L) = t;   /* lp_state_thread */
    lua_atpanic(L, lp_panic);
    lua_pushcfunction(L, lp_traceback);   /* LP_SLOT_TRACEBACK, for good */
    lua_pushcfunction(L, lp_setup);
    lua_pushlightuserdata(L, t);
    t->entry = t;
    st = lua_pcall(L, 1, LUA_MULTRET, LP_SLOT_TRACEBACK);
    t->entry = NULL;
    t->loading = 0;
    if (st != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        if (st == LUA_ERRMEM || t->mem.over)
            snprintf(err, errlen, "%s: the policy needs more than mem=%llu bytes to load", lp_eng.o.script,
                     (unsigned long long)t->mem.cap);
        else
            snprintf(err, errlen, "%s", msg ? msg : "error without a message");
        lp_state_drop(t);   /* t->gen stays: the caller's reference */
        return -1;
    }
    t->top = lua_gettop(L);   /* the message handler and what lp_setup returned */
    if (!lua_checkstack(L, LUA_MINSTACK)) {   /* room above it for the hook calls' pushes */
        snprintf(err, errlen, "%s: the policy needs more than mem=%llu bytes to load", lp_eng.o.script,
                 (unsigned long long)t->mem.cap);
        lp_state_drop(t);
        return -1;
    }
    if (!validating) {
        if (!lp_same_decls(t, g)) {
            snprintf(err, errlen, "%s: this thread's run declared other hooks than the first run (declarations "
                     "must not depend on time, thread or shared state)", lp_eng.o.script);
            lp_state_drop(t);
            return -1;
        }
        lp_decl_free(t);
    }
    return 0;
}

static int lp_run_exit_cfn(lua_State *L)
{
    lp_thread *t = lp_enter(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->exit_ref);
    for (lua_Integer i = 1;; i++) {
        lua_settop(L, 2);
        if (lua_rawgeti(L, 2, i) != LUA_TFUNCTION)
            break;
        lua_call(L, 0, 0);
    }
    return 0;
}

void lp_state_run_exit(lp_thread *t)
{
    lua_State *L = t->L;
    int st;
    lua_settop(L, t->top);
    t->exiting = 1;
    lp_budget_start(L, t, lp_eng.o.budget * 10);
    lua_pushcfunction(L, lp_run_exit_cfn);
    lua_pushlightuserdata(L, t);
    t->entry = t;
    st = lua_pcall(L, 1, 0, LP_SLOT_TRACEBACK);
    t->entry = NULL;
    if (st != LUA_OK)
        lp_log_error("at_exit function failed: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    else if (t->spent)
        lp_log_error("at_exit function failed: instruction budget of %d exceeded (budget=)", (int)lp_eng.o.budget);
    lua_settop(L, t->top);
    t->exiting = 0;
}
