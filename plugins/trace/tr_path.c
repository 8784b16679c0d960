/*
 * tr_path.c - the trace file's name from the plugin's 'file' option (host-free: the fuzz harness fuzz_tpath
 * links it alone; docs/plugins/trace.md, the option table and "Process life").
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_path.h"

/* The file's name from the option: "" -> "cushim-<pid>.json"; in the name "%p" -> the pid, "%h" -> the host name,
   "%q{VAR}" -> the environment variable VAR (as nsys names its files: "t.%q{RANK}.json" gives each torchrun rank
   its own; an unset VAR gives "" and its name in 'unset'), "%%" -> "%"; any other "%" stays. A forked child's
   name without "%p" gets the child's pid before .json ("t.json" -> "t.<pid>.json"). */
char *tr_path(const char *given, int pid, int child, char *unset, size_t unset_size)
{
    char *out = NULL, host[256];
    size_t len = 0;
    int has_pid = 0;
    FILE *f;
    if (unset_size > 0)
        unset[0] = '\0';
    if (given == NULL || given[0] == '\0') {
        if (asprintf(&out, "cushim-%d.json", pid) < 0)
            return NULL;
        return out;
    }
    if ((f = open_memstream(&out, &len)) == NULL)
        return NULL;
    for (const char *p = given; *p != '\0'; p++) {
        const char *close;
        if (*p != '%') {
            fputc(*p, f);
        } else if (p[1] == 'p') {
            fprintf(f, "%d", pid);
            has_pid = 1;
            p++;
        } else if (p[1] == 'h') {
            if (gethostname(host, sizeof host) != 0)
                snprintf(host, sizeof host, "unknown-host");
            host[sizeof host - 1] = '\0';
            fputs(host, f);
            p++;
        } else if (p[1] == '%') {
            fputc('%', f);
            p++;
        } else if (p[1] == 'q' && p[2] == '{' && (close = strchr(p + 3, '}')) != NULL && close > p + 3) {
            char name[128];
            const char *v;
            snprintf(name, sizeof name, "%.*s", (int)(close - p - 3), p + 3);
            if ((v = getenv(name)) != NULL)
                fputs(v, f);
            else if (unset_size > 0 && unset[0] == '\0')
                snprintf(unset, unset_size, "%s", name);
            p = close;
        } else {
            fputc('%', f);
        }
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    if (child && !has_pid) {
        char *alt = tr_path_alt(out, pid, 1);
        free(out);
        return alt;
    }
    return out;
}

/* The name to write when 'path' is another process's (k = 1: "t.json" -> "t.<pid>.json", as a forked child's; then
   "t.<pid>-<k>.json": a process of the same pid in another PID namespace writing into the same directory). */
char *tr_path_alt(const char *path, int pid, int k)
{
    size_t n = strlen(path);
    static const char *const exts[] = {".json.gz", ".json", ".perfetto-trace.gz", ".perfetto-trace", ".pftrace.gz",
                                        ".pftrace", ".gz"};
    const char *ext = path + n;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t k = strlen(exts[i]);
        if (n > k && strcmp(path + n - k, exts[i]) == 0) {
            ext = path + n - k;
            break;
        }
    }
    char *out;
    if (k == 1 ? asprintf(&out, "%.*s.%d%s", (int)(ext - path), path, pid, ext) < 0
               : asprintf(&out, "%.*s.%d-%d%s", (int)(ext - path), path, pid, k, ext) < 0)
        return NULL;
    return out;
}

int tr_path_perfetto(const char *path)
{
    static const char *const exts[] = {".perfetto-trace", ".perfetto-trace.gz", ".pftrace", ".pftrace.gz"};
    size_t n = path != NULL ? strlen(path) : 0;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t k = strlen(exts[i]);
        if (n > k && strcmp(path + n - k, exts[i]) == 0)
            return 1;
    }
    return 0;
}
