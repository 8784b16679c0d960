/*
 * lp_sandbox.h - the sandbox: the libraries a policy may reach, and the guards of its bounds (lp_sandbox.c).
 */
#ifndef LP_SANDBOX_H
#define LP_SANDBOX_H

#include "lp_engine.h"
#include "lp_load.h"

void lp_sandbox_open(lua_State *L) LP_HIDDEN;   /* the libraries and the guards, in a protected call */

#endif /* LP_SANDBOX_H */
