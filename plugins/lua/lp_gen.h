/*
 * lp_gen.h - generations of the policy (lp_gen.c): references, the per-API index, publication.
 */
#ifndef LP_GEN_H
#define LP_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "lp_engine.h"

#define LP_MAX_HOOKS 65535      /* hook declarations per policy (indices are 16 bits)        */
#define LP_SEVERAL UINT32_MAX   /* lp_gen.one: more than one function for the stage          */

/* One hook declared by the policy: a selector and its before/after functions. */
struct lp_hookdef {
    char *select;
    char *where;                /* "policy.lua:12:" of the declaration           */
    uint8_t before, after;      /* which functions it has                        */
    uint8_t table_form;         /* cushim.before.SEL / cushim.after.SEL (one entry per SEL) */
};

struct lp_gen {
    uint64_t number;            /* 1, 2, ... in load order                       */
    char *source;               /* the policy text                               */
    size_t len;
    lp_hookdef *hooks;
    uint32_t nhooks;
    uint32_t id_limit;
    uint32_t *first;            /* per API id: index into 'list' ...             */
    uint16_t *count;            /* ... and how many hooks apply                  */
    uint16_t *list;             /* hook indices, in declaration order            */
    uint32_t *one[2];           /* per API id and stage (0 before, 1 after): 0 no function,
                                   k + 1 only hook k's, LP_SEVERAL more than one     */
    uint32_t *dense;            /* per API id: 1.. for each hooked API, 0 others   */
    uint32_t nhooked;           /* hooked APIs (the largest 'dense')               */
    char *select_all;           /* union of the selectors (host hook group)      */
    uint64_t group;
    int registered;
    int refs;                   /* under lp_gen_lock: states + 1 while current   */
};

/* The hooks every generation registers (the plugin's pre and post, lp_hooks.c): set once at init. */
void lp_gen_set_hooks(cushim_pre_fn pre, cushim_post_fn post) LP_HIDDEN;
extern _Atomic(lp_gen *) lp_gen_cur LP_HIDDEN;   /* written by lp_gen.c only: read it with lp_gen_current */
/* A new generation of the policy text 'source' (malloc'd: g frees it), numbered after the last one finished,
   with one reference (the caller's); NULL: no memory (source is still the caller's). */
lp_gen *lp_gen_new(char *source, size_t len) LP_HIDDEN;
void lp_gen_hold(lp_gen *g) LP_HIDDEN;           /* one more reference */
void lp_gen_release(lp_gen *g) LP_HIDDEN;
lp_gen *lp_gen_acquire(void) LP_HIDDEN;          /* the current one, referenced; or NULL */
/* g takes the hooks its validation declared ('hooks', malloc'd: g frees them) and indexes them by API (per-API
   lists, the host selector); its number becomes the last. 0, or -1 with 'err'. */
int lp_gen_finish(lp_gen *g, lp_hookdef *hooks, uint32_t nhooks, char *err, size_t errlen) LP_HIDDEN;
void lp_gen_fork_child(void) LP_HIDDEN;
int lp_publish(lp_gen *g) LP_HIDDEN;             /* make it current (its reference becomes current's) */

/* The current generation, or NULL (the hot path: one acquire load). */
static inline __attribute__((always_inline)) lp_gen *lp_gen_current(void)
{
    return atomic_load_explicit(&lp_gen_cur, memory_order_acquire);
}

#endif /* LP_GEN_H */
