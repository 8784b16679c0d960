/*
 * e2e_lua.c - a program for the Lua policy end-to-end tests (run_lua.sh): it makes the CUDA calls its
 * arguments name, in order, and prints one line per step, so that a test can compare what a policy did.
 *
 *   e2e_lua STEP...      STEP is one of
 *     init              cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent: "init R"
 *     alloc N SIZE      N x cuMemAlloc(SIZE): "alloc R1 ... RN" (successful pointers are kept)
 *     free              cuMemFree of every kept pointer: "free R1 ... RN"
 *     cudamalloc N SIZE N x cudaMalloc(SIZE): "cudamalloc R1 ... RN"
 *     sync N            N x cuCtxSynchronize: "sync R1 ... RN"
 *     stream FLAGS      cuStreamCreate(FLAGS) then cuStreamGetFlags: "stream R FLAGS-SEEN"
 *     launch NAME N     a module's function NAME launched N times: "launch R1 ... RN"
 *     drv               cuDriverGetVersion: "drv R VERSION"
 *     attr A            cuDeviceGetAttribute(A, device 0): "attr R VALUE"
 *     launchex NAME GX  cuLaunchKernelEx of NAME with gridDimX GX, 32 threads: "launchex R"
 *     count             cuDeviceGetCount: "count R COUNT"
 *     fork              fork(); the child makes one cuCtxSynchronize ("child R") and exits; then "fork STATUS"
 *     ctx N             N x cuCtxGetCurrent: "ctx R" (the first failure, else 0)
 *     threads T N       T threads, N x (cuCtxGetCurrent, cuMemAlloc 64) each: "threads F" (failed calls)
 *     reload FILE K T MS  hot reload under load: T threads call cuCtxGetCurrent until the end; K times,
 *                       FILE is replaced by a policy that makes cuDriverGetVersion report the round
 *                       number, and the program waits until every thread's next call sees it (at most
 *                       20 s a round); halfway a broken edit is written and must never apply (checked
 *                       once the watcher has tried it: the policies report cushim.stats().failed_reloads
 *                       through cuCtxGetApiVersion). Then the threads end and cuDeviceGetCount (reported by the
 *                       policy as live states * 1000 + live generations) must become 1001 within 10 s:
 *                       everything of the old generations freed. Prints "reload OK rounds K rss_kb A B" (RSS after
 *                       K/10 rounds and at the end) or "reload FAIL ...".
 *     swap FILE SRC     FILE (the policy, reloaded) replaced by the text of SRC, then cuCtxGetApiVersion (which
 *                       the policy makes report cushim.stats().failed_reloads) until it is not 0, at most 5 s:
 *                       "swap N" (the failed reloads seen)
 *     closefds FILE     every descriptor above 2 closed (a daemon's start-up), FILE opened (on the lowest free
 *                       number) and "mine" written to it, kept open: "closefds FD"
 *     lua CODE          (e2e_lua_embed* only) runs CODE in the program's own Lua: "lua RESULT"
 * Exit status 0, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef E2E_EMBED_LUA
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#endif

static CUdeviceptr kept[4096];
static int nkept;

static void step_init(void)
{
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGet(&dev, 0);
    if (r == CUDA_SUCCESS)
        r = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(ctx);
    printf("init %d\n", (int)r);
}

static void step_alloc(int n, size_t size)
{
    printf("alloc");
    for (int i = 0; i < n; i++) {
        CUdeviceptr p = 0;
        CUresult r = cuMemAlloc(&p, size);
        if (r == CUDA_SUCCESS && nkept < 4096)
            kept[nkept++] = p;
        printf(" %d", (int)r);
    }
    printf("\n");
}

static void step_free(void)
{
    printf("free");
    for (int i = 0; i < nkept; i++)
        printf(" %d", (int)cuMemFree(kept[i]));
    nkept = 0;
    printf("\n");
}

static void step_launch(const char *name, int n)
{
    static const char image[] = "fake image";
    CUmodule mod = NULL;
    CUfunction f = NULL;
    CUresult r = cuModuleLoadData(&mod, image);
    if (r == CUDA_SUCCESS)
        r = cuModuleGetFunction(&f, mod, name);
    printf("launch");
    for (int i = 0; i < n; i++)
        printf(" %d", (int)(r != CUDA_SUCCESS ? r : cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL)));
    printf("\n");
}

static int thr_calls;
static CUcontext thr_ctx;

static void *thr_main(void *arg)
{
    long failed = 0;
    (void)arg;
    if (cuCtxSetCurrent(thr_ctx) != CUDA_SUCCESS)
        return (void *)-1L;
    for (int i = 0; i < thr_calls; i++) {
        CUcontext c = NULL;
        CUdeviceptr p = 0;
        failed += cuCtxGetCurrent(&c) != CUDA_SUCCESS;
        failed += cuMemAlloc(&p, 64) != CUDA_SUCCESS;
    }
    return (void *)failed;
}

static void step_threads(int t, int n)
{
    pthread_t th[64];
    long failed = 0;
    if (t < 1 || t > 64 || cuCtxGetCurrent(&thr_ctx) != CUDA_SUCCESS) {
        printf("threads bad\n");
        return;
    }
    thr_calls = n;
    for (int i = 0; i < t; i++)
        if (pthread_create(&th[i], NULL, thr_main, NULL) != 0) {
            printf("threads bad\n");
            return;
        }
    for (int i = 0; i < t; i++) {
        void *v;
        pthread_join(th[i], &v);
        failed += (long)v;
    }
    printf("threads %ld\n", failed);
}

/* ---- reload ---- */
static atomic_int rl_stop;
static atomic_int rl_want;          /* the round every worker must see             */
static atomic_int rl_seen[64];      /* the version each worker saw last            */
static atomic_int rl_bad;           /* a worker's hooked cuCtxGetCurrent failed     */

static void *rl_worker(void *arg)
{
    int me = (int)(long)arg;
    cuCtxSetCurrent(thr_ctx);
    while (!atomic_load(&rl_stop)) {
        CUcontext c;
        int v = 0;
        if (cuCtxGetCurrent(&c) != CUDA_SUCCESS || c != thr_ctx)
            atomic_store(&rl_bad, 1);
        cuDriverGetVersion(&v);
        atomic_store(&rl_seen[me], v);
        usleep(50);   /* leave the 2 CI cores to the watcher and the other threads */
    }
    return NULL;
}

static int rl_write(const char *file, const char *text)
{
    char tmp[4096];
    FILE *f;
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fputs(text, f);
    fclose(f);
    return rename(tmp, file);
}

static long rl_rss_kb(void)
{
    long kb = -1;
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static double rl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void step_reload(const char *file, int rounds, int t, int ms)
{
    pthread_t th[64];
    char text[1024];
    long rss_a = -1, rss_b;
    int count = 0, v = 0;
    if (t < 1 || t > 64 || cuCtxGetCurrent(&thr_ctx) != CUDA_SUCCESS) {
        printf("reload FAIL bad arguments\n");
        return;
    }
    for (int i = 0; i < t; i++)
        pthread_create(&th[i], NULL, rl_worker, (void *)(long)i);
    for (int k = 1; k <= rounds; k++) {
        double t0 = rl_now();
        int all;
        if (k == rounds / 2) {
            /* until the watcher has tried it (failed_reloads, through the policy's cuCtxGetApiVersion hook): a
               fixed sleep let the next good edit overwrite it unseen when the watcher was slow (TSan) */
            struct timespec ts = {0, (long)ms * 1000000L};
            unsigned int failed = 0;
            rl_write(file, "cushim.after.cuDriverGetVersion = function(c)\n  c.driverVersion = = 1\nend\n");
            do {
                nanosleep(&ts, NULL);
                if (rl_now() - t0 > 20) {
                    printf("reload FAIL the broken edit was not tried within 20 s\n");
                    goto out;
                }
            } while (cuCtxGetApiVersion(thr_ctx, &failed) != CUDA_SUCCESS || failed == 0);
            cuDriverGetVersion(&v);
            if (v != k - 1) {
                printf("reload FAIL the broken edit changed the policy: version %d, expected %d\n", v, k - 1);
                goto out;
            }
        }
        snprintf(text, sizeof text,
                 "-- round %d: parameters read by name in each new state, checked against real calls\n"
                 "cushim.after.cuDriverGetVersion = function(c)\n"
                 "  local r, v = cushim.real.cuDriverGetVersion()\n"
                 "  c.driverVersion = c.driverVersion == v and %d or -1\n"
                 "end\n"
                 "cushim.before.cuCtxGetCurrent = function(c) local x = c.pctx end\n"
                 "cushim.after.cuCtxGetCurrent = function(c)\n"
                 "  local r, ctx = cushim.real.cuCtxGetCurrent()\n"
                 "  if c.pctx ~= ctx or c.driverVersion ~= nil then error('pctx') end\n"
                 "end\n"
                 "cushim.after.cuDeviceGetCount = function(c)\n"
                 "  local s = cushim.stats(); c.count = s.states * 1000 + s.generations\n"
                 "end\n"
                 "cushim.after.cuCtxGetApiVersion = function(c) c.version = cushim.stats().failed_reloads end\n",
                 k, k);
        if (rl_write(file, text) != 0) {
            printf("reload FAIL cannot write %s\n", file);
            goto out;
        }
        atomic_store(&rl_want, k);
        do {
            cuDriverGetVersion(&v);
            all = v == k;
            for (int i = 0; all && i < t; i++)
                all = atomic_load(&rl_seen[i]) == k;
            usleep(20);
            if (rl_now() - t0 > 20) {
                printf("reload FAIL round %d not applied within 20 s (main sees %d)\n", k, v);
                goto out;
            }
        } while (!all);
        if (k == rounds / 10 || (rounds < 10 && k == 1))
            rss_a = rl_rss_kb();
    }
    atomic_store(&rl_stop, 1);
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    t = 0;
    if (atomic_load(&rl_bad)) {
        printf("reload FAIL a worker's hooked cuCtxGetCurrent failed or gave another context\n");
        return;
    }
    rss_b = rl_rss_kb();
    /* The watcher publishes a generation before it releases the one it replaced (lp_gen.c lp_publish): the
       last round can be seen applied while the previous generation is still being let go (seen under TSan).
       Freed within 10 s, or the check fails. */
    {
        double t0 = rl_now();
        struct timespec ts = {0, 1000000L};
        cuDeviceGetCount(&count);
        while (count != 1001 && rl_now() - t0 < 10) {
            nanosleep(&ts, NULL);
            cuDeviceGetCount(&count);
        }
    }
    if (count != 1001) {
        printf("reload FAIL live states*1000+generations = %d after the threads ended, expected 1001\n", count);
        return;
    }
    printf("reload OK rounds %d rss_kb %ld %ld\n", rounds, rss_a, rss_b);
    return;
out:
    atomic_store(&rl_stop, 1);
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
}

static void step_swap(const char *file, const char *src)
{
    static char text[1 << 16];
    FILE *f = fopen(src, "r");
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    unsigned int failed = 0;
    CUcontext ctx = NULL;
    double t0 = rl_now();
    struct timespec ts = {0, 1000000L};
    if (f != NULL)
        fclose(f);
    text[n] = '\0';
    if (n == 0 || rl_write(file, text) != 0 || cuCtxGetCurrent(&ctx) != CUDA_SUCCESS) {
        printf("swap FAIL cannot read %s, write %s or get the context\n", src, file);
        return;
    }
    while ((cuCtxGetApiVersion(ctx, &failed) != CUDA_SUCCESS || failed == 0) && rl_now() - t0 < 5)
        nanosleep(&ts, NULL);
    printf("swap %u\n", failed);
}

int main(int argc, char **argv)
{
#ifdef E2E_EMBED_LUA
    lua_State *own = luaL_newstate();
    luaL_openlibs(own);
#endif
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *a1 = i + 1 < argc ? argv[i + 1] : NULL;
        const char *a2 = i + 2 < argc ? argv[i + 2] : NULL;
        if (!strcmp(s, "init")) {
            step_init();
        } else if (!strcmp(s, "free")) {
            step_free();
        } else if (!strcmp(s, "drv")) {
            int v = 0;
            CUresult r = cuDriverGetVersion(&v);
            printf("drv %d %d\n", (int)r, v);
        } else if (!strcmp(s, "attr") && a1) {
            int v = -1;
            CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)atoi(a1), 0);
            printf("attr %d %d\n", (int)r, v);
            i++;
        } else if (!strcmp(s, "launchex") && a2) {
            static const char image[] = "fake image";
            CUmodule mod = NULL;
            CUfunction f = NULL;
            CUlaunchConfig cfg = {.gridDimX = (unsigned)atoi(a2), .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
                                  .blockDimY = 1, .blockDimZ = 1};
            CUresult r = cuModuleLoadData(&mod, image);
            if (r == CUDA_SUCCESS)
                r = cuModuleGetFunction(&f, mod, a1);
            if (r == CUDA_SUCCESS)
                r = cuLaunchKernelEx(&cfg, f, NULL, NULL);
            printf("launchex %d\n", (int)r);
            i += 2;
        } else if (!strcmp(s, "fork")) {
            int st = -1;
            pid_t pid = fork();
            if (pid == 0) {
                printf("child %d\n", (int)cuCtxSynchronize());
                fflush(stdout);
                _exit(0);
            }
            if (pid > 0)
                waitpid(pid, &st, 0);
            printf("fork %d\n", st);
        } else if (!strcmp(s, "count")) {
            int c = 0;
            CUresult r = cuDeviceGetCount(&c);
            printf("count %d %d\n", (int)r, c);
        } else if (!strcmp(s, "alloc") && a2) {
            step_alloc(atoi(a1), (size_t)atoll(a2));
            i += 2;
        } else if (!strcmp(s, "cudamalloc") && a2) {
            printf("cudamalloc");
            for (int k = 0; k < atoi(a1); k++) {
                void *p = NULL;
                printf(" %d", (int)cudaMalloc(&p, (size_t)atoll(a2)));
            }
            printf("\n");
            i += 2;
        } else if (!strcmp(s, "sync") && a1) {
            printf("sync");
            for (int k = 0; k < atoi(a1); k++)
                printf(" %d", (int)cuCtxSynchronize());
            printf("\n");
            i++;
        } else if (!strcmp(s, "stream") && a1) {
            CUstream st = NULL;
            unsigned int fl = 99;
            CUresult r = cuStreamCreate(&st, (unsigned)atoi(a1));
            if (r == CUDA_SUCCESS)
                r = cuStreamGetFlags(st, &fl);
            printf("stream %d %u\n", (int)r, fl);
            i++;
        } else if (!strcmp(s, "launch") && a2) {
            step_launch(a1, atoi(a2));
            i += 2;
        } else if (!strcmp(s, "ctx") && a1) {
            int first = 0;
            for (int k = 0; k < atoi(a1); k++) {
                CUcontext c;
                CUresult r = cuCtxGetCurrent(&c);
                if (r != CUDA_SUCCESS && first == 0)
                    first = (int)r;
            }
            printf("ctx %d\n", first);
            i++;
        } else if (!strcmp(s, "swap") && a2) {
            step_swap(a1, a2);
            i += 2;
        } else if (!strcmp(s, "closefds") && a1) {
            int fd;
            for (fd = 3; fd < 4096; fd++)
                close(fd);
            fd = open(a1, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            printf("closefds %d\n", fd >= 0 && write(fd, "mine\n", 5) == 5 ? fd : -1);
            i++;
        } else if (!strcmp(s, "threads") && a2) {
            step_threads(atoi(a1), atoi(a2));
            i += 2;
        } else if (!strcmp(s, "reload") && i + 4 < argc) {
            step_reload(a1, atoi(a2), atoi(argv[i + 3]), atoi(argv[i + 4]));
            i += 4;
#ifdef E2E_EMBED_LUA
        } else if (!strcmp(s, "lua") && a1) {
            if (luaL_dostring(own, a1) != LUA_OK)
                printf("lua ERROR %s\n", lua_tostring(own, -1));
            else
                printf("lua %s\n", lua_tostring(own, -1) ? lua_tostring(own, -1) : "nil");
            lua_settop(own, 0);
            i++;
#endif
        } else {
            fprintf(stderr, "e2e_lua: bad step '%s' (or missing arguments)\n", s);
            return 2;
        }
    }
#ifdef E2E_EMBED_LUA
    lua_close(own);
#endif
    return 0;
}
