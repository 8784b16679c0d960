/*
 * e2e_common.c - checks and the call recorder of the end-to-end programs (see e2e_common.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

typedef int (*hook_add_fn)(uint32_t, int, cushim_pre_fn, cushim_post_fn, void *, uint64_t *);
typedef int (*hook_remove_fn)(uint64_t);
typedef const cushim_api_info *(*by_id_fn)(uint32_t);
typedef const cushim_api_info *(*by_name_fn)(const char *);
typedef uint32_t (*limit_fn)(void);

static struct {
    hook_add_fn add;
    hook_remove_fn remove;
    by_id_fn by_id;
    by_name_fn by_name;
    limit_fn limit;
} sh;

static const char *e2e_program = "e2e";
static atomic_int e2e_nfail;
static int e2e_nchecks;

struct rec {
    _Atomic uint64_t pre, post;
    _Atomic int result;
    _Alignas(16) unsigned char params[512];   /* holds any cushim_params_<name> */
};
static struct rec e2e_recs[CUSHIM_API_ID_LIMIT];

void e2e_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: FAIL %s:%d: ", e2e_program, file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    atomic_fetch_add(&e2e_nfail, 1);
}

void e2e_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "    ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int e2e_failures(void)
{
    return atomic_load(&e2e_nfail);
}

int e2e_init(const char *program)
{
    e2e_program = program;
    sh.add = (hook_add_fn)dlsym(RTLD_DEFAULT, "cushim_hook_add");
    sh.remove = (hook_remove_fn)dlsym(RTLD_DEFAULT, "cushim_hook_remove");
    sh.by_id = (by_id_fn)dlsym(RTLD_DEFAULT, "cushim_api_by_id");
    sh.by_name = (by_name_fn)dlsym(RTLD_DEFAULT, "cushim_api_by_name");
    sh.limit = (limit_fn)dlsym(RTLD_DEFAULT, "cushim_api_id_limit");
    int present = sh.add && sh.remove && sh.by_id && sh.by_name && sh.limit;
    if (!present)
        memset(&sh, 0, sizeof sh);
    const char *want = getenv("E2E_EXPECT_SHIM");
    if (want != NULL && strcmp(want, "1") == 0 && !present)
        e2e_fail(__FILE__, __LINE__, "E2E_EXPECT_SHIM=1 but cushim_hook_add is not in the process");
    if (want != NULL && strcmp(want, "0") == 0 && present)
        e2e_fail(__FILE__, __LINE__, "E2E_EXPECT_SHIM=0 but the shim is in the process");
    if (present && sh.limit() != CUSHIM_API_ID_LIMIT)
        e2e_fail(__FILE__, __LINE__, "shim built for %u ids, this program for %u", sh.limit(),
                 (unsigned)CUSHIM_API_ID_LIMIT);
    return present;
}

int e2e_shim(void)
{
    return sh.add != NULL;
}

uint32_t e2e_id(const char *name)
{
    const cushim_api_info *a = sh.by_name ? sh.by_name(name) : NULL;
    return a ? a->id : 0;
}

static int rec_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    struct rec *r = &e2e_recs[call->api_id];
    if (call->info != NULL && call->info->params_size <= sizeof r->params)
        memcpy(r->params, call->params, call->info->params_size);
    atomic_fetch_add(&r->pre, 1);
    return CUSHIM_CONTINUE;
}

static void rec_post(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    struct rec *r = &e2e_recs[call->api_id];
    if (call->info != NULL && call->info->ret_kind != CUSHIM_RET_OTHER)
        atomic_store(&r->result, cushim_call_result(call));
    atomic_fetch_add(&r->post, 1);
}

void e2e_record(unsigned libs)
{
    if (!e2e_shim())
        return;
    for (uint32_t id = 1; id < CUSHIM_API_ID_LIMIT; id++) {
        const cushim_api_info *a = sh.by_id(id);
        if (a == NULL)
            continue;
        unsigned lib = a->library == CUSHIM_LIB_DRIVER ? E2E_LIB_DRIVER : E2E_LIB_RUNTIME;
        if (!(libs & lib))
            continue;
        uint64_t h;
        /* Priority 1000: after hooks the program adds itself (which may modify parameters). */
        int r = sh.add(id, 1000, rec_pre, rec_post, NULL, &h);
        if (r != CUSHIM_OK)
            e2e_fail(__FILE__, __LINE__, "cushim_hook_add(%s) = %d", a->name, r);
    }
}

static struct rec *rec_of(const char *name)
{
    uint32_t id = e2e_id(name);
    if (id == 0 && e2e_shim())
        e2e_fail(__FILE__, __LINE__, "the shim does not know '%s'", name);
    return id ? &e2e_recs[id] : NULL;
}

uint64_t e2e_pre(const char *name)
{
    struct rec *r = rec_of(name);
    return r ? atomic_load(&r->pre) : 0;
}

uint64_t e2e_post(const char *name)
{
    struct rec *r = rec_of(name);
    return r ? atomic_load(&r->post) : 0;
}

const void *e2e_last_params(const char *name)
{
    struct rec *r = rec_of(name);
    return r && atomic_load(&r->pre) ? r->params : NULL;
}

int e2e_last_result(const char *name)
{
    struct rec *r = rec_of(name);
    return r ? atomic_load(&r->result) : -1;
}

int e2e_hook(const char *name, int priority, cushim_pre_fn pre, cushim_post_fn post, void *user,
             uint64_t *handle)
{
    uint32_t id = e2e_id(name);
    if (id == 0)
        return CUSHIM_EINVAL;
    return sh.add(id, priority, pre, post, user, handle);
}

int e2e_unhook(uint64_t handle)
{
    return sh.remove ? sh.remove(handle) : CUSHIM_EINVAL;
}

/* The fake's inspection functions, wherever the fake was loaded from. */
void *e2e_fake_sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p != NULL)
        return p;
    const char *paths[] = {getenv("E2E_FAKE_LIBCUDA"), getenv("E2E_FAKE_LIBCUDART"), "libcuda.so.1",
                           "libcudart.so.13"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (paths[i] == NULL)
            continue;
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        p = dlsym(h, name);
        dlclose(h);
        if (p != NULL)
            return p;
    }
    return NULL;
}

typedef uint64_t (*count_fn)(const char *);

/* A fake library's call counter, looked up once; 'sym' names it, 'lib' says which library. */
static uint64_t fake_counter(count_fn *cache, const char *sym, const char *lib, const char *name)
{
    if (*cache == NULL)
        *cache = (count_fn)e2e_fake_sym(sym);
    if (*cache == NULL) {
        e2e_fail(__FILE__, __LINE__, "%s not found: is the fake %s loaded?", sym, lib);
        return 0;
    }
    return (*cache)(name);
}

uint64_t e2e_fake_count(const char *name)
{
    static count_fn f;
    return fake_counter(&f, "fake_cuda_call_count", "libcuda", name);
}

uint64_t e2e_fake_rt_count(const char *name)
{
    static count_fn f;
    return fake_counter(&f, "fake_cudart_call_count", "libcudart", name);
}

static int is_runtime_name(const char *name)
{
    return strncmp(name, "cuda", 4) == 0;
}

void e2e_expect(const char *name, uint64_t n)
{
    e2e_nchecks++;
    uint64_t fake = is_runtime_name(name) ? e2e_fake_rt_count(name) : e2e_fake_count(name);
    if (fake != n)
        e2e_fail(__FILE__, __LINE__, "%s: the fake received %llu calls, expected %llu", name,
                 (unsigned long long)fake, (unsigned long long)n);
    if (!e2e_shim())
        return;
    uint64_t pre = e2e_pre(name), post = e2e_post(name);
    if (pre != n || post != n)
        e2e_fail(__FILE__, __LINE__, "%s: hooks saw %llu pre / %llu post calls, expected %llu", name,
                 (unsigned long long)pre, (unsigned long long)post, (unsigned long long)n);
}

void e2e_expect_hooks_match_fake(unsigned libs)
{
    if (!e2e_shim())
        return;
    for (uint32_t id = 1; id < CUSHIM_API_ID_LIMIT; id++) {
        const cushim_api_info *a = sh.by_id(id);
        if (a == NULL)
            continue;
        int drv = a->library == CUSHIM_LIB_DRIVER;
        if (!(libs & (drv ? E2E_LIB_DRIVER : E2E_LIB_RUNTIME)))
            continue;
        uint64_t fake = drv ? e2e_fake_count(a->name) : e2e_fake_rt_count(a->name);
        uint64_t pre = atomic_load(&e2e_recs[id].pre), post = atomic_load(&e2e_recs[id].post);
        if (pre != fake || post != fake)
            e2e_fail(__FILE__, __LINE__, "%s: hooks saw %llu pre / %llu post, the fake received %llu", a->name,
                     (unsigned long long)pre, (unsigned long long)post, (unsigned long long)fake);
    }
}

int e2e_finish(void)
{
    int f = e2e_failures();
    printf("%s: %s (%s)\n", e2e_program, f ? "FAILED" : "ok", e2e_shim() ? "with shim" : "without shim");
    fflush(stdout);
    return f ? 1 : 0;
}
