/*
 * unwind.h - how a hooked call learns that a longjmp left it (unwind.c):
 * old-style cleanup buffers pushed inline or through glibc. (Not GCC's
 * <unwind.h>, which this name shadows for files with runtime/ on their
 * include path: none of them includes that one.)
 */
#ifndef RT_UNWIND_H
#define RT_UNWIND_H

#include <pthread.h>

#include "base.h"

enum { UW_NONE = 0, UW_GLIBC = 1, UW_INLINE = 2 };
extern int uw_mode;
extern long uw_off;
/* glibc's old-style cleanup buffers: exported (GLIBC_2.2.5 and 2.34); pthread.h
   declares only the struct. */
extern void _pthread_cleanup_push(struct _pthread_cleanup_buffer *buffer, void (*routine)(void *), void *arg);
extern void _pthread_cleanup_pop(struct _pthread_cleanup_buffer *buffer, int execute);
static inline char *uw_thread_pointer(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}
static inline void uw_push_mode(struct _pthread_cleanup_buffer *b, void (*fn)(void *), void *arg, int mode,
                                void **head)
{
    if (RT_LIKELY(mode == UW_INLINE)) {
        b->__routine = fn;
        b->__arg = arg;
        b->__prev = *head;
        atomic_signal_fence(memory_order_seq_cst);   /* complete before a handler can see it */
        *head = b;
    } else if (mode == UW_GLIBC) {
        _pthread_cleanup_push(b, fn, arg);
    }
}
/* 'head' is the calling thread's list head (th_rec.uw_head): reading the
   thread pointer costs a %fs: load per push and pop otherwise. */
static inline void uw_push(struct _pthread_cleanup_buffer *b, void (*fn)(void *), void *arg, void **head)
{
    uw_push_mode(b, fn, arg, uw_mode, head);
}
static inline void uw_pop(struct _pthread_cleanup_buffer *b, void **head)
{
    if (RT_LIKELY(uw_mode == UW_INLINE))
        *head = b->__prev;
    else if (uw_mode == UW_GLIBC)
        _pthread_cleanup_pop(b, 0);
}

#endif /* RT_UNWIND_H */
