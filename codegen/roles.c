/*
 * roles.c - allocation roles: which APIs create or release memory, and how
 * a quota can tell the device, the size and the resulting pointer or handle
 * (docs/generator.md, "role" entries; sdk cushim_meta.h cushim_alloc_role).
 *
 *   role <function-glob> <action> [mem=device|host|managed|array] [size=<expr>]
 *        [dev=<rule>] [out=<param>] [ref=<param>] [since=<V>] [until=<V>]
 *   role <function-glob> none <reason...>
 *
 * The overlay parser (overlay.c) hands 'role' lines here; rl_apply runs after
 * the overlay's own entries; em_build asks for the generated table
 * (cushim_alloc_roles.inc); rp_report calls rl_check, which fails when an API
 * in category alloc, free, vmm or pool has no role.
 */
#include "cg.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers as in cushim_meta.h (CUSHIM_ROLE_*, CUSHIM_MEM_*, CUSHIM_SIZE_*, CUSHIM_DEV_*). */
static const char *const rl_actions[] = {"none", "alloc", "release", "import", "unimport", "retain", NULL};
static const char *const rl_mems[] = {"-", "device", "host", "managed", "array", NULL};
static const char *const rl_sizes[] = {"-",      "param",  "product", "array",     "array3d", "mipmap",
                                       "extent", "pitch3d", "chan2d", "chan3d",    "chanmip", "node",    "pitch",
                                       NULL};
static const char *const rl_devs[] = {"-", "ctx", "param", "prop", "pool", "node", "ptr", NULL};
/* how many parameters each size rule names, ':'-separated ('product' uses '*') */
static const int rl_size_args[] = {0, 1, 2, 1, 1, 2, 1, 2, 3, 2, 3, 1, 3};

typedef struct rl_entry {
    unsigned line;
    char *fn;
    int action, mem, size_rule, dev_rule;
    char *size_args[3];
    char *dev_arg, *out, *ref, *reason;
    unsigned since, until;
} rl_entry;

struct cg_role {
    int action, mem, size_rule, dev_rule;
    int size_arg[3], dev_arg, out_arg, ref_arg;
    char *reason;
    unsigned line;
};

static rl_entry *rl_e;
static int rl_n, rl_cap;
static const char *rl_path;

static int rl_word(const char *const *list, const char *w)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], w))
            return i;
    return -1;
}

static int rl_fail(unsigned line, const char *what, const char *tok)
{
    ut_error("%s:%u: %s '%s'", rl_path ? rl_path : "overlay", line, what, tok);
    return CG_EOVERLAY;
}

int rl_parse(const char *path, char **tok, int n, unsigned line)
{
    rl_entry e;
    memset(&e, 0, sizeof e);
    rl_path = path;
    e.line = line;
    if (n < 3)
        return rl_fail(line, "'role' needs a function and an action, got", tok[0]);
    e.fn = ut_strdup(tok[1]);
    e.action = rl_word(rl_actions, tok[2]);
    if (e.action < 0)
        return rl_fail(line, "unknown role action (alloc release import unimport retain none)", tok[2]);
    if (e.action == 0) {
        ut_buf b = {0};
        for (int i = 3; i < n; i++) {
            if (!strncmp(tok[i], "since=", 6)) {
                e.since = (unsigned)strtoul(tok[i] + 6, NULL, 10);
                continue;
            }
            if (!strncmp(tok[i], "until=", 6)) {
                e.until = (unsigned)strtoul(tok[i] + 6, NULL, 10);
                continue;
            }
            ut_bprintf(&b, "%s%s", b.len ? " " : "", tok[i]);
        }
        if (!b.len)
            return rl_fail(line, "'role ... none' needs a reason, got nothing after", tok[2]);
        e.reason = b.s;
    }
    for (int i = 3; e.action != 0 && i < n; i++) {
        char *v = strchr(tok[i], '=');
        if (!v)
            return rl_fail(line, "expected key=value, got", tok[i]);
        *v++ = 0;
        if (!strcmp(tok[i], "mem")) {
            if ((e.mem = rl_word(rl_mems, v)) <= 0)
                return rl_fail(line, "mem must be device, host, managed or array, got", v);
        } else if (!strcmp(tok[i], "size")) {
            char *colon = strchr(v, ':'), *star = strchr(v, '*');
            if (star) {
                e.size_rule = rl_word(rl_sizes, "product");
                *star = 0;
                e.size_args[0] = ut_strdup(v);
                e.size_args[1] = ut_strdup(star + 1);
            } else if (colon) {
                int k = 0;
                char *save = NULL;
                *colon = 0;
                if ((e.size_rule = rl_word(rl_sizes, v)) <= 2)
                    return rl_fail(line, "unknown size rule", v);
                for (char *t = strtok_r(colon + 1, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
                    if (k == 3)
                        return rl_fail(line, "too many parameters in size rule", v);
                    e.size_args[k++] = ut_strdup(t);
                }
                if (k != rl_size_args[e.size_rule])
                    return rl_fail(line, "wrong number of parameters for size rule", v);
            } else {
                e.size_rule = rl_word(rl_sizes, "param");
                e.size_args[0] = ut_strdup(v);
            }
        } else if (!strcmp(tok[i], "dev")) {
            char *colon = strchr(v, ':');
            if (colon)
                *colon = 0;
            if ((e.dev_rule = rl_word(rl_devs, v)) <= 0)
                return rl_fail(line, "dev must be ctx, ptr, param:P, prop:P, pool:P or node:P, got", v);
            if ((e.dev_rule == 1 || e.dev_rule == 6) != (colon == NULL))
                return rl_fail(line, "dev=ctx and dev=ptr take no parameter, the others one", v);
            if (colon)
                e.dev_arg = ut_strdup(colon + 1);
        } else if (!strcmp(tok[i], "out")) {
            e.out = ut_strdup(v);
        } else if (!strcmp(tok[i], "ref")) {
            e.ref = ut_strdup(v);
        } else if (!strcmp(tok[i], "since")) {
            e.since = (unsigned)strtoul(v, NULL, 10);
        } else if (!strcmp(tok[i], "until")) {
            e.until = (unsigned)strtoul(v, NULL, 10);
        } else {
            return rl_fail(line, "unknown role setting", tok[i]);
        }
    }
    if (e.action == 1 && (!e.mem || !e.size_rule || !e.dev_rule || !e.out))
        return rl_fail(line, "an alloc role needs mem=, size=, dev= and out=", tok[1]);
    if ((e.action == 2 || e.action == 4) && !e.ref)
        return rl_fail(line, "a release/unimport role needs ref=", tok[1]);
    if ((e.action == 3 || e.action == 5) && !e.out)
        return rl_fail(line, "an import/retain role needs out=", tok[1]);
    if (rl_n == rl_cap) {
        rl_cap = rl_cap ? 2 * rl_cap : 64;
        rl_e = ut_realloc(rl_e, (size_t)rl_cap * sizeof *rl_e);
    }
    rl_e[rl_n++] = e;
    return CG_OK;
}

static int rl_param(const cg_api *a, const char *name, unsigned line, int *out)
{
    *out = -1;
    if (!name)
        return CG_OK;
    for (int i = 0; i < a->nparams; i++)
        if (!strcmp(a->params[i].name, name)) {
            *out = i;
            return CG_OK;
        }
    ut_error("%s:%u: role parameter '%s' does not exist in %s", rl_path, line, name, a->name);
    return CG_EOVERLAY;
}

int rl_apply(cg_model *m)
{
    for (int k = 0; k < rl_n; k++) {
        const rl_entry *e = &rl_e[k];
        int match = 0;
        if ((e->since && m->cuda_version < e->since) || (e->until && m->cuda_version >= e->until))
            continue;
        for (int i = 0; i < m->napis; i++) {
            cg_api *a = &m->apis[i];
            cg_role *r;
            int rc = 0;
            if (fnmatch(e->fn, a->name, 0) != 0)
                continue;
            match++;
            r = a->role ? a->role : ut_alloc(sizeof *r);
            free(r->reason);
            memset(r, 0, sizeof *r);
            a->role = r;
            r->action = e->action;
            r->mem = e->mem;
            r->size_rule = e->size_rule;
            r->dev_rule = e->dev_rule;
            r->line = e->line;
            r->reason = e->reason ? ut_strdup(e->reason) : NULL;
            for (int j = 0; j < 3; j++)
                rc |= rl_param(a, e->size_args[j], e->line, &r->size_arg[j]);
            rc |= rl_param(a, e->dev_arg, e->line, &r->dev_arg);
            rc |= rl_param(a, e->out, e->line, &r->out_arg);
            rc |= rl_param(a, e->ref, e->line, &r->ref_arg);
            if (rc)
                return CG_EOVERLAY;
        }
        if (!match) {
            ut_error("%s:%u: no function matches role '%s' in these headers (CUDA_VERSION %u)", rl_path, e->line,
                     e->fn, m->cuda_version);
            return CG_EOVERLAY;
        }
    }
    return CG_OK;
}

/* "alloc" -> "ALLOC", "-" -> "NONE" (one static buffer per column). */
static const char *rl_upper(const char *w, int col)
{
    static char buf[4][32];
    size_t i = 0;
    if (!strcmp(w, "-"))
        return "NONE";
    for (; w[i] && i < sizeof buf[col] - 1; i++)
        buf[col][i] = (char)(w[i] >= 'a' && w[i] <= 'z' ? w[i] - 32 : w[i]);
    buf[col][i] = 0;
    return buf[col];
}

/* CUSHIM_ALLOC_ROLE(API, ACTION, MEM, SIZE_RULE, DEV_RULE, S0, S1, S2, DEV, OUT, REF, REASON) */
void rl_emit(ut_buf *b, const cg_model *m)
{
    static const char *const head =
        "/* CUSHIM_ALLOC_ROLE(API, ACTION, MEM, SIZE_RULE, DEV_RULE, SIZE_ARG0, SIZE_ARG1, SIZE_ARG2, DEV_ARG,\n"
        "                    OUT_ARG, REF_ARG, REASON): one per API with an allocation role (overlay 'role'\n"
        "   entries), in id order; arguments are parameter indexes, -1 for none. Define it before including. */\n";
    ut_puts(b, head);
    for (int i = 0; i < m->napis; i++) {
        const cg_api *a = &m->apis[i];
        const cg_role *r = a->role;
        if (!r)
            continue;
        ut_bprintf(b, "CUSHIM_ALLOC_ROLE(%s, CUSHIM_ROLE_%s, ", a->name, rl_upper(rl_actions[r->action], 0));
        ut_bprintf(b, "CUSHIM_MEM_%s, ", rl_upper(rl_mems[r->mem], 1));
        ut_bprintf(b, "CUSHIM_SIZE_%s, ", rl_upper(rl_sizes[r->size_rule], 2));
        ut_bprintf(b, "CUSHIM_DEV_%s, ", rl_upper(rl_devs[r->dev_rule], 3));
        ut_bprintf(b, "%d, %d, %d, %d, %d, %d, ", r->size_arg[0], r->size_arg[1], r->size_arg[2], r->dev_arg,
                   r->out_arg, r->ref_arg);
        if (r->reason) {
            ut_puts(b, "\"");
            for (const char *s = r->reason; *s; s++)
                if (*s == '"' || *s == '\\')
                    ut_bprintf(b, "\\%c", *s);
                else
                    ut_putn(b, s, 1);
            ut_puts(b, "\")\n");
        } else {
            ut_puts(b, "NULL)\n");
        }
    }
}

/* --report: every API in an allocating category has a role. */
int rl_check(const cg_model *m)
{
    unsigned need = 0;
    int missing = 0, n = 0;
    const char *cats[] = {"alloc", "free", "vmm", "pool"};
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++)
        need |= 1u << ut_cat_bit(cats[i]);
    for (int i = 0; i < m->napis; i++) {
        const cg_api *a = &m->apis[i];
        if (a->role)
            n++;
        if (!(a->cats & need) || a->role)
            continue;
        printf("  no allocation role: %s (category alloc, free, vmm or pool): add a 'role' entry to the overlay\n",
               a->name);
        missing++;
    }
    printf("allocation roles: %d APIs, %d in allocating categories without one\n", n, missing);
    if (missing)
        ut_error("--report: %d APIs in category alloc/free/vmm/pool have no allocation role", missing);
    return missing ? CG_EINPUT : CG_OK;
}

void rl_free(void)
{
    for (int i = 0; i < rl_n; i++) {
        free(rl_e[i].fn);
        for (int j = 0; j < 3; j++)
            free(rl_e[i].size_args[j]);
        free(rl_e[i].dev_arg);
        free(rl_e[i].out);
        free(rl_e[i].ref);
        free(rl_e[i].reason);
    }
    free(rl_e);
    rl_e = NULL;
    rl_n = rl_cap = 0;
}

/* The roles attached to the model's APIs (rl_attach): freed here, their owner, before md_free. */
void rl_free_roles(cg_model *m)
{
    for (int i = 0; i < m->napis; i++) {
        cg_role *r = m->apis[i].role;
        if (r)
            free(r->reason);
        free(r);
        m->apis[i].role = NULL;
    }
}
