/*
 * rp_nccl.h - the client's part of NCCL forwarding (rp_nccl.c; docs/remote.md, "NCCL"): which calls join an
 * NCCL group's batch, and NCCL's words for the remoting's errors.
 */
#ifndef RP_NCCL_H
#define RP_NCCL_H

#include <stdint.h>

#include "cushim/cushim.h"
#include "rm_plan.h"

void rp_nccl_init(const cushim_host *host);
/* Counts the calling thread's group depth (ncclGroupStart, ncclGroupEnd) and says whether 'pl' is to be queued
   with the asynchronous calls (1: ncclGroupStart, a nested ncclGroupEnd, a collective inside a group) or answered
   (0: anything else, the outermost ncclGroupEnd among them). Called once per NCCL call, before it goes. */
int rp_nccl_batched(const rm_plan *pl);
/* A driver code of the remoting (CUDA_ERROR_NOT_SUPPORTED...) as an ncclResult_t. */
int32_t rp_nccl_error(int32_t driver_code);
void rp_nccl_fork_child(void);

#endif /* RP_NCCL_H */
