/*
 * rm_workers_test.c - the back end's worker thread per client thread (remote/rm_workers.c): each client thread's
 * jobs run on one thread of its own (the first client thread's on the caller's), and past RM_MAX_WORKERS client
 * threads the least recently used worker gives its slot to the new one instead of the new one being refused.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rm_workers.h"

static void record_self(void *arg)
{
    *(pthread_t *)arg = pthread_self();
}

static pthread_t run_on(rm_workers *ws, uint64_t tid)
{
    pthread_t who = 0;
    assert_int_equal(rm_workers_run(ws, tid, record_self, &who), 0);
    return who;
}

static void test_thread_per_client_thread(void **state)
{
    (void)state;
    rm_workers *ws = rm_workers_new();
    assert_non_null(ws);
    pthread_t first = run_on(ws, 100);
    assert_true(pthread_equal(first, pthread_self()));   /* the first client thread: on the caller's */
    pthread_t a = run_on(ws, 200), b = run_on(ws, 300);
    assert_false(pthread_equal(a, pthread_self()));
    assert_false(pthread_equal(a, b));
    assert_true(pthread_equal(run_on(ws, 200), a));      /* the same worker again */
    assert_true(pthread_equal(run_on(ws, 100), first));
    rm_workers_free(ws);
}

static void test_lru_eviction(void **state)
{
    (void)state;
    rm_workers *ws = rm_workers_new();
    assert_non_null(ws);
    run_on(ws, 1);   /* the caller's thread, no worker */
    pthread_t keep = run_on(ws, 1000);
    /* fill every slot; 1000 stays the most recently used by being used between */
    for (uint64_t t = 2000; t < 2000 + RM_MAX_WORKERS - 1; t++) {
        run_on(ws, t);
        if (t % 16 == 0)
            assert_true(pthread_equal(run_on(ws, 1000), keep));
    }
    /* more client threads than slots: each still runs (never refused) */
    for (uint64_t t = 9000; t < 9000 + 2 * RM_MAX_WORKERS; t++) {
        pthread_t w = run_on(ws, t);
        assert_false(pthread_equal(w, pthread_self()));
        assert_true(pthread_equal(run_on(ws, t), w));   /* kept while recent */
        if (t % 8 == 0)
            assert_true(pthread_equal(run_on(ws, 1000), keep));   /* the busy one is never the one evicted */
    }
    rm_workers_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_per_client_thread),
        cmocka_unit_test(test_lru_eviction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
