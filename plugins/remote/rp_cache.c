/*
 * rp_cache.c - answers the client keeps for immutable queries (docs/remote.md, "Answers kept by the client").
 *
 * Which APIs: rm_plan.cache, from rm_special.c's traits. The key is the call's whole encoded payload (API id,
 * layout hash, every input value and string, which pointers are present and the sizes of the output buffers),
 * so the same question asked with other inputs or another buffer size is another entry; the value is the
 * server's reply payload, decoded again into the program's pointers on each hit - exactly what the server
 * would send, since the answer cannot change. Only successful answers are kept. RM_CACHE_FUNC answers
 * (function attributes) are forgotten when a call that can change them, or an unload that can make their
 * handles name other functions, has run (rm_plan.cache == RM_CACHE_FORGET); a generation number keeps an
 * answer asked before such a call from being stored after it.
 */
#include <stdlib.h>
#include <string.h>

#include "rp.h"

#define RP_PROBE 32   /* slots looked at from an answer's home slot */

static uint64_t rp_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* May this call's answer be kept? Not a query whose exception parameter holds the value that can change. */
static int rp_cacheable(const rm_plan *pl, const void *params, const rm_wr *key)
{
    if ((pl->cache != RM_CACHE_PROCESS && pl->cache != RM_CACHE_FUNC) || key->ref != NULL || key->err != RM_OK)
        return 0;
    if (pl->cache_skip_param >= 0) {
        const rm_pplan *pp = &pl->p[pl->cache_skip_param];
        int64_t v = 0;
        memcpy(&v, (const uint8_t *)params + pp->offset, pp->size < 8 ? pp->size : 8);
        if (pp->size == 4)
            v = (int32_t)v;
        if (v == pl->cache_skip_value)
            return 0;
    }
    return 1;
}

int rp_cache_get(rp_state *s, const rm_plan *pl, const rm_wr *key, const rm_call *c, void *retval, uint64_t *gen)
{
    int hit = 0;
    *gen = UINT64_MAX;
    if (!rp_cacheable(pl, c->params, key))
        return 0;
    uint64_t h = rp_hash(key->p, key->len);
    pthread_mutex_lock(&s->clock);
    *gen = s->cache_gen;
    for (uint32_t k = 0; k < RP_PROBE && !hit; k++) {
        rp_answer *e = &s->answers[(h + k) % RP_ANSWERS];
        uint32_t status;
        if (e->scope != 0 && e->hash == h && e->klen == key->len && memcmp(e->key, key->p, key->len) == 0)
            hit = rm_decode_reply(c, retval, e->val, e->vlen, &s->cx, &status) == RM_OK && status == RM_ST_OK;
    }
    pthread_mutex_unlock(&s->clock);
    if (hit)
        atomic_fetch_add_explicit(&s->cached, 1, memory_order_relaxed);
    return hit;
}

void rp_cache_put(rp_state *s, const rm_plan *pl, const rm_wr *key, const uint8_t *reply, size_t len, uint64_t gen)
{
    if (gen == UINT64_MAX || reply == NULL)
        return;
    uint64_t h = rp_hash(key->p, key->len);
    uint8_t *k = malloc(key->len ? key->len : 1), *v = malloc(len ? len : 1);
    pthread_mutex_lock(&s->clock);
    for (uint32_t i = 0; k != NULL && v != NULL && gen == s->cache_gen && i < RP_PROBE; i++) {
        rp_answer *e = &s->answers[(h + i) % RP_ANSWERS];
        if (e->scope != 0 && e->hash == h && e->klen == key->len && memcmp(e->key, key->p, key->len) == 0)
            break;   /* another thread kept it first */
        if (e->scope == 0) {
            memcpy(k, key->p, key->len);
            memcpy(v, reply, len);
            *e = (rp_answer){ .hash = h, .klen = (uint32_t)key->len, .vlen = (uint32_t)len, .scope = pl->cache,
                              .key = k, .val = v };
            k = v = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&s->clock);
    free(k);
    free(v);
}

void rp_cache_forget_functions(rp_state *s)
{
    pthread_mutex_lock(&s->clock);
    s->cache_gen++;
    for (uint32_t i = 0; i < RP_ANSWERS; i++)
        if (s->answers[i].scope == RM_CACHE_FUNC) {
            free(s->answers[i].key);
            free(s->answers[i].val);
            s->answers[i] = (rp_answer){ 0 };
        }
    pthread_mutex_unlock(&s->clock);
}

void rp_cache_free(rp_state *s)
{
    pthread_mutex_lock(&s->clock);
    for (uint32_t i = 0; i < RP_ANSWERS; i++) {
        free(s->answers[i].key);
        free(s->answers[i].val);
        s->answers[i] = (rp_answer){ 0 };
    }
    pthread_mutex_unlock(&s->clock);
}
