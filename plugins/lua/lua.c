/*
 * lua.c - the lua plugin: CUDA call policies written in Lua 5.4, reloaded
 * while the program runs (docs/lua-policies.md).
 *
 *   cushim run --lua=policy.lua:limit=8GiB -- ./app
 *   CUSHIM_PLUGINS='lua:script=/abs/policy.lua,opt=limit=8GiB' ./app
 *
 * A generation is the policy file compiled and run once in a validation state
 * (lp_state.c): its declared hooks (cushim.before.SEL = f, cushim.after.SEL,
 * cushim.on{...}) are resolved to API ids (lp_gen.c, loaded by lp_watch.c) and registered with the host as
 * one hook group. The current generation is an atomic pointer; each thread
 * builds its own Lua state of it on its first hooked call (lp_thread in the
 * host's per-thread storage) and rebuilds when the pointer has moved and no
 * hooked call of its own is in progress. Generation references are counted
 * under lp_gen.c's lock, taken only when a thread changes generation: never on the
 * hot path. A watcher thread polls the file (reload_ms) and publishes a new
 * generation only if it compiled and validated; otherwise the error is logged
 * with file:line and the current one stays.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_engine.h"
#include "lp_gen.h"
#include "lp_hooks.h"
#include "lp_load.h"
#include "lp_report.h"
#include "lp_shared.h"
#include "lp_state.h"
#include "lp_values.h"
#include "lp_watch.h"

static const cushim_option lp_options[] = {
    {"script", CUSHIM_OPT_STRING | CUSHIM_OPT_REQUIRED, NULL, "the policy file (Lua 5.4)"},
    {"fail", CUSHIM_OPT_STRING, "closed",
     "closed: a policy that cannot load or a hook that errors makes calls fail; open: they pass"},
    {"allow", CUSHIM_OPT_STRING, "", "sandbox exceptions, '+'-separated: os io debug require cmodules bytecode"},
    {"budget", CUSHIM_OPT_INT, "1000000", "Lua instructions one hook call may run"},
    {"mem", CUSHIM_OPT_BYTES, "64MiB", "memory cap of each Lua state (one per thread)"},
    {"reload", CUSHIM_OPT_BOOL, "true", "watch the file and apply edits while the program runs"},
    {"reload_ms", CUSHIM_OPT_INT, "250", "how often the file is checked, milliseconds"},
    {"error_rate", CUSHIM_OPT_INT, "10", "hook errors logged per second at most (the rest are counted)"},
    {"opt", CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT, NULL, "KEY=VALUE for the policy (cushim.options.KEY)"},
    {"report", CUSHIM_OPT_STRING, NULL, "file for print() and cushim.report (default stderr)"},
    {"lualib", CUSHIM_OPT_STRING, NULL, "liblua5.4.so.0 to use (default: the system's, then the plugin's dir)"},
    {"isolate", CUSHIM_OPT_STRING, "auto", "how liblua is kept private: auto, deepbind, namespace, plain"},
    {NULL, 0, NULL, NULL},
};

/* ------------------------------------------------------------------------ */
/* Options and the plugin definition                                        */
/* ------------------------------------------------------------------------ */
static int lp_parse_allow(const char *s, uint32_t *out, char *err, size_t errlen)
{
    static const struct { const char *w; uint32_t bit; } words[] = {
        {"os", LP_ALLOW_OS}, {"io", LP_ALLOW_IO}, {"debug", LP_ALLOW_DEBUG}, {"require", LP_ALLOW_REQUIRE},
        {"cmodules", LP_ALLOW_CMODULES | LP_ALLOW_REQUIRE}, {"bytecode", LP_ALLOW_BYTECODE},
    };
    *out = 0;
    while (s != NULL && *s != '\0') {
        size_t n = strcspn(s, "+ ");
        int found = 0;
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (n == strlen(words[i].w) && !strncmp(s, words[i].w, n)) {
                *out |= words[i].bit;
                found = 1;
            }
        if (n > 0 && !found) {
            snprintf(err, errlen, "allow=: unknown word '%.*s' (os io debug require cmodules bytecode, joined by '+')",
                     (int)n, s);
            return -1;
        }
        s += n;
        while (*s == '+' || *s == ' ')
            s++;
    }
    return 0;
}

static int lp_read_options(char *err, size_t errlen)
{
    const cushim_host *h = lp_eng.host;
    cushim_plugin *self = lp_eng.self;
    lp_opts *o = &lp_eng.o;
    const char *fail = h->opt_string(self, "fail");
    o->script = strdup(h->opt_string(self, "script"));
    if (o->script == NULL)
        return -1;
    if (!strcmp(fail, "open"))
        o->fail_open = 1;
    else if (strcmp(fail, "closed")) {
        snprintf(err, errlen, "fail=%s: expected closed or open", fail);
        return -1;
    }
    if (lp_parse_allow(h->opt_string(self, "allow"), &o->allow, err, errlen) != 0)
        return -1;
    o->budget = h->opt_int(self, "budget");
    o->mem = h->opt_bytes(self, "mem");
    o->reload = h->opt_bool(self, "reload");
    o->reload_ms = h->opt_int(self, "reload_ms");
    o->error_rate = h->opt_int(self, "error_rate");
    if (o->budget < 1000 || o->budget > 100000000 || o->mem < (256u << 10) || o->reload_ms < 1 ||
        o->reload_ms > 60000 || o->error_rate < 0) {
        snprintf(err, errlen, "budget must be 1000..100000000, mem >= 256K, reload_ms 1..60000, error_rate >= 0");
        return -1;
    }
    o->nopts = h->opt_count(self, "opt");
    o->keys = calloc(o->nopts + 1, sizeof *o->keys);
    o->values = calloc(o->nopts + 1, sizeof *o->values);
    if (o->keys == NULL || o->values == NULL)
        return -1;
    for (uint32_t i = 0; i < o->nopts; i++) {
        const char *kv = h->opt_string_at(self, "opt", i);
        const char *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv) {
            snprintf(err, errlen, "opt=%s: expected opt=KEY=VALUE", kv);
            return -1;
        }
        o->keys[i] = strndup(kv, (size_t)(eq - kv));
        o->values[i] = strdup(eq + 1);
        if (o->keys[i] == NULL || o->values[i] == NULL)
            return -1;
    }
    return 0;
}

static int lp_init(const cushim_host *h, cushim_plugin *self)
{
    char err[2048] = "out of memory";
    uint32_t kind;
    lp_gen *g;
    lp_eng.host = h;
    lp_eng.self = self;
    lp_eng.id_limit = h->api_id_limit();
    lp_gen_set_hooks(lp_pre, lp_post);   /* what each generation registers with the host (lp_publish) */
    if (lp_read_options(err, sizeof err) != 0 || lp_values_init() != 0) {
        h->log(self, CUSHIM_LOG_ERROR, "%s", err);
        return -1;
    }
    if (h->result_by_name("CUDA_ERROR_UNKNOWN", &kind, &lp_eng.fail_cu) != CUSHIM_OK ||
        h->result_by_name("cudaErrorUnknown", &kind, &lp_eng.fail_rt) != CUSHIM_OK) {
        lp_eng.fail_cu = 999;
        lp_eng.fail_rt = 999;
    }
    if (lp_lua_open(h->opt_string(self, "lualib"), h->opt_string(self, "isolate"), &lp_eng.lib, err,
                    sizeof err) != 0) {
        h->log(self, CUSHIM_LOG_ERROR, "%s", err);
        return -1;
    }
    h->log(self, CUSHIM_LOG_DEBUG, "Lua from %s (%s)", lp_eng.lib.path, lp_eng.lib.isolation);
    if (lp_report_init(h->opt_string(self, "report")) != 0)
        return -1;
    if (h->tls_create(self, lp_hooks_tls_free, &lp_eng.tls_key) != CUSHIM_OK) {
        h->log(self, CUSHIM_LOG_ERROR, "no per-thread storage left in the host");
        return -1;
    }
    g = lp_gen_load(err, sizeof err);
    if (g == NULL || lp_publish(g) != 0) {
        if (g != NULL)
            lp_gen_release(g);
        else
            h->log(self, CUSHIM_LOG_ERROR, "%s", err);
        if (!lp_eng.o.fail_open) {
            h->log(self, CUSHIM_LOG_ERROR, "the policy did not load and fail=closed (fail=open lets calls pass)");
            return -1;
        }
        h->log(self, CUSHIM_LOG_WARN, "fail=open: calls pass until %s loads", lp_eng.o.script);
    } else {
        h->log(self, CUSHIM_LOG_INFO, "%s: generation %llu loaded (%u hooks)", lp_eng.o.script,
               (unsigned long long)g->number, g->nhooks);
    }
    lp_watch_start();
    return 0;
}

static void lp_flush(cushim_plugin *self)
{
    lp_thread *t;
    (void)self;
    lp_watch_stop();
    t = lp_thread_get();
    if (t != NULL && lp_gen_current() != NULL) {
        if (t->gen != lp_gen_current() || t->L == NULL)
            lp_thread_switch(t);
        if (t->L != NULL && !t->broken)
            lp_state_run_exit(t);
    }
    if (atomic_load(&lp_eng.errors) > 0)
        lp_eng.host->log(lp_eng.self, CUSHIM_LOG_WARN, "%lld hook errors (%lld logged)",
                         (long long)atomic_load(&lp_eng.errors), (long long)atomic_load(&lp_eng.errors_logged));
}

static void lp_fork_child(cushim_plugin *self)
{
    (void)self;
    lp_gen_fork_child();
    lp_report_fork_child();
    lp_shared_fork_child();
    lp_threads_fork_child();
    lp_watch_fork_child();
}

static const cushim_plugin_def lp_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "lua",
    .version = "0.1.0",
    .description = "CUDA call policies in Lua 5.4, reloaded when the file changes",
    .options = lp_options,
    .init = lp_init,
    .flush = lp_flush,
    .fork_child = lp_fork_child,
};
CUSHIM_PLUGIN(lp_def)
