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
extern RT_HIDDEN _Atomic int hk_off;            /* exit: no hook callback starts any more (hk_set_off); RT_HOT */
void hk_set_off(void);                 /* at exit, before plugins flush */
void hk_install_counting(void);        /* every API gets at least the counting chain */
void hk_reset_after_fork(void);        /* fork child */
int hk_add(cushim_plugin *owner, const cushim_hook_spec *spec, uint64_t *group);
int hk_remove(cushim_plugin *owner, uint64_t group);
void hk_remove_owner(cushim_plugin *owner);   /* undo: every group of a plugin */
int hk_sync(void);
void hk_stats(uint64_t *live_chains, uint64_t *limbo_chains);   /* tests */
void hk_lock(void);
void hk_unlock(void);

#endif /* RT_HOOKS_H */
