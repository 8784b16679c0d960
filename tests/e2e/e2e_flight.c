/*
 * e2e_flight.c - programs for the flight recorder's end-to-end tests (run_flight.sh), against the fake driver
 * with the shim preloaded. Each MODE is a small CUDA program a user could recognise, ending in the event the
 * recorder is to catch:
 *   basic          allocations, copies, launches of kernels with arguments, a synchronisation; a normal exit
 *   kill           basic, then SIGKILL (the ring survives)
 *   sticky         launches, then cuCtxSynchronize twice (faultinject makes it fail with a sticky error)
 *   segv           basic, then a store through a bad pointer
 *   hang           basic, then cuCtxSynchronize (FAKE_CUDA_SYNC_BLOCK_MS makes it block)
 *   attrib         three allocations, the second freed, then a launch whose four pointer arguments are inside the
 *                  first, one past the end of the third, inside the freed one, and never allocated; SIGUSR2
 *   threads N      N threads making 100 calls each, then SIGKILL
 *   fork           calls, fork: the child calls and SIGKILLs itself, the parent waits and SIGKILLs itself
 *   exec           calls, then exec of itself as 'exec2': no ring descriptor or mapping left, calls, SIGKILL
 *   errors         three allocations whose results it prints (faultinject makes them fail)
 *   launches N     N launches of a kernel with three arguments (bench/cpu/flight_lines.sh counts their code)
 * Prints the addresses it allocates ("A=0x..."), for the checks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#define CK(x)                                                                                   \
    do {                                                                                        \
        CUresult r_ = (x);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                               \
            fprintf(stderr, "e2e_flight: %s failed: %d\n", #x, (int)r_);                         \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static CUmodule mod;

static void setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    static const char image[] = "fake module";
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, image));
}

static CUfunction func(const char *name)
{
    CUfunction f;
    CK(cuModuleGetFunction(&f, mod, name));
    return f;
}

/* k(p0, p1, n): a launch with three arguments */
static void launch3(CUfunction f, CUstream s, CUdeviceptr a, CUdeviceptr b, int n)
{
    void *args[] = {&a, &b, &n};
    CK(cuLaunchKernel(f, 4, 1, 1, 128, 1, 1, 0, s, args, NULL));
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void basic(void)
{
    CUdeviceptr a, b;
    CUstream s;
    char host[4096];
    setup();
    CK(cuMemAlloc(&a, 4096));
    CK(cuMemAlloc(&b, 8192));
    printf("A=0x%llx B=0x%llx\n", (unsigned long long)a, (unsigned long long)b);
    fflush(stdout);
    memset(host, 1, sizeof host);
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemcpyHtoDAsync(a, host, sizeof host, s));
    launch3(func("scale__ppi"), s, a, b, 1024);
    CK(cuStreamSynchronize(s));
    launch3(func("shift__ppi"), s, b, a, 512);
    CK(cuMemcpyDtoH(host, b, sizeof host));
}

static void attrib(void)
{
    CUdeviceptr a, b, c;
    CUfunction f;
    setup();
    CK(cuMemAlloc(&a, 4096));
    CK(cuMemAlloc(&b, 4096));
    CK(cuMemAlloc(&c, 4096));
    CK(cuMemFree(b));
    f = func("attr__pppp");
    {
        CUdeviceptr in = a + 16, past = c + 4096, freed = b + 8, never = (CUdeviceptr)0xdead0000ull;
        void *args[] = {&in, &past, &freed, &never};
        printf("A=0x%llx B=0x%llx C=0x%llx\n", (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
        fflush(stdout);
        CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    }
    raise(SIGUSR2);
}

static void *worker(void *arg)
{
    CUcontext ctx;
    (void)arg;
    for (int i = 0; i < 100; i++)
        CK(cuCtxGetCurrent(&ctx));
    return NULL;
}

/* How many of this process's descriptors and mappings name a flight recorder file. */
static int ring_refs(void)
{
    char link[512], path[300], line[1024];
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    FILE *m;
    while (d != NULL && (e = readdir(d)) != NULL) {
        ssize_t k;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        if ((k = readlink(path, link, sizeof link - 1)) > 0) {
            link[k] = '\0';
            n += strstr(link, "cushim-flight-") != NULL;
        }
    }
    if (d != NULL)
        closedir(d);
    if ((m = fopen("/proc/self/maps", "r")) != NULL) {
        while (fgets(line, sizeof line, m) != NULL)
            n += strstr(line, "cushim-flight-") != NULL;
        fclose(m);
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (strcmp(mode, "basic") == 0) {
        basic();
        return 0;
    }
    if (strcmp(mode, "kill") == 0) {
        basic();
        kill(getpid(), SIGKILL);
    }
    if (strcmp(mode, "sticky") == 0) {
        CUdeviceptr a, b;
        CUstream s;
        setup();
        CK(cuMemAlloc(&a, 4096));
        CK(cuMemAlloc(&b, 4096));
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        launch3(func("good__ppi"), s, a, b, 1);
        CK(cuStreamSynchronize(s));
        launch3(func("after1__ppi"), s, a, b, 2);
        launch3(func("culprit__ppi"), NULL, b + 4096, a, 3);
        printf("first sync: %d\n", (int)cuCtxSynchronize());
        printf("second sync: %d\n", (int)cuCtxSynchronize());
        return 0;
    }
    if (strcmp(mode, "segv") == 0) {
        volatile uintptr_t bad = 8;   /* through a variable: the compiler sees no constant address */
        basic();
        *(volatile int *)bad = 1;
        return 0;
    }
    if (strcmp(mode, "hang") == 0) {
        basic();
        printf("sync: %d\n", (int)cuCtxSynchronize());
        return 0;
    }
    if (strcmp(mode, "attrib") == 0) {
        attrib();
        return 0;
    }
    if (strcmp(mode, "threads") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 4;
        pthread_t th[64];
        setup();
        for (int i = 0; i < n && i < 64; i++)
            pthread_create(&th[i], NULL, worker, NULL);
        for (int i = 0; i < n && i < 64; i++)
            pthread_join(th[i], NULL);
        kill(getpid(), SIGKILL);
    }
    if (strcmp(mode, "fork") == 0) {
        int v, st;
        pid_t pid;
        setup();
        CK(cuDriverGetVersion(&v));
        pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 3; i++)
                CK(cuDeviceGetCount(&v));
            printf("child=%d\n", (int)getpid());
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        waitpid(pid, &st, 0);
        CK(cuDriverGetVersion(&v));
        printf("parent=%d\n", (int)getpid());
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    if (strcmp(mode, "exec") == 0) {
        int v;
        setup();
        CK(cuDriverGetVersion(&v));
        printf("before exec: %d ring references\n", ring_refs());
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "exec2", (char *)NULL);
        perror("exec");
        return 1;
    }
    if (strcmp(mode, "exec2") == 0) {
        int v;
        printf("after exec: %d ring references\n", ring_refs());
        fflush(stdout);
        CK(cuInit(0));
        for (int i = 0; i < 5; i++)
            CK(cuDeviceGetCount(&v));
        kill(getpid(), SIGKILL);
    }
    if (strcmp(mode, "errors") == 0) {
        CUdeviceptr p;
        setup();
        for (int i = 0; i < 3; i++)
            printf("alloc %d: %d\n", i, (int)cuMemAlloc(&p, 1024));
        return 0;
    }
    if (strcmp(mode, "launches") == 0) {
        long n = argc > 2 ? atol(argv[2]) : 1000;
        CUdeviceptr a, b;
        CUfunction f;
        setup();
        CK(cuMemAlloc(&a, 4096));
        CK(cuMemAlloc(&b, 4096));
        f = func("bench__ppi");
        for (long i = 0; i < n; i++)
            launch3(f, NULL, a, b, (int)i);
        return 0;
    }
    if (strcmp(mode, "queries") == 0) {   /* N cuCtxGetCurrent (bench/cpu/flight_lines.sh) */
        long n = argc > 2 ? atol(argv[2]) : 1000;
        CUcontext c;
        setup();
        for (long i = 0; i < n; i++)
            CK(cuCtxGetCurrent(&c));
        return 0;
    }
    if (strcmp(mode, "query") == 0) {
        /* a launch, two queries (recorded at their return), then a query that fails (faultinject) */
        CUdeviceptr a;
        CUcontext c = NULL;
        int v = 0;
        setup();
        CK(cuMemAlloc(&a, 4096));
        launch3(func("scale__ppi"), NULL, a, a, 1);
        CK(cuCtxGetCurrent(&c));
        CK(cuDeviceGetCount(&v));
        printf("ctx=%p count=%d\n", (void *)c, v);
        printf("version: %d\n", (int)cuDriverGetVersion(&v));
        CK(cuCtxSynchronize());
        return 0;
    }
    if (strcmp(mode, "paced") == 0) {
        /* calls 20 ms apart, each bracketed by the program's own CLOCK_MONOTONIC readings (printed): the test
           finds the dump's times between them, whatever clock the recorder kept ('kill': ended by SIGKILL) */
        CUdeviceptr a;
        int v = 0;
        struct timespec gap = {0, 20 * 1000 * 1000};
        setup();
        for (int i = 0; i < 3; i++) {
            uint64_t t1 = mono_ns(), t2, t3;
            CK(cuDriverGetVersion(&v));   /* a query: one record, at its return */
            t2 = mono_ns();
            CK(cuMemAlloc(&a, 4096));     /* entry and exit */
            t3 = mono_ns();
            printf("paced %d %llu %llu %llu\n", i, (unsigned long long)t1, (unsigned long long)t2,
                   (unsigned long long)t3);
            nanosleep(&gap, NULL);
        }
        fflush(stdout);
        if (argc > 2 && strcmp(argv[2], "kill") == 0)
            kill(getpid(), SIGKILL);
        return 0;
    }
    if (strcmp(mode, "wide") == 0) {
        /* arguments the record has no room for (19 pointers and an int: 156 bytes after 64 of params, 144 of
           room), then a launch whose second argument's pointer is NULL (the fake does not read them) */
        CUdeviceptr a, p[19];
        int n = 7;
        void *args[20];
        setup();
        CK(cuMemAlloc(&a, 4096));
        for (int i = 0; i < 19; i++) {
            p[i] = a + (CUdeviceptr)i * 8;
            args[i] = &p[i];
        }
        args[19] = &n;
        CK(cuLaunchKernel(func("wide__pppppppppppppppppppi"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
        {
            void *holes[] = {&p[0], NULL, &n};
            CK(cuLaunchKernel(func("holes__ppi"), 1, 1, 1, 1, 1, 1, 0, NULL, holes, NULL));
        }
        launch3(func("scale__ppi"), NULL, a, a + 8, 1);
        return 0;
    }
    if (strcmp(mode, "ab") == 0) {
        /* under the A/B copy (bench/gpu/flight_ab.c): each SIGUSR2 removes or adds again the recorder's hooks;
           its helper thread switches, so each state is given time before the next call */
        CUdeviceptr a;
        int v = 0;
        struct timespec gap = {0, 100 * 1000 * 1000};
        setup();
        CK(cuMemAlloc(&a, 4096));
        launch3(func("scale__ppi"), NULL, a, a, 1);
        raise(SIGUSR2);
        nanosleep(&gap, NULL);
        CK(cuDeviceGetCount(&v));
        launch3(func("shift__ppi"), NULL, a, a, 2);
        raise(SIGUSR2);
        nanosleep(&gap, NULL);
        CK(cuDriverGetVersion(&v));
        launch3(func("bench__ppi"), NULL, a, a, 3);
        return 0;
    }
    fprintf(stderr, "usage: e2e_flight basic|kill|sticky|segv|hang|attrib|threads N|fork|exec|errors|launches N|"
                    "query|ab|wide\n");
    return 2;
}
