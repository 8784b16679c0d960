/*
 * rp_nccl.h - the client's part of NCCL forwarding (rp_nccl.c; docs/remote.md, "NCCL"): which calls join an
 * NCCL group's batch, and NCCL's words for the remoting's errors.
 */
#ifndef RP_NCCL_H
#define RP_NCCL_H

#include <stdint.h>

#include "cushim/cushim.h"
#include "rm_plan.h"

void rp_nccl_init(const cushim_host *host, cushim_plugin *self);
/* Counts the calling thread's group depth (ncclGroupStart, ncclGroupEnd) and says whether 'pl' is to be queued
   with the asynchronous calls (1: ncclGroupStart, a nested ncclGroupEnd, a collective inside a group) or answered
   (0: anything else, the outermost ncclGroupEnd among them). Called once per NCCL call, before it goes. */
int rp_nccl_batched(const rm_plan *pl);
/* A driver code of the remoting (CUDA_ERROR_NOT_SUPPORTED...) as an ncclResult_t. */
int32_t rp_nccl_error(int32_t driver_code);
void rp_nccl_fork_child(void);
/* An ncclConfig_t passed by 'call' (ncclCommInitRankConfig, ncclCommSplit...), made sendable: copied into 'copy'
   (RP_NCCL_CONFIG_MAX bytes) as far as its own 'size' says (the rest zero: NCCL reads no further), its commName - a
   label in NCCL's logs - dropped (logged once), and the parameter pointed at the copy. *slot and *orig say what to
   put back after the call (*slot NULL: nothing was changed). netName stays: a named network is refused. */
#define RP_NCCL_CONFIG_MAX 512
/* rm_ctx.scalar for NCCL (ncclRedOpCreatePreMulSum's 'scalar'): by its 'residence', a device address
   (ncclScalarDevice) or a host value (ncclScalarHostImmediate) of its 'datatype''s size; RM_EUNSUPPORTED for a
   residence or datatype this file does not know. */
int rp_nccl_scalar(const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes);
void rp_nccl_config(cushim_call *call, uint8_t *copy, void ***slot, void **orig);

#endif /* RP_NCCL_H */
