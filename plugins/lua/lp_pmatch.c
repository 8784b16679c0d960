/*
 * lp_pmatch.c - Lua 5.4's patterns (the reference manual, 6.4.1) matched with every step charged
 * to the run's instruction budget: a character tried against a pattern item, a search position, a
 * balanced or back-referenced character (lp_pattern.c says why). The order in which a pattern's
 * alternatives are tried is Lua's, so the match found is the one liblua's matcher finds.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "lp_budget.h"
#include "lp_pmatch.h"

void lp_pat_init(lp_pat *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp)
{
    m->L = L;
    m->s0 = s;
    m->s1 = s + ls;
    m->p1 = p + lp;
    m->steps = 0;
    m->ncap = 0;
    m->depth = LP_PAT_DEPTH;
}

static inline void lp_step(lp_pat *m, int n)
{
    if ((m->steps += n) >= LP_PAT_BATCH) {
        int k = m->steps;
        m->steps = 0;
        lp_budget_charge(m->L, k);
    }
}

void lp_pat_done(lp_pat *m)
{
    int k = m->steps;
    m->steps = 0;
    lp_budget_charge(m->L, k);
}

/* ------------------------------------------------------------------------ */
/* Matching                                                                 */
/* ------------------------------------------------------------------------ */
/* %a %c %d %g %l %p %s %u %w %x, their complements in upper case; any other character is itself. */
static int lp_class(int c, int cl)
{
    int r;
    switch (tolower(cl)) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    default: return cl == c;
    }
    return isupper(cl) ? !r : r != 0;
}

/* [set]: 'p' at its '[', 'e' at its ']'. */
static int lp_set(int c, const char *p, const char *e)
{
    int in = 1;
    if (p[1] == '^') {
        in = 0;
        p++;
    }
    while (++p < e) {
        if (*p == '%') {
            p++;
            if (lp_class(c, (unsigned char)*p))
                return in;
        } else if (p[1] == '-' && p + 2 < e) {
            p += 2;
            if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p)
                return in;
        } else if ((unsigned char)*p == c) {
            return in;
        }
    }
    return !in;
}

/* The end of the single-character class at 'p' (a character, '.', %x or a set). */
static const char *lp_class_end(lp_pat *m, const char *p)
{
    switch (*p++) {
    case '%':
        if (p == m->p1)
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    case '[':
        if (*p == '^')
            p++;
        do {   /* the first character is never the closing ']' */
            if (p == m->p1)
                luaL_error(m->L, "malformed pattern (missing ']')");
            if (*p++ == '%' && p < m->p1)
                p++;
        } while (*p != ']');
        return p + 1;
    default:
        return p;
    }
}

/* Whether the subject's character at 's' is in the class p..ep. */
static int lp_single(lp_pat *m, const char *s, const char *p, const char *ep)
{
    int c;
    if (s >= m->s1)
        return 0;
    c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case '%': return lp_class(c, (unsigned char)p[1]);
    case '[': return lp_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}


/* x*, x+ (from one on): the longest run first, then shorter ones. */
static const char *lp_longest(lp_pat *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (lp_single(m, s + i, p, ep)) {
        i++;
        lp_step(m, 1);
    }
    for (; i >= 0; i--) {
        const char *r = lp_match(m, s + i, ep + 1);
        if (r != NULL)
            return r;
    }
    return NULL;
}

/* x-: the shortest run first. */
static const char *lp_shortest(lp_pat *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = lp_match(m, s, ep + 1);
        if (r != NULL)
            return r;
        if (!lp_single(m, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *lp_capture_open(lp_pat *m, const char *s, const char *p, ptrdiff_t what)
{
    const char *r;
    if (m->ncap >= LP_PAT_CAPS)
        luaL_error(m->L, "too many captures");
    m->cap[m->ncap].at = s;
    m->cap[m->ncap].len = what;
    m->ncap++;
    if ((r = lp_match(m, s, p)) == NULL)
        m->ncap--;
    return r;
}

static const char *lp_capture_close(lp_pat *m, const char *s, const char *p)
{
    int i = m->ncap;
    const char *r;
    while (--i >= 0 && m->cap[i].len != LP_CAP_OPEN)
        ;
    if (i < 0)
        luaL_error(m->L, "invalid pattern capture");
    m->cap[i].len = s - m->cap[i].at;
    if ((r = lp_match(m, s, p)) == NULL)
        m->cap[i].len = LP_CAP_OPEN;
    return r;
}

/* %bxy at 'p' (after "%b"). */
static const char *lp_balance(lp_pat *m, const char *s, const char *p)
{
    int open = 1;
    if (p >= m->p1 - 1)
        luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->s1 || *s != *p)
        return NULL;
    while (++s < m->s1) {
        lp_step(m, 1);
        if (*s == p[1]) {
            if (--open == 0)
                return s + 1;
        } else if (*s == *p) {
            open++;
        }
    }
    return NULL;
}

/* %1 .. %9: the text of a closed capture again. */
static const char *lp_backref(lp_pat *m, const char *s, int digit)
{
    int i = digit - '1';
    size_t len;
    if (i < 0 || i >= m->ncap || m->cap[i].len == LP_CAP_OPEN)
        luaL_error(m->L, "invalid capture index %%%d", i + 1);
    len = (size_t)m->cap[i].len;   /* a position capture: no text, never matches */
    lp_step(m, (int)(len < 64u * LP_PAT_BATCH ? len / 64 : LP_PAT_BATCH));
    if ((size_t)(m->s1 - s) >= len && memcmp(m->cap[i].at, s, len) == 0)
        return s + len;
    return NULL;
}

/* The end of a match of the pattern at 'p' that starts at 's', or NULL. */
const char *lp_match(lp_pat *m, const char *s, const char *p)
{
    if (m->depth-- == 0)
        luaL_error(m->L, "pattern too complex");
    for (;;) {
        const char *ep;
        lp_step(m, 1);
        if (p == m->p1)
            break;
        switch (*p) {
        case '(':
            s = p[1] == ')' ? lp_capture_open(m, s, p + 2, LP_CAP_POS) : lp_capture_open(m, s, p + 1, LP_CAP_OPEN);
            goto out;
        case ')':
            s = lp_capture_close(m, s, p + 1);
            goto out;
        case '$':
            if (p + 1 != m->p1)
                break;   /* an ordinary character */
            s = s == m->s1 ? s : NULL;
            goto out;
        case '%':
            if (p[1] == 'b') {
                if ((s = lp_balance(m, s, p + 2)) == NULL)
                    goto out;
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                int before;
                p += 2;
                if (*p != '[')
                    luaL_error(m->L, "missing '[' after '%%f' in pattern");
                ep = lp_class_end(m, p);
                before = s == m->s0 ? '\0' : (unsigned char)s[-1];
                if (lp_set(before, p, ep - 1) || !lp_set((unsigned char)*s, p, ep - 1)) {
                    s = NULL;
                    goto out;
                }
                p = ep;
                continue;
            }
            if (isdigit((unsigned char)p[1])) {
                if ((s = lp_backref(m, s, (unsigned char)p[1])) == NULL)
                    goto out;
                p += 2;
                continue;
            }
            break;
        }
        /* a single-character class, perhaps with a quantifier */
        ep = lp_class_end(m, p);
        if (!lp_single(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') {   /* none of it is a match */
                p = ep + 1;
                continue;
            }
            s = NULL;
            goto out;
        }
        switch (*ep) {
        case '?': {
            const char *r = lp_match(m, s + 1, ep + 1);
            if (r != NULL) {
                s = r;
                goto out;
            }
            p = ep + 1;
            continue;
        }
        case '+':
            s = lp_longest(m, s + 1, p, ep);
            goto out;
        case '*':
            s = lp_longest(m, s, p, ep);
            goto out;
        case '-':
            s = lp_shortest(m, s, p, ep);
            goto out;
        default:
            s++;
            p = ep;
            continue;
        }
    }
out:
    m->depth++;
    return s;
}

/* ------------------------------------------------------------------------ */
/* Captures and positions                                                   */
/* ------------------------------------------------------------------------ */
/* Capture i (the whole match s..e for 0 when the pattern has none): its text in *at and its length,
   or LP_CAP_POS with the position pushed. */
ptrdiff_t lp_capture(lp_pat *m, int i, const char *s, const char *e, const char **at)
{
    if (i >= m->ncap) {
        if (i != 0)
            luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *at = s;
        return e - s;
    }
    *at = m->cap[i].at;
    if (m->cap[i].len == LP_CAP_OPEN)
        luaL_error(m->L, "unfinished capture");
    if (m->cap[i].len == LP_CAP_POS)
        lua_pushinteger(m->L, (lua_Integer)(m->cap[i].at - m->s0) + 1);
    return m->cap[i].len;
}

void lp_push_capture(lp_pat *m, int i, const char *s, const char *e)
{
    const char *at;
    ptrdiff_t len = lp_capture(m, i, s, e, &at);
    if (len != LP_CAP_POS)
        lua_pushlstring(m->L, at, (size_t)len);
}

/* The captures (the whole match s..e if there are none and s is not NULL); how many were pushed. */
int lp_push_captures(lp_pat *m, const char *s, const char *e)
{
    int n = m->ncap == 0 && s != NULL ? 1 : m->ncap;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        lp_push_capture(m, i, s, e);
    return n;
}

/* A start position (1-based, negative from the end) as an offset + 1, at least 1. */
size_t lp_start(lua_Integer pos, size_t len)
{
    if (pos > 0)
        return (size_t)pos;
    if (pos == 0 || pos < -(lua_Integer)len)
        return 1;
    return len + (size_t)pos + 1;
}
