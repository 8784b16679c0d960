/*
 * limit.c - 'cushim limit NAME [--mem=SPEC] [--sm=PCT] [--priority=LEVEL]': a shared budget's limits, shown or changed while its
 * processes run, by memlimit's helper cushim-limit (plugins/memlimit/limit.c), exec'd with the arguments
 * checked here. The helper is found as the others are: installed, else in the shim's build tree, else in the
 * build tree.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

const char ln_help_limit[] =
    "usage: cushim limit NAME [--mem=SPEC|off] [--sm=PCT|off] [--priority=LEVEL|off] [--wait-ms=N]\n"
    "\n"
    "The limits of a shared budget, changed while its processes run (docs/plugins/memlimit.md, \"Live limits\").\n"
    "NAME is memlimit's budget (--mem-budget=NAME, budget=NAME) and smlimit's group (group=NAME) of this user;\n"
    "without --mem, --sm or --priority the limits in force are printed.\n"
    "  --mem=SPEC   8GiB (every device) or 0:8GiB,1:4GiB (the devices named); 0: no limit; off: each process's\n"
    "               own limit again. Applied at each process's next allocation or memory query; lowered below\n"
    "               what is in use, new allocations are refused until usage falls under it (nothing is freed)\n"
    "  --sm=PCT     30 (every device) or 0:30,1:50; 100: no limit; off: each process's own. Applied within 50 ms\n"
    "               by every process of the group that runs with smlimit's hooks (a compute limit or a priority)\n"
    "  --priority=LEVEL  high, normal or low (or HAMi's number: 0 high, 1 normal, 2 and more low) for every process\n"
    "               of the group, within 50 ms as --sm; off: each process's own priority again. Processes started\n"
    "               without a compute limit or a priority have no hooks and cannot be reached (the output says so\n"
    "               when the group has none); under MPS the client priority stays the one set at start\n"
    "  --wait-ms=N  wait at most N ms (default 1000) for smlimit's processes to acknowledge; exit status 3 when\n"
    "               some did not\n";

int ln_cmd_limit(const ln_where *w, int argc, char **argv)
{
    char **args;
    char *helper;
    int n = 1, names = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (ln_has_cntrl(a))
            ln_bad("limit", "%s: an argument cannot hold a control character", ln_shown(a));
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            ln_help(w, ln_command_find("limit"), stdout);
            exit(0);
        }
        if (a[0] == '-' && strncmp(a, "--mem=", 6) != 0 && strncmp(a, "--sm=", 5) != 0 &&
            strncmp(a, "--priority=", 11) != 0 && strncmp(a, "--wait-ms=", 10) != 0)
            ln_bad("limit", "unknown option '%s'", a);
        names += a[0] != '-';
    }
    if (names != 1)
        ln_bad("limit", "one budget NAME expected");
    if ((helper = w->limit) == NULL)
        ln_die("the cushim-limit helper was not found (build or install the memlimit plugin)");
    args = ln_alloc(sizeof *args * (size_t)(argc + 2));
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    ln_exec_helper(helper, args);
}
