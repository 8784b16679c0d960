/*
 * loader.c - CUSHIM_PLUGINS: which plugins to load, with which options.
 *
 *   CUSHIM_PLUGINS = SPEC { ';' SPEC }          (a newline also separates)
 *   SPEC           = ['?'] NAME-OR-PATH [ ':' OPT { ',' OPT } ]
 *   OPT            = KEY '=' VALUE
 *
 * e.g. CUSHIM_PLUGINS='faultinject:api=cuMemAlloc*,rate=0.1;?/opt/acme/libquota.so:limit=8GiB'
 *
 * A VALUE may contain ':' and '='; ',' ';' and '\' inside a value are written
 * '\,' '\;' '\\' (the same escapes work in a path). A KEY may repeat for
 * CUSHIM_OPT_REPEAT options. White space around a SPEC is ignored; empty SPECs
 * are skipped. A leading '?' makes the plugin optional.
 *
 * NAME ([a-z0-9_-]+, no '/') is a shipped plugin: <dir>/cushim/plugins/NAME.so
 * where <dir> is the directory of the shim's own file (installed: P/lib/
 * libcushim.so -> P/lib/cushim/plugins), else <dir>/../plugins/NAME.so (build
 * tree: build/runtime/libcushim.so and build/dropin/libcuda.so.1 ->
 * build/plugins; installed drop-in P/lib/cushim/dropin -> P/lib/cushim/plugins).
 * Anything with a '/' is a path (relative ones to the working directory).
 * Files are opened RTLD_NOW | RTLD_LOCAL and never closed. Before dlopen the
 * file is opened without blocking and must be a regular file: dlopen of a FIFO
 * waits for a writer, forever (issue 42). Left: a file replaced by a FIFO
 * between that check and dlopen - only by whoever can write its directory, who
 * could as well replace the plugin. dlopen("/proc/self/fd/N") of the checked
 * descriptor would close that gap but name the object "/proc/self/fd/N" for
 * good: dladdr, $ORIGIN in its RUNPATH, a plugin finding its own directory
 * (lua: a bundled liblua) and debuggers would all lose its real path.
 *
 * Runs once, from the runtime's initialisation (lifecycle.c), so every plugin
 * is loaded before the first CUDA call is forwarded. Each failure is one log
 * line naming the plugin and the reason; a required plugin's failure makes
 * the shim fail closed (plugins.c, slots.c), an optional one's is a warning.
 * In secure-execution mode (setuid, setgid, file capabilities) the variable is
 * ignored: no code is loaded by the environment's word there.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "elfsym.h"
#include "host.h"
#include "loader.h"
#include "log.h"
#include "module.h"
#include "plugins.h"
#include "realdl.h"
#include "cushim/cushim_io.h"

static _Atomic uint32_t ldr_specs_taken;   /* specs started; a forked child resumes after them */

/* The end of the item at 's': the first unescaped character of 'stops'. */
static const char *ldr_item_end(const char *s, const char *stops)
{
    for (; *s && strchr(stops, *s) == NULL; s++)
        if (*s == '\\' && s[1] != '\0')
            s++;
    return s;
}

/* Unescape 's' (len bytes) into 'out'; -1 when it does not fit (never cut: a cut path names another file). */
static int ldr_unescape(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len)
            i++;
        if (o + 1 >= cap) {
            out[0] = '\0';
            return -1;
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return 0;
}

/* The spec's NAME-OR-PATH, unescaped, trailing blanks dropped; -1 when longer than a path may be. */
static int ldr_spec_what(const char *w, size_t wlen, char *what, size_t cap)
{
    if (ldr_unescape(w, wlen, what, cap) != 0)
        return -1;
    size_t wl = strlen(what);
    while (wl > 0 && isspace((unsigned char)what[wl - 1]))
        what[--wl] = '\0';
    return 0;
}

static int ldr_is_name(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

int ldr_plugin_file(const char *self_path, const char *name, char *out, size_t cap, char *tried,
                    size_t tried_cap)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self_path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    const char *const forms[] = { "%s/cushim/plugins/%s.so", "%s/../plugins/%s.so" };
    size_t t = 0;
    if (tried_cap > 0)
        tried[0] = '\0';
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(out, cap, forms[i], dir, name);
        if (access(out, F_OK) == 0)
            return 0;
        if (t + 2 < tried_cap)
            t += (size_t)snprintf(tried + t, tried_cap - t, "%s%s", i ? ", " : "", out);
    }
    return -1;
}

/* Where the shim itself was loaded from (the executable, for whitebox tests). */
static void ldr_self_path(char *out, size_t cap)
{
    uintptr_t base;
    char name[PATH_MAX];
    if (elf_object_of((const void *)&ldr_self_path, &base, name, sizeof name) && name[0] != '\0') {
        snprintf(out, cap, "%s", name);
        return;
    }
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
}

static void ldr_load_one(const char *what, const char *options, int optional)
{
    char path[PATH_MAX], tried[2 * PATH_MAX + 8], why[1024];
    const char *label = what;
    if (strchr(what, '/') != NULL) {
        snprintf(path, sizeof path, "%s", what);
        const char *base = strrchr(what, '/') + 1;
        label = *base ? base : what;
        if (access(path, F_OK) != 0) {
            snprintf(why, sizeof why, "no such file: %.900s", path);
            goto fail;
        }
    } else if (!ldr_is_name(what)) {
        snprintf(why, sizeof why, "'%.900s' is neither a plugin name ([a-z0-9_-]+) nor a path (with a '/')", what);
        goto fail;
    } else {
        char self[PATH_MAX];
        ldr_self_path(self, sizeof self);
        if (ldr_plugin_file(self, what, path, sizeof path, tried, sizeof tried) != 0) {
            snprintf(why, sizeof why, "no such plugin (looked for %.900s)", tried);
            goto fail;
        }
    }
    /* never dlopen what is not a regular file (a FIFO would block the program's start): the header's comment */
    int fd = cushim_open_regular(path, O_RDONLY, 0, why, sizeof why);
    if (fd < 0 && errno == EINVAL)
        goto fail;   /* 'why' says what it is; another failure (no permission) is dlopen's to tell, as before */
    if (fd >= 0)
        close(fd);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "cannot load %.400s: %.500s", path, e ? e : "dlopen failed");
        goto fail;
    }
    cushim_plugin_entry_fn entry = (cushim_plugin_entry_fn)rd_dlsym(h, CUSHIM_PLUGIN_ENTRY_NAME);
    if (entry == NULL) {
        snprintf(why, sizeof why, "%.900s exports no %s() (not a cushim plugin?)", path, CUSHIM_PLUGIN_ENTRY_NAME);
        goto fail;
    }
    const cushim_plugin_def *def = entry();
    cushim_plugin *p = NULL;
    why[0] = '\0';
    if (pl_load(&hs_host, def, options, path, optional, 1, &p, why, sizeof why) == CUSHIM_OK)
        return;
    if (p != NULL)
        label = p->name;
    else if (def != NULL && def->size >= offsetof(cushim_plugin_def, name) + sizeof(char *) &&
             def->name != NULL && ldr_is_name(def->name) && strlen(def->name) < 64)
        label = def->name;
    pl_report_failure(p, label, optional, 1, why);
    return;
fail:
    pl_report_failure(NULL, label, optional, 1, why);
}

/*
 * Walk the specs of a CUSHIM_PLUGINS text: 'fn' gets each one's index, its raw NAME-OR-PATH (w, wlen: still
 * escaped), its raw option text (NULL when the spec has no ':') and whether it is optional, and stops the walk
 * by returning non-zero.
 */
typedef int (*ldr_spec_fn)(void *ctx, uint32_t index, const char *w, size_t wlen, const char *opt, size_t olen,
                           int optional);

static void ldr_each_spec(const char *list, ldr_spec_fn fn, void *ctx)
{
    uint32_t index = 0;
    for (const char *s = list; *s; index++) {
        const char *end = ldr_item_end(s, ";\n");
        const char *b = s, *e = end;
        s = *end ? end + 1 : end;
        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]) && !(e - 1 > b && e[-2] == '\\'))
            e--;
        if (b == e)
            continue;
        int optional = *b == '?';
        if (optional)
            for (b++; b < e && isspace((unsigned char)*b); b++)
                ;
        const char *colon = ldr_item_end(b, ":");
        if (colon > e)
            colon = e;
        const char *opt = colon < e ? colon + 1 : NULL;
        if (fn(ctx, index, b, (size_t)(colon - b), opt, opt ? (size_t)(e - opt) : 0, optional))
            return;
    }
}

static int ldr_load_spec(void *ctx, uint32_t index, const char *w, size_t wlen, const char *opt, size_t olen,
                         int optional)
{
    _Atomic uint32_t *taken = ctx;
    if (index < atomic_load(taken))
        return 0;   /* done before a fork interrupted the parent's initialisation */
    atomic_store(taken, index + 1);
    char what[PATH_MAX];
    if (ldr_spec_what(w, wlen, what, sizeof what) != 0) {
        char why[200];
        snprintf(why, sizeof why, "a plugin name or path of %zu bytes, past the %d a path may have: '%.40s...'",
                 wlen, PATH_MAX - 1, w);
        pl_report_failure(NULL, "CUSHIM_PLUGINS", optional, 1, why);
        return 0;
    }
    char *options = NULL;
    if (opt != NULL && (options = strndup(opt, olen)) == NULL) {
        pl_report_failure(NULL, what, optional, 1, "out of memory reading its options");
        return 0;
    }
    ldr_load_one(what, options, optional);
    free(options);
    return 0;
}

void ldr_load_list(const char *list, _Atomic uint32_t *taken)
{
    ldr_each_spec(list, ldr_load_spec, (void *)taken);
}

/*
 * HAMi-core's environment (set by HAMi's Kubernetes device plugin) enforces limits with no other
 * configuration, so the shim can stand in /etc/ld.so.preload where libvgpu.so stood:
 *   CUDA_DEVICE_MEMORY_LIMIT[_<i>]  loads memlimit,
 *   CUDA_DEVICE_SM_LIMIT[_<i>]      loads smlimit (unless GPU_CORE_UTILIZATION_POLICY=disable),
 *   CUDA_TASK_PRIORITY              loads smlimit too (its priorities; the same policy rule),
 * each when one of its variables is set and no plugin of that name was loaded from CUSHIM_PLUGINS (the name
 * a plugin registers, never a substring of the text: a trace file '/x/memlimit' or a policy of that name
 * turned the quota off). The shipped plugin is loaded after the list, required (a limit that cannot be
 * enforced fails closed), found beside the shim wherever it is installed; it reads the variables itself.
 * CUSHIM_HAMI=0 turns this off. docs/plugins/memlimit.md, docs/plugins/smlimit.md.
 */
static _Atomic uint32_t ldr_auto_taken[3];

/* Is VAR or VAR_<i> (i < 16) set to something? Its name in 'name'. */
static int ldr_hami_set(const char *var, char *name, size_t cap)
{
    for (int i = -1; i < 16; i++) {
        if (i < 0)
            snprintf(name, cap, "%s", var);
        else
            snprintf(name, cap, "%s_%d", var, i);
        const char *v = getenv(name);
        if (v != NULL && *v != '\0')
            return 1;
    }
    return 0;
}

static void ldr_load_hami(void)
{
    static const struct { const char *var, *plugin; } auto_load[] = {
        { "CUDA_DEVICE_MEMORY_LIMIT", "memlimit" },
        { "CUDA_DEVICE_SM_LIMIT", "smlimit" },
        { "CUDA_TASK_PRIORITY", "smlimit" },   /* loaded once: the entry above may have loaded it */
    };
    _Static_assert(sizeof auto_load / sizeof auto_load[0] == sizeof ldr_auto_taken / sizeof ldr_auto_taken[0],
                   "one taken-mark per auto-loaded variable");
    const char *off = getenv("CUSHIM_HAMI");
    char name[48];
    if (off != NULL && !strcmp(off, "0"))
        return;
    for (size_t k = 0; k < sizeof auto_load / sizeof auto_load[0]; k++) {
        if (!ldr_hami_set(auto_load[k].var, name, sizeof name) || pl_loaded(auto_load[k].plugin))
            continue;
        if (!strcmp(auto_load[k].plugin, "smlimit")) {
            const char *policy = getenv("GPU_CORE_UTILIZATION_POLICY");
            if (policy != NULL && !strcasecmp(policy, "disable")) {
                log_info("%s is set, but GPU_CORE_UTILIZATION_POLICY=disable: no compute limit", name);
                continue;
            }
        }
        log_info("%s is set: loading the %s plugin (HAMi-core's variables; CUSHIM_HAMI=0 turns this off)", name,
                 auto_load[k].plugin);
        char list[16];
        snprintf(list, sizeof list, "%s", auto_load[k].plugin);
        ldr_load_list(list, &ldr_auto_taken[k]);
    }
}

/*
 * CUSHIM_FLIGHT: the flight recorder left on fleet-wide by one variable (docs/plugins/flight.md), as HAMi's
 * variables load the quotas: '1' (or 'on') loads the shipped flight plugin with its defaults, any other value is
 * its options ('n=4096,hang=60'); '0', 'off' or empty: nothing. Loaded optional (a recorder that cannot start, a
 * bad option, is one warning and no recording: it must never fail the program's CUDA calls), and only when no
 * plugin named flight came from CUSHIM_PLUGINS. Ignored in secure-execution mode (its dir= names where files are
 * made). Not under CUSHIM_DISABLE (the caller returns before).
 */
static _Atomic uint32_t ldr_flight_taken;

static void ldr_load_flight(void)
{
    /* names code and a directory it writes to ('dir='): ignored in secure-execution mode, with one line */
    const char *v = cfg_env_path("CUSHIM_FLIGHT");
    if (v == NULL || *v == '\0' || !strcmp(v, "0") || !strcasecmp(v, "off") || pl_loaded("flight"))
        return;
    size_t n = strlen(v);
    if (n > 1024 || strpbrk(v, ";\n") != NULL) {   /* one plugin's options, never a list of plugins */
        log_warn("CUSHIM_FLIGHT: the flight plugin's options expected (e.g. CUSHIM_FLIGHT=1 or n=4096,hang=60): "
                 "not loaded");
        return;
    }
    char list[1040];
    if (!strcmp(v, "1") || !strcasecmp(v, "on"))
        snprintf(list, sizeof list, "?flight");
    else
        snprintf(list, sizeof list, "?flight:%s", v);
    log_info("CUSHIM_FLIGHT is set: loading the flight plugin");
    ldr_load_list(list, &ldr_flight_taken);
}

/* Once, from initialisation: every plugin is loaded before the first CUDA call is forwarded. */
static void ldr_load_env(void)
{
    /* NULL in secure-execution mode (setuid, setgid, capabilities), with one
       line saying so: no code is loaded by the environment's word there. */
    const char *env = cfg_env_path("CUSHIM_PLUGINS");
    if (cfg_get()->disable) {
        if (env != NULL && env[strspn(env, " \t\n;")] != '\0')
            log_info("CUSHIM_PLUGINS is ignored: CUSHIM_DISABLE=1");
        return;
    }
    if (env == NULL || env[strspn(env, " \t\n;")] == '\0') {
        ldr_load_hami();
        ldr_load_flight();
        return;
    }
    char *copy = strdup(env);   /* another thread's setenv must not move it under us */
    if (copy == NULL) {
        pl_report_failure(NULL, "CUSHIM_PLUGINS", 0, 1, "out of memory reading the variable");
        return;
    }
    ldr_load_list(copy, &ldr_specs_taken);
    free(copy);
    ldr_load_hami();
    ldr_load_flight();
}

LC_MODULE(loader, .level = LC_PLUGINS, .init = ldr_load_env);
