/*
 * rp_jit.c - the client's part of loading and linking (docs/remote.md, "JIT options and tensor maps"): cuLinkAddFile,
 * cuModuleLoad and cuLibraryLoadFromFile read the program's file here and send its bytes as cuLinkAddData,
 * cuModuleLoadData and cuLibraryLoadData (the server never opens a path a client names), and an option the codec
 * refuses (rm_jit.c) is logged once by its name.
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

/* APIs that name a file of the client's: answered here as the API that takes its bytes. The parameters of the same
   name are copied; the path becomes the link input's name. */
static const struct {
    const char *api, *target, *path, *data, *size;
} rp_file_apis[] = {
    { "cuLinkAddFile", "cuLinkAddData", "path", "data", "size" },
    { "cuLinkAddFile_v2", "cuLinkAddData_v2", "path", "data", "size" },
    { "cuModuleLoad", "cuModuleLoadData", "fname", "image", NULL },
    { "cuLibraryLoadFromFile", "cuLibraryLoadData", "fileName", "code", NULL },
};

/* cuda.h: CU_LIBRARY_BINARY_IS_PRESERVED "with cuLibraryLoadFromFile() is invalid". 1 when 'call' passes it. */
static int rp_preserved_given(rp_state *s, const cushim_call *call)
{
    const rm_plan *pl = rm_plan_of(s->plans, call->api_id);
    uint32_t no, oo;
    int n_off = rp_param_at(s->host, call->info, "numLibraryOptions", &no), o_off;
    int32_t preserved;
    unsigned n;
    const int32_t *opts;
    for (uint32_t i = 0; pl != NULL && i < pl->nparams; i++)
        if (pl->p[i].op == RM_OP_JITOPTS && pl->p[i].jit != NULL &&
            strcmp(pl->p[i].jit->enum_name, "CUlibraryOption") == 0 &&
            rm_jit_value_of(&pl->p[i], "CU_LIBRARY_BINARY_IS_PRESERVED", &preserved) &&
            (o_off = rp_param_at(s->host, call->info, "libraryOptions", &oo)) >= 0 && n_off >= 0 && no == 4) {
            memcpy(&n, (const uint8_t *)call->params + n_off, sizeof n);
            memcpy(&opts, (const uint8_t *)call->params + o_off, sizeof opts);
            for (unsigned k = 0; opts != NULL && k < n; k++)
                if (opts[k] == preserved)
                    return 1;
        }
    return 0;
}

int rp_jit_pre(rp_state *s, cushim_call *call, int32_t *r)
{
    const cushim_host *h = s->host;
    const char *name = call->info->name;
    size_t f = 0;
    if (name[2] != 'L' && name[2] != 'M')   /* cuLink..., cuLibrary..., cuModule...: the rest at one compare */
        return 0;
    while (f < sizeof rp_file_apis / sizeof rp_file_apis[0] && strcmp(rp_file_apis[f].api, name) != 0)
        f++;
    if (f == sizeof rp_file_apis / sizeof rp_file_apis[0])
        return 0;
    const cushim_api_info *da = h->api_by_name(rp_file_apis[f].target);
    const rm_plan *pl = da != NULL ? rm_plan_of(s->plans, da->id) : NULL;
    uint32_t size;
    int po = rp_param_at(h, call->info, rp_file_apis[f].path, &size), to = rp_param_at(h, call->info, "type", &size);
    if (pl == NULL || po < 0 || da->params_size > 256) {
        rp_refuse_once(s, rm_plan_of(s->plans, call->api_id), "the API taking the file's bytes is not in this tree");
        *r = s->e_not_supported;
        return 1;
    }
    const char *path;
    int32_t type = 1;   /* a module or library: text gets its NUL, as PTX for a link */
    memcpy(&path, (const uint8_t *)call->params + po, sizeof path);
    if (to >= 0)
        memcpy(&type, (const uint8_t *)call->params + to, sizeof type);
    if (path == NULL || (rp_file_apis[f].size == NULL && strcmp(name, "cuLibraryLoadFromFile") == 0 &&
                         rp_preserved_given(s, call))) {
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
    int bad = rp_set_param(h, da, params, rp_file_apis[f].data, &data, sizeof data) != 0 ||
              (rp_file_apis[f].size != NULL && rp_set_param(h, da, params, rp_file_apis[f].size, &bytes_n,
                                                            sizeof bytes_n) != 0);
    for (uint32_t i = 0; !bad && i < da->nparams; i++) {   /* the rest by name; a link input named by its path */
        const char *pn = h->api_param(da, i)->name;
        if (strcmp(pn, rp_file_apis[f].data) == 0 || (rp_file_apis[f].size && strcmp(pn, rp_file_apis[f].size) == 0))
            continue;
        bad = rp_copy_param(h, call->info, call->params, da, params, strcmp(pn, "name") == 0 ? "path" : pn, pn) != 0;
    }
    if (bad) {
        free(bytes);
        rp_refuse_once(s, rm_plan_of(s->plans, call->api_id), "the parameters of the API taking the file's bytes differ");
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
