/*
 * rp_hostfn.c - host functions over remoting (docs/remote.md, "Host functions"): cuLaunchHostFunc,
 * cuStreamAddCallback, cudaLaunchHostFunc, cudaStreamAddCallback and their per-thread-stream forms.
 *
 * A host function's pointer and data are this process's: the server cannot call them. The client answers the
 * call itself: what is batched is sent, the stream is asked whether it is being captured (a host function in a
 * graph cannot run now: CUDA_ERROR_NOT_SUPPORTED, logged once, the graph runs on the server), the stream is
 * synchronised on the server, and the function runs here, in the calling thread, before the call returns. So
 * everything enqueued on the stream before it has completed when it runs, and nothing this thread enqueues after
 * it starts before it returns - CUDA's ordering, at the price of the call becoming synchronous (two round trips
 * and the stream's drain). cuStreamAddCallback's callback gets the synchronisation's error as its status and the
 * call returns CUDA_SUCCESS; cuLaunchHostFunc's function is not called when the synchronisation fails (as the
 * driver does not call it after an error in the context) and the call returns the error. The runtime's forms
 * make the same driver calls (a cudaStream_t is a CUstream), with the runtime's context made current on the
 * server's thread first (rc_cudart.c), and keep their errors for cudaGetLastError.
 */
#include <stdatomic.h>
#include <string.h>

#include "rc_cudart.h"
#include "rp_hostfn.h"
#include "rm_names.h"

int32_t rp_hostfn_run(const rp_hostfn_ops *ops, const rp_hostfn_req *q)
{
    int32_t capture = 0, r;
    if ((q->fn == NULL && q->cb == NULL) || (q->cb != NULL && q->flags != 0))
        return ops->e_invalid;
    if ((r = ops->capturing(ops->ctx, q->stream, &capture)) != 0)
        return r;   /* an invalid stream, or an error of a batched call reported here */
    if (capture != 0) {   /* active or invalidated: it belongs to a graph, which is not forwarded */
        ops->refused(ops->ctx);
        return ops->e_not_supported;
    }
    r = ops->sync(ops->ctx, q->stream);
    if (q->cb != NULL) {
        q->cb(q->stream, r, q->data);
        return 0;
    }
    if (r != 0)
        return r;
    q->fn(q->data);
    return 0;
}

/* ---- the hook's part ---- */
enum { RH_FN, RH_CB };   /* cuLaunchHostFunc's form, cuStreamAddCallback's */

static struct {
    const cushim_host *host;
    cushim_plugin *self;
    const rm_plans *plans;
    rp_hostfn_dispatch dispatch;
    void *user;
    uint32_t id[2][2][2];                 /* [runtime][RH_FN/RH_CB][per_thread] */
    const cushim_api_info *capturing[2];  /* cuStreamIsCapturing[_ptsz] */
    const cushim_api_info *sync[2];       /* cuStreamSynchronize[_ptsz] */
    int32_t e_invalid, e_not_supported;   /* the driver's codes */
    _Atomic int logged;
} rh;

/* One call's context for the rule's steps. */
typedef struct rh_call {
    const cushim_api_info *api;
    int runtime, per_thread;
    int32_t code_of_failure;   /* the library's error when the server did not answer */
} rh_call;

void rp_hostfn_init(const cushim_host *host, cushim_plugin *self, const rm_plans *plans, rp_hostfn_dispatch dispatch,
                    void *user, int32_t e_invalid, int32_t e_not_supported)
{
    static const char *const names[2][2] = { { "cuLaunchHostFunc", "cuStreamAddCallback" },
                                             { "cudaLaunchHostFunc", "cudaStreamAddCallback" } };
    rh.host = host;
    rh.self = self;
    rh.plans = plans;
    rh.dispatch = dispatch;
    rh.user = user;
    rh.e_invalid = e_invalid;
    rh.e_not_supported = e_not_supported;
    for (int rt = 0; rt < 2; rt++)
        for (int k = 0; k < 2; k++)
            for (int pt = 0; pt < 2; pt++) {
                char name[64];
                strcpy(name, names[rt][k]);
                if (pt)
                    strcat(name, "_ptsz");
                rh.id[rt][k][pt] = rm_api_id(rh.host, name, UINT32_MAX);
            }
    rh.capturing[0] = host->api_by_name("cuStreamIsCapturing");
    rh.capturing[1] = host->api_by_name("cuStreamIsCapturing_ptsz");
    rh.sync[0] = host->api_by_name("cuStreamSynchronize");
    rh.sync[1] = host->api_by_name("cuStreamSynchronize_ptsz");
}

/* A driver call of the server with its parameters by index (each 8 bytes or less, at the metadata's offsets). */
static int32_t rh_driver(const rh_call *c, const cushim_api_info *a, const uint64_t *v, uint32_t n)
{
    uint8_t params[64] __attribute__((aligned(16))) = {0};
    const rm_plan *pl = a != NULL ? rm_plan_of(rh.plans, a->id) : NULL;
    int32_t ret = -1;
    int answered = 0;
    if (pl == NULL || a->params_size > sizeof params || a->nparams != n)
        return c->code_of_failure;   /* not in this tree: cannot order the host function */
    for (uint32_t i = 0; i < n; i++) {
        const cushim_param_info *p = rh.host->api_param(a, i);
        memcpy(params + p->offset, &v[i], p->size < 8 ? p->size : 8);
    }
    int32_t r = rh.dispatch(rh.user, pl, params, &ret, &answered);
    return answered ? ret : rc_lib_error(c->runtime ? CUSHIM_LIB_RUNTIME : CUSHIM_LIB_DRIVER, r);
}

static int32_t rh_capturing(void *ctx, void *stream, int32_t *status)
{
    const rh_call *c = ctx;
    uint32_t st = 0;   /* CUstreamCaptureStatus */
    uint64_t v[2] = { (uint64_t)(uintptr_t)stream, (uint64_t)(uintptr_t)&st };
    int32_t r = c->runtime ? rc_driver_context() : 0;   /* the runtime's context on the server's thread first */
    if (r == 0)
        r = rh_driver(c, rh.capturing[c->per_thread], v, 2);
    *status = (int32_t)st;
    return r;
}

static int32_t rh_sync(void *ctx, void *stream)
{
    const rh_call *c = ctx;
    uint64_t v[1] = { (uint64_t)(uintptr_t)stream };
    return rh_driver(c, rh.sync[c->per_thread], v, 1);
}

static void rh_refused(void *ctx)
{
    const rh_call *c = ctx;
    if (atomic_exchange(&rh.logged, 1) == 0)
        rh.host->log(rh.self, CUSHIM_LOG_WARN, "%s: a host function on a stream being captured cannot run in this "
                     "process at the graph's launch (the graph runs on the server): returns %s", c->api->name,
                     c->runtime ? "cudaErrorNotSupported" : "CUDA_ERROR_NOT_SUPPORTED");
}

static uint64_t rh_param(const cushim_call *call, uint32_t i)
{
    const cushim_param_info *p = rh.host->api_param(call->info, i);
    uint64_t v = 0;
    if (p != NULL)
        memcpy(&v, (const uint8_t *)call->params + p->offset, p->size < 8 ? p->size : 8);
    return v;
}

/* Which of the eight 'id' is: 1 and its runtime/form/per-thread indices, or 0. */
static int rh_which(uint32_t id, int *rt, int *k, int *pt)
{
    for (*rt = 0; *rt < 2; ++*rt)
        for (*k = 0; *k < 2; ++*k)
            for (*pt = 0; *pt < 2; ++*pt)
                if (rh.id[*rt][*k][*pt] == id)
                    return 1;
    return 0;
}

int rp_hostfn_pre(cushim_call *call, int32_t *result)
{
    int rt, k, pt;
    if (rh.host == NULL || call->api_id == 0 || !rh_which(call->api_id, &rt, &k, &pt))
        return 0;
    uint32_t lib = rt ? CUSHIM_LIB_RUNTIME : CUSHIM_LIB_DRIVER;
    rh_call c = { .api = call->info, .runtime = rt, .per_thread = pt,
                  .code_of_failure = rc_lib_error(lib, rh.e_not_supported) };
    rp_hostfn_ops ops = { .capturing = rh_capturing, .sync = rh_sync, .refused = rh_refused, .ctx = &c,
                          .e_invalid = rc_lib_error(lib, rh.e_invalid), .e_not_supported = c.code_of_failure };
    rp_hostfn_req q = { .stream = (void *)(uintptr_t)rh_param(call, 0), .data = (void *)(uintptr_t)rh_param(call, 2),
                        .flags = k == RH_CB ? rh_param(call, 3) : 0 };
    uint64_t f = rh_param(call, 1);
    if (k == RH_CB)
        memcpy(&q.cb, &f, sizeof q.cb);
    else
        memcpy(&q.fn, &f, sizeof q.fn);
    int32_t r = rp_hostfn_run(&ops, &q);
    *result = rt ? rc_note_error(r) : r;
    return 1;
}
