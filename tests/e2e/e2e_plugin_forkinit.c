/*
 * e2e_plugin_forkinit.c - issue #10 item 6c: fork() while another thread is
 * inside the shim's initialisation must not leave the child waiting for it.
 *
 * A thread dlopen()s the drop-in libcuda.so.1, whose initialisation loads a
 * plugin whose init sleeps (probe: sleep_ms, 'started' file). Meanwhile the
 * main thread forks; the child looks up and calls cuDriverGetVersion: its
 * initialisation was interrupted in another thread, so the child completes it
 * (the interrupted plugin is reported as not loaded; it is optional here, so
 * the call reaches the driver). The parent gives the child 20 s.
 * Usage: e2e_plugin_forkinit <started-file>
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*version_fn)(int *);

static void *opener(void *arg)
{
    (void)arg;
    return dlopen("libcuda.so.1", RTLD_NOW);
}

static int call_version(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    version_fn f = h ? (version_fn)dlsym(h, "cuDriverGetVersion") : NULL;
    int v = 0;
    return f != NULL && f(&v) == 0 && v > 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    unlink(argv[1]);
    pthread_t t;
    if (pthread_create(&t, NULL, opener, NULL) != 0)
        return 2;
    struct stat sb;
    for (int i = 0; stat(argv[1], &sb) != 0; i++) {   /* the plugin's init has started */
        if (i > 20000) {
            fprintf(stderr, "e2e_plugin_forkinit: FAIL: the plugin's init never started\n");
            return 1;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    pid_t pid = fork();
    if (pid == 0)
        _exit(call_version());
    int st = 0, waited = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (++waited > 20000) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fprintf(stderr, "e2e_plugin_forkinit: FAIL: the child hung in the shim's initialisation\n");
            return 1;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    void *h = NULL;
    pthread_join(t, &h);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "e2e_plugin_forkinit: FAIL: the child's CUDA call failed (status %d)\n", st);
        return 1;
    }
    if (h == NULL || call_version() != 0) {
        fprintf(stderr, "e2e_plugin_forkinit: FAIL: the parent's CUDA call failed\n");
        return 1;
    }
    printf("e2e_plugin_forkinit: ok (the child finished while the parent's initialisation ran)\n");
    return 0;
}
