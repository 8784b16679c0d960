/*
 * lp_bridge.h - the 'cushim' module a policy sees (lp_bridge.c): declarations, skip, clock, log,
 * options, real calls.
 */
#ifndef LP_BRIDGE_H
#define LP_BRIDGE_H

#include "lp_engine.h"
#include "lp_load.h"

void lp_bridge_open(lua_State *L, lp_thread *t) LP_HIDDEN;   /* inside a protected call */
extern char lp_skip_key LP_HIDDEN;                            /* cushim.skip's first value */

#endif /* LP_BRIDGE_H */
