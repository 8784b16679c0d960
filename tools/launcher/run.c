/*
 * run.c - 'cushim run [OPTIONS] [--] CMD [ARGS...]': the options read, in order, into the plugin specs and
 * settings of an ln_run (start.c then starts the program). The short forms (--trace[=FILE], --flight[=N],
 * --fault, --lua, --plugin, --sm-limit, --mem-limit, ...) are read here; every other --PLUGIN-OPTION[=VALUE] is
 * a flag derived from a shipped plugin's declared options (options.c) and joins that plugin's spec.
 *
 * Values are data, never syntax (docs/security.md, "The launcher"): an option with a control character is
 * refused (a newline would end a CUSHIM_PLUGINS spec and start another); values are escaped where they enter a
 * spec (spec.c); relative paths are made absolute; a value is given as --x=value, never --x value.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "run.h"

ln_spec *ln_run_find(ln_run *r, const char *plugin)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->specs[i].plugin != NULL && strcmp(r->specs[i].plugin, plugin) == 0 &&
            (strcmp(plugin, "lua") != 0 || r->specs[i].derived_only))
            return &r->specs[i];
    return NULL;
}

static ln_spec *add_spec(ln_run *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap != 0 ? 2 * r->cap : 8;
        r->specs = ln_grow(r->specs, r->cap * sizeof *r->specs);
    }
    ln_spec *s = &r->specs[r->n++];
    memset(s, 0, sizeof *s);
    return s;
}

ln_spec *ln_run_spec(ln_run *r, const char *plugin)
{
    if (strcmp(plugin, "smlimit") == 0 || strcmp(plugin, "memlimit") == 0) {
        ln_spec *s = plugin[0] == 's' ? &r->sm : &r->mem;
        s->plugin = (char *)plugin;
        return s;
    }
    ln_spec *s = ln_run_find(r, plugin);
    if (s == NULL) {
        s = add_spec(r);
        s->plugin = ln_strdup(plugin);
        /* lua: the flags' spec joins the one --lua=FILE later (start.c), or stands alone */
        s->derived_only = strcmp(plugin, "lua") == 0;
    }
    return s;
}

/* The value of --NAME=VALUE (ARG begins with "--NAME="), which must not be empty. */
static const char *value_of(const ln_run *r, const char *arg, const char *name, const char *needs)
{
    const char *v = arg + strlen(name) + 1;
    if (v[0] == '\0')
        ln_bad(r->cmd, "%s needs %s", name, needs);
    return v;
}

static int is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && arg[n] == '=';
}

/* One --lua=FILE[:K=V,...] as a spec of the shipped lua plugin: FILE absolute, the plugin's own options
   (those it declares, but 'script' and 'opt') checked and passed as they are, every other K=V as opt=K=V for
   the policy. The K=V items are cut at each ',' as text. */
static void lua_arg(ln_run *r, const char *arg)
{
    const char *w = r->w->plugindir;
    size_t flen = strcspn(arg, ":");
    char *file = ln_strndup(arg, flen);
    const char *rest = arg[flen] == ':' ? arg + flen + 1 : "";
    if (file[0] == '\0')
        ln_bad(r->cmd, "--lua needs a policy file: --lua=policy.lua[:KEY=VALUE,...]");
    char *so = ln_fmt("%s/lua.so", w != NULL ? w : "");
    if (r->w->shim != NULL && (w == NULL || !ln_is_file(so)))
        ln_die("--lua needs the shipped lua plugin, not found (cushim plugins)");
    char *label = ln_fmt("--lua=%s", arg);
    ln_spec *s = add_spec(r);
    s->plugin = ln_strdup("lua");
    ln_spec_set(s, label, "script", ln_absolute(label, file), 0);
    ln_plugin *p = ln_plugins_find(&r->plugins, "lua");
    if (p != NULL && rest[0] != '\0' && ln_plugin_def(p) == NULL)
        ln_die("--lua: the shipped plugin %s cannot be read: %s", p->path, p->why);
    while (*rest != '\0') {
        size_t n = strcspn(rest, ",");
        char *kv = ln_strndup(rest, n);
        rest += n + (rest[n] == ',');
        if (kv[0] == '\0')
            continue;
        char *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv)
            ln_bad(r->cmd, "--lua=%s: '%s' is not KEY=VALUE", arg, kv);
        *eq = '\0';
        const cushim_option *o = p != NULL ? ln_plugin_option(p, kv) : NULL;
        if (o != NULL && strcmp(kv, "script") != 0 && strcmp(kv, "opt") != 0) {
            ln_spec_set(s, label, kv, ln_option_value(label, "lua", o, eq + 1), (o->type & CUSHIM_OPT_REPEAT) != 0);
        } else {
            *eq = '=';
            ln_spec_set(s, label, "opt", kv, 1);
        }
    }
}

/* --PLUGIN-OPTION[=VALUE]: 1 when ARG is one (and was taken), 0 when no shipped plugin declares it. */
static int derived_arg(ln_run *r, const char *arg, char *why, size_t whylen)
{
    ln_flag f;
    if (!ln_flag_match(&r->plugins, arg, &f, why, whylen))
        return 0;
    const char *v = f.value;
    if (v == NULL) {
        if ((f.opt->type & CUSHIM_OPT_TYPE_MASK) != CUSHIM_OPT_BOOL)
            ln_bad(r->cmd, "%s needs a value: %s=...", f.name, f.name);
        v = "1";   /* a bool alone: on */
    }
    char *val = ln_option_value(f.name, f.plugin->name, f.opt, v);
    ln_spec_set(ln_run_spec(r, f.plugin->name), f.name, f.opt->name, val, (f.opt->type & CUSHIM_OPT_REPEAT) != 0);
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The libraries this build interposes, from apis.tsv's 'library' column (a library added by a descriptor
   needs no change here), sorted, as ' '-separated text; the 13.0 tree's list when apis.tsv says nothing. */
static char *known_libs(const ln_where *w)
{
    static const char fallback[] = "driver runtime nvml nccl cublas cublaslt";
    FILE *f = w->apis != NULL ? fopen(w->apis, "r") : NULL;
    if (f == NULL)
        return ln_strdup(fallback);
    char *line = NULL, **names = NULL;
    size_t cap = 0, n = 0;
    int col = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#')
            continue;
        char *field = line;
        for (int c = 1; field != NULL; c++) {
            char *end = strchr(field, '\t');
            size_t len = end != NULL ? (size_t)(end - field) : strlen(field);
            if (col == 0 && len == 7 && strncmp(field, "library", 7) == 0) {
                col = c;
                break;
            }
            if (col != 0 && c == col) {
                char *name = ln_strndup(field, len);
                int seen = 0;
                for (size_t k = 0; k < n && !seen; k++)
                    seen = strcmp(names[k], name) == 0;
                if (!seen && name[0] != '\0') {
                    names = ln_grow(names, (n + 1) * sizeof *names);
                    names[n++] = name;
                }
                break;
            }
            field = end != NULL ? end + 1 : NULL;
        }
    }
    free(line);
    fclose(f);
    if (n == 0)
        return ln_strdup(fallback);
    qsort(names, n, sizeof *names, by_name);
    ln_str out = {0};
    for (size_t k = 0; k < n; k++) {
        if (k > 0)
            ln_str_addc(&out, ' ');
        ln_str_add(&out, names[k]);
    }
    return out.s;
}

/* --libs=LIB[,LIB...]: each name, cut at ',' or ' ' as the shim cuts them (runtime/libs.c), one of the
   build's libraries, as text: 'runtim?' is no name. */
static void check_libs(const ln_run *r, const char *libs)
{
    char *known = known_libs(r->w);
    ln_str spaced = {0};
    ln_str_addf(&spaced, " %s ", known);
    for (const char *p = libs; *p != '\0';) {
        size_t n = strcspn(p, ", ");
        if (n > 0) {
            char *name = ln_fmt(" %.*s ", (int)n, p);
            if (strstr(spaced.s, name) == NULL) {
                ln_str list = {0};
                for (const char *k = known; *k != '\0'; k++) {
                    if (*k == ' ')
                        ln_str_addc(&list, ',');
                    ln_str_addc(&list, *k);
                }
                ln_bad(r->cmd, "--libs: '%.*s' is not one of %s", (int)n, p, list.s);
            }
        }
        p += n + (p[n] != '\0');
    }
}

static const char *const value_options[] = {"--plugin", "--fault", "--lua", "--counts", "--log", "--log-file",
                                            "--real-libcuda", "--sm-limit", "--priority", "--mem-limit", "--mem-budget",
                                            "--mem-wait", "--libs", NULL};

/* One option of the plugins and settings 'cushim run' and 'cushim serve' share (r->cmd names the command in
   messages): 1 when taken, 0 when it is none of them (the caller's own, or unknown). */
int ln_run_option(ln_run *r, const char *a)
{
    const ln_where *w = r->w;
    if (a[0] == '-' && ln_has_cntrl(a))
        ln_bad(r->cmd, "%s: an option value cannot hold a control character (a newline, a tab)", ln_shown(a));
    if (is_opt(a, "--plugin")) {
        ln_spec *s = add_spec(r);
        s->text = ln_plugin_arg(w, a + 9);
    } else if (is_opt(a, "--fault")) {
        const char *rule = value_of(r, a, "--fault", "a rule: --fault=SELECTOR:ERROR[:WHEN]");
        ln_spec_set(ln_run_spec(r, "faultinject"), "--fault", "rule", rule, 1);
    } else if (is_opt(a, "--lua")) {
        lua_arg(r, a + 6);
    } else if (strcmp(a, "--trace") == 0) {
        ln_run_spec(r, "trace");
    } else if (is_opt(a, "--trace")) {
        const char *f = a + 8;
        if (f[0] == '\0')
            ln_bad(r->cmd, "--trace=FILE needs a file (or give --trace alone)");
        ln_spec_set(ln_run_spec(r, "trace"), "--trace", "file", ln_absolute("--trace", f), 0);
    } else if (strcmp(a, "--flight") == 0) {
        ln_run_spec(r, "flight");
    } else if (is_opt(a, "--flight")) {
        ln_plugin *p = ln_plugins_find(&r->plugins, "flight");
        const cushim_option *o = p != NULL ? ln_plugin_option(p, "n") : NULL;
        if (o == NULL)
            ln_die("--flight needs the shipped flight plugin, not found or unreadable (cushim plugins)");
        ln_spec_set(ln_run_spec(r, "flight"), "--flight", "n", ln_option_value("--flight", "flight", o, a + 9), 0);
    } else if (strcmp(a, "--trace-defer") == 0) {
        ln_spec_set(ln_run_spec(r, "trace"), a, "render", "exit", 0);
    } else if (is_opt(a, "--sm-limit")) {
        const char *v = value_of(r, a, "--sm-limit", "a percentage: --sm-limit=30 or --sm-limit=0:30,1:50");
        ln_spec_set(ln_run_spec(r, "smlimit"), "--sm-limit", "limit", v, 0);
    } else if (is_opt(a, "--priority")) {
        const char *v = value_of(r, a, "--priority", "a level: --priority=high, normal, low or HAMi's number (0 high)");
        ln_spec_set(ln_run_spec(r, "smlimit"), "--priority", "priority", v, 0);
    } else if (strcmp(a, "--sm-turns") == 0) {
        ln_spec_set(ln_run_spec(r, "smlimit"), a, "turns", "1", 0);
    } else if (is_opt(a, "--mem-limit")) {
        const char *v = value_of(r, a, "--mem-limit", "a size: --mem-limit=8GiB or --mem-limit=0:8GiB,1:4GiB");
        ln_spec_set(ln_run_spec(r, "memlimit"), "--mem-limit", "limit", v, 0);
    } else if (is_opt(a, "--mem-budget")) {
        ln_spec_set(ln_run_spec(r, "memlimit"), "--mem-budget", "budget", value_of(r, a, "--mem-budget", "a name"),
                    0);
    } else if (strcmp(a, "--mem-oversubscribe") == 0) {
        ln_spec_set(ln_run_spec(r, "memlimit"), a, "oversubscribe", "true", 0);
    } else if (is_opt(a, "--mem-oversubscribe")) {
        const char *v = value_of(r, a, "--mem-oversubscribe", "a ratio: --mem-oversubscribe=1.5 (or the flag alone)");
        ln_spec_set(ln_run_spec(r, "memlimit"), "--mem-oversubscribe", "oversubscribe", v, 0);
    } else if (is_opt(a, "--mem-wait")) {
        ln_str full = {0};
        const char *v = value_of(r, a, "--mem-wait", "seconds: --mem-wait=30");
        ln_str_add(&full, "wait:");
        ln_str_add(&full, v);
        ln_spec_set(ln_run_spec(r, "memlimit"), "--mem-wait", "on_full", full.s, 0);
    } else if (is_opt(a, "--counts")) {
        const char *c = value_of(r, a, "--counts", "a file (or '-')");
        r->counts = strcmp(c, "-") == 0 ? c : ln_absolute("--counts", c);
    } else if (is_opt(a, "--log")) {
        /* the levels the runtime accepts (any case, 'warning' = warn); anything else would be ignored there */
        static const char *const levels[] = {"debug", "info", "warn", "error", "off", "warning", NULL};
        char *lv = ln_strdup(a + 6);
        for (char *c = lv; *c != '\0'; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        int k = 0;
        while (levels[k] != NULL && strcmp(levels[k], lv) != 0)
            k++;
        if (levels[k] == NULL)
            ln_bad(r->cmd, "--log: '%s' is not one of debug, info, warn, error, off", a + 6);
        r->log = strcmp(lv, "warning") == 0 ? "warn" : lv;
    } else if (is_opt(a, "--log-file")) {
        r->log_file = ln_absolute("--log-file", value_of(r, a, "--log-file", "a file"));
    } else if (strcmp(a, "--fake") == 0) {
        r->fake = 1;
    } else if (is_opt(a, "--real-libcuda")) {
        r->real = ln_absolute("--real-libcuda", value_of(r, a, "--real-libcuda", "a path"));
    } else if (is_opt(a, "--libs")) {
        r->libs = value_of(r, a, "--libs", "a list: --libs=driver,runtime,nvml");
        check_libs(r, r->libs);
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        ln_help(w, ln_command_find(r->cmd), stdout);
        exit(0);
    } else if (a[0] == '-' && a[1] == '-' && a[2] != '\0') {
        for (int k = 0; value_options[k] != NULL; k++)
            if (strcmp(a, value_options[k]) == 0)
                ln_bad(r->cmd, "%s needs a value: %s=...", a, a);
        char why[300];
        if (!derived_arg(r, a, why, sizeof why)) {
            if (why[0] != '\0')
                ln_bad(r->cmd, "unknown option '%s' (%s)", a, why);
            return 0;
        }
    } else {
        return 0;
    }
    return 1;
}

int ln_cmd_run(const ln_where *w, int argc, char **argv)
{
    ln_run r = {.w = w, .cmd = "run"};
    ln_plugins_scan(&r.plugins, w->plugindir);
    const char *prev = "";
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--dropin") == 0) {
            r.dropin = 1;
        } else if (is_opt(a, "--remote")) {
            /* drop-in mode with the remote plugin: no driver on this machine */
            const char *addr = value_of(&r, a, "--remote", "an address: --remote=unix:/path or tcp://HOST:PORT");
            if (strncmp(addr, "unix:", 5) != 0 && strncmp(addr, "tcp://", 6) != 0)
                ln_bad("run", "--remote=%s: the address is unix:/path, tcp://HOST:PORT or tcp://[IPv6]:PORT", addr);
            ln_spec_set(ln_run_spec(&r, "remote"), "--remote", "server",
                        strncmp(addr, "unix:", 5) == 0 ? ln_fmt("unix:%s", ln_absolute("--remote", addr + 5)) : addr,
                        0);
            r.dropin = 1;
            r.remote = 1;
        } else if (is_opt(a, "--remote-token-file")) {
            /* the remote plugin's token_file, made absolute as every file the launcher passes */
            ln_spec_set(ln_run_spec(&r, "remote"), "--remote-token-file", "token_file",
                        ln_absolute("--remote-token-file", value_of(&r, a, "--remote-token-file", "a file")), 0);
        } else if (ln_run_option(&r, a)) {
            prev = a;
            continue;
        } else if (a[0] == '-') {
            ln_bad("run", "unknown option '%s'", a);
        } else {
            /* '--trace out.json CMD' would run out.json: a trace file is only ever --trace=FILE */
            size_t n = strlen(a);
            if (strcmp(prev, "--trace") == 0 && ((n >= 5 && strcmp(a + n - 5, ".json") == 0) ||
                                                 (n >= 8 && strcmp(a + n - 8, ".json.gz") == 0) ||
                                                 (n >= 15 && strcmp(a + n - 15, ".perfetto-trace") == 0)))
                ln_bad("run", "--trace %s: the trace file is given as --trace=%s ('--trace -- %s' runs %s)", a, a, a, a);
            break;
        }
        prev = a;
    }
    if (i >= argc)
        ln_bad("run", "no program given");
    ln_run_start(&r, argv + i);
}
