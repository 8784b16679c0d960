/*
 * lp_gen.c - generations of the policy: their references, index and publication.
 *
 * A generation is the policy file compiled and run once in a validation state
 * (lp_watch.c, lp_state.c); its declared hooks are resolved to API ids here and
 * registered with the host as one hook group. Publishing adds the new group,
 * switches the current-generation pointer and removes the old group. References
 * to a generation (its states, and 'current') are counted under lp_gen_lock,
 * taken only when a thread changes generation.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_engine.h"
#include "lp_gen.h"

_Atomic(lp_gen *) lp_gen_cur;   /* the current generation (lp_gen_current) */
static pthread_mutex_t lp_gen_lock = PTHREAD_MUTEX_INITIALIZER;   /* references; never on the hot path */
static uint64_t lp_gen_last;    /* the number of the last generation made */

/* The plugin's hooks (lp_hooks.c, a layer above), which every generation registers: handed in at init. */
static cushim_pre_fn lp_gen_pre;
static cushim_post_fn lp_gen_post;

void lp_gen_set_hooks(cushim_pre_fn pre, cushim_post_fn post)
{
    lp_gen_pre = pre;
    lp_gen_post = post;
}

static void lp_gen_free(lp_gen *g)
{
    for (uint32_t i = 0; i < g->nhooks; i++) {
        free(g->hooks[i].select);
        free(g->hooks[i].where);
    }
    free(g->hooks);
    free(g->first);
    free(g->count);
    free(g->list);
    free(g->one[0]);
    free(g->one[1]);
    free(g->dense);
    free(g->select_all);
    free(g->source);
    free(g);
    atomic_fetch_sub_explicit(&lp_eng.live_gens, 1, memory_order_relaxed);
}

lp_gen *lp_gen_new(char *source, size_t len)
{
    lp_gen *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    atomic_fetch_add_explicit(&lp_eng.live_gens, 1, memory_order_relaxed);
    g->source = source;
    g->len = len;
    g->number = lp_gen_last + 1;
    g->refs = 1;
    return g;
}

void lp_gen_hold(lp_gen *g)
{
    pthread_mutex_lock(&lp_gen_lock);
    g->refs++;
    pthread_mutex_unlock(&lp_gen_lock);
}

void lp_gen_fork_child(void)
{
    pthread_mutex_init(&lp_gen_lock, NULL);   /* another thread may have held it at the fork */
}

void lp_gen_release(lp_gen *g)
{
    int last;
    pthread_mutex_lock(&lp_gen_lock);
    last = --g->refs == 0;
    pthread_mutex_unlock(&lp_gen_lock);
    if (last)
        lp_gen_free(g);
}

/* The current generation with a reference taken, or NULL. */
lp_gen *lp_gen_acquire(void)
{
    lp_gen *g;
    pthread_mutex_lock(&lp_gen_lock);
    g = atomic_load_explicit(&lp_gen_cur, memory_order_acquire);
    if (g != NULL)
        g->refs++;
    pthread_mutex_unlock(&lp_gen_lock);
    return g;
}

/* Hook declarations → per-API lists and the host selector. */
static int lp_gen_index(lp_gen *g, char *err, size_t errlen)
{
    const cushim_host *h = lp_eng.host;
    uint32_t lim = lp_eng.id_limit, total = 0;
    uint32_t *ids = malloc(sizeof *ids * (lim ? lim : 1));
    size_t sel_len = 1;
    if (ids == NULL)
        goto nomem;
    g->id_limit = lim;
    g->first = calloc(lim, sizeof *g->first);
    g->count = calloc(lim, sizeof *g->count);
    if (g->first == NULL || g->count == NULL)
        goto nomem;
    for (uint32_t k = 0; k < g->nhooks; k++) {
        char why[256] = "";
        int n = h->api_select(g->hooks[k].select, ids, lim, why, sizeof why);
        if (n < 0) {
            snprintf(err, errlen, "%s bad selector '%s': %s", g->hooks[k].where, g->hooks[k].select, why);
            free(ids);
            return -1;
        }
        if (n == 0)
            h->log(lp_eng.self, CUSHIM_LOG_WARN, "%s selector '%s' matches no API of this build (CUDA %u.%u)",
                   g->hooks[k].where, g->hooks[k].select, h->cuda_version / 1000, h->cuda_version % 1000 / 10);
        for (int i = 0; i < n && (uint32_t)i < lim; i++)
            if (ids[i] < lim && g->count[ids[i]] < UINT16_MAX) {
                g->count[ids[i]]++;
                total++;
            }
        if (n > 0)
            sel_len += strlen(g->hooks[k].select) + 1;
    }
    g->list = malloc(sizeof *g->list * (total ? total : 1));
    g->select_all = malloc(sel_len);
    if (g->list == NULL || g->select_all == NULL)
        goto nomem;
    g->select_all[0] = '\0';
    total = 0;
    for (uint32_t id = 0; id < lim; id++) {
        g->first[id] = total;
        total += g->count[id];
        g->count[id] = 0;
    }
    for (uint32_t k = 0; k < g->nhooks; k++) {
        int n = h->api_select(g->hooks[k].select, ids, lim, NULL, 0);
        for (int i = 0; i < n && (uint32_t)i < lim; i++)
            if (ids[i] < lim && g->count[ids[i]] < UINT16_MAX)
                g->list[g->first[ids[i]] + g->count[ids[i]]++] = (uint16_t)k;
        if (n > 0) {
            if (g->select_all[0] != '\0')
                strcat(g->select_all, ",");
            strcat(g->select_all, g->hooks[k].select);
        }
    }
    free(ids);
    /* what a stage runs, decided once here rather than on every call */
    g->one[0] = calloc(lim ? lim : 1, sizeof *g->one[0]);
    g->one[1] = calloc(lim ? lim : 1, sizeof *g->one[1]);
    g->dense = calloc(lim ? lim : 1, sizeof *g->dense);
    if (g->one[0] == NULL || g->one[1] == NULL || g->dense == NULL) {
        snprintf(err, errlen, "out of memory indexing the policy's hooks");
        return -1;
    }
    for (uint32_t id = 0; id < lim; id++) {
        if (g->count[id] == 0)
            continue;
        g->dense[id] = ++g->nhooked;
        for (uint32_t i = 0; i < g->count[id]; i++) {
            uint32_t k = g->list[g->first[id] + i];
            if (g->hooks[k].before)
                g->one[0][id] = g->one[0][id] == 0 ? k + 1 : LP_SEVERAL;
            if (g->hooks[k].after)
                g->one[1][id] = g->one[1][id] == 0 ? k + 1 : LP_SEVERAL;
        }
    }
    return 0;
nomem:
    free(ids);
    snprintf(err, errlen, "out of memory indexing the policy's hooks");
    return -1;
}

int lp_gen_finish(lp_gen *g, lp_hookdef *hooks, uint32_t nhooks, char *err, size_t errlen)
{
    g->hooks = hooks;
    g->nhooks = nhooks;
    if (lp_gen_index(g, err, errlen) != 0)
        return -1;
    lp_gen_last = g->number;
    return 0;
}

/* Makes 'g' (holding one reference, which becomes the 'current' one) the
   current generation. */
int lp_publish(lp_gen *g)
{
    const cushim_host *h = lp_eng.host;
    lp_gen *old;
    if (g->select_all[0] != '\0') {
        cushim_hook_spec spec = {
            .size = sizeof spec, .select = g->select_all, .pre = lp_gen_pre, .post = lp_gen_post, .user = NULL,
        };
        int rc = h->hooks_add(lp_eng.self, &spec, &g->group);
        if (rc != CUSHIM_OK) {
            h->log(lp_eng.self, CUSHIM_LOG_ERROR, "generation %llu: cannot register its hooks (error %d)%s",
                   (unsigned long long)g->number, rc,
                   rc == CUSHIM_ELIMIT ? ": too many hooks on one API" : "");
            return -1;
        }
        g->registered = 1;
    }
    pthread_mutex_lock(&lp_gen_lock);
    old = atomic_load_explicit(&lp_gen_cur, memory_order_relaxed);
    atomic_store_explicit(&lp_gen_cur, g, memory_order_release);
    pthread_mutex_unlock(&lp_gen_lock);
    if (old != NULL) {
        if (old->registered)
            h->hooks_remove(lp_eng.self, old->group);
        lp_gen_release(old);
    }
    return 0;
}
