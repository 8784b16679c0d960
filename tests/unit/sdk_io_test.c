/*
 * sdk_io_test.c - cushim_io.h: a plugin's write never ends the program, and
 * its read of the program's pointers never faults (cushim_read_mem).
 *
 * Each case sets a small RLIMIT_FSIZE or makes a pipe with no reader, with SIGXFSZ and SIGPIPE at their default
 * action (ending the process) unless the case says otherwise, and checks that the call fails with EFBIG or EPIPE,
 * that nothing is left pending that the call raised, that a signal already pending (the program's) stays, and
 * that the thread's signal mask is what it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define CUSHIM_IO_WAIT_MS 400   /* the test's bound for a non-blocking descriptor with no room */
#include "cushim/cushim_io.h"

static char path[64];
static struct rlimit saved_limit;

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/sdk_io_test.%d", (int)getpid());
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved_limit), 0);
    signal(SIGXFSZ, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    setrlimit(RLIMIT_FSIZE, &saved_limit);
    unlink(path);
    return 0;
}

static void limit(rlim_t bytes)
{
    struct rlimit r = { bytes, saved_limit.rlim_max };
    if (saved_limit.rlim_max != RLIM_INFINITY && bytes > saved_limit.rlim_max)
        r.rlim_cur = saved_limit.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &r), 0);
}

static int pending(int sig)
{
    sigset_t p;
    assert_int_equal(sigpending(&p), 0);
    return sigismember(&p, sig);
}

static int blocked(int sig)
{
    sigset_t m;
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &m), 0);
    return sigismember(&m, sig);
}

/* Past the limit: the bytes up to it written, then EFBIG; the process still here, nothing pending, mask as before. */
static void write_past_the_limit(void **state)
{
    (void)state;
    char buf[3000];
    memset(buf, 'x', sizeof buf);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    limit(1024);
    errno = 0;
    assert_int_equal(cushim_write_all(fd, buf, sizeof buf), 1024);   /* a short write up to the limit, then EFBIG */
    assert_int_equal(errno, EFBIG);
    assert_int_equal(cushim_write_all(fd, buf, 10), 0);               /* at the limit: EFBIG at once */
    assert_int_equal(errno, EFBIG);
    assert_false(pending(SIGXFSZ));
    assert_false(blocked(SIGXFSZ));
    assert_false(blocked(SIGPIPE));
    close(fd);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 1024);
}

/* ftruncate growing the file past the limit: EFBIG; shrinking is fine. */
static void ftruncate_past_the_limit(void **state)
{
    (void)state;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    limit(4096);
    assert_int_equal(cushim_ftruncate(fd, 8192), -1);
    assert_int_equal(errno, EFBIG);
    assert_int_equal(cushim_ftruncate(fd, 4096), 0);
    assert_int_equal(cushim_ftruncate(fd, 0), 0);
    assert_false(pending(SIGXFSZ));
    close(fd);
}

/* The program's own SIGXFSZ, pending while it blocks it, is still pending afterwards - and still blocked. */
static void the_programs_pending_signal_stays(void **state)
{
    (void)state;
    sigset_t x, old;
    sigemptyset(&x);
    sigaddset(&x, SIGXFSZ);
    sigaddset(&x, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &x, &old);
    raise(SIGXFSZ);
    raise(SIGPIPE);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    limit(0);
    assert_int_equal(cushim_write_all(fd, "x", 1), 0);
    assert_int_equal(errno, EFBIG);
    close(fd);
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    assert_int_equal(cushim_write_all(p[1], "x", 1), 0);
    assert_int_equal(errno, EPIPE);
    close(p[1]);
    assert_true(pending(SIGXFSZ));
    assert_true(pending(SIGPIPE));
    assert_true(blocked(SIGXFSZ));
    assert_true(blocked(SIGPIPE));
    struct timespec zero = { 0, 0 };
    assert_int_equal(sigtimedwait(&x, NULL, &zero) > 0, 1);   /* the program takes them: there were two */
    assert_int_equal(sigtimedwait(&x, NULL, &zero) > 0, 1);
    assert_int_equal(sigtimedwait(&x, NULL, &zero), -1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A pipe whose reader is gone: EPIPE, no SIGPIPE left, the mask as it was. */
static void write_to_a_pipe_with_no_reader(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    assert_int_equal(cushim_write_all(p[1], "hello", 5), 0);
    assert_int_equal(errno, EPIPE);
    assert_false(pending(SIGPIPE));
    assert_false(blocked(SIGPIPE));
    close(p[1]);
}

/* A program handler for SIGXFSZ does not run for the plugin's write. */
static volatile sig_atomic_t handled;
static void on_xfsz(int sig)
{
    (void)sig;
    handled++;
}

static void the_programs_handler_is_not_called(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_xfsz;
    sigaction(SIGXFSZ, &sa, &old);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    limit(0);
    handled = 0;
    assert_int_equal(cushim_write_all(fd, "x", 1), 0);
    assert_int_equal(errno, EFBIG);
    assert_int_equal(handled, 0);
    /* the program's own write still raises it (the test's control: the limit bites) */
    assert_int_equal(write(fd, "x", 1), -1);
    assert_int_equal(handled, 1);
    close(fd);
    sigaction(SIGXFSZ, &old, NULL);
}

/* Success: every byte written, errno untouched. */
static void success_leaves_errno(void **state)
{
    (void)state;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    errno = 1234;
    assert_int_equal(cushim_write_all(fd, "abcdef", 6), 6);
    assert_int_equal(errno, 1234);
    assert_int_equal(cushim_write_all(-1, "a", 1), 0);
    assert_int_equal(errno, EBADF);
    close(fd);
}

/* A non-blocking pipe that is full: cushim_write_all waits for room (a reader drains it 100 ms later) and writes
   everything; with nobody reading it gives up after CUSHIM_IO_WAIT_MS with EAGAIN and what it wrote. */
static void *drain_later(void *arg)
{
    int fd = *(int *)arg;
    char buf[65536];
    struct timespec ms100 = { 0, 100 * 1000 * 1000 };
    nanosleep(&ms100, NULL);
    while (read(fd, buf, sizeof buf) > 0) {
    }
    return NULL;
}

static void nonblocking_descriptor_waits_for_room(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
    static char big[256 * 1024];
    memset(big, 'y', sizeof big);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, drain_later, &p[0]), 0);
    assert_int_equal(cushim_write_all(p[1], big, sizeof big), sizeof big);   /* 4x the pipe's 64 KiB */
    close(p[1]);
    pthread_join(t, NULL);
    close(p[0]);

    assert_int_equal(pipe(p), 0);
    assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t w = cushim_write_all(p[1], big, sizeof big);   /* nobody reads: what fits, then EAGAIN */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(errno, EAGAIN);
    assert_true(w > 0 && w < sizeof big);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    assert_true(s >= 0.35 && s < 10.0);   /* waited about CUSHIM_IO_WAIT_MS (a bound, not a timing claim) */
    close(p[0]);
    close(p[1]);
}

/* cushim_read_mem: all of readable memory, across more pages than one system call takes; the readable prefix of
   a range running into a page that cannot be read; nothing from inside it or from a small address; errno as it
   was */
static void read_mem_prefix(void **state)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *hole = m + pg, dst[64];
    size_t big = 20 * 4096 + 123;
    unsigned char *src = malloc(big), *out = malloc(big);
    (void)state;
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(hole, (size_t)pg, PROT_NONE), 0);
    assert_non_null(src);
    assert_non_null(out);
    if (!cushim_read_mem_usable()) {   /* a seccomp filter that refuses both reads: no reads, said */
        print_message("no safe read here (a seccomp filter refuses both): cushim_read_mem answers -1\n");
        assert_int_equal(cushim_read_mem(dst, src, 8), -1);
        free(src);
        free(out);
        munmap(m, (size_t)pg * 2);
        return;
    }
    for (size_t i = 0; i < big; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    errno = 1234;
    assert_int_equal(cushim_read_mem(out, src + 1, big - 1), (long)(big - 1));
    assert_memory_equal(out, src + 1, big - 1);
    assert_int_equal(cushim_read_mem(out, src, 0), 0);
    memset(hole - 24, 0x5a, 24);
    memset(dst, 0, sizeof dst);
    assert_int_equal(cushim_read_mem(dst, hole - 24, sizeof dst), 24);
    for (int i = 0; i < 24; i++)
        assert_int_equal(dst[i], 0x5a);
    assert_int_equal(cushim_read_mem(dst, hole, sizeof dst), 0);
    assert_int_equal(cushim_read_mem(dst, hole + 100, 8), 0);
    assert_int_equal(cushim_read_mem(dst, (const void *)(uintptr_t)16, 8), 0);
    assert_int_equal(errno, 1234);
    assert_int_equal(cushim_mem_readable(src, big), 1);
    assert_int_equal(cushim_mem_readable(hole - 24, 24), 1);
    assert_int_equal(cushim_mem_readable(hole - 24, 25), 0);
    assert_int_equal(cushim_mem_readable(hole, 1), 0);
    assert_int_equal(cushim_mem_readable(hole, 0), 1);
    free(src);
    free(out);
    munmap(m, (size_t)pg * 2);
}

/* Under a seccomp filter cushim_read_mem makes no process_vm_readv: it asks the kernel page by page with
   rt_sigprocmask instead and reads as well - under a filter that refuses process_vm_readv (EPERM), one that
   would kill the process on it (SECCOMP_RET_KILL_PROCESS, as systemd's SystemCallFilter= does by default: the
   process lives), one that allows everything (which filter does what cannot be asked without the call). Where
   the filter refuses rt_sigprocmask too, or answers it with a lie (EINVAL for every set), it says so (-1) and
   reads nothing. In a child each, forked after the parent's own reads, which the filter stays with. Skipped
   where no filter can be installed. */
/* cushim_read_mem of 8 bytes the caller put on its stack (copied from 'text'), from a function of its own. */
static __attribute__((noinline)) long read_from_callee_at(char *dst, const char *p)
{
    return cushim_read_mem(dst, p, 8);
}

static __attribute__((noinline)) long read_from_callee(char *dst, const char *text)
{
    char mine[8];
    long r;
    memcpy(mine, text, 8);
    r = read_from_callee_at(dst, mine);
    __asm__ volatile("" : : "r"(mine) : "memory");
    return r;
}

static void read_mem_filtered(uint32_t action, uint32_t sigmask_action)
{
    pid_t pid;
    int st;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, action),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, sigmask_action),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
        long pg = sysconf(_SC_PAGESIZE);
        unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        size_t big = 3 * 4096 + 17;
        char *src = strdup("abcdefg"), dst[8] = {0}, *bsrc = malloc(big), *bdst = malloc(big);
        static char onstack_text[8] = "stack!!";
        int reads = sigmask_action == SECCOMP_RET_ALLOW;
        if (src == NULL || m == MAP_FAILED || bsrc == NULL || bdst == NULL || mprotect(m + pg, (size_t)pg, PROT_NONE))
            _exit(2);
        for (size_t i = 0; i < big; i++)
            bsrc[i] = (char)(i * 13 + 5);
        memset(m + pg - 8, 0x5a, 8);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            _exit(77);
        errno = 55;
        if (!reads) {   /* neither read answers: -1, nothing read */
            if (cushim_read_mem(dst, src, 8) != -1 || errno != 55 || dst[0] != 0 ||
                cushim_mem_readable(src, 8) != -1 || cushim_read_mem_usable())
                _exit(1);
        } else {   /* probed, page by page: the same answers as process_vm_readv's */
            if (cushim_read_mem(dst, src, 8) != 8 || memcmp(dst, "abcdefg", 8) != 0 || errno != 55 ||
                cushim_mem_readable(src, 8) != 1 || !cushim_read_mem_usable())
                _exit(1);
            if (cushim_read_mem(bdst, bsrc + 1, big - 1) != (long)(big - 1) || memcmp(bdst, bsrc + 1, big - 1) != 0)
                _exit(4);
            memset(dst, 0, sizeof dst);
            if (cushim_read_mem(bdst, m + pg - 8, 4096) != 8 || bdst[0] != 0x5a || bdst[7] != 0x5a)
                _exit(5);
            if (cushim_read_mem(dst, m + pg, 8) != 0 || cushim_read_mem(dst, (const void *)(uintptr_t)16, 8) != 0)
                _exit(6);
            if (cushim_mem_readable(m + pg - 8, 9) != 0 || cushim_mem_readable(m + pg - 8, 8) != 1 || errno != 55)
                _exit(7);
        }
        /* memory on the thread's stack above the stack pointer (a caller's: here this frame's, made live by
           the call below) is read without a system call, filter or not */
        if (read_from_callee(dst, onstack_text) != 8 || memcmp(dst, "stack!!", 8) != 0 || errno != 55)
            _exit(3);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("the process died of signal %d", WTERMSIG(st));
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77) {
        print_message("no seccomp filter here: the filtered case not run\n");
        return;
    }
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* cushim_on_stack from a function the caller's memory is passed to, as a hook gets the program's pointers: a
   caller's locals are on the live stack; heap memory, a small address and a range running past the top are
   not. (A function's own locals may sit below the stack pointer, in the red zone, and then read as not on
   the stack: the safe read's system call instead - on the safe side.) */
static __attribute__((noinline)) int on_stack_of(const void *p, size_t n)
{
    return cushim_on_stack(p, n);
}

static void on_stack(void **state)
{
    char here[64];
    char *heap = malloc(64);
    (void)state;
    assert_non_null(heap);
    memset(here, 1, sizeof here);
    assert_int_equal(on_stack_of(here, sizeof here), 1);
    assert_int_equal(on_stack_of(heap, 64), 0);
    assert_int_equal(on_stack_of((const void *)(uintptr_t)16, 8), 0);
    assert_int_equal(on_stack_of(here, (size_t)1 << 40), 0);
    free(heap);
}

static void read_mem_refused(void **state)
{
    (void)state;
    read_mem_filtered(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA), SECCOMP_RET_ALLOW);
}

static void read_mem_would_kill(void **state)
{
    (void)state;
    read_mem_filtered(SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ALLOW);
}

static void read_mem_any_filter(void **state)
{
    (void)state;
    read_mem_filtered(SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW);
}

/* A filter that kills on process_vm_readv and refuses rt_sigprocmask: no safe read, said (-1). */
static void read_mem_no_read_left(void **state)
{
    (void)state;
    read_mem_filtered(SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
}

/* A filter that answers every rt_sigprocmask EINVAL - what the probe reads as "readable": the check on a kernel
   address catches the lie, and no page is taken for readable on its word (-1). */
static void read_mem_probe_lies(void **state)
{
    (void)state;
    read_mem_filtered(SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA));
}

/* cushim_thread_create: the new thread blocks every signal that can be blocked; the caller's mask is as before */
static char thread_name[32];
static void *mask_of_thread(void *arg)
{
    pthread_sigmask(SIG_SETMASK, NULL, (sigset_t *)arg);
    for (int i = 0; i < 100 && pthread_getname_np(pthread_self(), thread_name, sizeof thread_name) == 0 &&
                    strcmp(thread_name, "cushim-test-thr") != 0; i++)
        usleep(1000);   /* named by the creator just after pthread_create */
    return NULL;
}

static void thread_create_blocks_signals(void **state)
{
    (void)state;
    sigset_t before, after, in_thread, some;
    pthread_t th;
    sigemptyset(&some);
    sigaddset(&some, SIGHUP);   /* the caller's own mask, kept: one signal blocked */
    pthread_sigmask(SIG_SETMASK, &some, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    sigemptyset(&in_thread);
    assert_int_equal(cushim_thread_create(&th, NULL, "cushim-test-thread-long", mask_of_thread, &in_thread), 0);
    pthread_join(th, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    for (int sig = 1; sig < 32; sig++) {   /* the standard signals (32 and 33 are glibc's own) */
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        assert_true(sigismember(&in_thread, sig));
        assert_int_equal(sigismember(&after, sig), sigismember(&before, sig));
    }
    assert_string_equal(thread_name, "cushim-test-thr");   /* the first 15 bytes of the name */
    assert_true(sigismember(&after, SIGHUP));
    assert_false(sigismember(&after, SIGUSR1));
    sigemptyset(&some);
    pthread_sigmask(SIG_SETMASK, &some, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(write_past_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(ftruncate_past_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(the_programs_pending_signal_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(write_to_a_pipe_with_no_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(the_programs_handler_is_not_called, setup, teardown),
        cmocka_unit_test_setup_teardown(success_leaves_errno, setup, teardown),
        cmocka_unit_test_setup_teardown(nonblocking_descriptor_waits_for_room, setup, teardown),
        cmocka_unit_test(thread_create_blocks_signals),
        cmocka_unit_test(read_mem_prefix),
        cmocka_unit_test(on_stack),
        cmocka_unit_test(read_mem_refused),
        cmocka_unit_test(read_mem_would_kill),
        cmocka_unit_test(read_mem_any_filter),
        cmocka_unit_test(read_mem_no_read_left),
        cmocka_unit_test(read_mem_probe_lies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
