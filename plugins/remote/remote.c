/*
 * remote.c - the client side of API forwarding (docs/remote.md): every driver call of the program is sent
 * to cushim-serve and answered from there; the program needs no driver of its own.
 *
 * USAGE
 *   LD_LIBRARY_PATH=<build>/dropin CUSHIM_PLUGINS=remote:server=unix:/run/cushim.sock ./app
 *   cushim run --remote=unix:/run/cushim.sock -- ./app
 *   cushim run --remote=tcp://gpu-host:7480 --remote-token-file=/etc/cushim/token -- ./app
 *
 * One pre hook on every driver API (lib:driver, but cuGetProcAddress, which the shim answers itself), and on
 * the runtime, NVML, cuBLAS, cuBLASLt and NCCL but the calls returning error texts (rc_cudart.c: runtime-API
 * programs, preloaded; rp_cublas.c: cuBLAS's pointer-mode scalars, its setters answered here or batched, SGEMMs
 * batched; rp_nccl.c: calls inside an NCCL group batched; cuBLAS and NCCL are interposed where CUSHIM_LIBS names
 * them),
 * registered with CUSHIM_HOOK_SERVE so that it is reached when no libcuda.so.1 is installed. It runs last
 * among pre hooks (other plugins see the call first) and always skips the real function: the call is encoded
 * by its plan (remote/rm_plan.h, from the metadata), sent, and the reply decoded into the program's own
 * output pointers; the result is the server's. An API the plans do not carry returns
 * CUDA_ERROR_NOT_SUPPORTED and is logged once with the reason. A lost connection (the server died) fails the
 * call and every later one with CUDA_ERROR_DEVICE_UNAVAILABLE, at once: the program's GPU state was in the
 * back end that is gone, so nothing reconnects behind its back. A forked child opens a connection (and so a
 * back end) of its own at its first call.
 *
 * How a call goes (rp_pre): an immutable query answered before is answered here (rp_cache.c); a call of the
 * asynchronous class is queued into a batch and returns CUDA_SUCCESS (rp_conn.c, which also says where a
 * batched call's error is reported); a byte copy over RP_CHUNK bytes goes as pipelined chunks; anything else
 * is one synchronous round trip. On a unix socket (unless 'shm=0') the client also shares memory with its back
 * end (rp_shm.c): byte copies go through it (zero copy from and to pinned memory, which cuMemAllocHost,
 * cuMemHostAlloc and cuMemFreeHost answer here), and a synchronous call with nothing in flight rings its doorbell.
 * Host functions (cuLaunchHostFunc, cuStreamAddCallback and the runtime's) run in the calling thread once their
 * stream has drained on the server (rp_hostfn.c). While a stream capture is open nothing is batched, and host copies
 * a graph would replay from the server's staging memory are refused (rp_graph.c).
 * One connection carries a process's calls in order. 'stats=1' prints the calls, round trips, batches, local
 * answers and shared-memory calls at exit, and the APIs with the most synchronous round trips.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rc_cudart.h"
#include "rp_cublas.h"
#include "rp_heur.h"
#include "rp_hostfn.h"
#include "rp_managed.h"
#include "rp_nccl.h"
#include "rm_sock.h"
#include "rp.h"
#include "rm_names.h"

static const cushim_host *rp_host;   /* the host table: the same for every plugin, kept for flush/fork_child */
static rp_state *rp_the;             /* for the pthread_atfork handler, which takes no argument */

static const cushim_option rp_options[] = {
    { "server", CUSHIM_OPT_STRING | CUSHIM_OPT_REQUIRED, NULL,
      "the cushim-serve to forward to (unix:/path, tcp://HOST:PORT, tcp://[IPv6]:PORT)" },
    { "token_file", CUSHIM_OPT_STRING, NULL, "the server's token (a TCP server needs it; mode 0600)" },
    { "stats", CUSHIM_OPT_BOOL, "false", "print the calls forwarded and round trips at exit" },
    { "shm", CUSHIM_OPT_BOOL, "true",
      "copies through a shared memory area when the server is on this host (unix socket); 0: through the socket" },
    { "delay_us", CUSHIM_OPT_INT, "0",
      "test/benchmark knob: a simulated network distance, N microseconds added to each round trip (shm off)" },
    { NULL, 0, NULL, NULL },
};

static void rp_thread_free(void *p)
{
    rm_wr_free(&((rp_thread *)p)->w);
    free(p);
}

/* A query whose answer may be kept: asked here the first time, then answered from the cache. */
static int32_t rp_cached(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered)
{
    int own;
    rm_wr own_wr, *key = rp_wr(s, &own_wr, &own), one;
    rm_call c;
    uint64_t gen = UINT64_MAX;
    uint8_t *reply = NULL;
    size_t len = 0;
    int32_t r;
    key->allow_ref = 0;
    if (atomic_load_explicit(&s->dead, memory_order_relaxed)) {
        r = s->e_unavailable;   /* the answers described a back end that is gone */
    } else if (rm_encode_call(pl, params, &s->cx, key, &c) == RM_OK && rp_cache_get(s, pl, key, &c, retval, &gen)) {
        *answered = 1;
        r = 0;
    } else {
        rm_wr_init(&one, 0);
        r = rp_forward(s, pl, params, retval, answered, &one, &reply, &len);
        rm_wr_free(&one);
        if (*answered && r == 0)
            rp_cache_put(s, pl, key, reply, len, gen);
        free(reply);
    }
    if (own)
        rm_wr_free(key);
    return r;
}

/* One call by its plan: answered from the cache, queued, chunked or forwarded. The result to give the program;
   *answered = 1 when the outputs and the result are the server's. */
static int32_t rp_route(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered)
{
    int own, done;
    int32_t r;
    *answered = 0;
    if ((pl->info->categories & CUSHIM_CAT_MODULE) && strstr(pl->info->name, "Unload") != NULL)
        rp_kparam_forget(s);   /* the unloaded functions' handles may come back for other kernels */
    if ((pl->devcopy_param >= 0 || pl->chunk_host >= 0) && rp_graph_pre(s, pl, params, &r)) {
        /* refused, or made zero copy, because of a stream capture or a graph (rp_graph.c) */
    } else if (pl->nparams == 2 && rp_graph_is_capturing(s, pl, params, retval, answered, &r)) {
        /* a capture query: of a special stream with no capture open, answered here (rp_graph.c) */
    } else if (pl->cache == RM_CACHE_PROCESS || pl->cache == RM_CACHE_FUNC) {
        r = rp_cached(s, pl, params, retval, answered);
    } else if (pl->chunk_host >= 0 && pl->nparams == 4 && s->shm_opt && s->shm_state >= 0 &&
               s->host->api_param(pl->info, (uint32_t)pl->chunk_count)->size == 8 &&
               *(const uint64_t *)((const uint8_t *)params + pl->p[pl->chunk_count].offset) >= RP_SHM_MIN &&
               (r = rp_copy_shm(s, pl, params, 1, &done), done)) {
        /* a copy on a stream from or to pinned memory: zero copy (rp_shm.c) */
    } else if (pl->async != RM_ASYNC_NO && pl->async != RM_ASYNC_GROUP &&
               !rp_capturing(s)) {   /* capturing: each call answered (rp_graph.c); NCCL's groups: rp_pre */
        r = rp_queue(s, pl, params, NULL);
    } else if (pl->chunk_host >= 0 && pl->nparams == 3 && s->shm_opt && s->shm_state >= 0 &&
               s->host->api_param(pl->info, (uint32_t)pl->chunk_count)->size == 8 &&
               *(const uint64_t *)((const uint8_t *)params + pl->p[pl->chunk_count].offset) >= RP_SHM_MIN &&
               (r = rp_copy_shm(s, pl, params, 0, &done), done)) {
        /* through the shared area (rp_shm.c) */
    } else if (pl->chunk_host >= 0 && s->host->api_param(pl->info, (uint32_t)pl->chunk_count)->size == 8 &&
               *(const uint64_t *)((const uint8_t *)params + pl->p[pl->chunk_count].offset) > RP_CHUNK) {
        r = rp_copy_chunked(s, pl, params);
    } else {
        rm_wr own_wr, *w = rp_wr(s, &own_wr, &own);
        r = rp_forward(s, pl, params, retval, answered, w, NULL, NULL);
        if (own)
            rm_wr_free(w);
    }
    if (pl->cache == RM_CACHE_FORGET)
        rp_cache_forget_functions(s);   /* after the call: an answer asked before it is not kept (rp_cache.c) */
    if (pl->capture)
        rp_graph_post(s, pl, params, *answered && pl->ret_status ? *(const int32_t *)retval : r);
    return r;
}

/* rp_route with managed memory's exchanges around it (rp_managed.c): what the host wrote pushed before GPU work,
   the blocks pulled after a synchronisation. */
static int32_t rp_dispatch(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered)
{
    int32_t r = rp_managed_before(s, pl);
    *answered = 0;
    if (r != 0)
        return r;
    r = rp_route(s, pl, params, retval, answered);
    int32_t m = rp_managed_after(s, pl, params, *answered && pl->ret_status ? *(const int32_t *)retval : r);
    if (m != r && r == 0) {   /* the synchronisation ran, the host does not see its results: the pull's error */
        *answered = 0;
        r = m;
    }
    return r;
}

/* ---- runtime and NVML (rc_cudart.c): the calls it makes go the same way ---- */
static int32_t rp_dispatch_rc(void *user, const rm_plan *pl, void *params, void *retval, int *answered)
{
    return rp_dispatch(user, pl, params, retval, answered);
}

/* ---- pinned host memory (rp_shm.c): cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost answered here ---- */
static uint32_t rp_id_alloc_host[2], rp_id_host_alloc, rp_id_free_host;

static uint64_t rp_param(const cushim_host *h, const cushim_call *call, uint32_t i)
{
    const cushim_param_info *p = h->api_param(call->info, i);
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)call->params + p->offset, p->size < 8 ? p->size : 8);
    return v;
}

/* 1 when 'call' is one of them (*r its result). cuMemHostAlloc's CU_MEMHOSTALLOC_DEVICEMAP (a device address for
   the host memory) is not supported: the server's device would map the back end's view of it. */
static int rp_pinned(rp_state *s, cushim_call *call, int32_t *r)
{
    uint32_t id = call->api_id;
    if (id == 0 || (id != rp_id_alloc_host[0] && id != rp_id_alloc_host[1] && id != rp_id_host_alloc &&
                    id != rp_id_free_host))
        return 0;
    if (id == rp_id_free_host) {
        *r = rp_host_free(s, (void *)(uintptr_t)rp_param(s->host, call, 0));
        return 1;
    }
    void **pp = (void **)(uintptr_t)rp_param(s->host, call, 0);
    size_t size = (size_t)rp_param(s->host, call, 1);
    if (pp == NULL) {
        *r = s->e_invalid;
    } else if (id == rp_id_host_alloc && (rp_param(s->host, call, 2) & 2u /* CU_MEMHOSTALLOC_DEVICEMAP */)) {
        rp_refuse_once(s, rm_plan_of(s->plans, id), "CU_MEMHOSTALLOC_DEVICEMAP");
        *r = s->e_not_supported;
    } else {
        *r = rp_host_alloc(s, size, pp);
    }
    return 1;
}

static int32_t rp_host_alloc_rc(void *user, size_t size, void **p)
{
    return rp_host_alloc(user, size, p);
}

static int32_t rp_host_free_rc(void *user, void *p)
{
    return rp_host_free(user, p);
}

/* ---- cuBLAS's fast paths (rp_cublas.c decides, docs/remote.md "cuBLAS and cuBLASLt") ---- */
/* 1 when the call was answered here (*r its status) or batched (*r success, or why it could not be queued). While
   a stream capture is open nothing is batched: the call is forwarded (0). */
static int rp_blas_fast(rp_state *s, cushim_call *call, const rm_plan *pl, const uint64_t epoch[2], int32_t *r)
{
    if (atomic_load_explicit(&s->dead, memory_order_relaxed))
        return 0;   /* what is known here described a back end that is gone: the call fails as any other */
    int how = rp_cublas_route(call, r, epoch);
    if (how == RP_BLAS_LOCAL) {
        atomic_fetch_add_explicit(&s->cached, 1, memory_order_relaxed);
        return 1;
    }
    if ((how != RP_BLAS_BATCH && how != RP_BLAS_CREATE) || rp_capturing(s))
        return 0;
    uint64_t num = 0;
    int32_t q = rp_queue(s, pl, call->params, &num);
    if (q == 0 && how == RP_BLAS_CREATE && num != 0) {   /* the descriptor's number, known without the reply */
        void *out = NULL;
        memcpy(&out, (const uint8_t *)call->params + s->host->api_param(call->info, 0)->offset, sizeof out);
        memcpy(out, &num, sizeof num);
    }
    if (q == 0)
        rp_cublas_after(call, 0, epoch);
    *r = rc_lib_error(call->info->library, q);
    return 1;
}

/* rm_ctx.scalar: cuBLAS's by the pointer mode (rp_cublas.c), NCCL's by the residence (rp_nccl.c) */
static int rp_scalar(void *user, const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes)
{
    if (pl->info->library == CUSHIM_LIB_NCCL)
        return rp_nccl_scalar(pl, param, params, bytes);
    return rp_cublas_scalar(user, pl, param, params, bytes);
}

/* ---- the hook ---- */
static int rp_pre(cushim_call *call, void *user, uint64_t *slot)
{
    rp_state *s = user;
    const rm_plan *pl = rm_plan_of(s->plans, call->api_id);
    int answered = 0;
    int32_t r;
    (void)slot;
    atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
    rc_note_api(call->api_id);   /* a context change: cudaGetDevice asks again (rc_cudart.c) */
    if (call->info->library == CUSHIM_LIB_DRIVER && rp_pinned(s, call, &r))
        return cushim_call_skip(call, r);
    if (rp_hostfn_pre(call, &r))   /* host functions run here (rp_hostfn.c) */
        return cushim_call_skip(call, r);
    if (call->info->library == CUSHIM_LIB_DRIVER && rp_jit_pre(s, call, &r))   /* cuLinkAddFile (rp_jit.c) */
        return cushim_call_skip(call, r);
    if (pl == NULL || (pl->cls != RM_CLASS_FORWARD && pl->cls != RM_CLASS_FORWARD_NULL && pl->cls != RM_CLASS_HAND)) {
        rp_refuse_once(s, pl, "not forwarded");
        return cushim_call_skip(call, rc_lib_error(call->info->library, s->e_not_supported));
    }
    if (call->info->library == CUSHIM_LIB_RUNTIME && rc_pre(call, pl, &r))   /* copies, launches... */
        return cushim_call_skip(call, r);
    uint64_t epoch[2] = { 0, 0 };   /* the thread's device, as of before the call (a heuristic's key) */
    int blas = call->info->library == CUSHIM_LIB_CUBLAS || call->info->library == CUSHIM_LIB_CUBLASLT;
    if (rp_managed_pre(s, call, &r))   /* managed memory: mirrored here (rp_managed.c) */
        return cushim_call_skip(call, r);
    if (blas && (r = rp_managed_before(s, pl)) != 0)   /* the host's writes, before a batched cuBLAS call too */
        return cushim_call_skip(call, rc_lib_error(call->info->library, r));
    if (blas)
        rc_device_epoch(epoch);
    if (blas && rp_blas_fast(s, call, pl, epoch, &r))   /* a setter of the same value, a batched one (rp_cublas.c) */
        return cushim_call_skip(call, r);
    _Alignas(16) uint8_t cfg[RP_NCCL_CONFIG_MAX];
    void **cfg_slot = NULL, *cfg_orig = NULL;
    if (call->info->library == CUSHIM_LIB_NCCL) {
        rp_nccl_config(call, cfg, &cfg_slot, &cfg_orig);   /* an ncclConfig_t as far as the program's goes */
        if (rp_nccl_batched(pl) && !rp_capturing(s)) {
            /* a call inside an NCCL group: its errors come back from the group's end (rp_nccl.c) */
            r = rp_queue(s, pl, call->params, NULL);
            if (cfg_slot != NULL)
                *cfg_slot = cfg_orig;
            return cushim_call_skip(call, rc_lib_error(call->info->library, r));
        }
    }
    r = rp_dispatch(s, pl, call->params, call->retval, &answered);
    if (answered)
        rp_managed_answer(s, call);   /* the managed-access attributes this client gives */
    if (cfg_slot != NULL)
        *cfg_slot = cfg_orig;
    if (!answered && pl->ret_string)
        memcpy(call->retval, &(const char *){ "" }, sizeof(const char *));   /* a text, never NULL: none known */
    else if (!answered)
        cushim_call_set_result(call, rc_lib_error(call->info->library, r));
    else if (blas)
        rp_cublas_after(call, pl->ret_status ? *(const int32_t *)call->retval : 0, epoch);   /* pointer modes... */
    return CUSHIM_SKIP;
}

/* Before fork(): the queued batch is sent, so the parent's calls run before the child's (which has its own
   connection); the parent reads the batch's reply at its next synchronous call. */
static void rp_atfork_prepare(void)
{
    if (rp_the != NULL)
        rp_conn_flush(rp_the, 0);
}

static int rp_init(const cushim_host *host, cushim_plugin *self)
{
    rp_state *s = calloc(1, sizeof *s);
    rm_meta m;
    if (s == NULL)
        return -1;
    if (!CUSHIM_HOST_HAS(host, call_real) || host->abi_version < ((1u << 16) | 1u)) {
        host->log(self, CUSHIM_LOG_ERROR, "needs a shim of SDK ABI 1.1 or newer (CUSHIM_HOOK_SERVE)");
        free(s);
        return -1;
    }
    rp_host = host;
    s->host = host;
    s->self = self;
    s->server = host->opt_string(self, "server");
    s->token_file = host->opt_given(self, "token_file") ? host->opt_string(self, "token_file") : NULL;
    s->stats = host->opt_bool(self, "stats");
    s->shm_opt = host->opt_bool(self, "shm");
    int64_t delay = host->opt_int(self, "delay_us");
    if (delay < 0 || delay > 10000000) {
        host->log(self, CUSHIM_LOG_ERROR, "delay_us=%lld: give 0 to 10000000 microseconds",
                  (long long)delay);
        free(s);
        return -1;
    }
    s->delay_us = (uint32_t)delay;
    if (s->delay_us != 0)
        s->shm_opt = 0;   /* a server at a distance shares no memory: every call crosses the (delayed) socket */
    s->fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->klock, NULL);
    pthread_mutex_init(&s->slock, NULL);
    pthread_mutex_init(&s->clock, NULL);
    pthread_mutex_init(&s->hlock, NULL);
    pthread_mutex_init(&s->glock, NULL);
    rm_wr_init(&s->batch, 0);
    rp_id_alloc_host[0] = rm_api_id(host, "cuMemAllocHost", 0);
    rp_id_alloc_host[1] = rm_api_id(host, "cuMemAllocHost_v2", 0);
    rp_id_host_alloc = rm_api_id(host, "cuMemHostAlloc", 0);
    rp_id_free_host = rm_api_id(host, "cuMemFreeHost", 0);
    rm_meta_from_host(&m, host);
    s->plans = rm_plans_build(&m);
    s->logged = calloc(host->api_id_limit() + 1, 1);
    if (s->stats && s->plans != NULL)   /* where the round trips go (rp_print_sync); none counted: no line */
        s->sync_calls = calloc(s->plans->id_limit, sizeof *s->sync_calls);
    if (s->plans == NULL || s->logged == NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        rm_plans_free(s->plans);
        free((void *)s->logged);
        free(s);
        return -1;
    }
    s->e_not_supported = rm_result_code(host, "CUDA_ERROR_NOT_SUPPORTED", 999);
    s->e_invalid = rm_result_code(host, "CUDA_ERROR_INVALID_VALUE", 999);
    s->e_not_found = rm_result_code(host, "CUDA_ERROR_NOT_FOUND", 999);
    s->e_unavailable = rm_result_code(host, "CUDA_ERROR_DEVICE_UNAVAILABLE", 999);
    s->e_wrong_thread = rm_result_code(host, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 999);
    s->e_invalidated = rm_result_code(host, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", 999);
    s->e_oom = rm_result_code(host, "CUDA_ERROR_OUT_OF_MEMORY", 999);
    s->e_file_not_found = rm_result_code(host, "CUDA_ERROR_FILE_NOT_FOUND", 999);
    s->paraminfo = host->api_by_name("cuFuncGetParamInfo");
    s->route = rp_route;
    if (rp_managed_init(s) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        return -1;
    }
    s->cx = (rm_ctx){ .kparam_sizes = rp_kparam_sizes, .intern = rp_intern, .ret_text = rp_ret_text, .keep = rp_graph_keep, .link_in = rp_link_in,
                      .scalar = rp_scalar, .addr_out = rp_addr_out, .addr_in = rp_addr_in, .user = s };
    rp_cublas_init(host);
    rp_nccl_init(host, self);
    if (host->tls_create(self, rp_thread_free, &s->tls_wr) != CUSHIM_OK || rp_graph_init(s, self) != CUSHIM_OK) {
        host->log(self, CUSHIM_LOG_ERROR, "no TLS key left");
        return -1;
    }
    cushim_hook_spec spec = { .size = sizeof spec, .flags = CUSHIM_HOOK_SERVE,
                              .select = "lib:driver&!base:cuGetProcAddress", .priority = 1 << 30,
                              .pre = rp_pre, .user = s };
    uint64_t group;
    int rc = host->hooks_add(self, &spec, &group);
    if (rc != CUSHIM_OK) {
        host->log(self, CUSHIM_LOG_ERROR, "hooks_add: %d", rc);
        return -1;
    }
    /* the runtime and NVML, answered by the server's own libraries (rc_cudart.c); the calls that return a
       string (error texts) are answered by the client's library, which needs no driver for them */
    /* each with an API that says the build's tree has the library (13.5's has no cuBLAS: 'lib:cublas' would be
       a selector error there, and the plugin would fail closed) */
    static const char *const rp_libs[][2] = {
        { "lib:runtime&!cudaGetErrorName&!cudaGetErrorString", "cudaGetDeviceCount" },
        { "lib:nvml&!nvmlErrorString", "nvmlInit_v2" },
        { "lib:cublas&!cublasGetStatusName&!cublasGetStatusString", "cublasCreate_v2" },
        { "lib:cublaslt&!cublasLtGetStatusName&!cublasLtGetStatusString", "cublasLtCreate" },
        /* NCCL: the texts of its codes are the program's own libnccl's, its last error the server's (rp_nccl.c) */
        { "lib:nccl&!ncclGetErrorString&!pncclGetErrorString",
          "ncclGetUniqueId" } };
    rp_hostfn_init(host, self, s->plans, rp_dispatch_rc, s, s->e_invalid, s->e_not_supported);
    if (rc_init(host, self, s->plans, rp_dispatch_rc, rp_host_alloc_rc, rp_host_free_rc, s) != 0)   /* logged; the driver is forwarded still */
        host->log(self, CUSHIM_LOG_WARN, "runtime programs' launches and copies are not forwarded");
    for (size_t i = 0; i < sizeof rp_libs / sizeof rp_libs[0]; i++) {
        if (host->api_by_name(rp_libs[i][1]) == NULL)
            continue;   /* not in this build's tree */
        spec.select = rp_libs[i][0];
        if ((rc = host->hooks_add(self, &spec, &group)) != CUSHIM_OK && rc != CUSHIM_ENOMATCH) {
            host->log(self, CUSHIM_LOG_ERROR, "hooks_add(%s): %d", rp_libs[i][0], rc);
            return -1;
        }
    }
    host->plugin_set_data(self, s);
    rp_the = s;
    pthread_atfork(rp_atfork_prepare, NULL, NULL);   /* glibc drops it if this plugin is unloaded */
    return 0;
}

/* The child of fork(): the parent's connection (and back end) is the parent's; the child gets its own at its
   first call, as a CUDA context does not survive fork() either. What the parent had queued is the parent's
   (sent before the fork); function handles of its back end mean nothing in the child's. */
static void rp_fork_child(cushim_plugin *self)
{
    rp_state *s = rp_host ? rp_host->plugin_data(self) : NULL;
    struct stat st;
    if (s == NULL)
        return;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->klock, NULL);
    pthread_mutex_init(&s->slock, NULL);
    pthread_mutex_init(&s->clock, NULL);
    pthread_mutex_init(&s->hlock, NULL);
    pthread_mutex_init(&s->glock, NULL);
    if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->fd_dev && st.st_ino == s->fd_ino)
        close(s->fd);
    s->fd = -1;
    s->dead = 0;
    s->seq = 0;
    s->batch_n = 0;
    s->ahead = 0;
    s->async_err = 0;
    s->async_blas_err = 0;
    s->async_nccl_err = 0;
    s->batches_sent = s->batches_read = 0;
    s->lt_creates = 0;   /* its back end numbers its own cuBLAS handles and cuBLASLt descriptors */
    s->thread_sent = 0;   /* the child's server knows none of its threads yet */
    s->batch_tid = 0;
    s->in_flight = 0;
    s->delays = 0;
    rm_wr_reset(&s->batch);
    rp_shm_forget(s);   /* the parent's area: the child's connection makes its own */
    rp_cache_forget_functions(s);
    rp_kparam_forget(s);
    rp_graph_forget(s);   /* its back end has no capture open */
    rc_fork_child();   /* the runtime's modules were the parent's back end's */
    rp_cublas_fork_child();   /* and so were its cuBLAS handles */
    rp_heur_fork_child();
    rp_managed_fork_child();  /* and its managed memory */
    rp_nccl_fork_child();     /* and its NCCL groups */
    atomic_store(&s->calls, 0);
    atomic_store(&s->trips, 0);
    atomic_store(&s->batched, 0);
    atomic_store(&s->batches, 0);
    atomic_store(&s->cached, 0);
    atomic_store(&s->chunks, 0);
    atomic_store(&s->shm_chunks, 0);
    atomic_store(&s->zero_copies, 0);
    atomic_store(&s->bell_calls, 0);
    for (uint32_t i = 0; s->sync_calls != NULL && i < s->plans->id_limit; i++)
        atomic_store(&s->sync_calls[i], 0);
}

/* stats=1: the APIs that made the most synchronous round trips, most first (at most RP_SYNC_TOP), so that a run
   shows where its round trips go: "remote: pid N: sync: cublasSetStream_v2 3200, cudaGetDevice 120". */
#define RP_SYNC_TOP 8
static void rp_print_sync(rp_state *s)
{
    uint32_t top[RP_SYNC_TOP], cnt[RP_SYNC_TOP], n = 0;
    char line[1024];
    int len;
    if (s->sync_calls == NULL)
        return;
    for (uint32_t id = 0; id < s->plans->id_limit; id++) {
        uint32_t c = atomic_load_explicit(&s->sync_calls[id], memory_order_relaxed), k;
        if (c == 0 || (n == RP_SYNC_TOP && c <= cnt[n - 1]))
            continue;
        if (n < RP_SYNC_TOP)
            n++;
        for (k = n - 1; k > 0 && cnt[k - 1] < c; k--) {   /* an insertion: ties keep the lower id first */
            top[k] = top[k - 1];
            cnt[k] = cnt[k - 1];
        }
        top[k] = id;
        cnt[k] = c;
    }
    if (n == 0)
        return;
    len = snprintf(line, sizeof line, "remote: pid %d: sync:", (int)getpid());
    for (uint32_t k = 0; k < n && len > 0 && (size_t)len < sizeof line; k++) {
        const rm_plan *pl = rm_plan_of(s->plans, top[k]);
        len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %u", k ? "," : "",
                        pl != NULL ? pl->info->name : "?", cnt[k]);
    }
    fprintf(stderr, "%s\n", line);
}

/* At exit: the queued calls sent and answered, the counts asked for, the connection closed (the back end
   then exits). */
static void rp_flush(cushim_plugin *self)
{
    rp_state *s = rp_host ? rp_host->plugin_data(self) : NULL;
    if (s == NULL)
        return;
    rp_conn_flush(s, 1);
    if (s->stats && atomic_load(&s->calls) != 0)
        fprintf(stderr, "remote: pid %d: %llu driver calls, %llu round trips to %s (%llu asynchronous in %llu "
                "batches, %llu answered locally, %llu copy chunks, %llu through shared memory, %llu zero-copy, %llu calls by doorbell)\n", (int)getpid(),
                (unsigned long long)atomic_load(&s->calls), (unsigned long long)atomic_load(&s->trips), s->server,
                (unsigned long long)atomic_load(&s->batched), (unsigned long long)atomic_load(&s->batches),
                (unsigned long long)(atomic_load(&s->cached) + rc_local_answers()),
                (unsigned long long)atomic_load(&s->chunks),
                (unsigned long long)atomic_load(&s->shm_chunks), (unsigned long long)atomic_load(&s->zero_copies),
                (unsigned long long)atomic_load(&s->bell_calls));
    if (s->stats && atomic_load(&s->calls) != 0) {
        rp_print_sync(s);
        rp_managed_stats(stderr);
    }
    rp_conn_close(s);
}

static const cushim_plugin_def rp_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "remote",
    .version = "0.2",
    .description = "forwards every driver, runtime, NVML, cuBLAS, cuBLASLt and NCCL call to cushim-serve (docs/remote.md)",
    .options = rp_options,
    .init = rp_init,
    .flush = rp_flush,
    .fork_child = rp_fork_child,
};
CUSHIM_PLUGIN(rp_def)
