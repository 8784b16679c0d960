/*
 * rp.h - the remote plugin's parts (docs/remote.md): one state, owned as follows.
 *
 *   remote.c     the plugin: options, the hook that routes each call, fork and exit, the counts
 *   rp_conn.c    the connection (rp_state.lock): synchronous calls, the batch of asynchronous calls and the
 *                error of a batched call kept for the next synchronous one
 *   rp_bulk.c    chunked bulk copies, on rp_conn.c's steps
 *   rp_shm.c     the regions shared with a back end on this host (rp_state.region, hlock): the staging area,
 *                pinned host memory, and the copies through them
 *   rp_cache.c   answers kept for immutable queries (rp_state.clock)
 *   rp_args.c    kernel argument sizes (rp_state.klock) and the strings the server returned (rp_state.slock)
 *   rp_hostfn.c  host functions, run in the client after their stream drained (no state of rp_state; rp_hostfn.h)
 *   rp_graph.c   stream captures and graphs: the streams being captured (rp_state.glock), what a capture changes
 *   rp_managed.c managed memory: the blocks mirrored here, pushed and pulled at synchronisation (its own lock)
 *   rp_jit.c     files the program names read here and sent as bytes; the refused options logged (its own lock)
 */
#ifndef RP_H
#define RP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "cushim/cushim.h"
#include "rm_codec.h"
#include "rm_shm.h"
#include "rm_sock.h"

#define RP_KCACHE 1024             /* functions whose argument sizes are kept (a full table asks again)      */
#define RP_STRINGS 4096            /* distinct strings the server returned, kept for the process's life      */
#define RP_ANSWERS 4096            /* answers kept for immutable queries (a full table keeps no more)        */
#define RP_BATCH_CALLS 1024        /* a batch is sent when it holds this many calls ...                      */
#define RP_BATCH_BYTES (256u << 10) /* ... or this many bytes                                                */
#define RP_BATCHES_AHEAD 8         /* batches sent and not yet answered before the client waits for them     */
#define RP_BATCH_RING (RP_BATCHES_AHEAD + 2) /* batches followed at once: sent ahead, one more, the one queued */
#define RP_CHUNK (8u << 20)        /* bulk copies are split in calls of at most this many bytes, pipelined   */
#define RP_SHM_SLOTS 4u            /* slots of RP_CHUNK bytes in the shared area (copies in flight at once)  */
#define RP_SHM_MIN (64u << 10)     /* byte copies this large go through the shared area when there is one    */
#define RP_CAPTURES 64             /* stream captures tracked at once (more: batching stays off until exit)   */
#define RP_KASK 8                  /* kernel parameters asked at once (cuFuncGetParamInfo, one round trip)    */

typedef struct rp_kentry {
    uint64_t func;                 /* 0: free */
    uint32_t n;
    uint32_t *sizes;
} rp_kentry;

/* A client thread's own record (host TLS): its encoding buffer (first: an rm_wr * to it is one to this) and its
   number for the server, unique for the process's life. */
typedef struct rp_thread {
    rm_wr w;
    uint64_t id;
} rp_thread;

/* A region shared with the back end (rp_shm.c): 0 the staging area, the others pinned host memory. */
typedef struct rp_region {
    uint8_t *base;                 /* NULL: free */
    size_t size;
    int inherited;                 /* a forked child's copy of its parent's: mapped here, unknown to its server */
} rp_region;

typedef struct rp_answer {
    uint64_t hash;
    uint32_t klen, vlen;
    uint8_t scope;                 /* RM_CACHE_PROCESS or RM_CACHE_FUNC; 0: free */
    uint8_t *key, *val;            /* the call's payload, the reply's payload */
} rp_answer;

typedef struct rp_state {
    const cushim_host *host;
    cushim_plugin *self;
    rm_plans *plans;
    const char *server;
    const char *token_file;        /* NULL: no token (a unix socket's server needs none) */
    int stats;
    int shm_opt;                   /* option 'shm': a shared area with a back end on this host (rp_shm.c) */
    uint32_t delay_us;             /* option 'delay_us': a simulated round trip added per flight (rp_conn.c) */
    /* the connection (rp_conn.c), under 'lock' */
    pthread_mutex_t lock;
    int fd;                        /* -1: not connected (yet) */
    _Atomic int dead;              /* the connection was lost: every call fails, cached answers too */
    dev_t fd_dev;                  /* the socket's identity (fork_child closes only ours) */
    ino_t fd_ino;
    uint32_t seq;
    uint8_t *rbuf;
    size_t rcap;
    rm_inbuf in;                   /* what the socket gave past the message read (rm_sock.h): every read takes it */
    rm_wr batch;                   /* u32 n, then each queued call's u32 length and payload */
    uint32_t batch_n;
    uint32_t ahead;                /* batches sent whose replies are not read yet */
    int32_t async_err;             /* the first batched call that failed since the last report (0: none) */
    int32_t async_blas_err;        /* ... of cuBLAS or cuBLASLt: a cublasStatus_t, reported by their calls only */
    int32_t async_nccl_err;        /* ... of NCCL (inside a group): an ncclResult_t, reported by the next answered
                                      NCCL call (the group's end), which NCCL makes return it too (rp_nccl.c) */
    uint32_t batches_sent, batches_read;  /* batches sent, and whose replies were read (counts, wrapping) */
    uint8_t batch_blas[RP_BATCH_RING][RP_BATCH_CALLS / 8]; /* per batch in flight or queued, by batches_sent:
                                                              which of its calls are cuBLAS's (the error's domain) */
    uint8_t batch_nccl[RP_BATCH_RING][RP_BATCH_CALLS / 8]; /* ... and which are NCCL's */
    uint64_t thread_sent;          /* the client thread last named to the server (RM_MSG_THREAD); 0: none */
    uint64_t batch_tid;            /* the thread whose calls the batch holds (a batch holds one thread's) */
    _Atomic uint64_t next_tid;     /* thread numbers, from 1, never reused */
    uint32_t async_err_api;        /* ... its API id */
    uint64_t lt_creates;           /* cuBLAS/cuBLASLt Create calls sent on this connection (rm_num.h: numbers) */
    int in_flight;                 /* delay_us: a flight of messages is being sent (delayed once, rp_conn.c) */
    uint64_t delays;               /* delay_us: the flights delayed */
    rp_region region[RM_SHM_REGIONS]; /* shared with the back end (rp_shm.c), under 'lock' */
    uint32_t nregions;             /* pinned regions in use (1..), inherited ones too */
    pthread_mutex_t hlock;         /* pinned blocks of this process's heap, when there is no shared memory */
    void **heap_blocks;
    uint32_t nheap, capheap;
    _Atomic int shm_state;         /* 0: not set up (no connection yet), 1: in use, -1: not used (TCP, shm=0, refused) */
    /* counts */
    _Atomic uint64_t calls, trips, batched, batches, cached, chunks, shm_chunks, zero_copies, bell_calls;
    _Atomic uint8_t *logged;       /* per API id: its refusal was logged */
    _Atomic uint32_t *sync_calls;  /* per API id: its synchronous round trips (stats=1; NULL: not counted) */
    int32_t e_not_supported, e_invalid, e_not_found, e_unavailable, e_oom, e_file_not_found;
    const cushim_api_info *paraminfo;
    uint32_t tls_wr;               /* host TLS key: this thread's encoding buffer (kept: no page faults a call) */
    /* kernel argument sizes and strings (rp_args.c) */
    pthread_mutex_t klock;
    rp_kentry kcache[RP_KCACHE];
    pthread_mutex_t slock;
    char *strings[RP_STRINGS];
    uint32_t nstrings;
    /* kept answers (rp_cache.c) */
    pthread_mutex_t clock;
    uint64_t cache_gen;            /* bumped when RM_CACHE_FUNC answers are forgotten */
    rp_answer answers[RP_ANSWERS];
    rm_ctx cx;
    /* stream captures this process began and has not ended (rp_graph.c), under glock */
    pthread_mutex_t glock;
    _Atomic int captures;          /* open captures: nothing is batched while > 0 */
    _Atomic int iscap_seen;        /* the server answered a capture query of a special stream (rp_graph.c) */
    uint8_t capture_used[RP_CAPTURES];
    uint64_t capture_stream[RP_CAPTURES];
    int32_t e_wrong_thread;        /* CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: an end that did not end it */
    int32_t e_invalidated;         /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: an end that returns no graph */
    uint32_t tls_graph;            /* host TLS key: this thread's kept capture dependencies (rp_graph.c) */
    /* remote.c's routing of one call without managed memory's exchanges (rp_managed.c's own copies) */
    int32_t (*route)(struct rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered);
} rp_state;

/* rp_conn.c: the calls */
int32_t rp_forward(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered, rm_wr *w,
                   uint8_t **reply, size_t *reply_len);
void rp_forward_many(rp_state *s, const rm_plan *pl, uint32_t n, void *const *params, int32_t *results);
/* *ltid (when not NULL): the number of a cuBLASLt descriptor whose Create was queued (rm_ltid.h); 0 otherwise. */
int32_t rp_queue(rp_state *s, const rm_plan *pl, void *params, uint64_t *ltid);
void rp_conn_flush(rp_state *s, int wait);   /* the batch sent; wait: and its replies read */
void rp_conn_close(rp_state *s);
void rp_refuse_once(rp_state *s, const rm_plan *pl, const char *what);
rm_wr *rp_wr(rp_state *s, rm_wr *fallback, int *own);
uint64_t rp_thread_id(rp_state *s);
/* rp_conn.c: the connection's steps, under rp_state.lock (rp_bulk.c builds on them) */
int rp_ready_locked(rp_state *s);
void rp_lost_locked(rp_state *s, int rc);
int32_t rp_status_result(rp_state *s, const rm_plan *pl, uint32_t status);
int rp_send_call_locked(rp_state *s, const rm_wr *w, uint32_t seq);
/* The next message (rm_recv's checks) through the connection's receive buffer, 'in': the only way to read it. */
int rp_recv_locked(rp_state *s, rm_hdr *h);
int rp_send_kind_locked(rp_state *s, uint16_t kind, const rm_wr *w, uint32_t seq);
int rp_send_batch_locked(rp_state *s);
int rp_read_ahead_locked(rp_state *s);
void rp_take_async_err_locked(rp_state *s, const rm_plan *pl, void *retval);

/* rp_jit.c */
/* cuLinkAddFile[_v2], cuModuleLoad, cuLibraryLoadFromFile: 1 when it took the call (*r its result): the file read
   here, sent as cuLinkAddData[_v2], cuModuleLoadData, cuLibraryLoadData. cuLinkCreate[_v2] with options written back
   and cuLinkDestroy: forwarded here, the link recorded and dropped (rp_link_in). */
int rp_jit_pre(rp_state *s, cushim_call *call, int32_t *r);
/* rm_ctx.link_in: a link's kept option outputs into the program's buffers it gave cuLinkCreate (recorded by
   rp_jit_pre when the create succeeded, dropped at cuLinkDestroy). */
int rp_link_in(void *user, uint64_t state, rm_rd *r);
/* An option the codec refused (rm_call.refused, .refused_why): logged once per option and reason. */
void rp_refuse_option_once(rp_state *s, const rm_plan *pl, const char *option, const char *why);

/* rp_bulk.c */
int32_t rp_copy_chunked(rp_state *s, const rm_plan *pl, void *params);

/* rp_shm.c */
int rp_shm_setup_locked(rp_state *s);   /* at connection; RM_OK unless the connection failed */
void rp_shm_forget(rp_state *s);        /* a forked child: the parent's staging area unmapped, its pinned
                                           regions kept as memory but no longer shared */
/* Pinned host memory (cuMemAllocHost, cuMemHostAlloc, cudaMallocHost, cudaHostAlloc): a region shared with the
   back end when there is shared memory (copies from and to it are one DMA), else this process's page-aligned
   heap. 0 and *p, or a driver error code. */
int32_t rp_host_alloc(rp_state *s, size_t size, void **p);
/* Frees a block rp_host_alloc gave: 0, or CUDA_ERROR_INVALID_VALUE's code for any other pointer. */
int32_t rp_host_free(rp_state *s, void *p);
/* rm_ctx.addr_out / addr_in of the client: an address of this process's shared pinned memory as its region and
   offset, and back (cuPointerGetAttribute's 'ptr' and HOST_POINTER, docs/remote.md "Values sized by their
   attribute"). addr_out takes 'lock' (the encoder runs outside it); addr_in runs under it (the reply's decoder). */
int rp_addr_out(void *user, uint64_t addr, uint32_t *region, uint64_t *off);
int rp_addr_in(void *user, uint32_t region, uint64_t off, uint64_t *addr);
/* A byte copy (rm_plan.chunk_*) through the shared memory: *done = 0 when there is none (the caller takes the
   socket's path). pinned_only (a copy on a stream): only from or to a pinned region (zero copy). */
int32_t rp_copy_shm(rp_state *s, const rm_plan *pl, void *params, int pinned_only, int *done);
/* The doorbell for a synchronous call encoded in 'w' (rm_shm.h): NULL when it cannot take it now (no shared
   area, calls queued or unanswered on the socket, a large input). */
rm_bell *rp_bell_locked(rp_state *s, const rm_wr *w);
/* The call rung: its reply's payload in s->rbuf and *h as rm_recv would give them. RM_OK or the socket's error
   (the back end went away). */
int rp_bell_call_locked(rp_state *s, rm_bell *bell, const rm_wr *w, uint32_t seq, rm_hdr *h);

/* rp_cache.c */
int rp_cache_get(rp_state *s, const rm_plan *pl, const rm_wr *key, const rm_call *c, void *retval, uint64_t *gen);
void rp_cache_put(rp_state *s, const rm_plan *pl, const rm_wr *call, const uint8_t *reply, size_t len, uint64_t gen);
void rp_cache_forget_functions(rp_state *s);
void rp_cache_free(rp_state *s);

/* rp_args.c */
int rp_kparam_sizes(void *user, uint64_t func, uint32_t *n, uint32_t *sizes, uint32_t cap);
void rp_kparam_forget(rp_state *s);
const char *rp_intern(void *user, const char *str, size_t n);
const char *rp_ret_text(void *user, const char *str, size_t n);   /* rm_ctx.ret_text: a ring of copies */

/* rp_graph.c */
static inline int rp_capturing(rp_state *s)
{
    return atomic_load_explicit(&s->captures, memory_order_relaxed) > 0;
}
/* Before a call: 1 when rp_graph.c answered it (*r: a refusal, or a host copy made zero copy while capturing). */
int rp_graph_pre(rp_state *s, const rm_plan *pl, void *params, int32_t *r);
/* After a call of a plan with 'capture' set, with the program's result. */
void rp_graph_post(rp_state *s, const rm_plan *pl, void *params, int32_t result);
void rp_graph_forget(rp_state *s);   /* a forked child */
/* cuStreamIsCapturing/cudaStreamIsCapturing[_ptsz]: 1 when it took the call (answered here, or forwarded: *r, and
   *answered as rp_forward's); 0 for any other API. */
int rp_graph_is_capturing(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered, int32_t *r);
int rp_graph_init(rp_state *s, cushim_plugin *self);   /* at load: CUSHIM_OK or the host's error */
/* rm_ctx.keep: an array the server returned for an OWNED_OUT output, kept for this thread (rp_graph.c) */
const void *rp_graph_keep(void *user, uint32_t param, const void *bytes, size_t n);

#endif /* RP_H */
