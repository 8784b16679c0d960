/*
 * e2e_stress.c - 32 threads calling hooked and unhooked APIs while another thread adds and removes hooks.
 *
 * Nothing may crash or deadlock, and the counts must be exact: the fake
 * receives exactly the calls the threads made, a hook present for the whole
 * run sees exactly the calls of its API, and every transient hook sees as many
 * post as pre calls (a call that ran a pre hook runs the same chain's post
 * hooks). run_counts.sh then checks the shim's own counter against the fake.
 * Built and run under ThreadSanitizer by CUSHIM_SANITIZE=thread (docs/testing.md).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "e2e_common.h"

enum { NTHREADS = 32, NTRANSIENT = 64 };
static int iterations = 2000;

static CUcontext ctx;
static atomic_int stop;
static _Atomic uint64_t permanent_pre, permanent_post;

struct transient {
    _Atomic uint64_t pre, post;
};
static struct transient transients[NTRANSIENT];

static int perm_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u;
    *s = 42;
    permanent_pre++;
    return CUSHIM_CONTINUE;
}

static void perm_post(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u;
    if (*s == 42)
        permanent_post++;
}

static int tr_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)s;
    atomic_fetch_add(&((struct transient *)u)->pre, 1);
    return CUSHIM_CONTINUE;
}

static void tr_post(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)s;
    atomic_fetch_add(&((struct transient *)u)->post, 1);
}

static void *worker(void *arg)
{
    (void)arg;
    E2E_CU(cuCtxSetCurrent(ctx));
    for (int i = 0; i < iterations; i++) {
        size_t f, t;
        int n, v;
        CUcontext cur;
        CUdeviceptr d;
        E2E_CU(cuMemGetInfo_v2(&f, &t));      /* transient hooks come and go */
        E2E_CU(cuDeviceGetCount(&n));         /* transient hooks come and go */
        E2E_CU(cuCtxGetCurrent(&cur));        /* never hooked */
        E2E_CU(cuDriverGetVersion(&v));       /* never hooked */
        E2E_CU(cuMemAlloc_v2(&d, 128));       /* one hook for the whole run */
        E2E_CU(cuMemFree_v2(d));              /* never hooked */
    }
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    const char *names[] = {"cuMemGetInfo_v2", "cuDeviceGetCount"};
    uint64_t handles[NTRANSIENT];
    int live[NTRANSIENT] = {0};
    unsigned seed = 12345;
    for (int round = 0; !atomic_load(&stop); round++) {
        int k = (int)(rand_r(&seed) % NTRANSIENT);
        if (live[k]) {
            E2E_CU(e2e_unhook(handles[k]));
            live[k] = 0;
        } else if (e2e_hook(names[k % 2], k % 7, tr_pre, tr_post, &transients[k], &handles[k]) == CUSHIM_OK) {
            live[k] = 1;
        }
    }
    for (int k = 0; k < NTRANSIENT; k++)
        if (live[k])
            E2E_CU(e2e_unhook(handles[k]));
    return NULL;
}

int main(void)
{
    if (getenv("E2E_STRESS_ITERATIONS") != NULL)
        iterations = atoi(getenv("E2E_STRESS_ITERATIONS"));
    e2e_init("e2e_stress");
    CUdevice dev;
    E2E_CU(cuInit(0));
    E2E_CU(cuDeviceGet(&dev, 0));
    E2E_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    uint64_t perm = 0;
    if (e2e_shim())
        E2E_CU(e2e_hook("cuMemAlloc_v2", 0, perm_pre, perm_post, NULL, &perm));

    pthread_t th[NTHREADS], ch;
    int churning = e2e_shim() && pthread_create(&ch, NULL, churn, NULL) == 0;
    for (int i = 0; i < NTHREADS; i++)
        E2E_CHECK(pthread_create(&th[i], NULL, worker, NULL) == 0, "thread %d", i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    atomic_store(&stop, 1);
    if (churning)
        pthread_join(ch, NULL);

    uint64_t calls = (uint64_t)NTHREADS * (uint64_t)iterations;
    const char *apis[] = {"cuMemGetInfo_v2", "cuDeviceGetCount", "cuCtxGetCurrent", "cuDriverGetVersion",
                          "cuMemAlloc_v2", "cuMemFree_v2"};
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++) {
        uint64_t want = calls + (i == 1 ? 0 : 0);
        E2E_CHECK(e2e_fake_count(apis[i]) == want, "%s: the fake received %llu, the threads made %llu", apis[i],
                  (unsigned long long)e2e_fake_count(apis[i]), (unsigned long long)want);
    }
    if (e2e_shim()) {
        E2E_CHECK(permanent_pre == calls && permanent_post == calls, "permanent hook: %llu pre, %llu post, %llu calls",
                  (unsigned long long)permanent_pre, (unsigned long long)permanent_post, (unsigned long long)calls);
        uint64_t seen = 0;
        for (int k = 0; k < NTRANSIENT; k++) {
            E2E_CHECK(transients[k].pre == transients[k].post, "transient hook %d: %llu pre, %llu post", k,
                      (unsigned long long)transients[k].pre, (unsigned long long)transients[k].post);
            seen += transients[k].pre;
        }
        printf("e2e_stress: transient hooks saw %llu calls\n", (unsigned long long)seen);
        E2E_CU(e2e_unhook(perm));
    }
    return e2e_finish();
}
