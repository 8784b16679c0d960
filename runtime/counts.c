/*
 * counts.c - the built-in call counter (CUSHIM_COUNTS=<path>, or '-').
 *
 * Counts every entry into a wrapper per API id (also calls made from inside
 * hooks or from the runtime into the driver), independent of hooks: with the
 * counter on, every slot carries at least a counting chain, so the fast path
 * falls through to the slow path, which counts first.
 *
 * Written as 'name<TAB>count' lines (APIs with a non-zero count, in id order)
 * at exit: from an atexit handler registered at initialisation and again from
 * the library destructor (calls made by other libraries' exit handlers);
 * cnt_write may run any number of times, the last leaves the complete totals.
 *
 * The shim never removes, renames or replaces a path, and never creates one
 * where a descriptor or device is named. Where the lines go (cnt_path_kind):
 * - '-': the process's stderr as it was at start (config.c dups fd 2), and a
 *   path naming one of its own descriptors (/dev/stderr, /dev/fd/N,
 *   /proc/self/fd/N, or a symlink to one): written through that descriptor;
 * - another non-regular file (FIFO, terminal, device) or a /proc path: opened
 *   at exit without O_CREAT and appended to.
 *   In both, each process that counted something adds a '# cushim counts pid N'
 *   line and its lines (again at the destructor only if more was counted).
 * - a regular file (symlinks followed): the run's file, shared by the process
 *   tree. Each process opens it at initialisation (created 0644 if missing)
 *   and holds a shared OFD lock on byte 0 until it exits; a process that finds
 *   no lock there is the first of its run and truncates what an earlier run
 *   left (truncate, never unlink). At its first counted call a process claims
 *   <path> with an exclusive lock on byte 1, if the file is still empty; the
 *   claimant writes <path> through the descriptor it opened, any other
 *   process - a forked child (its counts restart at zero), an exec'd one, a
 *   later program of the same shell - writes <path>.<pid>. A process that
 *   counted nothing writes nothing. No environment variable is set: ownership
 *   is decided by the locks and the file alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "base.h"
#include "config.h"
#include "counts.h"
#include "env.h"
#include "log.h"
#include "module.h"
#include "cushim/cushim_io.h"

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

int cnt_enabled RT_HOT;
static _Atomic uint64_t cnt_calls[CUSHIM_API_ID_LIMIT];
static int cnt_kind;                  /* CNT_KIND_* of the configured path        */
static int cnt_fd = -1;               /* FD: the descriptor; FILE: <path>, locked  */
static int cnt_locks;                 /* FILE: OFD locks work on cnt_fd            */
static dev_t cnt_dev;                 /* what cnt_fd was opened on ('-', FILE): a  */
static ino_t cnt_ino;                 /* program that closes it may reuse the number */
static int cnt_forked;                /* a fork()ed child: never <path> itself     */
static _Atomic int cnt_owns_path;     /* this process writes <path>                */
static _Atomic int cnt_claimed;       /* the claim on <path> was tried             */
static uint64_t cnt_special_written;  /* FD/APPEND: total already appended          */
static char cnt_path[PATH_MAX + ENV_PATH_MAX];   /* the path, absolute: the program may chdir */
static int cnt_error_logged;          /* one line per failing target, not per pass */

/* ---- where a path leads ---- */

/* "/dev/stdin", "/dev/fd/N", "/proc/self/fd/N", ...: the descriptor number, or -1.
   /proc/<pid>/fd/N counts only for our own pid. */
static int cnt_self_fd_name(const char *p)
{
    static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
    for (int i = 0; i < 3; i++)
        if (strcmp(p, std[i]) == 0)
            return i;
    const char *n = NULL;
    if (strncmp(p, "/dev/fd/", 8) == 0) {
        n = p + 8;
    } else if (strncmp(p, "/proc/self/fd/", 14) == 0) {
        n = p + 14;
    } else if (strncmp(p, "/proc/thread-self/fd/", 21) == 0) {
        n = p + 21;
    } else if (strncmp(p, "/proc/", 6) == 0) {
        char *end;
        long pid = strtol(p + 6, &end, 10);
        if (end != p + 6 && pid == (long)getpid() && strncmp(end, "/fd/", 4) == 0)
            n = end + 4;
    }
    if (n == NULL || *n < '0' || *n > '9')
        return -1;
    char *end;
    long fd = strtol(n, &end, 10);
    return (*end == '\0' && fd <= INT_MAX) ? (int)fd : -1;
}

int cnt_path_kind(const char *path, int *fd, int *err)
{
    char cur[2 * PATH_MAX];
    *fd = -1;
    *err = 0;
    if (strlen(path) >= sizeof cur) {
        *err = ENAMETOOLONG;
        return CNT_KIND_BAD;
    }
    strcpy(cur, path);
    /* Follow the symlink chain of the last component by hand: a descriptor name
       may be any link on the way (a link to /dev/stderr, which links to
       /proc/self/fd/2), and a link living on procfs is a descriptor whatever its
       text says (its target is no path: "pipe:[123]", "/x (deleted)"). */
    for (int hop = 0; hop < 40; hop++) {
        int n = cnt_self_fd_name(cur);
        if (n >= 0) {
            *fd = n;
            return CNT_KIND_FD;
        }
        if (strncmp(cur, "/proc/", 6) == 0)
            return CNT_KIND_APPEND;
        int o = open(cur, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (o < 0)
            break;   /* missing: the open below says why, if it matters */
        struct stat st;
        struct statfs sf;
        int is_link = fstat(o, &st) == 0 && S_ISLNK(st.st_mode);
        int on_proc = fstatfs(o, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
        char target[PATH_MAX];
        ssize_t len = is_link ? readlinkat(o, "", target, sizeof target - 1) : -1;
        close(o);
        if (on_proc)
            return CNT_KIND_APPEND;
        if (!is_link)
            break;
        if (len <= 0)
            break;
        target[len] = '\0';
        if (target[0] == '/') {
            strcpy(cur, target);
        } else {
            char *slash = strrchr(cur, '/');
            size_t dl = slash ? (size_t)(slash - cur) + 1 : 0;
            if (dl + (size_t)len >= sizeof cur)
                break;
            memcpy(cur + dl, target, (size_t)len + 1);
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return CNT_KIND_FILE;   /* created at initialisation */
        *err = errno;
        return CNT_KIND_BAD;
    }
    if (S_ISDIR(st.st_mode)) {
        *err = EISDIR;
        return CNT_KIND_BAD;
    }
    return S_ISREG(st.st_mode) ? CNT_KIND_FILE : CNT_KIND_APPEND;
}

/* ---- the regular file's locks ---- */

static int cnt_lock(int type, off_t byte)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = (short)type;
    fl.l_whence = SEEK_SET;
    fl.l_start = byte;
    fl.l_len = 1;
    return fcntl(cnt_fd, F_OFD_SETLK, &fl);
}

/* Byte 0: held shared by every live process of the run. Taking it exclusively
   means no other process of the run (nor of another run still alive) is there,
   so what the file holds is left over: truncate it, then share (an atomic
   conversion for OFD locks). */
static void cnt_join_run(const char *path, int rdwr)
{
    if (!rdwr) {   /* a read lock needs read access */
        log_info("CUSHIM_COUNTS: %s is not readable: no run tracking, each program of the run overwrites it",
                 path);
        return;
    }
    if (cnt_lock(F_WRLCK, 0) == 0) {
        cnt_locks = 1;
        struct stat st;
        if (fstat(cnt_fd, &st) == 0 && st.st_size > 0) {
            if (ftruncate(cnt_fd, 0) == 0)
                log_debug("CUSHIM_COUNTS: %s held an earlier run's counts: emptied", path);
        }
        cnt_lock(F_RDLCK, 0);
        return;
    }
    if (errno != EAGAIN && errno != EACCES) {
        log_info("CUSHIM_COUNTS: no file locks on %s (%s): each program of the run overwrites it",
                 path, strerror(errno));
        return;
    }
    cnt_locks = 1;
    /* Another process holds it: shared, or exclusive for the instant it takes to
       truncate. Wait for that, bounded (a stopped process must not hang us). */
    for (int i = 0; i < 200; i++) {
        if (cnt_lock(F_RDLCK, 0) == 0 || (errno != EAGAIN && errno != EACCES))
            return;
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

static void cnt_remember(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) {
        cnt_dev = st.st_dev;
        cnt_ino = st.st_ino;
    }
}

/* cnt_fd still is the file opened at initialisation: never write to (or
   truncate) whatever a program that closed it opened under the same number. */
static int cnt_fd_same(void)
{
    struct stat st;
    return fstat(cnt_fd, &st) == 0 && st.st_dev == cnt_dev && st.st_ino == cnt_ino;
}

static void cnt_init(void)
{
    const rt_config *c = cfg_get();
    if (c->counts_fd >= 0) {
        cnt_kind = CNT_KIND_FD;
        cnt_fd = c->counts_fd;
        cnt_remember(cnt_fd);
        atomic_store(&cnt_claimed, 1);
        cnt_enabled = 1;
        return;
    }
    if (c->counts_path == NULL)
        return;
    const char *value = c->counts_path;   /* < ENV_PATH_MAX: both fit cnt_path */
    char cwd[PATH_MAX];
    if (value[0] != '/' && getcwd(cwd, sizeof cwd) != NULL)
        snprintf(cnt_path, sizeof cnt_path, "%s/%s", cwd, value);
    else
        snprintf(cnt_path, sizeof cnt_path, "%s", value);
    const char *path = cnt_path;
    int err;
    cnt_kind = cnt_path_kind(path, &cnt_fd, &err);
    if (cnt_kind == CNT_KIND_BAD) {
        log_error("CUSHIM_COUNTS=%s: %s; call counts are off", value, strerror(err));
        return;
    }
    if (cnt_kind == CNT_KIND_FD && fcntl(cnt_fd, F_GETFD) < 0) {
        log_error("CUSHIM_COUNTS=%s: descriptor %d is not open: %s; call counts are off", value, cnt_fd,
                  strerror(errno));
        return;
    }
    if (cnt_kind != CNT_KIND_FILE) {
        atomic_store(&cnt_claimed, 1);
        cnt_enabled = 1;
        return;
    }
    /* O_NONBLOCK: if a FIFO appeared since the check, the open must not wait. */
    int rdwr = 1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
    if (fd < 0 && errno == EACCES) {
        rdwr = 0;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
    }
    if (fd < 0) {
        log_error("CUSHIM_COUNTS=%s: cannot open: %s; call counts are off", value, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        cnt_kind = CNT_KIND_APPEND;
        atomic_store(&cnt_claimed, 1);
        cnt_enabled = 1;
        return;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    cnt_fd = fd;
    cnt_remember(fd);
    cnt_enabled = 1;
    cnt_join_run(path, rdwr);
}

/* First counted call of a process that is not a forked child: claim <path>
   (exclusive lock on byte 1) if no process of the run has written it. */
static void cnt_claim(void)
{
    if (atomic_exchange(&cnt_claimed, 1) != 0 || cnt_forked || cnt_kind != CNT_KIND_FILE)
        return;
    if (!cnt_locks) {
        atomic_store(&cnt_owns_path, 1);
        return;
    }
    if (cnt_lock(F_WRLCK, 1) == 0) {
        struct stat st;
        if (fstat(cnt_fd, &st) == 0 && st.st_size == 0) {
            atomic_store(&cnt_owns_path, 1);
            return;
        }
        cnt_lock(F_UNLCK, 1);
    }
    log_info("CUSHIM_COUNTS: %s belongs to another process of this run; this process writes %s.%d",
             cnt_path, cnt_path, (int)getpid());
}

void cnt_add(uint32_t id)
{
    if (RT_UNLIKELY(!atomic_load_explicit(&cnt_claimed, memory_order_relaxed)))
        cnt_claim();
    atomic_fetch_add_explicit(&cnt_calls[id], 1, memory_order_relaxed);
}

uint64_t cnt_get(uint32_t id)
{
    return id < CUSHIM_API_ID_LIMIT ? atomic_load_explicit(&cnt_calls[id], memory_order_relaxed) : 0;
}

/* The child shares the parent's open file description of <path> (and its
   locks); it never writes through it. */
static void cnt_fork_child(uint32_t parent_tid)
{
    (void)parent_tid;
    cnt_forked = 1;
    atomic_store(&cnt_owns_path, 0);
    atomic_store(&cnt_claimed, 1);
    cnt_error_logged = 0;
    cnt_special_written = 0;
    for (uint32_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        atomic_store_explicit(&cnt_calls[i], 0, memory_order_relaxed);
}

/* ---- writing ---- */

/* All of 'b' at *off (pwrite) or at the descriptor's position (off NULL), retrying short writes and EINTR;
   past the file size limit it fails with EFBIG instead of raising SIGXFSZ, on a pipe with no reader with EPIPE
   instead of SIGPIPE (cushim_io.h). */
static int cnt_write_all(int fd, const char *b, size_t n, off_t *off)
{
    int r = 0;
    cushim_io_guard g;
    cushim_io_guard_begin(&g);
    while (n > 0) {
        ssize_t w = off ? pwrite(fd, b, n, *off) : write(fd, b, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            if (w == 0)
                errno = ENOSPC;
            r = -1;
            break;
        }
        if (off)
            *off += w;
        b += w;
        n -= (size_t)w;
    }
    cushim_io_guard_end(&g, r != 0 ? errno : 0);
    return r;
}

static void cnt_fail(const char *what, const char *target, int err)
{
    if (cnt_error_logged)
        return;
    cnt_error_logged = 1;
    log_error("cannot %s call counts to %s: %s", what, target, strerror(err));
}

/* A counts file of the run (CUSHIM_COUNTS named a regular file): opened for writing, created, without blocking -
   a FIFO put in its place, or at <path>.<pid>, would hold the program's exit forever - and refused unless it is
   a regular file. -1 (said once) when it cannot be. */
static int cnt_open_file(const char *path, int flags)
{
    int fd = cushim_open_regular(path, O_WRONLY | O_CREAT | flags, 0644, NULL, 0);
    if (fd < 0 && (errno == EINVAL || errno == ENXIO) && !cnt_error_logged) {   /* ENXIO: a FIFO with no reader */
        cnt_error_logged = 1;
        log_error("cannot write call counts to %s: not a regular file (a FIFO, device, socket or directory)", path);
    } else if (fd < 0) {
        cnt_fail("write", path, errno);
    }
    return fd;
}

/* Header (may be empty) and the lines. Returns 0, or the errno of the failure. */
static int cnt_emit(int fd, off_t *off, const char *header)
{
    char buf[8192];
    size_t len = strlen(header);
    memcpy(buf, header, len);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        const cushim_api_info *a = &cushim_gen_apis[i];
        uint64_t n = atomic_load_explicit(&cnt_calls[a->id], memory_order_relaxed);
        if (n == 0)
            continue;
        if (len + 256 > sizeof buf) {
            if (cnt_write_all(fd, buf, len, off) < 0)
                return errno;
            len = 0;
        }
        int w = snprintf(buf + len, sizeof buf - len, "%s\t%llu\n", a->name, (unsigned long long)n);
        if (w > 0)
            len += (size_t)w;
    }
    if (len > 0 && cnt_write_all(fd, buf, len, off) < 0)
        return errno;
    return 0;
}

static void cnt_write_locked(const char *path, uint64_t total)
{
    char target[sizeof cnt_path + 16];
    if (cnt_kind == CNT_KIND_FD || cnt_kind == CNT_KIND_APPEND) {
        if (total == cnt_special_written)
            return;               /* the destructor after atexit: nothing new */
        cnt_special_written = total;
        int fd = cnt_fd, opened = 0;
        int dup_of_stderr = cnt_kind == CNT_KIND_FD && strcmp(path, "-") == 0;
        snprintf(target, sizeof target, "%s", dup_of_stderr ? "stderr (CUSHIM_COUNTS=-)" : path);
        if (dup_of_stderr && !cnt_fd_same()) {
            cnt_fail("write", target, EBADF);   /* the program closed our duplicate */
            return;
        }
        if (cnt_kind == CNT_KIND_APPEND) {
            /* O_NONBLOCK: a FIFO whose reader is gone (it saw EOF when an earlier
               writer - another process of the tree, or our atexit pass - closed)
               fails with ENXIO instead of blocking exit forever; writes block. */
            fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
            if (fd < 0) {
                cnt_fail("write", target, errno);
                return;
            }
            opened = 1;
            int fl = fcntl(fd, F_GETFL);
            if (fl >= 0)
                fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        }
        char header[64];
        snprintf(header, sizeof header, "# cushim counts pid %d\n", (int)getpid());
        int e = cnt_emit(fd, NULL, header);
        if (e != 0)
            cnt_fail("write", target, e);
        if (opened)
            close(fd);
        return;
    }
    if (atomic_load(&cnt_owns_path) && !cnt_forked) {
        int fd = cnt_fd;
        if (!cnt_fd_same()) {   /* closed by the program: the same file, by name */
            fd = cnt_open_file(path, 0);
            if (fd < 0)
                return;
        }
        /* Rewrite from the start: totals only grow, so the last pass is complete. */
        off_t off = 0;
        int e = cnt_emit(fd, &off, "");
        if (e == 0 && ftruncate(fd, off) != 0)
            e = errno;
        if (e != 0)
            cnt_fail("write", path, e);
        if (fd != cnt_fd)
            close(fd);
        return;
    }
    snprintf(target, sizeof target, "%s.%d", path, (int)getpid());
    int fd = cnt_open_file(target, O_TRUNC);
    if (fd < 0)
        return;
    int e = cnt_emit(fd, NULL, "");
    if (e != 0)
        cnt_fail("write", target, e);
    close(fd);
}

void cnt_write(void)
{
    const rt_config *c = cfg_get();
    if (!cnt_enabled || c->counts_path == NULL)
        return;
    uint64_t total = 0;
    for (uint32_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        total += atomic_load_explicit(&cnt_calls[i], memory_order_relaxed);
    if (total == 0 && !atomic_load(&cnt_owns_path))
        return;
    /* A pipe whose reader left must not kill the host with SIGPIPE at exit:
       block it while writing and take back only a SIGPIPE this write raised. */
    sigset_t pipe_set, old_mask, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    sigpending(&pending);
    int pipe_was_pending = sigismember(&pending, SIGPIPE);
    cnt_write_locked(cnt_kind == CNT_KIND_FD && c->counts_fd >= 0 ? "-" : cnt_path, total);
    sigpending(&pending);
    if (!pipe_was_pending && sigismember(&pending, SIGPIPE)) {
        struct timespec zero = { 0, 0 };
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
}

static void cnt_exit_copy(void *arg)
{
    (void)arg;
    cnt_write();   /* an early copy, should a later exit handler call _exit */
}

/* At initialisation: the counter, and an exit handler that writes an early copy (lifecycle.c's final step,
   after every destructor, writes the last). */
static void cnt_start(void)
{
    cnt_init();
    if (__cxa_atexit(cnt_exit_copy, NULL, NULL) != 0)
        log_warn("cannot register an exit handler: counts are written by the destructor only");
}

LC_MODULE(counts, .level = LC_CORE, .init = cnt_start, .fork_child = cnt_fork_child, .stopped = cnt_write);
