/*
 * lp_pattern.c - string.find, .match, .gmatch and .gsub for policies: Lua 5.4's patterns (the
 * reference manual, 6.4.1), matched here so that the work is charged to the run's instruction
 * budget.
 *
 * A call of liblua's own matcher is one instruction of the VM's, however long it searches, and
 * it backtracks without a bound: string.rep("a", 30):find(string.rep("a-", 8) .. "b") takes
 * seconds, a longer subject or pattern years. Here every step of a search - a character tried
 * against a pattern item, a search position, a balanced or back-referenced character, 64 bytes
 * of a plain search - costs one instruction (charged LP_PAT_BATCH at a time, lp_budget_charge):
 * a search past the budget stops like any other run. What a call returns and raises, and the
 * order in which a pattern's alternatives are tried (which match is found), are those of Lua's
 * own functions: the fuzz harness (tests/fuzz/fuzz_lua.c, also lp_fuzz_replay) compares the two.
 * The matcher itself is lp_pmatch.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "lp_budget.h"
#include "lp_pattern.h"
#include "lp_pmatch.h"

/* ------------------------------------------------------------------------ */
/* string.find, string.match                                                */
/* ------------------------------------------------------------------------ */
/* The first of the k bytes at 'p' in the n bytes at 's', or NULL: 64 bytes looked at cost one step. */
static const char *lp_find_plain(lua_State *L, const char *s, size_t n, const char *p, size_t k)
{
    const char *at = s, *end;
    int64_t cost = 0;
    if (k == 0)
        return s;
    if (k > n)
        return NULL;
    end = s + (n - k) + 1;   /* one past the last start */
    while (at < end) {
        const char *c = memchr(at, *p, (size_t)(end - at));
        if (c == NULL) {
            cost += (end - at) / 64;
            break;
        }
        cost += (c - at) / 64 + 1 + (int64_t)(k / 64);
        if (memcmp(c + 1, p + 1, k - 1) == 0) {
            lp_budget_charge(L, cost);
            return c;
        }
        at = c + 1;
        if (cost >= LP_PAT_BATCH) {
            lp_budget_charge(L, cost);
            cost = 0;
        }
    }
    lp_budget_charge(L, cost);
    return NULL;
}

static int lp_specials(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != '\0' && strchr("^$*+?.([%-", p[i]) != NULL)
            return 1;
    return 0;
}

static int lp_find_or_match(lua_State *L, int find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = lp_start(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !lp_specials(p, lp))) {
        const char *r = lp_find_plain(L, s + init, ls - init, p, lp);
        if (r != NULL) {
            lua_pushinteger(L, (lua_Integer)(r - s) + 1);
            lua_pushinteger(L, (lua_Integer)(r - s) + (lua_Integer)lp);
            return 2;
        }
    } else {
        lp_pat m;
        const char *at = s + init;
        int anchor = *p == '^';
        if (anchor) {
            p++;
            lp--;
        }
        lp_pat_init(&m, L, s, ls, p, lp);
        do {
            const char *e;
            m.ncap = 0;
            m.depth = LP_PAT_DEPTH;
            if ((e = lp_match(&m, at, p)) != NULL) {
                lp_pat_done(&m);
                if (!find)
                    return lp_push_captures(&m, at, e);
                lua_pushinteger(L, (lua_Integer)(at - s) + 1);
                lua_pushinteger(L, (lua_Integer)(e - s));
                return lp_push_captures(&m, NULL, NULL) + 2;
            }
        } while (at++ < m.s1 && !anchor);
        lp_pat_done(&m);
    }
    luaL_pushfail(L);
    return 1;
}

static int lp_str_find(lua_State *L)
{
    return lp_find_or_match(L, 1);
}

static int lp_str_match(lua_State *L)
{
    return lp_find_or_match(L, 0);
}

/* ------------------------------------------------------------------------ */
/* string.gmatch                                                            */
/* ------------------------------------------------------------------------ */
/* The iterator's state (upvalue 3; the subject and the pattern are upvalues 1 and 2): offsets, so
   that nothing points into strings that debug.setupvalue could take away. */
typedef struct lp_gmatch_state {
    size_t next;        /* where the next search starts                       */
    ptrdiff_t last;     /* where the last match ended, -1 before the first     */
} lp_gmatch_state;

static int lp_gmatch_next(lua_State *L)
{
    size_t ls = 0, lp = 0;
    const char *s = lua_type(L, lua_upvalueindex(1)) == LUA_TSTRING ? lua_tolstring(L, lua_upvalueindex(1), &ls) : NULL;
    const char *p = lua_type(L, lua_upvalueindex(2)) == LUA_TSTRING ? lua_tolstring(L, lua_upvalueindex(2), &lp) : NULL;
    lp_gmatch_state *g = luaL_testudata(L, lua_upvalueindex(3), LP_GMATCH_MT);
    lp_pat m;
    if (s == NULL || p == NULL || g == NULL)
        return luaL_error(L, "a string.gmatch iterator whose state was replaced");
    lp_pat_init(&m, L, s, ls, p, lp);
    for (size_t at = g->next; at <= ls; at++) {
        const char *e;
        m.ncap = 0;
        m.depth = LP_PAT_DEPTH;
        if ((e = lp_match(&m, s + at, p)) != NULL && e - s != g->last) {
            g->next = (size_t)(e - s);
            g->last = e - s;
            lp_pat_done(&m);
            return lp_push_captures(&m, s + at, e);
        }
    }
    g->next = ls + 1;   /* nothing more: the next call searches nothing */
    lp_pat_done(&m);
    return 0;
}

static int lp_str_gmatch(lua_State *L)
{
    size_t ls;
    size_t init;
    lp_gmatch_state *g;
    luaL_checklstring(L, 1, &ls);
    luaL_checkstring(L, 2);
    init = lp_start(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2);
    g = lua_newuserdatauv(L, sizeof *g, 0);
    luaL_setmetatable(L, LP_GMATCH_MT);
    g->next = init > ls ? ls + 1 : init;
    g->last = -1;
    lua_pushcclosure(L, lp_gmatch_next, 3);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* string.gsub                                                              */
/* ------------------------------------------------------------------------ */
/* The replacement string (argument 3) for the match s..e: %0 the match, %1..%9 captures, %% a '%'. */
static void lp_gsub_string(lp_pat *m, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = m->L;
    size_t l;
    const char *r = lua_tolstring(L, 3, &l), *q;
    while ((q = memchr(r, '%', l)) != NULL) {
        luaL_addlstring(b, r, (size_t)(q - r));
        q++;   /* a NUL follows the string: a '%' at its end reads it */
        if (*q == '%') {
            luaL_addchar(b, '%');
        } else if (*q == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)*q)) {
            const char *at;
            ptrdiff_t len = lp_capture(m, *q - '1', s, e, &at);
            if (len == LP_CAP_POS)
                luaL_addvalue(b);   /* the position pushed */
            else
                luaL_addlstring(b, at, (size_t)len);
        } else {
            luaL_error(L, "invalid use of '%%' in replacement string");
        }
        l -= (size_t)(q + 1 - r);
        r = q + 1;
    }
    luaL_addlstring(b, r, l);
}

/* What replaces the match s..e (kind 'tr' of argument 3); 1 when it is not the match itself. */
static int lp_gsub_value(lp_pat *m, luaL_Buffer *b, const char *s, const char *e, int tr)
{
    lua_State *L = m->L;
    if (tr == LUA_TFUNCTION) {
        int n;
        lua_pushvalue(L, 3);
        n = lp_push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (tr == LUA_TTABLE) {
        lp_push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        lp_gsub_string(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {   /* nil or false: the match stays */
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1))
        return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int lp_str_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *last = NULL;
    int tr = lua_type(L, 3), anchor, changed = 0;
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1), n = 0;
    lp_pat m;
    luaL_Buffer b;
    luaL_argexpected(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
                     "string/function/table");
    luaL_buffinit(L, &b);
    anchor = *p == '^';
    if (anchor) {
        p++;
        lp--;
    }
    lp_pat_init(&m, L, s, ls, p, lp);
    while (n < max) {
        const char *e;
        m.ncap = 0;
        m.depth = LP_PAT_DEPTH;
        if ((e = lp_match(&m, s, p)) != NULL && e != last) {
            n++;
            changed |= lp_gsub_value(&m, &b, s, e, tr);
            s = last = e;
        } else if (s < m.s1) {
            luaL_addchar(&b, *s++);
        } else {
            break;
        }
        if (anchor)
            break;
    }
    lp_pat_done(&m);
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, s, (size_t)(m.s1 - s));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

void lp_pattern_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"find", lp_str_find}, {"match", lp_str_match}, {"gmatch", lp_str_gmatch}, {"gsub", lp_str_gsub},
        {NULL, NULL},
    };
    luaL_newmetatable(L, LP_GMATCH_MT);
    lua_pop(L, 1);
    luaL_setfuncs(L, funcs, 0);
}
