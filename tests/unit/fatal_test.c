/*
 * fatal_test.c - the fatal signals' handlers chained to the program's (plugins/common/fatal.c), which the trace
 * (its file finished) and the flight recorder (its ring marked) use. Each case runs in a forked child that tells
 * what ran through a pipe, one letter each: B the plugin's 'before', P the program's own handler, D the plugin's
 * 'at_death', E the program going on after the signal. A signal at its default: the last words, then death of
 * that signal (sent again, or a real fault faulting again); the program's handler: it runs instead, and the
 * program goes on; an ignored signal stays ignored; a fault runs 'before' ahead of the program's handler.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fatal.h"

static int t_fd = -1;
static void *t_fault_addr;

static void say(char c)
{
    if (write(t_fd, &c, 1) != 1)
        _exit(90);
}

static void t_before(int sig, const siginfo_t *si)
{
    (void)si;
    say(fatal_is_handled(sig) ? 'B' : '?');
}

static void t_death(int sig, const siginfo_t *si)
{
    (void)sig;
    say('D');
    if (t_fault_addr != NULL && si != NULL && si->si_addr == t_fault_addr && si->si_code > 0)
        say('A');   /* the fault's own siginfo reached it */
}

static void t_death_second(int sig, const siginfo_t *si)
{
    (void)sig;
    (void)si;
    say('2');
}

static void t_program(int sig)
{
    (void)sig;
    say('P');
}

static void t_program_info(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    say(si != NULL && si->si_signo == sig ? 'P' : '?');
}

static void set_disposition(int sig, void (*handler)(int), void (*action)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    if (action != NULL) {
        sa.sa_sigaction = action;
        sa.sa_flags = SA_SIGINFO;
    } else {
        sa.sa_handler = handler;
    }
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(sig, &sa, NULL), 0);
}

/* Runs 'child' in a forked process; the letters it said into 'out', its wait status returned. */
static int run_child(void (*child)(void), char *out, size_t cap)
{
    int p[2], status = 0;
    size_t len = 0;
    ssize_t n;
    pid_t pid;
    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        t_fd = p[1];
        child();
        say('E');
        _exit(0);
    }
    close(p[1]);
    while (len + 1 < cap && (n = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(p[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void child_term_default(void)
{
    set_disposition(SIGTERM, SIG_DFL, NULL);
    fatal_install(t_before, t_death);
    raise(SIGTERM);
}

static void test_default_dies_after_last_words(void **state)
{
    char got[16];
    int st = run_child(child_term_default, got, sizeof got);
    (void)state;
    assert_string_equal(got, "D");   /* not a fault: no 'before' */
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
}

static void child_abort_default(void)
{
    set_disposition(SIGABRT, SIG_DFL, NULL);
    fatal_install(t_before, t_death);
    raise(SIGABRT);
}

static void test_sent_fault_before_then_death(void **state)
{
    char got[16];
    int st = run_child(child_abort_default, got, sizeof got);
    (void)state;
    assert_string_equal(got, "BD");
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
}

static void child_real_fault(void)
{
    volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        _exit(91);
    t_fault_addr = (void *)page;
    set_disposition(SIGSEGV, SIG_DFL, NULL);   /* a sanitizer's handler would come first otherwise */
    fatal_install(t_before, t_death);
    page[0] = 1;   /* the handler returns here, the store faults again with the default disposition */
}

static void test_real_fault_faults_again(void **state)
{
    char got[16];
    int st = run_child(child_real_fault, got, sizeof got);
    (void)state;
    assert_string_equal(got, "BDA");
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGSEGV);
}

static void child_program_handler(void)
{
    set_disposition(SIGTERM, t_program, NULL);
    fatal_install(t_before, t_death);
    raise(SIGTERM);
}

static void test_program_handler_runs_instead(void **state)
{
    char got[16];
    int st = run_child(child_program_handler, got, sizeof got);
    (void)state;
    assert_string_equal(got, "PE");   /* the program goes on: no last words */
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void child_fault_program_siginfo(void)
{
    set_disposition(SIGBUS, NULL, t_program_info);
    fatal_install(t_before, t_death);
    raise(SIGBUS);
}

static void test_fault_before_program_handler(void **state)
{
    char got[16];
    int st = run_child(child_fault_program_siginfo, got, sizeof got);
    (void)state;
    assert_string_equal(got, "BPE");
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void child_ignored(void)
{
    struct sigaction now;
    set_disposition(SIGINT, SIG_IGN, NULL);
    fatal_install(t_before, t_death);
    if (sigaction(SIGINT, NULL, &now) != 0 || (now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_IGN)
        say('X');   /* a handler was put over an ignored signal */
    raise(SIGINT);
}

static void test_ignored_stays_ignored(void **state)
{
    char got[16];
    int st = run_child(child_ignored, got, sizeof got);
    (void)state;
    assert_string_equal(got, "E");
    assert_true(WIFEXITED(st));
}

static void child_installed_once(void)
{
    set_disposition(SIGHUP, SIG_DFL, NULL);
    fatal_install(t_before, t_death);
    fatal_install(t_before, t_death_second);
    raise(SIGHUP);
}

static void test_installed_once(void **state)
{
    char got[16];
    int st = run_child(child_installed_once, got, sizeof got);
    (void)state;
    assert_string_equal(got, "D");
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGHUP);
}

static void test_handled(void **state)
{
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
    (void)state;
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        assert_true(fatal_is_handled(fatal[i]));
    assert_false(fatal_is_handled(SIGUSR1));
    assert_false(fatal_is_handled(SIGUSR2));
    assert_false(fatal_is_handled(SIGKILL));
    assert_false(fatal_is_handled(SIGCHLD));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_dies_after_last_words),
        cmocka_unit_test(test_sent_fault_before_then_death),
        cmocka_unit_test(test_real_fault_faults_again),
        cmocka_unit_test(test_program_handler_runs_instead),
        cmocka_unit_test(test_fault_before_program_handler),
        cmocka_unit_test(test_ignored_stays_ignored),
        cmocka_unit_test(test_installed_once),
        cmocka_unit_test(test_handled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
