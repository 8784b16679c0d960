/*
 * lp_call.h - the call object a hook receives and the API metadata tables (lp_call.c).
 */
#ifndef LP_CALL_H
#define LP_CALL_H

#include "lp_engine.h"
#include "lp_load.h"

void lp_push_api(lua_State *L, const cushim_api_info *info) LP_HIDDEN;
int lp_f_api(lua_State *L) LP_HIDDEN;
void lp_call_metatables(lua_State *L) LP_HIDDEN;   /* call objects' and struct views' (once per state) */
void lp_proxy_new(lua_State *L, lp_thread *t, int depth) LP_HIDDEN; /* sets t->proxy[depth] and its ref */
void lp_pnames_free(lp_thread *t) LP_HIDDEN;   /* with the state: the parameter-name cache */

#endif /* LP_CALL_H */
