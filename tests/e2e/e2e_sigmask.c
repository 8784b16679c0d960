/*
 * e2e_sigmask.c - the threads the shim and its plugins start never take the program's signals.
 *
 * A signal sent to a process goes to one of its threads that does not block it. A program that blocks a
 * signal in its own threads and then waits for it (sigwait, sigsuspend, sigtimedwait: the race-free way to wait
 * for SIGCHLD or a timer) or that expects its handler on its main thread (a siglongjmp back into its loop, a
 * blocking call interrupted by EINTR) breaks when a thread it did not create leaves the signal unblocked: the
 * kernel delivers the signal there. The trace plugin's threads have always blocked every signal; the lua
 * plugin's file watcher and smlimit's poller did not before 2026-12-04.
 *
 * Usage: e2e_sigmask [MS]
 *   makes the calls that start the plugins' threads (a context, a module, a kernel launch, a synchronisation),
 *   waits MS ms (default 300) for threads started late, then:
 *   1. every thread of the process but this one must block SIGINT, SIGUSR1, SIGALRM, SIGTERM and SIGCHLD
 *      (/proc/self/task/T/status, SigBlk): each one that does not is named;
 *   2. with SIGUSR1 blocked here, kill(getpid(), SIGUSR1) must leave it pending for the process and run no
 *      handler on another thread; sigwait takes it.
 *   3. a program it executes (itself, "listfds", without LD_PRELOAD) inherits no descriptor the shim or a
 *      plugin opened (each would be held open by a program that never asked for it: a trace file, a lock):
 *      every descriptor above 2 that child finds is named with what it is ("fd 5 -> /tmp/t.json").
 * Prints "threads N: NAME,..." (besides this one) and exits 0, or 1 with what was wrong.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                          ".visible .entry vecadd() { ret; }\n";

static volatile sig_atomic_t handler_tid;

static void on_usr1(int sig)
{
    (void)sig;
    handler_tid = (sig_atomic_t)syscall(SYS_gettid);
}

/* The SigBlk mask of thread 'tid' from its status file, or 0 with *ok = 0. */
static unsigned long long sigblk(const char *tid, char *comm, size_t commlen, int *ok)
{
    char path[300], line[256];
    unsigned long long mask = 0;
    FILE *f;
    *ok = 0;
    snprintf(comm, commlen, "?");
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(comm, (int)commlen, f) != NULL)
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;   /* the thread ended meanwhile */
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "SigBlk: %llx", &mask) == 1) {
            *ok = 1;
            break;
        }
    fclose(f);
    return mask;
}

/* listfds: each open descriptor above 2 but the directory's own, "fd N -> TARGET" on stdout; exit 0 */
static int list_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (d == NULL)
        return 2;
    while ((e = readdir(d)) != NULL) {
        char path[300], target[512];
        ssize_t k;
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        k = readlink(path, target, sizeof target - 1);
        target[k > 0 ? k : 0] = '\0';
        printf("fd %d -> %s\n", fd, target);
    }
    closedir(d);
    return 0;
}

/* Runs this program as "listfds" (without LD_PRELOAD or CUSHIM_PLUGINS: a program that is not traced), its
   output into 'out'. 0, or -1. */
static int exec_listfds(const char *self_path, char *out, size_t outlen)
{
    int p[2];
    pid_t pid;
    size_t n = 0;
    ssize_t k;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if ((pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        dup2(p[1], 1);
        unsetenv("LD_PRELOAD");
        unsetenv("CUSHIM_PLUGINS");
        unsetenv("CUSHIM_COUNTS");
        execl(self_path, self_path, "listfds", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    while (n + 1 < outlen && (k = read(p[0], out + n, outlen - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = '\0';
    close(p[0]);
    waitpid(pid, NULL, 0);
    return 0;
}

/* The descriptors the program was started with (the harness's own: a log, a jobserver's pipe), not the
   shim's: left out of the check. From E2E_FDS_BEFORE ("0 1 2 10": what the starting shell had open - the shim
   opens its files before main, in its constructor, so the program cannot tell them apart itself); without it,
   every inherited descriptor above 2 counts. */
static unsigned char fd_at_start[1024];

static void note_fds_at_start(void)
{
    const char *given = getenv("E2E_FDS_BEFORE");
    for (char *end; given != NULL && *given != '\0'; given = end) {
        long fd = strtol(given, &end, 10);
        if (end == given) {
            end++;
            continue;
        }
        if (fd >= 0 && fd < (long)sizeof fd_at_start)
            fd_at_start[fd] = 1;
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "listfds") == 0)
        return list_fds();
    note_fds_at_start();
    int ms = argc > 1 ? atoi(argv[1]) : 300, bad = 0, threads = 0, sig = 0;
    char names[512] = "";
    static const int want[] = {SIGINT, SIGUSR1, SIGALRM, SIGTERM, SIGCHLD};
    pid_t self = (pid_t)syscall(SYS_gettid);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr p;
    struct sigaction sa;
    sigset_t usr1, pending;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    DIR *d;
    struct dirent *e;

    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&fn, mod, "vecadd") != CUDA_SUCCESS ||
        cuMemAlloc(&p, 256) != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_sigmask: the CUDA calls failed\n");
        return 2;
    }
    if (cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS || cuCtxSynchronize() != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_sigmask: the launch failed\n");
        return 2;
    }
    nanosleep(&ts, NULL);

    if ((d = opendir("/proc/self/task")) == NULL) {
        perror("e2e_sigmask: /proc/self/task");
        return 2;
    }
    while ((e = readdir(d)) != NULL) {
        char comm[64];
        int ok;
        unsigned long long mask;
        if (e->d_name[0] == '.' || atoi(e->d_name) == self)
            continue;
        mask = sigblk(e->d_name, comm, sizeof comm, &ok);
        if (!ok)
            continue;
        threads++;
        if (strlen(names) + strlen(comm) + 2 < sizeof names) {
            strcat(names, names[0] ? "," : "");
            strcat(names, comm);
        }
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (!(mask & (1ull << (want[i] - 1)))) {
                fprintf(stderr, "e2e_sigmask: thread %s '%s' takes signal %d (SigBlk %016llx)\n", e->d_name, comm,
                        want[i], mask);
                bad = 1;
                break;
            }
    }
    closedir(d);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    kill(getpid(), SIGUSR1);
    nanosleep(&(struct timespec){0, 50000000L}, NULL);
    sigpending(&pending);
    if (handler_tid != 0) {
        fprintf(stderr, "e2e_sigmask: the program's SIGUSR1 handler ran on thread %d, not this one\n",
                (int)handler_tid);
        bad = 1;
    } else if (!sigismember(&pending, SIGUSR1)) {
        fprintf(stderr, "e2e_sigmask: SIGUSR1 is not pending while this thread blocks it\n");
        bad = 1;
    } else if (sigwait(&usr1, &sig) != 0 || sig != SIGUSR1) {
        fprintf(stderr, "e2e_sigmask: sigwait did not take SIGUSR1\n");
        bad = 1;
    }
    {
        char fds[4096], self_path[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
        self_path[k > 0 ? k : 0] = '\0';
        if (k <= 0 || exec_listfds(self_path, fds, sizeof fds) != 0) {
            fprintf(stderr, "e2e_sigmask: could not run listfds\n");
            bad = 1;
        } else {
            for (char *line = strtok(fds, "\n"); line != NULL; line = strtok(NULL, "\n")) {
                int fd = -1;
                if (sscanf(line, "fd %d", &fd) == 1 && fd >= 0 && fd < (int)sizeof fd_at_start && fd_at_start[fd])
                    continue;   /* the harness's */
                fprintf(stderr, "e2e_sigmask: a program it executes inherits %s\n", line);
                bad = 1;
            }
        }
    }
    cuMemFree(p);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    printf("threads %d: %s\n", threads, names);
    return bad;
}
