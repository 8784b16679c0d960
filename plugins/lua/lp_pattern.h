/*
 * lp_pattern.h - string.find, .match, .gmatch and .gsub charged to the budget (lp_pattern.c).
 */
#ifndef LP_PATTERN_H
#define LP_PATTERN_H

#include "lp_engine.h"
#include "lp_load.h"

void lp_pattern_open(lua_State *L) LP_HIDDEN;   /* find, match, gmatch, gsub into the table at -1 */

#endif /* LP_PATTERN_H */
