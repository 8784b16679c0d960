/*
 * e2e_common.c - checks and the call recorder of the end-to-end programs (see e2e_common.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_common.h"

static const cushim_host *sh;        /* the shim's host table, NULL without the shim */
static cushim_plugin *sh_self;        /* this program, registered as plugin "e2e" */

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
    cushim_host_get_fn get = (cushim_host_get_fn)dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME);
    sh = get ? get(CUSHIM_ABI_VERSION) : NULL;
    int present = sh != NULL;
    const char *want = getenv("E2E_EXPECT_SHIM");
    if (want != NULL && strcmp(want, "1") == 0 && !present)
        e2e_fail(__FILE__, __LINE__, "E2E_EXPECT_SHIM=1 but cushim_host_get is not in the process");
    if (want != NULL && strcmp(want, "0") == 0 && present)
        e2e_fail(__FILE__, __LINE__, "E2E_EXPECT_SHIM=0 but the shim is in the process");
    if (present && sh->api_id_limit() != CUSHIM_API_ID_LIMIT)
        e2e_fail(__FILE__, __LINE__, "shim built for %u ids, this program for %u", sh->api_id_limit(),
                 (unsigned)CUSHIM_API_ID_LIMIT);
    if (present) {
        static const cushim_plugin_def def = { .size = sizeof def, .abi_version = CUSHIM_ABI_VERSION,
                                               .name = "e2e", .version = "test",
                                               .description = "the end-to-end program itself" };
        char err[256] = "";
        if (sh->plugin_register(&def, NULL, &sh_self, err, sizeof err) != CUSHIM_OK) {
            e2e_fail(__FILE__, __LINE__, "plugin_register: %s", err);
            sh = NULL;
            present = 0;
        }
    }
    return present;
}

int e2e_shim(void)
{
    return sh != NULL;
}

const cushim_host *e2e_host(void)
{
    return sh;
}

cushim_plugin *e2e_self(void)
{
    return sh_self;
}

uint32_t e2e_id(const char *name)
{
    const cushim_api_info *a = sh ? sh->api_by_name(name) : NULL;
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
    /* One group per library: the selector does the enumeration. Priority 1000:
       after hooks the program adds itself (which may modify parameters). */
    const char *sel[] = { "lib:driver", "lib:runtime" };
    for (unsigned k = 0; k < 2; k++) {
        if (!(libs & (k == 0 ? E2E_LIB_DRIVER : E2E_LIB_RUNTIME)))
            continue;
        cushim_hook_spec spec = { .size = sizeof spec, .select = sel[k], .priority = 1000, .pre = rec_pre,
                                  .post = rec_post };
        uint64_t g;
        int r = sh->hooks_add(sh_self, &spec, &g);
        if (r != CUSHIM_OK)
            e2e_fail(__FILE__, __LINE__, "hooks_add(%s) = %d", sel[k], r);
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
    cushim_hook_spec spec = { .size = sizeof spec, .api_id = id, .priority = priority, .pre = pre, .post = post,
                              .user = user };
    return sh->hooks_add(sh_self, &spec, handle);
}

int e2e_unhook(uint64_t handle)
{
    return sh ? sh->hooks_remove(sh_self, handle) : CUSHIM_EINVAL;
}

/* The fake's inspection functions, wherever the fake was loaded from. */
void *e2e_fake_sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p != NULL)
        return p;
    const char *paths[] = {getenv("E2E_FAKE_LIBCUDA"), getenv("E2E_FAKE_LIBCUDART"), "libcuda.so.1",
                           E2E_CUDART_SONAME};
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
        const cushim_api_info *a = sh->api_by_id(id);
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

int e2e_log_lines(const char *needle)
{
    const char *path = getenv("CUSHIM_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[4096], me[64];
    int n = 0;
    if (f == NULL)
        return -1;
    snprintf(me, sizeof me, "cushim[%d] ", (int)getpid());
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, me, strlen(me)) == 0 && strstr(line, needle) != NULL)
            n++;
    fclose(f);
    return n;
}
