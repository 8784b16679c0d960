/*
 * rp_bulk.c - bulk copies (docs/remote.md, "Bulk copies"): a byte copy over RP_CHUNK bytes between a device
 * address and a host buffer (rm_plan.chunk_*) is sent as one call per chunk, all written back to back (the
 * program's buffer sent in place, writev), then all the replies read: one round trip, any size. A
 * device-to-host chunk's bytes are read straight into the program's buffer. Runs under the connection's lock
 * with rp_conn.c's helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "rm_sock.h"
#include "rp.h"

static uint64_t rp_get(const void *params, const rm_pplan *pp)
{
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)params + pp->offset, pp->size < 8 ? pp->size : 8);
    return v;
}

static void rp_put(void *params, const rm_pplan *pp, uint64_t v)
{
    memcpy((uint8_t *)params + pp->offset, &v, pp->size < 8 ? pp->size : 8);
}

/* The payload of a message whose header was read, into the receive buffer. */
static int rp_recv_rest_locked(rp_state *s, const rm_hdr *h)
{
    if (h->length > s->rcap) {
        uint8_t *p = realloc(s->rbuf, h->length);
        if (p == NULL)
            return RM_ENOMEM;
        s->rbuf = p;
        s->rcap = h->length;
    }
    return h->length ? rm_in_read(s->fd, &s->in, s->rbuf, h->length) : RM_OK;
}

/* One chunk's reply. A successful device-to-host chunk's bytes are read straight into the program's buffer:
   the reply's fixed head is read and checked first (the API, the call ran and returned CUDA_SUCCESS, one
   output of exactly the chunk's length), so nothing else can land there. Any other reply is decoded. */
static int rp_recv_chunk_locked(rp_state *s, const rm_plan *pl, const rm_call *c, uint32_t seq, int32_t *result,
                                uint32_t *status)
{
    const rm_pplan *ph = &pl->p[pl->chunk_host];
    uint64_t len = c->cap[pl->chunk_host];
    size_t head = 4 + 4 + 4 + pl->info->ret_size + 1 + 4;
    uint8_t hb[64];
    rm_hdr h;
    int rc = rm_in_recv_hdr(s->fd, &s->in, &h);
    if (rc != RM_OK)
        return rc;
    if (h.kind != RM_MSG_REPLY || h.seq != seq)
        return RM_EMALFORMED;
    if (ph->dir == CUSHIM_DIR_OUT && pl->info->ret_size == 4 && h.length == head + len && head <= sizeof hb) {
        uint32_t id, st, rs, n;
        int32_t r;
        if ((rc = rm_in_read(s->fd, &s->in, hb, head)) != RM_OK)
            return rc;
        memcpy(&id, hb, 4);
        memcpy(&st, hb + 4, 4);
        memcpy(&rs, hb + 8, 4);
        memcpy(&r, hb + 12, 4);
        memcpy(&n, hb + 17, 4);
        if (id != pl->id || st != RM_ST_OK || rs != 4 || r != 0 || hb[16] != 1 || n != len)
            return RM_EMALFORMED;   /* that length is only a success's */
        *status = RM_ST_OK;
        *result = 0;
        return rm_in_read(s->fd, &s->in, (void *)(uintptr_t)rp_get(c->params, ph), (size_t)len);
    }
    if ((rc = rp_recv_rest_locked(s, &h)) != RM_OK)
        return rc;
    return rm_decode_reply(c, result, s->rbuf, h.length, &s->cx, status);
}

/* A copy of more than RP_CHUNK bytes (pl->chunk_*): one call per chunk, all sent, then all answered. The
   result is the first chunk's failure, else CUDA_SUCCESS (or the error a batched call left). */
int32_t rp_copy_chunked(rp_state *s, const rm_plan *pl, void *params)
{
    const rm_pplan *pd = &pl->p[pl->chunk_dev], *ph = &pl->p[pl->chunk_host], *pc = &pl->p[pl->chunk_count];
    uint64_t total = rp_get(params, pc), dev = rp_get(params, pd), host = rp_get(params, ph);
    uint64_t n = (total + RP_CHUNK - 1) / RP_CHUNK;
    size_t psz = pl->info->params_size;
    uint8_t *ps = malloc((size_t)n * psz);
    rm_call *calls = malloc((size_t)n * sizeof *calls);
    rm_wr own_wr, *w;
    int own, rc = RM_OK;
    int32_t result = 0;
    uint64_t sent = 0;
    if (ps == NULL || calls == NULL) {
        free(ps);
        free(calls);
        return s->e_oom;
    }
    w = rp_wr(s, &own_wr, &own);
    pthread_mutex_lock(&s->lock);
    if (rp_ready_locked(s) != 0) {
        result = s->e_unavailable;
        goto out;
    }
    rc = rp_send_batch_locked(s);
    uint32_t seq0 = s->seq + 1;   /* the chunks' numbers follow */
    for (uint64_t k = 0; rc == RM_OK && k < n; k++) {
        uint8_t *p = ps + k * psz;
        uint64_t off = k * RP_CHUNK, len = total - off < RP_CHUNK ? total - off : RP_CHUNK;
        memcpy(p, params, psz);
        rp_put(p, pd, dev + off);
        rp_put(p, ph, host + off);
        rp_put(p, pc, len);
        rm_wr_reset(w);
        w->allow_ref = 1;
        int erc = rm_encode_call(pl, p, &s->cx, w, &calls[k]);
        if (erc != RM_OK) {   /* cannot happen for a plan with chunk_* (values and one byte array) */
            result = erc == RM_ENOMEM ? s->e_oom : s->e_invalid;
            break;
        }
        rc = rp_send_call_locked(s, w, ++s->seq);
        sent += rc == RM_OK;
    }
    if (rc == RM_OK)
        rc = rp_read_ahead_locked(s);
    for (uint64_t k = 0; rc == RM_OK && k < sent; k++) {
        uint32_t status;
        int32_t r = 0;
        rc = rp_recv_chunk_locked(s, pl, &calls[k], seq0 + (uint32_t)k, &r, &status);
        if (rc == RM_OK && result == 0)
            result = status == RM_ST_OK ? r : rp_status_result(s, pl, status);
    }
    atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->chunks, sent, memory_order_relaxed);
    if (rc != RM_OK) {
        rp_lost_locked(s, rc);
        result = s->e_unavailable;
    } else if (result == 0) {
        rp_take_async_err_locked(s, pl, &result);
    }
out:
    pthread_mutex_unlock(&s->lock);
    if (own)
        rm_wr_free(w);
    free(ps);
    free(calls);
    return result;
}
