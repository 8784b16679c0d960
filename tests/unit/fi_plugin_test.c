/*
 * fi_plugin_test.c - the faultinject plugin (faultinject.c + rules.c) under a small
 * host written here: a table of eight APIs, the selector words the plugin relies on,
 * the result names of generated/cuda-13.0/cushim_results.inc, options, hooks and a
 * captured log. It checks what the plugin does with the host table, independently of
 * the real loader: how rules resolve (and why they fail, with one message each), one
 * hook per API, counting once per rule (nested calls, several rules), first rule wins,
 * the summary lines, reproducible p=, fork_child, and exact counts under 8 threads.
 * The same plugin loaded by libcushim.so against the fake driver is tested in
 * tests/e2e (faultinject.cmake).
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cushim/cushim.h>

#include "rules.h"

const cushim_plugin_def *cushim_plugin_entry(void);

/* ---- the test host ---------------------------------------------------------------- */

struct cushim_plugin {
    void *data;
};

#define MK_ID_LIMIT 11
static const cushim_api_info mk_apis[] = {
    {.id = 1, .name = "cuInit", .base_name = "cuInit", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_INIT},
    {.id = 2, .name = "cuMemAlloc", .base_name = "cuMemAlloc", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_ALLOC},
    {.id = 3, .name = "cuMemAlloc_v2", .base_name = "cuMemAlloc", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_ALLOC},
    {.id = 4, .name = "cuMemFree_v2", .base_name = "cuMemFree", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_FREE},
    {.id = 5, .name = "cuMemAllocHost_v2", .base_name = "cuMemAllocHost", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_ALLOC},
    {.id = 6, .name = "cudaMalloc", .base_name = "cudaMalloc", .library = CUSHIM_LIB_RUNTIME,
     .ret_kind = CUSHIM_RET_CUDAERROR, .categories = CUSHIM_CAT_ALLOC},
    {.id = 7, .name = "cudaGetErrorName", .base_name = "cudaGetErrorName", .library = CUSHIM_LIB_RUNTIME,
     .ret_kind = CUSHIM_RET_OTHER, .categories = CUSHIM_CAT_QUERY},
    {.id = 9, .name = "cuGetErrorName", .base_name = "cuGetErrorName", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_QUERY},
    {.id = 10, .name = "nvmlDeviceGetCount_v2", .base_name = "nvmlDeviceGetCount", .library = CUSHIM_LIB_NVML,
     .ret_kind = CUSHIM_RET_NVMLRETURN, .categories = CUSHIM_CAT_QUERY},
};
#define MK_NAPIS (sizeof mk_apis / sizeof mk_apis[0])

static const struct {
    uint32_t kind;
    int32_t code;
    const char *name;
} mk_results[] = {
#define CUSHIM_RESULT(KIND, VALUE, NAME) {KIND, VALUE, NAME},
#include "cushim_results.inc"
#undef CUSHIM_RESULT
};

typedef struct mk_hook {
    uint32_t api_id;
    int32_t priority;
    cushim_pre_fn pre;
    void *user;
    int live;
} mk_hook;

static struct {
    const char *rules[8];
    uint32_t nrules;
    const char *seed;     /* as the option text; NULL: default */
    int summary;
    mk_hook hooks[64];
    uint32_t nhooks;
    char log[16384];
    size_t loglen;
    int log_errors;
    int select_enomatch;  /* answer "no match" with CUSHIM_ENOMATCH instead of 0 */
} mk;

static const cushim_api_info *mk_by_id(uint32_t id)
{
    for (size_t i = 0; i < MK_NAPIS; i++)
        if (mk_apis[i].id == id)
            return &mk_apis[i];
    return NULL;
}

static int mk_is_base(const char *n)
{
    for (size_t i = 0; i < MK_NAPIS; i++)
        if (!strcmp(mk_apis[i].base_name, n))
            return 1;
    return 0;
}

/* 1 match, 0 not, -1 malformed: the words of the header's grammar this test uses. */
static int mk_atom(const char *a, const cushim_api_info *api)
{
    if (!strcmp(a, "all"))
        return 1;
    if (!strncmp(a, "name:", 5))
        return !strcmp(a + 5, api->name);
    if (!strncmp(a, "base:", 5))
        return !strcmp(a + 5, api->base_name);
    if (!strncmp(a, "glob:", 5))
        return fnmatch(a + 5, api->name, 0) == 0;
    if (!strcmp(a, "lib:driver"))
        return api->library == CUSHIM_LIB_DRIVER;
    if (!strcmp(a, "lib:runtime"))
        return api->library == CUSHIM_LIB_RUNTIME;
    if (!strcmp(a, "lib:nvml"))
        return api->library == CUSHIM_LIB_NVML;
    if (!strcmp(a, "cat:alloc"))
        return (api->categories & CUSHIM_CAT_ALLOC) != 0;
    if (!strcmp(a, "cat:free"))
        return (api->categories & CUSHIM_CAT_FREE) != 0;
    if (strchr(a, ':'))
        return -1;
    if (strpbrk(a, "*?["))
        return fnmatch(a, api->name, 0) == 0;
    return mk_is_base(a) ? !strcmp(a, api->base_name) : !strcmp(a, api->name);
}

static int mk_match(const char *sel, const cushim_api_info *api)
{
    char buf[256], *save1 = NULL;
    int any = 0;
    snprintf(buf, sizeof buf, "%s", sel);
    for (char *term = strtok_r(buf, ",", &save1); term; term = strtok_r(NULL, ",", &save1)) {
        char *save2 = NULL;
        int all = 1;
        for (char *atom = strtok_r(term, "&", &save2); atom; atom = strtok_r(NULL, "&", &save2)) {
            while (*atom == ' ')
                atom++;
            for (char *e = atom + strlen(atom); e > atom && e[-1] == ' ';)
                *--e = '\0';
            int m = mk_atom(atom, api);
            if (m < 0)
                return -1;
            all = all && m;
        }
        any = any || all;
    }
    return any;
}

static uint32_t mk_api_id_limit(void)
{
    return MK_ID_LIMIT;
}

static int mk_api_select(const char *selector, uint32_t *ids, uint32_t cap, char *err, size_t errlen)
{
    int n = 0;
    for (size_t i = 0; i < MK_NAPIS; i++) {
        int m = mk_match(selector, &mk_apis[i]);
        if (m < 0) {
            snprintf(err, errlen, "unknown selector word in '%s'", selector);
            return CUSHIM_EINVAL;
        }
        if (m && (uint32_t)n < cap)
            ids[n] = mk_apis[i].id;
        n += m;
    }
    return n == 0 && mk.select_enomatch ? CUSHIM_ENOMATCH : n;
}

static const char *mk_result_name(uint32_t kind, int32_t code)
{
    for (size_t i = 0; i < sizeof mk_results / sizeof mk_results[0]; i++)
        if (mk_results[i].kind == kind && mk_results[i].code == code)
            return mk_results[i].name;
    return NULL;
}

static int mk_result_by_name(const char *name, uint32_t *kind, int32_t *code)
{
    for (size_t i = 0; i < sizeof mk_results / sizeof mk_results[0]; i++)
        if (!strcmp(mk_results[i].name, name)) {
            *kind = mk_results[i].kind;
            *code = mk_results[i].code;
            return CUSHIM_OK;
        }
    return CUSHIM_ENOENT;
}

static int mk_hooks_add(cushim_plugin *self, const cushim_hook_spec *spec, uint64_t *group)
{
    (void)self;
    if (spec->size < sizeof *spec || spec->select != NULL || mk_by_id(spec->api_id) == NULL || spec->pre == NULL ||
        mk.nhooks == 64)
        return CUSHIM_EINVAL;
    mk.hooks[mk.nhooks] = (mk_hook){spec->api_id, spec->priority, spec->pre, spec->user, 1};
    *group = ++mk.nhooks;
    return CUSHIM_OK;
}

static int mk_hooks_remove(cushim_plugin *self, uint64_t group)
{
    (void)self;
    if (group == 0 || group > mk.nhooks || !mk.hooks[group - 1].live)
        return CUSHIM_ENOENT;
    mk.hooks[group - 1].live = 0;
    return CUSHIM_OK;
}

static int mk_hooks_sync(void)
{
    return CUSHIM_OK;
}

static pthread_mutex_t mk_log_mu = PTHREAD_MUTEX_INITIALIZER;

static void mk_log(cushim_plugin *self, int level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    char line[1024];
    int n;
    va_list ap;
    (void)self;
    n = snprintf(line, sizeof line, "%s: ", names[level & 3]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&mk_log_mu);
    if (level == CUSHIM_LOG_ERROR)
        mk.log_errors++;
    /* keeps what fits, whole lines only */
    if (mk.loglen + strlen(line) + 2 < sizeof mk.log)
        mk.loglen += (size_t)sprintf(mk.log + mk.loglen, "%s\n", line);
    pthread_mutex_unlock(&mk_log_mu);
}

static int mk_log_enabled(int level)
{
    return level >= CUSHIM_LOG_INFO;
}

static uint32_t mk_opt_count(cushim_plugin *self, const char *name)
{
    (void)self;
    return !strcmp(name, "rule") ? mk.nrules : 0;
}

static const char *mk_opt_string_at(cushim_plugin *self, const char *name, uint32_t i)
{
    (void)self;
    return !strcmp(name, "rule") && i < mk.nrules ? mk.rules[i] : NULL;
}

/* Values the host would have validated, defaults from the plugin's own option list. */
static const char *mk_default(const char *name)
{
    for (const cushim_option *o = cushim_plugin_entry()->options; o->name; o++)
        if (!strcmp(o->name, name))
            return o->default_value;
    return NULL;
}

static int64_t mk_opt_int(cushim_plugin *self, const char *name)
{
    (void)self;
    assert_string_equal(name, "seed");
    return strtoll(mk.seed ? mk.seed : mk_default("seed"), NULL, 0);
}

static int mk_opt_bool(cushim_plugin *self, const char *name)
{
    (void)self;
    assert_string_equal(name, "summary");
    assert_string_equal(mk_default("summary"), "true");
    return mk.summary;
}

static void mk_set_data(cushim_plugin *self, void *data)
{
    self->data = data;
}

static void *mk_data(const cushim_plugin *self)
{
    return self->data;
}

static const cushim_host mk_host = {
    .size = sizeof(cushim_host),
    .abi_version = CUSHIM_ABI_VERSION,
    .sizeof_call = sizeof(cushim_call),
    .sizeof_api_info = sizeof(cushim_api_info),
    .sizeof_param_info = sizeof(cushim_param_info),
    .cuda_version = 13000,
    .api_id_limit = mk_api_id_limit,
    .api_by_id = mk_by_id,
    .api_select = mk_api_select,
    .result_name = mk_result_name,
    .result_by_name = mk_result_by_name,
    .hooks_add = mk_hooks_add,
    .hooks_remove = mk_hooks_remove,
    .hooks_sync = mk_hooks_sync,
    .log = mk_log,
    .log_enabled = mk_log_enabled,
    .opt_int = mk_opt_int,
    .opt_bool = mk_opt_bool,
    .opt_count = mk_opt_count,
    .opt_string_at = mk_opt_string_at,
    .plugin_set_data = mk_set_data,
    .plugin_data = mk_data,
};

/* Plugin records stay reachable for the whole run (the plugin keeps its state until exit). */
static struct cushim_plugin mk_selves[64];
static int mk_nselves;

static int setup(void **state)
{
    memset(&mk, 0, sizeof mk);
    mk.summary = 1;
    if (state != NULL)
        *state = NULL;
    return 0;
}

/* Loads the plugin with the given rules; returns init's result. */
static int load(cushim_plugin **self, const char *r1, const char *r2)
{
    assert_true(mk_nselves < 64);
    *self = &mk_selves[mk_nselves++];
    mk.nrules = 0;
    if (r1)
        mk.rules[mk.nrules++] = r1;
    if (r2)
        mk.rules[mk.nrules++] = r2;
    return cushim_plugin_entry()->init(&mk_host, *self);
}

static uint32_t live_hooks_on(uint32_t id)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < mk.nhooks; i++)
        n += mk.hooks[i].live && mk.hooks[i].api_id == id;
    return n;
}

/* One call of 'id' (inside 'parent' if not NULL): the live pre hooks, then a "real
   call" that succeeds. Returns the result; *skipped says whether a hook skipped it. */
static int32_t call_api(uint32_t id, const cushim_call *parent, int *skipped, cushim_call *frame_out)
{
    int32_t ret = 0;
    uint64_t slot = 0;
    static _Atomic uint64_t seq;
    int sentinel = 0x5a5a;
    cushim_call c = {
        .size = sizeof(cushim_call),
        .api_id = id,
        .info = mk_by_id(id),
        .params = &sentinel,
        .retval = &ret,
        .depth = parent ? parent->depth + 1 : 0,
        .parent = parent,
        .seq = ++seq,
    };
    *skipped = 0;
    for (uint32_t i = 0; i < mk.nhooks && !*skipped; i++)
        if (mk.hooks[i].live && mk.hooks[i].api_id == id)
            *skipped = mk.hooks[i].pre(&c, mk.hooks[i].user, &slot) == CUSHIM_SKIP;
    assert_int_equal(sentinel, 0x5a5a);   /* outputs untouched */
    if (frame_out)
        *frame_out = c;
    return ret;
}

static int32_t call1(uint32_t id)
{
    int skipped;
    int32_t r = call_api(id, NULL, &skipped, NULL);
    assert_int_equal(skipped, r != 0);
    return r;
}

static void assert_log_has(const char *needle)
{
    if (!strstr(mk.log, needle)) {
        print_error("log lacks:\n  %s\nlog:\n%s", needle, mk.log);
        fail();
    }
}

static void assert_log_lacks(const char *needle)
{
    if (strstr(mk.log, needle)) {
        print_error("log has:\n  %s\nlog:\n%s", needle, mk.log);
        fail();
    }
}

static void flush(cushim_plugin *self)
{
    cushim_plugin_entry()->flush(self);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_definition(void **state)
{
    const cushim_plugin_def *d = cushim_plugin_entry();
    (void)state;
    assert_int_equal(d->size, sizeof(cushim_plugin_def));
    assert_int_equal(d->abi_version, CUSHIM_ABI_VERSION);
    assert_string_equal(d->name, "faultinject");
    assert_non_null(d->init);
    assert_non_null(d->flush);
    assert_string_equal(d->options[0].name, "rule");
    assert_int_equal(d->options[0].type, CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT | CUSHIM_OPT_REQUIRED);
    assert_string_equal(d->options[1].name, "seed");
    assert_int_equal(d->options[1].type, CUSHIM_OPT_INT);
    assert_string_equal(d->options[1].default_value, "0");
    assert_string_equal(d->options[2].name, "summary");
    assert_int_equal(d->options[2].type, CUSHIM_OPT_BOOL);
    assert_null(d->options[3].name);
}

static void test_nth_and_summary(void **state)
{
    cushim_plugin *self;
    (void)state;
    assert_int_equal(load(&self, "cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2", NULL), 0);
    /* one hook on each API the glob matches, at the documented priority */
    assert_int_equal(mk.nhooks, 3);
    assert_int_equal(live_hooks_on(2) + live_hooks_on(3) + live_hooks_on(5), 3);
    assert_int_equal(mk.hooks[0].priority, 1000);
    assert_int_equal(call1(3), 0);
    assert_int_equal(call1(3), 2);    /* CUDA_ERROR_OUT_OF_MEMORY */
    assert_int_equal(call1(2), 0);
    assert_int_equal(call1(5), 0);
    assert_int_equal(call1(1), 0);    /* cuInit: not selected, not counted */
    assert_log_has("info: cuMemAlloc_v2: injected CUDA_ERROR_OUT_OF_MEMORY (2): rule 1, its matching call 2\n");
    flush(self);
    assert_log_has("warn: rule 1 'cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2': 4 calls matched, 1 fault injected\n");
    assert_int_equal(mk.log_errors, 0);
}

static void test_summary_off(void **state)
{
    cushim_plugin *self;
    (void)state;
    mk.summary = 0;
    assert_int_equal(load(&self, "cuInit:CUDA_ERROR_UNKNOWN", NULL), 0);
    assert_int_equal(call1(1), 999);
    flush(self);
    assert_log_lacks("calls matched");
    assert_log_lacks("call matched");
}

static void test_every_after(void **state)
{
    cushim_plugin *self;
    char got[16];
    (void)state;
    assert_int_equal(load(&self, "name:cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=3",
                          "base:cuMemFree:CUDA_ERROR_INVALID_VALUE:after=2"), 0);
    for (int i = 0; i < 7; i++)
        got[i] = (char)('0' + call1(3));
    got[7] = '\0';
    assert_string_equal(got, "0020020");
    for (int i = 0; i < 5; i++)
        got[i] = (char)('0' + call1(4));
    got[5] = '\0';
    assert_string_equal(got, "00111");
    flush(self);
    assert_log_has("rule 1 'name:cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=3': 7 calls matched, 2 faults injected");
    assert_log_has("rule 2 'base:cuMemFree:CUDA_ERROR_INVALID_VALUE:after=2': 5 calls matched, 3 faults injected");
}

/* Every rule counts the calls it selects; of rules firing together the first wins. */
static void test_several_rules_first_wins(void **state)
{
    cushim_plugin *self;
    char got[16];
    (void)state;
    assert_int_equal(load(&self, "cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=2",
                          "cat:alloc:CUDA_ERROR_INVALID_VALUE:every=3"), 0);
    assert_int_equal(live_hooks_on(3), 1);    /* one hook, however many rules */
    for (int i = 0; i < 6; i++)
        got[i] = (char)('0' + call1(3));
    got[6] = '\0';
    assert_string_equal(got, "021202");
    got[0] = (char)('0' + call1(5));          /* cuMemAllocHost_v2: rule 2 only, its 7th call */
    got[1] = (char)('0' + call1(5));          /* 8th */
    got[2] = (char)('0' + call1(5));          /* 9th: fires */
    got[3] = '\0';
    assert_string_equal(got, "001");
    flush(self);
    assert_log_has("rule 1 'cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=2': 6 calls matched, 3 faults injected");
    assert_log_has("rule 2 'cat:alloc:CUDA_ERROR_INVALID_VALUE:every=3': 9 calls matched, 2 faults injected");
}

/* A driver error applies to driver APIs only, a runtime error to runtime APIs, a number to both. */
static void test_error_kind_narrows(void **state)
{
    cushim_plugin *self;
    (void)state;
    assert_int_equal(load(&self, "cat:alloc:CUDA_ERROR_OUT_OF_MEMORY", NULL), 0);
    assert_int_equal(live_hooks_on(6), 0);
    assert_int_equal(live_hooks_on(3), 1);
    assert_log_has("info: rule 1 'cat:alloc:CUDA_ERROR_OUT_OF_MEMORY': applies to 3 APIs; left out: 1 returning "
                   "cudaError_t, 0 returning no error code");
    assert_int_equal(call1(6), 0);

    setup(NULL);
    assert_int_equal(load(&self, "cat:alloc:2", NULL), 0);
    assert_int_equal(live_hooks_on(6), 1);
    assert_int_equal(call1(6), 2);
    assert_int_equal(call1(3), 2);

    setup(NULL);
    assert_int_equal(load(&self, "lib:runtime:cudaErrorMemoryAllocation:nth=1", NULL), 0);
    assert_int_equal(live_hooks_on(7), 0);    /* cudaGetErrorName returns a string */
    assert_int_equal(live_hooks_on(6), 1);
    assert_int_equal(call1(6), 2);
    assert_int_equal(call1(6), 0);
}

/* The universal libraries' statuses: an NVML name applies to NVML APIs (its own type), a number to every API
   that returns a status, a driver name not to an NVML API; success refused as for CUDA. */
static void test_library_status(void **state)
{
    cushim_plugin *self;
    (void)state;
    assert_int_equal(load(&self, "nvmlDeviceGetCount_v2:NVML_ERROR_UNKNOWN:nth=1", NULL), 0);
    assert_int_equal(live_hooks_on(10), 1);
    assert_int_equal(call1(10), 999);   /* NVML_ERROR_UNKNOWN */
    assert_int_equal(call1(10), 0);

    setup(NULL);
    assert_int_equal(load(&self, "cuMemAlloc_v2,lib:nvml:7", NULL), 0);
    assert_int_equal(live_hooks_on(10), 1);
    assert_int_equal(live_hooks_on(3), 1);
    assert_int_equal(call1(10), 7);

    setup(NULL);
    assert_int_equal(load(&self, "cuMemAlloc_v2,lib:nvml:NVML_ERROR_NOT_FOUND", NULL), 0);
    assert_int_equal(live_hooks_on(3), 0);
    assert_int_equal(live_hooks_on(10), 1);
    assert_log_has("applies to 1 APIs; left out: 1 returning CUresult, 0 returning no error code");
}

static void expect_bad(const char *r1, const char *r2, const char *message)
{
    cushim_plugin *self;
    setup(NULL);
    assert_int_not_equal(load(&self, r1, r2), 0);
    assert_log_has(message);
    assert_int_equal(mk.log_errors, 1);      /* one clear reason */
    for (uint32_t i = 0; i < mk.nhooks; i++)
        assert_false(mk.hooks[i].live);      /* nothing left registered */
    assert_null(self->data);
}

static void test_bad_rules(void **state)
{
    (void)state;
    expect_bad("cuMemAlloc*:CUDA_ERROR_NOPE", NULL,
               "error: rule 1 'cuMemAlloc*:CUDA_ERROR_NOPE': unknown error 'CUDA_ERROR_NOPE': not a CUresult, "
               "cudaError_t, nvmlReturn_t, ncclResult_t or cublasStatus_t name of CUDA 13.0");
    expect_bad("cuInit:CUDA_SUCCESS", NULL, "'CUDA_SUCCESS' is success");
    expect_bad("cuInit:cudaSuccess", NULL, "'cudaSuccess' is success");
    expect_bad("cuInit:2:nth=0", NULL, "error: rule 1 'cuInit:2:nth=0': nth=0: expected a whole number >= 1");
    /* no '=' in the last field: it is the ERROR */
    expect_bad("cuInit:2:sometimes", NULL, "rule 1 'cuInit:2:sometimes': unknown error 'sometimes'");
    expect_bad("cuInit:2:nth", NULL, "unknown error 'nth': not a CUresult, cudaError_t, nvmlReturn_t, ncclResult_t "
               "or cublasStatus_t name of CUDA 13.0 (like CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation or "
               "NVML_ERROR_UNKNOWN), nor a number; a WHEN condition takes a value, like nth=2");
    expect_bad("cuInit:2:CUDA-ERROR", NULL, "'CUDA-ERROR' is neither an error name nor a number");
    expect_bad("cuNoSuchThing:2", NULL, "rule 1 'cuNoSuchThing:2': selector 'cuNoSuchThing' matches no API of this "
               "build (CUDA 13.0)");
    mk.select_enomatch = 1;
    {
        cushim_plugin *self;
        assert_int_not_equal(load(&self, "cuNoSuchThing:2", NULL), 0);
        assert_log_has("matches no API");
    }
    expect_bad("lib:gpu:2", NULL, "rule 1 'lib:gpu:2': bad selector 'lib:gpu': unknown selector word");
    expect_bad("cudaMalloc:CUDA_ERROR_OUT_OF_MEMORY", NULL,
               "CUDA_ERROR_OUT_OF_MEMORY is a driver error (CUresult), but selector 'cudaMalloc' matches only APIs "
               "returning cudaError_t: give a cudaError* name or a number");
    expect_bad("cuMemAlloc_v2:cudaErrorMemoryAllocation", NULL,
               "cudaErrorMemoryAllocation is a runtime error (cudaError_t), but selector 'cuMemAlloc_v2' matches only "
               "APIs returning CUresult: give a CUDA_ERROR_* name or a number");
    expect_bad("cudaGetErrorName:2", NULL, "selector 'cudaGetErrorName' matches only APIs that return no error code");
    expect_bad("nvmlDeviceGetCount_v2:CUDA_ERROR_OUT_OF_MEMORY", NULL,
               "CUDA_ERROR_OUT_OF_MEMORY is a driver error (CUresult), but selector 'nvmlDeviceGetCount_v2' matches "
               "only APIs returning nvmlReturn_t: give an NVML_ERROR_* name or a number");
    expect_bad("cuInit:NVML_ERROR_UNKNOWN", NULL, "NVML_ERROR_UNKNOWN is an NVML error (nvmlReturn_t), but selector "
               "'cuInit' matches only APIs returning CUresult: give a CUDA_ERROR_* name or a number");
    expect_bad("nvmlDeviceGetCount_v2:NVML_SUCCESS", NULL, "'NVML_SUCCESS' is success");
    /* the second rule is bad: the first registers nothing either */
    expect_bad("cuMemAlloc*:2", "cuInit:2:p=2", "rule 2 'cuInit:2:p=2': p=2: expected a probability");
    {
        cushim_plugin *self;
        setup(NULL);
        assert_int_not_equal(load(&self, NULL, NULL), 0);
        assert_log_has("no rule given");
    }
}

/* A call made inside another call the same rule selects is not counted again. */
static void test_nested_counted_once(void **state)
{
    cushim_plugin *self;
    cushim_call outer;
    int skipped;
    (void)state;
    assert_int_equal(load(&self, "cat:alloc:2:every=2", "cuMemAlloc_v2:CUDA_ERROR_INVALID_VALUE:nth=99"), 0);
    /* cudaMalloc #1 (n=1, passes), and the cuMemAlloc_v2 it makes */
    assert_int_equal(call_api(6, NULL, &skipped, &outer), 0);
    assert_int_equal(call_api(3, &outer, &skipped, NULL), 0);
    assert_int_equal(call_api(3, &outer, &skipped, NULL), 0);
    /* cudaMalloc #2: n=2, faulted */
    assert_int_equal(call_api(6, NULL, &skipped, NULL), 2);
    assert_true(skipped);
    /* a cuMemAlloc_v2 of its own: n=3 */
    assert_int_equal(call1(3), 0);
    flush(self);
    assert_log_has("rule 1 'cat:alloc:2:every=2': 3 calls matched, 1 fault injected");
    /* rule 2 does not select cudaMalloc: the nested calls count for it */
    assert_log_has("rule 2 'cuMemAlloc_v2:CUDA_ERROR_INVALID_VALUE:nth=99': 3 calls matched, 0 faults injected");
}

static void p_pattern(const char *seed, char *out, int n)
{
    cushim_plugin *self;
    setup(NULL);
    mk.seed = seed;
    assert_int_equal(load(&self, "cuInit:CUDA_ERROR_UNKNOWN:p=0.5", NULL), 0);
    for (int i = 0; i < n; i++)
        out[i] = call1(1) ? '1' : '0';
    out[n] = '\0';
}

static void test_probability_reproducible(void **state)
{
    char a[65], b[65], c[65], d[65], ref[65];
    fi_when w = {FI_W_P, 0, 0, 0, 0.5, 0, 0};
    (void)state;
    p_pattern(NULL, a, 64);
    p_pattern("0", b, 64);
    p_pattern("1", c, 64);
    p_pattern("2", d, 64);
    assert_string_equal(a, b);          /* default seed 0 */
    assert_string_not_equal(c, d);
    assert_string_not_equal(a, c);
    for (int i = 0; i < 64; i++)        /* the documented stream */
        ref[i] = fi_when_fires(&w, (uint64_t)i + 1, 0, FI_DEFAULT_SEED, fi_rule_hash("cuInit:CUDA_ERROR_UNKNOWN:p=0.5"))
                     ? '1' : '0';
    ref[64] = '\0';
    assert_string_equal(a, ref);
    assert_non_null(strchr(a, '0'));
    assert_non_null(strchr(a, '1'));
}

static void test_window(void **state)
{
    cushim_plugin *self;
    (void)state;
    assert_int_equal(load(&self, "cuInit:CUDA_ERROR_UNKNOWN:window=0-", "cuMemAlloc_v2:2:window=1000000-"), 0);
    assert_int_equal(call1(1), 999);
    assert_int_equal(call1(3), 0);
}

static void test_fork_child_restarts_counts(void **state)
{
    cushim_plugin *self;
    (void)state;
    assert_int_equal(load(&self, "cuInit:CUDA_ERROR_UNKNOWN:nth=2", NULL), 0);
    assert_int_equal(call1(1), 0);
    assert_int_equal(call1(1), 999);
    assert_int_equal(call1(1), 0);
    cushim_plugin_entry()->fork_child(self);
    assert_int_equal(call1(1), 0);
    assert_int_equal(call1(1), 999);
    flush(self);
    assert_log_has("rule 1 'cuInit:CUDA_ERROR_UNKNOWN:nth=2': 2 calls matched, 1 fault injected");
}

#define MK_THREADS 8
#define MK_CALLS 3000
static _Atomic int mk_faults;

static void *worker(void *arg)
{
    int n = 0;
    (void)arg;
    for (int i = 0; i < MK_CALLS; i++) {
        int skipped;
        n += call_api(3, NULL, &skipped, NULL) != 0;
    }
    mk_faults += n;
    return NULL;
}

/* Counting is exact under threads: every third of all calls fails, whoever makes it. */
static void test_threads_exact(void **state)
{
    cushim_plugin *self;
    pthread_t t[MK_THREADS];
    char line[200];
    (void)state;
    assert_int_equal(load(&self, "cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=3", NULL), 0);
    mk_faults = 0;
    for (int i = 0; i < MK_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int i = 0; i < MK_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(mk_faults, MK_THREADS * MK_CALLS / 3);
    mk.loglen = 0;
    mk.log[0] = '\0';
    flush(self);
    snprintf(line, sizeof line, "'cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=3': %d calls matched, %d faults injected",
             MK_THREADS * MK_CALLS, MK_THREADS * MK_CALLS / 3);
    assert_log_has(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_definition, setup),
        cmocka_unit_test_setup(test_nth_and_summary, setup),
        cmocka_unit_test_setup(test_summary_off, setup),
        cmocka_unit_test_setup(test_every_after, setup),
        cmocka_unit_test_setup(test_several_rules_first_wins, setup),
        cmocka_unit_test_setup(test_error_kind_narrows, setup),
        cmocka_unit_test_setup(test_library_status, setup),
        cmocka_unit_test_setup(test_bad_rules, setup),
        cmocka_unit_test_setup(test_nested_counted_once, setup),
        cmocka_unit_test_setup(test_probability_reproducible, setup),
        cmocka_unit_test_setup(test_window, setup),
        cmocka_unit_test_setup(test_fork_child_restarts_counts, setup),
        cmocka_unit_test_setup(test_threads_exact, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
