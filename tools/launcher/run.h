/*
 * run.h - what 'cushim run' gathers from its options (run.c) for composing the environment and starting the
 * program (start.c).
 */
#ifndef CUSHIM_LAUNCHER_RUN_H
#define CUSHIM_LAUNCHER_RUN_H

#include "launcher.h"

typedef struct ln_run {
    const ln_where *w;
    const char *cmd;         /* "run" or "serve": the command usage errors name */
    ln_plugins plugins;      /* the shipped plugins, for the derived flags */
    ln_spec *specs;          /* in option order: --plugin specs, and one spec per plugin that flags configure */
    size_t n, cap;
    ln_spec sm, mem;         /* smlimit's and memlimit's, appended after the others (empty: none) */
    const char *counts;      /* CUSHIM_COUNTS ('-' as is, else absolute) */
    const char *log, *log_file, *libs;
    char *real;              /* --real-libcuda, absolute */
    int fake, dropin;
    int remote;              /* --remote: drop-in and, preloaded, the shim and the remote plugin (cudart programs) */
} ln_run;

/* The spec that flags of PLUGIN join (created at the place of the first). */
ln_spec *ln_run_spec(ln_run *r, const char *plugin);
ln_spec *ln_run_find(ln_run *r, const char *plugin);

/* One option shared by 'run' and 'serve' (run.c): 1 when taken, 0 when it is not one of them. */
int ln_run_option(ln_run *r, const char *arg);

/* After the options: the checks that need the shim, the specs completed, and the environment set for the
   plugins and settings (CUSHIM_PLUGINS, CUSHIM_LOG..., the fake driver for --fake); not LD_PRELOAD. */
void ln_run_compose(ln_run *r);

/* After the options: the checks that need the shim, the specs completed, the environment set, then
   PROGRAM (argv[0], looked up in PATH as execvp does) replaces the launcher. */
_Noreturn void ln_run_start(ln_run *r, char **argv);

#endif
