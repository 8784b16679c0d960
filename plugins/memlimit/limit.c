/*
 * limit.c - cushim-limit: the limits of a shared budget, changed while its
 * processes run ('cushim limit NAME [--mem=SPEC] [--sm=PCT] ...' runs it;
 * docs/launcher.md, docs/plugins/memlimit.md "Live limits").
 *
 *   cushim-limit NAME                       the limits in force
 *   cushim-limit NAME --mem=8GiB --sm=30    set them (every process within 1 s)
 *   cushim-limit NAME --mem=off --sm=off    back to each process's own limits
 *   cushim-limit NAME --priority=high       smlimit's priority of every process of the group (off: their own)
 *
 * NAME is memlimit's budget (/dev/shm/cushim-budget-NAME, budget=NAME) and
 * smlimit's group of this user (/dev/shm/cushim-smlimit4-<uid>-NAME, group=NAME).
 * Only regions that exist are touched (a typo creates nothing). Who may change a
 * region is who may join it (plugins/common/region.c): its owner, or a member
 * of its group for a group-shared budget; a region anybody else can write is
 * refused. memlimit's processes read the new limits at their next allocation or
 * memory query; smlimit's at their next heartbeat (50 ms), which they
 * acknowledge in their slots: this program waits for that (--wait-ms, 1000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "limitspec.h"
#include "ml_budget.h"
#include "ml_limits.h"
#include "region.h"
#include "shm.h"

static const char lm_usage[] =
    "usage: cushim-limit NAME [--mem=SPEC|off] [--sm=PCT|off] [--priority=LEVEL|off] [--wait-ms=N]\n"
    "  --mem=SPEC   memlimit budget NAME: 8GiB (every device), 0:8GiB,1:4GiB (the devices named), 0 = no limit;\n"
    "               off = each process's own limit again\n"
    "  --sm=PCT     smlimit group NAME: 30 (every device), 0:30,1:50; 100 = no limit; off = each process's own\n"
    "  --priority=LEVEL  smlimit group NAME: high, normal, low (or HAMi's number: 0 high, 1 normal, 2 low) for\n"
    "               every process of the group; off = each process's own priority again\n"
    "  --wait-ms=N  how long to wait for smlimit's processes to acknowledge (default 1000)\n"
    "Without --mem, --sm or --priority: the limits in force.\n"
    "--sm and --priority reach the processes that run with smlimit's hooks (started with a compute limit or a\n"
    "priority); others have nothing to change.\n";

static int lm_bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "cushim limit: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", lm_usage);
    return 2;
}

static uint64_t lm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The group a region is shared with: the file's group when group members may write it, else -1 (this user's). */
static long lm_gid_of(const struct stat *st)
{
    return (st->st_mode & S_IWGRP) ? (long)st->st_gid : -1;
}

static void lm_bytes(uint64_t v, char *out, size_t cap)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)v;
    int u = 0;
    while (x >= 1024 && u < 4 && (v % 1024 == 0 || x >= 10240)) {
        x /= 1024;
        v /= 1024;
        u++;
    }
    snprintf(out, cap, x == (double)(uint64_t)x ? "%.0f%s" : "%.2f%s", x, unit[u]);
}

/* ---- memlimit's budget ---- */

/* --mem's text: live[d] for ml_budget_set_live. 0, or -1 with a reason. */
static int lm_mem_spec(const char *text, uint64_t live[ML_MAX_DEVICES], char *err, size_t errlen)
{
    ml_limits l;
    memset(live, 0, sizeof(uint64_t) * ML_MAX_DEVICES);
    if (strcmp(text, "off") == 0) {
        for (int d = 0; d < ML_MAX_DEVICES; d++)
            live[d] = ML_LIVE_DROP;
        return 0;
    }
    if (strchr(text, ':') == NULL) {   /* one size for every device; 0: no limit */
        uint64_t v;
        if (ml_parse_bytes(text, &v) != 0) {
            snprintf(err, errlen, "--mem=%s: not a size (8GiB, 512MiB, 0 for no limit) nor off", text);
            return -1;
        }
        for (int d = 0; d < ML_MAX_DEVICES; d++)
            live[d] = v == 0 ? ML_LIVE_UNLIMITED : v;
        return 0;
    }
    if (ml_parse_spec(text, &l, err, errlen) != 0)
        return -1;
    for (int d = 0; d < ML_MAX_DEVICES; d++) {   /* the devices the list gives a size (or '*:') */
        uint64_t v = ml_limit_of(&l, d);
        if (v != 0)
            live[d] = v;
    }
    return 0;
}

static int lm_mem(const char *name, const char *spec, int *found)
{
    char path[256], err[700];
    struct stat st;
    ml_budget b;
    int rc = 0;
    if (ml_budget_path(name, path, sizeof path) != 0)
        return 0;   /* not a budget name: smlimit's group only */
    if (stat(path, &st) != 0)
        return 0;
    *found = 1;
    if (spec != NULL) {
        uint64_t live[ML_MAX_DEVICES];
        if (lm_mem_spec(spec, live, err, sizeof err) != 0) {
            fprintf(stderr, "cushim limit: %s\n", err);
            return 2;
        }
        if (ml_budget_admin(&b, path, lm_gid_of(&st), err, sizeof err) != 0) {
            fprintf(stderr, "cushim limit: %s: not changed (only its owner, or its group's members for a budget "
                    "shared with budget_group=, may change it)\n", err);
            return 1;
        }
        uint32_t g = ml_budget_set_live(&b, live);
        printf("memory: budget %s: live limits set (generation %u): each process applies them at its next "
               "allocation or memory query\n", path, g);
        ml_budget_close(&b);
    }
    if (ml_budget_attach(&b, path, err, sizeof err) != 0) {
        fprintf(stderr, "cushim limit: %s\n", err);
        return 1;
    }
    uint32_t devmax = atomic_load(&b.r->devmax);
    int shown = 0;
    printf("memory: budget %s\n", path);
    for (int d = 0; d < ML_MAX_DEVICES; d++) {
        uint64_t live = atomic_load(&b.r->live[d]), own = atomic_load(&b.r->limit[d]);
        char a[32], c[32], u[32];
        if (live == 0 && own == 0 && (uint32_t)d >= devmax)
            continue;
        lm_bytes(ml_budget_used(&b, d), u, sizeof u);
        if (live == ML_LIVE_UNLIMITED)
            snprintf(a, sizeof a, "none (live)");
        else if (live != 0)
            lm_bytes(live, a, sizeof a), strcat(a, " (live)");
        else if (own != 0)
            lm_bytes(own, a, sizeof a), strcat(a, " (configured)");
        else
            snprintf(a, sizeof a, "none");
        c[0] = '\0';
        if (live != 0 && own != 0)
            lm_bytes(own, c, sizeof c);
        printf("  device %d: limit %s%s%s, in use %s\n", d, a, c[0] ? ", configured " : "", c, u);
        shown++;
    }
    if (!shown)
        printf("  no limit on any device, nothing charged yet\n");
    ml_budget_close(&b);
    return rc;
}

/* ---- smlimit's group ---- */

/* --priority's text: the region's live_prio (SML_PRIO_* + 1; 0 = off). 0, or -1 when it is no priority. */
static int lm_prio_spec(const char *text, uint32_t *out)
{
    int level;
    if (strcmp(text, "off") == 0) {
        *out = 0;
        return 0;
    }
    if (sml_parse_priority(text, &level) != 0)
        return -1;
    *out = (uint32_t)level + 1;
    return 0;
}

static int lm_sm(const char *name, const char *spec, const char *prio, long wait_ms, int *found)
{
    char path[200], err[700];
    struct stat st;
    rg_region rg;
    sml_region *r;
    uint32_t g = 0;
    int change = spec != NULL || prio != NULL;
    if (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(name) || strlen(name) > 64)
        return 0;   /* not a group name (smlimit's are [a-z0-9_-]) */
    snprintf(path, sizeof path, "/dev/shm" SML_SHM_PREFIX "%u-%s", (unsigned)geteuid(), name);
    if (stat(path, &st) != 0)
        return 0;
    *found = 1;
    if (change) {
        uint32_t w[SML_SHM_DEVICES], lp = 0;
        if (spec != NULL && strcmp(spec, "off") == 0) {
            for (int d = 0; d < SML_SHM_DEVICES; d++)
                w[d] = 0;
        } else if (spec != NULL) {
            double pct[SML_LIMIT_DEVICES];
            if (sml_parse_limits(spec, pct, err, sizeof err) != 0) {
                fprintf(stderr, "cushim limit: --sm=%s: %s\n", spec, err);
                return 2;
            }
            for (int d = 0; d < SML_SHM_DEVICES; d++) {
                double p = pct[d] <= 0 || pct[d] >= 100 ? 100 : pct[d];
                w[d] = (uint32_t)(p * 10 + 0.5);
                if (w[d] == 0)
                    w[d] = 1;
            }
        }
        if (prio != NULL && lm_prio_spec(prio, &lp) != 0) {   /* checked in main already */
            fprintf(stderr, "cushim limit: --priority=%s: give high, normal, low, HAMi's number or off\n", prio);
            return 2;
        }
        if (rg_open(&rg, path, sizeof(sml_region), SML_SHM_MAGIC, 4, -1, 0, err, sizeof err) != 0) {
            fprintf(stderr, "cushim limit: %s: not changed (only its owner may change it)\n", err);
            return 1;
        }
        r = rg.base;
        if (spec != NULL)
            for (int d = 0; d < SML_SHM_DEVICES; d++)
                atomic_store_explicit(&r->live_weight[d], w[d], memory_order_relaxed);
        if (prio != NULL)
            atomic_store_explicit(&r->live_prio, lp, memory_order_relaxed);
        g = atomic_fetch_add_explicit(&r->live_gen, 1, memory_order_release) + 1;
        rg_close(&rg);
    }
    if (rg_open(&rg, path, sizeof(sml_region), SML_SHM_MAGIC, 4, -1, 1, err, sizeof err) != 0) {
        fprintf(stderr, "cushim limit: %s\n", err);
        return 1;
    }
    r = rg.base;
    /* the processes acknowledge a change at their next heartbeat (poll.c): wait for every live one */
    int live = 0, acked = 0;
    uint64_t t0 = lm_now(), deadline = t0 + (uint64_t)wait_ms * 1000000ull;
    for (;;) {
        uint64_t now = lm_now();
        live = acked = 0;
        for (int d = 0; d < SML_SHM_DEVICES; d++)
            for (int k = 0; k < SML_SHM_SLOTS; k++) {
                sml_slot *s = &r->slot[d][k];
                if (atomic_load(&s->pid) == 0 || !rg_slot_held(&rg, (uint32_t)(d * SML_SHM_SLOTS + k)))
                    continue;
                live++;
                acked += atomic_load(&s->live_gen) == atomic_load(&r->live_gen);
            }
        if (!change || acked == live || now >= deadline)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    printf("compute: group %s\n", path);
    if (change)
        printf("  live %s set (generation %u): applied by %d of %d processes' devices in %.0f ms\n",
               spec != NULL && prio != NULL ? "limits and priority" : spec != NULL ? "limits" : "priority", g, acked,
               live, (lm_now() - t0) / 1e6);
    if (live == 0)   /* a process without smlimit's hooks never joins the region: it cannot be reached */
        printf("  no process of the group runs with smlimit's hooks now: %s (a process started without a compute "
               "limit or a priority has none; start it with priority=normal, or a limit, to make it reachable)\n",
               change ? "nothing applied it" : "nothing to show");
    uint32_t lp = atomic_load(&r->live_prio);
    if (lp >= 1 && lp <= 3)
        printf("  live priority: %s for every process\n", sml_priority_name((int)lp - 1));
    else
        printf("  priority: each process's own\n");
    int same = 1;
    for (int d = 1; d < SML_SHM_DEVICES; d++)
        same &= atomic_load(&r->live_weight[d]) == atomic_load(&r->live_weight[0]);
    if (same && atomic_load(&r->live_weight[0]) != 0) {
        uint32_t w = atomic_load(&r->live_weight[0]);
        if (w >= 1000)
            printf("  live limit: none on every device\n");
        else
            printf("  live limit: %.4g%% on every device\n", w / 10.0);
    }
    for (int d = 0; d < SML_SHM_DEVICES; d++) {
        uint32_t w = atomic_load(&r->live_weight[d]);
        int n = 0;
        for (int k = 0; k < SML_SHM_SLOTS; k++)
            n += atomic_load(&r->slot[d][k].pid) != 0 && rg_slot_held(&rg, (uint32_t)(d * SML_SHM_SLOTS + k));
        if (n == 0 && (w == 0 || same))
            continue;
        printf("  device %d: limit %s", d, w == 0 ? "each process's own" : "");
        if (w >= 1000)
            printf("none (live)");
        else if (w != 0)
            printf("%.4g%% (live)", w / 10.0);
        printf(", %d process%s", n, n == 1 ? "" : "es");
        for (int k = 0; k < SML_SHM_SLOTS; k++) {
            sml_slot *s = &r->slot[d][k];
            uint32_t p;
            if (atomic_load(&s->pid) == 0 || !rg_slot_held(&rg, (uint32_t)(d * SML_SHM_SLOTS + k)))
                continue;
            uint32_t wt = atomic_load(&s->weight);
            char lim[32];
            p = atomic_load(&s->prio);
            if (wt == 0)   /* a priority alone, or a live 100%: it claims no share */
                snprintf(lim, sizeof lim, "no limit");
            else
                snprintf(lim, sizeof lim, "%.4g%%", wt / 10.0);
            printf(" [pid %d: %s, using %.4g%%, priority %s]", (int)atomic_load(&s->pid), lim,
                   atomic_load(&s->usage) / 10.0, p >= 1 && p <= 3 ? sml_priority_name((int)p - 1) : "none");
        }
        printf("\n");
    }
    rg_close(&rg);
    return change && acked < live ? 3 : 0;
}

int main(int argc, char **argv)
{
    const char *name = NULL, *mem = NULL, *sm = NULL, *prio = NULL;
    long wait_ms = 1000;
    int found = 0, rc, rc2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(lm_usage, stdout);
            return 0;
        } else if (strncmp(a, "--mem=", 6) == 0 && a[6]) {
            mem = a + 6;
        } else if (strncmp(a, "--sm=", 5) == 0 && a[5]) {
            sm = a + 5;
        } else if (strncmp(a, "--priority=", 11) == 0 && a[11]) {
            uint32_t lp;
            prio = a + 11;
            if (lm_prio_spec(prio, &lp) != 0)
                return lm_bad("--priority: '%s' is not high, normal, low, HAMi's number (0 high, 1 normal, 2 low) "
                              "nor off", prio);
        } else if (strncmp(a, "--wait-ms=", 10) == 0) {
            char *end;
            errno = 0;
            wait_ms = strtol(a + 10, &end, 10);
            if (errno || *end || end == a + 10 || wait_ms < 0 || wait_ms > 60000)
                return lm_bad("--wait-ms: '%s' is not 0..60000", a + 10);
        } else if (a[0] == '-') {
            return lm_bad("unknown option '%s'", a);
        } else if (name == NULL) {
            name = a;
        } else {
            return lm_bad("one NAME expected, and '%s' is a second", a);
        }
    }
    if (name == NULL || !*name)
        return lm_bad("a budget NAME expected%s", "");
    rc = lm_mem(name, mem, &found);
    if (rc == 2)
        return 2;
    rc2 = lm_sm(name, sm, prio, wait_ms, &found);
    if (!found) {
        fprintf(stderr, "cushim limit: no budget or group '%s': no process has opened /dev/shm/cushim-budget-%s nor "
                "/dev/shm" SML_SHM_PREFIX "%u-%s (nothing is created)\n", name, name, (unsigned)geteuid(), name);
        return 1;
    }
    if (mem != NULL) {
        char p[256];
        struct stat st;
        if (ml_budget_path(name, p, sizeof p) != 0 || stat(p, &st) != 0) {
            fprintf(stderr, "cushim limit: --mem: no memlimit budget '%s' is open\n", name);
            rc = rc ? rc : 1;
        }
    }
    if (sm != NULL || prio != NULL) {
        char p[200];
        struct stat st;
        snprintf(p, sizeof p, "/dev/shm" SML_SHM_PREFIX "%u-%s", (unsigned)geteuid(), name);
        if (stat(p, &st) != 0) {
            fprintf(stderr, "cushim limit: %s: no smlimit group '%s' of this user is open\n",
                    sm != NULL ? "--sm" : "--priority", name);
            rc = rc ? rc : 1;
        }
    }
    return rc ? rc : rc2;
}
