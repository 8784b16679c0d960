/*
 * tr_pfev.c - the writer's event objects read back for the Perfetto encoder
 * (tr_pfev.h): a reader of the one JSON shape the writer renders (an object of
 * scalars and strings, then "args"), not of JSON at large.
 */
#include <string.h>

#include "tr_pfev.h"

typedef tr_pf_span pf_span;
typedef tr_pf_ev pf_ev;

static const char *pf_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* The end of the string that starts at 'p' (on its '"'): after its closing quote, or NULL. */
static const char *pf_str_end(const char *p, const char *e)
{
    for (p++; p < e;) {
        const char *q = memchr(p, '"', (size_t)(e - p)), *b;
        if (q == NULL)
            return NULL;
        for (b = q; b > p && b[-1] == '\\'; b--)
            ;
        if (((q - b) & 1) == 0)   /* an even run of backslashes before it: the closing quote */
            return q + 1;
        p = q + 1;
    }
    return NULL;
}

/* The end of the value at 'p' (a string, an object or array, or a scalar), or NULL. */
static const char *pf_value_end(const char *p, const char *e)
{
    int depth = 0;
    if (p >= e)
        return NULL;
    if (*p == '"')
        return pf_str_end(p, e);
    if (*p != '{' && *p != '[') {
        while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
            p++;
        return p;
    }
    while (p < e) {
        if (*p == '"') {
            if ((p = pf_str_end(p, e)) == NULL)
                return NULL;
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if ((*p == '}' || *p == ']') && --depth == 0)
            return p + 1;
        p++;
    }
    return NULL;
}

/* A number's text as an integer scaled by 1000 (the writer's microseconds with three decimals -> ns). */
static uint64_t pf_us_ns(pf_span v)
{
    uint64_t ns = 0;
    size_t i = 0;
    int frac = -1;
    for (; i < v.n; i++) {
        if (v.p[i] == '.') {
            frac = 0;
            continue;
        }
        if (v.p[i] < '0' || v.p[i] > '9' || frac == 3)
            break;
        ns = ns * 10 + (uint64_t)(v.p[i] - '0');
        if (frac >= 0)
            frac++;
    }
    for (frac = frac < 0 ? 0 : frac; frac < 3; frac++)
        ns *= 10;
    return ns;
}

uint64_t tr_pfev_u64(pf_span v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < v.n && v.p[i] >= '0' && v.p[i] <= '9'; i++)
        x = x * 10 + (uint64_t)(v.p[i] - '0');
    return x;
}

/* Iterates "key":value pairs of the object whose text starts at *pp (on '{' or after a ','). 1: one read. */
int tr_pfev_member(const char **pp, const char *e, pf_span *key, pf_span *val)
{
    const char *p = pf_ws(*pp, e), *q;
    if (p < e && (*p == '{' || *p == ','))
        p = pf_ws(p + 1, e);
    if (p >= e || *p != '"' || (q = pf_str_end(p, e)) == NULL)
        return 0;
    key->p = p + 1;
    key->n = (size_t)(q - p - 2);
    p = pf_ws(q, e);
    if (p >= e || *p != ':')
        return 0;
    p = pf_ws(p + 1, e);
    if ((q = pf_value_end(p, e)) == NULL)
        return 0;
    val->p = p;
    val->n = (size_t)(q - p);
    *pp = q;
    return 1;
}


pf_span tr_pfev_unquote(pf_span v)
{
    if (v.n >= 2 && v.p[0] == '"') {
        v.p++;
        v.n -= 2;
    }
    return v;
}

/* A metadata event's ("ph":"M", which the writer puts first) args: the name it gives and a track's start. */
static void pf_meta_args(pf_ev *ev)
{
    const char *a = ev->args.p, *ae = ev->args.p + ev->args.n;
    pf_span ak, av;
    if (ev->ph != 'M')
        return;
    while (tr_pfev_member(&a, ae, &ak, &av))
        if (PF_IS(ak, "name"))
            ev->args_name = tr_pfev_unquote(av);
        else if (PF_IS(ak, "start"))
            ev->args_start = av;
}

int tr_pfev_parse(pf_ev *ev, const char *s, size_t n)
{
    const char *p = s, *e = s + n;
    pf_span k, v;
    memset(ev, 0, sizeof *ev);
    for (;;) {
        /* "args", the one member whose value is an object, comes last in the writer's events: when the text
           ends in "}}" and the next key is "args", its value runs to the last '}' without a scan */
        const char *q = pf_ws(p, e);
        if (q < e && *q == ',' && e - q > 9 && memcmp(q, ",\"args\":{", 9) == 0 && n >= 2 && e[-1] == '}' &&
            e[-2] == '}') {
            ev->args.p = q + 8;
            ev->args.n = (size_t)(e - 1 - (q + 8));
            pf_meta_args(ev);
            break;
        }
        if (!tr_pfev_member(&p, e, &k, &v))
            break;
        if (PF_IS(k, "ph")) {
            ev->ph = v.n == 3 ? v.p[1] : 0;
        } else if (PF_IS(k, "cat")) {
            ev->cat = tr_pfev_unquote(v);
        } else if (PF_IS(k, "name")) {
            ev->name = tr_pfev_unquote(v);
        } else if (PF_IS(k, "pid")) {
            ev->pid = tr_pfev_u64(v);
        } else if (PF_IS(k, "tid")) {
            ev->tid = tr_pfev_u64(v);
        } else if (PF_IS(k, "ts")) {
            ev->ts = pf_us_ns(v);
        } else if (PF_IS(k, "dur")) {
            ev->dur = pf_us_ns(v);
            ev->has_dur = 1;
        } else if (PF_IS(k, "id")) {
            ev->id = tr_pfev_u64(v);
            ev->has_id = 1;
        } else if (PF_IS(k, "s")) {
            ev->s = tr_pfev_unquote(v);
        } else if (PF_IS(k, "bp")) {
            ev->bp = tr_pfev_unquote(v);
        } else if (PF_IS(k, "args")) {
            ev->args = v;
            pf_meta_args(ev);
        }
    }
    return ev->ph != 0 ? 0 : -1;
}

/* A JSON string's text (quotes excluded) decoded into pf->tmp (UTF-8; \u00XX as U+00XX, as JSON readers do). */
void tr_pfev_decode(tr_sb *out, pf_span v)
{
    out->len = 0;
    for (size_t i = 0; i < v.n; i++) {
        unsigned c = (unsigned char)v.p[i];
        if (c != '\\' || i + 1 >= v.n) {
            tr_sb_putn(out, v.p + i, 1);
            continue;
        }
        c = (unsigned char)v.p[++i];
        switch (c) {
        case 'n': tr_sb_putn(out, "\n", 1); break;
        case 't': tr_sb_putn(out, "\t", 1); break;
        case 'r': tr_sb_putn(out, "\r", 1); break;
        case 'b': tr_sb_putn(out, "\b", 1); break;
        case 'f': tr_sb_putn(out, "\f", 1); break;
        case 'u': {
            unsigned long cp = 0;
            char b[4];
            size_t k = 0;
            if (i + 4 >= v.n)
                return;
            for (int j = 1; j <= 4; j++) {
                char h = v.p[i + (size_t)j];
                cp = cp * 16 + (unsigned long)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
            }
            i += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < v.n + 0 && v.p[i + 1] == '\\' && v.p[i + 2] == 'u') {
                unsigned long lo = 0;
                for (int j = 3; j <= 6; j++) {
                    char h = v.p[i + (size_t)j];
                    lo = lo * 16 + (unsigned long)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
                }
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
            }
            if (cp < 0x80) {
                b[k++] = (char)cp;
            } else if (cp < 0x800) {
                b[k++] = (char)(0xc0 | cp >> 6);
                b[k++] = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                b[k++] = (char)(0xe0 | cp >> 12);
                b[k++] = (char)(0x80 | (cp >> 6 & 0x3f));
                b[k++] = (char)(0x80 | (cp & 0x3f));
            } else {
                b[k++] = (char)(0xf0 | cp >> 18);
                b[k++] = (char)(0x80 | (cp >> 12 & 0x3f));
                b[k++] = (char)(0x80 | (cp >> 6 & 0x3f));
                b[k++] = (char)(0x80 | (cp & 0x3f));
            }
            tr_sb_putn(out, b, k);
            break;
        }
        default: tr_sb_putn(out, (const char *)&v.p[i], 1); break;   /* \" \\ \/ */
        }
    }
}
