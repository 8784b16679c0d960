/*
 * plugins.c - the host's record of each plugin and its lifecycle: validation
 * of a definition, init, undo on failure, flush at exit, fork_child.
 *
 * A record is made for every definition that passed the ABI checks, whether
 * its options and init then succeed or not; records are never freed (plugins
 * are never unloaded), and 'cushim_plugin *' arguments of the host table are
 * checked by pointer comparison against this list before anything is read
 * through them. Every hook group and TLS key has an owner: undoing a plugin
 * closes its hook owner (hooks.c, under the hook mutex: no hooks_add of it
 * succeeds any more, from any thread), marks it failed and then removes every
 * group it owns.
 *
 * init runs without any lock of ours held: it may register hooks, read
 * options, call CUDA (straight to the real function during initialisation),
 * even register another plugin.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "hooks.h"
#include "lifecycle.h"
#include "log.h"
#include "module.h"
#include "options.h"
#include "plugins.h"
#include "optvalue.h"
#include "slots.h"
#include "thread.h"
#include "cushim/cushim_io.h"

#define PL_MAX 1024
#define PL_DEF_MIN (offsetof(cushim_plugin_def, init) + sizeof(void (*)(void)))

static cushim_plugin *pl_all[PL_MAX];     /* load order */
static _Atomic uint32_t pl_n;
static pthread_mutex_t pl_mu = PTHREAD_MUTEX_INITIALIZER;

void pl_set_data(cushim_plugin *p, void *data)
{
    if (pl_valid(p))
        p->data = data;
}

int pl_valid(const cushim_plugin *p)
{
    uint32_t n = atomic_load_explicit(&pl_n, memory_order_acquire);
    for (uint32_t i = 0; p != NULL && i < n; i++)
        if (pl_all[i] == p)
            return 1;
    return 0;
}

int pl_state(const cushim_plugin *p)
{
    return pl_valid(p) ? atomic_load_explicit(&((cushim_plugin *)p)->state, memory_order_acquire) : 0;
}

void pl_vlog(const cushim_plugin *p, int level, const char *fmt, va_list ap)
{
    if (fmt == NULL || level < LOG_DEBUG || level > LOG_ERROR || level < log_level())
        return;
    char buf[900];
    vsnprintf(buf, sizeof buf, fmt, ap);
    log_msg(level, "%s: %s", pl_valid(p) ? p->name : "(unknown plugin)", buf);
}

void pl_log(const cushim_plugin *p, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pl_vlog(p, level, fmt, ap);
    va_end(ap);
}

/* One line at error level (warn for an optional plugin). A failure that makes
   the shim fail closed is written even with CUSHIM_LOG=off: otherwise every
   CUDA call would fail with no word why. */
int pl_loaded(const char *name)
{
    int found = 0;
    pthread_mutex_lock(&pl_mu);
    uint32_t n = atomic_load(&pl_n);
    for (uint32_t i = 0; i < n && !found; i++) {
        int st = atomic_load(&pl_all[i]->state);
        found = (st == PL_LOADING || st == PL_ACTIVE) && strcmp(pl_all[i]->name, name) == 0;
    }
    pthread_mutex_unlock(&pl_mu);
    return found;
}

void pl_report_failure(const cushim_plugin *p, const char *name, int optional, int from_env, const char *why)
{
    (void)p;
    char line[1024];
    snprintf(line, sizeof line, "plugin '%s': %s%s", name, why,
             !from_env ? "" : optional ? " (optional: the others keep working)"
                                       : "; failing closed: every CUDA call returns an initialisation error");
    int level = optional || !from_env ? LOG_WARN : LOG_ERROR;
    if (level >= log_level()) {
        log_msg(level, "%s", line);
    } else if (from_env && !optional) {
        char buf[1100];
        int n = snprintf(buf, sizeof buf, "cushim[%d] error: %s\n", (int)getpid(), line);
        if (n > 0)
            (void)cushim_write_all(log_fd(), buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
    if (from_env && !optional) {
        snprintf(line, sizeof line, "plugin '%s': %s", name, why);
        sl_fail_closed(line);
    }
}

/* Undo everything 'p' registered; from now on it can register nothing. */
static void pl_undo(cushim_plugin *p)
{
    hk_owner_close(&p->hooks);
    atomic_store_explicit(&p->state, PL_FAILED, memory_order_release);
    if (hk_remove_owner(&p->hooks) != 0)
        log_error("plugin '%s': out of memory removing a hook group; its hooks stay", p->name);
    th_tls_release(p);
}

int pl_load(const cushim_host *host, const cushim_plugin_def *def, const char *options, const char *path,
            int optional, int from_env, cushim_plugin **out, char *err, size_t errlen)
{
    *out = NULL;
    if (def == NULL)
        return rt_seterr(err, errlen, "no plugin definition (cushim_plugin_entry returned NULL)");
    if (def->size < PL_DEF_MIN)
        return rt_seterr(err, errlen, "plugin definition too small (%u bytes; at least %zu)", def->size,
                      (size_t)PL_DEF_MIN);
    uint32_t abi = def->abi_version;
    if (CUSHIM_ABI_MAJOR_OF(abi) != CUSHIM_ABI_MAJOR || CUSHIM_ABI_MINOR_OF(abi) > CUSHIM_ABI_MINOR)
        return rt_seterr(err, errlen, "was built for SDK ABI %u.%u, this shim provides %u.%u", CUSHIM_ABI_MAJOR_OF(abi),
                      CUSHIM_ABI_MINOR_OF(abi), CUSHIM_ABI_MAJOR, CUSHIM_ABI_MINOR);
    if (!op_name_ok(def->name))
        return rt_seterr(err, errlen, "the plugin's name is not [a-z0-9_-]{1,63}");

    cushim_plugin *p = calloc(1, sizeof *p);
    if (p == NULL)
        return rt_seterr(err, errlen, "out of memory");
    p->def = def;
    snprintf(p->name, sizeof p->name, "%s", def->name);
    p->path = path != NULL ? strdup(path) : NULL;
    p->optional = optional;
    p->from_env = from_env;
    p->loader_tid = th_tid();
    atomic_store(&p->state, PL_LOADING);

    int rc = CUSHIM_OK;
    pthread_mutex_lock(&pl_mu);
    uint32_t n = atomic_load(&pl_n);
    for (uint32_t i = 0; i < n; i++) {
        int st = atomic_load(&pl_all[i]->state);
        if ((st == PL_LOADING || st == PL_ACTIVE) && strcmp(pl_all[i]->name, p->name) == 0) {
            rc = rt_seterr(err, errlen, "a plugin named '%s' is already loaded", p->name);
            break;
        }
    }
    if (rc == CUSHIM_OK && n >= PL_MAX)
        rc = rt_seterr(err, errlen, "more than %d plugins", PL_MAX);
    if (rc == CUSHIM_OK) {
        pl_all[n] = p;
        atomic_store_explicit(&pl_n, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&pl_mu);
    if (rc != CUSHIM_OK) {
        free(p->path);
        free(p);
        return rc;
    }
    *out = p;

    if (op_load(&p->opts, def->options, options, err, errlen) != 0) {
        pl_undo(p);
        return CUSHIM_EINVAL;
    }
    if (def->init != NULL) {
        int r = def->init(host, p);
        if (atomic_load(&p->state) != PL_LOADING)   /* a fork child took it over */
            return rt_seterr(err, errlen, "its initialisation was interrupted");
        if (r != 0) {
            pl_undo(p);
            return rt_seterr(err, errlen, "init returned %d", r);
        }
    }
    int expected = PL_LOADING;
    if (!atomic_compare_exchange_strong(&p->state, &expected, PL_ACTIVE))
        return rt_seterr(err, errlen, "its initialisation was interrupted");
    log_info("plugin '%s' %s loaded%s%s", p->name, def->version ? def->version : "", p->path ? " from " : "",
             p->path ? p->path : "");
    return CUSHIM_OK;
}

int pl_register(const cushim_host *host, const cushim_plugin_def *def, const char *options,
                cushim_plugin **self, char *err, size_t errlen)
{
    char why[512];
    if (err == NULL || errlen == 0) {
        err = why;
        errlen = sizeof why;
    }
    err[0] = '\0';
    cushim_plugin *p = NULL;
    rt_init();
    if (lc_exiting()) {
        snprintf(err, errlen, "the process is exiting: plugins are flushed");
        return CUSHIM_ESTATE;
    }
    int rc = pl_load(host, def, options, NULL, 0, 0, &p, err, errlen);
    if (rc != CUSHIM_OK) {
        const char *name = def != NULL && def->size >= PL_DEF_MIN && op_name_ok(def->name) ? def->name : "?";
        pl_report_failure(p, name, 0, 0, err);
        p = NULL;
    }
    if (self != NULL)
        *self = p;
    return rc;
}

/* At exit, in reverse load order; a flushed plugin adds no hooks any more. */
static void pl_flush_all(void)
{
    for (uint32_t i = atomic_load(&pl_n); i-- > 0;) {
        cushim_plugin *p = pl_all[i];
        int expected = PL_ACTIVE;
        if (!atomic_compare_exchange_strong(&p->state, &expected, PL_FLUSHED))
            continue;
        hk_owner_close(&p->hooks);
        if (CUSHIM_HAS(p->def, cushim_plugin_def, flush) && p->def->flush != NULL)
            p->def->flush(p);
    }
}

/* fork() child: inits interrupted on another thread fail; fork_child of the loaded plugins. */
static void pl_fork_child(uint32_t parent_tid)
{
    pthread_mutex_init(&pl_mu, NULL);
    uint32_t n = atomic_load(&pl_n);
    for (uint32_t i = 0; i < n; i++) {
        cushim_plugin *p = pl_all[i];
        if (atomic_load(&p->state) != PL_LOADING || p->loader_tid == parent_tid)
            continue;
        /* Its init ran on a thread that does not exist in this child. */
        pl_undo(p);
        pl_report_failure(p, p->name, p->optional, p->from_env,
                          "fork() in another thread interrupted its init; not loaded in the child");
    }
    for (uint32_t i = 0; i < n; i++) {
        cushim_plugin *p = pl_all[i];
        if (atomic_load(&p->state) == PL_ACTIVE && CUSHIM_HAS(p->def, cushim_plugin_def, fork_child) &&
            p->def->fork_child != NULL)
            p->def->fork_child(p);
    }
}

LC_MODULE(plugins, .level = LC_PLUGINS, .fork_child = pl_fork_child, .stop = pl_flush_all);
