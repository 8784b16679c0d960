/*
 * lifecycle.h - initialisation, fork and exit (lifecycle.c): the walk of the
 * table the modules register in (module.h).
 */
#ifndef RT_LIFECYCLE_H
#define RT_LIFECYCLE_H

#include <stdatomic.h>

int rt_init(void);                      /* 1: initialised; 0: re-entered during initialisation */
extern _Atomic int lc_is_ready;
static inline int lc_ready(void)
{
    return atomic_load_explicit(&lc_is_ready, memory_order_acquire);
}
int lc_exiting(void);                   /* plugins flushed: no new hooks, no sync */

#endif /* RT_LIFECYCLE_H */
