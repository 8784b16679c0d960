/*
 * faultinject.c - the faultinject plugin: make chosen CUDA calls fail on
 * purpose, reproducibly (docs/plugins/faultinject.md).
 *
 *   CUSHIM_PLUGINS='faultinject:rule=cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2'
 *
 * Options: rule=SELECTOR:ERROR[:WHEN] (repeatable, required), seed=N,
 * summary=BOOL. At init every rule is parsed (rules.c), its error name and
 * selector resolved through the host table, and its APIs narrowed to those
 * that return the error's type. One pre hook on the union of the rules' APIs
 * then counts each call once for every rule that selects it (one atomic
 * counter per rule) and skips the real call with the error of the first rule
 * that fires, leaving the output parameters untouched. Built on the public
 * SDK headers only: it reaches the shim through the host table alone.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim.h>

#include "rules.h"

/* After the pre hooks of other plugins at the default priority 0: a tracer or
   a quota plugin still sees the call, and sees it fail with our error. */
#define FI_PRIORITY 1000

typedef struct fi_rule {
    char *text;                 /* as given: messages, summary, random stream identity */
    fi_rule_syntax s;
    uint32_t index;             /* 1-based, in the order given                         */
    uint32_t kind;              /* CUSHIM_RET_* of a named error; 0 for a number        */
    int32_t code;               /* the value a faulted call returns                     */
    uint64_t hash;              /* fi_rule_hash(text)                                   */
    uint8_t *ids;               /* bit set over API ids: the APIs this rule applies to */
    uint32_t napis;
    _Atomic uint64_t matched;   /* calls counted (the index of the last one)            */
    _Atomic uint64_t injected;
} fi_rule;

typedef struct fi_state {
    cushim_plugin *self;
    fi_rule *rules;
    uint32_t nrules;
    uint32_t id_limit;
    uint64_t seed;
    int summary;
    int timed;                  /* a rule has window=: read the clock per call          */
    double t0;                  /* process start, seconds of CLOCK_BOOTTIME            */
    uint64_t *groups;           /* hook groups registered                               */
    uint32_t ngroups;
} fi_state;

/* One host serves the process; flush and fork_child get only 'self'. */
static const cushim_host *fi_host;

static double fi_boottime(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The kernel's start time of this process (field 22 of /proc/self/stat, clock
   ticks since boot) in seconds of CLOCK_BOOTTIME; -1 if unreadable. */
static int fi_process_start(double *out)
{
    char buf[1024];
    size_t n = 0;
    ssize_t r;
    const char *p;
    unsigned long long ticks = 0;
    long hz = sysconf(_SC_CLK_TCK);
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || hz <= 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    buf[n] = '\0';
    p = strrchr(buf, ')');   /* the command name may hold blanks and ')' */
    if (p == NULL)
        return -1;
    for (int field = 2; field < 22; p++) {   /* ')' ends field 2 */
        if (*p == '\0')
            return -1;
        if (*p == ' ')
            field++;
    }
    if (*p < '0' || *p > '9')
        return -1;
    while (*p >= '0' && *p <= '9')
        ticks = ticks * 10 + (unsigned long long)(*p++ - '0');
    *out = (double)ticks / (double)hz;
    return 0;
}

static void fi_origin(fi_state *st)
{
    if (fi_process_start(&st->t0) != 0) {
        st->t0 = fi_boottime();
        if (st->timed)
            fi_host->log(st->self, CUSHIM_LOG_WARN,
                         "cannot read the process start time from /proc/self/stat: window= counts from now");
    }
}

static int fi_has(const fi_rule *r, uint32_t id, uint32_t limit)
{
    return id < limit && ((r->ids[id >> 3] >> (id & 7)) & 1);
}

/* An enclosing hooked call this rule selects already counted this call (a
   runtime API selected with the driver call it makes, or two variants). */
static int fi_nested(const fi_state *st, const fi_rule *r, const cushim_call *call)
{
    const cushim_call *p = CUSHIM_HAS(call, cushim_call, parent) ? call->parent : NULL;
    for (; p != NULL; p = CUSHIM_HAS(p, cushim_call, parent) ? p->parent : NULL)
        if (fi_has(r, p->api_id, st->id_limit))
            return 1;
    return 0;
}

static int fi_pre(cushim_call *call, void *user, uint64_t *slot)
{
    fi_state *st = user;
    fi_rule *hit = NULL;
    uint64_t hit_n = 0;
    double t = st->timed ? fi_boottime() - st->t0 : 0;
    (void)slot;
    for (uint32_t i = 0; i < st->nrules; i++) {
        fi_rule *r = &st->rules[i];
        uint64_t n;
        if (!fi_has(r, call->api_id, st->id_limit) || fi_nested(st, r, call))
            continue;
        /* every rule that selects the call counts it; the first that fires wins */
        n = atomic_fetch_add_explicit(&r->matched, 1, memory_order_relaxed) + 1;
        if (hit == NULL && fi_when_fires(&r->s.when, n, t, st->seed, r->hash)) {
            hit = r;
            hit_n = n;
        }
    }
    if (hit == NULL)
        return CUSHIM_CONTINUE;
    atomic_fetch_add_explicit(&hit->injected, 1, memory_order_relaxed);
    if (fi_host->log_enabled(CUSHIM_LOG_INFO)) {
        const cushim_api_info *info = call->info ? call->info : fi_host->api_by_id(call->api_id);
        const char *name = info ? fi_host->result_name(info->ret_kind, hit->code) : NULL;
        fi_host->log(st->self, CUSHIM_LOG_INFO, "%s: injected %s (%d): rule %u, its matching call %llu",
                     info ? info->name : "?", name ? name : "an error", (int)hit->code, hit->index,
                     (unsigned long long)hit_n);
    }
    /* the real call is skipped: its output parameters stay as the caller left them */
    return cushim_call_skip(call, hit->code);
}

/* A status type (cushim_ret_is_status), for messages: its name, the error it is, the names to give. */
static const char *fi_kind_type(uint32_t kind)
{
    const char *t = cushim_ret_type_name(kind);
    return t != NULL ? t : "another error type";
}

static const char *fi_kind_names(uint32_t kind)
{
    switch (kind) {
    case CUSHIM_RET_CURESULT: return "a CUDA_ERROR_* name";
    case CUSHIM_RET_CUDAERROR: return "a cudaError* name";
    case CUSHIM_RET_NVMLRETURN: return "an NVML_ERROR_* name";
    case CUSHIM_RET_NCCLRESULT: return "an nccl* name";
    case CUSHIM_RET_CUBLASSTATUS: return "a CUBLAS_STATUS_* name";
    default: return "a name of their type";
    }
}

/* Error name or number → kind and code. */
static int fi_resolve_error(fi_rule *r, char *err, size_t errlen)
{
    uint32_t kind = 0;
    int32_t code = 0;
    if (r->s.error_is_number) {
        r->kind = 0;   /* a number is used as is on driver and runtime APIs alike */
        r->code = r->s.error_number;
        return 0;
    }
    if (fi_host->result_by_name(r->s.error, &kind, &code) != CUSHIM_OK || !cushim_ret_is_status(kind)) {
        static const char *const when_words[] = {"nth", "every", "after", "p", "window"};
        const char *hint = "";
        for (size_t i = 0; i < sizeof when_words / sizeof when_words[0]; i++)
            if (!strcmp(r->s.error, when_words[i]))
                hint = "; a WHEN condition takes a value, like nth=2";
        snprintf(err, errlen, "unknown error '%s': not a CUresult, cudaError_t, nvmlReturn_t, ncclResult_t or "
                 "cublasStatus_t name of CUDA %u.%u (like CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation or "
                 "NVML_ERROR_UNKNOWN), nor a number%s",
                 r->s.error, fi_host->cuda_version / 1000, fi_host->cuda_version % 1000 / 10, hint);
        return -1;
    }
    if (code == 0) {
        snprintf(err, errlen, "'%s' is success: a skipped call reporting success would leave its outputs unset",
                 r->s.error);
        return -1;
    }
    r->kind = kind;
    r->code = code;
    return 0;
}

/* Selector → the APIs the rule applies to: those the selector matches that
   return the error's type (any error type for a number). */
static int fi_resolve_apis(fi_state *st, fi_rule *r, char *err, size_t errlen)
{
    char serr[200] = "";
    uint32_t *ids = malloc((size_t)st->id_limit * sizeof *ids);
    uint32_t other = 0, noerr = 0, other_kind = 0;
    int n;
    r->ids = calloc(((size_t)st->id_limit + 7) / 8, 1);
    if (ids == NULL || r->ids == NULL) {
        free(ids);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    n = fi_host->api_select(r->s.selector, ids, st->id_limit, serr, sizeof serr);
    if (n == 0 || n == CUSHIM_ENOMATCH) {
        snprintf(err, errlen, "selector '%s' matches no API of this build (CUDA %u.%u)", r->s.selector,
                 fi_host->cuda_version / 1000, fi_host->cuda_version % 1000 / 10);
        free(ids);
        return -1;
    }
    if (n < 0) {
        snprintf(err, errlen, "bad selector '%s': %s", r->s.selector, serr[0] ? serr : "malformed");
        free(ids);
        return -1;
    }
    if ((uint32_t)n > st->id_limit)
        n = (int)st->id_limit;
    for (int k = 0; k < n; k++) {
        const cushim_api_info *info = fi_host->api_by_id(ids[k]);
        if (info == NULL || ids[k] >= st->id_limit)
            continue;
        if (!cushim_ret_is_status(info->ret_kind)) {
            noerr++;
        } else if (r->kind != 0 && info->ret_kind != r->kind) {
            other_kind = other == 0 || other_kind == info->ret_kind ? info->ret_kind : UINT32_MAX;   /* MAX: mixed */
            other++;
        } else {
            r->ids[ids[k] >> 3] |= (uint8_t)(1u << (ids[k] & 7));
            r->napis++;
        }
    }
    free(ids);
    if (r->napis == 0 && other > 0) {
        snprintf(err, errlen, "%s is %s, but selector '%s' matches only APIs returning %s: give %s or a number",
                 r->s.error, cushim_ret_error_text(r->kind), r->s.selector, fi_kind_type(other_kind),
                 fi_kind_names(other_kind));
        return -1;
    }
    if (r->napis == 0) {
        snprintf(err, errlen, "selector '%s' matches only APIs that return no error code", r->s.selector);
        return -1;
    }
    if (other > 0 || noerr > 0)
        fi_host->log(st->self, CUSHIM_LOG_INFO,
                     "rule %u '%s': applies to %u APIs; left out: %u returning %s, %u returning no error code",
                     r->index, r->text, r->napis, other, other > 0 ? fi_kind_type(other_kind) : "another error type",
                     noerr);
    return 0;
}

static int fi_rule_setup(fi_state *st, fi_rule *r, uint32_t index, const char *text, char *err, size_t errlen)
{
    r->index = index;
    atomic_init(&r->matched, 0);
    atomic_init(&r->injected, 0);
    if (text == NULL || (r->text = strdup(text)) == NULL) {
        snprintf(err, errlen, "cannot read the option");
        return -1;
    }
    if (fi_rule_parse(text, strlen(text), &r->s, err, errlen) != 0)
        return -1;
    r->hash = fi_rule_hash(text);
    if (fi_resolve_error(r, err, errlen) != 0)
        return -1;
    return fi_resolve_apis(st, r, err, errlen);
}

static void fi_free(fi_state *st)
{
    if (st == NULL)
        return;
    for (uint32_t i = 0; i < st->nrules; i++) {
        free(st->rules[i].text);
        free(st->rules[i].ids);
        fi_rule_syntax_free(&st->rules[i].s);
    }
    free(st->rules);
    free(st->groups);
    free(st);
}

/* One hook per API of the union of the rules. All checks are done before the
   first registration, so a failure here is the host's (a full chain). */
static int fi_register(fi_state *st)
{
    uint32_t total = 0;
    st->groups = calloc(st->id_limit, sizeof *st->groups);
    if (st->groups == NULL)
        return CUSHIM_ENOMEM;
    for (uint32_t id = 0; id < st->id_limit; id++) {
        cushim_hook_spec spec;
        int any = 0, rc;
        for (uint32_t i = 0; i < st->nrules && !any; i++)
            any = fi_has(&st->rules[i], id, st->id_limit);
        if (!any)
            continue;
        memset(&spec, 0, sizeof spec);
        spec.size = sizeof spec;
        spec.select = NULL;
        spec.api_id = id;
        spec.priority = FI_PRIORITY;
        spec.pre = fi_pre;
        spec.user = st;
        rc = fi_host->hooks_add(st->self, &spec, &st->groups[st->ngroups]);
        if (rc != CUSHIM_OK) {
            const cushim_api_info *info = fi_host->api_by_id(id);
            fi_host->log(st->self, CUSHIM_LOG_ERROR, "cannot hook %s (error %d)", info ? info->name : "?", rc);
            return rc;
        }
        st->ngroups++;
        total++;
    }
    return total ? CUSHIM_OK : CUSHIM_EINVAL;
}

static int fi_init(const cushim_host *host, cushim_plugin *self)
{
    char err[FI_ERRLEN + 512];
    fi_state *st;
    uint32_t nrules;
    if (CUSHIM_ABI_MAJOR_OF(host->abi_version) != CUSHIM_ABI_MAJOR || !CUSHIM_HOST_HAS(host, plugin_data))
        return -1;   /* the host refuses such a pairing before init; never reached */
    fi_host = host;
    nrules = host->opt_count(self, "rule");
    if (nrules == 0) {
        host->log(self, CUSHIM_LOG_ERROR, "no rule given: faultinject:rule=SELECTOR:ERROR[:WHEN]");
        return -1;
    }
    st = calloc(1, sizeof *st);
    if (st == NULL || (st->rules = calloc(nrules, sizeof *st->rules)) == NULL) {
        free(st);
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        return -1;
    }
    st->self = self;
    st->seed = fi_seed(host->opt_int(self, "seed"));
    st->summary = host->opt_bool(self, "summary");
    st->id_limit = host->api_id_limit();
    for (uint32_t i = 0; i < nrules; i++) {
        const char *text = host->opt_string_at(self, "rule", i);
        st->nrules = i + 1;
        err[0] = '\0';
        if (fi_rule_setup(st, &st->rules[i], i + 1, text, err, sizeof err) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "rule %u '%s': %s", i + 1, text ? text : "", err);
            fi_free(st);
            return -1;
        }
        if (st->rules[i].s.when.kinds & FI_W_WINDOW)
            st->timed = 1;
    }
    fi_origin(st);
    if (fi_register(st) != CUSHIM_OK) {
        /* our hooks may already run on other threads: take them out and wait
           before freeing what they read; if we cannot wait, keep the memory */
        for (uint32_t g = 0; g < st->ngroups; g++)
            host->hooks_remove(self, st->groups[g]);
        if (host->hooks_sync() == CUSHIM_OK)
            fi_free(st);
        return -1;
    }
    host->plugin_set_data(self, st);
    host->log(self, CUSHIM_LOG_INFO, "%u rule(s) on %u API(s), seed %#llx", st->nrules, st->ngroups,
              (unsigned long long)st->seed);
    return 0;
}

/* At exit: the summary, at warn so that the default log level shows it. */
static void fi_flush(cushim_plugin *self)
{
    fi_state *st = fi_host ? fi_host->plugin_data(self) : NULL;
    if (st == NULL || !st->summary)
        return;
    for (uint32_t i = 0; i < st->nrules; i++) {
        const fi_rule *r = &st->rules[i];
        unsigned long long m = atomic_load(&r->matched), f = atomic_load(&r->injected);
        fi_host->log(self, CUSHIM_LOG_WARN, "rule %u '%s': %llu call%s matched, %llu fault%s injected", r->index,
                     r->text, m, m == 1 ? "" : "s", f, f == 1 ? "" : "s");
    }
}

/* A child process counts its own calls from 1, and its windows from its own start. */
static void fi_fork_child(cushim_plugin *self)
{
    fi_state *st = fi_host ? fi_host->plugin_data(self) : NULL;
    if (st == NULL)
        return;
    for (uint32_t i = 0; i < st->nrules; i++) {
        atomic_store(&st->rules[i].matched, 0);
        atomic_store(&st->rules[i].injected, 0);
    }
    fi_origin(st);
}

static const cushim_option fi_options[] = {
    {"rule", CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT | CUSHIM_OPT_REQUIRED, NULL,
     "SELECTOR:ERROR[:WHEN], e.g. cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2 (repeatable)"},
    {"seed", CUSHIM_OPT_INT, "0", "seed of the p= decisions; 0 means the fixed default seed"},
    {"summary", CUSHIM_OPT_BOOL, "true", "log one line per rule at exit: calls matched, faults injected"},
    {NULL, 0, NULL, NULL},
};

static const cushim_plugin_def fi_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "faultinject",
    .version = "0.1.0",
    .description = "make chosen CUDA calls fail on purpose, reproducibly",
    .options = fi_options,
    .init = fi_init,
    .flush = fi_flush,
    .fork_child = fi_fork_child,
};

CUSHIM_PLUGIN(fi_def)
