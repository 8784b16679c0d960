/*
 * cushim-flight.c - 'cushim flight': the flight recorder's files read (plugins/flight, docs/plugins/flight.md).
 *
 *   cushim-flight dump [--dir=DIR] [--format=text|json] [--out=FILE] PID|FILE
 *       the text summary of a ring or a dump (names and parameters from the metadata this tool links), or the
 *       same calls as Perfetto/Chrome trace-event JSON. PID: the ring of that process in DIR (default /dev/shm),
 *       running or dead (one it left when killed).
 *   cushim-flight list [--dir=DIR]
 *       the rings and dumps in DIR: process, event, file.
 *
 * Exit status: 0; 1 when the file cannot be read or is not a flight recorder file; 2 for a usage error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fl_read.h"
#include "fl_report.h"
#include "region.h"   /* rg_proc_start */

static const char usage[] =
    "usage: cushim flight dump [--dir=DIR] [--format=text|json] [--out=FILE] PID|FILE\n"
    "       cushim flight list [--dir=DIR]\n";

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "cushim flight: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static int all_digits(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* "cushim-flight-PID-START.ring" or "cushim-flight-PID-START-K.ring" (a ring, not a dump): PID and START. */
static int ring_name(const char *n, long long *pid, unsigned long long *start)
{
    char tail[64];
    int k = 0, used = 0;
    size_t len = strlen(n);
    if (strncmp(n, "cushim-flight-", 14) != 0 || len < 5 || strcmp(n + len - 5, ".ring") != 0 ||
        strstr(n, "-dump") != NULL)
        return 0;
    if (sscanf(n + 14, "%lld-%llu%n", pid, start, &used) != 2)
        return 0;
    snprintf(tail, sizeof tail, "%s", n + 14 + used);
    return strcmp(tail, ".ring") == 0 || (sscanf(tail, "-%d.ring%n", &k, &used) == 1 && tail[used] == '\0');
}

/* The ring of process PID in DIR: the one whose start time is the running process's, else the newest. */
static char *find_ring(const char *dir, long long pid)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *best = NULL;
    time_t best_m = 0;
    uint64_t live = rg_proc_start((pid_t)pid);
    int best_live = 0;
    if (d == NULL)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        long long p;
        unsigned long long st;
        struct stat sb;
        char path[1024];
        if (!ring_name(e->d_name, &p, &st) || p != pid)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        int is_live = live != 0 && st == live;
        if (best == NULL || (is_live && !best_live) || (is_live == best_live && sb.st_mtime > best_m)) {
            free(best);
            best = strdup(path);
            best_m = sb.st_mtime;
            best_live = is_live;
        }
    }
    closedir(d);
    return best;
}

static int cmd_dump(int argc, char **argv)
{
    const char *dir = "/dev/shm", *out = NULL, *target = NULL;
    int json = 0, rc;
    char *path = NULL, why[600];
    fl_file f;
    FILE *o = stdout;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--dir=", 6) == 0 && a[6] != '\0')
            dir = a + 6;
        else if (strcmp(a, "--format=text") == 0)
            json = 0;
        else if (strcmp(a, "--format=json") == 0)
            json = 1;
        else if (strncmp(a, "--out=", 6) == 0 && a[6] != '\0')
            out = a + 6;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (a[0] == '-' && strcmp(a, "-") != 0)
            return bad("dump: unknown option '%s'", a);
        else if (target != NULL)
            return bad("dump: one PID or FILE, not also '%s'", a);
        else
            target = a;
    }
    if (target == NULL)
        return bad("dump: a PID or a FILE expected%s", "");
    if (all_digits(target)) {
        path = find_ring(dir, atoll(target));
        if (path == NULL) {
            fprintf(stderr, "cushim flight: no ring of process %s in %s (was it run with --flight? --dir=DIR)\n",
                    target, dir);
            return 1;
        }
    } else {
        path = strdup(target);
    }
    if (path == NULL || fl_file_open(&f, path, why, sizeof why) != 0) {
        fprintf(stderr, "cushim flight: %s\n", path == NULL ? "out of memory" : why);
        free(path);
        return 1;
    }
    if (out != NULL && (o = fopen(out, "w")) == NULL) {
        fprintf(stderr, "cushim flight: cannot write '%s': %s\n", out, strerror(errno));
        fl_file_close(&f);
        free(path);
        return 1;
    }
    {
        uint64_t live = f.head.pid > 0 ? rg_proc_start((pid_t)f.head.pid) : 0;
        rc = fl_report(o, &f, json, live != 0 && live == f.head.start);
    }
    if (o != stdout && fclose(o) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "cushim flight: the report could not be written (out of memory or a write error)\n");
    fl_file_close(&f);
    free(path);
    return rc == 0 ? 0 : 1;
}

static int cmd_list(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    DIR *d;
    struct dirent *e;
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "--dir=", 6) == 0 && argv[i][6] != '\0')
            dir = argv[i] + 6;
        else
            return bad("list: unknown argument '%s'", argv[i]);
    }
    if ((d = opendir(dir)) == NULL) {
        fprintf(stderr, "cushim flight: cannot read %s: %s\n", dir, strerror(errno));
        return 1;
    }
    printf("pid\tstate\tevent\tfile\n");
    while ((e = readdir(d)) != NULL) {
        static const char *const kinds[] = {"none", "sticky", "error", "signal", "hang", "request"};
        char path[1024], why[600];
        fl_file f;
        if (strncmp(e->d_name, "cushim-flight-", 14) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (fl_file_open(&f, path, why, sizeof why) != 0)
            continue;
        uint64_t live = f.head.pid > 0 ? rg_proc_start((pid_t)f.head.pid) : 0;
        printf("%" PRId64 "\t%s\t%s\t%s\n", f.head.pid, live != 0 && live == f.head.start ? "running" : "gone",
               f.head.event.kind < 6 ? kinds[f.head.event.kind] : "?", path);
        fl_file_close(&f);
        n++;
    }
    closedir(d);
    if (n == 0)
        fprintf(stderr, "cushim flight: no flight recorder file in %s\n", dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return bad("a command expected: dump or list%s", "");
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 2, argv + 2);
    if (strcmp(argv[1], "list") == 0)
        return cmd_list(argc - 2, argv + 2);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    return bad("unknown command '%s'", argv[1]);
}
