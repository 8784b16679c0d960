/*
 * tr_hooks.h - the recording hooks on the selected APIs (tr_hooks.c: the hooks
 * part): the filter's plans, the two hook groups, added and removed.
 */
#ifndef TR_HOOKS_H
#define TR_HOOKS_H

#include <cushim/cushim.h>

#include "tr_base.h"

/* A post hook alone, with 'st' as its user data, on the APIs 'select' matches: 0, or -1. */
int tr_hooks_add_post(tr_state *st, const char *select, cushim_post_fn post, uint64_t *group);
/* The two call-hook groups (tr_register's selectors in st->sel): added, removed. 0 or -1. */
int tr_hooks_add(tr_state *st);
void tr_hooks_remove(tr_state *st);
/* The hooks again, reading the exit clock themselves (no CUSHIM_HOOK_EXIT_TIME): hooks that stay while paused
   (unhook without its watcher thread) read it only while recording. 0 or -1. */
int tr_hooks_self_timed(tr_state *st);

extern const tr_part tr_part_hooks;

#endif /* TR_HOOKS_H */
