/*
 * rp_graph.c - stream capture and graphs in the client (docs/remote.md, "Graphs").
 *
 * Graphs live on the server: a captured stream's work, the graph and its instantiations are the server driver's,
 * and the client holds their handles as numbers. What the client must get right is what it does itself:
 *   - batching: a call queued in a batch returns CUDA_SUCCESS at once and its error comes at the next synchronous
 *     call, but a failed call in a capture is answered at that call by the driver (and invalidates the capture).
 *     While any stream capture this process began is open (rm_plan.capture: begun and not yet ended), no call is
 *     batched: each is one round trip, and its error is its own. Capture happens once per graph; the graph's
 *     launches (cuGraphLaunch, asynchronous) are batched as before.
 *   - host copies on a stream (cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2, their _ptsz, and cudaMemcpyAsync made
 *     of them): the server stages the host buffer in its arena, reused after the call; captured, the graph would
 *     read or write that staging memory at each launch. While a capture is open such a copy goes as zero copy when
 *     its host memory is pinned memory shared with the back end (rp_shm.c: the back end's mapping of the program's
 *     own pages, which lives as long as the block) and otherwise asks the server whether its stream is being
 *     captured (cuStreamIsCapturing): if so it returns CUDA_ERROR_NOT_SUPPORTED (logged once), never a capture of
 *     server staging memory.
 *   - memcpy nodes (rm_plan.devcopy_param: cuGraphAddMemcpyNode, cuGraphMemcpyNodeSetParams,
 *     cuGraphExecMemcpyNodeSetParams): a CUDA_MEMCPY3D whose source or destination is host or unified memory
 *     (CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_UNIFIED: an address of this process) is refused with
 *     CUDA_ERROR_NOT_SUPPORTED; device and array copies go by their plan.
 *   - capture dependencies (cuStreamGetCaptureInfo_v2/_v3's and cudaStreamGetCaptureInfo's dependencies_out): the
 *     driver returns a pointer to an array it owns; the server sends the elements (RM_OP_OWNED_OUT) and the client
 *     keeps a copy per thread (rp_graph_keep), valid until the thread's next such call; cuLinkComplete's cubin the
 *     same way (a slot per parameter index).
 *   - cuStreamIsCapturing / cudaStreamIsCapturing (and _ptsz) of the null, legacy or per-thread stream while no
 *     capture this process began is open are answered here: not capturing (rp_graph_is_capturing). Exact: only
 *     this process captures its back end's streams, and these three always exist; the first such call is the
 *     server's (the runtime and context initialised, their errors its own).
 * State: the streams being captured (rp_state.glock), dropped in a forked child (its back end has none); the
 * kept arrays (host TLS, rp_state.tls_graph).
 */
#include <stdlib.h>
#include <string.h>

#include "rp.h"

#define RG_MEMTYPE_HOST 1u      /* CU_MEMORYTYPE_HOST    */
#define RG_MEMTYPE_UNIFIED 4u   /* CU_MEMORYTYPE_UNIFIED */

static uint64_t rg_value(const rp_state *s, const rm_plan *pl, const void *params, uint32_t i)
{
    const cushim_param_info *p = s->host->api_param(pl->info, i);
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)params + p->offset, p->size < 8 ? p->size : 8);
    return v;
}

/* The CUstream parameter of a plan, or -1. */
static int rg_stream_param(const rp_state *s, const rm_plan *pl)
{
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const cushim_param_info *p = s->host->api_param(pl->info, i);
        if (p->kind == CUSHIM_KIND_HANDLE && p->type != NULL &&
            (strcmp(p->type, "CUstream") == 0 || strcmp(p->type, "cudaStream_t") == 0))
            return (int)i;
    }
    return -1;
}

/* cuStreamIsCapturing[_ptsz] on the server: the program's result (0, or the error it gets), *status 0 = none. */
static int32_t rg_is_capturing(rp_state *s, int per_thread, uint64_t stream, uint32_t *status)
{
    const cushim_api_info *a = s->host->api_by_name(per_thread ? "cuStreamIsCapturing_ptsz" : "cuStreamIsCapturing");
    const rm_plan *pl = a != NULL ? rm_plan_of(s->plans, a->id) : NULL;
    uint8_t params[32] __attribute__((aligned(16))) = {0};
    uint64_t v[2] = { stream, (uint64_t)(uintptr_t)status };
    int32_t ret = 0, r;
    int own, answered = 0;
    *status = 0;
    if (pl == NULL || a->nparams != 2 || a->params_size > sizeof params)
        return s->e_not_supported;
    for (uint32_t i = 0; i < 2; i++) {
        const cushim_param_info *p = s->host->api_param(a, i);
        memcpy(params + p->offset, &v[i], p->size < 8 ? p->size : 8);
    }
    rm_wr own_wr, *w = rp_wr(s, &own_wr, &own);
    r = rp_forward(s, pl, params, &ret, &answered, w, NULL, NULL);
    if (own)
        rm_wr_free(w);
    return answered ? ret : r;
}

/* A host copy on a stream while a capture is open (the file's comment). 1: answered (*r). */
static int rg_host_copy(rp_state *s, const rm_plan *pl, void *params, int32_t *r)
{
    int sp = rg_stream_param(s, pl), done = 0;
    uint32_t status = 0;
    if (sp < 0)
        return 0;   /* a synchronous copy: never captured (the driver refuses it on a capturing legacy stream) */
    if (s->shm_opt && s->shm_state >= 0 && (*r = rp_copy_shm(s, pl, params, 1, &done), done))
        return 1;   /* pinned memory shared with the back end: the graph reads the program's own pages */
    *r = rg_is_capturing(s, strstr(pl->info->name, "_ptsz") != NULL, rg_value(s, pl, params, (uint32_t)sp), &status);
    if (*r != 0)
        return 1;   /* an invalid stream (or a batched call's error), as the copy would have returned */
    if (status == 0)
        return 0;
    rp_refuse_once(s, pl, "a copy from or to this process's memory (not pinned memory shared with the server) on a "
                          "stream being captured: the graph would replay the server's staging copy of it");
    *r = s->e_not_supported;
    return 1;
}

/* A memcpy node's CUDA_MEMCPY3D: host or unified memory refused. 1: refused (*r). */
static int rg_devcopy(rp_state *s, const rm_plan *pl, void *params, int32_t *r)
{
    const rm_pplan *pp = &pl->p[pl->devcopy_param];
    const uint8_t *c;
    memcpy(&c, (const uint8_t *)params + pp->offset, sizeof c);
    if (c == NULL)
        return 0;   /* the driver's own answer */
    static const char *const fields[] = { "srcMemoryType", "dstMemoryType" };
    for (int k = 0; k < 2; k++) {
        uint32_t off, size, type = 0;
        if (!rm_struct_field_at(pp->st, fields[k], &off, &size) || size != 4)
            continue;
        memcpy(&type, c + off, 4);
        if (type == RG_MEMTYPE_HOST || type == RG_MEMTYPE_UNIFIED) {
            rp_refuse_once(s, pl, "a memcpy node with host or unified memory: the memory is this process's, the "
                                  "graph runs on the server (device and array copies are forwarded)");
            *r = s->e_not_supported;
            return 1;
        }
    }
    return 0;
}

int rp_graph_pre(rp_state *s, const rm_plan *pl, void *params, int32_t *r)
{
    if (pl->devcopy_param >= 0 && rg_devcopy(s, pl, params, r))
        return 1;
    if (pl->chunk_host >= 0 && rp_capturing(s) && rg_host_copy(s, pl, params, r))
        return 1;
    return 0;
}

void rp_graph_post(rp_state *s, const rm_plan *pl, void *params, int32_t result)
{
    uint64_t stream = rg_value(s, pl, params, 0);   /* every Begin/EndCapture form takes the stream first */
    pthread_mutex_lock(&s->glock);
    int at = -1, free_at = -1;
    for (int i = 0; i < RP_CAPTURES; i++) {
        if (s->capture_used[i] && s->capture_stream[i] == stream)
            at = i;
        else if (!s->capture_used[i] && free_at < 0)
            free_at = i;
    }
    if (pl->capture == RM_CAPTURE_BEGIN && result == 0 && at < 0) {
        if (free_at >= 0) {
            s->capture_used[free_at] = 1;
            s->capture_stream[free_at] = stream;
        }
        atomic_fetch_add(&s->captures, 1);   /* past RP_CAPTURES streams: counted, never ended (batching off) */
    } else if (pl->capture == RM_CAPTURE_END && at >= 0 && result != s->e_wrong_thread) {
        s->capture_used[at] = 0;   /* ended, invalidated or not a capture: closed on the server */
        atomic_fetch_sub(&s->captures, 1);
    }
    pthread_mutex_unlock(&s->glock);
    /* an invalidated capture ends with no graph: the driver stores NULL, which a failed call's reply does not
       carry (outputs come back after success only) */
    void *graph_out = (void *)(uintptr_t)rg_value(s, pl, params, 1);
    if (pl->capture == RM_CAPTURE_END && result == s->e_invalidated && graph_out != NULL && pl->nparams == 2)
        memset(graph_out, 0, sizeof(void *));
}

/* A thread's kept arrays (rp_graph_keep), one per parameter index: capture dependencies, a linked cubin. */
typedef struct rg_kept {
    void *buf[RM_MAX_PARAMS];
    size_t cap[RM_MAX_PARAMS];
} rg_kept;

static void rg_kept_free(void *p)
{
    rg_kept *k = p;
    for (uint32_t i = 0; k != NULL && i < RM_MAX_PARAMS; i++)
        free(k->buf[i]);
    free(k);
}

/* The stream-capture queries answered here (rp_graph_is_capturing); by API id, set at load. */
static uint32_t rg_iscap_id[4] = { UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX };

int rp_graph_init(rp_state *s, cushim_plugin *self)
{
    static const char *const names[4] = { "cuStreamIsCapturing", "cuStreamIsCapturing_ptsz", "cudaStreamIsCapturing",
                                           "cudaStreamIsCapturing_ptsz" };
    for (int i = 0; i < 4; i++) {
        const cushim_api_info *a = s->host->api_by_name(names[i]);
        rg_iscap_id[i] = a != NULL ? a->id : UINT32_MAX;
    }
    return s->host->tls_create(self, rg_kept_free, &s->tls_graph);
}

int rp_graph_is_capturing(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered, int32_t *r)
{
    int which = -1;
    for (int i = 0; i < 4; i++)
        if (rg_iscap_id[i] == pl->id)
            which = i;
    if (which < 0 || pl->nparams != 2 || !pl->ret_status)
        return 0;
    const cushim_param_info *out = s->host->api_param(pl->info, 1);
    uint64_t stream = rg_value(s, pl, params, 0);
    void *status = NULL;
    memcpy(&status, (const uint8_t *)params + out->offset, sizeof status);
    if (stream <= 2 /* NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD */ && status != NULL && !rp_capturing(s) &&
        atomic_load_explicit(&s->iscap_seen, memory_order_relaxed) &&
        !atomic_load_explicit(&s->dead, memory_order_relaxed)) {
        memset(status, 0, 4);   /* CU_STREAM_CAPTURE_STATUS_NONE, cudaStreamCaptureStatusNone */
        memset(retval, 0, 4);   /* CUDA_SUCCESS, cudaSuccess */
        atomic_fetch_add_explicit(&s->cached, 1, memory_order_relaxed);
        *answered = 1;
        *r = 0;
        return 1;
    }
    int own;
    rm_wr own_wr, *w = rp_wr(s, &own_wr, &own);
    *r = rp_forward(s, pl, params, retval, answered, w, NULL, NULL);
    if (own)
        rm_wr_free(w);
    if (*answered && *r == 0 && stream <= 2)
        atomic_store_explicit(&s->iscap_seen, 1, memory_order_relaxed);
    return 1;
}

const void *rp_graph_keep(void *user, uint32_t param, const void *bytes, size_t n)
{
    rp_state *s = user;
    rg_kept *k = s->host->tls_get(s->tls_graph);
    if (param >= RM_MAX_PARAMS)
        return NULL;
    if (k == NULL) {
        if ((k = calloc(1, sizeof *k)) == NULL)
            return NULL;
        if (s->host->tls_set(s->tls_graph, k) != CUSHIM_OK) {
            free(k);
            return NULL;
        }
    }
    if (n > k->cap[param] || k->buf[param] == NULL) {
        void *b = realloc(k->buf[param], n ? n : 8);
        if (b == NULL)
            return NULL;
        k->buf[param] = b;
        k->cap[param] = n ? n : 8;
    }
    memcpy(k->buf[param], bytes, n);
    return k->buf[param];
}

void rp_graph_forget(rp_state *s)
{
    pthread_mutex_lock(&s->glock);
    memset(s->capture_used, 0, sizeof s->capture_used);
    atomic_store(&s->captures, 0);
    atomic_store(&s->iscap_seen, 0);   /* its back end answers the first again */
    pthread_mutex_unlock(&s->glock);
}
