/*
 * rules.c - parse one fault rule 'SELECTOR:ERROR[:WHEN]' and decide which
 * matching calls fail. No host, no global state: the plugin, its unit test
 * and a fuzz harness all link this file as it is (see rules.h).
 *
 * The rule is read from the right because a selector may itself contain ':'
 * ('cat:alloc', 'lib:driver') while an error never does: the last field is
 * WHEN when it contains '=', else ERROR. WHEN conditions are joined with '+',
 * which the CUSHIM_PLUGINS syntax passes through unescaped (',' and ';' are
 * its own separators).
 */
#include "rules.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FI_MAX_RULE 4096   /* bytes: far above any real rule, bounds messages and work */
#define FI_MAX_NUMBER 40   /* characters of one decimal number */

static void fi_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fi_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* Messages quote the user's rule: keep them one printable line (a newline
       in a rule must not forge a second log line). */
    for (char *c = err; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

static int fi_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void fi_trim(const char **s, const char **e)
{
    while (*s < *e && fi_blank(**s))
        (*s)++;
    while (*e > *s && fi_blank((*e)[-1]))
        (*e)--;
}

/* The last 'c' in [s, e), or NULL. */
static const char *fi_last(const char *s, const char *e, char c)
{
    while (e > s)
        if (*--e == c)
            return e;
    return NULL;
}

static char *fi_dup(const char *s, const char *e)
{
    char *d = malloc((size_t)(e - s) + 1);
    if (d != NULL) {
        memcpy(d, s, (size_t)(e - s));
        d[e - s] = '\0';
    }
    return d;
}

/* A decimal integer filling [s, e): digits only, no sign, no overflow. */
static int fi_parse_u64(const char *s, const char *e, uint64_t *out)
{
    uint64_t v = 0;
    if (s == e)
        return -1;
    for (; s < e; s++) {
        unsigned d;
        if (*s < '0' || *s > '9')
            return -1;
        d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* 'D', 'D.D', 'D.' or '.D' filling [s, e). Read by hand, not with strtod: the
   program's LC_NUMERIC must not change what a rule means. */
static int fi_parse_decimal(const char *s, const char *e, double *out)
{
    double v = 0, scale = 1;
    int digits = 0, dot = 0;
    if (e - s > FI_MAX_NUMBER)
        return -1;
    for (; s < e; s++) {
        if (*s == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (*s < '0' || *s > '9')
            return -1;
        digits++;
        if (dot) {
            scale /= 10;
            v += (*s - '0') * scale;
        } else {
            v = v * 10 + (*s - '0');
        }
    }
    if (digits == 0)
        return -1;
    *out = v;
    return 0;
}

static int fi_key_is(const char *s, const char *e, const char *key)
{
    size_t n = strlen(key);
    return (size_t)(e - s) == n && memcmp(s, key, n) == 0;
}

/* One KEY=VALUE of WHEN into 'w'. */
static int fi_parse_cond(const char *s, const char *e, fi_when *w, char *err, size_t errlen)
{
    const char *eq = memchr(s, '=', (size_t)(e - s));
    const char *ks = s, *ke, *vs, *ve = e;
    uint32_t bit;
    uint64_t u = 0;
    if (eq == NULL) {
        fi_err(err, errlen, "WHEN condition '%.*s' is not KEY=VALUE (nth=, every=, after=, p=, window=)",
               (int)(e - s), s);
        return -1;
    }
    ke = eq;
    vs = eq + 1;
    fi_trim(&ks, &ke);
    fi_trim(&vs, &ve);
    if (fi_key_is(ks, ke, "nth"))
        bit = FI_W_NTH;
    else if (fi_key_is(ks, ke, "every"))
        bit = FI_W_EVERY;
    else if (fi_key_is(ks, ke, "after"))
        bit = FI_W_AFTER;
    else if (fi_key_is(ks, ke, "p"))
        bit = FI_W_P;
    else if (fi_key_is(ks, ke, "window"))
        bit = FI_W_WINDOW;
    else {
        fi_err(err, errlen, "unknown WHEN condition '%.*s' (nth, every, after, p, window)", (int)(ke - ks), ks);
        return -1;
    }
    if (w->kinds & bit) {
        fi_err(err, errlen, "WHEN condition '%.*s' given twice", (int)(ke - ks), ks);
        return -1;
    }
    w->kinds |= bit;
    switch (bit) {
    case FI_W_NTH:
    case FI_W_EVERY:
    case FI_W_AFTER:
        if (fi_parse_u64(vs, ve, &u) != 0 || (bit != FI_W_AFTER && u == 0)) {
            fi_err(err, errlen, "%.*s=%.*s: expected a whole number %s", (int)(ke - ks), ks, (int)(ve - vs), vs,
                   bit == FI_W_AFTER ? ">= 0" : ">= 1");
            return -1;
        }
        if (bit == FI_W_NTH)
            w->nth = u;
        else if (bit == FI_W_EVERY)
            w->every = u;
        else
            w->after = u;
        return 0;
    case FI_W_P:
        if (fi_parse_decimal(vs, ve, &w->p) != 0 || w->p > 1.0) {
            fi_err(err, errlen, "p=%.*s: expected a probability from 0 to 1, like 0.25", (int)(ve - vs), vs);
            return -1;
        }
        return 0;
    default: { /* window=START-END, END may be empty (no end) */
        const char *dash = memchr(vs, '-', (size_t)(ve - vs));
        const char *as = vs, *ae = dash ? dash : ve, *bs = dash ? dash + 1 : ve, *be = ve;
        fi_trim(&as, &ae);
        fi_trim(&bs, &be);
        if (dash == NULL || fi_parse_decimal(as, ae, &w->win_start) != 0 ||
            (bs < be && fi_parse_decimal(bs, be, &w->win_end) != 0)) {
            fi_err(err, errlen, "window=%.*s: expected START-END in seconds since process start, like 2.5-4 "
                   "(or START- for no end)", (int)(ve - vs), vs);
            return -1;
        }
        if (bs == be)
            w->win_end = INFINITY;
        if (!(w->win_start < w->win_end)) {
            fi_err(err, errlen, "window=%.*s: the end must be after the start", (int)(ve - vs), vs);
            return -1;
        }
        return 0;
    }
    }
}

static int fi_parse_when(const char *s, const char *e, fi_when *w, char *err, size_t errlen)
{
    const char *ts = s, *te = e;
    fi_trim(&ts, &te);
    while (s <= e) {
        const char *plus = memchr(s, '+', (size_t)(e - s));
        const char *cs = s, *ce = plus ? plus : e;
        fi_trim(&cs, &ce);
        if (cs == ce) {
            fi_err(err, errlen, "empty WHEN condition in '%.*s' (conditions are joined with a single '+')",
                   (int)(e - ts), ts);
            return -1;
        }
        if (fi_parse_cond(cs, ce, w, err, errlen) != 0)
            return -1;
        if (plus == NULL)
            break;
        s = plus + 1;
    }
    return 0;
}

/* ERROR: an identifier (resolved later by the host) or a decimal number. */
static int fi_parse_error(const char *s, const char *e, fi_rule_syntax *out, char *err, size_t errlen)
{
    uint64_t u;
    if (s == e) {
        fi_err(err, errlen, "empty ERROR (a name like CUDA_ERROR_OUT_OF_MEMORY or cudaErrorMemoryAllocation, "
               "or a number)");
        return -1;
    }
    if (*s >= '0' && *s <= '9') {
        if (fi_parse_u64(s, e, &u) != 0 || u > INT32_MAX) {
            fi_err(err, errlen, "error number '%.*s' is not a whole number from 1 to %d", (int)(e - s), s,
                   INT32_MAX);
            return -1;
        }
        if (u == 0) {
            fi_err(err, errlen, "error 0 is success: a skipped call reporting success would leave its outputs "
                   "unset");
            return -1;
        }
        out->error_is_number = 1;
        out->error_number = (int32_t)u;
    } else {
        for (const char *c = s; c < e; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
                  (c > s && *c >= '0' && *c <= '9'))) {
                fi_err(err, errlen, "'%.*s' is neither an error name nor a number%s", (int)(e - s), s,
                       memchr(s, '=', (size_t)(e - s)) ? " (join WHEN conditions with '+', not ':')" : "");
                return -1;
            }
    }
    out->error = fi_dup(s, e);
    if (out->error == NULL) {
        fi_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int fi_rule_parse(const char *text, size_t len, fi_rule_syntax *out, char *err, size_t errlen)
{
    const char *end, *c1, *c2, *ss, *se, *es, *ee;
    memset(out, 0, sizeof *out);
    if (text == NULL || len == 0) {
        fi_err(err, errlen, "empty rule: expected SELECTOR:ERROR[:WHEN]");
        return -1;
    }
    if (len > FI_MAX_RULE) {
        fi_err(err, errlen, "rule longer than %d bytes", FI_MAX_RULE);
        return -1;
    }
    if (memchr(text, '\0', len) != NULL) {
        fi_err(err, errlen, "rule contains a NUL byte");
        return -1;
    }
    end = text + len;
    c1 = fi_last(text, end, ':');
    if (c1 == NULL) {
        fi_err(err, errlen, "expected SELECTOR:ERROR[:WHEN], found no ':'");
        return -1;
    }
    {
        /* 'sel:' and 'sel:ERR:' alike: which field is missing cannot be told */
        const char *ts = c1 + 1, *te = end;
        fi_trim(&ts, &te);
        if (ts == te) {
            fi_err(err, errlen, "nothing after the last ':': expected SELECTOR:ERROR[:WHEN]");
            return -1;
        }
    }
    if (memchr(c1 + 1, '=', (size_t)(end - c1 - 1)) != NULL) {
        c2 = fi_last(text, c1, ':');
        if (c2 == NULL) {
            fi_err(err, errlen, "no ERROR before WHEN '%.*s': expected SELECTOR:ERROR:WHEN", (int)(end - c1 - 1),
                   c1 + 1);
            return -1;
        }
        if (fi_parse_when(c1 + 1, end, &out->when, err, errlen) != 0) {
            memset(out, 0, sizeof *out);
            return -1;
        }
        es = c2 + 1;
        ee = c1;
        se = c2;
    } else {
        es = c1 + 1;
        ee = end;
        se = c1;
    }
    ss = text;
    fi_trim(&ss, &se);
    fi_trim(&es, &ee);
    if (ss == se) {
        fi_err(err, errlen, "empty SELECTOR: expected SELECTOR:ERROR[:WHEN]");
        memset(out, 0, sizeof *out);
        return -1;
    }
    if (fi_parse_error(es, ee, out, err, errlen) != 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->selector = fi_dup(ss, se);
    if (out->selector == NULL) {
        fi_err(err, errlen, "out of memory");
        fi_rule_syntax_free(out);
        return -1;
    }
    return 0;
}

void fi_rule_syntax_free(fi_rule_syntax *r)
{
    free(r->selector);
    free(r->error);
    memset(r, 0, sizeof *r);
}

int fi_rule_parse_fuzz(const char *data, size_t len)
{
    fi_rule_syntax r;
    char err[FI_ERRLEN];
    if (fi_rule_parse(data, len, &r, err, sizeof err) != 0)
        return -1;
    fi_rule_syntax_free(&r);
    return 0;
}

uint64_t fi_seed(int64_t option_value)
{
    return option_value == 0 ? FI_DEFAULT_SEED : (uint64_t)option_value;
}

uint64_t fi_rule_hash(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *text; text++) {
        h ^= (unsigned char)*text;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Steele, Lea, Flood 2014: state += golden gamma, then the mixer. */
uint64_t fi_splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t fi_random(uint64_t seed, uint64_t rule_hash, uint64_t n)
{
    return fi_splitmix64(fi_splitmix64(fi_splitmix64(seed) ^ rule_hash) ^ n);
}

int fi_when_fires(const fi_when *w, uint64_t n, double t, uint64_t seed, uint64_t rule_hash)
{
    if ((w->kinds & FI_W_NTH) && n != w->nth)
        return 0;
    if ((w->kinds & FI_W_EVERY) && n % w->every != 0)
        return 0;
    if ((w->kinds & FI_W_AFTER) && n <= w->after)
        return 0;
    if ((w->kinds & FI_W_WINDOW) && !(t >= w->win_start && t < w->win_end))
        return 0;
    /* 53 random bits as a double in [0, 1): p=1 always fires, p=0 never */
    if ((w->kinds & FI_W_P) && !((double)(fi_random(seed, rule_hash, n) >> 11) * 0x1.0p-53 < w->p))
        return 0;
    return 1;
}
