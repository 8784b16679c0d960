/*
 * main.c - the cushim launcher: its table of subcommands, 'help', and the two ways it refuses (a usage error:
 * the message, the command's synopsis and where to read more, exit status 2; any other refusal: one line, exit
 * status 2). A subcommand is one row of ln_commands: its function, its usage text and, for 'run', the part of
 * its help that is derived from the shipped plugins. docs/launcher.md describes the whole program.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"

static const ln_command ln_commands[] = {
    {"run", ln_cmd_run, ln_help_run, ln_help_run_more},
    {"serve", ln_cmd_serve, ln_help_serve, ln_help_run_more},
    {"plugins", ln_cmd_plugins, ln_help_plugins, NULL},
    {"apis", ln_cmd_apis, ln_help_apis, NULL},
    {"version", ln_cmd_version, ln_help_version, NULL},
    {"where", ln_cmd_where, ln_help_where, NULL},
    {"stats", ln_cmd_stats, ln_help_stats, NULL},
    {"usage", ln_cmd_usage, ln_help_usage, NULL},
    {"flight", ln_cmd_flight, ln_help_flight, NULL},
    {"limit", ln_cmd_limit, ln_help_limit, NULL},
    {NULL, NULL, NULL, NULL},
};

static const ln_command ln_main_command = {"main", NULL, ln_help_main, NULL};

const ln_command *ln_command_find(const char *name)
{
    if (strcmp(name, "main") == 0)
        return &ln_main_command;
    for (const ln_command *c = ln_commands; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

void ln_help(const ln_where *w, const ln_command *c, FILE *f)
{
    fputs(c->help, f);
    if (c->help_more != NULL)
        c->help_more(w, f);
}

_Noreturn void ln_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: ", LN_PROG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

_Noreturn void ln_bad(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    const ln_command *c = ln_command_find(cmd);
    fflush(stdout);
    fprintf(stderr, "%s: ", LN_PROG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (c != NULL) {
        /* the synopsis: the usage text up to its first blank line, that line included */
        const char *end = strstr(c->help, "\n\n");
        fwrite(c->help, 1, end != NULL ? (size_t)(end - c->help) + 2 : strlen(c->help), stderr);
    }
    if (strcmp(cmd, "main") == 0)
        fprintf(stderr, "Try '%s help' for more.\n", LN_PROG);
    else
        fprintf(stderr, "Try '%s help %s' for more.\n", LN_PROG, cmd);
    exit(2);
}

void ln_help_or_bad(const ln_where *w, const char *cmd, const char *arg)
{
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        ln_help(w, ln_command_find(cmd), stdout);
        exit(0);
    }
    if (arg[0] == '-')
        ln_bad(cmd, "unknown option '%s'", arg);
}

/* The launcher frees nothing by design (util.c: it runs for milliseconds, then execs): under ASan (CI's
   sanitizer build) its leak check would report every string it built and turn each exit status into its own. */
__attribute__((visibility("default"), used)) const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

int main(int argc, char **argv)
{
    ln_where w;
    ln_where_find(&w);
    if (argc < 2) {
        fputs(ln_help_main, stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        const ln_command *c = argc > 2 ? ln_command_find(argv[2]) : &ln_main_command;
        if (c == NULL || (argc > 2 && c == &ln_main_command))
            ln_bad("main", "no command '%s'", argv[2]);
        ln_help(&w, c, stdout);
        return 0;
    }
    const ln_command *c = ln_command_find(name);
    if (c == NULL || c->run == NULL)
        ln_bad("main", "unknown command '%s'", name);
    int rc = c->run(&w, argc - 2, argv + 2);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 1;
    return rc;
}
