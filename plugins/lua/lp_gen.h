/*
 * lp_gen.h - generations of the policy (lp_gen.c): references, the per-API index, publication.
 */
#ifndef LP_GEN_H
#define LP_GEN_H

#include <stddef.h>

#include "lp_engine.h"

/* The hooks every generation registers (the plugin's pre and post, lp_hooks.c): set once at init. */
void lp_gen_set_hooks(cushim_pre_fn pre, cushim_post_fn post) LP_HIDDEN;
void lp_gen_free(lp_gen *g) LP_HIDDEN;           /* one never published, with no reference left */
void lp_gen_release(lp_gen *g) LP_HIDDEN;
lp_gen *lp_gen_acquire(void) LP_HIDDEN;          /* the current one, referenced; or NULL */
/* Hook declarations (g->hooks) -> per-API lists and the host selector; 0, or -1 with 'err'. */
int lp_gen_index(lp_gen *g, char *err, size_t errlen) LP_HIDDEN;
int lp_publish(lp_gen *g) LP_HIDDEN;             /* make it current (its reference becomes current's) */

#endif /* LP_GEN_H */
