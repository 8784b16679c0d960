/*
 * callcount.c - an example cushim plugin in C (docs/plugin-sdk.md walks through it).
 *
 * Counts the calls of the APIs a selector picks and prints the counts when the process exits; and
 * denies the calls of other selectors: those calls never reach the driver, the caller gets an error.
 *
 *   cushim run --plugin=/path/to/callcount.so:select=cat:launch+alloc,deny=cuStreamCreate,top=5 -- ./app
 *
 * It uses only what the SDK's headers declare and reaches the shim only through the host table given to
 * init, so the same file works with the preloaded shim and with the drop-in libcuda.so.1.
 */
#define _POSIX_C_SOURCE 200809L   /* open_memstream, and what <cushim/cushim_io.h> needs (this is strict C11) */
#include <cushim/cushim.h>
#include <cushim/cushim_io.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const cushim_option callcount_options[] = {
    { "select", CUSHIM_OPT_STRING, "all", "the APIs to count (a selector, e.g. cat:launch+alloc)" },
    { "deny", CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT, NULL,
      "the APIs whose calls are not made but fail with 'error' (a selector)" },
    { "error", CUSHIM_OPT_STRING, NULL,
      "what a denied call returns (default CUDA_ERROR_NOT_PERMITTED, or cudaErrorNotPermitted for runtime APIs)" },
    { "top", CUSHIM_OPT_INT, "0", "report only the N most called APIs (0: all)" },
    { "output", CUSHIM_OPT_STRING, NULL,
      "append the report to this file (a forked child: FILE.<pid>), not stderr; nothing if nothing was seen" },
    { NULL, 0, NULL, NULL },
};

/* The plugin's state, allocated in init and attached to its record (plugin_set_data): a hook reaches it
   through 'user', flush and fork_child through host->plugin_data(self). */
typedef struct callcount {
    const cushim_host *host;
    cushim_plugin *self;
    uint32_t limit;              /* api_id_limit(): counters are indexed by API id */
    _Atomic uint64_t *calls;
    _Atomic uint64_t denied;
    int32_t deny_code[2];        /* by ret_kind - 1: CUSHIM_RET_CURESULT, CUSHIM_RET_CUDAERROR */
    int64_t top;
    const char *output;          /* the host keeps option strings alive for the plugin's lifetime */
    int child;                   /* in a forked child: report to OUTPUT.<pid> */
} callcount;

/* flush and fork_child get only 'self'; the host table is the same for every plugin. */
static const cushim_host *callcount_host;

/* Hooks run on any thread, concurrently: counters are atomics, nothing is locked. */
static int count_pre(cushim_call *call, void *user, uint64_t *slot)
{
    callcount *cc = user;
    (void)slot;
    if (call->api_id < cc->limit)
        atomic_fetch_add_explicit(&cc->calls[call->api_id], 1, memory_order_relaxed);
    return CUSHIM_CONTINUE;
}

static int deny_pre(cushim_call *call, void *user, uint64_t *slot)
{
    callcount *cc = user;
    (void)slot;
    atomic_fetch_add_explicit(&cc->denied, 1, memory_order_relaxed);
    /* Only APIs returning CUresult or cudaError_t are hooked (checked in init). */
    return cushim_call_skip(call, cc->deny_code[call->info->ret_kind - 1]);
}

static const char *sdk_error(int rc)
{
    switch (rc) {
    case CUSHIM_EINVAL: return "malformed";
    case CUSHIM_ENOMATCH: return "matches no API of this build";
    case CUSHIM_ENOMEM: return "out of memory";
    case CUSHIM_ELIMIT: return "too many hooks on one API";
    default: return "failed";
    }
}

/* The codes a denied call returns: 'error' for the APIs of its kind, the defaults for the others. */
static int resolve_errors(callcount *cc, const char **given_name, uint32_t *given_kind)
{
    const cushim_host *h = cc->host;
    static const char *const defaults[] = { "CUDA_ERROR_NOT_PERMITTED", "cudaErrorNotPermitted" };
    uint32_t kind;
    int32_t code;
    for (int i = 0; i < 2; i++) {
        if (h->result_by_name(defaults[i], &kind, &code) != CUSHIM_OK || kind != (uint32_t)i + 1) {
            h->log(cc->self, CUSHIM_LOG_ERROR, "the host does not know %s", defaults[i]);
            return -1;
        }
        cc->deny_code[i] = code;
    }
    *given_name = h->opt_string(cc->self, "error");
    *given_kind = 0;
    if (*given_name != NULL) {
        if (h->result_by_name(*given_name, &kind, &code) != CUSHIM_OK ||
            (kind != CUSHIM_RET_CURESULT && kind != CUSHIM_RET_CUDAERROR)) {
            h->log(cc->self, CUSHIM_LOG_ERROR, "error=%s: not a CUDA driver or runtime error name", *given_name);
            return -1;
        }
        cc->deny_code[kind - 1] = code;
        *given_kind = kind;
    }
    return 0;
}

/* Every API 'sel' picks must return an error code, of the kind of 'error=' when that was given. */
static int check_deniable(callcount *cc, const char *sel, const char *err_name, uint32_t err_kind)
{
    const cushim_host *h = cc->host;
    char why[256] = "";
    int n = h->api_select(sel, NULL, 0, why, sizeof why);
    if (n <= 0) {
        h->log(cc->self, CUSHIM_LOG_ERROR, "deny=%s: %s%s%s", sel, n == 0 ? "matches no API" : sdk_error(n),
               why[0] ? ": " : "", why);
        return -1;
    }
    uint32_t *ids = calloc((size_t)n, sizeof *ids);
    if (ids == NULL)
        return -1;
    int m = h->api_select(sel, ids, (uint32_t)n, NULL, 0), rc = 0;
    for (int i = 0; i < m && i < n && rc == 0; i++) {
        const cushim_api_info *api = h->api_by_id(ids[i]);
        if (api == NULL)
            continue;
        if (api->ret_kind != CUSHIM_RET_CURESULT && api->ret_kind != CUSHIM_RET_CUDAERROR) {
            h->log(cc->self, CUSHIM_LOG_ERROR, "deny=%s: %s returns no error code, it cannot be denied", sel,
                   api->name);
            rc = -1;
        } else if (err_kind != 0 && api->ret_kind != err_kind) {
            h->log(cc->self, CUSHIM_LOG_ERROR, "deny=%s: %s is a %s API, error=%s is not one of its codes", sel,
                   api->name, api->library == CUSHIM_LIB_DRIVER ? "driver" : "runtime", err_name);
            rc = -1;
        }
    }
    free(ids);
    return rc;
}

static int callcount_init(const cushim_host *host, cushim_plugin *self)
{
    callcount_host = host;
    callcount *cc = calloc(1, sizeof *cc);
    if (cc == NULL)
        return -1;
    cc->host = host;
    cc->self = self;
    cc->limit = host->api_id_limit();
    cc->calls = calloc(cc->limit, sizeof *cc->calls);
    cc->top = host->opt_int(self, "top");
    cc->output = host->opt_string(self, "output");
    /* The option came from the environment: in a setuid program it must not name a file we write. */
    if (cc->output != NULL && host->secure()) {
        host->log(self, CUSHIM_LOG_WARN, "secure-execution mode: output=%s ignored, reporting to stderr",
                  cc->output);
        cc->output = NULL;
    }
    const char *err_name;
    uint32_t err_kind;
    if (cc->calls == NULL || cc->top < 0 || resolve_errors(cc, &err_name, &err_kind) != 0) {
        if (cc->top < 0)
            host->log(self, CUSHIM_LOG_ERROR, "top=%lld: must be 0 or more", (long long)cc->top);
        goto fail;
    }
    uint32_t ndeny = host->opt_count(self, "deny");
    for (uint32_t i = 0; i < ndeny; i++)
        if (check_deniable(cc, host->opt_string_at(self, "deny", i), err_name, err_kind) != 0)
            goto fail;

    host->plugin_set_data(self, cc);
    /* Counting runs first (lowest priority value), so a denied call is counted too. Once a hook is
       registered it may run on another thread at once: 'cc' is complete before the first hooks_add. */
    uint64_t *groups = calloc(1 + (size_t)ndeny, sizeof *groups);
    uint32_t ngroups = 0;
    if (groups == NULL)
        goto fail;
    cushim_hook_spec spec = { .size = sizeof spec, .select = host->opt_string(self, "select"),
                              .priority = -100, .pre = count_pre, .user = cc };
    int rc = host->hooks_add(self, &spec, &groups[0]);
    if (rc != CUSHIM_OK) {
        host->log(self, CUSHIM_LOG_ERROR, "select=%s: %s", spec.select, sdk_error(rc));
        goto fail_registered;
    }
    for (ngroups = 1; ngroups <= ndeny; ngroups++) {
        cushim_hook_spec d = { .size = sizeof d, .select = host->opt_string_at(self, "deny", ngroups - 1),
                               .priority = -50, .pre = deny_pre, .user = cc };
        rc = host->hooks_add(self, &d, &groups[ngroups]);
        if (rc != CUSHIM_OK) {
            host->log(self, CUSHIM_LOG_ERROR, "deny=%s: %s", d.select, sdk_error(rc));
            goto fail_registered;
        }
    }
    free(groups);   /* the hooks stay until exit: the host stops them before flush */
    host->log(self, CUSHIM_LOG_INFO, "counting '%s', %u deny rule(s)", spec.select, (unsigned)ndeny);
    return 0;

fail_registered:
    /* A hook that already ran may still be running on another thread: remove ours and wait for them
       (hooks_sync) before freeing what they use. */
    for (uint32_t i = 0; i < ngroups; i++)
        host->hooks_remove(self, groups[i]);
    if (ngroups > 0)
        host->hooks_sync();
    free(groups);
fail:
    host->plugin_set_data(self, NULL);
    free(cc->calls);
    free(cc);
    return -1;
}

typedef struct { uint32_t id; uint64_t n; } api_count;

static int by_count_desc(const void *a, const void *b)
{
    const api_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* At exit: the hooks will not run again, so the counters are final. */
static void callcount_flush(cushim_plugin *self)
{
    const cushim_host *h = callcount_host;
    callcount *cc = h->plugin_data(self);
    if (cc == NULL)
        return;
    api_count *v = calloc(cc->limit ? cc->limit : 1, sizeof *v);
    if (v == NULL)
        return;
    uint32_t nv = 0;
    uint64_t total = 0;
    for (uint32_t id = 0; id < cc->limit; id++) {
        uint64_t n = atomic_load_explicit(&cc->calls[id], memory_order_relaxed);
        if (n != 0) {
            v[nv].id = id;
            v[nv++].n = n;
            total += n;
        }
    }
    uint64_t denied = atomic_load(&cc->denied);
    if (total == 0 && denied == 0) {
        /* Like CUSHIM_COUNTS: a process that saw nothing (a shell or a wrapper in the program's process
           tree, which inherit CUSHIM_PLUGINS) writes nothing. */
        free(v);
        return;
    }
    qsort(v, nv, sizeof *v, by_count_desc);

    /* The report is formatted in memory and written with cushim_write_all: this runs at exit on the program's
       thread, where a write past a file size limit (ulimit -f) or into a pipe with no reader must fail, not end
       the program by SIGXFSZ or SIGPIPE (cushim_io.h). */
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (m == NULL) {
        free(v);
        return;
    }
    fprintf(m, "callcount: pid %ld: %llu calls of %u APIs, %llu denied\n", (long)getpid(),
            (unsigned long long)total, (unsigned)nv, (unsigned long long)denied);
    for (uint32_t i = 0; i < nv && (cc->top == 0 || i < (uint64_t)cc->top); i++) {
        const cushim_api_info *api = h->api_by_id(v[i].id);
        fprintf(m, "callcount: %s %llu\n", api ? api->name : "?", (unsigned long long)v[i].n);
    }
    fclose(m);
    free(v);

    int fd = 2;
    char path[4096] = "stderr";
    if (cc->output != NULL) {
        if (cc->child)
            snprintf(path, sizeof path, "%s.%ld", cc->output, (long)getpid());
        else
            snprintf(path, sizeof path, "%s", cc->output);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            h->log(self, CUSHIM_LOG_WARN, "cannot open %s (%s), reporting to stderr", path, strerror(errno));
            fd = 2;
            snprintf(path, sizeof path, "stderr");
        }
    }
    if (text != NULL && cushim_write_all(fd, text, tlen) < tlen)
        h->log(self, CUSHIM_LOG_WARN, "writing the report to %s failed: %s", path, strerror(errno));
    if (fd != 2)
        close(fd);
    free(text);
}

/* The child of fork() reports only its own calls, to its own file. */
static void callcount_fork_child(cushim_plugin *self)
{
    callcount *cc = callcount_host->plugin_data(self);
    if (cc == NULL)
        return;
    for (uint32_t id = 0; id < cc->limit; id++)
        atomic_store_explicit(&cc->calls[id], 0, memory_order_relaxed);
    atomic_store_explicit(&cc->denied, 0, memory_order_relaxed);
    cc->child = 1;
}

static const cushim_plugin_def callcount_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "callcount",
    .version = "1.0.0",
    .description = "counts the calls of selected APIs and denies others (SDK example in C)",
    .options = callcount_options,
    .init = callcount_init,
    .flush = callcount_flush,
    .fork_child = callcount_fork_child,
};

CUSHIM_PLUGIN(callcount_def)
