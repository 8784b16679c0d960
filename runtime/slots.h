/*
 * slots.h - the slots (slots.c): per API id, everything the call path reads
 * of the API, and the one module that writes them.
 *
 * rt_slots[id].fast, the address the exported wrapper tail-calls, and .real,
 * the function the slow path calls, are outputs: slots.c recomputes both from
 * the inputs the other modules hand it - the library's function once the
 * resolver publishes it (dispatch.c), a hand-written handler that stands in
 * for it (getproc.c), the hook chain (hooks.c), the foreign flag (dispatch.c)
 * and failing closed (plugins.c). Any module may read a slot; only slots.c
 * stores into one.
 */
#ifndef RT_SLOTS_H
#define RT_SLOTS_H

#include <stdatomic.h>
#include <stdint.h>

#include "base.h"
#include "cushim_api_ids.h"

struct hk_chain;   /* hooks.h: a slot holds a pointer to one, never looks inside */

/* Everything the call path reads of one API, in 32 bytes: one cache line (bench/cpu/footprint.sh). */
typedef struct rt_slot {
    /* What the exported wrapper tail-calls: 'real' when resolved, the slot has no chain and the shim has not
       failed closed (or the API stays open then); rt_first_of[id] while the real is unknown; else
       rt_slow_of[id]. */
    _Atomic(void *) fast;
    _Atomic(void *) real;                  /* the real function (or a cuGetProcAddress handler) */
    _Atomic(const struct hk_chain *) chain;   /* NULL: no hook, no counter */
    int16_t index1;                        /* 1 + the index in cushim_gen_apis; 0 until sl_init */
    _Atomic uint8_t foreign;               /* forwarded untouched (dispatch.c rt_check_foreign) */
} __attribute__((aligned(32))) rt_slot;

extern rt_slot rt_slots[CUSHIM_API_ID_LIMIT];   /* 'fast' starts at the first entry */
/* Failed closed (sl_fail_closed): read by the slow path with the other globals it reads (RT_HOT). */
extern RT_HIDDEN _Atomic int sl_failed_closed;

/* Inputs. Each is stored, then the slot's outputs are recomputed (lock-free: slots.c says why that is safe
   from any thread and from a signal handler). */
void sl_publish(uint32_t id, void *lib);         /* the library's function becomes the real one (once) */
void sl_set_handler(uint32_t id, void *fn);      /* stands in for the library's function; stays open */
void sl_set_foreign(uint32_t id);                /* forwarded untouched from now on */
void sl_set_chain(uint32_t id, const struct hk_chain *chain);   /* the hook chain (hooks.c, under its mutex) */
int sl_set_chain_if_none(uint32_t id, const struct hk_chain *chain);   /* 1 if the slot had none */
/* Every call but the open ones (handlers: the cuGetProcAddress family) returns an initialisation error;
   'why' is kept for the first refused call's message (sl_fail_reason). */
void sl_fail_closed(const char *why);

void *sl_handler(uint32_t id);                   /* the handler set for id, or NULL */
const char *sl_fail_reason(void);
static inline int sl_failed(void)
{
    return atomic_load_explicit(&sl_failed_closed, memory_order_relaxed);
}
static inline const struct hk_chain *sl_chain(uint32_t id)
{
    return atomic_load_explicit(&rt_slots[id].chain, memory_order_relaxed);
}

#endif /* RT_SLOTS_H */
