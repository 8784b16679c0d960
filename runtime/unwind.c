/*
 * unwind.c - how a hooked call learns that a longjmp left it.
 *
 * glibc's longjmp (also siglongjmp, _longjmp, __longjmp_chk) first calls
 * _longjmp_unwind, which runs every old-style cleanup buffer
 * (_pthread_cleanup_push, the pre-exception pthread_cleanup_push) lying in the
 * stack being jumped over; thread cancellation runs them too. A hooked call
 * registers such a buffer for its frame (dispatch.c), so a hook that longjmps
 * out - or a signal handler that siglongjmps out of a blocked CUDA call -
 * pops the frame and ends its epoch section exactly.
 *
 * glibc's _pthread_cleanup_push/pop cost ~4.7 ns per pair on the reference
 * AMD VM: the list head is read and written at a %fs: displacement, and
 * that store does not forward to the next call's load. So the head's place
 * in the thread control block is found once (a buffer pushed with glibc's
 * function is searched for from the thread pointer), each thread's record
 * keeps the head's address, and the push/pop are plain stores through it. Both are verified at start-up by a
 * real setjmp/longjmp over a registered buffer; if the inline form fails,
 * glibc's functions are used; if glibc does not run the buffer at all, no
 * buffer is registered and dead frames are only detected approximately
 * (dispatch.c: rt_live_top).
 */
#define _GNU_SOURCE
#include <setjmp.h>

#include "base.h"
#include "log.h"
#include "module.h"
#include "unwind.h"

int uw_mode RT_HOT;      /* UW_NONE, UW_GLIBC or UW_INLINE */
long uw_off;        /* offset of the list head from the thread pointer (UW_INLINE) */

#define UW_SCAN 1536   /* struct pthread is > 2 KiB on every glibc with nptl */

static void uw_note(void *arg)
{
    ++*(int *)arg;
}

static sigjmp_buf uw_env;

static __attribute__((noinline)) void uw_jump_over(int *hits, int mode)
{
    struct _pthread_cleanup_buffer b;
    uw_push_mode(&b, uw_note, hits, mode, (void **)(uw_thread_pointer() + uw_off));
    __asm__ volatile("" : : "r"(&b) : "memory");
    siglongjmp(uw_env, 1);
}

/* 1 if a longjmp over a buffer pushed in 'mode' runs it and restores the list. */
static int uw_test(int mode)
{
    volatile int hits = 0;
    char *tp = uw_thread_pointer();
    void *volatile before = mode == UW_INLINE ? *(void **)(tp + uw_off) : NULL;
    if (sigsetjmp(uw_env, 0) == 0)
        uw_jump_over((int *)&hits, mode);
    return hits == 1 && (mode != UW_INLINE || *(void **)(tp + uw_off) == before);
}

/* At initialisation: how longjmps are seen (uw_mode, uw_off). */
static void uw_probe(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* Sanitizers wrap longjmp and watch the TCB: use glibc's own functions. */
    uw_mode = uw_test(UW_GLIBC) ? UW_GLIBC : UW_NONE;
#else
    struct _pthread_cleanup_buffer a, b;
    char *tp = uw_thread_pointer();
    _pthread_cleanup_push(&a, uw_note, NULL);
    long found = -1;
    int nfound = 0;
    for (long k = 0; k < UW_SCAN; k += (long)sizeof(void *))
        if (*(void **)(tp + k) == (void *)&a) {
            found = k;
            nfound++;
        }
    int ok = nfound == 1;
    _pthread_cleanup_push(&b, uw_note, NULL);
    ok = ok && *(void **)(tp + found) == (void *)&b;
    _pthread_cleanup_pop(&b, 0);
    ok = ok && *(void **)(tp + found) == (void *)&a;
    _pthread_cleanup_pop(&a, 0);
    if (ok) {
        uw_off = found;
        if (uw_test(UW_INLINE)) {
            uw_mode = UW_INLINE;
            log_debug("longjmp over hooked calls: cleanup buffers pushed inline (list head at thread pointer + %ld)",
                      uw_off);
            return;
        }
    }
    uw_mode = uw_test(UW_GLIBC) ? UW_GLIBC : UW_NONE;
#endif
    if (uw_mode == UW_NONE)
        log_debug("glibc does not run cleanup buffers on longjmp here: a hook left by longjmp is detected "
                  "only at the next hooked call from the same or a shallower stack depth");
}

LC_MODULE(unwind, .level = LC_CORE, .init = uw_probe);
