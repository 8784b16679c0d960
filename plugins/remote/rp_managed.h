/*
 * rp_managed.h - managed memory over remoting (rp_managed.c; docs/remote.md, "Managed memory"): the blocks the
 * server allocated, mirrored in this process at the same addresses and exchanged at synchronisation points.
 */
#ifndef RP_MANAGED_H
#define RP_MANAGED_H

#include <stdio.h>

#include "cushim/cushim.h"
#include "rm_plan.h"

struct rp_state;

/* At load, after the plans: which APIs push, pull or free. 0, or -1 (no memory). */
int rp_managed_init(struct rp_state *s);
/* cuMemAllocManaged / cudaMallocManaged: 1 when taken (*r the result in the call's library), 0 for any other. */
int rp_managed_pre(struct rp_state *s, cushim_call *call, int32_t *r);
/* Around every call the client sends (remote.c's rp_dispatch): before it, what the host wrote is pushed where
   the call may run GPU work or synchronise (0, or the push's error: the call is not sent); after it (its result
   'result'), a synchronisation pulls the blocks and a free of a block unmaps its mirror. Returns the result to
   give: 'result', or the pull's error. */
int32_t rp_managed_before(struct rp_state *s, const rm_plan *pl);
int32_t rp_managed_after(struct rp_state *s, const rm_plan *pl, const void *params, int32_t result);
/* After a device query the program made (answered): the managed-access attributes this client gives (0). */
void rp_managed_answer(struct rp_state *s, cushim_call *call);
/* 1 when 'p' lies in a managed block of this process (rc_cudart.c's cudaMemcpyDefault: the server's side). */
int rp_managed_holds(const void *p);
void rp_managed_fork_child(void);
/* stats=1: the pushes and pulls, when there were any. */
void rp_managed_stats(FILE *f);

#endif /* RP_MANAGED_H */
