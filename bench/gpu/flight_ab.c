/*
 * flight_ab.c - the flight recorder's A/B copy (a bench-only build: target flight_ab,
 * plugins/flight/CMakeLists.txt, <build>/plugins-ab/flight.so; never installed): the shipped recorder
 * (plugins/flight, compiled unchanged, its entry point renamed) behind a proxy of the host table that keeps the
 * hook groups the recorder adds, so that each SIGUSR2 removes them all or adds them again. One process then
 * times the recorder against the shim with no hook in alternating blocks: bench/gpu/launch_bench.c (BENCH_AB_VS:
 * cuCtxGetCurrent and empty launches, beside the empty CUPTI callback) and tests/gpu/trace/trace_gpu.py abbench
 * (the PyTorch steps) send the signal; tests/gpu/checks/flight.sh 'flightab' runs both.
 *
 *   CUSHIM_PLUGINS='<build>/plugins-ab/flight.so:dir=/dev/shm,signal=off,ab_paused=1'
 *
 * Options: the recorder's, and ab_paused (start with the hooks removed, as BENCH_AB_VS wants). signal=off: the
 * recorder's own SIGUSR2 dump would take the toggle's signal. The switch is made by a helper thread (a signal
 * handler may not take the host's hook lock), within microseconds of the signal; the callers leave a gap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cushim/cushim.h>

/* flight.c's entry point, renamed for this copy (-Dcushim_plugin_entry=fl_ab_inner_entry) */
const cushim_plugin_def *fl_ab_inner_entry(void);
#undef cushim_plugin_entry

#define AB_GROUPS 8
#define AB_OPTIONS 40

static struct {
    const cushim_host *real;
    cushim_host proxy;
    cushim_plugin *self;
    const cushim_plugin_def *inner;
    struct {
        cushim_hook_spec spec;
        char *select;
        uint64_t *group;   /* the recorder's own variable: it always holds the group now in force */
    } g[AB_GROUPS];
    int n, on;
    sem_t sem;
    _Atomic unsigned long switches, failures;   /* switches: by a signal */
} ab;

static int ab_hooks_add(cushim_plugin *self, const cushim_hook_spec *spec, uint64_t *group)
{
    int rc = ab.real->hooks_add(self, spec, group);
    if (rc == CUSHIM_OK && group != NULL && ab.n < AB_GROUPS) {
        size_t n = spec->size < sizeof ab.g[0].spec ? spec->size : sizeof ab.g[0].spec;
        memset(&ab.g[ab.n].spec, 0, sizeof ab.g[ab.n].spec);
        memcpy(&ab.g[ab.n].spec, spec, n);
        ab.g[ab.n].select = spec->select != NULL ? strdup(spec->select) : NULL;
        if (spec->select != NULL && ab.g[ab.n].select == NULL)
            return rc;   /* not kept: it stays in, untoggled (out of memory) */
        ab.g[ab.n].spec.select = ab.g[ab.n].select;
        ab.g[ab.n].group = group;
        ab.n++;
    } else if (rc == CUSHIM_OK && group != NULL) {
        atomic_fetch_add(&ab.failures, 1);   /* more groups than kept: the comparison would be wrong */
    }
    return rc;
}

/* Every kept group removed (on 0) or added again (on 1). */
static void ab_set(int on)
{
    if (on == ab.on)
        return;
    for (int i = 0; i < ab.n; i++) {
        int rc = on ? ab.real->hooks_add(ab.self, &ab.g[i].spec, ab.g[i].group)
                    : ab.real->hooks_remove(ab.self, *ab.g[i].group);
        if (rc != CUSHIM_OK)
            atomic_fetch_add(&ab.failures, 1);
    }
    ab.on = on;
}

static void *ab_thread(void *arg)
{
    (void)arg;
    for (;;) {
        while (sem_wait(&ab.sem) != 0 && errno == EINTR)
            ;
        ab_set(!ab.on);
        atomic_fetch_add(&ab.switches, 1);   /* the signals' switches (not ab_paused's at start) */
    }
    return NULL;
}

static void ab_signal(int sig)
{
    int e = errno;
    (void)sig;
    sem_post(&ab.sem);   /* async-signal-safe */
    errno = e;
}

static int ab_init(const cushim_host *host, cushim_plugin *self)
{
    size_t n = host->size < sizeof ab.proxy ? host->size : sizeof ab.proxy;
    struct sigaction sa;
    pthread_attr_t at;
    pthread_t th;
    sigset_t all, old;
    int rc;
    memcpy(&ab.proxy, host, n);
    ab.proxy.hooks_add = ab_hooks_add;
    ab.real = host;
    ab.self = self;
    if (ab.inner->init(&ab.proxy, self) != 0)
        return -1;
    ab.on = 1;
    if (host->opt_bool(self, "ab_paused"))
        ab_set(0);   /* before the helper thread exists: it alone switches from here on */
    if (sem_init(&ab.sem, 0, 0) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "A/B copy: sem_init: %s", strerror(errno));
        return -1;
    }
    /* the helper thread takes no signal: the program's threads do, and only post */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &at, ab_thread, NULL);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "A/B copy: pthread_create: %s", strerror(rc));
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ab_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR2, &sa, NULL) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "A/B copy: sigaction(SIGUSR2): %s", strerror(errno));
        return -1;
    }
    host->log(self, CUSHIM_LOG_INFO, "A/B copy: each SIGUSR2 removes or adds again the recorder's %d hook groups "
                                     "(now %s)", ab.n, ab.on ? "in" : "out");
    return 0;
}

static void ab_flush(cushim_plugin *self)
{
    ab.real->log(self, CUSHIM_LOG_INFO, "A/B copy: %lu switches, %lu failures", atomic_load(&ab.switches),
                 atomic_load(&ab.failures));
    if (ab.inner->flush != NULL)
        ab.inner->flush(self);
}

static cushim_option ab_options[AB_OPTIONS];
static cushim_plugin_def ab_def;

static const cushim_plugin_def *ab_def_get(void)
{
    if (ab_def.size == 0) {
        const cushim_option *o;
        int k = 0;
        ab.inner = fl_ab_inner_entry();
        for (o = ab.inner->options; o != NULL && o->name != NULL && k < AB_OPTIONS - 2; o++)
            ab_options[k++] = *o;
        ab_options[k++] = (cushim_option){"ab_paused", CUSHIM_OPT_BOOL, "false",
                                          "A/B copy: start with the recorder's hooks removed (SIGUSR2 adds them)"};
        ab_options[k] = (cushim_option){NULL, 0, NULL, NULL};
        ab_def = *ab.inner;
        ab_def.description = "the flight recorder's A/B copy (bench only): SIGUSR2 removes or adds its hooks";
        ab_def.options = ab_options;
        ab_def.init = ab_init;
        ab_def.flush = ab_flush;
    }
    return &ab_def;
}

CUSHIM_PLUGIN(*ab_def_get())
