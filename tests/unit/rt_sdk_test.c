/*
 * rt_sdk_test.c - the host table beyond hooks: plugin_register's checks
 * (definition size, ABI versions, names, options of every type, escapes,
 * defaults, required and repeated options) and its undo when init fails;
 * option getters; per-thread storage and its destructors; log, env, secure,
 * plugin name and data, thread_id, now_ns, real(); hooks_sync (waits for a
 * hook removed while running, which finishes normally; ESTATE inside a hook).
 * Run with CUSHIM_LOG=debug and CUSHIM_LOG_FILE=<file> (read back here).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static const cushim_host *host;

static CUresult fake_get_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult fake_gpa(const char *s, void **p, int v, cuuint64_t f, CUdriverProcAddressQueryResult *st)
{
    (void)s, (void)v, (void)f, (void)st;
    *p = NULL;
    return CUDA_SUCCESS;
}

static const cushim_option opts[] = {
    { .name = "text", .type = CUSHIM_OPT_STRING, .default_value = "dflt" },
    { .name = "count", .type = CUSHIM_OPT_INT, .default_value = "7" },
    { .name = "on", .type = CUSHIM_OPT_BOOL, .default_value = "no" },
    { .name = "ratio", .type = CUSHIM_OPT_DOUBLE, .default_value = "0.5" },
    { .name = "limit", .type = CUSHIM_OPT_BYTES, .default_value = "1M" },
    { .name = "tag", .type = CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT },
    { .name = NULL },
};

static cushim_plugin_def mkdef(const char *name, const cushim_option *o)
{
    return (cushim_plugin_def){ .size = sizeof(cushim_plugin_def), .abi_version = CUSHIM_ABI_VERSION,
                                .name = name, .options = o };
}

/* plugin_register's result and reason for 'def' with 'options'. */
static int reg(const cushim_plugin_def *def, const char *options, char *err, cushim_plugin **out)
{
    cushim_plugin *p = NULL;
    err[0] = '\0';
    int r = host->plugin_register(def, options, &p, err, 512);
    if (out != NULL)
        *out = p;
    return r;
}

static void test_definition_checks(void **state)
{
    (void)state;
    char err[512];
    static cushim_plugin_def d[8];
    assert_int_equal(reg(NULL, NULL, err, NULL), CUSHIM_EINVAL);
    d[0] = mkdef("small", NULL);
    d[0].size = 16;
    assert_int_equal(reg(&d[0], NULL, err, NULL), CUSHIM_EINVAL);
    assert_non_null(strstr(err, "too small"));
    d[1] = mkdef("major", NULL);
    d[1].abi_version = 2u << 16;
    assert_int_equal(reg(&d[1], NULL, err, NULL), CUSHIM_EINVAL);
    assert_non_null(strstr(err, "was built for SDK ABI 2.0, this shim provides " RT_ABI_NOW));
    d[2] = mkdef("newer", NULL);
    d[2].abi_version = CUSHIM_ABI_VERSION + 1;
    assert_int_equal(reg(&d[2], NULL, err, NULL), CUSHIM_EINVAL);
    char want[128];
    snprintf(want, sizeof want, "SDK ABI %s, this shim provides " RT_ABI_NOW, rt_abi_next());
    assert_non_null(strstr(err, want));
    d[1].abi_version = 4u;   /* 0.4, the last before 1.0 (the same layout): another major, refused */
    assert_int_equal(reg(&d[1], NULL, err, NULL), CUSHIM_EINVAL);
    assert_non_null(strstr(err, "was built for SDK ABI 0.4, this shim provides " RT_ABI_NOW));
    d[3] = mkdef("older", NULL);
    d[3].abi_version = (uint32_t)CUSHIM_ABI_MAJOR << 16;   /* 1.0: a plugin of any minor of this major loads */
    cushim_plugin *p;
    assert_int_equal(reg(&d[3], NULL, err, &p), CUSHIM_OK);
    assert_string_equal(host->plugin_name(p), "older");
    d[4] = mkdef("Bad Name", NULL);
    assert_int_equal(reg(&d[4], NULL, err, NULL), CUSHIM_EINVAL);
    assert_non_null(strstr(err, "name"));
    d[5] = mkdef("older", NULL);   /* a second plugin of that name */
    assert_int_equal(reg(&d[5], NULL, err, NULL), CUSHIM_EINVAL);
    assert_non_null(strstr(err, "already loaded"));
    /* Failures are logged at warn with the plugin's name and the reason. */
    assert_non_null(strstr(rt_test_log_text(), "plugin 'major': was built for SDK ABI 2.0"));
}

static void test_option_errors(void **state)
{
    (void)state;
    static cushim_plugin_def d = { 0 };
    d = mkdef("opts-bad", opts);
    struct {
        const char *text, *want;
    } cases[] = {
        { "nosuch=1", "unknown option \"nosuch\" (text, count, on, ratio, limit, tag)" },
        { "count=abc", "option 'count' = \"abc\" is not a valid int" },
        { "count=99999999999999999999", "option 'count' = \"99999999999999999999\" is not a valid int" },
        { "count=010x", "is not a valid int" },
        { "on=maybe", "option 'on' = \"maybe\" is not a valid bool" },
        { "ratio=1.2.3", "option 'ratio' = \"1.2.3\" is not a valid double" },
        { "ratio=nan", "is not a valid double" },
        { "limit=12Q", "option 'limit' = \"12Q\" is not a valid bytes" },
        { "limit=-1", "is not a valid bytes" },
        { "limit=99999999999T", "is not a valid bytes" },
        { "count=1,count=2", "option 'count' given twice" },
        { "count", "option 'count' has no value" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512];
        assert_int_equal(reg(&d, cases[i].text, err, NULL), CUSHIM_EINVAL);
        if (strstr(err, cases[i].want) == NULL)
            print_error("'%s': got \"%s\", want \"%s\"\n", cases[i].text, err, cases[i].want);
        assert_non_null(strstr(err, cases[i].want));
    }
    /* Declarations are checked too, defaults included. */
    static const cushim_option bad_default[] = { { .name = "n", .type = CUSHIM_OPT_INT, .default_value = "x" },
                                                 { .name = NULL } };
    static const cushim_option dup[] = { { .name = "n", .type = CUSHIM_OPT_INT }, { .name = "n", .type = CUSHIM_OPT_INT },
                                         { .name = NULL } };
    static const cushim_option bad_type[] = { { .name = "n", .type = 9 }, { .name = NULL } };
    static const cushim_option bad_name[] = { { .name = "N!", .type = CUSHIM_OPT_INT }, { .name = NULL } };
    static const cushim_option req[] = { { .name = "must", .type = CUSHIM_OPT_BYTES | CUSHIM_OPT_REQUIRED },
                                         { .name = NULL } };
    static cushim_plugin_def d2[5];
    const cushim_option *const decls[] = { bad_default, dup, bad_type, bad_name, req };
    const char *const want[] = { "the default 'x' of option 'n' is not a valid int", "declared twice",
                                 "unknown type", "not [a-z0-9_-]+", "required option 'must'" };
    for (int i = 0; i < 5; i++) {
        char err[512];
        d2[i] = mkdef("opts-decl", decls[i]);
        assert_int_equal(reg(&d2[i], NULL, err, NULL), CUSHIM_EINVAL);
        if (strstr(err, want[i]) == NULL)
            print_error("declaration %d: got \"%s\"\n", i, err);
        assert_non_null(strstr(err, want[i]));
    }
    char err[512];
    cushim_plugin *p;
    assert_int_equal(reg(&d2[4], "must=1G", err, &p), CUSHIM_OK);
    assert_int_equal(host->opt_bytes(p, "must"), 1ull << 30);
}

static void test_option_values(void **state)
{
    (void)state;
    static cushim_plugin_def d;
    d = mkdef("opts-good", opts);
    char err[512];
    cushim_plugin *p;
    /* Escapes: '\,' '\;' '\\'; a value keeps ':' and '='; white space around keys. */
    assert_int_equal(reg(&d, " text = a\\,b\\;c\\\\d:e=f ,count=0x10, on=ON,ratio=2.5e1,limit=1.5GiB,tag=x,tag=y,,",
                         err, &p), CUSHIM_OK);
    assert_string_equal(host->opt_string(p, "text"), " a,b;c\\d:e=f ");
    assert_int_equal(host->opt_int(p, "count"), 16);
    assert_int_equal(host->opt_bool(p, "on"), 1);
    assert_true(host->opt_double(p, "ratio") == 25.0);
    assert_int_equal(host->opt_bytes(p, "limit"), 3ull << 29);
    assert_int_equal(host->opt_count(p, "tag"), 2);
    assert_string_equal(host->opt_string_at(p, "tag", 0), "x");
    assert_string_equal(host->opt_string_at(p, "tag", 1), "y");
    assert_null(host->opt_string_at(p, "tag", 2));
    assert_int_equal(host->opt_given(p, "count"), 1);
    /* Typed reads of the wrong type, undeclared names: 0/NULL and a log line. */
    assert_int_equal(host->opt_int(p, "text"), 0);
    assert_null(host->opt_string(p, "nosuch"));
    assert_non_null(strstr(rt_test_log_text(), "opts-good: option 'nosuch' is not declared"));
    assert_null(host->opt_string(NULL, "text"));

    /* Defaults when not given. */
    static cushim_plugin_def d2;
    d2 = mkdef("opts-default", opts);
    assert_int_equal(reg(&d2, "", err, &p), CUSHIM_OK);
    assert_string_equal(host->opt_string(p, "text"), "dflt");
    assert_int_equal(host->opt_int(p, "count"), 7);
    assert_int_equal(host->opt_bool(p, "on"), 0);
    assert_true(host->opt_double(p, "ratio") == 0.5);
    assert_int_equal(host->opt_bytes(p, "limit"), 1u << 20);
    assert_int_equal(host->opt_given(p, "count"), 0);
    assert_int_equal(host->opt_count(p, "tag"), 0);

    /* The parsers on their own. */
    uint64_t b;
    assert_int_equal(op_parse_bytes("4096", &b), 0);
    assert_int_equal(b, 4096);
    assert_int_equal(op_parse_bytes("512K", &b), 0);
    assert_int_equal(b, 512u << 10);
    assert_int_equal(op_parse_bytes("8MiB", &b), 0);
    assert_int_equal(b, 8u << 20);
    assert_int_equal(op_parse_bytes("8GiB", &b), 0);
    assert_int_equal(b, 8ull << 30);
    assert_int_equal(op_parse_bytes("1.5G", &b), 0);
    assert_int_equal(b, 3ull << 29);
    assert_int_not_equal(op_parse_bytes("1.G", &b), 0);
    assert_int_not_equal(op_parse_bytes("K", &b), 0);
    int64_t i;
    assert_int_equal(op_parse_int("-42", &i), 0);
    assert_int_equal(i, -42);
    assert_int_equal(op_parse_int("-9223372036854775808", &i), 0);
    assert_int_not_equal(op_parse_int("9223372036854775808", &i), 0);
    int on;
    assert_int_equal(op_parse_bool("Off", &on), 0);
    assert_int_equal(on, 0);
}

/* init registers a hook and a TLS value, then fails: both are undone. */
static uint32_t failing_key;
static cushim_plugin *failing_self;
static int never_pre_calls;
static int never_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    never_pre_calls++;
    return CUSHIM_CONTINUE;
}

static int failing_init(const cushim_host *h, cushim_plugin *self)
{
    failing_self = self;
    cushim_hook_spec spec = { .size = sizeof spec, .api_id = CUSHIM_API_cuDriverGetVersion, .pre = never_pre };
    uint64_t g;
    if (h->hooks_add(self, &spec, &g) != CUSHIM_OK || h->tls_create(self, free, &failing_key) != CUSHIM_OK)
        return 1;
    h->tls_set(failing_key, strdup("x"));
    assert_non_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
    return 5;
}

static void test_init_failure_undone(void **state)
{
    (void)state;
    static cushim_plugin_def d;
    d = mkdef("failing", NULL);
    d.init = failing_init;
    char err[512];
    cushim_plugin *p = (cushim_plugin *)1;
    assert_int_equal(reg(&d, NULL, err, &p), CUSHIM_EINVAL);
    assert_null(p);
    assert_non_null(strstr(err, "init returned 5"));
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuDriverGetVersion].chain));
    int v;
    never_pre_calls = 0;
    cuDriverGetVersion(&v);
    assert_int_equal(never_pre_calls, 0);
    assert_null(host->tls_get(failing_key));
    assert_int_equal(host->tls_set(failing_key, &v), CUSHIM_ENOENT);
    /* What the failed plugin may still try (from a thread it started) is refused. */
    cushim_hook_spec spec = { .size = sizeof spec, .api_id = CUSHIM_API_cuDriverGetVersion, .pre = never_pre };
    uint64_t g;
    assert_int_equal(host->hooks_add(failing_self, &spec, &g), CUSHIM_ESTATE);
    /* The name is free again. */
    static cushim_plugin_def d2;
    d2 = mkdef("failing", NULL);
    assert_int_equal(reg(&d2, NULL, err, &p), CUSHIM_OK);
}

static _Atomic int dtor_calls;
static void *dtor_value;
static void count_dtor(void *v)
{
    dtor_value = v;
    atomic_fetch_add(&dtor_calls, 1);
}

static uint32_t tkey;
static void *tls_thread(void *arg)
{
    assert_null(host->tls_get(tkey));
    assert_int_equal(host->tls_set(tkey, arg), CUSHIM_OK);
    assert_ptr_equal(host->tls_get(tkey), arg);
    return (void *)(uintptr_t)host->thread_id();
}

static void test_tls(void **state)
{
    (void)state;
    cushim_plugin *p = rt_test_plugin("tls-test");
    assert_int_equal(host->tls_create(p, count_dtor, &tkey), CUSHIM_OK);
    assert_int_equal(host->tls_create(NULL, count_dtor, &tkey), CUSHIM_EINVAL);
    static int mine, theirs;
    assert_int_equal(host->tls_set(tkey, &mine), CUSHIM_OK);
    pthread_t t;
    void *tid;
    assert_int_equal(pthread_create(&t, NULL, tls_thread, &theirs), 0);
    pthread_join(t, &tid);
    assert_int_equal(atomic_load(&dtor_calls), 1);   /* at that thread's exit, with its value */
    assert_ptr_equal(dtor_value, &theirs);
    assert_ptr_equal(host->tls_get(tkey), &mine);
    assert_int_not_equal((uintptr_t)tid, host->thread_id());
    assert_int_equal(host->tls_set(TH_MAX_KEYS + 5, &mine), CUSHIM_ENOENT);
    assert_null(host->tls_get(TH_MAX_KEYS + 5));
}

static void test_misc_slots(void **state)
{
    (void)state;
    cushim_plugin *p = rt_test_plugin("misc-test");
    assert_string_equal(host->plugin_name(p), "misc-test");
    assert_null(host->plugin_name(NULL));
    static int data;
    host->plugin_set_data(p, &data);
    assert_ptr_equal(host->plugin_data(p), &data);
    host->log(p, CUSHIM_LOG_WARN, "hello %d", 5);
    char want[128];
    snprintf(want, sizeof want, "cushim[%d] warn: misc-test: hello 5", (int)getpid());
    assert_non_null(strstr(rt_test_log_text(), want));
    /* a value a plugin quotes raw (an option, the environment) cannot forge a second line: control bytes are
       written as \xNN, a tab stays */
    host->log(p, CUSHIM_LOG_WARN, "value '%s'", "a\nfake: line\r\x1b[1m\tend");
    snprintf(want, sizeof want, "cushim[%d] warn: misc-test: value 'a\\x0afake: line\\x0d\\x1b[1m\tend'\n",
             (int)getpid());
    assert_non_null(strstr(rt_test_log_text(), want));
    assert_int_equal(host->log_enabled(CUSHIM_LOG_DEBUG), 1);   /* CUSHIM_LOG=debug */
    assert_int_equal(host->log_enabled(9), 0);
    setenv("RT_SDK_TEST_VAR", "/some/where", 1);
    assert_string_equal(host->env("RT_SDK_TEST_VAR"), "/some/where");
    assert_string_equal(host->env_path("RT_SDK_TEST_VAR"), "/some/where");   /* not a setuid program */
    assert_int_equal(host->secure(), 0);
    assert_int_equal(host->thread_id(), (uint64_t)syscall(SYS_gettid));
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mono = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, a = host->now_ns(), b = host->now_ns();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mono2 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    assert_true(b >= a);
    /* CLOCK_MONOTONIC (derived from the TSC: within 1 ms of calibration error), bracketed by two reads of
       it, so that a pause anywhere on a loaded machine cannot fail the check */
    assert_true(a + 1000000 >= mono && b <= mono2 + 1000000);
    /* real(): the function calls are forwarded to; for cuGetProcAddress the mapping handler. */
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuGetProcAddress_v2, (void *)fake_gpa);
    assert_ptr_equal(host->real(CUSHIM_API_cuDriverGetVersion), (void *)fake_get_version);
    assert_ptr_equal(host->real(CUSHIM_API_cuGetProcAddress_v2), gp_handler_for(CUSHIM_API_cuGetProcAddress_v2));
    assert_null(host->real(CUSHIM_API_ID_LIMIT));
}

static int fake_alloc_calls;
static CUresult fake_alloc(CUdeviceptr *p, size_t n)
{
    fake_alloc_calls++;
    *p = (CUdeviceptr)(n * 2);
    return n == 7 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}

/* call_real (lua): the real function called with the arguments of a params struct. */
static void test_call_real(void **state)
{
    (void)state;
    CUdeviceptr d = 0;
    int v = 0;
    CUresult r = CUDA_ERROR_UNKNOWN;
    assert_true(CUSHIM_HOST_HAS(host, call_real));
    rt_record_real(CUSHIM_API_cuMemAlloc_v2, (void *)fake_alloc);
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    cushim_params_cuMemAlloc_v2 pa = {.dptr = &d, .bytesize = 21};
    assert_int_equal(host->call_real(CUSHIM_API_cuMemAlloc_v2, &pa, &r), CUSHIM_OK);
    assert_int_equal(r, CUDA_SUCCESS);
    assert_int_equal(d, 42);
    pa.bytesize = 7;
    assert_int_equal(host->call_real(CUSHIM_API_cuMemAlloc_v2, &pa, &r), CUSHIM_OK);
    assert_int_equal(r, CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(d, 14);
    assert_int_equal(fake_alloc_calls, 2);
    cushim_params_cuDriverGetVersion pv = {.driverVersion = &v};
    assert_int_equal(host->call_real(CUSHIM_API_cuDriverGetVersion, &pv, &r), CUSHIM_OK);
    assert_int_equal(v, 13000);
    assert_int_equal(host->call_real(CUSHIM_API_ID_LIMIT, &pv, &r), CUSHIM_EINVAL);
    assert_int_equal(host->call_real(CUSHIM_API_cuDriverGetVersion, NULL, &r), CUSHIM_EINVAL);
    assert_int_equal(host->call_real(CUSHIM_API_cuDriverGetVersion, &pv, NULL), CUSHIM_EINVAL);
    assert_int_equal(fake_alloc_calls, 2);
}

/* call (1.2, the remoting's back end): the same params struct, but through our exported wrapper, so a pre hook
   sees the call and can refuse it (a server-side quota); call_real still bypasses it. */
static int quota_pre_calls;
static int quota_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)u, (void)s;
    quota_pre_calls++;
    if (((cushim_params_cuMemAlloc_v2 *)c->params)->bytesize > 100) {
        cushim_call_set_result(c, CUDA_ERROR_OUT_OF_MEMORY);
        return CUSHIM_SKIP;
    }
    return CUSHIM_CONTINUE;
}

static void test_call_hooked(void **state)
{
    (void)state;
    CUdeviceptr d = 0;
    CUresult r = CUDA_ERROR_UNKNOWN;
    assert_true(CUSHIM_HOST_HAS(host, call));
    cushim_plugin *p = rt_test_plugin("call-test");
    rt_record_real(CUSHIM_API_cuMemAlloc_v2, (void *)fake_alloc);
    uint64_t g;
    assert_int_equal(rt_hook(p, CUSHIM_API_cuMemAlloc_v2, 0, quota_pre, NULL, NULL, &g), CUSHIM_OK);
    int before = fake_alloc_calls;
    cushim_params_cuMemAlloc_v2 pa = {.dptr = &d, .bytesize = 21};
    assert_int_equal(host->call(CUSHIM_API_cuMemAlloc_v2, &pa, &r), CUSHIM_OK);
    assert_int_equal(r, CUDA_SUCCESS);
    assert_int_equal(d, 42);
    assert_int_equal(quota_pre_calls, 1);
    assert_int_equal(fake_alloc_calls, before + 1);
    pa.bytesize = 1000;   /* refused by the hook: the real function is not called */
    assert_int_equal(host->call(CUSHIM_API_cuMemAlloc_v2, &pa, &r), CUSHIM_OK);
    assert_int_equal(r, CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(quota_pre_calls, 2);
    assert_int_equal(fake_alloc_calls, before + 1);
    assert_int_equal(host->call_real(CUSHIM_API_cuMemAlloc_v2, &pa, &r), CUSHIM_OK);   /* no hooks */
    assert_int_equal(r, CUDA_SUCCESS);
    assert_int_equal(d, 2000);
    assert_int_equal(quota_pre_calls, 2);
    assert_int_equal(fake_alloc_calls, before + 2);
    assert_int_equal(host->call(CUSHIM_API_ID_LIMIT, &pa, &r), CUSHIM_EINVAL);
    assert_int_equal(host->call(CUSHIM_API_cuMemAlloc_v2, NULL, &r), CUSHIM_EINVAL);
    assert_int_equal(host->call(CUSHIM_API_cuMemAlloc_v2, &pa, NULL), CUSHIM_EINVAL);
    assert_int_equal(quota_pre_calls, 2);
    assert_int_equal(host->hooks_remove(p, g), CUSHIM_OK);
}

/* Result names from the generated tables (cushim_results.inc). */
static void test_result_names(void **state)
{
    (void)state;
    assert_string_equal(host->result_name(CUSHIM_RET_CURESULT, 2), "CUDA_ERROR_OUT_OF_MEMORY");
    assert_string_equal(host->result_name(CUSHIM_RET_CUDAERROR, 2), "cudaErrorMemoryAllocation");
    assert_string_equal(host->result_name(CUSHIM_RET_CURESULT, CUDA_SUCCESS), "CUDA_SUCCESS");
    assert_string_equal(host->result_name(CUSHIM_RET_CUDAERROR, cudaErrorInitializationError),
                        "cudaErrorInitializationError");
    assert_null(host->result_name(CUSHIM_RET_CURESULT, 123456));
    assert_null(host->result_name(CUSHIM_RET_OTHER, 0));
    uint32_t kind = 0;
    int32_t code = -1;
    assert_int_equal(host->result_by_name("cudaErrorMemoryAllocation", &kind, &code), CUSHIM_OK);
    assert_int_equal(kind, CUSHIM_RET_CUDAERROR);
    assert_int_equal(code, 2);
    assert_int_equal(host->result_by_name("CUDA_ERROR_NOT_INITIALIZED", &kind, &code), CUSHIM_OK);
    assert_int_equal(kind, CUSHIM_RET_CURESULT);
    assert_int_equal(code, CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(host->result_by_name("CUDA_ERROR_NO_SUCH_THING", &kind, &code), CUSHIM_ENOENT);
    assert_int_equal(host->result_by_name(NULL, &kind, &code), CUSHIM_ENOENT);
    /* Every code of both enums has a name that maps back to it. */
    for (int32_t c = 0; c < 1000; c++)
        for (uint32_t k = CUSHIM_RET_CURESULT; k <= CUSHIM_RET_CUDAERROR; k++) {
            const char *n = host->result_name(k, c);
            if (n == NULL)
                continue;
            assert_int_equal(host->result_by_name(n, &kind, &code), CUSHIM_OK);
            assert_int_equal(kind, k);
            assert_int_equal(code, c);
        }
}

/* hooks_sync: returns once no thread runs a removed hook; ESTATE from a hook. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int in_hook, release_hook, post_ran, sync_done, sync_inside;

static int blocking_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u;
    *s = 77;
    sync_inside = host->hooks_sync();
    pthread_mutex_lock(&mu);
    in_hook = 1;
    pthread_cond_broadcast(&cv);
    while (!release_hook)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return CUSHIM_CONTINUE;
}

static void blocking_post(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u;
    if (*s == 77)
        post_ran = 1;
}

static void *caller(void *arg)
{
    (void)arg;
    int v;
    cuDriverGetVersion(&v);
    return NULL;
}

static void *syncer(void *arg)
{
    (void)arg;
    int r = host->hooks_sync();
    pthread_mutex_lock(&mu);
    sync_done = r == CUSHIM_OK ? 1 : -1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void test_sync(void **state)
{
    (void)state;
    cushim_plugin *p = rt_test_plugin("sync-test");
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    uint64_t g;
    assert_int_equal(rt_hook(p, CUSHIM_API_cuDriverGetVersion, 0, blocking_pre, blocking_post, NULL, &g), CUSHIM_OK);
    pthread_t tc, ts;
    assert_int_equal(pthread_create(&tc, NULL, caller, NULL), 0);
    pthread_mutex_lock(&mu);
    while (!in_hook)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    assert_int_equal(sync_inside, CUSHIM_ESTATE);
    assert_int_equal(host->hooks_remove(p, g), CUSHIM_OK);   /* while the hook runs */
    assert_int_equal(pthread_create(&ts, NULL, syncer, NULL), 0);
    struct timespec d = { 0, 100000000 };
    nanosleep(&d, NULL);
    pthread_mutex_lock(&mu);
    assert_int_equal(sync_done, 0);   /* still waiting for the running hook */
    release_hook = 1;
    pthread_cond_broadcast(&cv);
    while (!sync_done)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    pthread_join(tc, NULL);
    pthread_join(ts, NULL);
    assert_int_equal(sync_done, 1);
    assert_int_equal(post_ran, 1);   /* the removed hook's call finished normally */
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);
}

int main(void)
{
    const char *log = getenv("CUSHIM_LOG_FILE");
    if (log == NULL || truncate(log, 0) != 0) {   /* appended to since our constructor: start clean */
        fprintf(stderr, "rt_sdk_test: run with CUSHIM_LOG_FILE set to a writable file\n");
        return 1;
    }
    host = rt_host();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_definition_checks),
        cmocka_unit_test(test_option_errors),
        cmocka_unit_test(test_option_values),
        cmocka_unit_test(test_init_failure_undone),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_misc_slots),
        cmocka_unit_test(test_call_real),
        cmocka_unit_test(test_call_hooked),
        cmocka_unit_test(test_result_names),
        cmocka_unit_test(test_sync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
