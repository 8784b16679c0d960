/*
 * select.c - selectors: which APIs a hook group (or host->api_select) means.
 *
 *   SELECTOR := TERM { ',' TERM }        union
 *   TERM     := ATOM { '&' ATOM }        intersection
 *   ATOM     := '!' ATOM                  every API the atom does not match
 *             | all | id:N | name:NAME | base:NAME | glob:PATTERN
 *             | cat:CAT{+CAT} | lib:driver|runtime | PATTERN (has * ? or [) | NAME
 *
 * (the grammar of cushim.h). A bare NAME is base:NAME when some API has that
 * base name, else name:NAME. base:NAME matches every API whose metadata
 * base_name is NAME, and the API exported as NAME itself. White space around
 * terms and atoms is ignored. The selector is compiled once per call into a
 * list of atoms, then evaluated for every API in id order.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "libs.h"
#include "log.h"
#include "select.h"

enum { SEL_ALL, SEL_ID, SEL_NAME, SEL_BASE, SEL_GLOB, SEL_CAT, SEL_LIB };

typedef struct sel_atom {
    int kind;
    int term_end;          /* last atom of its term */
    int neg;               /* '!': the APIs it does not match */
    uint32_t num;          /* id, category mask, library */
    const char *text;      /* name, base or pattern (inside the compiled copy) */
} sel_atom;

typedef struct sel_prog {
    char *buf;
    uint32_t n;
    sel_atom *atoms;
    uint8_t *idset;        /* terms that are one 'id:N' alone, as a bitmap (a list of ids in linear time) */
} sel_prog;

/* The category words, from cushim_meta.h's one list. */
#define SEL_CAT(word, bit) { #word, bit },
static const struct {
    const char *name;
    uint32_t bit;
} sel_cats[] = { CUSHIM_CATEGORY_LIST(SEL_CAT) };
#undef SEL_CAT

static char *sel_trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

static int sel_ident(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static int sel_is_base(const char *name)
{
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        if (strcmp(cushim_gen_apis[i].base_name, name) == 0)
            return 1;
    return 0;
}

static int sel_atom_parse(sel_atom *a, char *s, char *err, size_t errlen)
{
    s = sel_trim(s);
    memset(a, 0, sizeof *a);   /* the slot of a term of one 'id:N' is used again, term_end and all */
    while (*s == '!') {   /* '!!x' is x */
        a->neg ^= 1;
        s = sel_trim(s + 1);
    }
    if (*s == '\0')
        return rt_seterr(err, errlen, "empty term");
    if (strcmp(s, "all") == 0) {
        a->kind = SEL_ALL;
        return 0;
    }
    char *colon = strchr(s, ':');
    if (colon != NULL) {
        *colon = '\0';
        char *v = sel_trim(colon + 1);
        if (*v == '\0')
            return rt_seterr(err, errlen, "'%s:' without a value", s);
        if (strcmp(s, "id") == 0) {
            char *end;
            unsigned long long n = strtoull(v, &end, 10);
            if (*end != '\0' || !isdigit((unsigned char)*v) || n > UINT32_MAX)
                return rt_seterr(err, errlen, "'id:%s': not a number", v);
            a->kind = SEL_ID;
            a->num = (uint32_t)n;
        } else if (strcmp(s, "name") == 0 || strcmp(s, "base") == 0) {
            if (!sel_ident(v))
                return rt_seterr(err, errlen, "'%s:%s': not a function name", s, v);
            a->kind = s[0] == 'n' ? SEL_NAME : SEL_BASE;
            a->text = v;
        } else if (strcmp(s, "glob") == 0) {
            a->kind = SEL_GLOB;
            a->text = v;
        } else if (strcmp(s, "cat") == 0) {
            a->kind = SEL_CAT;
            a->num = 0;
            for (char *w = v, *next; w != NULL; w = next) {
                next = strchr(w, '+');
                if (next != NULL)
                    *next++ = '\0';
                w = sel_trim(w);
                size_t k = 0;
                while (k < sizeof sel_cats / sizeof sel_cats[0] && strcmp(sel_cats[k].name, w) != 0)
                    k++;
                if (k == sizeof sel_cats / sizeof sel_cats[0])
                    return rt_seterr(err, errlen, "unknown category '%s' (alloc free copy set launch sync module "
                                   "graph vmm stream event context device init interop query pool)", w);
                a->num |= sel_cats[k].bit;
            }
        } else if (strcmp(s, "lib") == 0) {
            a->kind = SEL_LIB;
            a->num = 0;
            for (unsigned k = 0; k < lb_nlibraries && a->num == 0; k++)   /* the descriptors' names */
                if (strcmp(v, lb_libraries[k].name) == 0)
                    a->num = (uint32_t)lb_libraries[k].value;
            if (a->num == 0)
                return rt_seterr(err, errlen, "'lib:%s': no such library in this build (driver, runtime, nvml, ...)",
                                 v);
        } else {
            return rt_seterr(err, errlen, "unknown selector word '%s:' (id name base glob cat lib)", s);
        }
        return 0;
    }
    if (strpbrk(s, "*?[") != NULL) {
        a->kind = SEL_GLOB;
        a->text = s;
        return 0;
    }
    if (!sel_ident(s))
        return rt_seterr(err, errlen, "'%s': not a function name or pattern", s);
    a->kind = sel_is_base(s) ? SEL_BASE : SEL_NAME;
    a->text = s;
    return 0;
}

static void sel_free(sel_prog *p)
{
    free(p->buf);
    free(p->atoms);
    free(p->idset);
}

static int sel_compile(sel_prog *p, const char *selector, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (selector == NULL)
        return rt_seterr(err, errlen, "no selector");
    size_t len = strlen(selector);
    if (len > 1048576)
        return rt_seterr(err, errlen, "selector longer than 1 MiB");
    uint32_t max = 1;
    for (const char *c = selector; *c; c++)
        max += *c == ',' || *c == '&';
    p->buf = malloc(len + 1);
    p->atoms = calloc(max, sizeof *p->atoms);
    if (p->buf == NULL || p->atoms == NULL) {
        sel_free(p);
        return CUSHIM_ENOMEM;
    }
    memcpy(p->buf, selector, len + 1);
    char *term = p->buf;
    for (;;) {
        char *term_next = strchr(term, ',');
        if (term_next != NULL)
            *term_next++ = '\0';
        char *atom = term;
        for (;;) {
            char *atom_next = strchr(atom, '&');
            if (atom_next != NULL)
                *atom_next++ = '\0';
            sel_atom *a = &p->atoms[p->n++];
            int rc = sel_atom_parse(a, atom, err, errlen);
            if (rc != 0) {
                sel_free(p);
                return rc;
            }
            if (atom_next == NULL) {
                a->term_end = 1;
                /* a term of one 'id:N': a bit, not an atom every API is compared with */
                if (atom == term && a->kind == SEL_ID && !a->neg && a->num < CUSHIM_API_ID_LIMIT) {
                    if (p->idset == NULL && (p->idset = calloc((CUSHIM_API_ID_LIMIT + 7) / 8, 1)) == NULL) {
                        sel_free(p);
                        return CUSHIM_ENOMEM;
                    }
                    p->idset[a->num / 8] |= (uint8_t)(1u << (a->num % 8));
                    p->n--;
                }
                break;
            }
            atom = atom_next;
        }
        if (term_next == NULL)
            break;
        term = term_next;
    }
    return 0;
}

static int sel_atom_match(const sel_atom *a, const cushim_api_info *api)
{
    switch (a->kind) {
    case SEL_ALL: return 1;
    case SEL_ID: return api->id == a->num;
    case SEL_NAME: return strcmp(api->name, a->text) == 0;
    case SEL_BASE: return strcmp(api->base_name, a->text) == 0 || strcmp(api->name, a->text) == 0;
    case SEL_GLOB: return fnmatch(a->text, api->name, 0) == 0;
    case SEL_CAT: return (api->categories & a->num) != 0;
    case SEL_LIB: return api->library == a->num;
    default: return 0;
    }
}

static int sel_eval(const sel_prog *p, const cushim_api_info *api)
{
    int term = 1;
    if (p->idset != NULL && api->id < CUSHIM_API_ID_LIMIT && (p->idset[api->id / 8] >> (api->id % 8) & 1u))
        return 1;
    for (uint32_t i = 0; i < p->n; i++) {
        term = term && (sel_atom_match(&p->atoms[i], api) ^ p->atoms[i].neg);
        if (p->atoms[i].term_end) {
            if (term)
                return 1;
            term = 1;
        }
    }
    return 0;
}

int sel_select(const char *selector, uint32_t *ids, uint32_t cap, char *err, size_t errlen)
{
    sel_prog p;
    int rc = sel_compile(&p, selector, err, errlen);
    if (rc != 0)
        return rc;
    uint32_t n = 0;
    for (uint32_t id = 1; id < CUSHIM_API_ID_LIMIT; id++) {
        const cushim_api_info *api = api_info(id);
        if (api == NULL || !sel_eval(&p, api))
            continue;
        if (ids != NULL && n < cap)
            ids[n] = id;
        n++;
    }
    sel_free(&p);
    if (n == 0)
        rt_seterr(err, errlen, "'%s' matches no API of this build (CUDA %s headers)", selector,
                CUSHIM_GEN_CUDA_VERSION_STRING);
    return (int)n;
}

int sel_match(const char *selector, uint32_t api_id)
{
    sel_prog p;
    int rc = sel_compile(&p, selector, NULL, 0);
    if (rc != 0)
        return rc;
    const cushim_api_info *api = api_info(api_id);
    int m = api != NULL && sel_eval(&p, api);
    sel_free(&p);
    return m;
}
