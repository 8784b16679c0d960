/*
 * lp_pmatch.h - the pattern matcher (lp_pmatch.c) that the string functions of lp_pattern.c use.
 */
#ifndef LP_PMATCH_H
#define LP_PMATCH_H

#include <stddef.h>

#include "lp_engine.h"
#include "lp_load.h"

#define LP_PAT_CAPS 32       /* captures in one pattern (LUA_MAXCAPTURES)            */
#define LP_PAT_DEPTH 200     /* nested items before "pattern too complex" (Lua's own) */
#define LP_PAT_BATCH 256     /* steps charged at a time                              */
#define LP_CAP_OPEN (-1)     /* a capture whose ')' is not reached yet               */
#define LP_CAP_POS (-2)      /* a position capture, '()'                             */
#define LP_GMATCH_MT "cushim.gmatch"

/* One search: the subject s0..s1 and the pattern ..p1 are Lua strings, so a NUL follows each end,
   which the matcher reads where Lua's does (a frontier at the end, a set never closed). */
typedef struct lp_pat {
    lua_State *L;
    const char *s0, *s1, *p1;
    int depth;                   /* nested items left                               */
    int ncap;
    int steps;                   /* not charged yet                                 */
    struct {
        const char *at;
        ptrdiff_t len;           /* bytes, or LP_CAP_OPEN / LP_CAP_POS              */
    } cap[LP_PAT_CAPS];
} lp_pat;

void lp_pat_init(lp_pat *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) LP_HIDDEN;
void lp_pat_done(lp_pat *m) LP_HIDDEN;   /* charges what is left, at the end of a call */
/* The end of a match of the pattern at 'p' that starts at 's', or NULL (m->ncap and m->depth reset before). */
const char *lp_match(lp_pat *m, const char *s, const char *p) LP_HIDDEN;
/* Capture i (the whole match s..e for 0 when the pattern has none): its text in *at and its length, or
   LP_CAP_POS with the position pushed. */
ptrdiff_t lp_capture(lp_pat *m, int i, const char *s, const char *e, const char **at) LP_HIDDEN;
void lp_push_capture(lp_pat *m, int i, const char *s, const char *e) LP_HIDDEN;
/* The captures (the whole match s..e if there are none and s is not NULL); how many were pushed. */
int lp_push_captures(lp_pat *m, const char *s, const char *e) LP_HIDDEN;
/* A start position (1-based, negative from the end) as an offset + 1, at least 1. */
size_t lp_start(lua_Integer pos, size_t len) LP_HIDDEN;

#endif /* LP_PMATCH_H */
