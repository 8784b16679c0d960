/*
 * rm_workers.h - one server thread per client thread, inside one back end (docs/remote.md, "Client threads").
 *
 * A driver keeps per-thread state (the current context); a back end that ran every client thread's calls on
 * one thread would share it between them. The client names the thread its next calls come from
 * (RM_MSG_THREAD); the back end runs them on a worker thread of its own for that client thread, created at its
 * first call. The first client thread named runs on the back end's main thread (no hand-off for a
 * single-threaded program). The loop hands each call to its worker and waits: calls still run one at a time,
 * in the order the client sent them.
 */
#ifndef RM_WORKERS_H
#define RM_WORKERS_H

#include <stdint.h>

#define RM_MAX_WORKERS 256   /* client threads with a worker at once; past it the least recently used worker is
                                stopped and its slot given to the new client thread (a driver-API thread that
                                made a context current and returns after 256 others took its place finds none
                                current: docs/limitations.md) */

typedef struct rm_workers rm_workers;

rm_workers *rm_workers_new(void);
/* Runs fn(arg) on the thread of client thread 'tid' and waits for it. 0, or -1 when no thread could be started
   for it (out of memory or threads: fn did not run). */
int rm_workers_run(rm_workers *ws, uint64_t tid, void (*fn)(void *), void *arg);
void rm_workers_free(rm_workers *ws);   /* stops and joins every worker */

#endif /* RM_WORKERS_H */
