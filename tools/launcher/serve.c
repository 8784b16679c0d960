/*
 * serve.c - 'cushim serve [OPTIONS]': the GPU host's side of remote GPUs (docs/remote-deploy.md). Reads the
 * listening address, the token file, the visible GPUs and the same plugin options as 'cushim run' (run.c:
 * --mem-limit, --sm-limit, --trace, --plugin, ... applied in every client's back end), composes the environment
 * as 'run' does (start.c), and then cushim-serve (remote/rm_serve.c) replaces the launcher. A trace file is
 * per client: a --trace=FILE without '%p' gets '.%p' before its '.json' (each back end is a process of its own).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

static int is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && arg[n] == '=';
}

/* FILE with '.%p' before its ending (.json, .perfetto-trace, .pftrace, each maybe .gz; else at its end): one trace
   file per back end, in the format its name picks. */
static char *per_client(const char *file)
{
    if (strstr(file, "%p") != NULL)
        return ln_strdup(file);
    size_t n = strlen(file);
    static const char *const ends[] = {".json.gz", ".json", ".perfetto-trace.gz", ".perfetto-trace", ".pftrace.gz",
                                       ".pftrace", NULL};   /* the endings that pick the trace's format */
    for (int k = 0; ends[k] != NULL; k++) {
        size_t e = strlen(ends[k]);
        if (n > e && strcmp(file + n - e, ends[k]) == 0)
            return ln_fmt("%.*s.%%p%s", (int)(n - e), file, ends[k]);
    }
    return ln_fmt("%s.%%p", file);
}

/* --gpus=LIST: CUDA_VISIBLE_DEVICES as CUDA reads it (ordinals, GPU-/MIG- UUIDs, separated by ','). */
static void check_gpus(const char *v)
{
    if (v[0] == '\0' || strspn(v, "0123456789abcdefABCDEFGPUMI-,") != strlen(v))
        ln_bad("serve", "--gpus=%s: a list of device ordinals or UUIDs separated by ',' (--gpus=0,1, "
               "--gpus=GPU-8d1c...)", ln_shown(v));
}

int ln_cmd_serve(const ln_where *w, int argc, char **argv)
{
    ln_run r = {.w = w, .cmd = "serve"};
    const char *listen_at = NULL, *gpus = NULL, *max_clients = NULL;
    char *token = NULL, *tokens[16];   /* cushim-serve's RM_MAX_TOKENS: one token file per tenant */
    int once = 0, verbose = 0, ntokens = 0;
    ln_plugins_scan(&r.plugins, w->plugindir);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && ln_has_cntrl(a))
            ln_bad("serve", "%s: an option value cannot hold a control character (a newline, a tab)", ln_shown(a));
        if (is_opt(a, "--listen")) {
            listen_at = a + 9;
            if (strncmp(listen_at, "unix:", 5) == 0 && listen_at[5] != '\0')
                listen_at = ln_fmt("unix:%s", ln_absolute("--listen", listen_at + 5));
            else if (strncmp(listen_at, "tcp://", 6) != 0)
                ln_bad("serve", "--listen=%s: the address is unix:/path, tcp://HOST:PORT or tcp://[IPv6]:PORT "
                       "(tcp:// alone: 127.0.0.1:7480)", listen_at);
        } else if (is_opt(a, "--token-file")) {
            if (a[13] == '\0')
                ln_bad("serve", "--token-file needs a file");
            if (ntokens == 16)
                ln_bad("serve", "--token-file: at most 16 (one per tenant)");
            token = tokens[ntokens++] = ln_absolute("--token-file", a + 13);
        } else if (is_opt(a, "--gpus")) {
            gpus = a + 7;
            check_gpus(gpus);
        } else if (is_opt(a, "--max-clients")) {
            max_clients = a + 14;
            char *end;
            unsigned long v = strtoul(max_clients, &end, 10);
            if (max_clients[0] < '0' || max_clients[0] > '9' || *end != '\0' || v < 1 || v > 4096)
                ln_bad("serve", "--max-clients=%s: a number of clients from 1 to 4096", ln_shown(max_clients));
        } else if (strcmp(a, "--once") == 0) {
            once = 1;
        } else if (strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(a, "--listen") == 0 || strcmp(a, "--token-file") == 0 || strcmp(a, "--gpus") == 0 ||
                   strcmp(a, "--max-clients") == 0) {
            ln_bad("serve", "%s needs a value: %s=...", a, a);
        } else if (strcmp(a, "--dropin") == 0 || is_opt(a, "--remote")) {
            ln_bad("serve", "%s is an option of 'cushim run' (the client)", a);
        } else if (!ln_run_option(&r, a)) {
            if (a[0] == '-')
                ln_bad("serve", "unknown option '%s'", a);
            ln_bad("serve", "'%s': serve takes no program (the clients run theirs: cushim run --remote=...)", a);
        }
    }
    if (listen_at == NULL)
        ln_bad("serve", "give the address to listen on: --listen=unix:/run/cushim.sock or --listen=tcp://HOST:PORT");
    if (strncmp(listen_at, "tcp://", 6) == 0 && token == NULL)
        ln_bad("serve", "--listen=%s: TCP clients must prove they know a token: give --token-file=FILE (make one: "
               "head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)", listen_at);
    ln_spec *trace = ln_run_find(&r, "trace");
    const ln_item *file = trace != NULL ? ln_spec_get(trace, "file") : NULL;
    if (file != NULL)
        ln_spec_set(trace, file->flag, "file", per_client(file->raw), 0);
    if (w->serve == NULL)
        ln_die("cushim-serve not found next to %s (cushim where)", w->shim != NULL ? w->shim : "the launcher");
    ln_run_compose(&r);
    if (gpus != NULL)
        setenv("CUDA_VISIBLE_DEVICES", gpus, 1);
    char *args[24];
    int n = 0;
    args[n++] = w->serve;
    args[n++] = ln_fmt("--listen=%s", listen_at);
    args[n++] = ln_fmt("--shim=%s", w->shim);
    for (int k = 0; k < ntokens; k++)
        args[n++] = ln_fmt("--token-file=%s", tokens[k]);
    if (max_clients != NULL)
        args[n++] = ln_fmt("--max-clients=%s", max_clients);
    if (once)
        args[n++] = "--once";
    if (verbose)
        args[n++] = "--verbose";
    args[n] = NULL;
    fflush(stdout);
    execv(w->serve, args);
    ln_die("%s: %s", w->serve, strerror(errno));
}
