/*
 * hooks.c - hook registration: groups of hooks over selected APIs, and the
 * immutable per-API chains they are published in.
 *
 * host->hooks_add registers one (pre, post, priority, user) on every API a
 * selector matches, as one group owned by a plugin (its hk_owner, which this
 * file closes when the plugin fails or flushes). Writers serialise on one
 * mutex, build every new chain first (so a failure on the last API leaves
 * nothing behind), then hand each to its slot (slots.c: sl_set_chain, which
 * recomputes the API's fast-path target). APIs that held the same chain get the same new chain (a
 * chain is shared by every API hooked alike, counted in 'refs': a call path
 * that reads one line for all of them, bench/cpu/footprint.sh); a chain is
 * retired when the last slot holding it lets it go. Readers (hooked calls on any thread) load the chain once
 * per call inside an epoch section and use that snapshot for pre and post
 * hooks. Replaced chains wait in a limbo list until no reader can hold them
 * (epoch.c) and are then freed, at the next add or remove or hooks_sync:
 * memory stays bounded by the live chains plus those retired during the
 * longest hooked call in progress.
 *
 * Group handles are a process-wide counter (never 0, never reused).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "base.h"
#include "counts.h"
#include "epoch.h"
#include "hooks.h"
#include "lifecycle.h"
#include "log.h"
#include "module.h"
#include "select.h"
#include "slots.h"
#include "thread.h"

typedef struct hk_group {
    struct hk_group *next;
    uint64_t id;
    hk_owner *owner;
    uint32_t n;
    uint32_t ids[];
} hk_group;

static pthread_mutex_t hk_mu = PTHREAD_MUTEX_INITIALIZER;
static hk_group *hk_groups;             /* under hk_mu */
static uint64_t hk_next_group = 1;      /* under hk_mu */
static hk_chain *hk_limbo;              /* under hk_mu; newest first */
static uint64_t hk_nlimbo;              /* under hk_mu */
static _Atomic uint64_t hk_live;        /* allocated chains */
_Atomic int hk_off RT_HOT;              /* exit: no hook callback starts any more */

const hk_chain hk_count_only = { .n = 0 };

/* The smallest hook_spec this host reads: 1.0's (a spec of a later minor may be larger). */
#define HK_SPEC_MIN (offsetof(cushim_hook_spec, user) + sizeof(void *))

static void hk_lock(void)
{
    pthread_mutex_lock(&hk_mu);
}

static void hk_unlock(void)
{
    pthread_mutex_unlock(&hk_mu);
}

/* fork() child: only the forking thread exists; a holder that vanished left
   every published chain and slot consistent (slots.c), so the lock is simply
   made new. */
static void hk_fork_child(uint32_t parent_tid)
{
    (void)parent_tid;
    pthread_mutex_init(&hk_mu, NULL);
}

void hk_owner_close(hk_owner *owner)
{
    hk_lock();
    owner->closed = 1;
    hk_unlock();
}

void hk_stats(uint64_t *live_chains, uint64_t *limbo_chains)
{
    hk_lock();
    if (live_chains != NULL)
        *live_chains = atomic_load(&hk_live);
    if (limbo_chains != NULL)
        *limbo_chains = hk_nlimbo;
    hk_unlock();
}

/* Line-aligned: a chain of one hook (24 bytes of header, 40 of entry) is one cache line for the call path. */
static hk_chain *hk_alloc(uint32_t n)
{
    void *m = NULL;
    if (posix_memalign(&m, 64, sizeof(hk_chain) + n * sizeof(hk_entry)) != 0)
        return NULL;
    hk_chain *c = m;
    memset(c, 0, sizeof *c);
    c->n = n;
    atomic_fetch_add_explicit(&hk_live, 1, memory_order_relaxed);
    return c;
}

static void hk_free(hk_chain *c)
{
    free(c);
    atomic_fetch_sub_explicit(&hk_live, 1, memory_order_relaxed);
}

static int hk_owned(const hk_chain *c)
{
    return c != NULL && c != &hk_count_only;
}

/* Under hk_mu: free what no reader can hold any more. */
static void hk_reclaim(void)
{
    if (hk_limbo == NULL || ep_poisoned())
        return;
    if (hk_nlimbo > 10000 && hk_nlimbo % 1024 == 0)   /* a reader stuck for long: is its thread alive? */
        for (th_rec *r = th_rec_first(); r != NULL; r = r->next)
            if (ep_inside(r) && atomic_load_explicit(&r->in_use, memory_order_relaxed))
                ep_reap(r);
    uint64_t min = ep_min_active(NULL);   /* our own section too: hooks_add from a hook */
    hk_chain **pp = &hk_limbo;
    while (*pp != NULL) {
        hk_chain *c = *pp;
        if (c->retired_epoch <= min) {
            *pp = c->retired_next;
            hk_nlimbo--;
            hk_free(c);
        } else {
            pp = &c->retired_next;
        }
    }
}

/* Under hk_mu: the chains in 'old' are held by no slot any more; they wait for epoch 'e'. */
static void hk_retire(const hk_chain *const *old, uint32_t n, uint64_t e)
{
    for (uint32_t i = 0; i < n; i++) {
        hk_chain *c = (hk_chain *)old[i];
        c->retired_epoch = e;
        c->retired_next = hk_limbo;
        hk_limbo = c;
        hk_nlimbo++;
    }
}

/* Under hk_mu: publish fresh[i] for ids[i] (a chain may stand for several ids), retire the old chains that
   no slot holds any more (at most n: 'old' has room), reclaim. */
static void hk_publish(const uint32_t *ids, hk_chain *const *fresh, const hk_chain **old, uint32_t n)
{
    uint32_t nold = 0;
    /* all flags first: a chain standing for several ids is read by calls from its first store on */
    for (uint32_t i = 0; i < n; i++)
        if (fresh[i] != NULL && fresh[i]->refs == 0) {   /* post hooks alone skip the pre step (rt_enter) */
            fresh[i]->flags &= ~HK_HAS_PRE;
            for (uint32_t k = 0; k < fresh[i]->n; k++)
                if (fresh[i]->e[k].pre != NULL)
                    fresh[i]->flags |= HK_HAS_PRE;
        }
    for (uint32_t i = 0; i < n; i++) {
        hk_chain *prev = (hk_chain *)sl_chain(ids[i]);
        if (fresh[i] != NULL)
            fresh[i]->refs++;
        const hk_chain *next = fresh[i];
        if (next == NULL && cnt_enabled)
            next = &hk_count_only;
        sl_set_chain(ids[i], next);
        if (hk_owned(prev) && --prev->refs == 0)
            old[nold++] = prev;
    }
    hk_retire(old, nold, ep_advance());
    hk_reclaim();
}

/* The chains one change builds, one per distinct chain it replaces: the key is the chain an API holds now
   (NULL for none, or the counter's, which hold no hook alike), the value what replaces it. */
typedef struct hk_memo {
    const hk_chain **key;
    hk_chain **val;
    uint32_t n;
} hk_memo;

static int hk_memo_init(hk_memo *m, uint32_t cap)
{
    m->key = calloc(cap ? cap : 1, sizeof *m->key);
    m->val = calloc(cap ? cap : 1, sizeof *m->val);
    m->n = 0;
    return m->key != NULL && m->val != NULL ? 0 : -1;
}

static const hk_chain *hk_memo_key(const hk_chain *cur)
{
    return cur != NULL && cur->n != 0 ? cur : NULL;
}

/* The index of 'key' in the memo, or -1. Linear: a change meets few distinct chains (one per plugin hooking
   alike); at worst every API's own (2169 of them: a few million comparisons, once per change). */
static int64_t hk_memo_find(const hk_memo *m, const hk_chain *key)
{
    for (uint32_t j = 0; j < m->n; j++)
        if (m->key[j] == key)
            return j;
    return -1;
}

/* Frees the chains built and not published, and the memo. */
static void hk_memo_free(hk_memo *m)
{
    for (uint32_t j = 0; j < m->n; j++)
        if (m->val[j] != NULL)
            hk_free(m->val[j]);
    free(m->key);
    free(m->val);
}

/* At initialisation, with the counter on: every API gets at least the counting chain. */
static void hk_start(void)
{
    if (!cnt_enabled)
        return;
    hk_lock();
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        sl_set_chain_if_none(cushim_gen_apis[i].id, &hk_count_only);
    }
    hk_unlock();
}

static int hk_valid_id(uint32_t api_id)
{
    return api_id < CUSHIM_API_ID_LIMIT && cushim_gen_index_of_id[api_id] >= 0;
}

/* Under hk_mu. */
static int hk_may_register(const hk_owner *owner)
{
    return !owner->closed && !lc_exiting();
}

int hk_add(hk_owner *owner, const cushim_hook_spec *spec, uint64_t *group)
{
    if (owner == NULL || spec == NULL || spec->size < HK_SPEC_MIN ||
        (spec->flags & ~(CUSHIM_HOOK_TIME | CUSHIM_HOOK_EXIT_TIME | CUSHIM_HOOK_SERVE)) != 0 ||
        (spec->pre == NULL && spec->post == NULL) || ((spec->flags & CUSHIM_HOOK_SERVE) && spec->pre == NULL))
        return CUSHIM_EINVAL;
    rt_init();
    uint32_t *ids = malloc(CUSHIM_API_ID_LIMIT * sizeof *ids);
    if (ids == NULL)
        return CUSHIM_ENOMEM;
    int rc = CUSHIM_OK;
    uint32_t n = 0;
    hk_chain **fresh = NULL;
    const hk_chain **old = NULL;
    hk_group *g = NULL;
    if (spec->select != NULL) {
        int k = sel_select(spec->select, ids, CUSHIM_API_ID_LIMIT, NULL, 0);
        if (k <= 0) {
            free(ids);
            return k < 0 ? k : CUSHIM_ENOMATCH;
        }
        n = (uint32_t)k;
    } else if (hk_valid_id(spec->api_id)) {
        ids[n++] = spec->api_id;
    } else {
        free(ids);
        return CUSHIM_EINVAL;
    }
    hk_memo memo;
    int memo_ok = hk_memo_init(&memo, n) == 0;
    fresh = calloc(n, sizeof *fresh);
    old = calloc(n, sizeof *old);
    g = malloc(sizeof *g + n * sizeof g->ids[0]);
    if (fresh == NULL || old == NULL || g == NULL || !memo_ok) {
        free(ids);
        free(fresh);
        free(old);
        free(g);
        hk_memo_free(&memo);
        return CUSHIM_ENOMEM;
    }

    hk_lock();
    if (!hk_may_register(owner)) {
        rc = CUSHIM_ESTATE;
        goto out;
    }
    ep_init();   /* membarrier(2) registered before the first chain a reader could hold */
    uint64_t gid = hk_next_group;
    hk_entry add = {
        .pre = spec->pre, .post = spec->post, .user = spec->user,
        .priority = spec->priority, .flags = spec->flags, .group = gid,
    };
    for (uint32_t i = 0; i < n; i++) {
        const hk_chain *cur = hk_memo_key(sl_chain(ids[i]));
        int64_t j = hk_memo_find(&memo, cur);
        if (j >= 0) {   /* held the same chain as an earlier API: gets the same new one */
            fresh[i] = memo.val[j];
            continue;
        }
        uint32_t cn = cur ? cur->n : 0;
        if (cn >= CUSHIM_MAX_HOOKS) {
            rc = CUSHIM_ELIMIT;
            goto out;
        }
        hk_chain *c = hk_alloc(cn + 1);
        if (c == NULL) {
            rc = CUSHIM_ENOMEM;
            goto out;
        }
        memo.key[memo.n] = cur;
        memo.val[memo.n++] = c;
        fresh[i] = c;
        uint32_t at = 0;
        while (at < cn && cur->e[at].priority <= spec->priority)   /* equal priority keeps order */
            at++;
        if (at > 0)
            memcpy(c->e, cur->e, at * sizeof c->e[0]);
        if (cn > at)
            memcpy(&c->e[at + 1], &cur->e[at], (cn - at) * sizeof c->e[0]);
        c->e[at] = add;
        c->flags = cur ? cur->flags | add.flags : add.flags;
    }
    hk_next_group++;
    g->id = gid;
    g->owner = owner;
    g->n = n;
    memcpy(g->ids, ids, n * sizeof ids[0]);
    g->next = hk_groups;
    hk_groups = g;
    g = NULL;
    hk_publish(ids, fresh, old, n);
    memo.n = 0;   /* published */
    if (group != NULL)
        *group = gid;
out:
    hk_unlock();
    hk_memo_free(&memo);
    free(fresh);
    free(old);
    free(g);
    free(ids);
    return rc;
}

/* Under hk_mu: unpublish group 'g' (unlinked from the list by the caller only
   on success). All chains are built before any is published. */
static int hk_remove_locked(hk_group *g)
{
    hk_chain **fresh = calloc(g->n, sizeof *fresh);
    const hk_chain **old = calloc(g->n, sizeof *old);
    hk_memo memo;
    int rc = CUSHIM_OK;
    if (hk_memo_init(&memo, g->n) != 0 || fresh == NULL || old == NULL) {
        rc = CUSHIM_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        const hk_chain *cur = hk_memo_key(sl_chain(g->ids[i]));
        int64_t j = hk_memo_find(&memo, cur);
        if (j >= 0) {
            fresh[i] = memo.val[j];
            continue;
        }
        uint32_t cn = cur ? cur->n : 0, keep = 0;
        for (uint32_t k = 0; k < cn; k++)
            keep += cur->e[k].group != g->id;
        memo.key[memo.n] = cur;
        memo.val[memo.n++] = NULL;
        if (keep == 0)
            continue;   /* fresh[i] NULL: no hook left */
        if ((fresh[i] = memo.val[memo.n - 1] = hk_alloc(keep)) == NULL) {
            rc = CUSHIM_ENOMEM;
            goto out;
        }
        uint32_t at = 0;
        for (uint32_t k = 0; k < cn; k++)
            if (cur->e[k].group != g->id) {
                fresh[i]->e[at++] = cur->e[k];
                fresh[i]->flags |= cur->e[k].flags;
            }
    }
    hk_publish(g->ids, fresh, old, g->n);
    memo.n = 0;   /* published */
out:
    hk_memo_free(&memo);
    free(fresh);
    free(old);
    return rc;
}

int hk_remove(hk_owner *owner, uint64_t group)
{
    if (owner == NULL)
        return CUSHIM_EINVAL;
    int rc = CUSHIM_ENOENT;
    hk_lock();
    for (hk_group **pp = &hk_groups; *pp != NULL; pp = &(*pp)->next) {
        hk_group *g = *pp;
        if (g->id != group || g->owner != owner)
            continue;
        rc = hk_remove_locked(g);
        if (rc == CUSHIM_OK) {
            *pp = g->next;
            free(g);
        }
        break;
    }
    hk_unlock();
    return rc;
}

int hk_remove_owner(hk_owner *owner)
{
    int kept = 0;
    hk_lock();
    hk_group **pp = &hk_groups;
    while (*pp != NULL) {
        hk_group *g = *pp;
        if (g->owner != owner) {
            pp = &g->next;
            continue;
        }
        if (hk_remove_locked(g) == CUSHIM_OK) {
            *pp = g->next;
            free(g);
        } else {
            kept++;
            pp = &g->next;
        }
    }
    hk_unlock();
    return kept;
}

int hk_sync(void)
{
    if (ep_inside(rt_tls.rec) || lc_exiting())
        return CUSHIM_ESTATE;   /* we would wait for ourselves; or plugins are flushed */
    if (atomic_load_explicit(&hk_off, memory_order_relaxed))
        return CUSHIM_OK;   /* a flush: no hook runs any more (the exit waited for running ones) */
    uint64_t e = ep_advance();
    ep_wait(e, NULL);
    hk_lock();
    hk_reclaim();
    hk_unlock();
    return CUSHIM_OK;
}

/* At exit, before plugins flush: no hook callback starts any more (calls past their pre hooks skip their
   post hooks), and threads still inside hook callbacks finish them first (bounded: a hook blocked forever
   must not hang exit). */
#define HK_EXIT_WAIT_MS 1000u

static void hk_stop(void)
{
    atomic_store(&hk_off, 1);
    th_rec *self = rt_tls.rec;
    unsigned waited_us = 0;
    for (;;) {
        int busy = 0;
        if (th_rec_first() == NULL)
            break;   /* no thread ever made a hooked call */
        ep_barrier();
        for (th_rec *r = th_rec_first(); r != NULL; r = r->next)
            if (r != self && atomic_load_explicit(&r->in_use, memory_order_acquire) &&
                atomic_load_explicit(&r->in_cb, memory_order_acquire))
                busy++;
        if (busy == 0)
            break;
        if (waited_us >= HK_EXIT_WAIT_MS * 1000u) {
            log_warn("exit: %d thread(s) still inside hook callbacks after %u ms; flushing plugins anyway",
                     busy, HK_EXIT_WAIT_MS);
            break;
        }
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
        waited_us += 200;
    }
}

LC_MODULE(hooks, .level = LC_HOOKS, .init = hk_start, .fork_child = hk_fork_child, .stop = hk_stop);
