/*
 * flight.c - 'cushim flight dump|list': the flight recorder's files read by its helper cushim-flight
 * (tools/cushim-flight.c, built with plugins/flight), exec'd with the arguments checked here. The helper is
 * found as the others are (paths.c): installed, else in the shim's build tree, else in the build tree.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

const char ln_help_flight[] =
    "usage: cushim flight dump [--dir=DIR] [--format=text|json] [--out=FILE] PID|FILE\n"
    "       cushim flight list [--dir=DIR]\n"
    "\n"
    "The flight recorder (cushim run --flight[=N]: the last N calls of every thread, in a file that outlives the\n"
    "process; docs/plugins/flight.md).\n"
    "  dump PID|FILE     what process PID recorded (its ring in DIR, default /dev/shm: running, or left behind\n"
    "                    when it was killed or died of a signal), or a ring or dump FILE: the event, the calls\n"
    "                    not returned, the launches and copies since each stream's last successful\n"
    "                    synchronisation with each pointer they pass attributed to an allocation, the live\n"
    "                    allocations, each thread's calls. --format=json: the same calls as a Perfetto/Chrome\n"
    "                    trace-event file (open it at https://ui.perfetto.dev). --out=FILE: there, not stdout\n"
    "  list              the rings and dumps in DIR: process, running or gone, event, file\n";

int ln_cmd_flight(const ln_where *w, int argc, char **argv)
{
    char **args;
    char *helper;
    int n = 1;
    if (argc < 1)
        ln_bad("flight", "dump or list expected");
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "help") == 0) {
        ln_help(w, ln_command_find("flight"), stdout);
        exit(0);
    }
    if (strcmp(argv[0], "dump") != 0 && strcmp(argv[0], "list") != 0)
        ln_bad("flight", "unknown command '%s' (dump or list)", argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (ln_has_cntrl(a))
            ln_bad("flight", "%s: an argument cannot hold a control character", ln_shown(a));
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            ln_help(w, ln_command_find("flight"), stdout);
            exit(0);
        }
        if (a[0] == '-' && strncmp(a, "--dir=", 6) != 0 &&
            (strcmp(argv[0], "list") == 0 ||
             (strncmp(a, "--format=", 9) != 0 && strncmp(a, "--out=", 6) != 0)))
            ln_bad("flight", "%s: unknown option '%s'", argv[0], a);
        if (strncmp(a, "--format=", 9) == 0 && strcmp(a + 9, "text") != 0 && strcmp(a + 9, "json") != 0)
            ln_bad("flight", "--format: '%s' is not text or json", a + 9);
    }
    if (strcmp(argv[0], "dump") == 0) {
        int targets = 0;
        for (int i = 1; i < argc; i++)
            targets += argv[i][0] != '-';
        if (targets != 1)
            ln_bad("flight", "dump: one PID or FILE expected");
    }
    if ((helper = w->flight) == NULL)
        ln_die("the cushim-flight helper was not found (build or install the flight plugin)");
    args = ln_alloc(sizeof *args * (size_t)(argc + 2));
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    ln_exec_helper(helper, args);
}
