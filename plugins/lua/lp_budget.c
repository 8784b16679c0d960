/*
 * lp_budget.c - the instruction budget: one count hook charges every instruction of a run - of the
 * state's main thread and of every coroutine it resumes - to the thread's account (lp_thread.used),
 * against the run's limit (allocations and string patterns charge theirs too: lp_alloc, lp_pattern.c).
 * How a spent budget stops a run that catches errors: lp_sandbox.c.
 */
#define _GNU_SOURCE
#include "lp_budget.h"
#include "lp_engine.h"
#include "lp_load.h"

/* ------------------------------------------------------------------------ */
/* The instruction budget                                                   */
/* ------------------------------------------------------------------------ */
/* The count of a run's main thread is restarted at LP_TICK when the run starts (lp_budget_start),
   so its events are exact to LP_TICK instructions. A coroutine's count is restarted at LP_CO_TICK
   by each resume, and LP_CO_TICK is charged in advance for what it may hold back when it yields
   or ends: a policy that makes many short coroutines pays for every one. */
#define LP_CO_TICK 100

/* From now on every instruction of 'L' (a coroutine or the main thread) raises: see the top. */
static int lp_budget_raise(lua_State *L, lp_thread *t)
{
    t->spent = 1;
    lua_sethook(L, lp_budget_hook, LUA_MASKCOUNT, 1);
    return luaL_error(L, "instruction budget of %d exceeded (budget=)", (int)lp_eng.o.budget);
}

void lp_budget_hook(lua_State *L, lua_Debug *ar)
{
    lp_thread *t = lp_state_thread(L);
    (void)ar;
    if (!t->spent) {
        t->used += lua_gethookcount(L);   /* the instructions since this thread's last event */
        if (t->used <= t->limit)
            return;
    }
    lp_budget_raise(L, t);
}

void lp_budget_charge(lua_State *L, int64_t n)
{
    lp_thread *t = lp_state_thread(L);
    if (t->spent || (t->used += n) > t->limit)
        lp_budget_raise(L, t);
}

/* A resume of 'co' by the running thread 'L'. */
void lp_budget_resume(lua_State *L, lua_State *co)
{
    lp_thread *t = lp_state_thread(L);
    if (t->spent || (t->used += LP_CO_TICK) > t->limit)
        lp_budget_raise(L, t);
    if (co != L && lua_gethookcount(co) != 1)
        lua_sethook(co, lp_budget_hook, LUA_MASKCOUNT, LP_CO_TICK);
}

/* A coroutine that the budget stopped: the hook raised in it (lp_budget_raise set its count to 1,
   which nothing else does). The error left it from inside the hook, so Lua left it with hooks off
   for good, and closing it (coroutine.close; wrap, after an error) would run the __close of its
   pending to-be-closed variables that way: they are not run. */
int lp_budget_stopped(lua_State *co)
{
    return lua_gethookcount(co) == 1;
}
