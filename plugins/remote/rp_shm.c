/*
 * rp_shm.c - bulk copies through shared memory when the server is on this host (docs/remote.md, "Shared
 * memory"): at connection over a unix socket the client creates a sealed memfd area of RP_SHM_SLOTS slots of
 * RP_CHUNK bytes, passes it to its back end (rm_shm.h) and keeps it mapped. A byte copy of at least RP_SHM_MIN
 * bytes then goes through the slots, pipelined: host to device, the client fills slot k+1 while the back end
 * copies slot k to the device; device to host, the back end fills the next slots while the client copies one
 * out. Per chunk one small RM_MSG_SHM_CALL and its reply cross the socket, never the bytes. TCP, the option
 * 'shm=0', or any failure to set the area up leave the socket's path (rp_bulk.c), with one line at debug level.
 * Runs under the connection's lock with rp_conn.c's steps.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rm_shm.h"
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

int rp_shm_setup_locked(rp_state *s)
{
    struct sockaddr_storage ss;
    socklen_t n = sizeof ss;
    size_t size = (size_t)RP_SHM_SLOTS * RP_CHUNK;
    void *map = NULL;
    rm_hdr h;
    uint32_t st = RM_SHM_REFUSED;
    s->shm_state = -1;
    if (!s->shm_opt)
        return RM_OK;
    if (getsockname(s->fd, (struct sockaddr *)&ss, &n) != 0 || ss.ss_family != AF_UNIX) {
        s->host->log(s->self, CUSHIM_LOG_DEBUG, "%s is not a unix socket: copies go through the socket", s->server);
        return RM_OK;
    }
    int mfd = rm_shm_create(size, &map);
    if (mfd < 0) {
        s->host->log(s->self, CUSHIM_LOG_DEBUG, "no shared area (memfd of %zu bytes: %m): copies go through the "
                     "socket", size);
        return RM_OK;
    }
    uint32_t seq = ++s->seq;
    int rc = rm_shm_send(s->fd, seq, mfd, size);
    close(mfd);   /* the mapping stays; the back end holds its own */
    if (rc == RM_OK)
        rc = rm_recv(s->fd, &h, &s->rbuf, &s->rcap);
    if (rc == RM_OK && (h.kind != RM_MSG_SHM || h.seq != seq || h.length != 4))
        rc = RM_EMALFORMED;
    if (rc == RM_OK)
        memcpy(&st, s->rbuf, 4);
    if (rc != RM_OK || st != RM_SHM_OK) {
        munmap(map, size);
        if (rc == RM_OK)
            s->host->log(s->self, CUSHIM_LOG_DEBUG, "%s refused the shared area: copies go through the socket",
                         s->server);
        return rc;
    }
    s->shm = map;
    s->shm_size = size;
    s->shm_state = 1;
    return RM_OK;
}

void rp_shm_forget(rp_state *s)
{
    if (s->shm != NULL)
        munmap(s->shm, s->shm_size);   /* a forked child's copy of its parent's area: never written by it */
    s->shm = NULL;
    s->shm_size = 0;
    s->shm_state = 0;
}

/* One chunk's call into slot 'si': the host bytes copied in first (host to device). */
static int rp_shm_send_locked(rp_state *s, const rm_plan *pl, const void *params, uint8_t *ps, rm_call *calls,
                              rm_wr *w, uint64_t k, uint32_t seq, int32_t *result)
{
    const rm_pplan *pd = &pl->p[pl->chunk_dev], *ph = &pl->p[pl->chunk_host], *pc = &pl->p[pl->chunk_count];
    uint64_t total = rp_get(params, pc), off = k * RP_CHUNK, len = total - off < RP_CHUNK ? total - off : RP_CHUNK;
    uint32_t si = (uint32_t)(k % RP_SHM_SLOTS);
    size_t psz = pl->info->params_size;
    uint8_t *p = ps + si * psz, *slot = (uint8_t *)s->shm + (size_t)si * RP_CHUNK;
    if (ph->dir == CUSHIM_DIR_IN)
        memcpy(slot, (const uint8_t *)(uintptr_t)rp_get(params, ph) + off, (size_t)len);
    memcpy(p, params, psz);
    rp_put(p, pd, rp_get(params, pd) + off);
    rp_put(p, ph, 0);   /* absent: the bytes are in the slot */
    rp_put(p, pc, len);
    rm_wr_reset(w);
    w->allow_ref = 0;
    rm_shm_call_head(w, (uint64_t)si * RP_CHUNK);
    int erc = rm_encode_call(pl, p, &s->cx, w, &calls[si]);
    if (erc != RM_OK || w->err != RM_OK) {   /* cannot happen for such a plan (values and one absent array) */
        *result = erc == RM_ENOMEM ? s->e_oom : s->e_invalid;
        return RM_OK;
    }
    return rp_send_kind_locked(s, RM_MSG_SHM_CALL, w, seq);
}

/* One chunk's reply; device to host, the slot copied out to the program's buffer when the chunk succeeded. */
static int rp_shm_recv_locked(rp_state *s, const rm_plan *pl, const void *params, const rm_call *calls, uint64_t k,
                              uint32_t seq, int32_t *result)
{
    const rm_pplan *ph = &pl->p[pl->chunk_host], *pc = &pl->p[pl->chunk_count];
    uint64_t total = rp_get(params, pc), off = k * RP_CHUNK, len = total - off < RP_CHUNK ? total - off : RP_CHUNK;
    uint32_t si = (uint32_t)(k % RP_SHM_SLOTS), status;
    int32_t r = 0;
    rm_hdr h;
    int rc = rm_recv(s->fd, &h, &s->rbuf, &s->rcap);
    if (rc == RM_OK && (h.kind != RM_MSG_REPLY || h.seq != seq))
        rc = RM_EMALFORMED;
    if (rc == RM_OK)
        rc = rm_decode_reply(&calls[si], &r, s->rbuf, h.length, &s->cx, &status);
    if (rc != RM_OK)
        return rc;
    if (status != RM_ST_OK)
        r = rp_status_result(s, pl, status);
    else if (r == 0 && ph->dir == CUSHIM_DIR_OUT)
        memcpy((uint8_t *)(uintptr_t)rp_get(params, ph) + off, (uint8_t *)s->shm + (size_t)si * RP_CHUNK, (size_t)len);
    if (*result == 0)
        *result = r;
    return RM_OK;
}

int32_t rp_copy_shm(rp_state *s, const rm_plan *pl, void *params, int *done)
{
    uint64_t total = rp_get(params, &pl->p[pl->chunk_count]);
    uint64_t n = (total + RP_CHUNK - 1) / RP_CHUNK, sent = 0, got = 0;
    uint8_t *ps = malloc((size_t)RP_SHM_SLOTS * pl->info->params_size);
    rm_call calls[RP_SHM_SLOTS];
    rm_wr own_wr, *w;
    int own, rc = RM_OK;
    int32_t result = 0;
    *done = 0;
    if (ps == NULL)
        return 0;   /* the socket's path */
    w = rp_wr(s, &own_wr, &own);
    pthread_mutex_lock(&s->lock);
    if (rp_ready_locked(s) != 0) {
        *done = 1;
        result = s->e_unavailable;
        goto out;
    }
    if (s->shm_state != 1)
        goto out;   /* no area: the caller takes the socket's path */
    *done = 1;
    rc = rp_send_batch_locked(s);
    uint32_t seq0 = s->seq + 1;   /* the chunks' numbers follow */
    s->seq += (uint32_t)n;
    for (;;) {
        /* up to RP_SHM_SLOTS chunks in flight; none sent after one failed */
        while (rc == RM_OK && result == 0 && sent < n && sent - got < RP_SHM_SLOTS) {
            rc = rp_shm_send_locked(s, pl, params, ps, calls, w, sent, seq0 + (uint32_t)sent, &result);
            sent += rc == RM_OK && result == 0;
        }
        if (rc != RM_OK || got == sent)
            break;
        if (got == 0)
            rc = rp_read_ahead_locked(s);   /* the batches' replies come before the chunks' */
        if (rc == RM_OK)
            rc = rp_shm_recv_locked(s, pl, params, calls, got, seq0 + (uint32_t)got, &result);
        got++;
    }
    atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
    if (total > RP_CHUNK)
        atomic_fetch_add_explicit(&s->chunks, sent, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->shm_chunks, sent, memory_order_relaxed);
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
    return result;
}
