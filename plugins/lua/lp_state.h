/*
 * lp_state.h - a thread's record and its Lua state of one generation (lp_state.c).
 */
#ifndef LP_STATE_H
#define LP_STATE_H

#include <stddef.h>

#include "lp_engine.h"
#include "lp_load.h"

lp_thread *lp_thread_new(void) LP_HIDDEN;
void lp_thread_free(lp_thread *t) LP_HIDDEN;
void lp_threads_fork_child(void) LP_HIDDEN;
/* Builds t's state for 'g' (validating: collects the hooks into t->decl).
   0, or -1 with the error text in 'err'. */
int lp_state_build(lp_thread *t, lp_gen *g, int validating, char *err, size_t errlen) LP_HIDDEN;
void lp_state_close(lp_thread *t) LP_HIDDEN;   /* the state, and its generation reference */
void lp_state_run_exit(lp_thread *t) LP_HIDDEN;
/* The argument of one of the plugin's own C functions run with lua_pcall: the token set for its one call, or
   a Lua error (a policy reaching the function through allow=debug). */
void *lp_enter(lua_State *L) LP_HIDDEN;

#endif /* LP_STATE_H */
