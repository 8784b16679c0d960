/*
 * remote.c - the client side of API forwarding (docs/remote.md): every driver call of the program is sent
 * to cushim-serve and answered from there; the program needs no driver of its own.
 *
 * USAGE
 *   LD_LIBRARY_PATH=<build>/dropin CUSHIM_PLUGINS=remote:server=unix:/run/cushim.sock ./app
 *   cushim run --dropin --remote-server=unix:/run/cushim.sock -- ./app
 *
 * One pre hook on every driver API (lib:driver, but cuGetProcAddress, which the shim answers itself),
 * registered with CUSHIM_HOOK_SERVE so that it is reached when no libcuda.so.1 is installed. It runs last
 * among pre hooks (other plugins see the call first) and always skips the real function: the call is encoded
 * by its plan (remote/rm_plan.h, from the metadata), sent, and the reply decoded into the program's own
 * output pointers; the result is the server's. An API the plans do not carry returns
 * CUDA_ERROR_NOT_SUPPORTED and is logged once with the reason. A lost connection (the server died) fails the
 * call and every later one with CUDA_ERROR_DEVICE_UNAVAILABLE, at once: the program's GPU state was in the
 * back end that is gone, so nothing reconnects behind its back. A forked child opens a connection (and so a
 * back end) of its own at its first call.
 *
 * Calls are synchronous, one at a time over one connection (a mutex): the asynchronous class, batching,
 * answers from a local cache and one server thread per client thread are the next bricks (docs/remote.md).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cushim/cushim.h"
#include "rc_cudart.h"
#include "rm_codec.h"
#include "rm_sock.h"

typedef struct rp_kentry {
    uint64_t func;                 /* 0: free */
    uint32_t n;
    uint32_t *sizes;
} rp_kentry;

#define RP_KCACHE 1024             /* functions whose argument sizes are kept (a full table asks again) */
#define RP_STRINGS 4096            /* distinct strings the server returned, kept for the process's life */

static const cushim_host *rp_host;   /* the host table: the same for every plugin, kept for flush/fork_child */

typedef struct rp_state {
    const cushim_host *host;
    cushim_plugin *self;
    rm_plans *plans;
    const char *server;
    int stats;
    pthread_mutex_t lock;          /* the connection: one call at a time */
    int fd;                        /* -1: not connected (yet) */
    int dead;                      /* the connection was lost: every call fails */
    dev_t fd_dev;                  /* the socket's identity (fork_child closes only ours) */
    ino_t fd_ino;
    uint32_t seq;
    uint8_t *rbuf;
    size_t rcap;
    _Atomic uint64_t calls, trips;
    _Atomic uint8_t *logged;       /* per API id: its refusal was logged */
    int32_t e_not_supported, e_invalid, e_not_found, e_unavailable, e_oom;
    const cushim_api_info *paraminfo;
    uint32_t tls_wr;               /* host TLS key: this thread's encoding buffer (kept: no page faults a call) */
    pthread_mutex_t klock;
    rp_kentry kcache[RP_KCACHE];
    pthread_mutex_t slock;
    char *strings[RP_STRINGS];
    uint32_t nstrings;
    rm_ctx cx;
} rp_state;

static const cushim_option rp_options[] = {
    { "server", CUSHIM_OPT_STRING | CUSHIM_OPT_REQUIRED, NULL, "the cushim-serve to forward to (unix:/path)" },
    { "stats", CUSHIM_OPT_BOOL, "false", "print the calls forwarded and round trips at exit" },
    { NULL, 0, NULL, NULL },
};

static int32_t rp_code(const cushim_host *h, const char *name)
{
    uint32_t kind;
    int32_t code = 999;   /* CUDA_ERROR_UNKNOWN */
    h->result_by_name(name, &kind, &code);
    return code;
}

/* ---- strings the server returned (cuGetErrorName...): kept once each, never freed ---- */
static const char *rp_intern(void *user, const char *str, size_t n)
{
    rp_state *s = user;
    const char *r = NULL;
    pthread_mutex_lock(&s->slock);
    for (uint32_t i = 0; i < s->nstrings && r == NULL; i++)
        if (strncmp(s->strings[i], str, n) == 0 && s->strings[i][n] == '\0')
            r = s->strings[i];
    if (r == NULL && s->nstrings < RP_STRINGS && (s->strings[s->nstrings] = strndup(str, n)) != NULL)
        r = s->strings[s->nstrings++];
    pthread_mutex_unlock(&s->slock);
    return r;
}

/* ---- the connection ---- */
static int rp_connect_locked(rp_state *s)
{
    char err[256];
    rm_hello hello;
    rm_hdr h;
    int fd = rm_connect(s->server, err, sizeof err);
    if (fd < 0) {
        s->host->log(s->self, CUSHIM_LOG_ERROR, "%s: CUDA calls fail with CUDA_ERROR_DEVICE_UNAVAILABLE", err);
        s->dead = 1;
        return -1;
    }
    rm_hello_make(&hello, s->plans, s->host->version(), (uint32_t)getpid());
    if (rm_send(fd, RM_MSG_HELLO, 0, &hello, sizeof hello) != RM_OK || rm_recv(fd, &h, &s->rbuf, &s->rcap) != RM_OK ||
        h.kind != RM_MSG_HELLO || h.length != sizeof hello) {
        s->host->log(s->self, CUSHIM_LOG_ERROR, "%s: no hello from the server (not cushim-serve, or another wire "
                     "version than %u?): CUDA calls fail", s->server, RM_WIRE_VERSION);
        close(fd);
        s->dead = 1;
        return -1;
    }
    memcpy(&hello, s->rbuf, sizeof hello);
    if (hello.status != RM_HELLO_OK) {
        s->host->log(s->self, CUSHIM_LOG_ERROR, "%s refused this client (%s): CUDA calls fail", s->server,
                     hello.status == RM_HELLO_REFUSED_VERSION ? "wire version" : "ABI");
        close(fd);
        s->dead = 1;
        return -1;
    }
    if (hello.tree_hash != s->plans->tree_hash)
        s->host->log(s->self, CUSHIM_LOG_WARN, "%s serves '%.*s', this client is '%s': the APIs whose layout "
                     "differs fail with CUDA_ERROR_NOT_SUPPORTED", s->server, RM_TREE_NAME_LEN, hello.tree,
                     s->host->version());
    struct stat st;
    if (fstat(fd, &st) == 0) {
        s->fd_dev = st.st_dev;
        s->fd_ino = st.st_ino;
    }
    s->fd = fd;
    return 0;
}

static void rp_lost_locked(rp_state *s, int rc)
{
    s->host->log(s->self, CUSHIM_LOG_ERROR, "lost the connection to %s (%s): this and every later CUDA call fail "
                 "with CUDA_ERROR_DEVICE_UNAVAILABLE (the GPU state lived in the server's back end)", s->server,
                 rc == RM_ECLOSED ? "closed by the server" : "read/write error");
    close(s->fd);
    s->fd = -1;
    s->dead = 1;
}

static void rp_refuse_once(rp_state *s, const rm_plan *pl, const char *what)
{
    if (pl != NULL && pl->id < s->plans->id_limit && atomic_exchange(&s->logged[pl->id], 1) == 0)
        s->host->log(s->self, CUSHIM_LOG_WARN, "%s: %s (%s): returns CUDA_ERROR_NOT_SUPPORTED",
                     pl->info->name, what, pl->reason ? pl->reason : rm_class_name(pl->cls));
}

static void rp_wr_free(void *p)
{
    rm_wr_free(p);
    free(p);
}

/* This thread's encoding buffer, emptied; a fresh one when TLS is not available. *own: the caller frees it. */
static rm_wr *rp_wr(rp_state *s, rm_wr *fallback, int *own)
{
    rm_wr *w = s->host->tls_get(s->tls_wr);
    *own = 0;
    if (w == NULL && (w = malloc(sizeof *w)) != NULL) {
        rm_wr_init(w, 0);
        if (s->host->tls_set(s->tls_wr, w) != CUSHIM_OK) {
            free(w);
            w = NULL;
        }
    }
    if (w == NULL) {   /* no memory for the thread's record: this call's own buffer */
        rm_wr_init(fallback, 0);
        *own = 1;
        return fallback;
    }
    rm_wr_reset(w);
    return w;
}

/* One call: encoded, sent, answered. Returns the CUresult to give the program; on the server's answer the
   result (and the outputs) are already written to 'retval' and the program's pointers: *answered = 1. */
static int32_t rp_forward(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered)
{
    rm_wr own_wr, *w;
    rm_call c;
    rm_hdr h;
    uint32_t status = RM_ST_MALFORMED;
    int32_t result;
    int own;
    *answered = 0;
    /* a nested call (kernel argument sizes, asked while encoding a launch) gets a buffer of its own */
    w = s->cx.kparam_sizes != NULL && pl->info == s->paraminfo ? (rm_wr_init(&own_wr, 0), own = 1, &own_wr)
                                                               : rp_wr(s, &own_wr, &own);
    int rc = rm_encode_call(pl, params, &s->cx, w, &c);   /* outside the lock: it may ask the server itself */
    if (rc != RM_OK) {
        if (own)
            rm_wr_free(w);
        if (rc == RM_EUNSUPPORTED) {
            rp_refuse_once(s, pl, "an argument the codec cannot carry");
            return s->e_not_supported;
        }
        return rc == RM_ENOMEM ? s->e_oom : s->e_invalid;   /* a negative count, a size over the wire's bound */
    }
    pthread_mutex_lock(&s->lock);
    if (s->dead || (s->fd < 0 && rp_connect_locked(s) != 0)) {
        pthread_mutex_unlock(&s->lock);
        if (own)
            rm_wr_free(w);
        return s->e_unavailable;
    }
    uint32_t seq = ++s->seq;
    rc = rm_send(s->fd, RM_MSG_CALL, seq, w->p, w->len);
    if (rc == RM_OK)
        rc = rm_recv(s->fd, &h, &s->rbuf, &s->rcap);
    if (rc == RM_OK && (h.kind != RM_MSG_REPLY || h.seq != seq))
        rc = RM_EMALFORMED;
    if (rc == RM_OK)
        rc = rm_decode_reply(&c, retval, s->rbuf, h.length, &s->cx, &status);
    if (rc != RM_OK)
        rp_lost_locked(s, rc);
    pthread_mutex_unlock(&s->lock);
    if (own)
        rm_wr_free(w);
    atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
    if (rc != RM_OK)
        return s->e_unavailable;
    switch (status) {
    case RM_ST_OK:
        *answered = 1;
        memcpy(&result, retval, sizeof result);
        return result;
    case RM_ST_UNKNOWN_API:
    case RM_ST_LAYOUT:
    case RM_ST_REFUSED:
        rp_refuse_once(s, pl, status == RM_ST_REFUSED ? "refused by the server" : "unknown to the server's tree");
        return s->e_not_supported;
    case RM_ST_NO_FUNCTION:
        return s->e_not_found;
    case RM_ST_TOO_LARGE:
        return s->e_oom;
    default:
        return s->e_invalid;
    }
}

/* ---- kernel argument sizes: cuFuncGetParamInfo, asked of the server once per function ---- */
static int rp_paraminfo(rp_state *s, uint64_t func, size_t index, size_t *size)
{
    const cushim_api_info *a = s->paraminfo;
    const rm_plan *pl = a ? rm_plan_of(s->plans, a->id) : NULL;
    uint8_t params[64] = {0};
    size_t off = 0, *po = &off;
    int32_t ret = -1;
    int answered;
    if (pl == NULL || a->params_size > sizeof params)
        return -1;
    memcpy(params + s->host->api_param(a, 0)->offset, &func, sizeof func);
    memcpy(params + s->host->api_param(a, 1)->offset, &index, sizeof index);
    memcpy(params + s->host->api_param(a, 2)->offset, &po, sizeof po);
    memcpy(params + s->host->api_param(a, 3)->offset, &size, sizeof size);
    int32_t r = rp_forward(s, pl, params, &ret, &answered);
    return answered ? ret : r;
}

static int rp_kparam_sizes(void *user, uint64_t func, uint32_t *n, uint32_t *sizes, uint32_t cap)
{
    rp_state *s = user;
    uint32_t slot = (uint32_t)((func >> 4) * 2654435761u) % RP_KCACHE;
    pthread_mutex_lock(&s->klock);
    for (uint32_t k = 0; k < RP_KCACHE; k++) {
        rp_kentry *e = &s->kcache[(slot + k) % RP_KCACHE];
        if (e->func == 0)
            break;
        if (e->func == func && e->n <= cap) {
            *n = e->n;
            memcpy(sizes, e->sizes, e->n * sizeof *sizes);
            pthread_mutex_unlock(&s->klock);
            return RM_OK;
        }
    }
    pthread_mutex_unlock(&s->klock);
    uint32_t i;
    for (i = 0; i < cap; i++) {
        size_t size = 0;
        int r = rp_paraminfo(s, func, i, &size);
        if (r == s->e_invalid)
            break;   /* past the last parameter */
        if (r != 0 || size > RM_MAX_KPARAM_BYTES) {
            s->host->log(s->self, CUSHIM_LOG_WARN, "the server's driver does not give the parameter sizes of "
                         "function %#llx (cuFuncGetParamInfo: %d): its launches fail", (unsigned long long)func, r);
            return RM_EUNSUPPORTED;
        }
        sizes[i] = (uint32_t)size;
    }
    *n = i;
    pthread_mutex_lock(&s->klock);
    for (uint32_t k = 0; k < RP_KCACHE; k++) {
        rp_kentry *e = &s->kcache[(slot + k) % RP_KCACHE];
        if (e->func == 0 && (e->sizes = malloc((i ? i : 1) * sizeof *sizes)) != NULL) {
            memcpy(e->sizes, sizes, i * sizeof *sizes);
            e->n = i;
            e->func = func;
            break;
        }
    }
    pthread_mutex_unlock(&s->klock);
    return RM_OK;
}

/* ---- runtime and NVML (rc_cudart.c): the forwarding it uses ---- */
static int32_t rp_forward_rc(void *user, const rm_plan *pl, void *params, void *retval, int *answered)
{
    return rp_forward(user, pl, params, retval, answered);
}

/* ---- the hook ---- */
static int rp_pre(cushim_call *call, void *user, uint64_t *slot)
{
    rp_state *s = user;
    const rm_plan *pl = rm_plan_of(s->plans, call->api_id);
    int answered;
    int32_t rc_result;
    (void)slot;
    atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
    if (pl == NULL || (pl->cls != RM_CLASS_FORWARD && pl->cls != RM_CLASS_FORWARD_NULL && pl->cls != RM_CLASS_HAND)) {
        rp_refuse_once(s, pl, "not forwarded");
        return cushim_call_skip(call, rc_lib_error(call->info->library, s->e_not_supported));
    }
    if (call->info->library == CUSHIM_LIB_RUNTIME && rc_pre(call, pl, &rc_result))   /* copies, launches... */
        return cushim_call_skip(call, rc_result);
    if ((pl->info->categories & CUSHIM_CAT_MODULE) && strstr(pl->info->name, "Unload") != NULL) {
        pthread_mutex_lock(&s->klock);   /* the unloaded functions' handles may come back for other kernels */
        for (uint32_t k = 0; k < RP_KCACHE; k++) {
            free(s->kcache[k].sizes);
            s->kcache[k] = (rp_kentry){ 0 };
        }
        pthread_mutex_unlock(&s->klock);
    }
    int32_t r = rp_forward(s, pl, call->params, call->retval, &answered);
    if (!answered)
        cushim_call_set_result(call, rc_lib_error(call->info->library, r));
    return CUSHIM_SKIP;
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
    s->stats = host->opt_bool(self, "stats");
    s->fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->klock, NULL);
    pthread_mutex_init(&s->slock, NULL);
    rm_meta_from_host(&m, host);
    s->plans = rm_plans_build(&m);
    s->logged = calloc(host->api_id_limit() + 1, 1);
    if (s->plans == NULL || s->logged == NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        rm_plans_free(s->plans);
        free((void *)s->logged);
        free(s);
        return -1;
    }
    s->e_not_supported = rp_code(host, "CUDA_ERROR_NOT_SUPPORTED");
    s->e_invalid = rp_code(host, "CUDA_ERROR_INVALID_VALUE");
    s->e_not_found = rp_code(host, "CUDA_ERROR_NOT_FOUND");
    s->e_unavailable = rp_code(host, "CUDA_ERROR_DEVICE_UNAVAILABLE");
    s->e_oom = rp_code(host, "CUDA_ERROR_OUT_OF_MEMORY");
    s->paraminfo = host->api_by_name("cuFuncGetParamInfo");
    s->cx = (rm_ctx){ .kparam_sizes = rp_kparam_sizes, .intern = rp_intern, .user = s };
    if (host->tls_create(self, rp_wr_free, &s->tls_wr) != CUSHIM_OK) {
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
    static const char *const rp_libs[] = { "lib:runtime&!cudaGetErrorName&!cudaGetErrorString",
                                           "lib:nvml&!nvmlErrorString" };
    if (rc_init(host, self, s->plans, rp_forward_rc, s) != 0)   /* logged; the driver is forwarded still */
        host->log(self, CUSHIM_LOG_WARN, "runtime programs' launches and copies are not forwarded");
    for (size_t i = 0; i < sizeof rp_libs / sizeof rp_libs[0]; i++) {
        spec.select = rp_libs[i];
        if ((rc = host->hooks_add(self, &spec, &group)) != CUSHIM_OK && rc != CUSHIM_ENOMATCH) {
            host->log(self, CUSHIM_LOG_ERROR, "hooks_add(%s): %d", rp_libs[i], rc);
            return -1;
        }
    }
    host->plugin_set_data(self, s);
    return 0;
}

/* The child of fork(): the parent's connection (and back end) is the parent's; the child gets its own at its
   first call, as a CUDA context does not survive fork() either. */
static void rp_fork_child(cushim_plugin *self)
{
    rp_state *s = rp_host ? rp_host->plugin_data(self) : NULL;
    struct stat st;
    if (s == NULL)
        return;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->klock, NULL);
    pthread_mutex_init(&s->slock, NULL);
    if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->fd_dev && st.st_ino == s->fd_ino)
        close(s->fd);
    s->fd = -1;
    s->dead = 0;
    s->seq = 0;
    rc_fork_child();   /* the runtime's modules were the parent's back end's */
    atomic_store(&s->calls, 0);
    atomic_store(&s->trips, 0);
}

/* At exit: the counts asked for, and the connection closed (the back end then exits). */
static void rp_flush(cushim_plugin *self)
{
    rp_state *s = rp_host ? rp_host->plugin_data(self) : NULL;
    if (s == NULL)
        return;
    if (s->stats && atomic_load(&s->calls) != 0)
        fprintf(stderr, "remote: pid %d: %llu driver calls, %llu round trips to %s\n", (int)getpid(),
                (unsigned long long)atomic_load(&s->calls), (unsigned long long)atomic_load(&s->trips), s->server);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->dead = 1;
}

static const cushim_plugin_def rp_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "remote",
    .version = "0.1",
    .description = "forwards every driver call to cushim-serve (docs/remote.md)",
    .options = rp_options,
    .init = rp_init,
    .flush = rp_flush,
    .fork_child = rp_fork_child,
};
CUSHIM_PLUGIN(rp_def)
