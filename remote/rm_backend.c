/*
 * rm_backend.c - one back end: the process cushim-serve forks for one client (docs/remote.md, "Trust model").
 *
 * It first reads the client's hello and, when the server has a token, checks the client's proof of it (rm_auth.h),
 * with a time limit and before loading anything: an unauthenticated peer reaches only rm_recv_max's header check (a
 * hello of at most RM_HELLO_MAX bytes, a 32-byte proof), rm_hello_check and rm_auth_verify. Then it loads the shim
 * (libcuda's stand-in, given by path), so each client gets a driver and plugins of its own, and reaches everything
 * through the shim's host table: the metadata (the same plans as the client's) and host->call, which runs each call
 * as a program's own call runs, through the hooks of the plugins CUSHIM_PLUGINS loads here (memlimit's quota,
 * smlimit, trace) and then the driver this process loaded (the fake one in CI). Every call is decoded into the
 * arena, run, answered, and the arena reset: nothing a client sends can make the back end read or write outside the
 * message and its arena, and one client's back end holds no other's state. The loop ends when the client closes the
 * connection (or dies), and the process exits normally, so the driver's and the plugins' exit handlers run.
 * A client on the same host may share memory with it (rb_shm.c: regions, copies through them, the doorbell).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rb_libs.h"
#include "rb_state.h"
#include "rm_auth.h"
#include "rm_backend.h"
#include "rm_sock.h"

static uint32_t rb_sizes_hash(uint32_t n, const uint32_t *sizes)
{
    uint32_t h = 2166136261u ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ sizes[i]) * 16777619u;
    return h;
}

void rb_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cushim-serve[%d]: %s\n", (int)getpid(), line);
}

/* The argument sizes of a launch against the driver's own answer (cuFuncGetParamInfo), when it gives one:
   a client that sends fewer arguments than the kernel takes would have the driver read past them. */
static int rb_kcheck(void *user, uint64_t func, uint32_t n, const uint32_t *sizes)
{
    rb_state *b = user;
    const cushim_api_info *a = b->paraminfo;
    rb_kchecked *k = &b->kchecked[(func >> 4) % RB_KCHECKED];
    uint32_t hash = rb_sizes_hash(n, sizes);
    if (a == NULL || a->params_size > 64 || (k->func == func && k->n == n && k->hash == hash))
        return RM_OK;   /* checked before (the cache is emptied when a module or library is unloaded) */
    k->func = 0;
    for (uint32_t i = 0; i <= n; i++) {
        uint8_t params[64] = {0};
        size_t index = i, off = 0, size = 0;
        size_t *po = &off, *ps = &size;
        int32_t ret = -1;
        const cushim_param_info *p0 = b->host->api_param(a, 0), *p1 = b->host->api_param(a, 1),
                                *p2 = b->host->api_param(a, 2), *p3 = b->host->api_param(a, 3);
        memcpy(params + p0->offset, &func, sizeof func);
        memcpy(params + p1->offset, &index, sizeof index);
        memcpy(params + p2->offset, &po, sizeof po);
        memcpy(params + p3->offset, &ps, sizeof ps);
        if (b->host->call_real(a->id, params, &ret) != CUSHIM_OK)
            return RM_OK;   /* the driver has no such function: nothing to check against */
        if (i == 0 && ret != 0 && ret != 1 /* CUDA_ERROR_INVALID_VALUE: a kernel without parameters */)
            return RM_OK;   /* not answered for this function (CUDA_ERROR_NOT_SUPPORTED...) */
        if (i < n && (ret != 0 || size != sizes[i]))
            return RM_EMALFORMED;
        if (i == n && ret == 0)
            return RM_EMALFORMED;   /* the kernel takes more arguments than were sent */
    }
    *k = (rb_kchecked){ .func = func, .n = n, .hash = hash };
    return RM_OK;
}

/* One CALL payload: decode, run, encode the reply into 'w'. The reply's status says what happened. 'shm': an
   RM_MSG_SHM_CALL's region (the copy's host buffer at 'shm_off' in it), NULL for a plain call. */
static void rb_call(rb_state *b, const rm_ctx *cx, const uint8_t *msg, size_t len, rb_region *shm, uint64_t shm_off,
                    rm_wr *w, uint32_t *ran_status, uint8_t *ret, uint32_t *ret_size)
{
    rm_call c;
    uint32_t status, id = 0;
    if (len >= 4)
        memcpy(&id, msg, 4);
    const rm_plan *pl = rm_plan_of(b->plans, id);
    if (pl != NULL && (pl->info->library == CUSHIM_LIB_CUBLAS || pl->info->library == CUSHIM_LIB_CUBLASLT))
        rb_load_blas();   /* at the first call (rb_libs.c): before the decoder asks it a handle's pointer mode */
    if (pl != NULL && pl->info->library == CUSHIM_LIB_NCCL)
        rb_load_nccl();   /* likewise (rb_libs.c) */
    int rc = rm_decode_call(b->plans, msg, len, &b->arena, cx, &c, &status);
    memset(ret, 0, 64);
    *ret_size = 0;
    int bad_handle = 0;   /* answered here, not run: a library handle that is not a live number (rm_num.h) */
    if (rc == RM_OK && (rc = rb_num_pre(b, &c, ret)) == RM_NUM_BAD_HANDLE) {
        rc = RM_OK;
        bad_handle = 1;
        *ret_size = c.plan->info->ret_size <= 64 ? c.plan->info->ret_size : 0;
    } else if (rc != RM_OK) {
        status = RM_ST_MALFORMED;
    }
    if (rc == RM_OK && (rc = rb_link_pre(b, &c)) != RM_OK)   /* a link's kept option outputs (rb_link.c) */
        status = RM_ST_TOO_LARGE;
    if (rc == RM_OK && shm != NULL && (shm->map == NULL || rm_shm_place(&c, shm_off, shm->map, shm->usable, shm != &b->shm[0]) != RM_OK)) {
        rc = RM_EMALFORMED;   /* no such region, not a byte copy, or outside the region: not run */
        status = RM_ST_MALFORMED;
    }
    if (rc == RM_OK && shm != NULL && shm->pinned == 0)
        rb_shm_pin(b, shm);
    int32_t refused = 0;
    if (rc == RM_OK && bad_handle) {
        /* answered by rb_num_pre */
    } else if (rc == RM_OK && rb_ipc_pre(b, &c, &refused)) {   /* another tenant's IPC handle (rb_ipc.c): not run */
        memcpy(ret, &refused, sizeof refused);
        *ret_size = c.plan->info->ret_size;
    } else if (rc == RM_OK) {
        if (c.plan->info->categories & CUSHIM_CAT_MODULE && strstr(c.plan->info->name, "Unload") != NULL)
            memset(b->kchecked, 0, sizeof b->kchecked);   /* its function handles may come back for other kernels */
        /* host->call: through the hooks, as the client's program called it (a server-side quota applies) */
        if (c.plan->info->ret_size > 64 || b->host->real(c.plan->id) == NULL ||
            b->host->call(c.plan->id, c.params, ret) != CUSHIM_OK)
            status = RM_ST_NO_FUNCTION;
        else
            *ret_size = c.plan->info->ret_size;
        int32_t result = 0;
        memcpy(&result, ret, sizeof result);
        rb_num_post(b, &c, status == RM_ST_OK, result);
        rb_link_post(b, &c, status == RM_ST_OK, result);
        if (status == RM_ST_OK)
            rb_ipc_post(b, &c, result);   /* an export recorded with this client's identity */
        if (shm != NULL)
            rm_shm_unplace(&c);   /* the bytes are in the area: none go in the reply */
    }
    if (bad_handle)
        rb_log("%s: a handle this back end did not give (or destroyed): answered as a bad handle, not run",
               c.plan->info->name);
    else if (b->verbose || (status != RM_ST_OK && status != RM_ST_NO_FUNCTION))
        rb_log("%s: %s", c.plan ? c.plan->info->name : "?",
               status == RM_ST_OK ? "ran" : status == RM_ST_UNKNOWN_API ? "unknown API id" :
               status == RM_ST_LAYOUT ? "layout differs from this server's tree" :
               status == RM_ST_REFUSED ? "not forwarded (class)" : status == RM_ST_TOO_LARGE ? "too large" :
               "malformed");
    rm_encode_reply(rc == RM_OK ? &c : NULL, id, status, ret, w);
    rb_link_done(b);   /* the reply copied a failed create's logs */
    *ran_status = status;
    /* the arena is reset by the caller once the reply is sent: a large output is sent from it (w->ref) */
}

/* rb_call on the server thread of the client thread that sent it (rm_workers.h). */
typedef struct rb_job {
    rb_state *b;
    const rm_ctx *cx;
    const uint8_t *msg;
    size_t len;
    rb_region *shm;
    uint64_t shm_off;
    rm_wr *w;
    uint32_t *status, *ret_size;
    uint8_t *ret;
} rb_job;

static void rb_job_run(void *p)
{
    rb_job *j = p;
    rb_call(j->b, j->cx, j->msg, j->len, j->shm, j->shm_off, j->w, j->status, j->ret, j->ret_size);
}

void rb_call_on(rb_state *b, const rm_ctx *cx, const uint8_t *msg, size_t len, rb_region *shm, uint64_t shm_off,
                rm_wr *w, uint32_t *status, uint8_t *ret, uint32_t *ret_size)
{
    rb_job j = { .b = b, .cx = cx, .msg = msg, .len = len, .shm = shm, .shm_off = shm_off, .w = w, .status = status,
                 .ret = ret, .ret_size = ret_size };
    uint32_t api = 0;
    if (len >= 4)
        memcpy(&api, msg, 4);
    rb_num_message(b, api);   /* every call message counts, whether it runs or not: as the client counts */
    if (!b->named) {
        rb_job_run(&j);
    } else if (rm_workers_run(b->workers, b->tid, rb_job_run, &j) != 0) {
        uint32_t id = 0;
        if (len >= 4)
            memcpy(&id, msg, 4);
        rb_log("no thread for client thread %#llx (at most %u): its call is refused", (unsigned long long)b->tid,
               RM_MAX_WORKERS);
        memset(ret, 0, 64);
        *ret_size = 0;
        *status = RM_ST_TOO_LARGE;
        rm_encode_reply(NULL, id, RM_ST_TOO_LARGE, ret, w);
    }
}

/* The hello and, with a token, the challenge: before the shim is loaded, under a time limit. 0 when the
   client may go on (*in is its hello), -1 when it was refused or went away (answered when it can be). */
static int rb_handshake(int fd, const rm_backend_opts *o, rm_hello *in, uint32_t *seq, uint8_t **buf, size_t *cap,
                        int *token)
{
    *token = -1;
    rm_hdr h;
    rm_hello out;
    memset(&out, 0, sizeof out);
    out.ptr_bytes = (uint16_t)sizeof(void *);
    out.pid = (uint32_t)getpid();
    if (rm_recv_max(fd, &h, buf, cap, RM_HELLO_MAX) != RM_OK) {
        rb_log("%s: no hello", o->peer);
        return -1;
    }
    *seq = h.seq;
    out.status = rm_hello_check(&h, *buf, in);
    if (out.status != RM_HELLO_OK) {
        rb_log("%s (pid %u) refused: %s (wire version %u, this server %u)", o->peer, in->pid,
               out.status == RM_HELLO_REFUSED_VERSION ? "another wire version" : "another ABI", h.version,
               RM_WIRE_VERSION);
        rm_send(fd, RM_MSG_HELLO, h.seq, &out, sizeof out);
        return -1;
    }
    if (o->ntokens == 0)
        return 0;
    uint8_t nonce[RM_NONCE_BYTES];
    if (rm_nonce(nonce) != 0) {
        rb_log("no random bytes for a challenge (getrandom): %s refused", o->peer);
        return -1;
    }
    if (rm_send(fd, RM_MSG_CHALLENGE, h.seq, nonce, sizeof nonce) != RM_OK ||
        rm_recv_max(fd, &h, buf, cap, RM_MAC_BYTES) != RM_OK) {
        rb_log("%s (pid %u): no answer to the token challenge", o->peer, in->pid);
        return -1;
    }
    int which = -1;
    for (unsigned k = 0; h.kind == RM_MSG_AUTH && k < o->ntokens; k++)   /* every token tried: no early answer */
        if (rm_auth_verify(&o->tokens[k], nonce, *buf, h.length) && which < 0)
            which = (int)k;
    if (h.kind != RM_MSG_AUTH || which < 0) {
        rb_log("%s (pid %u) refused: %s", o->peer, in->pid,
               h.kind != RM_MSG_AUTH ? "it did not answer the token challenge" : "wrong token");
        out.status = RM_HELLO_REFUSED_AUTH;
        rm_send(fd, RM_MSG_HELLO, h.seq, &out, sizeof out);
        return -1;
    }
    *token = which;
    return 0;
}

static void rb_timeout(int fd, int seconds)
{
    struct timeval tv = { .tv_sec = seconds };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* The shim as the back end loads it: its drop-in copy (libcuda.so.1, where the launcher finds it beside the shim:
   <dir>/cushim/dropin installed, <dir>/../dropin in the build tree) where there is one, so that the runtime and NVML
   loaded next, which open "libcuda.so.1" by name, get the shim as their driver (the loaded object of that soname):
   their own driver calls then pass its hooks and counts as in a local program (GPU run 158's witness found them
   beside the shim). Else the shim itself. CUSHIM_SERVE_SHIM_ONLY=1 keeps the shim itself (tests compare both). */
static const char *rb_shim_path(const char *shim, char *buf, size_t cap)
{
    const char *only = getenv("CUSHIM_SERVE_SHIM_ONLY");
    if (only != NULL && strcmp(only, "1") == 0)
        return shim;
    const char *slash = strrchr(shim, '/');
    int dl = slash != NULL ? (int)(slash - shim) : 1;
    const char *dir = slash != NULL ? shim : ".";
    static const char *const rel[] = { "cushim/dropin/libcuda.so.1", "../dropin/libcuda.so.1" };
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        int n = snprintf(buf, cap, "%.*s/%s", dl, dir, rel[i]);
        if (n > 0 && (size_t)n < cap && access(buf, R_OK) == 0)
            return buf;
    }
    return shim;
}

int rm_backend_run(int fd, const rm_backend_opts *o)
{
    rb_state b = { .verbose = o->verbose };
    rm_hello in, out;
    uint8_t *buf = NULL;
    size_t cap = 0;
    uint32_t seq = 0;
    int token = -1;
    rb_timeout(fd, RM_HANDSHAKE_SECONDS);
    int ok = rb_handshake(fd, o, &in, &seq, &buf, &cap, &token);
    rb_timeout(fd, 0);
    if (ok != 0) {
        free(buf);
        return 1;
    }
    rb_ipc_identity(&b, o, token);   /* whose IPC handles it may open (rb_ipc.c) */
    char dropin[PATH_MAX];
    const char *shim = rb_shim_path(o->shim, dropin, sizeof dropin);
    /* CUSHIM_COUNTS: each back end its own FILE.<pid>, as a forked child of a counting process writes (the
       listener never loads the shim, so every back end would otherwise write FILE over the others') */
    const char *counts = getenv("CUSHIM_COUNTS");
    if (counts != NULL && counts[0] != '\0' && strcmp(counts, "-") != 0 && strlen(counts) < PATH_MAX - 16) {
        char per[PATH_MAX];
        snprintf(per, sizeof per, "%s.%d", counts, (int)getpid());
        setenv("CUSHIM_COUNTS", per, 1);
    }
    if (b.verbose)
        rb_log("the shim: %s", shim);
    void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
    cushim_host_get_fn get = h ? (cushim_host_get_fn)dlsym(h, CUSHIM_HOST_GET_NAME) : NULL;
    if (get == NULL || (b.host = get(CUSHIM_ABI_VERSION)) == NULL || !CUSHIM_HOST_HAS(b.host, call)) {
        rb_log("cannot use the shim %s: %s", shim, h ? "no host table of this ABI" : dlerror());
        free(buf);
        return 1;
    }
    rm_meta m;
    rm_meta_from_host(&m, b.host);
    rb_load_libraries(m.cuda_version, b.verbose);   /* runtime and NVML calls (rb_libs.c) */
    rb_ipc_init(&b);
    if ((b.plans = rm_plans_build(&m)) == NULL || rm_arena_init(&b.arena, RM_MAX_ARENA) != 0) {
        rb_log("out of memory");
        free(buf);
        return 1;
    }
    const char *tree = b.host->version();
    rm_hello_make(&out, b.plans, tree, (uint32_t)getpid());
    if (in.tree_hash != b.plans->tree_hash)
        rb_log("%s (pid %u): its tree '%s' differs from this server's '%s': APIs whose layout differs are "
               "refused", o->peer, in.pid, in.tree, tree);
    else if (b.verbose)
        rb_log("%s (pid %u): '%s'", o->peer, in.pid, in.tree);
    if (rm_send(fd, RM_MSG_HELLO, seq, &out, sizeof out) != RM_OK) {
        free(buf);
        return 1;
    }
    b.paraminfo = b.host->api_by_name("cuFuncGetParamInfo");
    b.workers = rm_workers_new();
    const rm_ctx cx = { .kparam_check = rb_kcheck, .scalar_check = rb_scalar_check, .addr_in = rb_addr_in,
                        .addr_out = rb_addr_out, .link_out = rb_link_out, .user = &b,
                        .in_place_min = RM_REF_MIN };
    uint8_t ret[64];
    rm_wr w;
    rm_hdr hd;
    int rc = RM_OK, passed;
    uint8_t *dbuf = malloc(RM_BELL_BYTES);   /* a doorbell request, copied out of the shared page */
    rm_inbuf inb = {0};
    int tcp = rm_sock_is_tcp(fd);   /* a unix socket may carry a descriptor: read message by message */
    rm_wr_init(&w, 0);
    w.allow_ref = 1;   /* a large output goes from the arena, not copied into the reply (rm_send_wr) */
    for (;;) {
        if (b.bell != NULL && dbuf != NULL && rb_bell_wait(fd, b.bell, b.bell_last)) {
            if (rb_bell_serve(&b, &cx, fd, &w, dbuf) != 0)
                break;
            continue;
        }
        passed = -1;   /* over TCP a message is read in one read() with what follows it (rm_inbuf) */
        if ((rc = tcp ? rm_in_recv(fd, &inb, &hd, &buf, &cap, RM_MAX_PAYLOAD) : rm_recv_fd(fd, &hd, &buf, &cap, &passed)) != RM_OK)
            break;
        if (passed >= 0 && hd.kind != RM_MSG_SHM) {
            close(passed);   /* a descriptor only ever comes with RM_MSG_SHM */
            passed = -1;
        }
        if (hd.version != RM_WIRE_VERSION) {
            if (passed >= 0)
                close(passed);
            break;
        }
        rm_wr_reset(&w);
        uint32_t status, ret_size;
        uint64_t shm_off = 0;
        uint32_t region = 0;
        rb_region *shm = NULL;
        const uint8_t *call = buf;
        size_t clen = hd.length;
        if (hd.kind == RM_MSG_CALL || hd.kind == RM_MSG_SHM_CALL) {
            if (hd.kind == RM_MSG_SHM_CALL) {   /* the offsets copied out of the message, which is the back end's */
                if (rm_shm_call_split(buf, hd.length, &region, &shm_off, &call, &clen) != RM_OK)
                    region = 0, shm_off = UINT64_MAX, call = buf, clen = 0;   /* refused by the decoder */
                shm = &b.shm[region];
            }
            rb_call_on(&b, &cx, call, clen, shm, shm_off, &w, &status, ret, &ret_size);
            int sent = w.err == RM_OK && rm_send_wr(fd, RM_MSG_REPLY, hd.seq, &w) == RM_OK;
            rm_arena_reset(&b.arena);
            if (!sent)
                break;
        } else if (hd.kind == RM_MSG_BATCH) {
            /* reply: u32 calls run, u32 index of the first that failed (or 0xffffffff), its status and result */
            rm_rd r = { .p = buf, .len = hd.length };
            uint32_t n, ran = 0, failed = 0xffffffffu, fstatus = RM_ST_OK, fsize = 0;
            uint8_t fret[64] = {0};
            const uint8_t *call;
            size_t clen;
            rm_wr one;
            rm_wr_init(&one, 0);
            if (rm_rd_u32(&r, &n) != RM_OK || n > RM_MAX_BATCH)
                n = 0, fstatus = RM_ST_MALFORMED, failed = 0;
            for (uint32_t i = 0; i < n; i++, ran++) {
                if (rm_batch_next(&r, &call, &clen) != RM_OK) {
                    failed = i, fstatus = RM_ST_MALFORMED;
                    break;
                }
                rm_wr_reset(&one);
                rb_call_on(&b, &cx, call, clen, NULL, 0, &one, &status, ret, &ret_size);
                rm_arena_reset(&b.arena);
                int32_t code = 0;
                if (ret_size >= 4)
                    memcpy(&code, ret, 4);
                if (failed == 0xffffffffu && (status != RM_ST_OK || code != 0)) {
                    failed = i, fstatus = status, fsize = ret_size;
                    memcpy(fret, ret, sizeof fret);
                }
            }
            rm_wr_free(&one);
            rm_wr_u32(&w, ran);
            rm_wr_u32(&w, failed);
            rm_wr_u32(&w, fstatus);
            rm_wr_u32(&w, fsize);
            rm_wr_bytes(&w, fret, fsize);
            if (w.err != RM_OK || rm_send(fd, RM_MSG_BATCH_REPLY, hd.seq, w.p, w.len) != RM_OK)
                break;
        } else if (hd.kind == RM_MSG_SHM) {
            int r = rb_shm_message(&b, fd, &hd, buf, passed);   /* a region mapped or given back (rb_shm.c) */
            passed = -1;
            if (r != 0)
                break;
        } else if (hd.kind == RM_MSG_KICK) {
            /* woke the loop for a doorbell request (rb_bell_wait) */
        } else if (hd.kind == RM_MSG_THREAD && hd.length == 8) {
            memcpy(&b.tid, buf, 8);   /* the client thread the next calls come from; no reply */
            b.named = 1;
        } else {
            rb_log("unexpected message kind %u: closing", hd.kind);
            break;
        }
    }
    if (rc != RM_OK && rc != RM_ECLOSED)
        rb_log("connection: %s", rc == RM_EBOUNDS ? "a message over the bound" : rc == RM_EMALFORMED ?
               "not a cushim message" : "read error");
    rm_wr_free(&w);
    rm_inbuf_free(&inb);
    free(buf);
    free(dbuf);
    rm_workers_free(b.workers);
    rb_ipc_exit(&b);   /* its memory and events are gone: their handles too */
    rm_num_free(&b.num);
    rb_link_free(&b);
    rm_arena_destroy(&b.arena);
    rm_plans_free(b.plans);
    return 0;
}
