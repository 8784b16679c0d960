/*
 * start.c - the end of 'cushim run': what needs the shim (a selector checked with the shim's own engine, the
 * shipped plugins the specs name), the specs completed (lua's flags joined to the one --lua, smlimit from
 * HAMi-core's CUDA_DEVICE_SM_LIMIT, memlimit), CUSHIM_PLUGINS and the other variables set, the shim put in
 * LD_PRELOAD (or the drop-in directory first in LD_LIBRARY_PATH), and the program exec'd as execvp does: no
 * shell anywhere, so 'cushim run -- -c app' runs a program named '-c', and the program's exit status or death
 * by a signal is the launcher's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

extern char **environ;

/* A selector (--trace-filter) that is malformed or matches nothing is refused before the program starts (the
   plugin would refuse it at the first CUDA call, failing the program closed); the shim's own selector engine
   decides, through 'cushim-info select SHIM SELECTOR' run with LD_PRELOAD empty. Its status 3 (that shim cannot
   answer) leaves the check to the plugin. */
static void check_selector(const ln_where *w, const char *cmd, const ln_item *it)
{
    if (w->info == NULL)
        return;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0 || dup2(fds[1], 2) < 0)
            _exit(3);
        setenv("LD_PRELOAD", "", 1);
        execl(w->info, w->info, "select", w->shim, it->raw, (char *)NULL);
        _exit(3);
    }
    close(fds[1]);
    ln_str why = {0};
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            ln_str_addn(&why, buf, (size_t)n);
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return;
    while (why.len > 0 && why.s[why.len - 1] == '\n')   /* as $(...) drops them */
        why.s[--why.len] = '\0';
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
        ln_bad(cmd, "%s: %s", it->flag, ln_str_get(&why));
}

/* Every option the plugin declares as required is given (checked where the launcher read the declarations:
   the shim would refuse the plugin, and every CUDA call would fail). */
static void check_required(ln_run *r, const ln_spec *s)
{
    ln_plugin *p = ln_plugins_find(&r->plugins, s->plugin);
    if (p == NULL || p->def == NULL || p->def->options == NULL || s->n == 0)
        return;
    for (const cushim_option *o = p->def->options; o->name != NULL; o++)
        if ((o->type & CUSHIM_OPT_REQUIRED) && ln_spec_get(s, o->name) == NULL)
            ln_bad(r->cmd, "%s: the %s plugin needs its option '%s' too (cushim plugins %s)", s->items[0].flag,
                   s->plugin, o->name, s->plugin);
}

/* Whether HAMi-core's CUDA_DEVICE_SM_LIMIT or CUDA_DEVICE_SM_LIMIT_<i> is set: by the variables' names (a line
   of 'env' can be part of another variable's value). */
static int hami_sm_limit(void)
{
    static const char var[] = "CUDA_DEVICE_SM_LIMIT";
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        size_t n = strcspn(*e, "=");
        if ((*e)[n] != '=' || strncmp(*e, var, sizeof var - 1) != 0)
            continue;
        if (n == sizeof var - 1)
            return 1;
        if ((*e)[sizeof var - 1] == '_' && strspn(*e + sizeof var, "0123456789") == n - sizeof var)
            return 1;
    }
    return 0;
}

static int shipped(const ln_where *w, const char *name)
{
    return w->plugindir != NULL && ln_is_file(ln_fmt("%s/%s.so", w->plugindir, name));
}

/* lua: the flags' spec (--lua-KEY=...) joins the one --lua=FILE; with none it stands alone (--lua-script). */
static void join_lua(ln_run *r)
{
    ln_spec *flags = ln_run_find(r, "lua"), *one = NULL;
    if (flags == NULL)
        return;
    size_t files = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->specs[i].plugin != NULL && strcmp(r->specs[i].plugin, "lua") == 0 && !r->specs[i].derived_only) {
            files++;
            one = &r->specs[i];
        }
    if (files == 0)
        return;
    if (files > 1)
        ln_bad(r->cmd, "%s: with several --lua, give the option in each: --lua=FILE:%s=VALUE", flags->items[0].flag,
               flags->items[0].key);
    for (size_t i = 0; i < flags->n; i++)
        ln_spec_set(one, flags->items[i].flag, flags->items[i].key, flags->items[i].raw, flags->items[i].repeat);
    flags->n = 0;
    flags->plugin = NULL;
    flags->text = NULL;   /* dropped */
}

/* smlimit: --sm-limit (or its flags' limit=) or --priority (priority=: priorities without a limit), else HAMi-core's
   CUDA_DEVICE_SM_LIMIT[_<i>] (the plugin reads them itself); its other options (--sm-turns: turns=1) need one of
   these. Returns whether it is loaded. */
static int compose_smlimit(ln_run *r)
{
    ln_spec *s = &r->sm;
    if (ln_spec_get(s, "limit") != NULL || ln_spec_get(s, "priority") != NULL) {
        if (!shipped(r->w, "smlimit"))
            ln_die("%s needs the shipped smlimit plugin, not found (cushim plugins)",
                   ln_spec_get(s, "limit") != NULL ? "--sm-limit" : "--priority");
        return 1;
    }
    if (hami_sm_limit() && shipped(r->w, "smlimit")) {
        const char *env = getenv("CUSHIM_PLUGINS");
        if (!ln_loads_plugin(env != NULL ? env : "", "smlimit")) {
            s->plugin = "smlimit";
            return 1;
        }
        if (s->n > 0)
            ln_bad(r->cmd, "%s: CUSHIM_PLUGINS names smlimit already; add %s=%s to its options there", s->items[0].flag,
                   s->items[0].key, s->items[0].value);
        return 0;
    }
    if (s->n > 0)
        ln_bad(r->cmd, "%s needs --sm-limit or --priority (or HAMi-core's CUDA_DEVICE_SM_LIMIT)", s->items[0].flag);
    return 0;
}

/* PATH, about to enter the list in VAR, holds none of the two CHARS that separate its entries (the dynamic
   linker has no escapes: 'a b/libcushim.so' in LD_PRELOAD is two files, neither loaded). */
static void no_separator(const char *var, const char *chars, const char *path)
{
    if (strpbrk(path, chars) != NULL)
        ln_die("%s cannot go into %s, which it would split at a '%c' or a '%c'; install or build cushim under a path "
               "without them", ln_shown(path), var, chars[0], chars[1]);
}

static void prepend(const char *var, const char *path)
{
    const char *old = getenv(var);
    setenv(var, old != NULL && old[0] != '\0' ? ln_fmt("%s:%s", path, old) : path, 1);
}

void ln_run_compose(ln_run *r)
{
    const ln_where *w = r->w;
    if (w->shim == NULL)
        ln_die("libcushim.so not found (install cushim, build it in %s, or set CUSHIM_LIB)", w->build);
    join_lua(r);
    int sm = compose_smlimit(r);
    ln_spec *all[2] = {sm ? &r->sm : NULL, r->mem.n > 0 ? &r->mem : NULL};
    for (size_t i = 0; i < r->n + 2; i++) {
        ln_spec *s = i < r->n ? &r->specs[i] : all[i - r->n];
        if (s == NULL || s->plugin == NULL)
            continue;
        for (size_t k = 0; k < s->n; k++)
            if (ln_option_is_selector(s->plugin, s->items[k].key))
                check_selector(w, r->cmd, &s->items[k]);
        check_required(r, s);
    }
    ln_spec *fault = ln_run_find(r, "faultinject"), *trace = ln_run_find(r, "trace");
    if (fault != NULL && !shipped(w, "faultinject"))
        ln_die("--fault needs the shipped faultinject plugin, not found (cushim plugins)");
    if (trace != NULL) {
        if (!shipped(w, "trace"))
            ln_die("--trace needs the shipped trace plugin, not found (cushim plugins)");
        /* NVTX ranges: the plugin is the NVTX injection library (unless one is set already) */
        const char *nvtx = getenv("NVTX_INJECTION64_PATH");
        if (nvtx == NULL || nvtx[0] == '\0')
            setenv("NVTX_INJECTION64_PATH", ln_fmt("%s/trace.so", w->plugindir), 1);
        /* a default-named file lands in the current directory: say where */
        if (ln_spec_get(trace, "file") == NULL && euidaccess(".", W_OK) != 0)
            ln_die("--trace: the current directory is not writable; give --trace=FILE");
    }
    if (r->mem.n > 0 && !shipped(w, "memlimit"))
        ln_die("--mem-limit needs the shipped memlimit plugin, not found (cushim plugins)");

    /* CUSHIM_PLUGINS: the environment's specs first, then ours in option order, then smlimit and memlimit */
    ln_str ours = {0};
    for (size_t i = 0; i < r->n + 2; i++) {
        ln_spec *s = i < r->n ? &r->specs[i] : all[i - r->n];
        if (s == NULL || (s->plugin == NULL && s->text == NULL))
            continue;
        if (ours.len > 0)
            ln_str_addc(&ours, ';');
        ln_spec_text(&ours, s);
    }
    if (ours.len > 0) {
        const char *old = getenv("CUSHIM_PLUGINS");
        setenv("CUSHIM_PLUGINS", ln_plugins_join(old != NULL ? old : "", ours.s), 1);
    }
    /* '-' is passed as is: the shim writes to its stderr as it was at start (a path such as /dev/stderr would
       be reopened by every process and by whatever the program made of fd 2). */
    if (r->counts != NULL)
        setenv("CUSHIM_COUNTS", r->counts, 1);
    if (r->log != NULL)
        setenv("CUSHIM_LOG", r->log, 1);
    if (r->log_file != NULL)
        setenv("CUSHIM_LOG_FILE", r->log_file, 1);
    if (r->libs != NULL)
        setenv("CUSHIM_LIBS", r->libs, 1);
    else if (r->remote && getenv("CUSHIM_LIBS") == NULL)
        /* cuBLAS and NCCL run on the server too (docs/remote.md, "cuBLAS and cuBLASLt", "NCCL"): a copy in the
           program, linked to a static runtime that would need this machine's driver, must never run, so their
           calls are interposed */
        setenv("CUSHIM_LIBS", "driver,runtime,nvml,nccl,cublas,cublaslt", 1);
    const char *real = r->real;
    if (r->fake) {
        if (w->fake == NULL)
            ln_die("--fake: the fake driver was not found next to %s", w->shim);
        no_separator("LD_LIBRARY_PATH", ":;", w->fake);
        prepend("LD_LIBRARY_PATH", w->fake);
        if (real == NULL || real[0] == '\0') {
            const char *env = getenv("CUSHIM_REAL_LIBCUDA");
            real = env != NULL && env[0] != '\0' ? env : ln_fmt("%s/libcuda.so.1", w->fake);
        }
    }
    if (r->remote)   /* no driver of this machine is ever loaded: every call goes to the server */
        real = "none";
    if (real != NULL && real[0] != '\0')
        setenv("CUSHIM_REAL_LIBCUDA", real, 1);
}

_Noreturn void ln_run_start(ln_run *r, char **argv)
{
    const ln_where *w = r->w;
    ln_run_compose(r);
    if (r->dropin) {
        if (w->dropin == NULL)
            ln_die("--dropin: the drop-in directory was not found next to %s", w->shim);
        no_separator("LD_LIBRARY_PATH", ":;", w->dropin);
        prepend("LD_LIBRARY_PATH", w->dropin);
        if (r->remote) {
            /* a runtime-API program's cudart calls and nvcc's registration are answered by the remote plugin
               (docs/remote.md, "Runtime-API programs"): the shim and the plugin preloaded, so that they come
               before libcudart; a driver-API program finds the same shim as libcuda.so.1 */
            ln_plugin *rp = ln_plugins_find(&r->plugins, "remote");
            if (rp == NULL)
                ln_die("--remote: the remote plugin was not found in %s", w->plugindir);
            no_separator("LD_PRELOAD", ": ", rp->path);
            no_separator("LD_PRELOAD", ": ", w->shim);
            prepend("LD_PRELOAD", rp->path);
            prepend("LD_PRELOAD", w->shim);
        }
    } else {
        no_separator("LD_PRELOAD", ": ", w->shim);
        prepend("LD_PRELOAD", w->shim);
    }
    fflush(stdout);
    execvp(argv[0], argv);
    int e = errno;
    if (e == ENOENT)
        fprintf(stderr, "%s: %s: command not found\n", LN_PROG, argv[0]);
    else
        fprintf(stderr, "%s: %s: %s\n", LN_PROG, argv[0], strerror(e));
    exit(e == ENOENT ? 127 : 126);
}
