/*
 * lp_hooks.c - the plugin's hooks (lp_pre, lp_post): a hooked call runs the policy's functions for it in
 * this thread's Lua state (lp_state.c), rebuilt for the current generation when it has moved and no hooked
 * call of ours is in progress on the thread. The hot path: lp_state_run.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_bridge.h"
#include "lp_budget.h"
#include "lp_engine.h"
#include "lp_gen.h"
#include "lp_hooks.h"
#include "lp_load.h"
#include "lp_state.h"
#include "lp_values.h"
#include "lp_watch.h"

/* ------------------------------------------------------------------------ */
/* Threads' records                                                         */
/* ------------------------------------------------------------------------ */
void lp_hooks_tls_free(void *p)
{
    lp_thread_free(p);
}

/* This thread's first hooked call: its record, kept in the host's per-thread storage. */
static lp_thread *lp_thread_first(void)
{
    lp_thread *t = lp_thread_new();
    if (t != NULL && lp_eng.host->tls_set(lp_eng.tls_key, t) != CUSHIM_OK) {
        lp_thread_free(t);
        t = NULL;
    }
    return t;
}

lp_thread *lp_thread_get(void)
{
    lp_thread *t = lp_eng.host->tls_get(lp_eng.tls_key);
    return t != NULL ? t : lp_thread_first();
}

/* Moves t to the current generation (no hooked call of ours in progress on
   this thread). */
void lp_thread_switch(lp_thread *t)
{
    char err[2048];
    lp_gen *g;
    lp_state_close(t);
    g = lp_gen_acquire();
    if (g == NULL)
        return;
    if (lp_state_build(t, g, 0, err, sizeof err) != 0) {
        t->broken = 1;
        lp_log_error("generation %llu: cannot build this thread's Lua state: %s", (unsigned long long)g->number,
                     err);
    }
}

/* ------------------------------------------------------------------------ */
/* Running hooks                                                            */
/* ------------------------------------------------------------------------ */
typedef struct lp_run {
    lp_thread *t;
    cushim_call *call;
    lp_proxy *proxy;
    int proxy_ref;
    int after;
    int skip;
    int32_t code;
} lp_run;

/* A stage with several functions: called in order by this C function, inside one protected call. */
static int lp_run_hooks(lua_State *L)
{
    lp_run *r = lp_enter(L);
    lp_gen *g = r->t->gen;
    uint32_t id = r->call->api_id, first = g->first[id], n = g->count[id];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = g->list[first + (r->after ? n - 1 - i : i)];
        int ref = r->after ? r->t->fn_after[k] : r->t->fn_before[k];
        if (ref == LUA_NOREF)
            continue;
        lua_settop(L, 1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        lua_rawgeti(L, LUA_REGISTRYINDEX, r->proxy_ref);
        if (r->after) {
            lua_call(L, 1, 0);
            continue;
        }
        lua_call(L, 1, 2);
        if (lua_touserdata(L, 2) == (void *)&lp_skip_key) {
            if (lp_result_code(L, 3, r->call->info->ret_kind, &r->code) != 0)
                return luaL_error(L, "cushim.skip: %s", lua_tostring(L, -1));
            r->skip = 1;
            return 0;
        }
    }
    return 0;
}

static int lp_unref(lua_State *L)
{
    luaL_unref(L, LUA_REGISTRYINDEX, (int)lua_tointegerx(L, 1, NULL));
    return 0;
}

/* Drops the per-call table of px (call.state), protected like everything of Lua. */
static void lp_state_unref(lp_thread *t, lp_proxy *px)
{
    lua_State *L = t->L;
    lua_pushcfunction(L, lp_unref);
    lua_pushinteger(L, px->state_ref);
    lua_pcall(L, 1, 0, 0);
    lua_settop(L, t->top);
    px->state_ref = LUA_NOREF;
}

/* A stage that failed (st: the lua_pcall status; LUA_OK when it returned with its budget spent, by a
   coroutine; or -1 with the reason in 'why'): logged (rate-limited), and the call fails or proceeds as
   fail= says. */
static __attribute__((noinline)) int lp_stage_failed(lp_thread *t, lp_proxy *px, cushim_call *call, int after,
                                                     int st, const char *why)
{
    lua_State *L = t->L;
    const cushim_api_info *info = call->info;
    char spent[96];
    const char *msg = st == -1 ? why : st == LUA_OK ? spent : lua_tostring(L, -1);
    int rc = CUSHIM_CONTINUE;
    snprintf(spent, sizeof spent, "instruction budget of %d exceeded (budget=)", (int)lp_eng.o.budget);
    if (t->spent && st != -1 && (msg == NULL || strstr(msg, "instruction budget") == NULL))
        msg = spent;   /* the error that reached us is another one the budget's raised on its way out */
    if (st == LUA_ERRMEM || t->mem.over) {
        lp_log_error("%s %s hook of %s: memory cap reached (mem=%llu bytes)", lp_eng.o.script,
                     after ? "after" : "before", info->name, (unsigned long long)t->mem.cap);
        t->mem.over = 0;
        lua_settop(L, t->top);
        lua_gc(L, LUA_GCCOLLECT, 0);
    } else {
        lp_log_error("%s hook of %s failed (fail=%s): %s", after ? "after" : "before", info->name,
                     lp_eng.o.fail_open ? "open" : "closed", msg ? msg : "?");
    }
    if (!lp_eng.o.fail_open && info->ret_kind != CUSHIM_RET_OTHER) {
        int32_t code = info->ret_kind == CUSHIM_RET_CUDAERROR ? lp_eng.fail_rt : lp_eng.fail_cu;
        if (!after)
            rc = cushim_call_skip(call, code);
        else
            cushim_call_set_result(call, code);
    }
    lua_settop(L, t->top);
    if (after && px->state_ref != LUA_NOREF)
        lp_state_unref(t, px);
    return rc;
}

/* A before stage whose function returned values (above t->top): 'return cushim.skip(ERR)'. */
static __attribute__((noinline)) int lp_stage_returned(lp_thread *t, lp_proxy *px, cushim_call *call)
{
    lua_State *L = t->L;
    int32_t code;
    char why[480], msg[512];
    if (lua_touserdata(L, t->top + 1) != (void *)&lp_skip_key) {
        lua_settop(L, t->top);   /* other values mean nothing */
        return CUSHIM_CONTINUE;
    }
    if (lua_gettop(L) < t->top + 2 && lua_checkstack(L, 1))
        lua_pushnil(L);          /* cushim.skip gives two values; (cushim.skip(e)) one */
    if (lua_gettop(L) >= t->top + 2 && lp_code_of(L, t->top + 2, call->info->ret_kind, &code, why, sizeof why) == 0) {
        lua_settop(L, t->top);
        return cushim_call_skip(call, code);
    }
    snprintf(msg, sizeof msg, "cushim.skip: %s", lua_gettop(L) >= t->top + 2 ? why : "no error code");
    return lp_stage_failed(t, px, call, 0, -1, msg);
}

/* A stage with several functions: lp_run_hooks calls them inside one protected call. */
static __attribute__((noinline)) int lp_stage_several(lp_thread *t, lp_proxy *px, cushim_call *call, int after,
                                                      uint32_t d)
{
    lua_State *L = t->L;
    lp_run r = {.t = t, .call = call, .proxy = px, .proxy_ref = t->proxy_ref[d], .after = after};
    int st;
    lp_budget_start(L, t, lp_eng.o.budget);
    lua_pushcfunction(L, lp_run_hooks);
    lua_pushlightuserdata(L, &r);
    t->entry = &r;
    st = lua_pcall(L, 1, 0, LP_SLOT_TRACEBACK);
    t->entry = NULL;
    px->call = NULL;
    if (st != LUA_OK || t->spent)
        return lp_stage_failed(t, px, call, after, st, NULL);
    if (after && px->state_ref != LUA_NOREF)
        lp_state_unref(t, px);
    return r.skip ? cushim_call_skip(call, r.code) : CUSHIM_CONTINUE;
}

/* One stage of a hooked call: the hot path. Per stage one lua_sethook (the budget counts from
   here, lp_budget_start; the hook stays set, as no Lua code runs outside a protected call of ours) and one
   lua_pcall straight into the policy's function when the stage has one (the usual case), with
   the function and the call object pushed from the fixed stack and the message handler at its
   bottom: nothing allocated, no table read. The call object at depth d keeps its call.state
   table's ref from the before stage to the after stage (one left by a call abandoned between
   them, which only the host's depth-0 reset in lp_pre detects, is dropped by the next before
   stage at that depth). */
static inline __attribute__((always_inline)) int lp_state_run(lp_thread *t, cushim_call *call, int after,
                                                              uint64_t *slot)
{
    lua_State *L = t->L;
    const lp_gen *g = t->gen;
    uint32_t d, id = call->api_id, fn;
    lp_proxy *px;
    int st;
    if (!after) {
        d = t->pending++;
        *slot = (uint64_t)(uintptr_t)t;
    } else {
        d = --t->pending;
    }
    if (d >= LP_MAX_DEPTH || L == NULL || id >= g->id_limit)
        return CUSHIM_CONTINUE;
    px = t->proxy[d];
    if (!after && px->state_ref != LUA_NOREF)
        lp_state_unref(t, px);   /* of a call abandoned between its stages */
    fn = g->one[after][id];
    if (fn == 0) {               /* nothing of the policy for this stage */
        if (after && px->state_ref != LUA_NOREF)
            lp_state_unref(t, px);
        return CUSHIM_CONTINUE;
    }
    px->call = call;
    px->after = after;
    px->vouched = after && cushim_call_vouched(call, call->info);   /* before any hook can change the result */
    t->mem.over = 0;
    if (fn == LP_SEVERAL)
        return lp_stage_several(t, px, call, after, d);
    lp_budget_start(L, t, lp_eng.o.budget);
    lua_pushvalue(L, LP_SLOT_FN(fn - 1, after));
    lua_pushvalue(L, LP_SLOT_PROXY(d));
    st = lua_pcall(L, 1, after ? 0 : LUA_MULTRET, LP_SLOT_TRACEBACK);
    px->call = NULL;
    if (st != LUA_OK || t->spent)
        return lp_stage_failed(t, px, call, after, st, NULL);
    if (!after)
        return lua_gettop(L) == t->top ? CUSHIM_CONTINUE : lp_stage_returned(t, px, call);
    if (px->state_ref != LUA_NOREF)
        lp_state_unref(t, px);
    return CUSHIM_CONTINUE;
}

/* The plugin's hooks: its pre and post functions for every API of the generations' groups. */
int lp_pre(cushim_call *call, void *user, uint64_t *slot)
{
    lp_thread *t;
    lp_gen *cur, *g;
    (void)user;
    if (atomic_load_explicit(&lp_watch_restart, memory_order_relaxed) &&
        atomic_exchange(&lp_watch_restart, 0))
        lp_watch_start();
    t = lp_eng.host->tls_get(lp_eng.tls_key);
    if (t == NULL && (t = lp_thread_first()) == NULL)
        return CUSHIM_CONTINUE;
    if (t->loading)
        return CUSHIM_CONTINUE;
    if (call->seq == t->last_seq)   /* another generation's group ran this call */
        return CUSHIM_CONTINUE;
    if (call->depth == 0)
        t->pending = 0;             /* nothing of ours is in progress on this thread */
    cur = lp_gen_current();
    if (cur == NULL)
        return CUSHIM_CONTINUE;
    if (t->gen != cur && t->pending == 0)
        lp_thread_switch(t);
    g = t->gen;
    if (g == NULL || call->api_id >= g->id_limit || g->count[call->api_id] == 0)
        return CUSHIM_CONTINUE;
    t->last_seq = call->seq;
    if (t->broken) {
        if (lp_eng.o.fail_open || call->info->ret_kind == CUSHIM_RET_OTHER)
            return CUSHIM_CONTINUE;
        return cushim_call_skip(call, call->info->ret_kind == CUSHIM_RET_CUDAERROR ? lp_eng.fail_rt
                                                                                 : lp_eng.fail_cu);
    }
    return lp_state_run(t, call, 0, slot);
}

void lp_post(cushim_call *call, void *user, uint64_t *slot)
{
    lp_thread *t;
    (void)user;
    if (*slot == 0)
        return;
    t = (lp_thread *)(uintptr_t)*slot;   /* lp_state_run's: this thread's, alive until it exits */
    if (t->L == NULL || t->pending == 0)
        return;
    lp_state_run(t, call, 1, slot);
}
