/*
 * rc_cudart.h - what the remote plugin's runtime part (rc_cudart.c) offers remote.c, and what it needs from it
 * (docs/remote.md, "Runtime-API programs").
 */
#ifndef RC_CUDART_H
#define RC_CUDART_H

#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"
#include "rm_plan.h"

/* remote.c's forwarding of one call: the result to give the program; *answered = 1 when it is the server's
   answer (the outputs were written), 0 when it is an error of the driver's code space (no answer). */
typedef int32_t (*rc_forward_fn)(void *user, const rm_plan *pl, void *params, void *retval, int *answered);

/* remote.c's pinned host memory (rp_shm.c): 0 and *p, or a driver error code; and its free. */
typedef int32_t (*rc_host_alloc_fn)(void *user, size_t size, void **p);
typedef int32_t (*rc_host_free_fn)(void *user, void *p);

/* Called once from the plugin's init, before its hooks are added. 0, or -1 (logged). */
int rc_init(const cushim_host *host, cushim_plugin *self, const rm_plans *plans, rc_forward_fn forward,
            rc_host_alloc_fn host_alloc, rc_host_free_fn host_free, void *user);

/* A runtime call the runtime part answers itself (copies, launches, the calls whose answer it completes):
   returns 1 with *result set; 0: forward it as any other call. */
int rc_pre(cushim_call *call, const rm_plan *pl, int32_t *result);

/* Before driver calls the client makes for a runtime call (rp_hostfn.c): the runtime's context of this thread's
   device made current on its server thread (cudaFree(NULL), once per thread and device). 0 or a runtime error. */
int32_t rc_driver_context(void);

/* A runtime call answered in the client returns 'r': kept for cudaGetLastError when it is an error. Returns r. */
int32_t rc_note_error(int32_t r);

/* Before every call the plugin takes, by API id: one that may change a thread's current context or device makes
   cudaGetDevice ask the server again. */
void rc_note_api(uint32_t id);
/* The calls the runtime part answered itself (cudaGetDevice), for stats=1. */
uint64_t rc_local_answers(void);
/* Which device may be current on the calling thread: equal epochs, the same device (the process's count of calls
   that may change a thread's context, rc_note_api; this thread's forwarded cudaSetDevice calls). */
void rc_device_epoch(uint64_t epoch[2]);

/* In the child of fork(): the server's modules and functions were the parent's back end's; the child's first
   launch loads them in its own. */
void rc_fork_child(void);

/* A driver error code (CUDA_ERROR_*) that remote.c gives when the server did not answer, in the code space of
   'library' (the runtime's cudaError*, NVML's NVML_ERROR_*); the driver's code itself for the driver. */
int32_t rc_lib_error(uint32_t library, int32_t driver_code);

#endif /* RC_CUDART_H */
