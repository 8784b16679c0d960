/*
 * usage.c - cushim-usage: print a memlimit budget's per-process table, or the
 * same in the Prometheus text exposition format (for node_exporter's textfile
 * collector). 'cushim usage [NAME|PATH] [--prometheus]' runs it.
 *
 *   cushim-usage [--prometheus] [NAME|PATH]
 * NAME defaults to $CUDA_DEVICE_MEMORY_SHARED_CACHE when set. Reads the region
 * without taking a slot; a slot whose owner died is shown as 'dead' (its
 * usage is reclaimed by the next process that needs the room).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml_budget.h"

static void usage(FILE *f)
{
    fputs("usage: cushim usage [--prometheus] [NAME|PATH]\n"
          "  The per-process table of memlimit budget NAME (/dev/shm/cushim-budget-NAME) or of the region\n"
          "  at PATH (default: $CUDA_DEVICE_MEMORY_SHARED_CACHE). --prometheus: Prometheus text format.\n",
          f);
}

static void prom_label(const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            putchar('\\');
        if (*s == '\n') {
            fputs("\\n", stdout);
            continue;
        }
        putchar(*s);
    }
}

int main(int argc, char **argv)
{
    const char *name = NULL;
    int prom = 0;
    char path[256], err[512], comm[17];
    ml_budget b;
    uint32_t hw;
    int ndev;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--prometheus"))
            prom = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "cushim usage: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (name == NULL)
            name = argv[i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (name == NULL)
        name = getenv("CUDA_DEVICE_MEMORY_SHARED_CACHE");
    if (name == NULL || ml_budget_path(name, path, sizeof path) != 0) {
        fprintf(stderr, "cushim usage: %s\n", name ? "bad budget name (want [A-Za-z0-9_.-]+ or an absolute path)"
                                                    : "which budget? give a NAME or a PATH");
        return 2;
    }
    if (ml_budget_attach(&b, path, err, sizeof err) != 0) {
        fprintf(stderr, "cushim usage: %s\n", err);
        return 1;
    }
    hw = atomic_load(&b.r->hiwater);
    ndev = (int)atomic_load(&b.r->devmax);
    if (ndev < 1)
        ndev = 1;
    if (ndev > ML_MAX_DEVICES)
        ndev = ML_MAX_DEVICES;
    if (prom) {
        printf("# HELP cushim_memlimit_used_bytes Device memory charged by a process to a cushim memlimit budget.\n"
               "# TYPE cushim_memlimit_used_bytes gauge\n");
    } else {
        printf("budget %s\n", path);
        printf("%-5s %-8s %-16s %-6s %5s %16s %16s %16s %16s %8s\n", "slot", "pid", "command", "state", "dev",
               "used", "peak", "managed", "host", "denied");
    }
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
        ml_slot *s = &b.r->slots[i];
        uint64_t pid = atomic_load(&s->pid);
        int alive;
        if (pid == 0)
            continue;
        alive = ml_budget_slot_alive(&b, (int)i);
        memcpy(comm, s->comm, 16);
        comm[16] = '\0';
        for (char *c = comm; *c; c++)   /* a process names itself: no control byte reaches the terminal */
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        for (int d = 0; d < ndev; d++) {
            uint64_t u = atomic_load(&s->used[d]), pk = atomic_load(&s->peak[d]), m = atomic_load(&s->managed[d]);
            if (prom) {
                printf("cushim_memlimit_used_bytes{budget=\"");
                prom_label(path);
                printf("\",pid=\"%llu\",command=\"", (unsigned long long)pid);
                prom_label(comm);
                printf("\",device=\"%d\",alive=\"%d\"} %llu\n", d, alive, (unsigned long long)u);
            } else {
                printf("%-5u %-8llu %-16s %-6s %5d %16llu %16llu %16llu %16llu %8llu\n", i, (unsigned long long)pid,
                       comm, alive ? "alive" : "dead", d, (unsigned long long)u, (unsigned long long)pk,
                       (unsigned long long)m, (unsigned long long)(d == 0 ? atomic_load(&s->host) : 0),
                       (unsigned long long)(d == 0 ? atomic_load(&s->denied) : 0));
            }
        }
    }
    if (prom) {
        printf("# HELP cushim_memlimit_limit_bytes The quota of a cushim memlimit budget per device (0: none).\n"
               "# TYPE cushim_memlimit_limit_bytes gauge\n");
        for (int d = 0; d < ndev; d++) {
            uint64_t l = atomic_load(&b.r->limit[d]);
            printf("cushim_memlimit_limit_bytes{budget=\"");
            prom_label(path);
            printf("\",device=\"%d\"} %llu\n", d, (unsigned long long)l);
        }
    } else {
        for (int d = 0; d < ndev; d++) {
            uint64_t l = atomic_load(&b.r->limit[d]);
            if (l)
                printf("device %d: %llu of %llu bytes charged\n", d, (unsigned long long)ml_budget_used(&b, d),
                       (unsigned long long)l);
        }
    }
    ml_budget_close(&b);
    return 0;
}
