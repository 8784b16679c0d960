/*
 * hooks.c - hook registration: immutable per-API chains replaced copy-on-write.
 *
 * Writers (cushim_hook_add/remove) serialise on one mutex, build a new chain,
 * publish it with a release store and retire the old one to a graveyard.
 * Readers (the slow path in any thread) load the chain once and use that
 * snapshot for the whole call, without locks. Retired chains are never freed
 * while the process runs, so a reader can never touch freed memory; the cost
 * is bounded by the number of registrations: one chain of at most
 * CUSHIM_MAX_HOOKS entries (16 + 32 * 40 bytes) per add or remove.
 *
 * Handles: (api_id << 32) | seq, seq unique per registration.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

static pthread_mutex_t hk_mu = PTHREAD_MUTEX_INITIALIZER;
static hk_chain *hk_graveyard;          /* under hk_mu; reachable, never freed */
static uint32_t hk_seq;                 /* under hk_mu */
static hk_chain hk_count_only = { NULL, 0, 1 };   /* counter on, no hook; shared */

void hk_lock(void)
{
    pthread_mutex_lock(&hk_mu);
}

void hk_unlock(void)
{
    pthread_mutex_unlock(&hk_mu);
}

/* fork() child: only the forking thread exists; a holder that vanished left
   every published chain and rt_fast entry consistent (each is one atomic store),
   so the lock is simply made new. */
void hk_reset_after_fork(void)
{
    pthread_mutex_init(&hk_mu, NULL);
}

static void hk_retire(const hk_chain *old)
{
    if (old == NULL || old == &hk_count_only)
        return;
    hk_chain *c = (hk_chain *)old;
    c->retired_next = hk_graveyard;
    hk_graveyard = c;
}

void hk_install_counting(void)
{
    hk_lock();
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        uint32_t id = cushim_gen_apis[i].id;
        const hk_chain *expected = NULL;
        atomic_compare_exchange_strong(&rt_slots[id].chain, &expected, &hk_count_only);
        rt_fast_update(id);
    }
    hk_unlock();
}

static int hk_valid_id(uint32_t api_id)
{
    return api_id < CUSHIM_API_ID_LIMIT && cushim_gen_index_of_id[api_id] >= 0;
}

CUSHIM_EXPORT int cushim_hook_add(uint32_t api_id, int priority, cushim_pre_fn pre,
                                  cushim_post_fn post, void *user, uint64_t *handle)
{
    if (!hk_valid_id(api_id) || (pre == NULL && post == NULL))
        return CUSHIM_EINVAL;
    rt_init();
    int rc = CUSHIM_OK;
    hk_lock();
    const hk_chain *cur = atomic_load_explicit(&rt_slots[api_id].chain, memory_order_relaxed);
    uint32_t n = cur ? cur->n : 0;
    if (n >= CUSHIM_MAX_HOOKS) {
        rc = CUSHIM_ELIMIT;
        goto out;
    }
    hk_chain *c = malloc(sizeof *c + (n + 1) * sizeof c->e[0]);
    if (c == NULL) {
        rc = CUSHIM_ENOMEM;
        goto out;
    }
    c->retired_next = NULL;
    c->n = n + 1;
    c->count = (uint32_t)cnt_enabled;
    uint32_t at = 0;
    while (at < n && cur->e[at].priority <= priority)   /* stable: equal priority keeps order */
        at++;
    if (at > 0)
        memcpy(c->e, cur->e, at * sizeof c->e[0]);
    if (n > at)
        memcpy(&c->e[at + 1], &cur->e[at], (n - at) * sizeof c->e[0]);
    uint32_t seq = ++hk_seq;
    if (seq == 0)
        seq = ++hk_seq;
    c->e[at] = (hk_entry){ priority, seq, pre, post, user };
    atomic_store_explicit(&rt_slots[api_id].chain, c, memory_order_release);
    rt_fast_update(api_id);
    hk_retire(cur);
    if (handle != NULL)
        *handle = ((uint64_t)api_id << 32) | seq;
out:
    hk_unlock();
    return rc;
}

CUSHIM_EXPORT int cushim_hook_remove(uint64_t handle)
{
    uint32_t api_id = (uint32_t)(handle >> 32), seq = (uint32_t)handle;
    if (!hk_valid_id(api_id) || seq == 0)
        return CUSHIM_ENOENT;
    int rc = CUSHIM_OK;
    hk_lock();
    const hk_chain *cur = atomic_load_explicit(&rt_slots[api_id].chain, memory_order_relaxed);
    uint32_t n = cur ? cur->n : 0, at = 0;
    while (at < n && cur->e[at].seq != seq)
        at++;
    if (at == n) {
        rc = CUSHIM_ENOENT;
        goto out;
    }
    const hk_chain *next;
    if (n == 1) {
        next = cnt_enabled ? &hk_count_only : NULL;
    } else {
        hk_chain *c = malloc(sizeof *c + (n - 1) * sizeof c->e[0]);
        if (c == NULL) {
            rc = CUSHIM_ENOMEM;
            goto out;
        }
        c->retired_next = NULL;
        c->n = n - 1;
        c->count = (uint32_t)cnt_enabled;
        memcpy(c->e, cur->e, at * sizeof c->e[0]);
        memcpy(&c->e[at], &cur->e[at + 1], (n - at - 1) * sizeof c->e[0]);
        next = c;
    }
    atomic_store_explicit(&rt_slots[api_id].chain, next, memory_order_release);
    rt_fast_update(api_id);
    hk_retire(cur);
out:
    hk_unlock();
    return rc;
}
