/*
 * rp_hostfn.h - host functions over remoting (rp_hostfn.c; docs/remote.md, "Host functions"): the rule, which a
 * unit test drives with stand-ins for the server, and the hook's part, which remote.c calls.
 */
#ifndef RP_HOSTFN_H
#define RP_HOSTFN_H

#include <stdint.h>

#include "cushim/cushim.h"
#include "rm_plan.h"

/* What the rule needs of the server: both are synchronous round trips on the program's stream, and return the
   result the program would get (0 success). */
typedef struct rp_hostfn_ops {
    int32_t (*capturing)(void *ctx, void *stream, int32_t *status);   /* cuStreamIsCapturing: *status 0 = none */
    int32_t (*sync)(void *ctx, void *stream);                           /* cuStreamSynchronize                   */
    void (*refused)(void *ctx);             /* a stream being captured: logged once by the caller            */
    void *ctx;
    int32_t e_invalid, e_not_supported;     /* CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_SUPPORTED (or the runtime's) */
} rp_hostfn_ops;

typedef void (*rp_host_fn)(void *data);                                   /* CUhostFn, cudaHostFn_t           */
typedef void (*rp_stream_cb)(void *stream, int32_t status, void *data);   /* CUstreamCallback, cudaStreamCallback_t */

/* One host function: 'cb' set for the cuStreamAddCallback form (fn(stream, status, data); 'flags' must be 0),
   'fn' otherwise. Runs it in this thread once everything enqueued on 'stream' before it has completed on the
   server; returns the result for the program. */
typedef struct rp_hostfn_req {
    void *stream;
    rp_host_fn fn;
    rp_stream_cb cb;
    void *data;
    uint64_t flags;
} rp_hostfn_req;

int32_t rp_hostfn_run(const rp_hostfn_ops *ops, const rp_hostfn_req *q);

/* The hook's part. 'dispatch' is remote.c's way of making one call by its plan (rc_forward_fn's contract). */
typedef int32_t (*rp_hostfn_dispatch)(void *user, const rm_plan *pl, void *params, void *retval, int *answered);
void rp_hostfn_init(const cushim_host *host, cushim_plugin *self, const rm_plans *plans, rp_hostfn_dispatch dispatch,
                    void *user, int32_t e_invalid, int32_t e_not_supported);
/* 1 when 'call' is one of the eight host-function APIs (*result: what the program gets), 0 otherwise. */
int rp_hostfn_pre(cushim_call *call, int32_t *result);

#endif /* RP_HOSTFN_H */
