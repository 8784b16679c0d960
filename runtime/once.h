/*
 * once.h - rt_once (once.c): an initialisation routine run once per process,
 * and the calling thread's kernel tid.
 */
#ifndef RT_ONCE_H
#define RT_ONCE_H

#include <stdatomic.h>
#include <stdint.h>

/* Like pthread_once, but a call on the thread running the routine (a signal
   handler, a plugin's init calling CUDA) returns 0 at once instead of waiting
   for itself, and a forked child whose parent was inside the routine on
   another thread runs it again instead of waiting for a thread that does not
   exist. State: 0 idle, 1 done, else (pid << 32) | tid of the runner. */
typedef struct rt_once_t {
    _Atomic uint64_t state;
} rt_once_t;
#define RT_ONCE_INIT { 0 }
int rt_once(rt_once_t *once, void (*fn)(void));   /* 1: done; 0: re-entered by the runner */
/* fork() child: a routine this thread was running in the parent stays ours. */
void rt_once_after_fork(rt_once_t *once, uint32_t parent_tid);
uint32_t rt_sys_gettid(void);
/* This thread's kernel tid, cached (initial-exec TLS, 4 bytes; 0 until asked).
   In once.c, which needs nothing else of the runtime (the fuzzing harnesses
   link it with a few modules alone: tools/fuzz.sh). */
extern __thread uint32_t rt_tid_cache __attribute__((tls_model("initial-exec")));

#endif /* RT_ONCE_H */
