/*
 * usage.c - cushim-usage: print a memlimit budget's per-process table (with
 * --by-library, each process's memory by the library that allocated it), or
 * the same in the Prometheus text exposition format (for node_exporter's
 * textfile collector); --watch redraws the table once a second at a terminal.
 * 'cushim usage [NAME|PATH] [--prometheus] [--by-library] [--watch]' runs it.
 *
 *   cushim-usage [--prometheus] [--by-library] [--watch] [NAME|PATH]
 * NAME defaults to $CUDA_DEVICE_MEMORY_SHARED_CACHE when set. Reads the region
 * without taking a slot; a slot whose owner died is shown as 'dead' (its
 * usage is reclaimed by the next process that needs the room).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "ml_budget.h"
#include "shm.h"   /* smlimit's region: busy time, kernels, share and priority per process and device */


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

#define ML_USAGE_PROM 1     /* ml_usage_print's flags: the Prometheus text      */
#define ML_USAGE_BYLIB 2    /* the table of memory by library too                */

/* Entry 'e' of a slot as its writer published it: 0 when it is not named (or not readable as a name), else its
   cleaned name in 'name' and its device in '*dev' (-1: every device). */
static int us_libent(const ml_libent *e, char *name, size_t cap, int *dev)
{
    char raw[ML_LIB_NAME + 1];
    int32_t d;
    if (atomic_load_explicit(&e->named, memory_order_acquire) != 1)
        return 0;
    d = e->dev;
    if (d < -1 || d >= ML_MAX_DEVICES)
        return 0;
    memcpy(raw, e->name, ML_LIB_NAME);
    raw[ML_LIB_NAME] = '\0';
    clean_text(raw, name, cap);
    *dev = d;
    return 1;
}

/* The by-library rows of slot 's' (process 'pid', cleaned name 'comm'): one per named entry, then per device
   what its 'used' holds beyond the entries' sum ("(not attributed)": by_library=false, or an allocation between
   its charge and its record). */
static void us_print_libs(FILE *f, const ml_slot *s, uint32_t i, uint64_t pid, const char *comm, int alive,
                          const char *path, int ndev, int prom)
{
    uint64_t sum[ML_MAX_DEVICES] = {0};
    char name[ML_LIB_NAME * 4];
    for (int k = 0; k < ML_SLOT_LIBS; k++) {
        const ml_libent *e = &s->libs[k];
        uint64_t u;
        int dev;
        if (!us_libent(e, name, sizeof name, &dev))
            continue;
        u = atomic_load(&e->used);
        if (dev >= 0)
            sum[dev] += u;
        if (prom) {
            fprintf(f, "cushim_memlimit_library_used_bytes{budget=\"");
            prom_label(f, path);
            fprintf(f, "\",pid=\"%llu\",command=\"", (unsigned long long)pid);
            prom_label(f, comm);
            if (dev >= 0)
                fprintf(f, "\",device=\"%d\",library=\"", dev);
            else
                fprintf(f, "\",device=\"all\",library=\"");
            prom_label(f, name);
            fprintf(f, "\",alive=\"%d\"} %llu\n", alive, (unsigned long long)u);
        } else {
            char d[8];
            snprintf(d, sizeof d, dev >= 0 ? "%d" : "all", dev);
            fprintf(f, "%-5u %-8llu %-16s %5s %-40s %16llu\n", i, (unsigned long long)pid, comm, d, name,
                    (unsigned long long)u);
        }
    }
    for (int d = 0; d < ndev; d++) {
        uint64_t u = atomic_load(&s->used[d]);
        if (u <= sum[d])
            continue;
        if (prom) {
            fprintf(f, "cushim_memlimit_library_used_bytes{budget=\"");
            prom_label(f, path);
            fprintf(f, "\",pid=\"%llu\",command=\"", (unsigned long long)pid);
            prom_label(f, comm);
            fprintf(f, "\",device=\"%d\",library=\"(not attributed)\",alive=\"%d\"} %llu\n", d, alive,
                    (unsigned long long)(u - sum[d]));
        } else {
            fprintf(f, "%-5u %-8llu %-16s %5d %-40s %16llu\n", i, (unsigned long long)pid, comm, d,
                    "(not attributed)", (unsigned long long)(u - sum[d]));
        }
    }
}

/* The smlimit slot of the process of memlimit slot 's' on device 'd' in one of the 'nsm' smlimit regions: the
   same pid and start time (each process writes both of its own; a pid alone may name another process in another
   PID namespace). NULL: none (smlimit does not limit that process there, or is not loaded). */
static const sml_slot *us_sm_slot(const sml_region *const *sm, int nsm, const ml_slot *s, int d)
{
    uint64_t pid = atomic_load(&s->pid), start = atomic_load(&s->start);
    if (d < 0 || d >= SML_SHM_DEVICES || start == 0)
        return NULL;
    for (int r = 0; r < nsm; r++)
        for (int k = 0; sm[r] != NULL && k < SML_SHM_SLOTS; k++) {
            const sml_slot *o = &sm[r]->slot[d][k];
            if ((uint64_t)(int64_t)atomic_load(&o->pid) == pid && atomic_load(&o->start) == start)
                return o;
        }
    return NULL;
}

/* One smlimit metric ('what': 0 busy seconds, 1 kernels, 2 share, 3 priority) of every process and device that
   has a smlimit slot, in the Prometheus text. */
static void us_prom_sm(FILE *f, ml_budget *b, const char *path, const sml_region *const *sm, int nsm, int ndev,
                       int what)
{
    static const char *const name[] = {"cushim_smlimit_busy_seconds_total", "cushim_smlimit_kernels_total",
                                       "cushim_smlimit_limit_ratio", "cushim_smlimit_priority"};
    static const char *const help[] = {
        "GPU busy time smlimit measured for a process's work on a device, since the process began.",
        "Kernel launches smlimit admitted for a process on a device, since the process began.",
        "The compute share in force for a process on a device (0: none).",
        "The priority of a process on a device (0 low, 1 normal, 2 high)."};
    uint32_t hw = atomic_load(&b->r->hiwater);
    char comm[80], raw[17];
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name[what], help[what], name[what], what < 2 ? "counter" : "gauge");
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
        const ml_slot *s = &b->r->slots[i];
        uint64_t pid = atomic_load(&s->pid);
        if (pid == 0)
            continue;
        memcpy(raw, s->comm, 16);
        raw[16] = '\0';
        clean_text(raw, comm, sizeof comm);
        for (int d = 0; d < ndev; d++) {
            const sml_slot *o = us_sm_slot(sm, nsm, s, d);
            uint32_t prio;
            if (o == NULL)
                continue;
            prio = atomic_load(&o->prio);
            if (what == 3 && (prio < 1 || prio > 3))
                continue;   /* takes no part in priorities */
            fprintf(f, "%s{budget=\"", name[what]);
            prom_label(f, path);
            fprintf(f, "\",pid=\"%llu\",command=\"", (unsigned long long)pid);
            prom_label(f, comm);
            fprintf(f, "\",device=\"%d\"} ", d);
            if (what == 0)
                fprintf(f, "%.9f\n", (double)atomic_load(&o->busy_ns) / 1e9);
            else if (what == 1)
                fprintf(f, "%llu\n", (unsigned long long)atomic_load(&o->kernels));
            else if (what == 2)
                fprintf(f, "%.3f\n", atomic_load(&o->weight) > 1000 ? 1.0 : atomic_load(&o->weight) / 1000.0);
            else
                fprintf(f, "%u\n", prio - 1);
        }
    }
}

/* The table (or the Prometheus text: ML_USAGE_PROM in 'flags') of an attached budget 'b' at 'path' on 'f', with
   memory by library (ML_USAGE_BYLIB; always in the Prometheus text) and, from the 'nsm' smlimit regions 'sm'
   (read-only; none: 0), each process's GPU busy time, kernel count, compute share and priority. Everything read
   from the regions is their writers' word: counts bounded by the layout, names cleaned (the fuzz harness
   fuzz_usage drives this). */
void ml_usage_print(FILE *f, ml_budget *b, const char *path, unsigned flags, const sml_region *const *sm, int nsm)
{
    int prom = (flags & ML_USAGE_PROM) != 0;
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
        fprintf(f, "%-5s %-8s %-16s %-6s %5s %16s %16s %16s %16s %8s %12s %10s %5s %6s %16s\n", "slot", "pid",
                "command", "state", "dev", "used", "peak", "managed", "host", "denied", "busy_ms", "kernels", "sm%",
                "prio", "host_backed");
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
                static const char *const prios[] = {"-", "low", "normal", "high"};
                const sml_slot *o = us_sm_slot(sm, nsm, s, d);
                char busy[24] = "-", kern[24] = "-", share[8] = "-";
                uint32_t pr = o != NULL ? atomic_load(&o->prio) : 0;
                if (o != NULL) {
                    uint32_t w = atomic_load(&o->weight);
                    snprintf(busy, sizeof busy, "%llu", (unsigned long long)(atomic_load(&o->busy_ns) / 1000000));
                    snprintf(kern, sizeof kern, "%llu", (unsigned long long)atomic_load(&o->kernels));
                    if (w > 0 && w < 1000)
                        snprintf(share, sizeof share, "%.1f", w / 10.0);
                }
                fprintf(f, "%-5u %-8llu %-16s %-6s %5d %16llu %16llu %16llu %16llu %8llu %12s %10s %5s %6s %16llu\n",
                        i, (unsigned long long)pid, comm, alive ? "alive" : "dead", d, (unsigned long long)u,
                        (unsigned long long)pk, (unsigned long long)m,
                        (unsigned long long)(d == 0 ? atomic_load(&s->host) : 0),
                        (unsigned long long)(d == 0 ? atomic_load(&s->denied) : 0), busy, kern, share,
                        prios[pr <= 3 ? pr : 0], (unsigned long long)atomic_load(&s->spilled[d]));
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
    if (prom) {
        fprintf(f, "# HELP cushim_memlimit_host_backed_bytes Device allocations of a process that cushim memlimit's "
                   "oversubscription backed with host memory.\n# TYPE cushim_memlimit_host_backed_bytes gauge\n");
        for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
            ml_slot *s = &b->r->slots[i];
            uint64_t pid = atomic_load(&s->pid);
            char raw[17];
            if (pid == 0)
                continue;
            memcpy(raw, s->comm, 16);
            raw[16] = '\0';
            clean_text(raw, comm, sizeof comm);
            for (int d = 0; d < ndev; d++) {
                fprintf(f, "cushim_memlimit_host_backed_bytes{budget=\"");
                prom_label(f, path);
                fprintf(f, "\",pid=\"%llu\",command=\"", (unsigned long long)pid);
                prom_label(f, comm);
                fprintf(f, "\",device=\"%d\",alive=\"%d\"} %llu\n", d, ml_budget_slot_alive(b, (int)i),
                        (unsigned long long)atomic_load(&s->spilled[d]));
            }
        }
        for (int what = 0; what < 4; what++)
            us_prom_sm(f, b, path, sm, nsm, ndev, what);
    }
    if (!prom && !(flags & ML_USAGE_BYLIB))
        return;
    if (prom)
        fprintf(f, "# HELP cushim_memlimit_library_used_bytes Device memory charged to a cushim memlimit budget, by the "
                   "library that allocated it.\n# TYPE cushim_memlimit_library_used_bytes gauge\n");
    else
        fprintf(f, "\nmemory by library\n%-5s %-8s %-16s %5s %-40s %16s\n", "slot", "pid", "command", "dev",
                "library", "used");
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
        ml_slot *s = &b->r->slots[i];
        uint64_t pid = atomic_load(&s->pid);
        char raw[17];
        if (pid == 0)
            continue;
        memcpy(raw, s->comm, 16);
        raw[16] = '\0';
        clean_text(raw, comm, sizeof comm);
        us_print_libs(f, s, i, pid, comm, ml_budget_slot_alive(b, (int)i), path, ndev, prom);
    }
}

#ifndef CUSHIM_USAGE_NO_MAIN
static void usage(FILE *f)
{
    fputs("usage: cushim usage [--prometheus] [--by-library] [--watch] [NAME|PATH]\n"
          "  The per-process table of memlimit budget NAME (/dev/shm/cushim-budget-NAME) or of the region\n"
          "  at PATH (default: $CUDA_DEVICE_MEMORY_SHARED_CACHE). --prometheus: Prometheus text format (with\n"
          "  memory by library). --by-library: each process's memory by the library that allocated it.\n"
          "  --watch: redraw once a second at a terminal until q or Ctrl-C (not a terminal: print once).\n",
          f);
}

/* smlimit's regions where the processes of budget NAME may be (read-only): the group NAME's and the user's own,
   of the user who owns the budget's file. How many were opened. */
static int us_sm_open(const char *name, const char *budget_path, rg_region rg[2], const sml_region *sm[2])
{
    struct stat st;
    char path[2][320], err[512];
    int n = 0;
    if (stat(budget_path, &st) != 0)
        return 0;
    snprintf(path[0], sizeof path[0], "/dev/shm" SML_SHM_PREFIX "%u-%s", (unsigned)st.st_uid, name);
    snprintf(path[1], sizeof path[1], "/dev/shm" SML_SHM_PREFIX "%u", (unsigned)st.st_uid);
    for (int i = name[0] == '/' ? 1 : 0; i < 2; i++) {   /* a budget given by path names no group */
        if (access(path[i], F_OK) != 0 ||
            rg_open(&rg[n], path[i], sizeof(sml_region), SML_SHM_MAGIC, 4, -1, 1, err, sizeof err) != 0)
            continue;
        sm[n] = rg[n].base;
        n++;
    }
    return n;
}

static volatile sig_atomic_t us_stop;

static void us_on_signal(int sig)
{
    (void)sig;
    us_stop = 1;
}

/* --watch: the table redrawn once a second (plain ANSI: home, clear) until 'q' or Ctrl-C; the terminal's
   line mode is restored however the loop ends. */
static void us_watch(ml_budget *b, const char *path, unsigned flags, const sml_region *const *sm, int nsm)
{
    struct termios saved, raw;
    struct sigaction sa;
    int tty_in = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = us_on_signal;   /* no SA_RESTART: poll returns at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (tty_in) {
        raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    while (!us_stop) {
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        fputs("\033[H\033[2J", stdout);
        ml_usage_print(stdout, b, path, flags, sm, nsm);
        fputs("\n(q or Ctrl-C to quit)\n", stdout);
        fflush(stdout);
        if (poll(&p, 1, 1000) > 0) {
            char c = 0;
            ssize_t n = read(STDIN_FILENO, &c, 1);
            if (n == 0 && !tty_in)
                break;   /* end of input: nobody can type 'q' any more */
            if (n == 1 && (c == 'q' || c == 'Q' || c == 3))
                break;
            if (n < 0 && errno != EINTR && errno != EAGAIN)
                break;
        }
    }
    if (tty_in)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}


int main(int argc, char **argv)
{
    const char *name = NULL;
    int watch = 0, nsm;
    unsigned flags = 0;
    rg_region smrg[2];
    const sml_region *sm[2] = {NULL, NULL};
    char path[256], err[512];
    ml_budget b;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--prometheus"))
            flags |= ML_USAGE_PROM;
        else if (!strcmp(argv[i], "--by-library"))
            flags |= ML_USAGE_BYLIB;
        else if (!strcmp(argv[i], "--watch"))
            watch = 1;
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
    if (watch && (flags & ML_USAGE_PROM)) {
        fprintf(stderr, "cushim usage: --watch is for people at a terminal; --prometheus prints once\n");
        ml_budget_close(&b);
        return 2;
    }
    nsm = us_sm_open(name, path, smrg, sm);
    if (watch && isatty(STDOUT_FILENO))
        us_watch(&b, path, flags, sm, nsm);
    else
        ml_usage_print(stdout, &b, path, flags, sm, nsm);   /* not a terminal: once */
    for (int i = 0; i < nsm; i++)
        rg_close(&smrg[i]);
    ml_budget_close(&b);
    return 0;
}
#endif
