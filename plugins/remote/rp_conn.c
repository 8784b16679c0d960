/*
 * rp_conn.c - the client's connection to cushim-serve (docs/remote.md, "Fast paths"): one stream socket, one
 * lock, and three ways a call crosses it.
 *
 *   synchronous (rp_forward)    the batch queued so far is sent first, then the call, without waiting in
 *                               between; the replies of every batch sent come back before the call's own:
 *                               one round trip.
 *   asynchronous (rp_queue)     encoded at call time (its inputs are copied then) into the batch; the batch
 *                               is sent when full (RP_BATCH_CALLS or RP_BATCH_BYTES), before any synchronous
 *                               call, at exit and before fork(); up to RP_BATCHES_AHEAD batches are sent
 *                               before the client reads their replies. The call returns CUDA_SUCCESS.
 *   chunked (rp_bulk.c)         a byte copy over RP_CHUNK bytes, as several calls sent back to back.
 *
 * A batched call that fails: the server runs the rest of its batch and names the first failure; the client
 * keeps that error and returns it from the next synchronous call that itself returns CUDA_SUCCESS (that call
 * ran; its outputs are written), as the driver returns an asynchronous error from a later call. A later
 * failure is not kept while one waits to be reported.
 *
 * delay_us=N (a test and benchmark knob, docs/plugins/remote.md) simulates a network distance: each round trip
 * costs N microseconds more. The client sleeps N before the first message of a flight - the messages one
 * operation writes back to back before it waits for their replies (a synchronous call and the batch in front of
 * it, a copy's chunks, a thread's name) - and the rest ride with it. A batch sent ahead of its replies (a full
 * batch, the flush before fork) is not delayed: its round trip is paid once, when the client waits for the
 * batches sent ahead (rp_read_ahead_locked), as their replies would all arrive a round trip after the last was
 * sent. So a batched call is never delayed on its own. The whole round trip is paid on the way out, not half
 * before the send and half before the reply: every message leaves through this file's send steps while replies
 * are read in three files, and a client that waits for the reply pays the same either way; a call the server
 * takes long over (a synchronisation behind kernels) still costs its own time plus N.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rc_cudart.h"
#include "rm_auth.h"
#include "rm_ltid.h"
#include "rm_sock.h"
#include "rp.h"

#define RP_NO_FAILURE 0xffffffffu

/* A synchronous round trip of 'pl', counted by API for stats=1's list of where round trips go. */
static void rp_count_sync(rp_state *s, const rm_plan *pl)
{
    if (s->sync_calls != NULL && pl != NULL && pl->id < s->plans->id_limit)
        atomic_fetch_add_explicit(&s->sync_calls[pl->id], 1, memory_order_relaxed);
}

/* A call message about to be sent or queued, under 'lock' in the order the server gets them: a Create of a cuBLAS
   or cuBLASLt handle or descriptor, or a maker of an NCCL communicator, registration or window, takes the next
   number, as the back end counts them (rm_num.h, rm_ltid.h). Its number, or 0. */
static uint64_t rp_note_message_locked(rp_state *s, const rm_plan *pl)
{
    return pl->num_create != 0 ? rm_ltid(s->lt_creates++) : 0;
}

/* ---- the connection ---- */
static int rp_connect_locked(rp_state *s)
{
    char err[512];
    rm_hello hello, mine;
    static rm_token token;   /* read at each connection (a rotated token file is picked up), then wiped */
    int fd = -1;
    if (s->token_file != NULL && rm_token_load(s->token_file, &token, err, sizeof err) != 0)
        goto fail;
    if ((fd = rm_connect(s->server, err, sizeof err)) < 0)
        goto fail;
    rm_hello_make(&mine, s->plans, s->host->version(), (uint32_t)getpid());
    if (rm_client_hello(fd, &mine, s->token_file != NULL ? &token : NULL, s->server, s->token_file, &hello,
                        &s->rbuf, &s->rcap, err, sizeof err) != 0)
        goto fail;
    rm_token_clear(&token);
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
    rm_inbuf_reset(&s->in);   /* nothing read ahead from another connection (a forked child's parent's) */
    int rc = rp_shm_setup_locked(s);   /* a unix socket's server on this host: the shared area */
    if (rc != RM_OK) {
        rp_lost_locked(s, rc);
        return -1;
    }
    return 0;
fail:
    rm_token_clear(&token);
    if (fd >= 0)
        close(fd);
    s->host->log(s->self, CUSHIM_LOG_ERROR, "%s: CUDA calls fail with CUDA_ERROR_DEVICE_UNAVAILABLE", err);
    s->dead = 1;
    return -1;
}

/* Connected (at the first call), or -1 when the connection is lost for good. */
int rp_ready_locked(rp_state *s)
{
    return s->dead || (s->fd < 0 && rp_connect_locked(s) != 0) ? -1 : 0;
}

void rp_lost_locked(rp_state *s, int rc)
{
    s->host->log(s->self, CUSHIM_LOG_ERROR, "lost the connection to %s (%s): this and every later CUDA call fail "
                 "with CUDA_ERROR_DEVICE_UNAVAILABLE (the GPU state lived in the server's back end)", s->server,
                 rc == RM_ECLOSED ? "closed by the server" : "read/write error");
    close(s->fd);
    s->fd = -1;
    rm_inbuf_reset(&s->in);
    s->dead = 1;
    s->ahead = 0;
    s->batches_read = s->batches_sent;
    s->in_flight = 0;
    s->batch_n = 0;
    rm_wr_reset(&s->batch);
}

void rp_refuse_once(rp_state *s, const rm_plan *pl, const char *what)
{
    if (pl != NULL && pl->id < s->plans->id_limit && atomic_exchange(&s->logged[pl->id], 1) == 0) {
        /* the library's own word for it (NVML_ERROR_NOT_SUPPORTED, cudaErrorNotSupported...) */
        const char *code = s->host->result_name(pl->info->ret_kind,
                                                rc_lib_error(pl->info->library, s->e_not_supported));
        s->host->log(s->self, CUSHIM_LOG_WARN, "%s: %s (%s): returns %s", pl->info->name, what,
                     pl->reason ? pl->reason : rm_class_name(pl->cls), code ? code : "CUDA_ERROR_NOT_SUPPORTED");
    }
}

/* This thread's encoding buffer, emptied; a fresh one when TLS is not available. *own: the caller frees it. */
static rp_thread *rp_thread_of(rp_state *s)
{
    rp_thread *t = s->host->tls_get(s->tls_wr);
    if (t == NULL && (t = malloc(sizeof *t)) != NULL) {
        rm_wr_init(&t->w, 0);
        t->id = atomic_fetch_add(&s->next_tid, 1) + 1;
        if (s->host->tls_set(s->tls_wr, t) != CUSHIM_OK) {
            free(t);
            t = NULL;
        }
    }
    return t;
}

/* This thread's number for the server (RM_MSG_THREAD). */
uint64_t rp_thread_id(rp_state *s)
{
    rp_thread *t = rp_thread_of(s);
    return t != NULL ? t->id : (uint64_t)pthread_self();   /* no TLS record: the thread's handle */
}

rm_wr *rp_wr(rp_state *s, rm_wr *fallback, int *own)
{
    rp_thread *t = rp_thread_of(s);
    rm_wr *w = t != NULL ? &t->w : NULL;
    *own = 0;
    if (w == NULL) {   /* no memory for the thread's record: this call's own buffer */
        rm_wr_init(fallback, 0);
        *own = 1;
        return fallback;
    }
    rm_wr_reset(w);
    return w;
}

/* The result a call gets from the server's status when it did not run (or ran and failed: its own result). */
int32_t rp_status_result(rp_state *s, const rm_plan *pl, uint32_t status)
{
    switch (status) {
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

/* The next message from the server: every read of the connection goes through its receive buffer. */
int rp_recv_locked(rp_state *s, rm_hdr *h)
{
    return rm_in_recv(s->fd, &s->in, h, &s->rbuf, &s->rcap, RM_MAX_PAYLOAD);
}

/* ---- the simulated distance (delay_us) ---- */
/* delay_us, waited (rp_conn.c's header): slept to RP_DELAY_SPIN_NS before the end, the rest spun, since a sleep
   overshoots by the timer slack (50 us by default), as much as a loopback round trip costs. */
#define RP_DELAY_SPIN_NS 100000
static int64_t rp_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void rp_delay_locked(rp_state *s)
{
    int64_t end = rp_mono_ns() + (int64_t)s->delay_us * 1000;
    s->delays++;
    if (s->delay_us * 1000ll > RP_DELAY_SPIN_NS) {
        int64_t wake = end - RP_DELAY_SPIN_NS;
        struct timespec t = { .tv_sec = (time_t)(wake / 1000000000), .tv_nsec = (long)(wake % 1000000000) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {   /* EINTR: sleep on */
        }
    }
    while (rp_mono_ns() < end) {
    }
}

#define RP_BEFORE_SEND(s)                                                                                          \
    do {                                                                                                           \
        if ((s)->delay_us != 0 && !(s)->in_flight) { /* unset: this one branch */                                  \
            rp_delay_locked(s);                                                                                    \
            (s)->in_flight = 1;                                                                                    \
        }                                                                                                          \
    } while (0)

/* A batch sent ahead of its replies: no delay now (nor a flight started), paid when they are awaited. */
static int rp_send_ahead_locked(rp_state *s)
{
    int was = s->in_flight;
    s->in_flight = 1;
    int rc = rp_send_batch_locked(s);
    s->in_flight = was;
    return rc;
}

/* The server runs a client thread's calls on a thread of its own (rm_workers.h): it is told which client
   thread the next messages come from whenever that changes. */
static int rp_name_thread_locked(rp_state *s, uint64_t tid)
{
    if (tid == s->thread_sent)
        return RM_OK;
    RP_BEFORE_SEND(s);
    int rc = rm_send(s->fd, RM_MSG_THREAD, 0, &tid, sizeof tid);
    if (rc == RM_OK)
        s->thread_sent = tid;
    return rc;
}

/* One call of this thread, the program's large input sent from where it lies (w->ref). */
int rp_send_call_locked(rp_state *s, const rm_wr *w, uint32_t seq)
{
    return rp_send_kind_locked(s, RM_MSG_CALL, w, seq);
}

/* The same as a message of another kind (RM_MSG_SHM_CALL, rp_shm.c). */
int rp_send_kind_locked(rp_state *s, uint16_t kind, const rm_wr *w, uint32_t seq)
{
    int rc = rp_name_thread_locked(s, rp_thread_id(s));
    if (rc != RM_OK)
        return rc;
    RP_BEFORE_SEND(s);
    return rm_send_wr(s->fd, kind, seq, w);
}

/* ---- batches ---- */
int rp_send_batch_locked(rp_state *s)
{
    if (s->batch_n == 0)
        return RM_OK;
    memcpy(s->batch.p, &s->batch_n, 4);
    int rc = rp_name_thread_locked(s, s->batch_tid);
    RP_BEFORE_SEND(s);
    if (rc == RM_OK)
        rc = rm_send(s->fd, RM_MSG_BATCH, ++s->seq, s->batch.p, s->batch.len);
    atomic_fetch_add_explicit(&s->batches, 1, memory_order_relaxed);
    s->batch_n = 0;
    rm_wr_reset(&s->batch);
    if (rc == RM_OK) {
        s->ahead++;
        s->batches_sent++;
    }
    return rc;
}

/* The replies of the batches sent ahead (they come before any later reply); the first failure is kept. */
int rp_read_ahead_locked(rp_state *s)
{
    if (s->delay_us != 0) {   /* every path that waits for replies comes here first */
        if (!s->in_flight && s->ahead > 0)
            rp_delay_locked(s);   /* batches sent ahead, awaited: their round trip */
        s->in_flight = 0;         /* the next message starts a flight */
    }
    while (s->ahead > 0) {
        rm_hdr h;
        uint32_t ran, failed, status, size;
        int32_t code = 0;
        int rc = rp_recv_locked(s, &h);
        if (rc != RM_OK)
            return rc;
        rm_rd r = { .p = s->rbuf, .len = h.length };
        if (h.kind != RM_MSG_BATCH_REPLY || rm_rd_u32(&r, &ran) != RM_OK || rm_rd_u32(&r, &failed) != RM_OK ||
            rm_rd_u32(&r, &status) != RM_OK || rm_rd_u32(&r, &size) != RM_OK || size > 64 ||
            rm_rd_bytes(&r, (uint8_t[64]){0}, size) != RM_OK || r.pos != r.len)
            return RM_EMALFORMED;
        s->ahead--;
        const uint8_t *blas = s->batch_blas[s->batches_read % RP_BATCH_RING];
        const uint8_t *nccl = s->batch_nccl[s->batches_read++ % RP_BATCH_RING];
        if (failed == RP_NO_FAILURE)
            continue;
        int32_t *keep = failed < RP_BATCH_CALLS && (blas[failed / 8] >> (failed % 8) & 1) ? &s->async_blas_err :
                        failed < RP_BATCH_CALLS && (nccl[failed / 8] >> (failed % 8) & 1) ? &s->async_nccl_err :
                        &s->async_err;
        if (status == RM_ST_OK && size >= 4)
            memcpy(&code, s->rbuf + 16, 4);
        else if (keep == &s->async_blas_err)   /* did not run: the remoting's reason, in cuBLAS's words */
            code = rc_lib_error(CUSHIM_LIB_CUBLAS, rp_status_result(s, NULL, status));
        else if (keep == &s->async_nccl_err)   /* ... in NCCL's */
            code = rc_lib_error(CUSHIM_LIB_NCCL, rp_status_result(s, NULL, status));
        else
            code = rp_status_result(s, NULL, status);
        if (*keep == 0 && code != 0) {
            *keep = code;
            s->host->log(s->self, CUSHIM_LOG_DEBUG, "call %u of a batch failed with %d: the next synchronous call "
                         "returns it", failed, code);
        }
    }
    return RM_OK;
}

/* A synchronous call that succeeded takes the error a batched call left (rp_conn.c's header). */
void rp_take_async_err_locked(rp_state *s, const rm_plan *pl, void *retval)
{
    int32_t result;
    /* each in its own domain: a cuBLAS status from a cuBLAS or cuBLASLt call, a CUresult from any other */
    int32_t *err = pl->info->library == CUSHIM_LIB_CUBLAS || pl->info->library == CUSHIM_LIB_CUBLASLT ?
                   &s->async_blas_err : pl->info->library == CUSHIM_LIB_NCCL ? &s->async_nccl_err : &s->async_err;
    if (*err == 0 || !pl->ret_status)
        return;
    memcpy(&result, retval, sizeof result);
    if (result == 0) {
        memcpy(retval, err, sizeof *err);
        *err = 0;
    } else if (err == &s->async_nccl_err) {
        *err = 0;   /* the group's end returned the group's error itself, as NCCL does: reported */
    }
}

void rp_conn_flush(rp_state *s, int wait)
{
    pthread_mutex_lock(&s->lock);
    if (s->fd >= 0 && !s->dead && (s->batch_n != 0 || (wait && s->ahead != 0))) {
        int rc = wait ? rp_send_batch_locked(s) : rp_send_ahead_locked(s);
        if (rc == RM_OK && wait) {
            rc = rp_read_ahead_locked(s);
            atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
        }
        if (rc != RM_OK)
            rp_lost_locked(s, rc);
    }
    if (wait && s->async_err != 0)
        s->host->log(s->self, CUSHIM_LOG_WARN, "an asynchronous call failed with %d and no later synchronous call "
                     "reported it", s->async_err);
    if (wait && s->async_nccl_err != 0)
        s->host->log(s->self, CUSHIM_LOG_WARN, "an NCCL call of a group failed with %d and no later NCCL call "
                     "reported it", s->async_nccl_err);
    if (wait && s->async_blas_err != 0)
        s->host->log(s->self, CUSHIM_LOG_WARN, "a batched cuBLAS call failed with status %d and no later "
                     "synchronous cuBLAS call reported it", s->async_blas_err);
    if (wait && s->delay_us != 0)
        s->host->log(s->self, CUSHIM_LOG_INFO, "delay_us=%u: %llu round trips delayed (a simulated distance)",
                     s->delay_us, (unsigned long long)s->delays);
    pthread_mutex_unlock(&s->lock);
}

void rp_conn_close(rp_state *s)
{
    pthread_mutex_lock(&s->lock);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->dead = 1;
    pthread_mutex_unlock(&s->lock);
}

/* An asynchronous call: encoded now, queued, CUDA_SUCCESS (or the error of encoding it, at once). */
int32_t rp_queue(rp_state *s, const rm_plan *pl, void *params, uint64_t *ltid)
{
    rm_wr own_wr, *w;
    int own;
    rm_call c;
    int32_t result = 0;
    if (ltid != NULL)
        *ltid = 0;
    w = rp_wr(s, &own_wr, &own);
    w->allow_ref = 0;   /* the inputs are copied now: the program may change them once the call returns */
    int rc = rm_encode_call(pl, params, &s->cx, w, &c);   /* outside the lock: it may ask the server itself */
    if (rc != RM_OK || w->len > RP_BATCH_BYTES - 8) {
        if (own)
            rm_wr_free(w);
        if (rc == RM_OK) {   /* too large for a batch: sent on its own */
            int answered;
            uint8_t ret[8] = {0};
            rm_wr one;
            rm_wr_init(&one, 0);
            result = rp_forward(s, pl, params, ret, &answered, &one, NULL, NULL);
            rm_wr_free(&one);
            if (answered)
                memcpy(&result, ret, sizeof result);
            return result;
        }
        if (rc == RM_EUNSUPPORTED && c.refused != NULL) {
            rp_refuse_option_once(s, pl, c.refused, c.refused_why);
            return s->e_not_supported;
        }
        if (rc == RM_EUNSUPPORTED) {
            rp_refuse_once(s, pl, "an argument the codec cannot carry");
            return s->e_not_supported;
        }
        return rc == RM_ENOMEM ? s->e_oom : s->e_invalid;
    }
    pthread_mutex_lock(&s->lock);
    if (rp_ready_locked(s) != 0) {
        result = s->e_unavailable;
        goto out;
    }
    uint64_t me = rp_thread_id(s);
    if (s->batch_n == RP_BATCH_CALLS || s->batch.len + 4 + w->len > RP_BATCH_BYTES ||
        (s->batch_n != 0 && s->batch_tid != me)) {   /* a batch holds one thread's calls */
        rc = rp_send_ahead_locked(s);
        if (rc == RM_OK && s->ahead >= RP_BATCHES_AHEAD) {
            rc = rp_read_ahead_locked(s);
            atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
        }
        if (rc != RM_OK) {
            rp_lost_locked(s, rc);
            result = s->e_unavailable;
            goto out;
        }
    }
    uint8_t *blas = s->batch_blas[s->batches_sent % RP_BATCH_RING];
    uint8_t *nccl = s->batch_nccl[s->batches_sent % RP_BATCH_RING];
    if (s->batch_n == 0) {
        s->batch_tid = me;
        rm_wr_reset(&s->batch);
        rm_wr_u32(&s->batch, 0);   /* the count, written when sent */
        memset(blas, 0, sizeof s->batch_blas[0]);
        memset(nccl, 0, sizeof s->batch_nccl[0]);
    }
    if (pl->info->library == CUSHIM_LIB_CUBLAS || pl->info->library == CUSHIM_LIB_CUBLASLT)
        blas[s->batch_n / 8] |= (uint8_t)(1u << (s->batch_n % 8));
    else
        blas[s->batch_n / 8] &= (uint8_t)~(1u << (s->batch_n % 8));
    if (pl->info->library == CUSHIM_LIB_NCCL)
        nccl[s->batch_n / 8] |= (uint8_t)(1u << (s->batch_n % 8));
    else
        nccl[s->batch_n / 8] &= (uint8_t)~(1u << (s->batch_n % 8));
    rm_wr_u32(&s->batch, (uint32_t)w->len);
    rm_wr_bytes(&s->batch, w->p, w->len);
    if (s->batch.err != RM_OK) {   /* no memory for the batch: what it held is lost, say so at the next call */
        s->batch_n = 0;
        rm_wr_reset(&s->batch);
        result = s->e_oom;
        goto out;
    }
    uint64_t num = rp_note_message_locked(s, pl);
    if (ltid != NULL)
        *ltid = num;
    s->batch_n++;
    atomic_fetch_add_explicit(&s->batched, 1, memory_order_relaxed);
out:
    pthread_mutex_unlock(&s->lock);
    if (own)
        rm_wr_free(w);
    return result;
}

/* One synchronous call: encoded (into 'w'), sent behind the queued batch, answered. Returns the CUresult to
   give the program; on the server's answer the result (and the outputs) are already written to 'retval' and
   the program's pointers: *answered = 1. With 'reply', a copy of the reply's payload (the cache keeps it). */
int32_t rp_forward(rp_state *s, const rm_plan *pl, void *params, void *retval, int *answered, rm_wr *w,
                   uint8_t **reply, size_t *reply_len)
{
    rm_call c;
    rm_hdr h;
    uint32_t status = RM_ST_MALFORMED;
    int32_t result;
    *answered = 0;
    if (reply != NULL)
        *reply = NULL;
    w->allow_ref = 1;   /* sent before this returns: a large input goes from the program's buffer */
    int rc = rm_encode_call(pl, params, &s->cx, w, &c);   /* outside the lock: it may ask the server itself */
    if (rc != RM_OK) {
        if (rc == RM_EUNSUPPORTED && c.refused != NULL) {
            rp_refuse_option_once(s, pl, c.refused, c.refused_why);
            return s->e_not_supported;
        }
        if (rc == RM_EUNSUPPORTED) {
            rp_refuse_once(s, pl, "an argument the codec cannot carry");
            return s->e_not_supported;
        }
        return rc == RM_ENOMEM ? s->e_oom : s->e_invalid;   /* a negative count, a size over the wire's bound */
    }
    pthread_mutex_lock(&s->lock);
    if (rp_ready_locked(s) != 0) {
        pthread_mutex_unlock(&s->lock);
        return s->e_unavailable;
    }
    rm_bell *bell = rp_bell_locked(s, w);
    uint32_t seq;
    rp_note_message_locked(s, pl);   /* sent below, either way */
    if (bell != NULL) {   /* on this host, nothing else in flight: through the shared area (rp_shm.c) */
        seq = ++s->seq;
        rc = rp_bell_call_locked(s, bell, w, seq, &h);
    } else {
        rc = rp_send_batch_locked(s);
        seq = ++s->seq;
        if (rc == RM_OK)
            rc = rp_send_call_locked(s, w, seq);
        if (rc == RM_OK)
            rc = rp_read_ahead_locked(s);
        if (rc == RM_OK)
            rc = rp_recv_locked(s, &h);
    }
    if (rc == RM_OK && (h.kind != RM_MSG_REPLY || h.seq != seq))
        rc = RM_EMALFORMED;
    if (rc == RM_OK)
        rc = rm_decode_reply(&c, retval, s->rbuf, h.length, &s->cx, &status);
    if (rc == RM_OK && status == RM_ST_OK && reply != NULL && (*reply = malloc(h.length ? h.length : 1)) != NULL) {
        memcpy(*reply, s->rbuf, h.length);
        *reply_len = h.length;
    }
    if (rc == RM_OK && status == RM_ST_OK)
        rp_take_async_err_locked(s, pl, retval);
    if (rc != RM_OK)
        rp_lost_locked(s, rc);
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
    rp_count_sync(s, pl);
    if (rc != RM_OK)
        return s->e_unavailable;
    if (status != RM_ST_OK)
        return rp_status_result(s, pl, status);
    *answered = 1;
    memcpy(&result, retval, sizeof result);
    return result;
}

/* n calls of one plan, the client's own (kernel argument sizes): encoded, sent back to back behind the queued
   batch, answered in order - one round trip. results[k]: the call's result, or why it did not run. A batched
   call's error is left for the program's next synchronous call. */
void rp_forward_many(rp_state *s, const rm_plan *pl, uint32_t n, void *const *params, int32_t *results)
{
    rm_wr *ws = calloc(n, sizeof *ws);
    rm_call *cs = calloc(n, sizeof *cs);
    uint32_t *seqs = calloc(n, sizeof *seqs);   /* 0: not sent */
    int rc = RM_OK;
    for (uint32_t k = 0; k < n; k++)
        results[k] = s->e_oom;
    if (ws == NULL || cs == NULL || seqs == NULL)
        goto out;
    for (uint32_t k = 0; k < n; k++) {
        rm_wr_init(&ws[k], 0);
        int erc = rm_encode_call(pl, params[k], &s->cx, &ws[k], &cs[k]);
        if (erc != RM_OK)
            results[k] = erc == RM_EUNSUPPORTED ? s->e_not_supported : erc == RM_ENOMEM ? s->e_oom : s->e_invalid;
        else
            seqs[k] = 1;   /* to be sent */
    }
    pthread_mutex_lock(&s->lock);
    if (rp_ready_locked(s) != 0) {
        for (uint32_t k = 0; k < n; k++)
            results[k] = s->e_unavailable;
        pthread_mutex_unlock(&s->lock);
        goto out;
    }
    rc = rp_send_batch_locked(s);
    for (uint32_t k = 0; k < n; k++)
        if (seqs[k] != 0) {
            rp_note_message_locked(s, pl);
            if (rc == RM_OK && (seqs[k] = ++s->seq) != 0 && (rc = rp_send_call_locked(s, &ws[k], seqs[k])) == RM_OK)
                continue;
            seqs[k] = 0;   /* not sent */
        }
    if (rc == RM_OK)
        rc = rp_read_ahead_locked(s);
    for (uint32_t k = 0; rc == RM_OK && k < n; k++) {
        rm_hdr h;
        uint32_t status;
        if (seqs[k] == 0)
            continue;
        rc = rp_recv_locked(s, &h);
        if (rc == RM_OK && (h.kind != RM_MSG_REPLY || h.seq != seqs[k]))
            rc = RM_EMALFORMED;
        if (rc == RM_OK)
            rc = rm_decode_reply(&cs[k], &results[k], s->rbuf, h.length, &s->cx, &status);
        if (rc == RM_OK && status != RM_ST_OK)
            results[k] = rp_status_result(s, pl, status);
    }
    if (rc != RM_OK) {
        rp_lost_locked(s, rc);
        for (uint32_t k = 0; k < n; k++)
            results[k] = s->e_unavailable;
    }
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
    rp_count_sync(s, pl);
out:
    for (uint32_t k = 0; ws != NULL && k < n; k++)
        rm_wr_free(&ws[k]);
    free(ws);
    free(cs);
    free(seqs);
}
