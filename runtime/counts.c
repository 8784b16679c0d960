/*
 * counts.c - the built-in call counter (CUSHIM_COUNTS=<path>).
 *
 * Counts every entry into a wrapper per API id (also calls made from inside
 * hooks or from the runtime into the driver), independent of hooks: with the
 * counter on, every slot carries at least a counting chain, so the fast path
 * falls through to the slow path, which counts first.
 *
 * Written as 'name<TAB>count' lines (APIs with a non-zero count, in id order)
 * at exit: from an atexit handler registered at initialisation and again from
 * the library destructor (calls made by other libraries' exit handlers).
 *
 * Which file: the first process of a tree to see CUSHIM_COUNTS removes an old
 * <path> and marks the environment (CUSHIM_COUNTS_SESSION=1) for its
 * descendants. At its first counted call a process claims <path> by creating
 * it (O_EXCL); the process that claimed it writes <path>, any other (a forked
 * child, whose counts restart at zero, or an exec'd process that found <path>
 * taken) writes <path>.<pid>. A process that counted nothing writes nothing, so
 * a launcher ('timeout', a shell) leaves <path> to the CUDA program it runs,
 * while a CUDA program's own exec'd children write <path>.<pid>.
 *
 * A <path> that exists and is not a regular file (/dev/stderr, a FIFO, a
 * terminal) is never removed or claimed: every process that counted
 * something appends its lines there, after a '# cushim counts pid N' line
 * (again at the destructor only if calls were counted after atexit).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

int cnt_enabled;
static _Atomic uint64_t cnt_calls[CUSHIM_API_ID_LIMIT];
static int cnt_forked;                /* a fork()ed child: never <path> itself */
static int cnt_owns_path;             /* this process created <path>           */
static _Atomic int cnt_claimed;       /* the claim on <path> was tried          */
static int cnt_special;               /* <path> is a device, FIFO or terminal   */
static uint64_t cnt_special_written;  /* total already appended there           */

void cnt_init(void)
{
    const rt_config *c = cfg_get();
    if (c->counts_path == NULL)
        return;
    cnt_enabled = 1;
    struct stat st;
    if (stat(c->counts_path, &st) == 0 && !S_ISREG(st.st_mode)) {
        cnt_special = 1;
        atomic_store(&cnt_claimed, 1);
        return;
    }
    if (getenv("CUSHIM_COUNTS_SESSION") == NULL) {
        unlink(c->counts_path);
        setenv("CUSHIM_COUNTS_SESSION", "1", 0);
    }
}

static void cnt_claim(void)
{
    if (atomic_exchange(&cnt_claimed, 1) != 0 || cnt_forked)
        return;
    int fd = open(cfg_get()->counts_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        cnt_owns_path = 1;
        close(fd);
    }
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

void cnt_after_fork_child(void)
{
    cnt_forked = 1;
    cnt_owns_path = 0;
    atomic_store(&cnt_claimed, 1);
    for (uint32_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        atomic_store_explicit(&cnt_calls[i], 0, memory_order_relaxed);
}

/* All of 'b', retrying short writes and EINTR. */
static int cnt_write_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

void cnt_write(void)
{
    const rt_config *c = cfg_get();
    if (!cnt_enabled || c->counts_path == NULL)
        return;
    uint64_t total = 0;
    for (uint32_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        total += atomic_load_explicit(&cnt_calls[i], memory_order_relaxed);
    if (total == 0 && !cnt_owns_path)
        return;
    char path[4200];
    int fd;
    char buf[8192];
    size_t len = 0;
    if (cnt_special) {
        if (total == cnt_special_written)
            return;               /* the destructor after atexit: nothing new */
        cnt_special_written = total;
        snprintf(path, sizeof path, "%s", c->counts_path);
        /* O_NONBLOCK: a FIFO whose reader is gone (it saw EOF when an earlier
           writer - another process of the tree, or our atexit pass - closed)
           fails with ENXIO instead of blocking exit forever; writes block. */
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
        int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        int w = snprintf(buf, sizeof buf, "# cushim counts pid %d\n", (int)getpid());
        if (w > 0)
            len = (size_t)w;
    } else {
        if (cnt_owns_path)
            snprintf(path, sizeof path, "%s", c->counts_path);
        else
            snprintf(path, sizeof path, "%s.%d", c->counts_path, (int)getpid());
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        log_error("cannot write call counts to %s", path);
        return;
    }
    /* A pipe whose reader left must not kill the host with SIGPIPE at exit:
       block it while writing and take back only a SIGPIPE this write raised. */
    sigset_t pipe_set, old_mask, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    sigpending(&pending);
    int pipe_was_pending = sigismember(&pending, SIGPIPE);
    int failed = 0;
    for (uint32_t i = 0; i < cushim_gen_api_count && !failed; i++) {
        const cushim_api_info *a = &cushim_gen_apis[i];
        uint64_t n = atomic_load_explicit(&cnt_calls[a->id], memory_order_relaxed);
        if (n == 0)
            continue;
        if (len + 256 > sizeof buf) {
            failed = cnt_write_all(fd, buf, len) < 0;
            len = 0;
        }
        int w = snprintf(buf + len, sizeof buf - len, "%s\t%llu\n", a->name, (unsigned long long)n);
        if (w > 0)
            len += (size_t)w;
    }
    if (!failed && len > 0)
        failed = cnt_write_all(fd, buf, len) < 0;
    if (failed)
        log_error("short write of call counts to %s", path);
    close(fd);
    sigpending(&pending);
    if (!pipe_was_pending && sigismember(&pending, SIGPIPE)) {
        struct timespec zero = { 0, 0 };
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
}
