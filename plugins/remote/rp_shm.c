/*
 * rp_shm.c - the regions a client shares with a back end on its host (docs/remote.md, "Shared memory"), and
 * the bulk copies through them.
 *
 * At connection over a unix socket the client creates a sealed memfd staging area (region 0) of RP_SHM_SLOTS
 * slots of RP_CHUNK bytes, passes it to its back end (rm_shm.h) and keeps it mapped. The program's pinned host
 * memory (rp_host_alloc: cuMemAllocHost, cuMemHostAlloc, cudaMallocHost, cudaHostAlloc) is a region of its own,
 * a memfd passed the same way and registered by the back end with the driver.
 *   zero copy     a byte copy from or to pinned memory is one RM_MSG_SHM_CALL naming the region and offset:
 *                 the back end's DMA reads or writes the program's pages themselves; a copy on a stream too
 *                 (its DMA runs when the stream gets to it, as locally: the program synchronises before it
 *                 reads or reuses the memory);
 *   staged        any other byte copy of at least RP_SHM_MIN bytes goes through the staging slots, pipelined:
 *                 host to device, the client fills slot k+1 while the back end copies slot k to the device;
 *                 device to host, the back end fills the next slots while the client copies one out.
 * Per call one small message and its reply cross the socket, never the bytes. TCP, the option 'shm=0', or a
 * failure to set the area up leave the socket's path (rp_bulk.c), with one line at debug level; pinned memory
 * is then this process's heap. Runs under the connection's lock with rp_conn.c's steps.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

/* Region 'k' said to the back end (RM_MSG_SHM, after the queued batch): 'mfd' (a descriptor passed, 'size' bytes)
   to map, or -1 (size 0) to give back; its answer in *st. */
static int rp_region_say_locked(rp_state *s, uint32_t k, int mfd, size_t size, uint32_t *st)
{
    rm_hdr h;
    int rc = rp_send_batch_locked(s);
    uint32_t seq = ++s->seq;
    if (rc == RM_OK)
        rc = rm_shm_send(s->fd, seq, mfd, size, k);
    if (rc == RM_OK)
        rc = rp_read_ahead_locked(s);
    if (rc == RM_OK)
        rc = rp_recv_locked(s, &h);
    if (rc == RM_OK && (h.kind != RM_MSG_SHM || h.seq != seq || h.length != 4))
        rc = RM_EMALFORMED;
    if (rc == RM_OK)
        memcpy(st, s->rbuf, 4);
    return rc;
}

/* Region 'k' (a sealed memfd of 'size' bytes, mapped at *map) given to the back end: RM_OK and *accepted. */
static int rp_region_give_locked(rp_state *s, uint32_t k, size_t size, void **map, int *accepted)
{
    uint32_t st = RM_SHM_REFUSED;
    *accepted = 0;
    int mfd = rm_shm_create(size, map);
    if (mfd < 0)
        return RM_OK;
    int rc = rp_region_say_locked(s, k, mfd, size, &st);
    close(mfd);   /* the mapping stays; the back end holds its own */
    if (rc != RM_OK || st != RM_SHM_OK)
        munmap(*map, size);
    *accepted = rc == RM_OK && st == RM_SHM_OK;
    return rc;
}

int rp_shm_setup_locked(rp_state *s)
{
    struct sockaddr_storage ss;
    socklen_t n = sizeof ss;
    size_t size = (size_t)RP_SHM_SLOTS * RP_CHUNK + RM_BELL_SPAN;   /* the slots, then the doorbell */
    void *map = NULL;
    int ok;
    s->shm_state = -1;
    if (!s->shm_opt)
        return RM_OK;
    if (getsockname(s->fd, (struct sockaddr *)&ss, &n) != 0 || ss.ss_family != AF_UNIX) {
        s->host->log(s->self, CUSHIM_LOG_DEBUG, "%s is not a unix socket: copies go through the socket", s->server);
        return RM_OK;
    }
    int rc = rp_region_give_locked(s, 0, size, &map, &ok);
    if (rc == RM_OK && !ok)
        s->host->log(s->self, CUSHIM_LOG_DEBUG, "no shared area with %s (memfd or the server refused it): copies "
                     "go through the socket", s->server);
    if (rc != RM_OK || !ok)
        return rc;
    s->region[0] = (rp_region){ .base = map, .size = size };
    s->shm_state = 1;
    return RM_OK;
}

void rp_shm_forget(rp_state *s)
{
    if (s->region[0].base != NULL)
        munmap(s->region[0].base, s->region[0].size);   /* the parent's staging area: never written here */
    s->region[0] = (rp_region){ 0 };
    for (uint32_t k = 1; k < RM_SHM_REGIONS; k++) {
        rp_region *r = &s->region[k];
        if (r->base == NULL || r->inherited)
            continue;
        /* the program's memory still, but its parent's too: a private copy put in its place, as fork() gives
           for any other memory (left shared when there is no memory for the copy) */
        void *copy = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (copy != MAP_FAILED) {
            memcpy(copy, r->base, r->size);
            if (mremap(copy, r->size, r->size, MREMAP_MAYMOVE | MREMAP_FIXED, r->base) == MAP_FAILED)
                munmap(copy, r->size);
        }
        r->inherited = 1;   /* unknown to the child's server */
    }
    s->shm_state = 0;
}

/* ---- pinned host memory ---- */
static int32_t rp_heap_alloc(rp_state *s, size_t size, void **p)
{
    void *b = NULL;
    pthread_mutex_lock(&s->hlock);
    if (s->nheap == s->capheap) {
        uint32_t cap = s->capheap ? s->capheap * 2 : 64;
        void **t = realloc(s->heap_blocks, cap * sizeof *t);
        if (t != NULL)
            s->heap_blocks = t, s->capheap = cap;
    }
    if (s->nheap < s->capheap && posix_memalign(&b, 4096, size ? size : 1) == 0)
        s->heap_blocks[s->nheap++] = b;
    pthread_mutex_unlock(&s->hlock);
    *p = b;
    return b != NULL ? 0 : s->e_oom;
}

int32_t rp_host_alloc(rp_state *s, size_t size, void **p)
{
    size_t page = 4096, bytes = size ? (size + page - 1) / page * page : page;
    void *map = NULL;
    int ok = 0, rc = RM_OK;
    uint32_t k = 0;
    *p = NULL;
    if (!s->shm_opt || bytes < size)
        return rp_heap_alloc(s, size, p);
    pthread_mutex_lock(&s->lock);
    if (rp_ready_locked(s) != 0) {
        pthread_mutex_unlock(&s->lock);
        return s->e_unavailable;
    }
    if (s->shm_state == 1)
        for (k = 1; k < RM_SHM_REGIONS && s->region[k].base != NULL; k++)
            ;
    if (s->shm_state == 1 && k < RM_SHM_REGIONS)
        rc = rp_region_give_locked(s, k, bytes, &map, &ok);
    if (ok) {
        s->region[k] = (rp_region){ .base = map, .size = bytes };
        s->nregions++;
    }
    if (rc != RM_OK)
        rp_lost_locked(s, rc);
    pthread_mutex_unlock(&s->lock);
    if (rc != RM_OK)
        return s->e_unavailable;
    if (!ok)   /* no shared memory, no region left, or refused: the heap (copies through the staging area) */
        return rp_heap_alloc(s, size, p);
    *p = map;
    return 0;
}

int32_t rp_host_free(rp_state *s, void *p)
{
    int found = 0, rc = RM_OK;
    if (p == NULL)
        return 0;
    pthread_mutex_lock(&s->lock);
    for (uint32_t k = 1; k < RM_SHM_REGIONS && !found; k++) {
        rp_region *r = &s->region[k];
        if (r->base != p)
            continue;
        found = 1;
        if (!r->inherited && !s->dead && s->fd >= 0) {   /* the back end unmaps it first (and unregisters it) */
            uint32_t st;
            rc = rp_region_say_locked(s, k, -1, 0, &st);
            if (rc != RM_OK)
                rp_lost_locked(s, rc);
        }
        munmap(r->base, r->size);
        *r = (rp_region){ 0 };
        s->nregions--;
    }
    pthread_mutex_unlock(&s->lock);
    if (found)
        return rc == RM_OK ? 0 : s->e_unavailable;
    pthread_mutex_lock(&s->hlock);
    for (uint32_t i = 0; i < s->nheap && !found; i++)
        if (s->heap_blocks[i] == p) {
            s->heap_blocks[i] = s->heap_blocks[--s->nheap];
            found = 1;
        }
    pthread_mutex_unlock(&s->hlock);
    if (!found)
        return s->e_invalid;
    free(p);
    return 0;
}

/* The pinned region holding [host, host + len) whole, shared with this back end: its index, or 0. */
static uint32_t rp_region_of_locked(rp_state *s, uint64_t host, uint64_t len, uint64_t *off)
{
    for (uint32_t k = 1, seen = 0; k < RM_SHM_REGIONS && seen < s->nregions; k++) {
        const rp_region *r = &s->region[k];
        uint64_t b = (uint64_t)(uintptr_t)r->base;
        seen += r->base != NULL;
        if (r->base != NULL && !r->inherited && host >= b && host - b <= r->size && len <= r->size - (host - b)) {
            *off = host - b;
            return k;
        }
    }
    return 0;
}

int rp_addr_out(void *user, uint64_t addr, uint32_t *region, uint64_t *off)
{
    rp_state *s = user;
    pthread_mutex_lock(&s->lock);
    uint32_t k = s->shm_state == 1 ? rp_region_of_locked(s, addr, 1, off) : 0;
    pthread_mutex_unlock(&s->lock);
    *region = k;
    return k != 0;
}

int rp_addr_in(void *user, uint32_t region, uint64_t off, uint64_t *addr)
{
    rp_state *s = user;
    const rp_region *r = region != 0 && region < RM_SHM_REGIONS ? &s->region[region] : NULL;
    if (r == NULL || r->base == NULL || r->inherited || off >= r->size)
        return RM_EMALFORMED;
    *addr = (uint64_t)(uintptr_t)r->base + off;
    return RM_OK;
}

/* ---- copies ---- */
/* One call of the copy: bytes [off, off + len) of it, the host side at 'region' + 'roff'. A staged host to device
   copy fills its slot first. */
static int rp_shm_send_locked(rp_state *s, const rm_plan *pl, const void *params, uint8_t *p, rm_call *c, rm_wr *w,
                              uint64_t off, uint64_t len, uint32_t region, uint64_t roff, uint32_t seq, int32_t *result)
{
    const rm_pplan *pd = &pl->p[pl->chunk_dev], *ph = &pl->p[pl->chunk_host], *pc = &pl->p[pl->chunk_count];
    if (region == 0 && ph->dir == CUSHIM_DIR_IN)
        memcpy(s->region[0].base + roff, (const uint8_t *)(uintptr_t)rp_get(params, ph) + off, (size_t)len);
    memcpy(p, params, pl->info->params_size);
    rp_put(p, pd, rp_get(params, pd) + off);
    rp_put(p, ph, 0);   /* absent: the bytes are in the region */
    rp_put(p, pc, len);
    rm_wr_reset(w);
    w->allow_ref = 0;
    rm_shm_call_head(w, region, roff);
    int erc = rm_encode_call(pl, p, &s->cx, w, c);
    if (erc != RM_OK || w->err != RM_OK) {   /* cannot happen for such a plan (values and one absent array) */
        *result = erc == RM_ENOMEM ? s->e_oom : s->e_invalid;
        return RM_OK;
    }
    return rp_send_kind_locked(s, RM_MSG_SHM_CALL, w, seq);
}

/* One call's reply; a staged device to host copy's slot copied out to the program's buffer on success. */
static int rp_shm_recv_locked(rp_state *s, const rm_plan *pl, const void *params, const rm_call *c, uint64_t off,
                              uint64_t len, uint32_t region, uint64_t roff, uint32_t seq, int32_t *result)
{
    const rm_pplan *ph = &pl->p[pl->chunk_host];
    uint32_t status;
    int32_t r = 0;
    rm_hdr h;
    int rc = rp_recv_locked(s, &h);
    if (rc == RM_OK && (h.kind != RM_MSG_REPLY || h.seq != seq))
        rc = RM_EMALFORMED;
    if (rc == RM_OK)
        rc = rm_decode_reply(c, &r, s->rbuf, h.length, &s->cx, &status);
    if (rc != RM_OK)
        return rc;
    if (status != RM_ST_OK)
        r = rp_status_result(s, pl, status);
    else if (r == 0 && region == 0 && ph->dir == CUSHIM_DIR_OUT)
        memcpy((uint8_t *)(uintptr_t)rp_get(params, ph) + off, s->region[0].base + roff, (size_t)len);
    if (*result == 0)
        *result = r;
    return RM_OK;
}

int32_t rp_copy_shm(rp_state *s, const rm_plan *pl, void *params, int pinned_only, int *done)
{
    uint64_t total = rp_get(params, &pl->p[pl->chunk_count]), host = rp_get(params, &pl->p[pl->chunk_host]);
    uint64_t n = (total + RP_CHUNK - 1) / RP_CHUNK, sent = 0, got = 0, roff = 0;
    size_t psz = pl->info->params_size;
    uint8_t *ps = malloc((size_t)RP_SHM_SLOTS * psz);
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
        goto out;   /* no shared memory: the caller takes the socket's path */
    uint32_t region = rp_region_of_locked(s, host, total, &roff);
    if (pinned_only && region == 0)
        goto out;   /* a copy on a stream from or to other memory: the socket's path */
    *done = 1;
    rc = rp_send_batch_locked(s);
    if (region != 0) {   /* pinned memory: one call, one DMA, no copy here */
        uint32_t seq = ++s->seq;
        if (rc == RM_OK)
            rc = rp_shm_send_locked(s, pl, params, ps, &calls[0], w, 0, total, region, roff, seq, &result);
        if (rc == RM_OK && result == 0) {
            sent = 1;
            rc = rp_read_ahead_locked(s);
            if (rc == RM_OK)
                rc = rp_shm_recv_locked(s, pl, params, &calls[0], 0, total, region, roff, seq, &result);
        }
        atomic_fetch_add_explicit(&s->zero_copies, sent, memory_order_relaxed);
    } else {
        uint32_t seq0 = s->seq + 1;   /* the chunks' numbers follow */
        s->seq += (uint32_t)n;
        for (;;) {
            /* up to RP_SHM_SLOTS chunks in flight; none sent after one failed */
            while (rc == RM_OK && result == 0 && sent < n && sent - got < RP_SHM_SLOTS) {
                uint64_t off = sent * RP_CHUNK, len = total - off < RP_CHUNK ? total - off : RP_CHUNK;
                uint32_t si = (uint32_t)(sent % RP_SHM_SLOTS);
                rc = rp_shm_send_locked(s, pl, params, ps + si * psz, &calls[si], w, off, len, 0,
                                        (uint64_t)si * RP_CHUNK, seq0 + (uint32_t)sent, &result);
                sent += rc == RM_OK && result == 0;
            }
            if (rc != RM_OK || got == sent)
                break;
            if (got == 0)
                rc = rp_read_ahead_locked(s);   /* the batches' replies come before the chunks' */
            uint64_t off = got * RP_CHUNK, len = total - off < RP_CHUNK ? total - off : RP_CHUNK;
            uint32_t si = (uint32_t)(got % RP_SHM_SLOTS);
            if (rc == RM_OK)
                rc = rp_shm_recv_locked(s, pl, params, &calls[si], off, len, 0, (uint64_t)si * RP_CHUNK,
                                        seq0 + (uint32_t)got, &result);
            got++;
        }
        if (total > RP_CHUNK)
            atomic_fetch_add_explicit(&s->chunks, sent, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->shm_chunks, sent, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&s->trips, 1, memory_order_relaxed);
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

/* ---- the doorbell (rm_shm.h, rm_bell) ---- */
rm_bell *rp_bell_locked(rp_state *s, const rm_wr *w)
{
    if (s->shm_state != 1 || s->batch_n != 0 || s->ahead != 0 || w->ref != NULL || w->len > RM_BELL_BYTES)
        return NULL;   /* the socket orders what is queued or in flight; a large input goes from where it lies */
    return rm_bell_of(s->region[0].base, s->region[0].size);
}

static uint64_t rp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Is the back end gone? The socket at end of file or in error (it sends nothing else while a request waits). */
static int rp_bell_peer_gone(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
    char c;
    if (poll(&p, 1, 0) <= 0)
        return 0;
    if (p.revents & (POLLERR | POLLHUP | POLLRDHUP))
        return 1;
    return (p.revents & POLLIN) && recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

int rp_bell_call_locked(rp_state *s, rm_bell *bell, const rm_wr *w, uint32_t seq, rm_hdr *h)
{
    uint64_t tid = rp_thread_id(s);
    int rc = RM_OK;
    memcpy(bell->req, w->p, w->len);
    bell->req_len = (uint32_t)w->len;
    bell->req_tid = tid;
    atomic_store(&bell->req_seq, seq);   /* then look at srv_sleeping: the back end stores it, then loads req_seq */
    s->thread_sent = tid;                /* the back end runs it on this thread's worker from now on */
    if (atomic_load(&bell->srv_sleeping))
        rc = rm_send(s->fd, RM_MSG_KICK, seq, NULL, 0);
    uint64_t t0 = rp_now_ns();
    for (unsigned i = 1; rc == RM_OK && atomic_load_explicit(&bell->rep_seq, memory_order_acquire) != seq; i++) {
        if ((i & 63) == 0 && rp_now_ns() - t0 > RM_BELL_SPIN_NS) {
            /* sleep on the futex, looking at the socket in between: a dead back end ends the wait */
            atomic_store(&bell->cli_sleeping, 1);
            uint32_t now;
            while ((now = atomic_load(&bell->rep_seq)) != seq) {
                if (rp_bell_peer_gone(s->fd)) {
                    rc = RM_ECLOSED;
                    break;
                }
                rm_bell_wait(&bell->rep_seq, now, RM_BELL_POLL_MS);
            }
            atomic_store(&bell->cli_sleeping, 0);
            break;
        }
        rm_bell_relax(i);
    }
    if (rc != RM_OK)
        return rc;
    volatile uint32_t *pl = &bell->rep_len;
    uint32_t n = *pl;   /* read once */
    if (n == RM_BELL_ON_SOCKET) {   /* larger than the doorbell: the reply came on the socket */
        rc = rp_recv_locked(s, h);
        return rc == RM_OK && (h->kind != RM_MSG_REPLY || h->seq != seq) ? RM_EMALFORMED : rc;
    }
    if (n > RM_BELL_BYTES)
        return RM_EMALFORMED;
    if (n > s->rcap) {
        uint8_t *p = realloc(s->rbuf, n);
        if (p == NULL)
            return RM_ENOMEM;
        s->rbuf = p;
        s->rcap = n;
    }
    memcpy(s->rbuf, bell->rep, n);
    *h = (rm_hdr){ .magic = RM_MAGIC, .version = RM_WIRE_VERSION, .kind = RM_MSG_REPLY, .length = n, .seq = seq };
    atomic_fetch_add_explicit(&s->bell_calls, 1, memory_order_relaxed);
    return RM_OK;
}
