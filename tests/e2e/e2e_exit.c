/*
 * e2e_exit.c - CUDA calls until the very end of the process are counted, and
 * plugins flush after the last of them (issue #10 item 4).
 *
 * Linked with e2e_exit_lib, whose destructor and an atexit handler registered
 * before the shim initialised make CUDA calls; this program registers another
 * handler after the shim initialised. run_exit.sh runs it with the counter on
 * and the probe plugin loaded, then checks that the counts file equals the
 * fake driver's own counts as the probe read them at flush, and that the
 * probe's hooks had seen every one of those calls.
 *
 * Also: a thread is inside a hook callback (a slow one) when main returns.
 * The exit waits for it before plugins flush, and its post hook no longer runs
 * after the flush: an in-process plugin ("exit-order") checks both and says
 * so on stderr from its flush. Registered after the probe, it flushes first.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "e2e_common.h"

static atomic_int slow_started, slow_done, flushed, post_after_flush;

static int slow_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    atomic_store(&slow_started, 1);
    struct timespec ts = { 0, 300000000 };
    nanosleep(&ts, NULL);
    atomic_store(&slow_done, 1);
    return CUSHIM_CONTINUE;
}

static void slow_post(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    if (atomic_load(&flushed))
        atomic_store(&post_after_flush, 1);
}

static void order_flush(cushim_plugin *self)
{
    (void)self;
    atomic_store(&flushed, 1);
    fprintf(stderr, "exit-order: the running hook had %s before the flush\n",
            atomic_load(&slow_done) ? "finished" : "NOT finished");
    fprintf(stderr, "exit-order: flush_ns %llu\n", (unsigned long long)e2e_host()->now_ns());
}

static void *slow_caller(void *arg)
{
    (void)arg;
    CUcontext ctx;
    cuCtxGetCurrent(&ctx);
    if (atomic_load(&post_after_flush))
        fprintf(stderr, "exit-order: FAIL: a post hook ran after the flush\n");
    return NULL;
}

static void exit_order_plugin(void)
{
    const cushim_host *host = e2e_host();
    if (host == NULL)
        return;
    static const cushim_plugin_def def = { .size = sizeof def, .abi_version = CUSHIM_ABI_VERSION,
                                           .name = "exit-order", .flush = order_flush };
    cushim_plugin *self = NULL;
    char err[256] = "";
    cushim_hook_spec spec = { .size = sizeof spec, .select = "cuCtxGetCurrent", .pre = slow_pre, .post = slow_post };
    uint64_t g;
    E2E_CHECK(host->plugin_register(&def, NULL, &self, err, sizeof err) == CUSHIM_OK &&
                  host->hooks_add(self, &spec, &g) == CUSHIM_OK, "exit-order plugin: %s", err);
    pthread_t t;
    E2E_CHECK(pthread_create(&t, NULL, slow_caller, NULL) == 0, "thread");
    while (!atomic_load(&slow_started)) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    pthread_detach(t);   /* main returns while it sleeps in the hook */
}

int e2e_exit_lib_setup(void);

static void late_handler(void)
{
    int n = 0;
    for (int i = 0; i < 5; i++)
        if (cuDeviceGetCount(&n) != CUDA_SUCCESS) {
            fprintf(stderr, "e2e_exit: FAIL: cuDeviceGetCount in the late atexit handler\n");
            _Exit(1);
        }
}

int main(void)
{
    e2e_init("e2e_exit");
    E2E_CHECK(e2e_exit_lib_setup() == 0, "the library's CUDA set-up failed");
    atexit(late_handler);
    int v = 0;
    E2E_CU(cuDriverGetVersion(&v));
    exit_order_plugin();
    return e2e_finish();
}
