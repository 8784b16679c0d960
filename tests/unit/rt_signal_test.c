/*
 * rt_signal_test.c - issue #10 item 6a: a signal handler that makes a thread's
 * first call of an API while that same thread is inside hooks_add or
 * hooks_remove (holding the hook mutex) must not hang. It did in 183 of 200
 * runs: publishing the newly resolved function took the hook mutex.
 *
 * 200 forked children each: resolve cuCtxGetCurrent's library function
 * (rt_lib_real: no dlsym in the handler) without publishing it, arm a timer,
 * and add and remove a hook group in a loop; the SIGALRM handler makes the
 * first call of cuCtxGetCurrent (which publishes) and a hooked call of
 * cuDriverGetVersion (pre and post hooks from the handler). The parent gives
 * each child 10 s, kills and fails it on timeout, and checks that most
 * signals did land inside the mutex (so the race was really exercised).
 * Run with CUSHIM_REAL_LIBCUDA=<the stand-in driver>.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

#define RUNS 200

static cushim_plugin *plug;
static volatile sig_atomic_t in_mutex, landed_inside, handled, handler_ok;
static volatile int pre_in_handler;

static int count_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    pre_in_handler++;
    return CUSHIM_CONTINUE;
}

static void on_alarm(int sig)
{
    (void)sig;
    landed_inside = in_mutex;
    CUcontext ctx = (CUcontext)1;
    int v = 0, before = pre_in_handler;
    handler_ok = cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx == NULL &&   /* first call: resolves, publishes */
                 cuDriverGetVersion(&v) == CUDA_SUCCESS && v == 13000 &&    /* hooked, from the handler */
                 pre_in_handler == before + 1;
    handled = 1;
}

static int churn_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    return CUSHIM_CONTINUE;
}

/* The child: exit 10 if the signal landed inside the mutex, 11 if outside, 1 on error. */
static int child(unsigned seed)
{
    if (rt_lib_real(CUSHIM_API_cuCtxGetCurrent) == NULL ||
        atomic_load(&rt_slots[CUSHIM_API_cuCtxGetCurrent].real) != NULL)
        return 1;   /* must be found, and not published yet */
    struct sigaction sa = { .sa_handler = on_alarm };
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { .it_value = { 0, 20 + (long)(seed % 400) } };
    setitimer(ITIMER_REAL, &it, NULL);
    while (!handled) {
        uint64_t g;
        in_mutex = 1;
        int r = rt_hook_sel(plug, "cuMemAlloc_v2,cuMemFree_v2,cuInit", 0, churn_pre, NULL, NULL, &g);
        in_mutex = 0;
        if (r != CUSHIM_OK)
            return 1;
        in_mutex = 1;
        r = rt_host()->hooks_remove(plug, g);
        in_mutex = 0;
        if (r != CUSHIM_OK)
            return 1;
    }
    return !handler_ok ? 1 : landed_inside ? 10 : 11;
}

static void test_signal_during_hooks_add(void **state)
{
    (void)state;
    plug = rt_test_plugin("signal-test");
    assert_non_null(plug);
    uint64_t g;
    assert_int_equal(rt_hook(plug, CUSHIM_API_cuDriverGetVersion, 0, count_pre, NULL, NULL, &g), CUSHIM_OK);
    int v;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);   /* the driver is found and opened once, here */
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuCtxGetCurrent].real));
    int inside = 0, outside = 0;
    for (int i = 0; i < RUNS; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(child((unsigned)i * 2654435761u));
        int st = 0, waited = 0;
        while (waitpid(pid, &st, WNOHANG) == 0) {
            if (++waited > 10000) {   /* 10 s */
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                fail_msg("run %d: the child hung (signal handler's first call while holding the hook mutex)", i);
            }
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
        assert_true(WIFEXITED(st));
        int code = WEXITSTATUS(st);
        if (code != 10 && code != 11)
            fail_msg("run %d: child exit %d", i, code);
        inside += code == 10;
        outside += code == 11;
    }
    print_message("%d runs: the signal landed inside hooks_add/remove %d times, outside %d\n", RUNS, inside, outside);
    assert_true(inside >= RUNS / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_signal_during_hooks_add) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
