/*
 * hooks.h - hook chains and groups (hooks.c): what hooks_add registers, the
 * immutable per-API chains it publishes, and the limbo of retired chains.
 */
#ifndef RT_HOOKS_H
#define RT_HOOKS_H

#include <stdatomic.h>
#include <stdint.h>

#include "base.h"
#include "cushim/cushim.h"

typedef struct hk_entry {
    cushim_pre_fn pre;
    cushim_post_fn post;
    void *user;
    int32_t priority;
    uint32_t flags;               /* CUSHIM_HOOK_* */
    uint64_t group;
} hk_entry;

/* Immutable once published (but 'refs'); freed after a grace period (epoch.c). Shared by every API whose
   hooks are the same (hooks.c): one line for all the APIs a plugin hooks alike. 24 bytes of header: a chain
   of one hook is one cache line (hk_alloc aligns it). */
typedef struct hk_chain {
    union {
        uint64_t refs;               /* live: the slots that hold it (under the hook mutex) */
        struct hk_chain *retired_next;   /* retired (refs 0): limbo link     */
    };
    uint64_t retired_epoch;          /* free once no reader is older         */
    uint32_t n;                      /* number of hooks                      */
    uint32_t flags;                  /* union of the entries' CUSHIM_HOOK_*, and HK_HAS_PRE */
    hk_entry e[];
} hk_chain;

#define HK_HAS_PRE 0x80000000u       /* chain flag: some entry has a pre hook (hk_publish sets it) */
extern const hk_chain hk_count_only;   /* counter on, no hook; shared, never freed */
extern RT_HIDDEN _Atomic int hk_off;   /* exit: no hook callback starts any more; RT_HOT */

/* Who registers hooks (a plugin: plugins.h embeds one in its record). Hooks keeps the groups of each owner,
   and whether it may still add any: closed (hk_owner_close), it may not, from any thread. */
typedef struct hk_owner {
    int closed;                        /* under the hook mutex */
} hk_owner;
void hk_owner_close(hk_owner *owner);  /* no hooks_add of it succeeds from now on */
int hk_add(hk_owner *owner, const cushim_hook_spec *spec, uint64_t *group);
int hk_remove(hk_owner *owner, uint64_t group);
int hk_remove_owner(hk_owner *owner);  /* undo: every group of an owner; the number it had to keep (no memory) */
int hk_sync(void);
void hk_stats(uint64_t *live_chains, uint64_t *limbo_chains);   /* tests */

#endif /* RT_HOOKS_H */
