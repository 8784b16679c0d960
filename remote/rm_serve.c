/*
 * rm_serve.c - cushim-serve: the GPU host's side of API forwarding (docs/remote.md, docs/remote-deploy.md).
 *
 * USAGE
 *   cushim-serve --listen=unix:/run/cushim.sock [--shim=PATH] [--max-clients=N] [--once] [--verbose]
 *   cushim-serve --listen=tcp://HOST:PORT --token-file=FILE [--token-file=FILE2...] [--shim=PATH] [--max-clients=N]
 *                [--once] [--verbose]
 *   cushim-serve --apis[=GLOB] [--shim=PATH]     how each API is forwarded, as TSV (cushim apis --remote)
 *   (usually started by 'cushim serve', which also sets the server-side plugins and the visible GPUs)
 *
 * A unix socket is created with mode 0600 and accepts clients of its own uid only (SO_PEERCRED). TCP (binding
 * 127.0.0.1 unless another host is given) needs a token file: each client proves that it knows the token in
 * the hello (rm_auth.h) before its back end loads anything; several token files are several tenants, whose CUDA IPC
 * handles are kept apart (rm_ipc.h: a table this process maps shared before it forks). Each client gets a back-end process of its own
 * (fork, then rm_backend.c), which loads the shim and through it the driver found the usual way (libcuda.so.1:
 * the fake one under LD_LIBRARY_PATH in CI), so a client that crashes or corrupts its context takes no other
 * client down. At most --max-clients back ends (64) live at once, those still proving their token included: past it
 * the listener answers a hello that says so (RM_HELLO_REFUSED_BUSY) and closes, without forking, so a flood of
 * connections costs the host a bounded number of processes. The listening process never touches CUDA. --once serves one client and exits with its back
 * end's status (tests). The shim defaults to the one beside this program (the build tree's
 * runtime/libcushim.so, or the installed lib/libcushim.so). Server-side plugins: CUSHIM_PLUGINS in this
 * program's environment is read by each back end's shim, whose hooks each call goes through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rm_auth.h"
#include "rm_backend.h"
#include "rm_ipc.h"
#include "rm_plan.h"
#include "rm_sock.h"

static void usage(void)
{
    fprintf(stderr, "usage: cushim-serve --listen=unix:PATH|tcp://HOST:PORT [--token-file=FILE...] [--shim=PATH] "
            "[--max-clients=N] [--once] [--verbose]\n");
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

static const char *lib_name(unsigned lib)
{
    switch (lib) {   /* the names CUSHIM_LIBS uses (runtime/libs.c) */
    case CUSHIM_LIB_DRIVER: return "driver";
    case CUSHIM_LIB_RUNTIME: return "runtime";
    case CUSHIM_LIB_NVML: return "nvml";
    case CUSHIM_LIB_NCCL: return "nccl";
    case CUSHIM_LIB_CUBLAS: return "cublas";
    case CUSHIM_LIB_CUBLASLT: return "cublaslt";
    default: return "?";
    }
}

/* --apis[=GLOB]: each API's class (rm_plan.h) from the shim's own metadata, as the client and the back end
   build them: TSV, id api library class reason (empty for forward; tabs and newlines in it become spaces). */
static int list_apis(const char *shim, const char *glob)
{
    void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
    cushim_host_get_fn get = h ? (cushim_host_get_fn)dlsym(h, CUSHIM_HOST_GET_NAME) : NULL;
    const cushim_host *host = get != NULL ? get(CUSHIM_ABI_VERSION) : NULL;
    if (host == NULL) {
        fprintf(stderr, "cushim-serve: cannot use the shim %s: %s\n", shim, h ? "no host table of this ABI" : dlerror());
        return 1;
    }
    rm_meta m;
    rm_meta_from_host(&m, host);
    rm_plans *ps = rm_plans_build(&m);
    if (ps == NULL) {
        fprintf(stderr, "cushim-serve: out of memory\n");
        return 1;
    }
    int found = 0;
    printf("id\tapi\tlibrary\tclass\treason\n");
    for (uint32_t i = 0; i < ps->count; i++) {
        const rm_plan *pl = &ps->all[i];
        if (glob != NULL && fnmatch(glob, pl->info->name, 0) != 0)
            continue;
        char reason[512] = "";
        if (pl->cls != RM_CLASS_FORWARD && pl->reason != NULL) {
            snprintf(reason, sizeof reason, "%s", pl->reason);
            for (char *c = reason; *c != '\0'; c++)
                if (*c == '\t' || *c == '\n')
                    *c = ' ';
        }
        printf("%u\t%s\t%s\t%s\t%s\n", pl->id, pl->info->name, lib_name(pl->info->library), rm_class_name(pl->cls),
               reason);
        found = 1;
    }
    rm_plans_free(ps);
    if (fflush(stdout) != 0)
        return 1;
    if (!found)
        fprintf(stderr, "cushim-serve: no API's name matches '%s'\n", glob);
    return found ? 0 : 1;
}

static volatile sig_atomic_t rs_child_exited;

static void rs_on_child(int sig)
{
    (void)sig;
    rs_child_exited = 1;   /* accept4 returns EINTR: the loop reaps */
}

/* Reaps the back ends that ended; returns how many. */
static rm_ipc *rs_ipc;   /* the IPC handles the back ends exported (rm_ipc.h) */

static unsigned rs_reap(void)
{
    unsigned n = 0;
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        n++;
        if (rs_ipc != NULL)
            rm_ipc_forget(rs_ipc, pid);   /* a back end that died before forgetting its own */
    }
    return n;
}

/* A client past --max-clients: a hello that says so (the socket is fresh: its buffer takes the 88 bytes
   without blocking, and a peer that reads nothing cannot hold the listener: MSG_DONTWAIT), then close. */
static void rs_refuse_busy(int fd)
{
    rm_hello busy;
    memset(&busy, 0, sizeof busy);
    busy.ptr_bytes = sizeof(void *);
    busy.status = RM_HELLO_REFUSED_BUSY;
    busy.pid = (uint32_t)getpid();
    uint8_t msg[16 + sizeof busy];
    rm_hdr_put(msg, RM_MSG_HELLO, sizeof busy, 0);
    memcpy(msg + 16, &busy, sizeof busy);
    (void)!send(fd, msg, sizeof msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    /* what the client sent already (its hello), read without waiting: closing with unread bytes would reset
       the connection under the answer */
    uint8_t sink[512];
    for (int i = 0; i < 4 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
}

int main(int argc, char **argv)
{
    const char *listen_at = NULL, *shim = NULL, *token_file = NULL, *token_files[RM_MAX_TOKENS], *glob = NULL;
    unsigned ntokens = 0;
    int once = 0, verbose = 0, apis = 0;
    unsigned max_clients = 64, live = 0, refused = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--listen=", 9) == 0)
            listen_at = argv[i] + 9;
        else if (strncmp(argv[i], "--shim=", 7) == 0)
            shim = argv[i] + 7;
        else if (strncmp(argv[i], "--token-file=", 13) == 0) {
            if (ntokens == RM_MAX_TOKENS) {
                fprintf(stderr, "cushim-serve: at most %u --token-file\n", RM_MAX_TOKENS);
                return 2;
            }
            token_file = token_files[ntokens++] = argv[i] + 13;
        }
        else if (strcmp(argv[i], "--apis") == 0)
            apis = 1;
        else if (strncmp(argv[i], "--apis=", 7) == 0)
            apis = 1, glob = argv[i] + 7;
        else if (strncmp(argv[i], "--max-clients=", 14) == 0) {
            char *end;
            unsigned long v = strtoul(argv[i] + 14, &end, 10);
            if (argv[i][14] < '0' || argv[i][14] > '9' || *end != '\0' || v < 1 || v > 4096) {
                fprintf(stderr, "cushim-serve: %s: a number of clients from 1 to 4096\n", argv[i]);
                return 2;
            }
            max_clients = (unsigned)v;
        } else if (strcmp(argv[i], "--once") == 0)
            once = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else
            usage();
    }
    if (apis) {
        if (shim == NULL && (shim = default_shim()) == NULL) {
            fprintf(stderr, "cushim-serve: libcushim.so not found beside this program: give --shim=PATH\n");
            return 1;
        }
        return list_apis(shim, glob);
    }
    if (listen_at == NULL)
        usage();
    char err[512];
    rm_addr addr;
    static rm_token tokens[RM_MAX_TOKENS];
    if (rm_addr_parse(listen_at, &addr, err, sizeof err) != 0) {
        fprintf(stderr, "cushim-serve: %s\n", err);
        return 2;
    }
    if (addr.tcp && token_file == NULL) {
        fprintf(stderr, "cushim-serve: %s: TCP needs --token-file=FILE (clients prove they know the token; "
                "make one with: head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)\n", listen_at);
        return 2;
    }
    for (unsigned k = 0; k < ntokens; k++) {
        if (rm_token_load(token_files[k], &tokens[k], err, sizeof err) != 0) {
            fprintf(stderr, "cushim-serve: %s\n", err);
            return 2;
        }
    }
    if ((rs_ipc = rm_ipc_create()) == NULL)
        fprintf(stderr, "cushim-serve: no shared memory for the IPC table: CUDA IPC handles are refused\n");
    if (shim == NULL && (shim = default_shim()) == NULL) {
        fprintf(stderr, "cushim-serve: libcushim.so not found beside this program: give --shim=PATH\n");
        return 1;
    }
    int lfd = rm_listen(listen_at, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "cushim-serve: %s\n", err);
        return 1;
    }
    if (!once) {   /* back ends are counted and reaped here (an ended one interrupts accept4) */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = rs_on_child;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGCHLD, &sa, NULL);
    }
    if (addr.tcp)
        fprintf(stderr, "cushim-serve[%d]: listening on tcp://%s%s%s:%u, clients need the token of %s (shim %s)\n",
                (int)getpid(), strchr(addr.host, ':') ? "[" : "", addr.host, strchr(addr.host, ':') ? "]" : "",
                addr.port, ntokens > 1 ? "one of the token files" : token_file, shim);
    else
        fprintf(stderr, "cushim-serve[%d]: listening on %s%s (shim %s)\n", (int)getpid(), listen_at,
                token_file != NULL ? ", clients need the token" : "", shim);
    for (;;) {
        if (!once) {
            rs_child_exited = 0;
            unsigned ended = rs_reap();
            live = ended > live ? 0 : live - ended;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            fprintf(stderr, "cushim-serve: accept: %s\n", strerror(errno));
            return 1;
        }
        char peer[96];
        long uid = -1;
        if (!rm_accepted(fd, peer, sizeof peer)) {
            uid = rm_peer_uid(fd);
            if (uid != (long)geteuid()) {
                fprintf(stderr, "cushim-serve: refused a client of uid %ld (this server serves uid %ld)\n", uid,
                        (long)geteuid());
                close(fd);
                continue;
            }
        }
        if (!once && live >= max_clients) {
            unsigned ended = rs_reap();   /* one may have ended since */
            live = ended > live ? 0 : live - ended;
        }
        if (!once && live >= max_clients) {
            if (refused++ == 0 || refused % 1000 == 0)
                fprintf(stderr, "cushim-serve: refused %s: %u back ends already (--max-clients=%u; %u refused so "
                        "far)\n", peer, live, max_clients, refused);
            rs_refuse_busy(fd);
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(lfd);
            signal(SIGCHLD, SIG_DFL);
            rm_backend_opts o = { .shim = shim, .tokens = tokens, .ntokens = ntokens, .peer_uid = uid,
                                  .ipc = rs_ipc, .peer = peer, .verbose = verbose };
            exit(rm_backend_run(fd, &o));
        }
        close(fd);
        if (pid < 0)
            fprintf(stderr, "cushim-serve: fork: %s\n", strerror(errno));
        else
            live++;
        if (once && pid > 0) {
            int st = 0;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
    }
}
