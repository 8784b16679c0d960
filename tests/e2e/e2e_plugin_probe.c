/*
 * e2e_plugin_probe.c - a plugin for the tests of the plugin loader and of the
 * process lifecycle. Built several times (tests/e2e/CMakeLists.txt,
 * tests/unit/runtime.cmake) with -D switches that make it a broken plugin of
 * one kind or another.
 *
 * The good build hooks the APIs of its 'select' option and counts what it sees;
 * at flush it writes a report to its 'out' option:
 *     flush <pid>                  the flush ran
 *     flush_ns <ns>                when (host->now_ns)
 *     last <api>                   the last call its hooks saw
 *     seen <api> <n>               calls its hooks saw, per API
 *     fake <api> <n>               the fake driver's own count of that API, read at flush
 *     fork_child <n>               fork_child ran n times in this process
 *     opt <name> <value>           the options as read through the host table
 * Other options: fail_init=N (init returns N after registering a hook and a
 * TLS key), sleep_ms=N (init sleeps; 'started' file written first), cuda=1
 * (init calls cuDriverGetVersion itself, and from a SIGUSR1 handler raised in
 * init: calls made during initialisation on the initialising thread).
 *
 * Switches: PROBE_NAME, PROBE_ABI, PROBE_DEF_SIZE, PROBE_NO_ENTRY,
 * PROBE_BAD_DEFAULT, PROBE_REQUIRED (a required option 'need').
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cushim/cushim.h"

#ifndef PROBE_NAME
#define PROBE_NAME "probe"
#endif
#ifndef PROBE_ABI
#define PROBE_ABI CUSHIM_ABI_VERSION
#endif
#ifndef PROBE_DEF_SIZE
#define PROBE_DEF_SIZE sizeof(cushim_plugin_def)
#endif

#define PROBE_MAX_IDS 4096

static const cushim_host *host;
static cushim_plugin *me;
static _Atomic uint64_t seen[PROBE_MAX_IDS];
static _Atomic uint32_t last_id;
static _Atomic int forks;
static uint32_t tls_key;
static int init_cuda_ok, handler_cuda_ok;
static pid_t init_pid;

static int probe_pre(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    *slot = c->seq;
    if (c->api_id < PROBE_MAX_IDS)
        atomic_fetch_add(&seen[c->api_id], 1);
    atomic_store(&last_id, c->api_id);
    return CUSHIM_CONTINUE;
}

static void probe_post(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user;
    if (*slot != c->seq)
        host->log(me, CUSHIM_LOG_ERROR, "post hook: slot %llu, seq %llu", (unsigned long long)*slot,
                  (unsigned long long)c->seq);
}

typedef int (*probe_version_fn)(int *);
static probe_version_fn probe_cuda(void)
{
    return (probe_version_fn)dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
}

static void probe_on_usr1(int sig)
{
    (void)sig;
    int v = 0;
    probe_version_fn f = probe_cuda();
    handler_cuda_ok = f != NULL && f(&v) == 0 && v > 0;
}

static int probe_init(const cushim_host *h, cushim_plugin *self)
{
    host = h;
    me = self;
    init_pid = getpid();
    if (!CUSHIM_HOST_HAS(h, plugin_register))
        return 1;
    host->plugin_set_data(self, &forks);
    int64_t ms = host->opt_int(self, "sleep_ms");
    if (ms > 0) {
        const char *started = host->opt_string(self, "started");
        if (started != NULL) {
            int fd = open(started, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0)
                close(fd);
        }
        struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    cushim_hook_spec spec = { .size = sizeof spec, .select = host->opt_string(self, "select"), .pre = probe_pre,
                              .post = probe_post };
    uint64_t group;
    int rc = host->hooks_add(self, &spec, &group);
    if (rc != CUSHIM_OK) {
        host->log(self, CUSHIM_LOG_ERROR, "hooks_add(%s) = %d", spec.select, rc);
        return 2;
    }
    if (host->tls_create(self, free, &tls_key) != CUSHIM_OK)
        return 3;
    if (host->opt_bool(self, "cuda")) {
        int v = 0;
        probe_version_fn f = probe_cuda();
        init_cuda_ok = f != NULL && f(&v) == 0 && v > 0;
        struct sigaction sa = { .sa_handler = probe_on_usr1 };
        sigaction(SIGUSR1, &sa, NULL);
        raise(SIGUSR1);
        host->log(self, CUSHIM_LOG_WARN, "init: CUDA call %s, from a signal handler %s",
                  init_cuda_ok ? "ok" : "FAILED", handler_cuda_ok ? "ok" : "FAILED");
    }
    int64_t fail = host->opt_int(self, "fail_init");
    if (fail != 0)
        host->log(self, CUSHIM_LOG_ERROR, "failing init on purpose (%lld)", (long long)fail);
    return (int)fail;
}

static void probe_fork_child(cushim_plugin *self)
{
    (void)self;
    atomic_fetch_add(&forks, 1);
    for (int i = 0; i < PROBE_MAX_IDS; i++)   /* the child reports its own calls */
        atomic_store(&seen[i], 0);
}

typedef uint64_t (*probe_count_fn)(const char *);
static probe_count_fn probe_fake_counter(void)
{
    void *f = dlsym(RTLD_DEFAULT, "fake_cuda_call_count");
    /* Drop-in mode: the fake is loaded RTLD_LOCAL by the shim, by the path the tests give. */
    const char *paths[] = { getenv("E2E_FAKE_LIBCUDA"), "libcuda.so.1" };
    for (int i = 0; i < 2 && f == NULL; i++) {
        void *h = paths[i] ? dlopen(paths[i], RTLD_NOW | RTLD_NOLOAD) : NULL;
        if (h != NULL)
            f = dlsym(h, "fake_cuda_call_count");
    }
    return (probe_count_fn)f;
}

static void probe_flush(cushim_plugin *self)
{
    const char *out = host->opt_string(self, "out");
    if (out == NULL)
        return;
    char path[4096];
    if (getpid() == init_pid)   /* a forked child reports to <out>.<pid> */
        snprintf(path, sizeof path, "%s", out);
    else
        snprintf(path, sizeof path, "%s.%d", out, (int)getpid());
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f, "flush %d\n", (int)getpid());
    fprintf(f, "flush_ns %llu\n", (unsigned long long)host->now_ns());
    const cushim_api_info *last = host->api_by_id(atomic_load(&last_id));
    fprintf(f, "last %s\n", last ? last->name : "-");
    probe_count_fn fake = probe_fake_counter();
    for (uint32_t id = 1; id < PROBE_MAX_IDS && id < host->api_id_limit(); id++) {
        uint64_t n = atomic_load(&seen[id]);
        const cushim_api_info *a = host->api_by_id(id);
        if (a == NULL)
            continue;
        if (n != 0)
            fprintf(f, "seen %s %llu\n", a->name, (unsigned long long)n);
        uint64_t k = fake != NULL && a->library == CUSHIM_LIB_DRIVER ? fake(a->name) : 0;
        if (k != 0)
            fprintf(f, "fake %s %llu\n", a->name, (unsigned long long)k);
    }
    fprintf(f, "fork_child %d\n", atomic_load(&forks));
    fprintf(f, "opt name %s\n", host->plugin_name(self));
    fprintf(f, "opt count %lld\n", (long long)host->opt_int(self, "count"));
    fprintf(f, "opt on %d\n", host->opt_bool(self, "on"));
    fprintf(f, "opt ratio %g\n", host->opt_double(self, "ratio"));
    fprintf(f, "opt limit %llu\n", (unsigned long long)host->opt_bytes(self, "limit"));
    fprintf(f, "opt text %s\n", host->opt_string(self, "text"));
    for (uint32_t i = 0; i < host->opt_count(self, "tag"); i++)
        fprintf(f, "opt tag %s\n", host->opt_string_at(self, "tag", i));
    fprintf(f, "opt data %s\n", host->plugin_data(self) == &forks ? "ok" : "wrong");
    fprintf(f, "init_cuda %d %d\n", init_cuda_ok, handler_cuda_ok);
    fclose(f);
}

static const cushim_option probe_options[] = {
    { .name = "out", .type = CUSHIM_OPT_STRING, .help = "report file written at flush" },
    { .name = "select", .type = CUSHIM_OPT_STRING, .default_value = "lib:driver", .help = "APIs to hook" },
    { .name = "count", .type = CUSHIM_OPT_INT, .default_value = "7", .help = "an int" },
    { .name = "on", .type = CUSHIM_OPT_BOOL, .default_value = "yes", .help = "a bool" },
    { .name = "ratio", .type = CUSHIM_OPT_DOUBLE, .default_value = "0.5", .help = "a double" },
#ifdef PROBE_BAD_DEFAULT
    { .name = "limit", .type = CUSHIM_OPT_BYTES, .default_value = "lots", .help = "bytes" },
#else
    { .name = "limit", .type = CUSHIM_OPT_BYTES, .default_value = "1M", .help = "bytes" },
#endif
    { .name = "text", .type = CUSHIM_OPT_STRING, .help = "a string (may hold , ; : =)" },
    { .name = "tag", .type = CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT, .help = "repeatable" },
#ifdef PROBE_REQUIRED
    { .name = "need", .type = CUSHIM_OPT_STRING | CUSHIM_OPT_REQUIRED, .help = "required" },
#endif
    { .name = "fail_init", .type = CUSHIM_OPT_INT, .default_value = "0", .help = "init's return value" },
    { .name = "sleep_ms", .type = CUSHIM_OPT_INT, .default_value = "0", .help = "init sleeps" },
    { .name = "started", .type = CUSHIM_OPT_STRING, .help = "file created when a sleeping init starts" },
    { .name = "cuda", .type = CUSHIM_OPT_BOOL, .default_value = "no", .help = "init calls CUDA" },
    { .name = NULL },
};

static const cushim_plugin_def probe_def = {
    .size = PROBE_DEF_SIZE,
    .abi_version = PROBE_ABI,
    .name = PROBE_NAME,
    .version = "1.0",
    .description = "test probe: counts what its hooks see, reports at flush",
    .options = probe_options,
    .init = probe_init,
    .flush = probe_flush,
    .fork_child = probe_fork_child,
};

#ifndef PROBE_NO_ENTRY
CUSHIM_PLUGIN(probe_def)
#else
__attribute__((visibility("default"))) const void *probe_not_an_entry(void)
{
    return &probe_def;
}
#endif
