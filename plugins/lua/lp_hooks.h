/*
 * lp_hooks.h - the plugin's hooks and each thread's record in the host's per-thread storage (lp_hooks.c).
 */
#ifndef LP_HOOKS_H
#define LP_HOOKS_H

#include <stdint.h>

#include "lp_engine.h"

int lp_pre(cushim_call *call, void *user, uint64_t *slot) LP_HIDDEN;     /* the hooks */
void lp_post(cushim_call *call, void *user, uint64_t *slot) LP_HIDDEN;
void lp_hooks_tls_free(void *p) LP_HIDDEN;   /* the host's per-thread storage destructor */
lp_thread *lp_thread_get(void) LP_HIDDEN;    /* this thread's record (made on first use), or NULL */
void lp_thread_switch(lp_thread *t) LP_HIDDEN;   /* to the current generation */

#endif /* LP_HOOKS_H */
