/*
 * report.c - coverage of the generated API list against the libraries a
 * CUDA toolkit ships: every dynamic export of lib64/stubs/libcuda.so and
 * lib64/libcudart.so (read with 'nm -D') is either in the model or listed
 * with the reason it is not.
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

static void rp_one(const cg_model *m, const rp_list *ex, int lib, const char *what)
{
    int covered = 0, total = 0, hooks = 0;
    for (int i = 0; i < ex->n; i++) {
        const cg_api *a = md_find(m, ex->s[i]);
        if (lib == LIB_RUNTIME && ut_starts(ex->s[i], "__cuda")) {
            hooks++;
            continue;
        }
        total++;
        if (a && a->library == lib)
            covered++;
    }
    printf("%s: %d exports, %d in the model (%.1f%%)", what, ex->n, covered, total ? 100.0 * covered / total : 100.0);
    if (hooks)
        printf("; %d __cuda* compiler registration hooks left out by design", hooks);
    printf("\n");
    for (int i = 0; i < ex->n; i++) {
        const cg_api *a = md_find(m, ex->s[i]);
        if (lib == LIB_RUNTIME && ut_starts(ex->s[i], "__cuda")) {
            printf("  uncovered %s: compiler registration hook (emitted by nvcc, not a public API)\n", ex->s[i]);
            continue;
        }
        if (!a || a->library != lib)
            printf("  uncovered %s: not declared by the parsed headers\n", ex->s[i]);
    }
    for (int i = 0; i < m->napis; i++) {
        const cg_api *a = &m->apis[i];
        if (a->library == lib && !rp_has(ex, a->name))
            printf("  extra %s: declared in %s, not exported by %s\n", a->name, a->header,
                   lib == LIB_DRIVER ? "the stub (the real driver exports the interop entry points)" : "the library");
    }
}

int rp_report(const cg_model *m, const char *root)
{
    rp_list drv = {0}, rt = {0};
    char *p1 = ut_printf("%s/lib64/stubs/libcuda.so", root);
    char *p2 = ut_printf("%s/lib64/libcudart.so", root);
    int rc = rp_exports(p1, &drv);
    if (!rc)
        rc = rp_exports(p2, &rt);
    if (!rc) {
        rp_one(m, &drv, LIB_DRIVER, "driver (lib64/stubs/libcuda.so)");
        rp_one(m, &rt, LIB_RUNTIME, "runtime (lib64/libcudart.so)");
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
    for (int i = 0; i < drv.n; i++)
        free(drv.s[i]);
    for (int i = 0; i < rt.n; i++)
        free(rt.s[i]);
    free(drv.s);
    free(rt.s);
    free(p1);
    free(p2);
    return rc;
}
