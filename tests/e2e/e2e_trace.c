/*
 * e2e_trace.c - driver-API workloads for the trace plugin's end-to-end tests
 * (run_trace.sh), against the fake driver:
 *   threads N      N threads, each: alloc, memset, free, 10 times
 *   clock          two threads, each 30 rounds of a query, an allocation, a launch and cuDeviceGetName, each
 *                  call between the thread's own CLOCK_MONOTONIC readings, printed ("clock TH ROUND NAME T0 T1")
 *   fork           calls, fork; the child makes its own calls and exits; the parent goes on
 *   sigterm        calls, then kills itself with SIGTERM (default action)
 *   segv, segv_raise, abort
 *                  calls, then a NULL store (SIGSEGV), raise(SIGSEGV), or abort() (SIGABRT)
 *   thread_exit    a second thread makes calls and calls exit(0) while main waits
 *   thread_names   a thread named "tn-first" makes 2 calls, renames itself "tn-later" and lives 50 ms more; then a
 *                  thread named "tn-gone" makes 1 call and ends at once (each named by PR_SET_NAME)
 *   inflight exit|abort
 *                  main is inside cudaStreamSynchronize (and the cuStreamSynchronize the fake cudart makes in
 *                  it) waiting for a host function, which (on the fake's callback thread) waits until main
 *                  sleeps there, then calls exit(0) or abort(): two fast-path calls in flight at the flush
 *   nvtx           NVTX push/pop around calls, a start/end range, a mark
 *   capture        2 allocations, cuProfilerStart, 3, cuProfilerStop, 1, cudaProfilerStart, 4, cudaProfilerStop, 2
 *   nvtx_gpu       (NVTX) cuProfilerStart, a range pushed (the first record with capture=), 3 copies, the range
 *                  popped, cuProfilerStop
 *   capture_gpu [MS]  copies (cuMemcpyHtoD: GPU work to the stand-in CUPTI): 2, cuProfilerStart, 3, cuProfilerStop,
 *                  1, MS ms (default 300) of sleep, 1, 2, cudaProfilerStart, 4, cudaProfilerStop
 *                  (trace option capture=cudaProfilerApi: the 7 inside are recorded); 'capture_gpu MS fork':
 *                  a child forked in the pause after the sleep's copy ('forkpending': before the sleep) makes
 *                  cuProfilerStart, 2 copies, cuProfilerStop and exits; the parent waits for it (exit 5 if it
 *                  failed); 'capture_gpu MS toggle': SIGUSR2 and 200 ms of sleep in place of each profiler call
 *                  (trace options toggle=USR2,paused=1); 'capture_gpu MS tail': after the last range MS ms of
 *                  sleep and 2 copies (gpu_detach: the process ends with CUPTI detached); 'capture threads': the
 *                  second range's 4 on another thread
 *   phases MS [fork]
 *                  2 allocations, MS ms, 3, MS ms, 4 (trace options delay=, duration=: which were recorded); with
 *                  fork, a child does the 3 and the 4 after its own sleeps and the parent waits for it, then 1
 *   capture_nvtx_many
 *                  65 NVTX ranges "step" started at once, 1 allocation, all ended, 1 allocation
 *   nvtx_names N   1 allocation, then N NVTX ranges named "r0".."r<N-1>" pushed and popped, then "r0" again
 *   nvtx_signal N [cuda]
 *                  N rounds of a query, an NVTX range and an allocation and free in it, under a 20 us timer
 *                  whose SIGALRM handler marks an NVTX event "sig" (cuda: calls cuCtxGetCurrent); prints
 *                  "marks M" (the handler's count)
 *   nvtx_domains   40 NVTX domains "d0".."d39", a range "rI" pushed in each around 1 allocation, popped; then two of
 *                  the last ten (which share the plugin's one slot past 30 named domains) around 1 allocation
 *   nvtx_threads   4 threads, 2000 steps each: ranges "tK outer" and "inner" pushed around a call, an "async"
 *                  range started, and the one the next thread started at that step ended
 *   capture_nvtx   NVTX ranges named "step" (capture=nvtx:step): pushed (with a nested "step" and another range
 *                  inside), then started on main and ended on a second thread; 9 allocations inside, 3 outside
 *   many N         N cuCtxGetCurrent calls on the main thread
 *   closefds N VICTIM [RM]
 *                  N calls, every descriptor above 2 closed, VICTIM opened on the freed number, RM removed, N
 *                  calls: the trace file is the writer's and VICTIM the program's
 *   structs        a struct by pointer (cuMemcpy2D's CUDA_MEMCPY2D; the fake answers NOT_SUPPORTED, the input is
 *                  still recorded), two outputs (cuMemGetInfo), a callback (cuLaunchHostFunc)
 *   badptrs        pointers the driver refuses without reading them, each call answered with an error: a name
 *                  pointing into a page that cannot be read, one whose last 5 bytes ("vecad", no NUL) run into it,
 *                  a dependency array pointing into it and one of 3 whose first element alone is readable
 *                  (cuModuleGetFunction with no module, cuGraphAddEmptyNode with no graph), JIT options and
 *                  their values pointing into it (cuModuleLoadDataEx with no module pointer), a struct by
 *                  pointer and an output pointer into it (cuGraphAddKernelNode's node parameters; the
 *                  function cuModuleGetFunction would return; cuMemCreate's allocation properties, with no
 *                  handle pointer); then a name that is read (cuModuleGetFunction
 *                  "vecadd" on a module). The results printed
 *   reusefd2 FILE  descriptor 2 closed, FILE created (it takes the number 2), "DATA" written to it, calls (an
 *                  allocation, a failed cuModuleGetFunction), "END" written: FILE must hold only those two lines
 *   runtime        runtime calls (the driver calls the fake cudart makes nest under them):
 *                  cudaMalloc, cudaMemcpy, cudaLaunchKernel, and a driver attribute query (an enum)
 */
#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef E2E_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#if __has_include(<nvtx3/nvToolsExtPayload.h>)
#include <nvtx3/nvToolsExtPayload.h>
#define E2E_HAVE_NVTX_PAYLOAD 1
#endif
#endif

static CUcontext ctx;

static void setup(void)
{
    CUdevice d;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, d) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_trace: setup failed\n");
        exit(1);
    }
}

static void work(int n)
{
    cuCtxSetCurrent(ctx);
    for (int i = 0; i < n; i++) {
        CUdeviceptr p;
        if (cuMemAlloc(&p, 4096) == CUDA_SUCCESS) {
            cuMemsetD8(p, 0, 4096);
            cuMemFree(p);
        }
    }
}

static void *work4_main(void *arg)
{
    (void)arg;
    work(4);
    return NULL;
}

#ifdef E2E_HAVE_NVTX
/* Event attributes with an ASCII message. */
static nvtxEventAttributes_t ascii_attr(const char *msg)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    return a;
}

/* nvtx_signal: a timer interrupts the main thread every 20 us while it makes recorded calls and NVTX ranges;
   the handler marks an NVTX event (the trace's tr_record2, on the interrupted thread's buffer) and counts. */
static volatile sig_atomic_t sig_marks, sig_cuda;
static void sig_mark(int sig)
{
    int e = errno;
    (void)sig;
    if (sig_cuda) {   /* 'cuda': a recorded call instead (the trace's hook, on the interrupted thread's buffer) */
        CUcontext c;
        cuCtxGetCurrent(&c);
    } else {
        nvtxMarkA("sig");
    }
    sig_marks++;
    errno = e;
}

/* Named by the main thread (by its tid, with the wide-character call) before its first CUDA call, then a call:
   its track's name is the NVTX one. */
static _Atomic long named_tid;
static _Atomic int named_done;
static void *named_thread_main(void *arg)
{
    CUcontext c;
    (void)arg;
    atomic_store(&named_tid, (long)syscall(SYS_gettid));
    while (!atomic_load(&named_done))
        usleep(1000);
    cuCtxGetCurrent(&c);
    return NULL;
}

static void *nvtx_end_main(void *arg)
{
    nvtxRangeEnd(*(nvtxRangeId_t *)arg);
    return NULL;
}

/* nvtx_threads: each of NVTX_NT threads pushes "tK outer" around a call and "inner", starts an "async" range in
   between, and ends the one its neighbour started at the same step (on another thread: the end may be drained
   before the start). */
#define NVTX_NT 4
#define NVTX_NR 2000
static _Atomic uint64_t nvtx_thr_ids[NVTX_NT][NVTX_NR];
static void *nvtx_thread_main(void *arg)
{
    int k = (int)(intptr_t)arg, peer = (k + 1) % NVTX_NT;
    char outer[16];
    snprintf(outer, sizeof outer, "t%d outer", k);
    for (int i = 0; i < NVTX_NR; i++) {
        CUcontext c;
        uint64_t id;
        nvtxRangePushA(outer);
        cuCtxGetCurrent(&c);
        nvtxRangePushA("inner");
        atomic_store(&nvtx_thr_ids[k][i], nvtxRangeStartA("async"));
        nvtxRangePop();
        nvtxRangePop();
        while ((id = atomic_load(&nvtx_thr_ids[peer][i])) == 0)
            sched_yield();
        nvtxRangeEnd(id);
    }
    return NULL;
}
#endif

/* Occurrences of 'needle' in the file 'path' (0 when it cannot be read). */
static int file_count(const char *path, const char *needle)
{
    static char buf[1 << 20];
    int n = 0, fd = open(path, O_RDONLY);
    ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (k <= 0)
        return 0;
    buf[k] = '\0';
    /* every byte (a Perfetto file holds NUL bytes) */
    for (size_t i = 0, m = strlen(needle); i + m <= (size_t)k; i++)
        n += memcmp(buf + i, needle, m) == 0;
    return n;
}

static void kernel_stub(void) {}

static int runtime_mode(void)
{
    static unsigned char host[256];
    void *d = NULL;
    void *args[] = {&d};
    int v = 0;
    if (cudaMalloc(&d, sizeof host) != cudaSuccess ||
        cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaLaunchKernel((const void *)kernel_stub, (dim3){8, 1, 1}, (dim3){128, 1, 1}, args, 0, NULL) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess || cudaFree(d) != cudaSuccess ||
        cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) != CUDA_SUCCESS)
        return 1;
    return 0;
}

static void host_fn(void *p)
{
    (void)p;
}

static int structs_mode(void)
{
    static unsigned char host[64 * 4];
    CUDA_MEMCPY2D m;
    CUdeviceptr d;
    size_t fr = 0, total = 0;
    memset(&m, 0, sizeof m);
    if (cuMemAlloc(&d, sizeof host) != CUDA_SUCCESS)
        return 1;
    m.srcMemoryType = CU_MEMORYTYPE_HOST;
    m.srcHost = host;
    m.srcPitch = 64;
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = d;
    m.dstPitch = 64;
    m.WidthInBytes = 64;
    m.Height = 4;
    (void)cuMemcpy2D(&m);   /* NOT_SUPPORTED on the fake driver */
    if (cuMemGetInfo(&fr, &total) != CUDA_SUCCESS || cuLaunchHostFunc(NULL, host_fn, NULL) != CUDA_SUCCESS ||
        cuCtxSynchronize() != CUDA_SUCCESS)
        return 1;
    printf("meminfo %zu %zu\n", fr, total);
    return cuMemFree(d) == CUDA_SUCCESS ? 0 : 1;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 'clock': on each of two threads, 30 rounds 2 ms apart of four calls - a query (timed by the core, in ns), an
   allocation (one record, the hooks' clock), a launch (one record with its kernel's name) and cuDeviceGetName
   (an ENTER and an EXIT record: an output array) - each bracketed by the thread's own CLOCK_MONOTONIC readings,
   printed as "clock THREAD ROUND NAME BEFORE AFTER" once the rounds are done; with NVTX, a mark after each call
   (the trace times it with the shim's clock, as CUPTI's records: it must fall between the calls around it). */
#ifdef E2E_HAVE_NVTX
#define CLOCK_MARK(s) nvtxMarkA(s)
#else
#define CLOCK_MARK(s) ((void)0)
#endif
static void *clock_main(void *arg)
{
    static const char image[] = "fake module";
    int th = (int)(intptr_t)arg, v = 0;
    static const char *const names[4] = {"cuDriverGetVersion", "cuMemAlloc_v2", "cuLaunchKernel", "cuDeviceGetName"};
    uint64_t t[30][5];
    CUmodule mod;
    CUfunction f;
    CUdeviceptr p;
    char name[64];
    struct timespec gap = {0, 2 * 1000 * 1000};
    cuCtxSetCurrent(ctx);
    if (cuModuleLoadData(&mod, image) != CUDA_SUCCESS || cuModuleGetFunction(&f, mod, "scale__ppi") != CUDA_SUCCESS)
        return (void *)1;
    for (int i = 0; i < 30; i++) {
        void *args[] = {&p, &p, &v};
        t[i][0] = mono_ns();
        cuDriverGetVersion(&v);
        t[i][1] = mono_ns();
        CLOCK_MARK("q");
        cuMemAlloc(&p, 4096);
        t[i][2] = mono_ns();
        CLOCK_MARK("a");
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        t[i][3] = mono_ns();
        CLOCK_MARK("l");
        cuDeviceGetName(name, (int)sizeof name, 0);
        t[i][4] = mono_ns();
        CLOCK_MARK("n");
        cuMemFree(p);
        nanosleep(&gap, NULL);
    }
    for (int i = 0; i < 30; i++)
        for (int k = 0; k < 4; k++)
            printf("clock %d %d %s %llu %llu\n", th, i, names[k], (unsigned long long)t[i][k],
                   (unsigned long long)t[i][k + 1]);
    return NULL;
}

static void *thread_work(void *arg)
{
    (void)arg;
    work(10);
    return NULL;
}

/* thread_names: named, calls, then (renamed) as long or as short as the case asks */
static void *thread_named_main(void *arg)
{
    const char *const *names = arg;
    prctl(PR_SET_NAME, names[0], 0, 0, 0);
    work(names[1] != NULL ? 2 : 1);
    if (names[1] != NULL) {
        prctl(PR_SET_NAME, names[1], 0, 0, 0);
        usleep(50000);   /* alive and renamed while the writer gets to its records */
    }
    return NULL;
}

static void *thread_exit_main(void *arg)
{
    (void)arg;
    work(3);
    exit(0);
}

static pid_t inflight_tid;
static const char *inflight_how;

/* On the fake's callback thread: once main sleeps (in the fake's wait for this function, inside the two
   synchronize calls), ends the process. Up to ~10 s for main to get there. */
static void inflight_fn(void *arg)
{
    char path[64], buf[256];
    (void)arg;
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)inflight_tid);
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        const char *rp;
        if (f)
            fclose(f);
        buf[n] = '\0';
        rp = strrchr(buf, ')');   /* "pid (comm) S ..." */
        if (rp != NULL && rp[1] == ' ' && rp[2] == 'S')
            break;
        usleep(1000);
    }
    usleep(20000);   /* settled in the wait */
    if (!strcmp(inflight_how, "abort"))
        abort();
    exit(0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (getenv("E2E_LATE_INIT_MS") != NULL)   /* a program that starts CUDA late (delay=: the timer starts then) */
        usleep((useconds_t)atoi(getenv("E2E_LATE_INIT_MS")) * 1000u);
    setup();
    if (!strcmp(mode, "runtime"))
        return runtime_mode();
    if (!strcmp(mode, "structs"))
        return structs_mode();
    if (!strcmp(mode, "nulls")) {   /* NULL where the driver answers CUDA_ERROR_INVALID_VALUE (or the like): the
                                       results printed, to compare with and without the shim and its plugins */
        CUresult r[32];
        int i = 0;
        CUdevice d;
        CUgraph g = NULL;
        size_t n = 0;
        cuCtxGetDevice(&d);
        r[i++] = cuDeviceGetName(NULL, 0, d);
        r[i++] = cuDeviceGetName(NULL, 100, d);
        r[i++] = cuMemcpy2D(NULL);
        r[i++] = cuMemcpy3D(NULL);
        r[i++] = cuModuleGetFunction(NULL, NULL, NULL);
        r[i++] = cuModuleLoadData(NULL, NULL);
        r[i++] = cuGraphCreate(&g, 0);
        r[i++] = cuGraphGetNodes(g, NULL, &n);
        r[i++] = cuGraphGetNodes(g, NULL, NULL);
        r[i++] = cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
        r[i++] = cuMemAlloc(NULL, 16);
        r[i++] = cuMemAllocManaged(NULL, 16, CU_MEM_ATTACH_GLOBAL);
        r[i++] = cuMemAllocHost(NULL, 16);
        r[i++] = cuMemAllocPitch(NULL, NULL, 16, 16, 4);
        r[i++] = cuMemFree(0);
        r[i++] = cuCtxGetDevice(NULL);
        r[i++] = cuMemGetInfo(NULL, NULL);
        r[i++] = cuStreamCreate(NULL, 0);
        r[i++] = cuEventCreate(NULL, 0);
        r[i++] = cuPointerGetAttributes(3, NULL, NULL, 0);
        for (int k = 0; k < i; k++)
            printf("%d ", (int)r[k]);
        printf("\n");
        return 0;
    }
    if (!strcmp(mode, "reusefd2")) {
        CUdeviceptr p = 0;
        CUfunction f = NULL;
        int fd;
        if (argc < 3)
            return 2;
        close(2);
        if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) != 2)
            return 3;
        if (write(fd, "DATA\n", 5) != 5)
            return 4;
        cuMemAlloc(&p, 256);
        cuMemFree(p);
        cuModuleGetFunction(&f, NULL, "x");
        if (write(fd, "END\n", 4) != 4)
            return 4;
        return 0;
    }
    if (!strcmp(mode, "badptrs")) {
        /* two mappings of a readable page and one that cannot be read ('hole', 'hole2') */
        long pg = sysconf(_SC_PAGESIZE);
        unsigned char *m = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        unsigned char *hole = m + pg, *hole2 = m + 3 * pg, img[16] = {0};
        CUresult r[12];
        CUfunction f = NULL;
        CUgraphNode node = NULL;
        CUmodule mod = NULL;
        int i = 0;
        if (m == MAP_FAILED || mprotect(hole, (size_t)pg, PROT_NONE) != 0 || mprotect(hole2, (size_t)pg, PROT_NONE))
            return 3;
        memcpy(hole - 5, "vecad", 5);                                    /* no NUL before the hole */
        memset(hole2 - sizeof(CUgraphNode), 0x11, sizeof(CUgraphNode));   /* one element before the other */
        r[i++] = cuModuleGetFunction(&f, NULL, (const char *)hole);
        r[i++] = cuModuleGetFunction(&f, NULL, (const char *)hole - 5);
        r[i++] = cuGraphAddEmptyNode(&node, NULL, (const CUgraphNode *)(void *)hole, 3);
        r[i++] = cuGraphAddEmptyNode(&node, NULL, (const CUgraphNode *)(void *)(hole2 - sizeof(CUgraphNode)), 3);
        r[i++] = cuModuleLoadDataEx(NULL, img, 3, (CUjit_option *)(void *)hole, (void **)(void *)hole);
        r[i++] = cuGraphAddKernelNode(&node, NULL, NULL, 0, (const CUDA_KERNEL_NODE_PARAMS *)(void *)hole);
        r[i++] = cuModuleGetFunction((CUfunction *)(void *)hole, NULL, "vecadd");
        r[i++] = cuMemCreate(NULL, (size_t)2 << 20, (const CUmemAllocationProp *)(void *)hole, 0);
        r[i++] = cuModuleLoadData(&mod, img);
        r[i++] = cuModuleGetFunction(&f, mod, "vecadd");
        for (int k = 0; k < i; k++)
            printf("%d ", (int)r[k]);
        printf("\n");
        return 0;
    }
    if (!strcmp(mode, "locale")) {   /* the locale of the environment (LC_ALL=de_DE.UTF-8: ',' as decimal point) set
                                        after the trace started; a call with a float output: cuEventElapsedTime */
        char probe[16];
        CUevent a, b;
        float ms = -1;
        if (setlocale(LC_ALL, "") == NULL)
            return 77;
        snprintf(probe, sizeof probe, "%.1f", 1.5);
        if (cuEventCreate(&a, 0) != CUDA_SUCCESS || cuEventCreate(&b, 0) != CUDA_SUCCESS ||
            cuEventRecord(a, 0) != CUDA_SUCCESS || cuEventRecord(b, 0) != CUDA_SUCCESS ||
            cuEventSynchronize(b) != CUDA_SUCCESS || cuEventElapsedTime(&ms, a, b) != CUDA_SUCCESS)
            return 1;
        printf("probe %s elapsed %.9g\n", probe, (double)ms);   /* with the locale's decimal point; kept to the end:
                                                                  the writer renders at exit */
        return 0;
    }
    if (!strcmp(mode, "many")) {
        long n = argc > 2 ? atol(argv[2]) : 1000;
        CUcontext c;
        for (long i = 0; i < n; i++)
            cuCtxGetCurrent(&c);
        return 0;
    }
    if (!strcmp(mode, "closefds")) {
        /* N calls; then, as a daemon starting up, every descriptor above 2 closed (the trace file's too) and
           VICTIM opened (it gets the lowest free number: the trace file's); RM (if given) removed; N calls; a
           line into VICTIM before and after them */
        long n = argc > 2 ? atol(argv[2]) : 1000;
        const char *victim = argc > 3 ? argv[3] : "victim.txt", *rm = argc > 4 ? argv[4] : NULL;
        static const char line[] = "the program's own line\n";
        CUcontext c;
        int vf;
        for (long i = 0; i < n; i++)
            cuCtxGetCurrent(&c);
        usleep(200000);   /* the writer has written its first part */
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
        if (rm != NULL && unlink(rm) != 0)
            return 3;
        if ((vf = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
            write(vf, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
            return 4;
        for (long i = 0; i < n; i++)
            cuCtxGetCurrent(&c);
        usleep(200000);
        if (write(vf, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
            return 5;
        return close(vf) == 0 ? 0 : 6;
    }
    if (!strcmp(mode, "many_wait")) {   /* N calls, then up to 10 s until FILE holds MINBYTES (0: 100 ms); then
                                           'kill': SIGKILL */
        long n = argc > 2 ? atol(argv[2]) : 1000;
        long min = argc > 4 ? atol(argv[4]) : 0;
        CUcontext c;
        struct stat sb;
        for (long i = 0; i < n; i++)
            cuCtxGetCurrent(&c);
        for (int k = 0; k < (min > 0 ? 1000 : 10); k++) {
            if (min > 0 && argc > 3 && stat(argv[3], &sb) == 0 && sb.st_size >= min) {
                printf("grew\n");
                fflush(stdout);
                if (argc > 5 && !strcmp(argv[5], "kill"))   /* what no handler sees (the OOM killer) */
                    raise(SIGKILL);
                return 0;
            }
            usleep(10000);
        }
        printf("still\n");
        return 0;
    }
    if (!strcmp(mode, "clock")) {
        pthread_t t[2];
        void *r[2];
        CLOCK_MARK("start");   /* NVTX's first call loads the injection: before the threads */
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, clock_main, (void *)(intptr_t)i);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], &r[i]);
        fflush(stdout);
        return r[0] != NULL || r[1] != NULL ? 2 : 0;
    }
    if (!strcmp(mode, "threads")) {
        int n = argc > 2 ? atoi(argv[2]) : 4;
        pthread_t t[64];
        if (n < 1 || n > 64)
            return 2;
        for (int i = 0; i < n; i++)
            pthread_create(&t[i], NULL, thread_work, NULL);
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    if (!strcmp(mode, "thread_names")) {
        static const char *const renamed[] = {"tn-first", "tn-later"}, *const gone[] = {"tn-gone", NULL};
        pthread_t t;
        work(1);
        if (pthread_create(&t, NULL, thread_named_main, (void *)renamed) != 0)
            return 2;
        pthread_join(t, NULL);
        if (pthread_create(&t, NULL, thread_named_main, (void *)gone) != 0)
            return 2;
        pthread_join(t, NULL);
        return 0;
    }
    if (!strcmp(mode, "exec")) {   /* 3 allocations; once FILE holds them, this program executed again
                                      ("exec_child": 5 allocations) - the same process, no exit handler run */
        const char *file = argc > 2 ? argv[2] : "t.json";
        size_t fl = strlen(file);
        /* a Perfetto file names an API once (interned): its first free written */
        int pf = fl > 15 && !strcmp(file + fl - 15, ".perfetto-trace");
        work(3);
        for (int k = 0; file_count(file, pf ? "cuMemFree_v2" : "\"cuMemFree_v2\"") < (pf ? 1 : 3); k++) {
            if (k == 1000)
                return 3;   /* 10 s: the writer never wrote them */
            usleep(10000);
        }
        printf("pid %d\n", (int)getpid());
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "exec_child", (char *)NULL);
        return 4;
    }
    if (!strcmp(mode, "exec_child")) {
        work(5);
        return 0;
    }
    if (!strcmp(mode, "fork")) {
        int st = 0;
        pid_t pid;
        work(2);
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            work(5);
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            exit(0);
        }
        waitpid(pid, &st, 0);
        work(1);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
    }
    if (!strcmp(mode, "toggle")) {   /* 2 calls, SIGUSR2, 3 calls, SIGUSR2, 4 calls (trace option toggle=USR2);
                                        'toggle wait': 200 ms after each signal (unhook=1 follows it on a thread) */
        int wait = argc > 2 && !strcmp(argv[2], "wait");
        work(2);
        raise(SIGUSR2);
        if (wait)
            usleep(200000);
        work(3);
        raise(SIGUSR2);
        if (wait)
            usleep(200000);
        work(4);
        return 0;
    }
    if (!strcmp(mode, "phases") && argc > 2) {
        useconds_t us = (useconds_t)atoi(argv[2]) * 1000u;
        if (argc > 3 && !strcmp(argv[3], "fork")) {
            int st;
            pid_t pid;
            work(2);
            if ((pid = fork()) == 0) {
                usleep(us);
                work(3);
                usleep(us);
                work(4);
                exit(0);
            }
            waitpid(pid, &st, 0);
            work(1);
            return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
        }
        work(2);
        usleep(us);
        work(3);
        usleep(us);
        work(4);
        return 0;
    }
    if (!strcmp(mode, "capture")) {
        int threads = argc > 2 && !strcmp(argv[2], "threads");
        work(2);
        if (cuProfilerStart() != CUDA_SUCCESS)
            return 2;
        work(3);
        if (cuProfilerStop() != CUDA_SUCCESS)
            return 2;
        work(1);
        if (cudaProfilerStart() != cudaSuccess)
            return 2;
        if (threads) {
            pthread_t t;
            pthread_create(&t, NULL, work4_main, NULL);
            pthread_join(t, NULL);
        } else {
            work(4);
        }
        if (cudaProfilerStop() != cudaSuccess)
            return 2;
        work(2);
        return 0;
    }
    if (!strcmp(mode, "capture_gpu")) {
        long ms = argc > 2 ? atol(argv[2]) : 300;
        static const int n[] = {2, -1, 3, -2, 1, 0, 1, 2, -3, 4, -4};
        unsigned char h[64] = {0};
        CUdeviceptr p;
        cuCtxSetCurrent(ctx);
        if (cuMemAlloc(&p, sizeof h) != CUDA_SUCCESS)
            return 2;
        /* 'fork': a child forked in the pause, after the copy that follows the sleep (gpu_detach: CUPTI detached
           by then); 'forkpending': before the sleep (a detach pending). It makes a capture range of 2 copies of
           its own and exits; the parent waits for it, then goes on. */
        const char *fk = argc > 3 ? argv[3] : "";
        size_t fork_at = !strcmp(fk, "fork") ? 7 : !strcmp(fk, "forkpending") ? 5 : (size_t)-1;
        int toggle = !strcmp(fk, "toggle");
        for (size_t k = 0; k < sizeof n / sizeof n[0]; k++) {
            if (k == fork_at) {
                int cst = 0;
                pid_t pid;
                fflush(NULL);
                if ((pid = fork()) == 0) {
                    int bad = cuProfilerStart() != CUDA_SUCCESS;
                    for (int i = 0; i < 2 && !bad; i++)
                        bad = cuMemcpyHtoD(p, h, sizeof h) != CUDA_SUCCESS;
                    bad = bad || cuProfilerStop() != CUDA_SUCCESS;
                    printf("child %d\n", (int)getpid());
                    fflush(stdout);
                    exit(bad ? 2 : 0);
                }
                if (pid < 0 || waitpid(pid, &cst, 0) != pid || !WIFEXITED(cst) || WEXITSTATUS(cst) != 0)
                    return 5;
            }
            int bad = 0;
            if (toggle && n[k] < 0) {   /* the toggle's thread follows the signal */
                raise(SIGUSR2);
                usleep(200000);
            } else {
                bad = n[k] == -1 ? cuProfilerStart() != CUDA_SUCCESS
                    : n[k] == -2 ? cuProfilerStop() != CUDA_SUCCESS
                    : n[k] == -3 ? cudaProfilerStart() != cudaSuccess
                    : n[k] == -4 ? cudaProfilerStop() != cudaSuccess : 0;
            }
            if (bad)
                return 2;
            if (n[k] == 0)
                usleep((useconds_t)ms * 1000u);
            for (int i = 0; i < n[k]; i++)
                if (cuMemcpyHtoD(p, h, sizeof h) != CUDA_SUCCESS)
                    return 2;
        }
        if (!strcmp(fk, "tail")) {   /* the process ends with CUPTI detached */
            usleep((useconds_t)ms * 1000u);
            for (int i = 0; i < 2; i++)
                if (cuMemcpyHtoD(p, h, sizeof h) != CUDA_SUCCESS)
                    return 2;
        }
        cuMemFree(p);
        return 0;
    }
    if (!strcmp(mode, "sigterm")) {
        work(4);
        kill(getpid(), SIGTERM);
        pause();
        return 3;
    }
    if (!strcmp(mode, "segv")) {
        work(4);
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
        return 3;
    }
    if (!strcmp(mode, "segv_raise")) {
        work(4);
        raise(SIGSEGV);
        return 3;
    }
    if (!strcmp(mode, "abort")) {
        work(4);
        abort();
    }
    if (!strcmp(mode, "thread_exit")) {
        pthread_t t;
        work(1);
        pthread_create(&t, NULL, thread_exit_main, NULL);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "inflight")) {
        inflight_tid = (pid_t)syscall(SYS_gettid);
        inflight_how = argc > 2 ? argv[2] : "exit";
        work(1);
        if (cuLaunchHostFunc(NULL, inflight_fn, NULL) != CUDA_SUCCESS)
            return 1;
        cudaStreamSynchronize(NULL);
        return 3;   /* not reached: the host function ends the process */
    }
#ifdef E2E_HAVE_NVTX
    if (!strcmp(mode, "nvtx_threads")) {
        pthread_t t[NVTX_NT];
        work(1);
        /* NVTX's first call loads the injection, which fills NVTX's table of function pointers with plain stores
           while other threads' calls read it (NVTX's header-only design; TSan reports it): made here, alone */
        nvtxMarkA("threads");
        for (int k = 0; k < NVTX_NT; k++)
            pthread_create(&t[k], NULL, nvtx_thread_main, (void *)(intptr_t)k);
        for (int k = 0; k < NVTX_NT; k++)
            pthread_join(t[k], NULL);
        return 0;
    }
    if (!strcmp(mode, "nvtx_signal") && argc > 2) {
        /* N rounds of: cuCtxGetCurrent (a one-record query), an NVTX range pushed, a cuMemAlloc and its free
           (two-record calls), popped - under a 20 us timer aimed at this thread whose handler marks "sig".
           Prints the handler's count. */
        int n = atoi(argv[2]);
        struct sigaction sa;
        sig_cuda = argc > 3 && !strcmp(argv[3], "cuda");
        struct sigevent sev;
        struct itimerspec its;
        timer_t tm;
        CUcontext cur;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = sig_mark;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        work(1);
        nvtxMarkA("start");   /* NVTX's first call loads the injection: not in the handler */
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGALRM;
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0) {
            perror("timer_create");
            return 2;
        }
        memset(&its, 0, sizeof its);
        its.it_value.tv_nsec = its.it_interval.tv_nsec = 20000;
        timer_settime(tm, 0, &its, NULL);
        for (int i = 0; i < n; i++) {
            CUdeviceptr p;
            cuCtxGetCurrent(&cur);
            nvtxRangePushA("m");
            if (cuMemAlloc(&p, 64) == CUDA_SUCCESS)
                cuMemFree(p);
            nvtxRangePop();
        }
        timer_delete(tm);
        signal(SIGALRM, SIG_IGN);
        printf("marks %d\n", (int)sig_marks);
        return 0;
    }
    if (!strcmp(mode, "nvtx_domains")) {
        /* more domains than the plugin keeps apart (30 named ones beside the default): "d0".."d39" created, "d5"
           again (the same handle), a range "rI" pushed in each, one call inside all 40, popped in reverse. The
           first 30 have their own stacks (level 0 each), the other 10 share one (levels 0..9 on push, 9..0 on
           pop). Then two of the shared ones pushed and popped in their own order. Exit 4 with what was wrong. */
        nvtxDomainHandle_t h[40];
        char name[16], msg[40][8];
        nvtxEventAttributes_t a[40];
        int bad = 0;
        for (int i = 0; i < 40; i++) {
            snprintf(name, sizeof name, "d%d", i);
            h[i] = nvtxDomainCreateA(name);
            snprintf(msg[i], sizeof msg[i], "r%d", i);
            a[i] = ascii_attr(msg[i]);
        }
        if (nvtxDomainCreateA("d5") != h[5] || h[29] == h[30] || h[30] != h[39] || h[0] == h[1])
            bad |= 1;
        for (int i = 0; i < 40; i++)
            if (nvtxDomainRangePushEx(h[i], &a[i]) != (i < 30 ? 0 : i - 30))
                bad |= 2;
        work(1);
        for (int i = 39; i >= 0; i--)
            if (nvtxDomainRangePop(h[i]) != (i < 30 ? 0 : i - 30))
                bad |= 4;
        nvtxDomainRangePushEx(h[35], &a[35]);
        nvtxDomainRangePushEx(h[36], &a[36]);
        work(1);
        nvtxDomainRangePop(h[35]);
        nvtxDomainRangePop(h[36]);
        if (bad) {
            fprintf(stderr, "nvtx_domains: wrong %s%s%s\n", bad & 1 ? "handles " : "", bad & 2 ? "push levels " : "",
                    bad & 4 ? "pop levels" : "");
            return 4;
        }
        return 0;
    }
    if (!strcmp(mode, "nvtx_names") && argc > 2) {   /* more names than nvtx_sum keeps rows for */
        char name[32];
        int n = atoi(argv[2]);
        work(1);
        for (int i = 0; i <= n; i++) {
            snprintf(name, sizeof name, "r%d", i < n ? i : 0);
            nvtxRangePushA(name);
            nvtxRangePop();
        }
        return 0;
    }
    if (!strcmp(mode, "capture_nvtx_many")) {   /* 65 ranges "step" started at once: one more than followed */
        nvtxRangeId_t ids[65];
        for (int i = 0; i < 65; i++)
            ids[i] = nvtxRangeStartA("step");
        work(1);
        for (int i = 0; i < 65; i++)
            nvtxRangeEnd(ids[i]);
        work(1);
        return 0;
    }
    if (!strcmp(mode, "capture_nvtx_dom")) {
        /* a range "step" of domain "lib" and one of the default domain, overlapping without nesting (each domain
           has its own stack): "lib" step open over work 2 and 3, the default one over 3 and 4. The push levels
           are the domain's own: the program says which came back wrong (exit 4). */
        nvtxDomainHandle_t lib = nvtxDomainCreateA("lib");
        nvtxEventAttributes_t a = ascii_attr("step");
        int l0 = nvtxRangePushA("outer");
        work(1);
        int l1 = nvtxDomainRangePushEx(lib, &a);
        work(2);
        int l2 = nvtxRangePushA("step");
        work(3);
        int p1 = nvtxDomainRangePop(lib);
        work(4);
        int p2 = nvtxRangePop(), p3 = nvtxRangePop(), p4 = nvtxDomainRangePop(lib);
        nvtxRangePushA("st@ep");   /* an '@' in a message */
        work(1);
        nvtxRangePop();
        if (l0 != 0 || l1 != 0 || l2 != 1 || p1 != 0 || p2 != 1 || p3 != 0 || p4 >= 0) {
            fprintf(stderr, "push/pop levels: %d %d %d / %d %d %d %d\n", l0, l1, l2, p1, p2, p3, p4);
            return 4;
        }
        return 0;
    }
    if (!strcmp(mode, "capture_nvtx")) {
        nvtxRangeId_t id;
        pthread_t t;
        nvtxRangePushA("outer");
        work(1);
        nvtxRangePushA("step");
        work(1);
        nvtxRangePushA("step");   /* nested: the outer one ends the capture */
        work(1);
        nvtxRangePushA("inner");
        work(1);
        nvtxRangePop();
        nvtxRangePop();   /* the nested "step" */
        work(2);
        nvtxRangePop();   /* the capture's "step" */
        nvtxRangePop();
        id = nvtxRangeStartA("step");
        work(4);
        pthread_create(&t, NULL, nvtx_end_main, &id);   /* ended on another thread */
        pthread_join(t, NULL);
        work(2);
        return 0;
    }
    if (!strcmp(mode, "nvtx_gpu")) {
        unsigned char h[64] = {0};
        CUdeviceptr p;
        cuCtxSetCurrent(ctx);
        if (cuMemAlloc(&p, sizeof h) != CUDA_SUCCESS)
            return 2;
        if (cuProfilerStart() != CUDA_SUCCESS)
            return 2;
        nvtxRangePushA("first");
        for (int i = 0; i < 3; i++)
            if (cuMemcpyHtoD(p, h, sizeof h) != CUDA_SUCCESS)
                return 2;
        nvtxRangePop();
        if (cuProfilerStop() != CUDA_SUCCESS)
            return 2;
        cuMemFree(p);
        return 0;
    }
    if (!strcmp(mode, "nvtx")) {
        nvtxRangeId_t id;
        nvtxRangePushA("outer");
        work(1);
        nvtxRangePushA("inner");
        work(1);
        nvtxRangePop();
        nvtxRangePop();
        id = nvtxRangeStartA("async range");
        nvtxMarkA("a mark");
        nvtxRangeEnd(id);
        {
            nvtxDomainHandle_t dom = nvtxDomainCreateA("e2e");
            nvtxEventAttributes_t a = ascii_attr("domain range");
            nvtxDomainRangePushEx(dom, &a);
            nvtxDomainRangePop(dom);
            /* a registered string (libraries name their ranges once) and the wide-character calls */
            a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
            a.message.registered = nvtxDomainRegisterStringA(dom, "registered range");
            nvtxDomainRangePushEx(dom, &a);
            nvtxDomainRangePop(dom);
            nvtxRangePushW(L"wide range");
            nvtxRangePop();
            {   /* beyond ASCII: UTF-8 in the file; a surrogate is no character: '?' */
                wchar_t w[] = L"wide \u00e9\u4e2d\U0001F600 ?x";
                w[9] = (wchar_t)0xd800;
                nvtxRangePushW(w);
                nvtxRangePop();
            }
            /* ranges of two domains that do not nest: "e2e"'s popped while a default one pushed after it is open */
            nvtxRangePushA("A");
            a.messageType = NVTX_MESSAGE_TYPE_ASCII;
            a.message.ascii = "L";
            nvtxDomainRangePushEx(dom, &a);
            nvtxRangePushA("B");
            work(1);
            nvtxDomainRangePop(dom);
            work(1);
            nvtxRangePop();
            nvtxRangePop();
            nvtxDomainMarkEx(dom, &a);
            {   /* threads named: this one, and one not yet seen by the writer (named before its first call) */
                pthread_t t2;
                nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "e2e main");
                pthread_create(&t2, NULL, named_thread_main, NULL);
                while (atomic_load(&named_tid) == 0)
                    usleep(1000);
                nvtxNameOsThreadW((uint32_t)atomic_load(&named_tid), L"e2e worker");
                atomic_store(&named_done, 1);
                pthread_join(t2, NULL);
            }
#ifdef E2E_HAVE_NVTX_PAYLOAD
            /* pushed as a plain range, popped by the payload extension (NCCL's way) */
            a.message.ascii = "payload pop";
            nvtxDomainRangePushEx(dom, &a);
            nvtxRangePopPayload(dom, NULL, 0);
#endif
            /* a message with a control byte and a byte that is no UTF-8: escaped in the file (\u0001, \u00e9),
               the same row at exit as read back from it */
            nvtxRangePushA("bytes \x01\xe9 !");
            nvtxRangePop();
        }
        return 0;
    }
#endif
    fprintf(stderr, "usage: e2e_trace threads N | many N | structs | fork | sigterm | segv | segv_raise | abort | thread_exit | inflight exit|abort | nvtx | capture_nvtx_dom | runtime\n");
    return 2;
}
