/*
 * rm_serve.c - cushim-serve: the GPU host's side of API forwarding (docs/remote.md).
 *
 * USAGE
 *   cushim-serve --listen=unix:/run/cushim.sock [--shim=/path/libcushim.so] [--once] [--verbose]
 *
 * Listens on a unix socket created with mode 0600 and accepts clients of its own uid only (SO_PEERCRED).
 * Each client gets a back-end process of its own (fork, then rm_backend.c), which loads the shim and
 * through it the driver found the usual way (libcuda.so.1: the fake one under LD_LIBRARY_PATH in CI), so a
 * client that crashes or corrupts its context takes no other client down. The listening process never
 * touches CUDA. --once serves one client and exits with its back end's status (tests). The shim defaults to
 * the one beside this program (the build tree's runtime/libcushim.so, or the installed lib/libcushim.so).
 * Server-side plugins: CUSHIM_PLUGINS in this program's environment is read by each back end's shim.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rm_backend.h"
#include "rm_sock.h"

static void usage(void)
{
    fprintf(stderr, "usage: cushim-serve --listen=unix:PATH [--shim=PATH] [--once] [--verbose]\n");
    exit(2);
}

/* libcushim.so beside this program: build tree (remote/ -> runtime/) or installed (bin/, libexec/cushim/). */
static const char *default_shim(void)
{
    static char path[PATH_MAX];
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = '\0';
    const char *dir = dirname(self);
    static const char *const rel[] = { "../runtime/libcushim.so", "../lib/libcushim.so", "../../lib/libcushim.so",
                                       "../lib64/libcushim.so", "../../lib64/libcushim.so" };
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, rel[i]);
        if (access(path, R_OK) == 0)
            return path;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *listen_at = NULL, *shim = NULL;
    int once = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--listen=", 9) == 0)
            listen_at = argv[i] + 9;
        else if (strncmp(argv[i], "--shim=", 7) == 0)
            shim = argv[i] + 7;
        else if (strcmp(argv[i], "--once") == 0)
            once = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else
            usage();
    }
    if (listen_at == NULL)
        usage();
    if (shim == NULL && (shim = default_shim()) == NULL) {
        fprintf(stderr, "cushim-serve: libcushim.so not found beside this program: give --shim=PATH\n");
        return 1;
    }
    char err[256];
    int lfd = rm_listen(listen_at, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "cushim-serve: %s\n", err);
        return 1;
    }
    if (!once)
        signal(SIGCHLD, SIG_IGN);   /* back ends are reaped by the kernel */
    fprintf(stderr, "cushim-serve[%d]: listening on %s (shim %s)\n", (int)getpid(), listen_at, shim);
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            fprintf(stderr, "cushim-serve: accept: %s\n", strerror(errno));
            return 1;
        }
        long uid = rm_peer_uid(fd);
        if (uid != (long)geteuid()) {
            fprintf(stderr, "cushim-serve: refused a client of uid %ld (this server serves uid %ld)\n", uid,
                    (long)geteuid());
            close(fd);
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(lfd);
            signal(SIGCHLD, SIG_DFL);
            exit(rm_backend_run(fd, shim, verbose));
        }
        close(fd);
        if (pid < 0)
            fprintf(stderr, "cushim-serve: fork: %s\n", strerror(errno));
        if (once && pid > 0) {
            int st = 0;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
    }
}
