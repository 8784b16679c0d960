/*
 * tr_kname.h - a launch's kernel name from the real driver (tr_kname.c): a
 * per-thread cache inline in the hooks, a process-wide map behind it.
 */
#ifndef TR_KNAME_H
#define TR_KNAME_H

#include <stdatomic.h>
#include <stdint.h>

#include "tr_base.h"

/* Kernel names (tr_kname.c): a per-thread cache (tb->prod, TR_NAME_CACHE entries) of names by function,
   valid while their generation is tr_names_gen's. */
#define TR_NAME_CACHE 256u    /* per-thread cache entries (a training step launches a few hundred kernels) */
typedef struct tr_name_entry {
    const void *key;
    uint64_t gen;
    const char *name;
} tr_name_entry;
extern TR_HIDDEN _Atomic uint64_t tr_names_gen;   /* bumped when modules are unloaded */

static inline uint32_t tr_ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32);
}

/* The interned name of the function 'key', or NULL: the thread's cache, else the process-wide map, else the
   driver. */
const char *tr_kernel_name_slow(tr_state *st, tr_tbuf *tb, int launch, const void *key);
/* The same, with a hit in the thread's cache inline (no call, no saved registers: every launch but a
   function's first on the thread). */
static inline const char *tr_kernel_name(tr_state *st, tr_tbuf *tb, int launch, const void *key)
{
    const tr_name_entry *cache = tb->prod, *e;
    if (cache != NULL && key != NULL) {
        e = &cache[tr_ptr_hash(key) & (TR_NAME_CACHE - 1)];
        if (e->key == key && e->gen == atomic_load_explicit(&tr_names_gen, memory_order_acquire))
            return e->name;
    }
    return tr_kernel_name_slow(st, tb, launch, key);
}
/* At start: the driver's name functions this build knows. */
void tr_kernel_names_setup(void);
/* A post hook on module/library unloads: every cached name is asked again. */
void tr_kernel_names_unloaded(cushim_call *call, void *user, uint64_t *slot);
void tr_kernel_names_fork_child(void);

#endif /* TR_KNAME_H */
