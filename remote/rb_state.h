/*
 * rb_state.h - one back end's state (rm_backend.c, docs/remote.md "Trust model"), shared by the files that make the
 * back end: rm_backend.c (the handshake, the loop, the calls) and rb_shm.c (the client's shared regions and the
 * doorbell). Private to cushim-serve.
 */
#ifndef RB_STATE_H
#define RB_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"
#include "rm_codec.h"
#include "rm_num.h"
#include "rm_shm.h"
#include "rm_workers.h"

#define RB_KCHECKED 256   /* functions whose launch arguments were checked once (a small direct-mapped cache) */

typedef struct rb_kchecked {
    uint64_t func;
    uint32_t n, hash;                    /* the argument count and a hash of the sizes that passed */
} rb_kchecked;

/* A region the client shares (rm_shm.h): 0 its staging area, the others its pinned host memory. */
typedef struct rb_region {
    void *map;                          /* NULL: none */
    size_t size;
    size_t usable;                      /* bytes copies may use (region 0: less its doorbell) */
    int pinned;                         /* 0: not tried yet, 1: registered with the driver, -1: it refused */
} rb_region;

typedef struct rb_state {
    const cushim_host *host;
    rm_plans *plans;
    rm_arena arena;
    const cushim_api_info *paraminfo;   /* cuFuncGetParamInfo: checks kernel argument sizes */
    int verbose;
    rb_kchecked kchecked[RB_KCHECKED];
    rm_workers *workers;                /* a thread per client thread (RM_MSG_THREAD names it) */
    uint64_t tid;
    int named;                          /* a client thread was named: calls go through 'workers' */
    rb_region shm[RM_SHM_REGIONS];      /* the client's shared regions (RM_MSG_SHM, rm_shm.h) */
    rm_bell *bell;                      /* region 0's doorbell; NULL: none */
    uint32_t bell_last;                 /* the last request answered through it */
    rm_numtab num;                      /* cuBLAS/cuBLASLt handles and descriptors by number (rm_num.h) */
    /* CUDA IPC handles (rb_ipc.c, rm_ipc.h) */
    struct rm_ipc *ipc;                 /* the server's table; NULL: IPC refused */
    uint8_t identity[32];               /* this client's: its token's (rm_auth_identity) or its unix uid */
    uint32_t ipc_ids[9];                /* the IPC APIs' ids, rb_ipc.c's order; UINT32_MAX: not in the tree */
    int32_t e_invalid_handle[2];        /* CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle */
    /* links whose cuLinkCreate passed options written back (rb_link.c) */
    struct rb_link *links;
    uint32_t nlinks;
    uint8_t *link_pending;              /* the block of the cuLinkCreate being run; freed after its reply if it failed */
    uint64_t link_pending_n, link_pending_bytes;
    uint64_t link_bytes;                /* kept by the live links (at most RB_LINK_BYTES) */
    const rm_pplan *link_pending_pp;
} rb_state;

/* rb_cublas.c: rm_ctx.scalar_check, the client's claim of a cuBLAS scalar's way against the server's own mode */
int rb_scalar_check(void *user, const rm_plan *pl, const void *params, uint32_t param, int how);
/* rb_cublas.c: objects by number (rm_num.h). rb_num_message: for every call message, before it runs (it counts the
   Creates); rb_num_pre: rm_num_pre, and for RM_NUM_BAD_HANDLE the library's status for a bad handle in 'ret' (the
   call is then answered with it, not run); rb_num_post: after it ran ('result' its status). */
void rb_num_message(rb_state *b, uint32_t api_id);
int rb_num_pre(rb_state *b, rm_call *c, uint8_t *ret);
void rb_num_post(rb_state *b, rm_call *c, int ran, int32_t result);
/* rb_link.c: a link's kept option outputs (cuLinkCreate's logs, sizes, wall time). rb_link_pre: cuLinkCreate's values
   and buffers moved into a block that outlives the call (RM_ENOMEM); rb_link_post: a created link keeps it,
   cuLinkDestroy frees it; rb_link_done: after the reply, a failed create's block freed; rb_link_out: rm_ctx.link_out;
   rb_link_free: at exit. */
int rb_link_pre(rb_state *b, rm_call *c);
void rb_link_post(rb_state *b, rm_call *c, int ran, int32_t result);
void rb_link_done(rb_state *b);
void rb_link_out(void *user, uint64_t state, rm_wr *w);
void rb_link_free(rb_state *b);

/* rb_ipc.c: CUDA IPC handles (docs/remote.md, "IPC"). rb_ipc_identity: at the handshake, the client's identity
   (a token's index, or -1: the unix peer's uid); rb_ipc_init: once the shim is loaded; rb_ipc_pre: before a decoded
   call runs: 1 when it must not (an open of a handle another identity exported, or none through this server:
   *result the driver's or the runtime's invalid-handle code, the reason logged); rb_ipc_post: after it ran, an
   export recorded. */
struct rm_backend_opts;
void rb_ipc_identity(rb_state *b, const struct rm_backend_opts *o, int token);
void rb_ipc_init(rb_state *b);
int rb_ipc_pre(rb_state *b, const rm_call *c, int32_t *result);
void rb_ipc_post(rb_state *b, const rm_call *c, int32_t result);
void rb_ipc_exit(rb_state *b);

/* rm_backend.c */
void rb_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One CALL payload run on the server thread of the client thread named last (rm_workers.h); 'shm': the region of an
   RM_MSG_SHM_CALL (the copy's host buffer at 'shm_off' in it), NULL for a plain call. The reply goes into 'w'. */
void rb_call_on(rb_state *b, const rm_ctx *cx, const uint8_t *msg, size_t len, rb_region *shm, uint64_t shm_off,
                rm_wr *w, uint32_t *status, uint8_t *ret, uint32_t *ret_size);

/* rb_shm.c */
/* rm_ctx.addr_in / addr_out of the back end: a client's pinned region and offset to this process's mapping of it
   (registered with the driver first, so that it answers as for pinned memory), and back. */
int rb_addr_in(void *user, uint32_t region, uint64_t off, uint64_t *addr);
int rb_addr_out(void *user, uint64_t addr, uint32_t *region, uint64_t *off);
void rb_shm_pin(rb_state *b, rb_region *r);   /* on the thread of the region's first copy */
/* An RM_MSG_SHM ('passed' the descriptor that came with it, or -1; closed here): a region mapped or given back,
   answered. 0, or -1 when the answer could not be sent. */
int rb_shm_message(rb_state *b, int fd, const rm_hdr *hd, const uint8_t *buf, int passed);
/* The doorbell: 1 when a request waits, 0 when the socket has something (after a bounded spin and a sleep). */
int rb_bell_wait(int fd, rm_bell *bell, uint32_t last);
/* The request at the doorbell run and answered. 0, or -1 when the reply could not be sent. */
int rb_bell_serve(rb_state *b, const rm_ctx *cx, int fd, rm_wr *w, uint8_t *dbuf);

#endif /* RB_STATE_H */
