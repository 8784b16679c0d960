/*
 * rp_cublas.h - the client's part of cuBLAS and cuBLASLt forwarding (rp_cublas.c; docs/remote.md, "cuBLAS and
 * cuBLASLt"): pointer-mode scalars and each call's way; cuBLAS's words for the remoting's errors (rp_blaserr.h).
 */
#ifndef RP_CUBLAS_H
#define RP_CUBLAS_H

#include <stdint.h>

#include "cushim/cushim.h"
#include "rm_codec.h"
#include "rp_blaserr.h"   /* rp_cublas_error */

void rp_cublas_init(const cushim_host *host);
/* rm_ctx.scalar: a host value of *bytes or a device address, by the handle's or descriptor's pointer mode. */
int rp_cublas_scalar(void *user, const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes);
/* How a cuBLAS/cuBLASLt call goes (docs/remote.md, "cuBLAS and cuBLASLt", fast paths): */
enum {
    RP_BLAS_FORWARD,   /* a synchronous round trip, as any call */
    RP_BLAS_LOCAL,     /* answered here (*status, outputs written): a setter of the value the handle has, a getter
                          of a value set */
    RP_BLAS_BATCH,     /* it cannot fail once checked here: queued with the asynchronous calls, success; the
                          caller then calls rp_cublas_after(call, 0, epoch) */
    RP_BLAS_CREATE     /* a cuBLASLt Create, batched the same way: its output (the first parameter) is the
                          descriptor's number rp_queue gives (rm_ltid.h) */
};
/* 'epoch': which device is current on the calling thread (rc_device_epoch): part of a heuristic's key. */
int rp_cublas_route(const cushim_call *call, int32_t *status, const uint64_t epoch[2]);
/* After a cuBLAS/cuBLASLt call returned 'status' (forwarded, or batched: 0): follows handles and descriptors
   created and destroyed, the values set, pointer modes and scale types. */
void rp_cublas_after(const cushim_call *call, int32_t status, const uint64_t epoch[2]);
void rp_cublas_fork_child(void);

#endif /* RP_CUBLAS_H */
