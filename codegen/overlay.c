/*
 * overlay.c - the hand-written overlay: what headers cannot say.
 *
 * A line-based text file (codegen/overlay.txt); '#' starts a comment.
 *   param <function> <parameter> [dir=in|out|inout] [count=<param>|count=<N>]
 *         [kind=scalar|enum|handle|pointer|string|struct|callback|devptr]
 *         [since=<CUDA_VERSION>] [until=<CUDA_VERSION>]
 *   cat   <function> <category>[,<category>...] [since=...] [until=...]
 *   struct <TypeName> [since=...] [until=...]
 * 'count=*<param>': the count is behind the pointer <param> (count_indirect).
 * 'struct' lists a struct type whose fields the metadata describes
 * (types_emit.c); a listed type missing from headers in its range is an error.
 *   role  <function> <action> ...   (allocation roles: roles.c)
 * <function> and <parameter> are fnmatch(3) globs. Entries apply in file
 * order, later ones win; a category written '-name' removes that category.
 * 'dir=' applies to data pointers only (values always go in): a glob entry
 * skips value parameters and const pointees, an entry naming one exactly is an error.
 * An entry whose function glob matches no API, or whose parameter glob
 * matches no parameter of the matched APIs, is an error, unless the headers
 * are outside its since= (inclusive) .. until= (exclusive) CUDA_VERSION
 * range (then the entry is skipped).
 */
#include "cg.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

enum { OV_PARAM = 1, OV_CAT = 2, OV_STRUCT = 3 };

struct ov_entry {
    int type;
    unsigned line;
    char *fn, *param;
    int dir, kind;
    char *count_param;
    int count_indirect;
    unsigned fixed_count;
    unsigned cats_add, cats_del;
    unsigned since, until;
};

static const char *ov_kinds[] = {"unknown", "scalar", "enum", "handle", "pointer", "string", "struct",
                                 "callback", "devptr"};

static int ov_fail(const ov_overlay *ov, unsigned line, const char *what, const char *tok)
{
    ut_error("%s:%u: %s '%s'", ov->path, line, what, tok);
    return CG_EOVERLAY;
}

static int ov_parse_line(ov_overlay *ov, char *s, unsigned line)
{
    char *tok[32];
    int n = 0;
    ov_entry e;
    char *save = NULL, *t;
    memset(&e, 0, sizeof e);
    e.line = line;
    for (t = strtok_r(s, " \t\r", &save); t && n < 32; t = strtok_r(NULL, " \t\r", &save))
        tok[n++] = t;
    if (n == 0)
        return CG_OK;
    if (!strcmp(tok[0], "param")) {
        if (n < 4)
            return ov_fail(ov, line, "'param' needs a function, a parameter and at least one setting, got", tok[0]);
        e.type = OV_PARAM;
        e.fn = ut_strdup(tok[1]);
        e.param = ut_strdup(tok[2]);
        for (int i = 3; i < n; i++) {
            char *v = strchr(tok[i], '=');
            if (!v)
                return ov_fail(ov, line, "expected key=value, got", tok[i]);
            *v++ = 0;
            if (!strcmp(tok[i], "dir")) {
                if (!strcmp(v, "in"))
                    e.dir = DIR_IN;
                else if (!strcmp(v, "out"))
                    e.dir = DIR_OUT;
                else if (!strcmp(v, "inout"))
                    e.dir = DIR_INOUT;
                else
                    return ov_fail(ov, line, "dir must be in, out or inout, got", v);
            } else if (!strcmp(tok[i], "count")) {
                if (isdigit((unsigned char)v[0])) {
                    char *end;
                    e.fixed_count = (unsigned)strtoul(v, &end, 10);
                    if (*end || !e.fixed_count)
                        return ov_fail(ov, line, "bad fixed count", v);
                } else {
                    e.count_indirect = v[0] == '*';
                    e.count_param = ut_strdup(v + e.count_indirect);
                }
            } else if (!strcmp(tok[i], "kind")) {
                e.kind = -1;
                for (int k = 1; k < (int)(sizeof ov_kinds / sizeof ov_kinds[0]); k++)
                    if (!strcmp(ov_kinds[k], v))
                        e.kind = k;
                if (e.kind < 0)
                    return ov_fail(ov, line, "unknown kind", v);
            } else if (!strcmp(tok[i], "since")) {
                e.since = (unsigned)strtoul(v, NULL, 10);
            } else if (!strcmp(tok[i], "until")) {
                e.until = (unsigned)strtoul(v, NULL, 10);
            } else {
                return ov_fail(ov, line, "unknown setting", tok[i]);
            }
        }
    } else if (!strcmp(tok[0], "struct")) {
        if (n < 2)
            return ov_fail(ov, line, "'struct' needs a type name, got", tok[0]);
        e.type = OV_STRUCT;
        e.fn = ut_strdup(tok[1]);
        for (int i = 2; i < n; i++) {
            if (!strncmp(tok[i], "since=", 6))
                e.since = (unsigned)strtoul(tok[i] + 6, NULL, 10);
            else if (!strncmp(tok[i], "until=", 6))
                e.until = (unsigned)strtoul(tok[i] + 6, NULL, 10);
            else
                return ov_fail(ov, line, "unknown setting", tok[i]);
        }
    } else if (!strcmp(tok[0], "cat")) {
        char *save2 = NULL;
        if (n < 3)
            return ov_fail(ov, line, "'cat' needs a function and categories, got", tok[0]);
        e.type = OV_CAT;
        e.fn = ut_strdup(tok[1]);
        for (t = strtok_r(tok[2], ",", &save2); t; t = strtok_r(NULL, ",", &save2)) {
            int del = t[0] == '-';
            int bit = ut_cat_bit(t + del);
            if (bit < 0)
                return ov_fail(ov, line, "unknown category", t);
            if (del)
                e.cats_del |= 1u << bit;
            else
                e.cats_add |= 1u << bit;
        }
        for (int i = 3; i < n; i++) {
            if (!strncmp(tok[i], "since=", 6))
                e.since = (unsigned)strtoul(tok[i] + 6, NULL, 10);
            else if (!strncmp(tok[i], "until=", 6))
                e.until = (unsigned)strtoul(tok[i] + 6, NULL, 10);
            else
                return ov_fail(ov, line, "unknown setting", tok[i]);
        }
    } else if (!strcmp(tok[0], "role")) {
        return rl_parse(ov->path, tok, n, line);
    } else {
        return ov_fail(ov, line, "unknown entry type (want 'param', 'cat', 'struct' or 'role')", tok[0]);
    }
    if (ov->n == ov->cap) {
        ov->cap = ov->cap ? 2 * ov->cap : 64;
        ov->e = ut_realloc(ov->e, (size_t)ov->cap * sizeof *ov->e);
    }
    ov->e[ov->n++] = e;
    return CG_OK;
}

int ov_load(ov_overlay *ov, const char *path)
{
    char *text = NULL, *s, *save = NULL;
    unsigned line = 0;
    int rc;
    memset(ov, 0, sizeof *ov);
    ov->path = ut_strdup(path);
    rc = ut_read_file(path, &text, NULL);
    if (rc)
        return rc;
    /* strtok_r would merge empty lines and break line numbers: split by hand */
    s = text;
    (void)save;
    while (s && *s) {
        char *nl = strchr(s, '\n'), *hash;
        line++;
        if (nl)
            *nl = 0;
        hash = strchr(s, '#');
        if (hash)
            *hash = 0;
        rc = ov_parse_line(ov, s, line);
        if (rc)
            break;
        s = nl ? nl + 1 : NULL;
    }
    free(text);
    return rc;
}

static int ov_is_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

static int ov_find_param(const cg_api *a, const char *name)
{
    for (int i = 0; i < a->nparams; i++)
        if (!strcmp(a->params[i].name, name))
            return i;
    return -1;
}

int ov_apply(const ov_overlay *ov, cg_model *m)
{
    for (int k = 0; k < ov->n; k++) {
        const ov_entry *e = &ov->e[k];
        int fmatch = 0, pmatch = 0;
        if ((e->since && m->cuda_version < e->since) || (e->until && m->cuda_version >= e->until))
            continue;
        if (e->type == OV_STRUCT)
            continue; /* read by te_structs while parsing */
        for (int i = 0; i < m->napis; i++) {
            cg_api *a = &m->apis[i];
            if (fnmatch(e->fn, a->name, 0) != 0)
                continue;
            fmatch++;
            if (e->type == OV_CAT) {
                a->cats = (a->cats | e->cats_add) & ~e->cats_del;
                continue;
            }
            for (int j = 0; j < a->nparams; j++) {
                cg_param *p = &a->params[j];
                if (fnmatch(e->param, p->name, 0) != 0)
                    continue;
                pmatch++;
                if (e->dir && !p->ptr_like) {
                    /* values always go in: a glob skips them, a plain name is a mistake */
                    if (!ov_is_glob(e->fn) && !ov_is_glob(e->param)) {
                        ut_error("%s:%u: dir= on '%s' of %s, which is passed by value (%s)", ov->path, e->line,
                                 p->name, a->name, p->type);
                        return CG_EOVERLAY;
                    }
                } else if (e->dir && p->pointee_const && (ov_is_glob(e->fn) || ov_is_glob(e->param))) {
                    /* a const pointee goes in: a glob leaves it so (cublas* x: axpy's const x) */
                } else if (e->dir) {
                    p->dir = e->dir;
                    p->dir_src = SRC_OVERLAY;
                }
                if (e->kind)
                    p->kind = e->kind;
                if (e->fixed_count) {
                    p->fixed_count = e->fixed_count;
                    p->count_param = -1;
                    p->count_indirect = 0;
                }
                if (e->count_param) {
                    int c = ov_find_param(a, e->count_param);
                    if (c < 0) {
                        ut_error("%s:%u: count parameter '%s' does not exist in %s", ov->path, e->line,
                                 e->count_param, a->name);
                        return CG_EOVERLAY;
                    }
                    p->count_param = c;
                    p->count_indirect = e->count_indirect;
                    p->fixed_count = 0;
                }
            }
        }
        if (!fmatch) {
            ut_error("%s:%u: no function matches '%s' in these headers (CUDA_VERSION %u)", ov->path, e->line,
                     e->fn, m->cuda_version);
            return CG_EOVERLAY;
        }
        if (e->type == OV_PARAM && !pmatch) {
            ut_error("%s:%u: no parameter matches '%s' in the functions matching '%s'", ov->path, e->line,
                     e->param, e->fn);
            return CG_EOVERLAY;
        }
    }
    return CG_OK;
}

int ov_struct_count(const ov_overlay *ov)
{
    return ov ? ov->n : 0;
}

const char *ov_struct_at(const ov_overlay *ov, int i, unsigned v, unsigned *line)
{
    const ov_entry *e;
    if (!ov || i < 0 || i >= ov->n)
        return NULL;
    e = &ov->e[i];
    if (e->type != OV_STRUCT || (e->since && v < e->since) || (e->until && v >= e->until))
        return NULL;
    if (line)
        *line = e->line;
    return e->fn;
}

void ov_free(ov_overlay *ov)
{
    for (int i = 0; i < ov->n; i++) {
        free(ov->e[i].fn);
        free(ov->e[i].param);
        free(ov->e[i].count_param);
    }
    free(ov->e);
    free(ov->path);
    memset(ov, 0, sizeof *ov);
}
