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
    uint32_t fs = 0, ts = 0;
    int fo = rp_param_at(h, from, name, &fs), to_ = rp_param_at(h, to, to_name, &ts);
    if (fo < 0 || to_ < 0 || fs != ts)
        return -1;
    memcpy((uint8_t *)tp + to_, (const uint8_t *)fp + fo, fs);
    return 0;
}

static int rp_set_param(const cushim_host *h, const cushim_api_info *a, void *params, const char *name,
                        const void *v, uint32_t n)
{
    uint32_t size = 0;
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
    uint32_t no = 0, oo = 0;
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

/* ---- links whose cuLinkCreate passed options written back: the program's buffers, by link ---- */
typedef struct rp_link {
    uint64_t state;
    const rm_pplan *pp;              /* cuLinkCreate's option values: their kinds                            */
    uint64_t n;
    void **vals;                     /* the program's array (cuda.h: valid for the link's life)              */
    int32_t *opts;                   /* a copy of its options                                                */
    uint32_t *caps;                  /* each log buffer's size, as given to cuLinkCreate                     */
} rp_link;

static pthread_mutex_t rp_llock = PTHREAD_MUTEX_INITIALIZER;
static rp_link *rp_links;            /* under rp_llock */
static uint32_t rp_nlinks;

int rp_link_in(void *user, uint64_t state, rm_rd *r)
{
    int rc = RM_EMALFORMED;   /* the server keeps a link this process does not know */
    (void)user;
    pthread_mutex_lock(&rp_llock);
    for (uint32_t k = 0; k < rp_nlinks; k++)
        if (rp_links[k].state == state) {
            rp_link *l = &rp_links[k];
            rc = rm_jit_outputs_read(l->pp, l->opts, l->n, l->vals, l->caps, r);
            break;
        }
    pthread_mutex_unlock(&rp_llock);
    return rc;
}

static void rp_link_drop(uint64_t state)
{
    pthread_mutex_lock(&rp_llock);
    for (uint32_t k = 0; k < rp_nlinks; k++)
        if (rp_links[k].state == state) {
            free(rp_links[k].opts);
            free(rp_links[k].caps);
            rp_links[k] = rp_links[--rp_nlinks];
            break;
        }
    pthread_mutex_unlock(&rp_llock);
}

static int32_t rp_forward_call(rp_state *s, const rm_plan *pl, void *params, void *retval)
{
    int answered, own;
    rm_wr own_wr, *w = rp_wr(s, &own_wr, &own);
    int32_t e = rp_forward(s, pl, params, retval, &answered, w, NULL, NULL);   /* neither batched nor kept */
    if (own)
        rm_wr_free(w);
    return answered ? *(const int32_t *)retval : e;
}

/* cuLinkCreate[_v2] with an option written back: forwarded, and the link recorded once created. 0: not such a
   call (the ordinary path takes it). */
static int rp_link_create(rp_state *s, cushim_call *call, int32_t *r)
{
    const rm_plan *pl = rm_plan_of(s->plans, call->api_id);
    for (uint32_t i = 0; pl != NULL && i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i];
        if (pp->op != RM_OP_JITOPTS || !pp->jit_retained)
            continue;
        unsigned n;
        void **vals;
        const int32_t *opts;
        memcpy(&n, (const uint8_t *)call->params + pl->p[pp->count_param].offset, sizeof n);
        memcpy(&vals, (const uint8_t *)call->params + pp->offset, sizeof vals);
        memcpy(&opts, (const uint8_t *)call->params + pl->p[pp->func_param].offset, sizeof opts);
        if (pl->p[pp->count_param].size != sizeof n || vals == NULL || opts == NULL || n == 0 || n > RM_MAX_JITOPTS)
            return 0;   /* the codec decides (a bound, a NULL array) */
        int kept = 0;
        rp_link l = { .pp = pp, .n = n, .vals = vals, .opts = malloc(n * sizeof *l.opts),
                      .caps = calloc(n, sizeof *l.caps) };
        if (l.opts == NULL || l.caps == NULL) {
            free(l.opts);
            free(l.caps);
            *r = s->e_oom;
            return 1;
        }
        memcpy(l.opts, opts, n * sizeof *l.opts);
        for (unsigned k = 0; k < n; k++) {   /* the logs' sizes as given, before the driver writes what it filled */
            const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
            int32_t sid;
            kept |= o != NULL && (o->kind == RM_JIT_INOUT || o->kind == RM_JIT_LOG);
            if (o == NULL || o->kind != RM_JIT_LOG || !rm_jit_value_of(pp, o->size_opt, &sid))
                continue;
            for (unsigned j = 0; j < n; j++)
                if (opts[j] == sid)
                    l.caps[k] = (uint32_t)(uintptr_t)vals[j];
        }
        int32_t ret = -1;
        rp_link *nl = NULL;
        if (kept && (*r = rp_forward_call(s, pl, call->params, &ret)) == 0) {
            void *out = NULL;
            for (uint32_t j = 0; j < pl->nparams; j++)   /* CUlinkState *stateOut: one element out */
                if (pl->p[j].op == RM_OP_ARRAY && pl->p[j].dir == CUSHIM_DIR_OUT && pl->p[j].elem == 8)
                    memcpy(&out, (const uint8_t *)call->params + pl->p[j].offset, sizeof out);
            if (out != NULL)
                memcpy(&l.state, out, sizeof l.state);
            pthread_mutex_lock(&rp_llock);
            if (l.state != 0 && (nl = realloc(rp_links, (rp_nlinks + 1) * sizeof *rp_links)) != NULL) {
                rp_links = nl;
                rp_links[rp_nlinks++] = l;
            }
            pthread_mutex_unlock(&rp_llock);
        }
        if (nl == NULL) {
            free(l.opts);
            free(l.caps);
        }
        return kept;
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
    if (strncmp(name, "cuLinkCreate", 12) == 0)
        return rp_link_create(s, call, r);
    if (strcmp(name, "cuLinkDestroy") == 0) {   /* forwarded here: the link's record dropped once destroyed */
        const rm_plan *pl = rm_plan_of(s->plans, call->api_id);
        uint64_t state;
        int32_t ret = -1;
        if (pl == NULL || pl->link_param < 0)
            return 0;
        memcpy(&state, (const uint8_t *)call->params + pl->p[pl->link_param].offset, sizeof state);
        if ((*r = rp_forward_call(s, pl, call->params, &ret)) == 0)
            rp_link_drop(state);
        return 1;
    }
    while (f < sizeof rp_file_apis / sizeof rp_file_apis[0] && strcmp(rp_file_apis[f].api, name) != 0)
        f++;
    if (f == sizeof rp_file_apis / sizeof rp_file_apis[0])
        return 0;
    const cushim_api_info *da = h->api_by_name(rp_file_apis[f].target);
    const rm_plan *pl = da != NULL ? rm_plan_of(s->plans, da->id) : NULL;
    uint32_t size = 0;
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
