/*
 * options.c - plugin options: the declared list (cushim_option), the text
 * given for one plugin ("key=value,key=value"), validation and typed reads.
 *
 * Syntax (the tail of a CUSHIM_PLUGINS spec, and host->plugin_register's
 * 'options'): items separated by ','; an item is KEY '=' VALUE; the VALUE is
 * everything after the first '=' and may contain ':' and '='; ',' ';' and '\'
 * inside a value are written '\,' '\;' '\\' (a '\' before any other character
 * stands for that character). White space around a KEY is ignored, a VALUE is
 * taken as written. A KEY may repeat only for CUSHIM_OPT_REPEAT options.
 *
 * Everything is checked before the plugin's init runs: the declarations
 * themselves (names, types, defaults valid for their type), unknown keys,
 * values of the wrong type, repeats, missing CUSHIM_OPT_REQUIRED options.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env.h"
#include "log.h"
#include "options.h"
#include "optvalue.h"

#define OP_MAX_DECL 256

static int op_check_decls(const cushim_option *decl, uint32_t *ndecl, char *err, size_t errlen)
{
    uint32_t n = 0;
    for (; decl != NULL && decl[n].name != NULL; n++) {
        const cushim_option *o = &decl[n];
        if (n >= OP_MAX_DECL)
            return rt_seterr(err, errlen, "more than %d options declared", OP_MAX_DECL);
        if (!op_name_ok(o->name))
            return rt_seterr(err, errlen, "declared option name '%s' is not [a-z0-9_-]+", o->name);
        uint32_t t = o->type & CUSHIM_OPT_TYPE_MASK;
        if (t < CUSHIM_OPT_STRING || t > CUSHIM_OPT_BYTES ||
            (o->type & ~(CUSHIM_OPT_TYPE_MASK | CUSHIM_OPT_REPEAT | CUSHIM_OPT_REQUIRED)) != 0)
            return rt_seterr(err, errlen, "option '%s' declares an unknown type 0x%x", o->name, o->type);
        for (uint32_t k = 0; k < n; k++)
            if (strcmp(decl[k].name, o->name) == 0)
                return rt_seterr(err, errlen, "option '%s' is declared twice", o->name);
        if (o->default_value != NULL && op_check_value(o->type, o->default_value) != 0)
            return rt_seterr(err, errlen, "the default '%s' of option '%s' is not a valid %s", o->default_value,
                          o->name, op_type_name(o->type));
    }
    *ndecl = n;
    return 0;
}

const cushim_option *op_decl(const op_set *s, const char *name, uint32_t *index)
{
    for (uint32_t i = 0; name != NULL && i < s->ndecl; i++)
        if (strcmp(s->decl[i].name, name) == 0) {
            if (index != NULL)
                *index = i;
            return &s->decl[i];
        }
    return NULL;
}

/* The end of the item starting at 's': the first unescaped ','. */
static const char *op_item_end(const char *s)
{
    for (; *s && *s != ','; s++)
        if (*s == '\\' && s[1] != '\0')
            s++;
    return s;
}

/* s[0..len) without its escapes, in a new string. */
static char *op_unescape(const char *s, size_t len)
{
    char *out = malloc(len + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len)
            i++;
        *o++ = s[i];
    }
    *o = '\0';
    return out;
}

static void op_names(const op_set *s, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < s->ndecl && n + 2 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", s->decl[i].name);
    if (s->ndecl == 0)
        snprintf(buf, cap, "it declares none");
}

int op_load(op_set *s, const cushim_option *decl, const char *text, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    int rc = op_check_decls(decl, &s->ndecl, err, errlen);
    if (rc != 0)
        return rc;
    s->decl = decl;
    for (const char *p = text ? text : ""; *p;) {
        const char *end = op_item_end(p);
        const char *eq = p;
        while (eq < end && *eq != '=')
            eq += *eq == '\\' && eq + 1 < end ? 2 : 1;
        char *key = op_unescape(p, (size_t)((eq < end ? eq : end) - p));
        if (key == NULL)
            goto nomem;
        char *k = key;
        while (*k == ' ' || *k == '\t' || *k == '\n')
            k++;
        size_t kl = strlen(k);
        while (kl > 0 && (k[kl - 1] == ' ' || k[kl - 1] == '\t' || k[kl - 1] == '\n'))
            k[--kl] = '\0';
        if (eq >= end && kl == 0) {   /* an empty item: "a=1,,b=2", a trailing ',' */
            free(key);
            p = *end ? end + 1 : end;
            continue;
        }
        uint32_t di;
        if (op_decl(s, k, &di) == NULL) {
            char names[512], qk[160];
            op_names(s, names, sizeof names);
            env_quote(k, qk, sizeof qk);   /* the user's text: one printable line */
            rc = rt_seterr(err, errlen, "unknown option %s (%s)", qk, names);
            free(key);
            goto fail;
        }
        if (eq >= end) {
            rc = rt_seterr(err, errlen, "option '%s' has no value (write %s=VALUE)", k, k);
            free(key);
            goto fail;
        }
        char *v = op_unescape(eq + 1, (size_t)(end - eq - 1));
        if (v == NULL) {
            free(key);
            goto nomem;
        }
        const cushim_option *o = &decl[di];
        if (op_check_value(o->type, v) != 0) {
            char qv[300];
            env_quote(v, qv, sizeof qv);
            rc = rt_seterr(err, errlen, "option '%s' = %s is not a valid %s", k, qv, op_type_name(o->type));
            free(key);
            free(v);
            goto fail;
        }
        if (!(o->type & CUSHIM_OPT_REPEAT) && op_count(s, di) > 0) {
            rc = rt_seterr(err, errlen, "option '%s' given twice (it is not a repeatable option)", k);
            free(key);
            free(v);
            goto fail;
        }
        free(key);
        op_value *nv = realloc(s->values, (s->nvalues + 1) * sizeof *nv);
        if (nv == NULL) {
            free(v);
            goto nomem;
        }
        s->values = nv;
        s->values[s->nvalues++] = (op_value){ .decl = di, .text = v };
        p = *end ? end + 1 : end;
    }
    for (uint32_t i = 0; i < s->ndecl; i++)
        if ((decl[i].type & CUSHIM_OPT_REQUIRED) && op_count(s, i) == 0) {
            rc = rt_seterr(err, errlen, "required option '%s' (%s) is not given", decl[i].name,
                        op_type_name(decl[i].type));
            goto fail;
        }
    return 0;
nomem:
    rc = rt_seterr(err, errlen, "out of memory parsing options");
fail:
    op_free(s);
    return rc;
}

void op_free(op_set *s)
{
    for (uint32_t i = 0; i < s->nvalues; i++)
        free(s->values[i].text);
    free(s->values);
    s->values = NULL;
    s->nvalues = 0;
}

uint32_t op_count(const op_set *s, uint32_t decl)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nvalues; i++)
        n += s->values[i].decl == decl;
    return n;
}

const char *op_text(const op_set *s, uint32_t decl, uint32_t nth)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nvalues; i++)
        if (s->values[i].decl == decl && k++ == nth)
            return s->values[i].text;
    return nth == 0 && k == 0 && decl < s->ndecl ? s->decl[decl].default_value : NULL;
}
