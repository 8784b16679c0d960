/*
 * rp_jit.c - the client's part of JIT linking (docs/remote.md, "JIT options"): cuLinkAddFile reads the program's
 * file here and sends its bytes as cuLinkAddData (the server never opens a path a client names), and an option
 * the codec refuses (rm_jit.c) is logged once by its name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"

#define RP_LINK_FILE_MAX ((uint64_t)RM_MAX_PAYLOAD - (1u << 20))   /* a file's bytes in one call, with room */
#define RP_REFUSED_LOGGED 64

static pthread_mutex_t rp_rlock = PTHREAD_MUTEX_INITIALIZER;
static const char *rp_refused[RP_REFUSED_LOGGED][2];   /* (option, reason) pairs logged, under rp_rlock */
static uint32_t rp_nrefused;

void rp_refuse_option_once(rp_state *s, const rm_plan *pl, const char *option, const char *why)
{
    int first = 1;
    pthread_mutex_lock(&rp_rlock);
    for (uint32_t i = 0; i < rp_nrefused && first; i++)
        first = !(rp_refused[i][0] == option && rp_refused[i][1] == why);
    if (first && rp_nrefused < RP_REFUSED_LOGGED) {
        rp_refused[rp_nrefused][0] = option;
        rp_refused[rp_nrefused++][1] = why;
    }
    pthread_mutex_unlock(&rp_rlock);
    if (first)
        s->host->log(s->self, CUSHIM_LOG_WARN, "%s: option %s not carried (%s): returns CUDA_ERROR_NOT_SUPPORTED",
                     pl->info->name, option, why != NULL ? why : "refused");
}

/* A parameter of 'a' by name: its offset and size, or -1. */
static int rp_param_at(const cushim_host *h, const cushim_api_info *a, const char *name, uint32_t *size)
{
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = h->api_param(a, i);
        if (strcmp(p->name, name) == 0) {
            *size = p->size;
            return p->offset;
        }
    }
    return -1;
}

static int rp_copy_param(const cushim_host *h, const cushim_api_info *from, const void *fp, const cushim_api_info *to,
                         void *tp, const char *name, const char *to_name)
{
    uint32_t fs, ts;
    int fo = rp_param_at(h, from, name, &fs), to_ = rp_param_at(h, to, to_name, &ts);
    if (fo < 0 || to_ < 0 || fs != ts)
        return -1;
    memcpy((uint8_t *)tp + to_, (const uint8_t *)fp + fo, fs);
    return 0;
}

static int rp_set_param(const cushim_host *h, const cushim_api_info *a, void *params, const char *name,
                        const void *v, uint32_t n)
{
    uint32_t size;
    int off = rp_param_at(h, a, name, &size);
    if (off < 0 || size != n)
        return -1;
    memcpy((uint8_t *)params + off, v, n);
    return 0;
}

/* The file's bytes (and a NUL after them: PTX is text the driver reads to its NUL). */
static int32_t rp_read_file(rp_state *s, const char *path, uint8_t **bytes, uint64_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    uint64_t n = 0, cap = 0;
    if (f == NULL)
        return errno == ENOMEM ? s->e_oom : s->e_file_not_found;
    for (;;) {
        if (n + 1 >= cap) {
            uint64_t ncap = cap ? cap * 2 : 65536;
            uint8_t *nb = ncap <= RP_LINK_FILE_MAX + 1 ? realloc(b, ncap) : NULL;
            if (nb == NULL) {
                free(b);
                fclose(f);
                return cap >= RP_LINK_FILE_MAX ? s->e_invalid : s->e_oom;   /* over the wire's bound: refused */
            }
            b = nb;
            cap = ncap;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(b);
        return s->e_file_not_found;
    }
    b[n] = '\0';
    *bytes = b;
    *len = n;
    return 0;
}

int rp_jit_pre(rp_state *s, cushim_call *call, int32_t *r)
{
    const cushim_host *h = s->host;
    const char *name = call->info->name;
    if (strncmp(name, "cuLinkAddFile", 13) != 0 || (name[13] != '\0' && strcmp(name + 13, "_v2") != 0))
        return 0;
    /* the cuLinkAddData of the same version */
    char data_name[32];
    snprintf(data_name, sizeof data_name, "cuLinkAddData%s", name + 13);
    const cushim_api_info *da = h->api_by_name(data_name);
    const rm_plan *pl = da != NULL ? rm_plan_of(s->plans, da->id) : NULL;
    uint32_t size;
    int po = rp_param_at(h, call->info, "path", &size), to = rp_param_at(h, call->info, "type", &size);
    if (pl == NULL || po < 0 || to < 0 || da->params_size > 256) {
        rp_refuse_once(s, rm_plan_of(s->plans, call->api_id), "no cuLinkAddData in this tree");
        *r = s->e_not_supported;
        return 1;
    }
    const char *path;
    int32_t type;
    memcpy(&path, (const uint8_t *)call->params + po, sizeof path);
    memcpy(&type, (const uint8_t *)call->params + to, sizeof type);
    if (path == NULL) {
        *r = s->e_invalid;
        return 1;
    }
    uint8_t *bytes = NULL;
    uint64_t len = 0;
    if ((*r = rp_read_file(s, path, &bytes, &len)) != 0)
        return 1;
    uint64_t n = type == 1 /* CU_JIT_INPUT_PTX */ ? len + 1 : len;   /* PTX with its NUL */
    uint8_t params[256] = {0};
    void *data = bytes;
    size_t bytes_n = (size_t)n;
    if (rp_copy_param(h, call->info, call->params, da, params, "state", "state") != 0 ||
        rp_copy_param(h, call->info, call->params, da, params, "type", "type") != 0 ||
        rp_copy_param(h, call->info, call->params, da, params, "numOptions", "numOptions") != 0 ||
        rp_copy_param(h, call->info, call->params, da, params, "options", "options") != 0 ||
        rp_copy_param(h, call->info, call->params, da, params, "optionValues", "optionValues") != 0 ||
        rp_copy_param(h, call->info, call->params, da, params, "path", "name") != 0 ||   /* named in its logs */
        rp_set_param(h, da, params, "data", &data, sizeof data) != 0 ||
        rp_set_param(h, da, params, "size", &bytes_n, sizeof bytes_n) != 0) {
        free(bytes);
        rp_refuse_once(s, rm_plan_of(s->plans, call->api_id), "cuLinkAddData's parameters differ");
        *r = s->e_not_supported;
        return 1;
    }
    int32_t ret = 0;
    int answered;
    int own;
    rm_wr own_wr, *w = rp_wr(s, &own_wr, &own);
    int32_t e = rp_forward(s, pl, params, &ret, &answered, w, NULL, NULL);   /* neither batched nor kept */
    if (own)
        rm_wr_free(w);
    free(bytes);
    *r = answered ? ret : e;
    return 1;
}
