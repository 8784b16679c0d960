/*
 * tr_base.c - the trace plugin's shared state and host table (tr_base.h), and
 * its helper threads: every signal blocked, detached, started before the
 * starter goes on, however long the start takes (no fork comes during a thread's start-up: tr_writer.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cushim/cushim_io.h"
#include "tr_base.h"

const cushim_host *tr_host;
tr_state *tr_st;

void tr_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

static void *tr_helper_main(void *p)
{
    tr_helper *h = p;
    void *(*fn)(void *) = h->fn;
    void *arg = h->arg;
    if (h->init != NULL)
        h->init(arg);
    tw_thread_running(&h->running);
    return fn(arg);
}

int tr_helper_thread(tr_helper *h, void *(*fn)(void *), void *arg)
{
    return tr_helper_thread_init(h, NULL, fn, arg);
}

int tr_helper_thread_init(tr_helper *h, void (*init)(void *), void *(*fn)(void *), void *arg)
{
    pthread_t th;
    int rc;
    h->fn = fn;
    h->init = init;
    h->arg = arg;
    atomic_store(&h->running, 0);
    tw_thread_starting();
    rc = cushim_thread_create(&th, NULL, "cushim-trhelp", tr_helper_main, h);
    if (rc != 0) {
        tw_thread_start_failed();
        return -1;
    }
    pthread_detach(th);
    tw_wait_started(&h->running);   /* as the writer's: no fork during the thread's runtime start-up */
    return 0;
}
