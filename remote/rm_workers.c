/*
 * rm_workers.c - the back end's worker thread per client thread (rm_workers.h). A hand-off is a job posted and its
 * end awaited under a mutex and a condition variable, each side first spinning a bounded while (RM_BELL_SPIN_NS,
 * as the doorbell) on the words it waits for: a client thread's calls come back to back, and two sleeps and
 * wake-ups per call cost 3-4 us (docs/remote.md, "Shared memory on one host").
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "rm_shm.h"
#include "rm_workers.h"

typedef struct rm_worker {
    uint64_t tid;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic(void (*)(void *)) fn;   /* the job; NULL: none (written under 'mu', read by spinners without it) */
    void *arg;
    _Atomic int done, quit;
    uint64_t used;         /* the back end's count of hand-offs at its last job (least recently used: evicted) */
} rm_worker;

struct rm_workers {
    int have_first;
    uint64_t first;        /* the first client thread named: runs on the caller's thread */
    unsigned n;
    uint64_t clock;        /* hand-offs so far */
    rm_worker *w[RM_MAX_WORKERS];
};

static uint64_t rm_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spins, at most RM_BELL_SPIN_NS, until the job is done (for_done) or a job or the end is posted (the worker);
   the caller then sleeps under the mutex. */
static int rm_ready(rm_worker *w, int for_done)
{
    return for_done ? atomic_load(&w->done) : atomic_load(&w->fn) != NULL || atomic_load(&w->quit);
}

static void rm_spin(rm_worker *w, int for_done)
{
    uint64_t t0 = rm_now_ns();
    for (unsigned i = 1; !rm_ready(w, for_done); i++) {
        if ((i & 63) == 0 && rm_now_ns() - t0 > RM_BELL_SPIN_NS)
            return;
        rm_bell_relax(i);
    }
}

static void *rm_worker_main(void *p)
{
    rm_worker *w = p;
    for (;;) {
        rm_spin(w, 0);   /* the next job usually follows soon */
        pthread_mutex_lock(&w->mu);
        while (atomic_load(&w->fn) == NULL && !atomic_load(&w->quit))
            pthread_cond_wait(&w->cv, &w->mu);
        void (*fn)(void *) = atomic_load(&w->fn);
        pthread_mutex_unlock(&w->mu);
        if (fn == NULL)
            break;
        fn(w->arg);
        pthread_mutex_lock(&w->mu);
        atomic_store(&w->fn, NULL);
        atomic_store(&w->done, 1);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

rm_workers *rm_workers_new(void)
{
    return calloc(1, sizeof(rm_workers));
}

static void rm_worker_stop(rm_worker *w)
{
    pthread_mutex_lock(&w->mu);
    atomic_store(&w->quit, 1);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* The worker of 'tid' (a linear scan: at most RM_MAX_WORKERS), started at its first job. With every slot
   taken, the least recently used worker is stopped and its slot given to 'tid': client threads come and go
   (a pool's short-lived threads) and an ended one never says so. Workers are idle between hand-offs (calls run
   one at a time), so stopping one interrupts nothing. */
static rm_worker *rm_worker_of(rm_workers *ws, uint64_t tid)
{
    for (unsigned i = 0; i < ws->n; i++)
        if (ws->w[i]->tid == tid)
            return ws->w[i];
    unsigned slot = ws->n;
    if (ws->n == RM_MAX_WORKERS) {
        slot = 0;
        for (unsigned i = 1; i < ws->n; i++)
            if (ws->w[i]->used < ws->w[slot]->used)
                slot = i;
        rm_worker_stop(ws->w[slot]);
        ws->w[slot] = ws->w[--ws->n];
        slot = ws->n;
    }
    rm_worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->tid = tid;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, rm_worker_main, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    ws->w[slot] = w;
    ws->n++;
    return w;
}

int rm_workers_run(rm_workers *ws, uint64_t tid, void (*fn)(void *), void *arg)
{
    if (ws == NULL)
        return -1;
    if (!ws->have_first) {
        ws->have_first = 1;
        ws->first = tid;
    }
    if (tid == ws->first) {
        fn(arg);
        return 0;
    }
    rm_worker *w = rm_worker_of(ws, tid);
    if (w == NULL)
        return -1;
    w->used = ++ws->clock;
    pthread_mutex_lock(&w->mu);
    w->arg = arg;
    atomic_store(&w->done, 0);
    atomic_store(&w->fn, fn);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    rm_spin(w, 1);
    pthread_mutex_lock(&w->mu);
    while (!atomic_load(&w->done))
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

void rm_workers_free(rm_workers *ws)
{
    if (ws == NULL)
        return;
    for (unsigned i = 0; i < ws->n; i++)
        rm_worker_stop(ws->w[i]);
    free(ws);
}
