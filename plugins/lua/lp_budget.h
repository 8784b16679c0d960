/*
 * lp_budget.h - the instruction budget of a run (lp_budget.c).
 */
#ifndef LP_BUDGET_H
#define LP_BUDGET_H

#include <stdint.h>

#include "lp_engine.h"
#include "lp_load.h"

void lp_budget_hook(lua_State *L, lua_Debug *ar) LP_HIDDEN;
void lp_budget_charge(lua_State *L, int64_t n) LP_HIDDEN;   /* n more instructions; raises past the budget */
void lp_budget_resume(lua_State *L, lua_State *co) LP_HIDDEN;   /* a resume of 'co' by the running 'L' */
int lp_budget_stopped(lua_State *co) LP_HIDDEN;   /* the budget stopped coroutine 'co' */
#define LP_TICK 1000   /* instructions between two count events of a run's main thread */
/* A run of at most 'limit' instructions starts on the state's main thread: the count restarts. */
static inline void lp_budget_start(lua_State *L, lp_thread *t, int64_t limit)
{
    t->used = 0;
    t->limit = limit;
    t->spent = 0;
    lua_sethook(L, lp_budget_hook, LUA_MASKCOUNT, LP_TICK);
}

#endif /* LP_BUDGET_H */
