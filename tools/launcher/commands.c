/*
 * commands.c - the subcommands answered by the helper programs or the API list: 'plugins' and 'version'
 * (cushim-info, tools/cushim-info.c), 'stats' (cushim-stats), 'usage' (memlimit's cushim-usage), each exec'd
 * with the arguments checked here, and 'apis', which reads apis.tsv itself. A helper that is not found is one
 * line and exit status 2 ('cushim where' says where the launcher looked).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

/* Replaces the launcher by HELPER with ARGV (argv[0] set here). */
_Noreturn void ln_exec_helper(const char *helper, char **argv)
{
    fflush(stdout);
    argv[0] = (char *)helper;
    execv(helper, argv);
    int e = errno;
    fprintf(stderr, "%s: cannot run %s: %s\n", LN_PROG, helper, strerror(e));
    exit(e == ENOENT ? 127 : 126);
}

int ln_cmd_plugins(const ln_where *w, int argc, char **argv)
{
    char **args = ln_alloc(sizeof *args * (size_t)(argc + 6));
    int n = 1, dashdash = argc;
    /* options before a '--': -h/--help, or an error for any other */
    for (int i = 0; i < argc && dashdash == argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            dashdash = i;
        else if (argv[i][0] == '-')
            ln_help_or_bad(w, "plugins", argv[i]);
    }
    if (w->info == NULL)
        ln_die("the cushim-info helper was not found (cushim where)");
    args[n++] = "plugins";
    if (w->plugindir != NULL) {
        args[n++] = "--dir";
        args[n++] = w->plugindir;
    }
    args[n++] = "--";
    for (int i = 0; i < argc; i++)   /* the names, before and after the '--', in order */
        if (i != dashdash)
            args[n++] = argv[i];
    args[n] = NULL;
    ln_exec_helper(w->info, args);
}

int ln_cmd_version(const ln_where *w, int argc, char **argv)
{
    if (argc > 0) {
        ln_help_or_bad(w, "version", argv[0]);
        ln_bad("version", "no arguments expected");
    }
    if (w->info == NULL)
        ln_die("the cushim-info helper was not found (cushim where)");
    char *args[] = {NULL, "version", NULL};
    ln_exec_helper(w->info, args);
}

int ln_cmd_stats(const ln_where *w, int argc, char **argv)
{
    char **args = ln_alloc(sizeof *args * (size_t)(argc + 3));
    if (argc == 3 && strcmp(argv[0], "--close") == 0) {
        if (w->stats == NULL)
            ln_die("the cushim-stats helper was not found (cushim where)");
        args[1] = "--close", args[2] = argv[1], args[3] = argv[2], args[4] = NULL;
        ln_exec_helper(w->stats, args);
    }
    if (argc < 1)
        ln_bad("stats", "a trace FILE expected (or several, or --close FILE OUT)");
    int n = 1, i = 0;
    const char *format = NULL;
    if (strncmp(argv[0], "--format=", 9) == 0) {
        if (strcmp(argv[0] + 9, "table") != 0 && strcmp(argv[0] + 9, "json") != 0)
            ln_bad("stats", "--format: '%s' is not table or json", argv[0] + 9);
        format = argv[0];
        args[n++] = argv[0];
        i = 1;
    }
    if (i >= argc)
        ln_bad("stats", "a trace FILE expected after %s", format);
    for (int k = i; k < argc; k++)
        ln_help_or_bad(w, "stats", argv[k]);
    if (w->stats == NULL)
        ln_die("the cushim-stats helper was not found (cushim where)");
    for (; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    ln_exec_helper(w->stats, args);
}

int ln_cmd_usage(const ln_where *w, int argc, char **argv)
{
    char **args = ln_alloc(sizeof *args * (size_t)(argc + 2));
    int n = 1;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--prometheus") != 0 && strcmp(argv[i], "--by-library") != 0 &&
            strcmp(argv[i], "--watch") != 0 && argv[i][0] == '-') {
            ln_help_or_bad(w, "usage", argv[i]);
        }
        args[n++] = argv[i];
    }
    if (w->usage == NULL)
        ln_die("the cushim-usage helper was not found (build or install the memlimit plugin)");
    args[n] = NULL;
    ln_exec_helper(w->usage, args);
}

/* 'apis [GLOB]': apis.tsv's header line, then each API whose exported name (the second column) matches GLOB as
   a shell 'case' pattern does (fnmatch without flags: '*' matches '/' and a leading '.'). Comments skipped. */
/* cushim apis --remote [GLOB]: cushim-serve classifies with the shim's metadata (remote/rm_plan.c), as the
   remote plugin and the back end do. */
static int apis_remote(const ln_where *w, int argc, char **argv)
{
    if (argc > 1)
        ln_bad("apis", "at most one GLOB");
    if (argc == 1)
        ln_help_or_bad(w, "apis", argv[0]);
    if (w->serve == NULL || w->shim == NULL)
        ln_die("--remote needs cushim-serve and libcushim.so (cushim where)");
    char *args[] = {w->serve, ln_fmt("--shim=%s", w->shim), argc == 1 ? ln_fmt("--apis=%s", argv[0]) : "--apis",
                    NULL};
    unsetenv("LD_PRELOAD");
    unsetenv("CUSHIM_PLUGINS");   /* only the metadata is read: no plugin needs to load */
    fflush(stdout);
    execv(w->serve, args);
    ln_die("%s: %s", w->serve, strerror(errno));
}

int ln_cmd_apis(const ln_where *w, int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "--remote") == 0)
        return apis_remote(w, argc - 1, argv + 1);
    if (argc > 1)
        ln_bad("apis", "at most one GLOB");
    if (argc == 1)
        ln_help_or_bad(w, "apis", argv[0]);
    if (w->apis == NULL)
        ln_die("apis.tsv not found (cushim where)");
    const char *glob = argc == 1 ? argv[0] : "*";
    FILE *f = fopen(w->apis, "r");
    if (f == NULL)
        ln_die("%s: %s", w->apis, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int header = 1, found = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] != '\n')
            break;   /* as 'read' does: a last line without its newline is not read */
        line[len - 1] = '\0';
        if (line[0] == '#')
            continue;
        if (header) {
            header = 0;
            puts(line);
            continue;
        }
        const char *name = strchr(line, '\t');
        name = name != NULL ? name + 1 : line;
        char *cut = ln_strndup(name, strcspn(name, "\t"));
        if (fnmatch(glob, cut, 0) == 0) {
            puts(line);
            found = 1;
        }
        free(cut);
    }
    free(line);
    fclose(f);
    if (!found) {
        fflush(stdout);
        fprintf(stderr, "%s: no API's exported name matches '%s'\n", LN_PROG, glob);
        return 1;
    }
    return 0;
}
