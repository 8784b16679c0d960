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


/* The quota in force on device d: the live limit ('cushim limit') when one is set, else the last one a process
   configured; 0 none. */
static uint64_t us_limit(const ml_budget *b, int d)
{
    uint64_t live = atomic_load(&b->r->live[d]);
    if (live == ML_LIVE_UNLIMITED)
        return 0;
    return live != 0 ? live : atomic_load(&b->r->limit[d]);
}

/* The length of the valid UTF-8 sequence at s (1-4), 0 when it is not one (overlong forms, surrogates, past
   U+10FFFF and cut sequences - the kernel cuts a process's name at 15 bytes, mid-character - are not). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80 || (c == 0xf0 && s[1] < 0x90) ||
            (c == 0xf4 && s[1] > 0x8f))
            return 0;
        return 4;
    }
    return 0;
}

/* 's' as text anyone may read: valid UTF-8, no control character (C0, DEL, C1): each byte that is not part of
   a valid printable character becomes '?'. Process names are the process's own word, and a budget's path the
   caller's: node_exporter rejects a whole file over one byte of bad UTF-8, and a terminal obeys control bytes. */
static void clean_text(const char *in, char *out, size_t cap)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;
    while (*s && o + 5 < cap) {
        size_t n = utf8_len(s);
        int ok = n > 0 && !(n == 1 && (*s < 0x20 || *s == 0x7f)) && !(n == 2 && s[0] == 0xc2 && s[1] < 0xa0);
        if (!ok) {
            out[o++] = '?';
            s++;
            continue;
        }
        memcpy(out + o, s, n);
        o += n;
        s += n;
    }
    out[o] = '\0';
}

static void prom_label(FILE *f, const char *raw)
{
    char s[1024];
    clean_text(raw, s, sizeof s);
    for (const char *p = s; *p; p++) {
        if (*p == '\\' || *p == '"')
            fputc('\\', f);
        fputc(*p, f);
    }
}

/* The table (or the Prometheus text) of an attached budget 'b' at 'path' on 'f'. Everything read from the region
   is its writers' word: counts bounded by the layout, names cleaned (the fuzz harness fuzz_usage drives this). */
void ml_usage_print(FILE *f, ml_budget *b, const char *path, int prom)
{
    char comm[80], shown[1024];
    uint32_t hw;
    int ndev;
    hw = atomic_load(&b->r->hiwater);
    ndev = (int)atomic_load(&b->r->devmax);
    if (ndev < 1)
        ndev = 1;
    if (ndev > ML_MAX_DEVICES)
        ndev = ML_MAX_DEVICES;
    if (prom) {
        fprintf(f, "# HELP cushim_memlimit_used_bytes Device memory charged by a process to a cushim memlimit budget.\n"
                   "# TYPE cushim_memlimit_used_bytes gauge\n");
    } else {
        clean_text(path, shown, sizeof shown);
        fprintf(f, "budget %s\n", shown);
        fprintf(f, "%-5s %-8s %-16s %-6s %5s %16s %16s %16s %16s %8s\n", "slot", "pid", "command", "state", "dev",
                "used", "peak", "managed", "host", "denied");
    }
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
        ml_slot *s = &b->r->slots[i];
        uint64_t pid = atomic_load(&s->pid);
        int alive;
        if (pid == 0)
            continue;
        alive = ml_budget_slot_alive(b, (int)i);
        {
            char raw[17];
            memcpy(raw, s->comm, 16);
            raw[16] = '\0';
            clean_text(raw, comm, sizeof comm);   /* a process names itself: valid UTF-8, no control byte */
        }
        for (int d = 0; d < ndev; d++) {
            uint64_t u = atomic_load(&s->used[d]), pk = atomic_load(&s->peak[d]), m = atomic_load(&s->managed[d]);
            if (prom) {
                fprintf(f, "cushim_memlimit_used_bytes{budget=\"");
                prom_label(f, path);
                fprintf(f, "\",pid=\"%llu\",command=\"", (unsigned long long)pid);
                prom_label(f, comm);
                fprintf(f, "\",device=\"%d\",alive=\"%d\"} %llu\n", d, alive, (unsigned long long)u);
            } else {
                fprintf(f, "%-5u %-8llu %-16s %-6s %5d %16llu %16llu %16llu %16llu %8llu\n", i,
                        (unsigned long long)pid, comm, alive ? "alive" : "dead", d, (unsigned long long)u,
                        (unsigned long long)pk, (unsigned long long)m,
                        (unsigned long long)(d == 0 ? atomic_load(&s->host) : 0),
                        (unsigned long long)(d == 0 ? atomic_load(&s->denied) : 0));
            }
        }
    }
    if (prom) {
        fprintf(f, "# HELP cushim_memlimit_limit_bytes The quota of a cushim memlimit budget per device (0: none).\n"
                   "# TYPE cushim_memlimit_limit_bytes gauge\n");
        for (int d = 0; d < ndev; d++) {
            uint64_t l = us_limit(b, d);
            fprintf(f, "cushim_memlimit_limit_bytes{budget=\"");
            prom_label(f, path);
            fprintf(f, "\",device=\"%d\"} %llu\n", d, (unsigned long long)l);
        }
    } else {
        for (int d = 0; d < ndev; d++) {
            uint64_t l = us_limit(b, d);
            if (l)
                fprintf(f, "device %d: %llu of %llu bytes charged\n", d, (unsigned long long)ml_budget_used(b, d),
                        (unsigned long long)l);
        }
    }
}

#ifndef CUSHIM_USAGE_NO_MAIN
static void usage(FILE *f)
{
    fputs("usage: cushim usage [--prometheus] [NAME|PATH]\n"
          "  The per-process table of memlimit budget NAME (/dev/shm/cushim-budget-NAME) or of the region\n"
          "  at PATH (default: $CUDA_DEVICE_MEMORY_SHARED_CACHE). --prometheus: Prometheus text format.\n",
          f);
}


int main(int argc, char **argv)
{
    const char *name = NULL;
    int prom = 0;
    char path[256], err[512];
    ml_budget b;
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
    ml_usage_print(stdout, &b, path, prom);
    ml_budget_close(&b);
    return 0;
}
#endif
