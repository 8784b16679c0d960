/*
 * rp_args.c - what the codec asks of the client (rm_ctx): kernel argument sizes, asked of the server once per
 * function (cuFuncGetParamInfo), the strings the server returned, kept once each for the process's life, and the
 * texts a call returned (NCCL's last error), kept for a while.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"

/* ---- strings the server returned (cuGetErrorName...): kept once each, never freed ---- */
const char *rp_intern(void *user, const char *str, size_t n)
{
    rp_state *s = user;
    const char *r = NULL;
    pthread_mutex_lock(&s->slock);
    for (uint32_t i = 0; i < s->nstrings && r == NULL; i++)
        if (strncmp(s->strings[i], str, n) == 0 && s->strings[i][n] == '\0')
            r = s->strings[i];
    if (r == NULL && s->nstrings < RP_STRINGS && (s->strings[s->nstrings] = strndup(str, n)) != NULL)
        r = s->strings[s->nstrings++];
    pthread_mutex_unlock(&s->slock);
    return r;
}

/* ---- texts a call returned (ncclGetLastError: rm_plan.ret_string) ---- */
/* NCCL keeps its last error in one buffer, overwritten by the next error: a program reads the text before another
   error. Here a ring of RP_TEXTS buffers: a text stays readable until RP_TEXTS more were returned. */
#define RP_TEXTS 8
static char rp_texts[RP_TEXTS][RM_MAX_RET_STRING + 1];
static atomic_uint rp_text_next;

const char *rp_ret_text(void *user, const char *str, size_t n)
{
    (void)user;
    char *t = rp_texts[atomic_fetch_add_explicit(&rp_text_next, 1, memory_order_relaxed) % RP_TEXTS];
    n = n < RM_MAX_RET_STRING ? n : RM_MAX_RET_STRING;
    memcpy(t, str, n);
    t[n] = '\0';
    return t;
}

/* ---- kernel argument sizes: cuFuncGetParamInfo, asked of the server once per function ---- */
/* Parameters first..first+n-1 of 'func': sizes[k] and results[k] (CUDA_ERROR_INVALID_VALUE past the last). */
static int rp_paraminfo(rp_state *s, uint64_t func, uint32_t first, uint32_t n, size_t *sizes, int32_t *results)
{
    const cushim_api_info *a = s->paraminfo;
    const rm_plan *pl = a ? rm_plan_of(s->plans, a->id) : NULL;
    uint8_t params[RP_KASK][64];
    size_t offs[RP_KASK];
    void *pp[RP_KASK];
    if (pl == NULL || a->params_size > sizeof params[0] || n > RP_KASK)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        size_t index = first + k, *po = &offs[k], *ps = &sizes[k];
        memset(params[k], 0, sizeof params[k]);
        sizes[k] = 0;
        memcpy(params[k] + s->host->api_param(a, 0)->offset, &func, sizeof func);
        memcpy(params[k] + s->host->api_param(a, 1)->offset, &index, sizeof index);
        memcpy(params[k] + s->host->api_param(a, 2)->offset, &po, sizeof po);
        memcpy(params[k] + s->host->api_param(a, 3)->offset, &ps, sizeof ps);
        pp[k] = params[k];
    }
    rp_forward_many(s, pl, n, pp, results);   /* one round trip for RP_KASK parameters */
    return 0;
}

int rp_kparam_sizes(void *user, uint64_t func, uint32_t *n, uint32_t *sizes, uint32_t cap)
{
    rp_state *s = user;
    uint32_t slot = (uint32_t)((func >> 4) * 2654435761u) % RP_KCACHE;
    pthread_mutex_lock(&s->klock);
    for (uint32_t k = 0; k < RP_KCACHE; k++) {
        rp_kentry *e = &s->kcache[(slot + k) % RP_KCACHE];
        if (e->func == 0)
            break;
        if (e->func == func && e->n <= cap) {
            *n = e->n;
            memcpy(sizes, e->sizes, e->n * sizeof *sizes);
            pthread_mutex_unlock(&s->klock);
            return RM_OK;
        }
    }
    pthread_mutex_unlock(&s->klock);
    uint32_t i = 0, done = 0;
    while (!done && i < cap) {
        size_t got[RP_KASK];
        int32_t res[RP_KASK];
        uint32_t ask = cap - i < RP_KASK ? cap - i : RP_KASK;
        if (rp_paraminfo(s, func, i, ask, got, res) != 0)
            return RM_EUNSUPPORTED;
        for (uint32_t k = 0; k < ask && !done; k++, i += !done) {
            if (res[k] == s->e_invalid) {
                done = 1;   /* past the last parameter */
            } else if (res[k] != 0 || got[k] > RM_MAX_KPARAM_BYTES) {
                s->host->log(s->self, CUSHIM_LOG_WARN, "the server's driver does not give the parameter sizes of "
                             "function %#llx (cuFuncGetParamInfo: %d): its launches fail", (unsigned long long)func,
                             res[k]);
                return RM_EUNSUPPORTED;
            } else {
                sizes[i] = (uint32_t)got[k];
            }
        }
    }
    *n = i;
    pthread_mutex_lock(&s->klock);
    for (uint32_t k = 0; k < RP_KCACHE; k++) {
        rp_kentry *e = &s->kcache[(slot + k) % RP_KCACHE];
        if (e->func == 0 && (e->sizes = malloc((i ? i : 1) * sizeof *sizes)) != NULL) {
            memcpy(e->sizes, sizes, i * sizeof *sizes);
            e->n = i;
            e->func = func;
            break;
        }
    }
    pthread_mutex_unlock(&s->klock);
    return RM_OK;
}

/* A module or library unloaded: its functions' handles may come back for other kernels. */
void rp_kparam_forget(rp_state *s)
{
    pthread_mutex_lock(&s->klock);
    for (uint32_t k = 0; k < RP_KCACHE; k++) {
        free(s->kcache[k].sizes);
        s->kcache[k] = (rp_kentry){ 0 };
    }
    pthread_mutex_unlock(&s->klock);
}
