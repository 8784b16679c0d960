/*
 * rt_cfg_prog.c - a small CUDA program for the configuration and counts tests
 * (rt_cfg_env_test.sh, rt_counts_files_test.sh): linked with libcushim.so, it
 * makes N driver calls through the shim and can fork, re-point its stderr, or
 * report whether a shim hook API answers. Options, in any order:
 *   --calls=N        cuDriverGetVersion N times (default 3), plus one cuInit
 *   --fork           a forked child makes 2 more calls and exits
 *   --stderr-null    after the calls, fd 2 becomes /dev/null
 *   --close-fds=FILE after the calls, every descriptor from 3 up is closed and
 *                    reopened on FILE (which gets "mine\n"), as a program that
 *                    closes what it did not open and reuses the numbers would
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);

int main(int argc, char **argv)
{
    int calls = 3, do_fork = 0, stderr_null = 0;
    const char *reuse = NULL;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--calls=", 8) == 0)
            calls = atoi(argv[i] + 8);
        else if (strcmp(argv[i], "--fork") == 0)
            do_fork = 1;
        else if (strcmp(argv[i], "--stderr-null") == 0)
            stderr_null = 1;
        else if (strncmp(argv[i], "--close-fds=", 12) == 0)
            reuse = argv[i] + 12;
        else {
            fprintf(stderr, "rt_cfg_prog: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    int v = 0;
    cuInit(0);
    for (int i = 0; i < calls; i++)
        cuDriverGetVersion(&v);
    if (do_fork) {
        pid_t pid = fork();
        if (pid == 0) {
            cuDriverGetVersion(&v);
            cuDriverGetVersion(&v);
            exit(0);   /* counts written by the atexit handler */
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
    }
    if (stderr_null) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, 2) < 0)
            return 1;
        close(fd);
    }
    if (reuse != NULL) {
        int f = open(reuse, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (f < 0 || write(f, "mine\n", 5) != 5)
            return 1;
        for (int fd = 3; fd < 256; fd++)
            if (fd != f && fcntl(fd, F_GETFD) >= 0 && dup3(f, fd, O_CLOEXEC) < 0)
                return 1;
    }
    return 0;
}
