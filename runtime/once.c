/*
 * once.c - rt_once: run an initialisation routine once per process, without
 * the two ways pthread_once can hang a CUDA program.
 *
 *  - Re-entry on the running thread: a signal handler, or a plugin's init,
 *    making a CUDA call while the routine runs on that same thread would wait
 *    for itself forever. rt_once returns 0 there instead; the caller proceeds
 *    with what is initialised so far.
 *  - fork(): glibc's pthread_once restarts a routine interrupted by fork in
 *    the child, but only through its private fork generation; rt_once states
 *    it: the state records the runner's pid and kernel tid, and a child (another
 *    pid) takes the routine over from the thread that does not exist there. A
 *    routine the forking thread itself was running stays its own
 *    (rt_once_after_fork, from the atfork child handler).
 *
 * Waiters poll (a routine runs once per process; a plugin's init may take a
 * while). A runner that died (its tid is gone) is taken over too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "once.h"

#define ONCE_DONE 1ull

__thread uint32_t rt_tid_cache __attribute__((tls_model("initial-exec")));

uint32_t rt_sys_gettid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

static uint64_t once_me(void)
{
    uint32_t tid = rt_sys_gettid();
    rt_tid_cache = tid;   /* the atfork child handler compares with it */
    return ((uint64_t)(uint32_t)getpid() << 32) | tid;
}

/* The runner recorded in 's' cannot finish: another process's thread (we are a
   forked child) or a thread that has exited. */
static int once_orphaned(uint64_t s)
{
    uint32_t pid = (uint32_t)(s >> 32), tid = (uint32_t)s;
    if (pid != (uint32_t)getpid())
        return 1;
    return syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, 0) != 0 && errno == ESRCH;
}

int rt_once(rt_once_t *once, void (*fn)(void))
{
    uint64_t s = atomic_load_explicit(&once->state, memory_order_acquire);
    if (RT_LIKELY(s == ONCE_DONE))
        return 1;
    int saved = errno;
    uint64_t me = once_me();
    unsigned polls = 0;
    for (;;) {
        if (s == ONCE_DONE)
            break;
        if (s == me) {
            errno = saved;
            return 0;   /* re-entered by the runner */
        }
        if (s == 0 || once_orphaned(s)) {
            if (atomic_compare_exchange_strong(&once->state, &s, me)) {
                fn();
                atomic_store_explicit(&once->state, ONCE_DONE, memory_order_release);
                break;
            }
            continue;   /* 's' holds the newer state */
        }
        /* Another thread runs it: 50 us polls, then 1 ms. */
        struct timespec ts = { 0, polls++ < 200 ? 50000 : 1000000 };
        nanosleep(&ts, NULL);
        s = atomic_load_explicit(&once->state, memory_order_acquire);
    }
    errno = saved;
    return 1;
}

void rt_once_after_fork(rt_once_t *once, uint32_t parent_tid)
{
    uint64_t s = atomic_load_explicit(&once->state, memory_order_relaxed);
    if (s == ONCE_DONE || s == 0 || parent_tid == 0 || (uint32_t)s != parent_tid)
        return;
    /* This thread was running the routine when it forked (fork from inside a
       plugin's init): in the child it still is. */
    atomic_store_explicit(&once->state, once_me(), memory_order_relaxed);
}
