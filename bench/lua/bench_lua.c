/*
 * bench_lua.c - cost and thread scaling of a Lua policy hook on cuCtxGetCurrent (bench/lua/run.sh).
 *
 * USAGE: cushim_bench_lua MODE percall ITERS RUNS    median ns per call of RUNS runs of ITERS calls
 *        cushim_bench_lua MODE scale MAXT ITERS      1, 2, 4, ... MAXT threads, ITERS calls each:
 *                                                   total calls per second and the speedup over 1 thread
 * MODE: none (whatever CUSHIM_PLUGINS says, e.g. the lua plugin, or nothing), or c (an empty C pre and
 * post hook registered in-process through cushim_host_get: the reference the Lua hook is compared with).
 * libcuda.so.1 is found by the loader: the fake driver in CI (LD_LIBRARY_PATH), the real one on a GPU
 * machine. Each thread makes the primary context of device 0 current first. Prints one line per result.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cushim/cushim.h>

typedef int (*get_fn)(void **);
static get_fn ctx_get;
static int (*ctx_set)(void *);
static void *ctx;
static long iters;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int empty_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    return CUSHIM_CONTINUE;
}
static void empty_post(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
}
static int c_init(const cushim_host *h, cushim_plugin *self)
{
    const cushim_api_info *api = h->api_by_name("cuCtxGetCurrent");
    cushim_hook_spec spec = {.size = sizeof spec, .api_id = api ? api->id : 0, .pre = empty_pre, .post = empty_post};
    uint64_t g;
    return api && h->hooks_add(self, &spec, &g) == CUSHIM_OK ? 0 : -1;
}
static const cushim_plugin_def c_def = {
    .size = sizeof(cushim_plugin_def), .abi_version = CUSHIM_ABI_VERSION, .name = "bench-empty",
    .version = "1", .description = "empty pre+post hook on cuCtxGetCurrent", .init = c_init,
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *worker(void *arg)
{
    void *c;
    (void)arg;
    ctx_set(ctx);
    for (long i = 0; i < iters; i++)
        ctx_get(&c);
    return NULL;
}

int main(int argc, char **argv)
{
    void *lib;
    int (*init)(unsigned), (*dev_get)(int *, int), (*retain)(void **, int);
    int dev = 0;
    if (argc < 5) {
        fprintf(stderr, "usage: %s none|c percall ITERS RUNS | scale MAXT ITERS\n", argv[0]);
        return 2;
    }
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "bench_lua: %s\n", dlerror());
        return 1;
    }
    *(void **)&init = dlsym(lib, "cuInit");
    *(void **)&dev_get = dlsym(lib, "cuDeviceGet");
    *(void **)&retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&ctx_set = dlsym(lib, "cuCtxSetCurrent");
    *(void **)&ctx_get = dlsym(lib, "cuCtxGetCurrent");
    if (!init || !dev_get || !retain || !ctx_set || !ctx_get || init(0) != 0 || dev_get(&dev, 0) != 0 ||
        retain(&ctx, dev) != 0) {
        fprintf(stderr, "bench_lua: no usable CUDA driver\n");
        return 1;
    }
    if (!strcmp(argv[1], "c")) {
        cushim_host_get_fn get;
        const cushim_host *h;
        char err[256];
        *(void **)&get = dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME);
        h = get ? get(CUSHIM_ABI_VERSION) : NULL;
        if (h == NULL || h->plugin_register(&c_def, "", NULL, err, sizeof err) != CUSHIM_OK) {
            fprintf(stderr, "bench_lua: mode c needs the shim preloaded\n");
            return 1;
        }
    }
    ctx_set(ctx);
    if (!strcmp(argv[2], "percall")) {
        int runs = atoi(argv[4]);
        double *ns = calloc((size_t)runs, sizeof *ns);
        void *c;
        iters = atol(argv[3]);
        for (long i = 0; i < 1000; i++)   /* warm-up: this thread's Lua state, caches */
            ctx_get(&c);
        for (int r = 0; r < runs; r++) {
            double t0 = now();
            for (long i = 0; i < iters; i++)
                ctx_get(&c);
            ns[r] = (now() - t0) * 1e9 / (double)iters;
        }
        qsort(ns, (size_t)runs, sizeof *ns, cmp);
        printf("percall %s %.1f ns (median of %d runs of %ld; min %.1f max %.1f)\n", argv[1], ns[runs / 2], runs,
               iters, ns[0], ns[runs - 1]);
        return 0;
    }
    if (!strcmp(argv[2], "scale")) {
        int maxt = atoi(argv[3]);
        double base = 0;
        pthread_t th[256];
        iters = atol(argv[4]);
        for (int t = 1; t <= maxt && t <= 256; t *= 2) {
            double t0 = now(), rate;
            for (int i = 0; i < t; i++)
                pthread_create(&th[i], NULL, worker, NULL);
            for (int i = 0; i < t; i++)
                pthread_join(th[i], NULL);
            rate = (double)t * (double)iters / (now() - t0);
            if (t == 1)
                base = rate;
            printf("scale %s threads %d calls_per_s %.0f speedup %.2f\n", argv[1], t, rate, rate / base);
            if (t < maxt && t * 2 > maxt)
                t = maxt / 2;   /* end on maxt itself */
        }
        return 0;
    }
    fprintf(stderr, "bench_lua: unknown command %s\n", argv[2]);
    return 2;
}
