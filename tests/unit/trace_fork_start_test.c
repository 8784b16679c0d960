/*
 * trace_fork_start_test.c - a fork waits for the start-up of a thread of the trace plugin's (tr_writer.h
 * tw_thread_starting .. tw_thread_running): the thread's runtime start-up may hold locks no fork handler releases
 * (a sanitizer's), which a child would inherit held. A start-up under way for 200 ms: the fork returns after it;
 * the child can fork again at once (nothing counted as starting there). A helper's work between tw_nofork_begin and
 * tw_nofork_end (gpu_detach's CUPTI flush, which allocates): the fork returns after it. A helper's init
 * (tr_helper_thread_init: gpu_detach's flusher attaches its thread buffer there) taking 200 ms: the fork returns
 * after it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tr_base.h"
#include "tr_writer.h"


static _Atomic int running;
static _Atomic uint64_t ran_at;

static void *slow_start(void *arg)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    (void)arg;
    nanosleep(&ts, NULL);   /* a start-up that takes long (a loaded machine) */
    atomic_store(&ran_at, tw_mono_ns());
    tw_thread_running(&running);
    return NULL;
}

static void test_fork_waits_for_start(void **state)
{
    pthread_t th;
    pid_t pid;
    int st = -1;
    uint64_t forked_at;
    (void)state;
    tw_thread_starting();
    assert_int_equal(pthread_create(&th, NULL, slow_start, NULL), 0);
    pid = fork();   /* from a thread that is not the creator's waiting one: the prepare handler waits */
    if (pid == 0) {
        pid_t g;
        alarm(10);   /* a start-up left counted in the child would hold this fork for ever */
        g = fork();
        if (g == 0)
            _exit(0);
        _exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3);
    }
    forked_at = tw_mono_ns();
    assert_true(pid > 0);
    assert_true(atomic_load(&running));
    assert_true(forked_at >= atomic_load(&ran_at));
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    tw_wait_started(&running);
    pthread_join(th, NULL);
}

static _Atomic int in_work;
static _Atomic uint64_t work_end;

static void *work(void *arg)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    (void)arg;
    tw_nofork_begin();
    atomic_store(&in_work, 1);
    nanosleep(&ts, NULL);   /* a helper's work that allocates (gpu_detach's flush) */
    atomic_store(&work_end, tw_mono_ns());
    tw_nofork_end();
    return NULL;
}

/* A fork waits for a helper's work between tw_nofork_begin and tw_nofork_end. */
static void test_fork_waits_for_work(void **state)
{
    pthread_t th;
    pid_t pid;
    int st = -1;
    uint64_t forked_at;
    (void)state;
    assert_int_equal(pthread_create(&th, NULL, work, NULL), 0);
    while (!atomic_load(&in_work))
        sched_yield();
    pid = fork();
    if (pid == 0)
        _exit(0);
    forked_at = tw_mono_ns();
    assert_true(pid > 0);
    assert_true(atomic_load(&work_end) != 0 && forked_at >= atomic_load(&work_end));
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pthread_join(th, NULL);
}

static _Atomic uint64_t init_end;
static _Atomic int init_began;
static _Atomic uint64_t init_forked_at;
static _Atomic int init_child_st = -1;
static tr_helper init_helper;

static void slow_init(void *arg)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    (void)arg;
    atomic_store(&init_began, 1);
    nanosleep(&ts, NULL);   /* an init that allocates on a loaded machine */
    atomic_store(&init_end, tw_mono_ns());
}

static void *helper_fn(void *arg)
{
    (void)arg;
    return NULL;
}

static void *forker(void *arg)
{
    pid_t pid;
    int st = -1;
    (void)arg;
    while (!atomic_load(&init_began))
        sched_yield();
    pid = fork();   /* while the init runs: the prepare handler waits for the start-up */
    if (pid == 0)
        _exit(0);
    atomic_store(&init_forked_at, tw_mono_ns());
    if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
        atomic_store(&init_child_st, WEXITSTATUS(st));
    return NULL;
}

/* A fork waits for a helper's init, which runs inside its start-up (tr_helper_thread_init). */
static void test_fork_waits_for_init(void **state)
{
    pthread_t th;
    (void)state;
    assert_int_equal(pthread_create(&th, NULL, forker, NULL), 0);
    assert_int_equal(tr_helper_thread_init(&init_helper, slow_init, helper_fn, NULL), 0);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&init_child_st), 0);
    assert_true(atomic_load(&init_end) != 0 && atomic_load(&init_forked_at) >= atomic_load(&init_end));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_fork_waits_for_start),
                                        cmocka_unit_test(test_fork_waits_for_work),
                                        cmocka_unit_test(test_fork_waits_for_init) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
