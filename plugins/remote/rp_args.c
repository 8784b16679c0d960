/*
 * rp_args.c - what the codec asks of the client (rm_ctx): kernel argument sizes, asked of the server once per
 * function (cuFuncGetParamInfo), and the strings the server returned, kept once each for the process's life.
 */
#define _GNU_SOURCE
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

/* ---- kernel argument sizes: cuFuncGetParamInfo, asked of the server once per function ---- */
static int rp_paraminfo(rp_state *s, uint64_t func, size_t index, size_t *size)
{
    const cushim_api_info *a = s->paraminfo;
    const rm_plan *pl = a ? rm_plan_of(s->plans, a->id) : NULL;
    uint8_t params[64] = {0};
    size_t off = 0, *po = &off;
    int32_t ret = -1;
    int answered;
    rm_wr w;
    if (pl == NULL || a->params_size > sizeof params)
        return -1;
    memcpy(params + s->host->api_param(a, 0)->offset, &func, sizeof func);
    memcpy(params + s->host->api_param(a, 1)->offset, &index, sizeof index);
    memcpy(params + s->host->api_param(a, 2)->offset, &po, sizeof po);
    memcpy(params + s->host->api_param(a, 3)->offset, &size, sizeof size);
    rm_wr_init(&w, 0);   /* asked while a launch is being encoded in this thread's buffer: one of its own */
    int32_t r = rp_forward(s, pl, params, &ret, &answered, &w, NULL, NULL);
    rm_wr_free(&w);
    return answered ? ret : r;
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
    uint32_t i;
    for (i = 0; i < cap; i++) {
        size_t size = 0;
        int r = rp_paraminfo(s, func, i, &size);
        if (r == s->e_invalid)
            break;   /* past the last parameter */
        if (r != 0 || size > RM_MAX_KPARAM_BYTES) {
            s->host->log(s->self, CUSHIM_LOG_WARN, "the server's driver does not give the parameter sizes of "
                         "function %#llx (cuFuncGetParamInfo: %d): its launches fail", (unsigned long long)func, r);
            return RM_EUNSUPPORTED;
        }
        sizes[i] = (uint32_t)size;
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
