/*
 * rm_workers.c - the back end's worker thread per client thread (rm_workers.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "rm_workers.h"

typedef struct rm_worker {
    uint64_t tid;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*fn)(void *);    /* the job; NULL: none */
    void *arg;
    int done, quit;
    uint64_t used;         /* the back end's count of hand-offs at its last job (least recently used: evicted) */
} rm_worker;

struct rm_workers {
    int have_first;
    uint64_t first;        /* the first client thread named: runs on the caller's thread */
    unsigned n;
    uint64_t clock;        /* hand-offs so far */
    rm_worker *w[RM_MAX_WORKERS];
};

static void *rm_worker_main(void *p)
{
    rm_worker *w = p;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->fn == NULL && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->fn == NULL)
            break;
        void (*fn)(void *) = w->fn;
        pthread_mutex_unlock(&w->mu);
        fn(w->arg);
        pthread_mutex_lock(&w->mu);
        w->fn = NULL;
        w->done = 1;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

rm_workers *rm_workers_new(void)
{
    return calloc(1, sizeof(rm_workers));
}

static void rm_worker_stop(rm_worker *w)
{
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
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
    w->fn = fn;
    w->arg = arg;
    w->done = 0;
    pthread_cond_broadcast(&w->cv);
    while (!w->done)
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
