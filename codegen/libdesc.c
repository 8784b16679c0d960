/*
 * libdesc.c - library descriptors: one small file per interposed library
 * (codegen/libs/<name>.lib) says what the generator and the runtime need to
 * know about it. Format and keys: docs/generator.md, "Library descriptors".
 *
 * Line based; '#' starts a comment; tokens separated by blanks. Every key
 * but the repeatable ones (soname, header, typedefs, define, prefix, report,
 * report-skip) may appear once.
 */
#include "cg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ld_fail(const char *path, unsigned line, const char *what, const char *tok)
{
    ut_error("%s:%u: %s '%s'", path, line, what, tok ? tok : "");
    return CG_EINPUT;
}

/* Join tok[from..n) with single blanks. */
static char *ld_rest(char **tok, int from, int n)
{
    ut_buf b = {0};
    for (int i = from; i < n; i++) {
        if (i > from)
            ut_puts(&b, " ");
        ut_puts(&b, tok[i]);
    }
    if (!b.s)
        return ut_strdup("");
    return b.s;
}

static int ld_add(char **arr, int *n, int cap, const char *s, const char *path, unsigned line)
{
    if (*n >= cap)
        return ld_fail(path, line, "too many values for this key at", s);
    arr[(*n)++] = ut_strdup(s);
    return CG_OK;
}

/* A single-valued key: set once. */
static int ld_once(char **dst, const char *v, const char *path, unsigned line, const char *key)
{
    if (*dst)
        return ld_fail(path, line, "key given twice:", key);
    *dst = ut_strdup(v);
    return CG_OK;
}

static int ld_line(cg_lib *l, char **tok, int n, const char *path, unsigned line)
{
    const char *k = tok[0];
    int rc = CG_OK;
    if (!strcmp(k, "library") && n == 2)
        return ld_once(&l->name, tok[1], path, line, k);
    if (!strcmp(k, "sdk") && n == 3) {
        char *e;
        long v = strtol(tok[2], &e, 10);
        if (*e || v <= 0 || v > 255)
            return ld_fail(path, line, "'sdk NAME VALUE' needs a value in 1..255, got", tok[2]);
        l->value = (int)v;
        return ld_once(&l->sdk, tok[1], path, line, k);
    }
    if (!strcmp(k, "retkind") && n == 3) {
        char *e;
        long v = strtol(tok[2], &e, 10);
        if (*e || v <= 0 || v > 255 || v == RET_OTHER)
            return ld_fail(path, line, "'retkind NAME VALUE' needs a value in 1..255 other than 3, got", tok[2]);
        l->ret_kind = (int)v;
        return ld_once(&l->ret_kind_name, tok[1], path, line, k);
    }
    if (!strcmp(k, "status") && n == 3) {
        if ((rc = ld_once(&l->status_type, tok[1], path, line, k)) != CG_OK)
            return rc;
        if (!strcmp(tok[2], "-"))   /* 'typedef enum { ... } TYPE;': no tag */
            return CG_OK;
        return ld_once(&l->status_enum, tok[2], path, line, k);
    }
    if (!strcmp(k, "success") && n == 2)
        return ld_once(&l->success, tok[1], path, line, k);
    if (!strcmp(k, "fail") && n == 2)
        return ld_once(&l->fail, tok[1], path, line, k);
    if (!strcmp(k, "fail-init") && n == 2)
        return ld_once(&l->fail_init, tok[1], path, line, k);
    if (!strcmp(k, "overlay") && n == 2)
        return ld_once(&l->overlay, tok[1], path, line, k);
    if (!strcmp(k, "entry") && n == 2)
        return ld_once(&l->entry, tok[1], path, line, k);
    if (!strcmp(k, "version") && n == 3) {
        if ((rc = ld_once(&l->version_macro, tok[1], path, line, k)) != CG_OK)
            return rc;
        return ld_once(&l->version_header, tok[2], path, line, k);
    }
    if (!strcmp(k, "opt-in") && n == 1) {
        l->opt_in = 1;
        return CG_OK;
    }
    if (!strcmp(k, "separate") && n == 1) {
        l->separate = 1;
        return CG_OK;
    }
    if (!strcmp(k, "legacy-pass")) {
        l->legacy_pass = 1;
        for (int i = 1; i < n && !rc; i++)
            rc = ld_add(l->legacy_defines, &l->nlegacy_defines, LD_MAX, tok[i], path, line);
        return rc;
    }
    if (!strcmp(k, "versioned") && n >= 2) {
        for (int i = 1; i < n; i++) {
            if (!strcmp(tok[i], "_v<N>"))
                l->strip_v = 1;
            else if (!strcmp(tok[i], "_ptds"))
                l->pt_suffixes |= 1 << PT_PTDS;
            else if (!strcmp(tok[i], "_ptsz"))
                l->pt_suffixes |= 1 << PT_PTSZ;
            else if (!strcmp(tok[i], "_64"))
                l->strip_64 = 1;
            else
                return ld_fail(path, line, "'versioned' knows _v<N>, _64, _ptds and _ptsz, got", tok[i]);
        }
        return CG_OK;
    }
    if (!strcmp(k, "symbol-version") && n >= 2) {
        /* Read by the runtime's build (runtime/CMakeLists.txt), not by the generator:
           checked here so that a typo fails where descriptors are read. NODE, then per-major
           exceptions MAJOR=NODE (CUDA 11's runtime is libcudart.so.11.0). */
        for (int i = 1; i < n; i++) {
            const char *c = tok[i];
            if (i > 1) {
                while (*c >= '0' && *c <= '9')
                    c++;
                if (c == tok[i] || *c++ != '=' || *c == '\0')
                    return ld_fail(path, line, "'symbol-version' exceptions read MAJOR=NODE (11=libcudart.so.11.0), got",
                                   tok[i]);
            }
            for (; *c != '\0'; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      *c == '.' || *c == '_' || *c == '{' || *c == '}'))
                    return ld_fail(path, line,
                                   "'symbol-version' takes a node name such as libcudart.so.{major}, got", tok[i]);
        }
        return CG_OK;
    }
    if (!strcmp(k, "soname")) {
        for (int i = 1; i < n && !rc; i++)
            rc = ld_add(l->sonames, &l->nsonames, LD_MAX, tok[i], path, line);
        return n < 2 ? ld_fail(path, line, "'soname' needs a name", k) : rc;
    }
    if (!strcmp(k, "prefix")) {
        for (int i = 1; i < n && !rc; i++)
            rc = ld_add(l->prefixes, &l->nprefixes, LD_MAX, tok[i], path, line);
        return n < 2 ? ld_fail(path, line, "'prefix' needs a name prefix", k) : rc;
    }
    if (!strcmp(k, "define")) {
        for (int i = 1; i < n && !rc; i++)
            rc = ld_add(l->defines, &l->ndefines, LD_MAX, tok[i], path, line);
        return n < 2 ? ld_fail(path, line, "'define' needs a macro", k) : rc;
    }
    if (!strcmp(k, "typedefs")) {
        for (int i = 1; i < n && !rc; i++)
            rc = ld_add(l->typedefs, &l->ntypedefs, LD_MAX, tok[i], path, line);
        return n < 2 ? ld_fail(path, line, "'typedefs' needs a header", k) : rc;
    }
    if (!strcmp(k, "header") && n >= 2) {
        cg_lib_header *h;
        if (l->nheaders >= LD_MAX)
            return ld_fail(path, line, "too many headers at", tok[1]);
        h = &l->headers[l->nheaders++];
        h->name = ut_strdup(tok[1]);
        for (int i = 2; i < n; i++) {
            if (!strcmp(tok[i], "required"))
                h->required = 1;
            else if (ut_starts(tok[i], "prereq="))
                h->prereq = ut_strdup(tok[i] + 7);
            else
                return ld_fail(path, line, "'header' takes 'required' and 'prereq=HEADER', got", tok[i]);
        }
        return CG_OK;
    }
    if (!strcmp(k, "report") && n >= 2) {
        if (l->nreports >= LD_MAX)
            return ld_fail(path, line, "too many 'report' lines at", tok[1]);
        l->reports[l->nreports].path = ut_strdup(tok[1]);
        l->reports[l->nreports].extra_note = n > 2 ? ld_rest(tok, 2, n) : NULL;
        l->nreports++;
        return CG_OK;
    }
    if (!strcmp(k, "report-skip") && n >= 3) {
        if (l->nskips >= LD_MAX)
            return ld_fail(path, line, "too many 'report-skip' lines at", tok[1]);
        l->skips[l->nskips].prefix = ut_strdup(tok[1]);
        l->skips[l->nskips].reason = ld_rest(tok, 2, n);
        l->nskips++;
        return CG_OK;
    }
    return ld_fail(path, line, "unknown key or wrong number of values:", k);
}

static int ld_check(const cg_lib *l, const char *path)
{
    const char *miss = !l->name ? "library" : !l->sdk ? "sdk" : !l->nsonames ? "soname" : !l->nheaders ? "header"
                     : !l->nprefixes ? "prefix" : NULL;
    if (!miss && l->status_type && (!l->ret_kind || !l->success || !l->fail || !l->fail_init))
        miss = "retkind, success, fail and fail-init (a library with a status type)";
    if (miss) {
        ut_error("%s: missing '%s'", path, miss);
        return CG_EINPUT;
    }
    return CG_OK;
}

int ld_load(cg_model *m, const char *dir, const char *name)
{
    char *path = ut_printf("%s/%s.lib", dir, name), *text = NULL, *s;
    unsigned line = 0;
    int rc;
    cg_lib *l;
    if (m->nlibs >= CG_MAX_LIBS) {
        ut_error("at most %d libraries per tree", CG_MAX_LIBS);
        free(path);
        return CG_EINPUT;
    }
    for (int i = 0; i < m->nlibs; i++)
        if (!strcmp(m->libs[i].name, name)) {
            ut_error("library '%s' given twice", name);
            free(path);
            return CG_EINPUT;
        }
    rc = ut_read_file(path, &text, NULL);
    if (rc) {
        ut_error("no descriptor for library '%s' (%s)", name, path);
        free(path);
        return CG_EINPUT;
    }
    l = &m->libs[m->nlibs];
    memset(l, 0, sizeof *l);
    s = text;
    while (!rc && s && *s) {
        char *nl = strchr(s, '\n'), *hash, *tok[24], *save = NULL, *t;
        int n = 0;
        line++;
        if (nl)
            *nl = 0;
        hash = strchr(s, '#');
        if (hash)
            *hash = 0;
        for (t = strtok_r(s, " \t\r", &save); t && n < 24; t = strtok_r(NULL, " \t\r", &save))
            tok[n++] = t;
        if (n)
            rc = ld_line(l, tok, n, path, line);
        s = nl ? nl + 1 : NULL;
    }
    free(text);
    if (!rc)
        rc = ld_check(l, path);
    if (!rc && strcmp(l->name, name)) {
        ut_error("%s: says 'library %s'; the file name says '%s'", path, l->name, name);
        rc = CG_EINPUT;
    }
    for (int i = 0; !rc && i < m->nlibs; i++)
        if (m->libs[i].value == l->value ||
            (l->ret_kind && m->libs[i].ret_kind == l->ret_kind &&
             (!m->libs[i].status_type || strcmp(m->libs[i].status_type, l->status_type)))) {
            ut_error("%s: sdk or retkind value already used by library '%s'", path, m->libs[i].name);
            rc = CG_EINPUT;
        }
    free(path);
    if (rc) {
        m->nlibs++;   /* md_free releases what was read */
        return rc;
    }
    m->nlibs++;
    return CG_OK;
}

const cg_lib *ld_by_value(const cg_model *m, int value)
{
    for (int i = 0; i < m->nlibs; i++)
        if (m->libs[i].value == value)
            return &m->libs[i];
    return NULL;
}

int ld_index(const cg_model *m, int value)
{
    for (int i = 0; i < m->nlibs; i++)
        if (m->libs[i].value == value)
            return i;
    return -1;
}

const char *ld_retkind_name(const cg_model *m, int kind)
{
    for (int i = 0; i < m->nlibs; i++)
        if (m->libs[i].ret_kind && m->libs[i].ret_kind == kind)
            return m->libs[i].ret_kind_name;
    return "CUSHIM_RET_OTHER";
}

void ld_free(cg_lib *l)
{
    free(l->name);
    free(l->sdk);
    free(l->ret_kind_name);
    free(l->status_type);
    free(l->status_enum);
    free(l->success);
    free(l->fail);
    free(l->fail_init);
    free(l->entry);
    free(l->overlay);
    free(l->version_macro);
    free(l->version_header);
    for (int i = 0; i < l->nsonames; i++)
        free(l->sonames[i]);
    for (int i = 0; i < l->nprefixes; i++)
        free(l->prefixes[i]);
    for (int i = 0; i < l->ndefines; i++)
        free(l->defines[i]);
    for (int i = 0; i < l->nlegacy_defines; i++)
        free(l->legacy_defines[i]);
    for (int i = 0; i < l->ntypedefs; i++)
        free(l->typedefs[i]);
    for (int i = 0; i < l->nheaders; i++) {
        free(l->headers[i].name);
        free(l->headers[i].prereq);
    }
    for (int i = 0; i < l->nreports; i++) {
        free(l->reports[i].path);
        free(l->reports[i].extra_note);
    }
    for (int i = 0; i < l->nskips; i++) {
        free(l->skips[i].prefix);
        free(l->skips[i].reason);
    }
    memset(l, 0, sizeof *l);
}

/* Is define 'i' of library 'l' the first of that text in the tree (the
   driver and runtime both name __CUDA_API_VERSION_INTERNAL)? */
int ld_define_first(const cg_model *m, int l, int i)
{
    for (int a = 0; a <= l; a++)
        for (int b = 0; b < (a == l ? i : m->libs[a].ndefines); b++)
            if (!strcmp(m->libs[a].defines[b], m->libs[l].defines[i]))
                return 0;
    return 1;
}

/* Every library's success/fail/fail-init names an enumerator of its status enum. */
int ld_check_results(const cg_model *m)
{
    for (int l = 0; l < m->nlibs; l++) {
        const cg_lib *x = &m->libs[l];
        const char *names[3] = {x->success, x->fail, x->fail_init};
        for (int k = 0; k < 3 && x->ret_kind; k++) {
            int found = 0;
            for (int i = 0; i < m->nresults && !found; i++)
                found = m->results[i].kind == x->ret_kind && !strcmp(m->results[i].name, names[k]);
            if (!found) {
                ut_error("library '%s': '%s' is not an enumerator of %s", x->name, names[k], x->status_type);
                return CG_EINPUT;
            }
        }
    }
    return CG_OK;
}

/* Library 'l' shares its status type with an earlier library (cuBLASLt's
   cublasStatus_t is cuBLAS's): one ret kind, whose names that library lists. */
int ld_status_shared(const cg_model *m, int l)
{
    for (int i = 0; i < l; i++)
        if (m->libs[i].status_type && m->libs[l].status_type &&
            !strcmp(m->libs[i].status_type, m->libs[l].status_type))
            return 1;
    return 0;
}
