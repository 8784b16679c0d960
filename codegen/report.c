/*
 * report.c - coverage of the generated API list against the libraries a
 * CUDA toolkit ships: every dynamic export of each library's 'report' file
 * (descriptor; e.g. lib64/stubs/libcuda.so, lib64/libcudart.so; read with
 * 'nm -D') is either in the model or listed with the reason it is not.
 */
#define _GNU_SOURCE
#include "cg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp_list {
    char **s;
    int n, cap;
} rp_list;

static int rp_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int rp_exports(const char *lib, rp_list *l)
{
    char *cmd = ut_printf("nm -D --defined-only '%s' 2>/dev/null", lib);
    char line[1024];
    FILE *p;
    if (!ut_is_file(lib)) {
        ut_error("--report: '%s' does not exist (give --cuda-root <CUDA>)", lib);
        free(cmd);
        return CG_EINPUT;
    }
    p = popen(cmd, "r");
    free(cmd);
    if (!p) {
        ut_error("--report: cannot run nm");
        return CG_EIO;
    }
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[512], *at;
        if (sscanf(line, "%63s %7s %511s", addr, type, name) != 3)
            continue;
        if (strcmp(type, "T") && strcmp(type, "W") && strcmp(type, "i"))
            continue;
        at = strchr(name, '@');
        if (at)
            *at = 0;
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 1024;
            l->s = ut_realloc(l->s, (size_t)l->cap * sizeof *l->s);
        }
        l->s[l->n++] = ut_strdup(name);
    }
    if (pclose(p) != 0 && l->n == 0) {
        ut_error("--report: nm failed on '%s'", lib);
        return CG_EIO;
    }
    qsort(l->s, (size_t)l->n, sizeof *l->s, rp_cmp);
    return CG_OK;
}

static int rp_has(const rp_list *l, const char *name)
{
    return bsearch(&name, l->s, (size_t)l->n, sizeof *l->s, rp_cmp) != NULL;
}

static const char *rp_skip(const cg_lib *l, const char *name)
{
    for (int i = 0; i < l->nskips; i++)
        if (ut_starts(name, l->skips[i].prefix))
            return l->skips[i].reason;
    return NULL;
}

static void rp_one(const cg_model *m, const rp_list *ex, const cg_lib *l, const char *what, const char *extra)
{
    int covered = 0, total = 0, hooks = 0;
    for (int i = 0; i < ex->n; i++) {
        const cg_api *a = md_find(m, ex->s[i]);
        if (rp_skip(l, ex->s[i])) {
            hooks++;
            continue;
        }
        total++;
        if (a && a->library == l->value)
            covered++;
    }
    printf("%s: %d exports, %d in the model (%.1f%%)", what, ex->n, covered, total ? 100.0 * covered / total : 100.0);
    if (hooks) {   /* one kind of skip per library: its words before any '(' name it */
        const char *r = l->skips[0].reason, *par = strchr(r, '(');
        int n = par ? (int)(par - r) : (int)strlen(r);
        while (n > 0 && r[n - 1] == ' ')
            n--;
        printf("; %d %s* %.*ss left out by design", hooks, l->skips[0].prefix, n, r);
    }
    printf("\n");
    for (int i = 0; i < ex->n; i++) {
        const cg_api *a = md_find(m, ex->s[i]);
        const char *why = rp_skip(l, ex->s[i]);
        if (why) {
            printf("  uncovered %s: %s\n", ex->s[i], why);
            continue;
        }
        if (!a || a->library != l->value) {
            int v = 0;
            for (int k = 0; k < m->nvoids && !v; k++)
                v = !strcmp(m->voids[k], ex->s[i]);
            printf("  uncovered %s: %s\n", ex->s[i],
                   v ? "returns void: not interposed (the wrapper body needs a return value)"
                     : "not declared by the parsed headers");
        }
    }
    for (int i = 0; i < m->napis; i++) {
        const cg_api *a = &m->apis[i];
        if (a->library == l->value && !rp_has(ex, a->name))
            printf("  extra %s: declared in %s, not exported by %s\n", a->name, a->header,
                   extra ? extra : "the library");
    }
}

/* Every library's 'report' files (relative to the CUDA root; the first one
   found of each library is read). */
int rp_report(const cg_model *m, const char *root)
{
    int rc = CG_OK;
    for (int l = 0; l < m->nlibs && !rc; l++) {
        const cg_lib *x = &m->libs[l];
        rp_list ex = {0};
        char *path = NULL;
        int k;
        if (!x->nreports)
            continue;
        for (k = 0; k < x->nreports; k++) {
            const char *rel = x->reports[k].path + (x->reports[k].path[0] == '?');
            free(path);
            path = ut_printf("%s/%s", root, rel);
            if (ut_is_file(path))
                break;
        }
        if (k == x->nreports) {
            k = 0;
            if (x->reports[0].path[0] == '?') {   /* optional: a library the toolkit does not ship */
                printf("%s: %s is not under %s: not checked (give --cuda-root a tree that has it)\n", x->name,
                       x->reports[0].path + 1, root);
                free(path);
                continue;
            }
            free(path);
            path = ut_printf("%s/%s", root, x->reports[0].path);
        }
        rc = rp_exports(path, &ex);
        if (!rc) {
            char *what = ut_printf("%s (%s)", x->name, x->reports[k].path + (x->reports[k].path[0] == '?'));
            rp_one(m, &ex, x, what, x->reports[k].extra_note);
            free(what);
        }
        for (int i = 0; i < ex.n; i++)
            free(ex.s[i]);
        free(ex.s);
        free(path);
    }
    if (!rc) {
        for (int i = 0; i < m->npfns; i++)
            if (!m->pfns[i].present)
                printf("  pfn %s %s_v%u%s (%s:%u) -> %s: no such export in the parsed headers; left out of the "
                       "variant table\n",
                       m->pfns[i].per_thread ? "per_thread" : "legacy", m->pfns[i].base, m->pfns[i].version,
                       m->pfns[i].per_thread == PT_PTDS ? "_ptds" : m->pfns[i].per_thread == PT_PTSZ ? "_ptsz" : "",
                       m->pfns[i].file, m->pfns[i].line, m->pfns[i].exported);
        printf("parameters unclassified (kind or direction unknown): %d\n", m->unclassified);
        rc = rl_check(m);
    }
    return rc;
}
