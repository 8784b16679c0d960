/*
 * cushim_io.h - a plugin's input and output inside the host process: writes
 * that never end it, numbers read whatever locale it set (header only: no
 * symbol, no part of the ABI).
 *
 * Two signals a write can raise end the process by default:
 *   - SIGXFSZ: the program runs with a finite file size limit (RLIMIT_FSIZE:
 *     `ulimit -f`, a batch system's job limits), and a write(2) starts at or
 *     past it in a regular file, or an ftruncate(2) would grow a file past it;
 *   - SIGPIPE: the write goes to a pipe or socket whose reader is gone (the
 *     program's stderr piped into `head`, a log collector that exited).
 * The program's own writes are the program's business; a plugin's trace,
 * counts, report or log line must never be what ends it. The functions below
 * block both signals around the call and take back the one the call itself
 * raised (one that was already pending stays, for the program), so the call
 * simply fails with EFBIG or EPIPE. The program's signal mask is restored as
 * it was. They are safe in a signal handler (every call in them is a system
 * call on Linux) and on any thread.
 *
 * Needs POSIX.1-2008 declarations: compile with the GNU dialect (gnu11, the
 * compilers' default) or define _POSIX_C_SOURCE 200809L (or _GNU_SOURCE)
 * before the first #include; a strict -std=c11 without either stops here with
 * a message.
 *
 *   size_t cushim_write_all(int fd, const void *buf, size_t n);
 *       writes all n bytes (again after EINTR and short writes; on a
 *       descriptor the program made non-blocking - Node.js and asyncio do so
 *       to their stdio - waiting for room up to CUSHIM_IO_WAIT_MS, 2000 ms in
 *       all, define it before the #include to change it); returns the bytes
 *       written: n, or fewer with errno saying why (EFBIG past the file size
 *       limit, EPIPE, EAGAIN when no room came in time, ENOSPC when a write
 *       wrote nothing, EBADF...).
 *   int cushim_ftruncate(int fd, off_t len);
 *       ftruncate(2), failing with EFBIG instead of raising SIGXFSZ.
 *   cushim_io_guard_begin(&g) ... cushim_io_guard_end(&g, err)
 *       the same around other calls (pwrite, writev): err is the call's errno
 *       when it failed, 0 when it succeeded.
 *
 * And one reading: a program may set its locale (setlocale(LC_ALL, "") in a
 * German or French environment makes ',' the decimal point), and a plugin
 * loaded after that - the drop-in libcuda.so.1 is opened when the program
 * first uses CUDA - would read "limit=1.5GiB" as 1 followed by garbage.
 *   double cushim_strtod(const char *s, char **end);
 *       strtod(3) as in the C locale whatever the program's (uselocale on this
 *       thread for the call); not for a signal handler.
 *
 * And the program's descriptor 2: a plugin writes its table or report to
 * standard error, but a program may close it and open a file, a pipe or a
 * socket that takes the number 2 (`prog 2>&-`, a daemon), and its data would
 * get the plugin's lines.
 *   void cushim_stderr_mark(cushim_stderr_id *id);
 *       at init: what descriptor 2 is now (the file, or closed).
 *   int cushim_stderr_fd(const cushim_stderr_id *id);
 *       2 when descriptor 2 is still that file, or is a character device (a
 *       terminal, /dev/null: nothing a write can corrupt); -1 when it is now
 *       another file, pipe or socket, or closed: write nothing then.
 *
 * And one reading of the program's memory: a hook that reads behind a
 * pointer the program passed (a name, a struct, an array) before the driver
 * has accepted it - in a pre hook, or in a post hook of a call that failed -
 * may be reading garbage the driver would have refused with an error, and a
 * load from it raises SIGSEGV in the host process.
 *   long cushim_read_mem(void *dst, const void *src, size_t n);
 *       copies up to n bytes at src into dst without a fault: returns how
 *       many were readable (n, or a shorter prefix, page by page, where src
 *       runs into memory that cannot be read; 0 when src points at none), or
 *       -1 when the system offers no such read. Memory on the calling
 *       thread's stack above the stack pointer (a caller's locals: where
 *       programs keep most structs they pass) is copied directly. Else, with
 *       no seccomp filter on the thread, process_vm_readv on this process:
 *       one system call per 64 KiB (and a look at /proc/thread-self/status
 *       once a second). Under a seccomp filter (Docker's and Kubernetes'
 *       default profiles; one might kill the process on process_vm_readv)
 *       each 4 KiB piece is first asked of the kernel with rt_sigprocmask
 *       (cushim_probe_read: it reads the bytes, then changes nothing), then
 *       copied: one system call per piece; -1 where the filter refuses that
 *       too. errno is left as it was. Only with _GNU_SOURCE defined before
 *       the first #include (process_vm_readv's and syscall's declarations).
 *   int cushim_read_mem_usable(void);
 *       1 when cushim_read_mem reads here, 0 when it would answer -1 - then
 *       choose: the plain read (and the fault it may bring) or none.
 *   int cushim_on_stack(const void *p, size_t n);
 *       1 when the n bytes at p lie on the calling thread's live stack (from
 *       the stack pointer to the top; bounds asked once per thread).
 *   int cushim_mem_readable(const void *p, size_t n);
 *       1 when all n bytes at p can be read, 0 when some cannot, -1 when the
 *       system offers no such read (as cushim_read_mem; the same condition).
 *
 * And a plugin's own threads: the kernel gives a signal sent to the process
 * to any thread that does not block it. A plugin thread that leaves the
 * program's signals unblocked takes them: the program's handler runs there,
 * and a program that blocks a signal in its threads to wait for it (sigwait,
 * sigsuspend: the race-free wait for SIGCHLD or a timer) never sees it.
 *   int cushim_thread_create(pthread_t *th, const pthread_attr_t *attr,
 *                            const char *name, void *(*fn)(void *), void *arg);
 *       pthread_create(3) with every signal blocked in the new thread (it
 *       inherits the mask, set around the call; the caller's is restored),
 *       named 'name' (its first 15 bytes; NULL: the program's name, as
 *       pthread_create leaves it) with _GNU_SOURCE, so that top -H, gdb and
 *       /proc/PID/task/TID/comm tell it from the program's threads.
 *
 * And the files a plugin opens by the user's word, and the regions it shares
 * with other processes (with _GNU_SOURCE; described where they are defined):
 *   int cushim_open_regular(const char *path, int flags, mode_t mode, char *why, size_t whylen);
 *       open(2) that never blocks on a FIFO and refuses anything but a regular file.
 *   int cushim_open_shared(const char *path, int create, long gid, char *why, size_t whylen);
 *       a shared region's file, refused unless the user (or the named group) alone can write it.
 *   int cushim_map_guard(void *base, size_t len, int *lost);  void cushim_map_unguard(void *base);
 *       a shared mapping whose file is shrunk under it reads zeros and sets *lost, instead of SIGBUS.
 */
#ifndef CUSHIM_IO_H
#define CUSHIM_IO_H

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#endif

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "cushim_io.h needs POSIX.1-2008: compile with -std=gnu11, or #define _POSIX_C_SOURCE 200809L first"
#endif

#ifndef CUSHIM_IO_WAIT_MS
#define CUSHIM_IO_WAIT_MS 2000   /* how long cushim_write_all waits, in all, for room on a non-blocking descriptor */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What cushim_io_guard_begin saved: the thread's mask before, whether the two signals were blocked here and
   whether each was already pending (the program's). */
typedef struct cushim_io_guard {
    sigset_t old;
    int blocked;
    int had_xfsz;
    int had_pipe;
} cushim_io_guard;

/* SIGXFSZ and SIGPIPE blocked on this thread until cushim_io_guard_end. */
static inline void cushim_io_guard_begin(cushim_io_guard *g)
{
    sigset_t x, pend;
    sigemptyset(&x);
    sigaddset(&x, SIGXFSZ);
    sigaddset(&x, SIGPIPE);
    g->blocked = pthread_sigmask(SIG_BLOCK, &x, &g->old) == 0;
    g->had_xfsz = g->had_pipe = 1;
    if (g->blocked && sigpending(&pend) == 0) {
        g->had_xfsz = sigismember(&pend, SIGXFSZ) == 1;
        g->had_pipe = sigismember(&pend, SIGPIPE) == 1;
    }
}

/* The mask as it was. 'err': the guarded call's errno when it failed (0: it succeeded): EFBIG means it raised a
   SIGXFSZ, EPIPE a SIGPIPE, taken back here unless one was pending before (signals of one number do not queue:
   that one is the program's, and stays). errno is kept. */
static inline void cushim_io_guard_end(cushim_io_guard *g, int err)
{
    int e = errno;
    if (!g->blocked)
        return;
    if ((err == EFBIG && !g->had_xfsz) || (err == EPIPE && !g->had_pipe)) {
        sigset_t x;
        struct timespec zero = { 0, 0 };
        sigemptyset(&x);
        sigaddset(&x, err == EFBIG ? SIGXFSZ : SIGPIPE);
        while (sigtimedwait(&x, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
    errno = e;
}

static inline size_t cushim_write_all(int fd, const void *buf, size_t n)
{
    const char *p = (const char *)buf;
    size_t off = 0;
    int e = 0, waited_ms = 0;
    cushim_io_guard g;
    cushim_io_guard_begin(&g);
    while (off < n) {
        ssize_t k = write(fd, p + off, n - off);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waited_ms < CUSHIM_IO_WAIT_MS) {
            struct pollfd pf;
            pf.fd = fd;
            pf.events = POLLOUT;
            pf.revents = 0;
            (void)poll(&pf, 1, 50);   /* room, or 50 ms; then the write tells */
            waited_ms += 50;
            continue;
        }
        e = k == 0 ? ENOSPC : errno;   /* a write of 0 bytes to a regular file: out of space */
        break;
    }
    if (e != 0)
        errno = e;   /* errno is left alone on success */
    cushim_io_guard_end(&g, e);
    return off;
}

static inline int cushim_ftruncate(int fd, off_t len)
{
    int r;
    cushim_io_guard g;
    cushim_io_guard_begin(&g);
    while ((r = ftruncate(fd, len)) != 0 && errno == EINTR) {
    }
    cushim_io_guard_end(&g, r != 0 ? errno : 0);
    return r;
}

static inline double cushim_strtod(const char *s, char **end)
{
    /* one "C" locale object per translation unit, made at the first call and kept */
    static locale_t c_locale;
    locale_t c = __atomic_load_n(&c_locale, __ATOMIC_ACQUIRE), old, none = (locale_t)0;
    double v;
    int e;
    if (c == (locale_t)0) {
        c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (c == (locale_t)0)
            return strtod(s, end);   /* out of memory: the program's locale */
        if (!__atomic_compare_exchange_n(&c_locale, &none, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            freelocale(c);   /* another thread's came first */
            c = none;
        }
    }
    old = uselocale(c);
    v = strtod(s, end);
    e = errno;
    if (old != (locale_t)0)
        uselocale(old);
    errno = e;   /* strtod's ERANGE */
    return v;
}

/* What descriptor 2 was when cushim_stderr_mark looked. */
typedef struct cushim_stderr_id {
    dev_t dev;
    ino_t ino;
    int open;
} cushim_stderr_id;

static inline void cushim_stderr_mark(cushim_stderr_id *id)
{
    struct stat st;
    int saved = errno;
    id->open = fstat(2, &st) == 0;
    id->dev = id->open ? st.st_dev : 0;
    id->ino = id->open ? st.st_ino : 0;
    errno = saved;
}

static inline int cushim_stderr_fd(const cushim_stderr_id *id)
{
    struct stat st;
    int saved = errno, ok = fstat(2, &st) == 0 &&
                            ((id->open && st.st_dev == id->dev && st.st_ino == id->ino) || S_ISCHR(st.st_mode));
    errno = saved;
    return ok ? 2 : -1;
}

#ifdef _GNU_SOURCE
/* 1 when the calling thread runs under no seccomp filter ("Seccomp:<TAB>0" in /proc/thread-self/status), else 0
   (a filter, or no answer). */
static inline int cushim_seccomp_none(void)
{
    enum { CUSHIM_STATUS_MAX = 8192 };   /* the file is ~1.5 KiB; on the heap: hooks may run on small stacks */
    char *buf;
    size_t len = 0;
    ssize_t r;
    const char *at;
    int none = 0, saved = errno, fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || (buf = (char *)malloc(CUSHIM_STATUS_MAX)) == NULL) {
        if (fd >= 0)
            close(fd);
        errno = saved;
        return 0;
    }
    while (len < CUSHIM_STATUS_MAX - 1 && (r = read(fd, buf + len, CUSHIM_STATUS_MAX - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    buf[len] = '\0';
    if ((at = strstr(buf, "\nSeccomp:")) != NULL) {
        at += 9;
        while (*at == ' ' || *at == '\t')
            at++;
        none = at[0] == '0' && (at[1] == '\n' || at[1] == '\0');
    }
    free(buf);
    errno = saved;
    return none;
}

/* Whether a 4 KiB piece of memory can be read, asked of the kernel without process_vm_readv: rt_sigprocmask with a
   'how' that is none of SIG_BLOCK, SIG_UNBLOCK or SIG_SETMASK copies the signal set at p in first (EFAULT where a
   load from it would fault), then refuses the 'how' (EINVAL) and changes nothing. Every program makes this call
   (libc's threads and signals), so no seccomp profile kills on it. 1: readable (the 8 bytes at p, hence their
   page), 0: not, -1: no answer (a filter refused the call). */
#ifdef _NSIG
#define CUSHIM_KSIGSET_BYTES ((_NSIG - 1) / 8)   /* the kernel's sigset_t: 8 bytes, 16 on MIPS */
#else
#define CUSHIM_KSIGSET_BYTES 8
#endif
static inline int cushim_probe_read(const void *p)
{
    long r;
    if ((uintptr_t)p < 4096u)   /* NULL's page, read as none (a NULL set would be no set: nothing read) */
        return 0;
    r = syscall(SYS_rt_sigprocmask, 0x7fffffff, p, (void *)0, (size_t)CUSHIM_KSIGSET_BYTES);
    return r == 0 ? -1 : errno == EINVAL ? 1 : errno == EFAULT ? 0 : -1;
}

/* Whether the probe above answers truly here: a byte of the caller's stack reads, an address in the kernel's
   half does not (a filter that answered EINVAL for every rt_sigprocmask, or a kernel with another signal-set
   size, would fail it). */
static inline int cushim_probe_works(void)
{
    unsigned char mine[16] = {1};
    return cushim_probe_read((const void *)mine) == 1 && cushim_probe_read((const void *)~(uintptr_t)4095) == 0;
}

/* The copy of memory known to be readable (on the stack, or a probed piece): memcpy; in a build with
   AddressSanitizer or ThreadSanitizer a plain byte loop they do not see instead - the program's memory read
   past its object's end (a string's 257 bytes where the program's array holds 7) is the point here, not a bug
   of the plugin, and process_vm_readv, the other way, is not seen either. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUSHIM_IO_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CUSHIM_IO_SANITIZED 1
#endif
#endif
#ifdef CUSHIM_IO_SANITIZED
__attribute__((no_sanitize("address", "thread"))) static inline void cushim_copy_known(void *dst, const void *src,
                                                                                     size_t n)
{
    const volatile unsigned char *s = (const volatile unsigned char *)src;
    unsigned char *d = (unsigned char *)dst;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}
#else
static inline void cushim_copy_known(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

/* How cushim_read_mem reads here: 1 with process_vm_readv, only where the calling thread runs under no seccomp
   filter. A filter may kill the process on it (systemd's SystemCallFilter=@system-service, where it sits in
   @debug, with the default action SIGSYS), and which filter does what cannot be asked without making the call
   (a probe in a clone(CLONE_VM | CLONE_VFORK) child was tried: an intrusive process creation in the program,
   and with it ThreadSanitizer reported races in the lua plugin's reload test). Under a filter (Docker's and
   Kubernetes' default profiles too) 2: each 4 KiB piece asked with cushim_probe_read, then copied (a piece
   unmapped by another thread between the two would still fault: a program that frees what it passes to a
   call while the call runs); 0 where that does not answer either. Known per thread for the process and the
   second it was asked in (filters are never removed; one installed later on this thread is seen within a
   second, at once in a forked child). */
static inline int cushim_read_mode(pid_t self)
{
    static __thread int state;   /* 0: not asked; 1: no filter; 2: a filter, probes answer; -1: neither */
    static __thread pid_t state_pid;
    static __thread time_t state_s;
    struct timespec ts;
    int saved;
    if (state != 0 && state != 1 && state_pid == self)
        return state < 0 ? 0 : state;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
        ts.tv_sec = 0;
    if (state == 1 && state_pid == self && state_s == ts.tv_sec)
        return 1;
    saved = errno;
    state = cushim_seccomp_none() ? 1 : cushim_probe_works() ? 2 : -1;
    errno = saved;
    state_pid = self;
    state_s = ts.tv_sec;
    return state < 0 ? 0 : state;
}

static inline int cushim_read_mem_usable(void)
{
    return cushim_read_mode(getpid()) != 0;
}

/* 1 when the n bytes at p lie on the calling thread's stack between the stack pointer and the stack's top:
   live stack, mapped and readable (the arguments a program passes by pointer mostly live there: a launch
   config, an output variable), so read without a system call. The stack's bounds are asked once per thread
   (pthread_getattr_np); a frame outside them (a coroutine's or a signal handler's own stack) says no. */
static inline int cushim_on_stack(const void *p, size_t n)
{
    static __thread uintptr_t lo, hi;
    static __thread int known;   /* 0: not asked; 1: lo/hi; -1: no answer */
    uintptr_t fp, a = (uintptr_t)p;
#if defined(__x86_64__)
    __asm__("mov %%rsp, %0" : "=r"(fp));   /* the stack pointer: everything from it up is live */
#else
    char here;
    fp = (uintptr_t)&here;
#endif
    if (known == 0) {
        pthread_attr_t at;
        void *addr;
        size_t size;
        int saved = errno;
        known = -1;
        if (pthread_getattr_np(pthread_self(), &at) == 0) {
            if (pthread_attr_getstack(&at, &addr, &size) == 0) {
                lo = (uintptr_t)addr;
                hi = lo + size;
                known = 1;
            }
            pthread_attr_destroy(&at);
        }
        errno = saved;
    }
    return known > 0 && fp >= lo && fp < hi && a >= fp && a <= hi && n <= hi - a;
}

static inline long cushim_read_mem(void *dst, const void *src, size_t n)
{
    /* process_vm_readv on this process: the kernel copies, and fails with EFAULT where a load would raise
       SIGSEGV. The remote pieces end at every 4 KiB boundary (no page is smaller), so a short read is the
       readable prefix: the kernel stops at the first piece it cannot read. */
    enum { CUSHIM_READ_PIECES = 16 };
    struct iovec loc, rem[CUSHIM_READ_PIECES];
    int saved = errno;
    size_t done = 0;
    pid_t self;
    if (n == 0)
        return 0;
    if (cushim_on_stack(src, n)) {
        cushim_copy_known(dst, src, n);
        return (long)n;
    }
    self = getpid();
    switch (cushim_read_mode(self)) {
    case 0:
        return -1;
    case 2:   /* a seccomp filter: each piece probed, then copied */
        while (done < n) {
            uintptr_t a = (uintptr_t)src + done;
            size_t k = 4096u - (a & 4095u);
            int r = cushim_probe_read((const void *)(a & ~(uintptr_t)4095));
            if (r <= 0) {   /* unreadable: the prefix so far; no answer: none, unless a prefix was read */
                errno = saved;
                return r == 0 || done > 0 ? (long)done : -1;
            }
            if (k > n - done)
                k = n - done;
            cushim_copy_known((char *)dst + done, (const void *)a, k);
            done += k;
        }
        errno = saved;
        return (long)done;
    default:
        break;
    }
    while (done < n) {
        uintptr_t a = (uintptr_t)src + done;
        size_t want = 0;
        unsigned long k = 0;
        ssize_t r;
        while (k < CUSHIM_READ_PIECES && done + want < n) {
            size_t room = 4096u - ((a + want) & 4095u), m = n - done - want;
            rem[k].iov_base = (void *)(a + want);
            rem[k].iov_len = m < room ? m : room;
            want += rem[k].iov_len;
            k++;
        }
        loc.iov_base = (char *)dst + done;
        loc.iov_len = want;
        r = process_vm_readv(self, &loc, 1, rem, k, 0);
        if (r < 0) {
            int e = errno;
            errno = saved;
            /* EFAULT: nothing more is readable; anything else: no such read on this system */
            return e == EFAULT || done > 0 ? (long)done : -1;
        }
        done += (size_t)r;
        if ((size_t)r < want)
            break;
    }
    errno = saved;
    return (long)done;
}

static inline int cushim_mem_readable(const void *p, size_t n)
{
    unsigned char tmp[512];
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < sizeof tmp ? n - done : sizeof tmp;
        long got = cushim_read_mem(tmp, (const unsigned char *)p + done, k);
        if (got < 0)
            return -1;
        if ((size_t)got < k)
            return 0;
        done += k;
    }
    return 1;
}
#endif

/* pthread_create with every signal blocked in the new thread, named (see the top of the file). */
static inline int cushim_thread_create(pthread_t *th, const pthread_attr_t *attr, const char *name,
                                       void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    int rc;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(th, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#ifdef _GNU_SOURCE
    if (rc == 0 && name != NULL) {
        char n[16];
        size_t i = 0;
        for (; i < sizeof n - 1 && name[i] != '\0'; i++)
            n[i] = name[i];
        n[i] = '\0';
        (void)pthread_setname_np(*th, n);
    }
#else
    (void)name;
#endif
    return rc;
}

#ifdef _GNU_SOURCE
/* ---- Files a plugin opens, and regions it shares (see the top of the file) ---- */

/* A one-line reason into 'why' (NULL: none), cut to fit. */
static inline void cushim_why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void cushim_why(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    if (why == NULL || whylen == 0)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}

/* open(2) that never blocks and never follows the program's word to something that is not a file: O_NONBLOCK
   at open (a FIFO with no writer, or no reader, would block open or write forever), then refused unless it is a
   regular file, and O_NONBLOCK cleared again. -1 with errno (ENXIO from a FIFO with no reader, EINVAL for a
   directory, a FIFO, a device or a socket) and a one-line reason in 'why' (may be NULL). O_CLOEXEC always. */
static inline int cushim_open_regular(const char *path, int flags, mode_t mode, char *why, size_t whylen)
{
    struct stat st;
    int fd, e;
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    do
        fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, mode);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        e = errno;
        cushim_why(why, whylen, "cannot open '%.300s': %s", path, strerror(e));
        errno = e;
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cushim_why(why, whylen, "'%.300s' is not a regular file (a FIFO, device, socket or directory)", path);
        close(fd);
        errno = EINVAL;
        return -1;
    }
    if (!(flags & O_NONBLOCK))
        (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* A region shared between processes (a budget, a scheduling group): whoever can write it can deny its users
   memory or GPU time, or truncate it under them. Opened read-write (created when 'create': 0644, or 0664 with a
   group, less the umask) through cushim_open_regular with O_NOFOLLOW, and refused unless it is owned by the
   effective user and writable by nobody else - or, with 'gid' >= 0 (a group the operator names), group-owned
   by that group, of which the caller is a member, and writable by nobody outside it. A file we created is given
   the group. Root is held to the same rule (a region that another user planted must not be joined by root's
   processes). -1 with errno EPERM and a one-line reason in 'why'. */
static inline int cushim_open_shared(const char *path, int create, long gid, char *why, size_t whylen)
{
    struct stat st;
    mode_t mode = gid >= 0 ? 0664 : 0644;   /* readable (cushim usage), writable by its users alone */
    int fd = cushim_open_regular(path, O_RDWR | O_NOFOLLOW | (create ? O_CREAT : 0), mode, why, whylen);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0)
        goto refuse;
    if (gid < 0) {
        if (st.st_uid != geteuid()) {
            cushim_why(why, whylen, "'%.300s' belongs to uid %u, not to this user (uid %u): not used", path,
                     (unsigned)st.st_uid, (unsigned)geteuid());
            goto refuse;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
            cushim_why(why, whylen, "'%.300s' is writable by %s (mode %03o): not used (chmod go-w, or name its group)",
                     path, (st.st_mode & S_IWOTH) ? "every user" : "its group", (unsigned)(st.st_mode & 0777));
            goto refuse;
        }
    } else {
        int member = getegid() == (gid_t)gid;
        gid_t groups[256];
        int n = member ? 0 : getgroups(256, groups);
        for (int i = 0; i < n && !member; i++)
            member = groups[i] == (gid_t)gid;
        if (!member) {
            cushim_why(why, whylen, "this user is not in group %ld, which '%.300s' is to be shared with", gid, path);
            goto refuse;
        }
        if (st.st_uid == geteuid() && st.st_gid != (gid_t)gid && fchown(fd, (uid_t)-1, (gid_t)gid) == 0)
            (void)fstat(fd, &st);
        if (st.st_gid != (gid_t)gid) {
            cushim_why(why, whylen, "'%.300s' belongs to group %u, not to group %ld: not used", path, (unsigned)st.st_gid,
                     gid);
            goto refuse;
        }
        if (st.st_uid == geteuid() && (st.st_mode & 0660) != 0660 && fchmod(fd, (st.st_mode & 0777) | 0660) == 0)
            (void)fstat(fd, &st);
        if (st.st_mode & S_IWOTH) {
            cushim_why(why, whylen, "'%.300s' is writable by every user (mode %03o): not used", path,
                     (unsigned)(st.st_mode & 0777));
            goto refuse;
        }
    }
    return fd;
refuse:
    close(fd);
    errno = EPERM;
    return -1;
}

/*
 * A MAP_SHARED mapping of a file faults with SIGBUS where the file was shrunk under it (ftruncate by its owner or
 * root, a full tmpfs): the process would die of a counter it reads. cushim_map_guard(base, len, &lost) puts a
 * SIGBUS handler in front of the program's (installed once per plugin, chaining to whatever was there: a fault
 * elsewhere, or a SIGBUS sent by kill, goes on exactly as before). A fault inside [base, base+len) replaces the
 * whole mapping with private zero pages and sets *lost = 1 (read it with __atomic_load_n): the access is retried and reads zeros, and the owner
 * sees 'lost' at its next look and detaches. cushim_map_unguard(base) before munmap. At most 8 mappings a plugin.
 * A program that installs its own SIGBUS handler later without chaining takes the fault itself.
 */
typedef struct cushim_map_guards {
    uintptr_t base[8];   /* read and written with __atomic builtins (the handler reads them) */
    size_t len[8];
    int *lost[8];
    struct sigaction old;
    int installed;
} cushim_map_guards;

static inline cushim_map_guards *cushim_map_guards_get(void)
{
    static cushim_map_guards g;
    return &g;
}

static inline pthread_mutex_t *cushim_map_guards_mu(void)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    return &mu;
}

static inline void cushim_map_guard_handler(int sig, siginfo_t *si, void *uc)
{
    cushim_map_guards *g = cushim_map_guards_get();
    uintptr_t a = (uintptr_t)si->si_addr;
    int saved = errno;
    if (si->si_code > 0) {   /* a fault, not a kill(2) */
        for (int i = 0; i < 8; i++) {
            uintptr_t b = __atomic_load_n(&g->base[i], __ATOMIC_ACQUIRE);
            size_t n = __atomic_load_n(&g->len[i], __ATOMIC_RELAXED);
            if (b != 0 && a >= b && a - b < n &&
                mmap((void *)b, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
                    MAP_FAILED) {
                int *lost = __atomic_load_n(&g->lost[i], __ATOMIC_RELAXED);
                if (lost != NULL)
                    __atomic_store_n(lost, 1, __ATOMIC_RELEASE);
                errno = saved;
                return;
            }
        }
    }
    if ((g->old.sa_flags & SA_SIGINFO) && g->old.sa_sigaction != NULL) {
        g->old.sa_sigaction(sig, si, uc);
    } else if (g->old.sa_handler != SIG_DFL && g->old.sa_handler != SIG_IGN) {
        g->old.sa_handler(sig);
    } else {
        /* the default: restored, and the fault retried (or the signal sent again) meets it */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        if (si->si_code <= 0)
            raise(sig);
    }
    errno = saved;
}

static inline int cushim_map_guard(void *base, size_t len, int *lost)
{
    cushim_map_guards *g = cushim_map_guards_get();
    int rc = -1;
    pthread_mutex_lock(cushim_map_guards_mu());
    if (!g->installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = cushim_map_guard_handler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        g->installed = sigaction(SIGBUS, &sa, &g->old) == 0;
    }
    for (int i = 0; g->installed && i < 8 && rc != 0; i++) {
        if (__atomic_load_n(&g->base[i], __ATOMIC_RELAXED) != 0)
            continue;
        __atomic_store_n(&g->len[i], len, __ATOMIC_RELAXED);
        __atomic_store_n(&g->lost[i], lost, __ATOMIC_RELAXED);
        __atomic_store_n(&g->base[i], (uintptr_t)base, __ATOMIC_RELEASE);
        rc = 0;
    }
    pthread_mutex_unlock(cushim_map_guards_mu());
    return rc;
}

static inline void cushim_map_unguard(void *base)
{
    cushim_map_guards *g = cushim_map_guards_get();
    pthread_mutex_lock(cushim_map_guards_mu());
    for (int i = 0; i < 8; i++)
        if (__atomic_load_n(&g->base[i], __ATOMIC_RELAXED) == (uintptr_t)base)
            __atomic_store_n(&g->base[i], 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(cushim_map_guards_mu());
}
#endif /* _GNU_SOURCE */

#ifdef __cplusplus
}
#endif

#endif /* CUSHIM_IO_H */
