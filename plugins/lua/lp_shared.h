/*
 * lp_shared.h - cushim.shared: state shared by all threads (counters, key/value table; lp_shared.c).
 */
#ifndef LP_SHARED_H
#define LP_SHARED_H

#include "lp_engine.h"
#include "lp_load.h"

void lp_shared_open(lua_State *L) LP_HIDDEN;   /* pushes the cushim.shared table */
void lp_shared_fork_child(void) LP_HIDDEN;

#endif /* LP_SHARED_H */
