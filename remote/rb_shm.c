/*
 * rb_shm.c - a back end's side of the shared memory with its client on one host (docs/remote.md, "Shared memory on
 * one host"; rm_shm.h): the regions the client passes (mapped after their checks, registered with the driver at
 * their first copy, given back), and the doorbell: a bounded spin on the request word and the socket, a sleep in
 * poll() on the socket, the request copied out once and run as any call, the reply written back or sent on the
 * socket when it is larger.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rb_state.h"
#include "rm_sock.h"

/* A shared region registered with the driver (pinned: its copies run at DMA speed), once, on the thread of the
   first copy through it (a context is current there), through the real function: the back end's own mapping,
   not a program's allocation, so no server-side plugin sees it. A driver that refuses (or lacks it: the fake)
   leaves the region pageable: the copies still work. */
void rb_shm_pin(rb_state *b, rb_region *r)
{
    const cushim_api_info *a = b->host->api_by_name("cuMemHostRegister_v2");
    uint8_t params[64] = {0};
    unsigned flags = 1;   /* CU_MEMHOSTREGISTER_PORTABLE: for every context */
    int32_t ret = -1;
    r->pinned = -1;
    if (a == NULL || a->params_size > sizeof params || a->nparams != 3)
        return;
    memcpy(params + b->host->api_param(a, 0)->offset, &r->map, sizeof r->map);
    memcpy(params + b->host->api_param(a, 1)->offset, &r->size, sizeof r->size);
    memcpy(params + b->host->api_param(a, 2)->offset, &flags, sizeof flags);
    if (b->host->call_real(a->id, params, &ret) == CUSHIM_OK && ret == 0)
        r->pinned = 1;
    if (b->verbose || (r->pinned != 1 && r == &b->shm[0]))
        rb_log("shared region %d of %zu bytes: %s", (int)(r - b->shm), r->size, r->pinned == 1 ?
               "registered (pinned)" : "not registered with the driver (copies through it run at pageable speed)");
}

int rb_addr_in(void *user, uint32_t region, uint64_t off, uint64_t *addr)
{
    rb_state *b = user;
    rb_region *r = region != 0 && region < RM_SHM_REGIONS ? &b->shm[region] : NULL;
    if (r == NULL || r->map == NULL || off >= r->size)
        return RM_EMALFORMED;
    if (r->pinned == 0)
        rb_shm_pin(b, r);   /* on the call's thread, as for a copy */
    *addr = (uint64_t)(uintptr_t)r->map + off;
    return RM_OK;
}

int rb_addr_out(void *user, uint64_t addr, uint32_t *region, uint64_t *off)
{
    const rb_state *b = user;
    for (uint32_t k = 1; k < RM_SHM_REGIONS; k++) {
        const rb_region *r = &b->shm[k];
        uint64_t base = (uint64_t)(uintptr_t)r->map;
        if (r->map != NULL && addr >= base && addr - base < r->size) {
            *region = k;
            *off = addr - base;
            return 1;
        }
    }
    return 0;
}

static uint64_t rb_shm_total(const rb_state *b)
{
    uint64_t t = 0;
    for (uint32_t i = 0; i < RM_SHM_REGIONS; i++)
        t += b->shm[i].size;
    return t;
}

/* A region given back: unregistered (when it was registered) and unmapped. */
typedef struct rb_unmap_job {
    rb_state *b;
    rb_region *r;
} rb_unmap_job;

static void rb_shm_unmap(void *p)
{
    rb_unmap_job *j = p;
    const cushim_api_info *a = j->b->host->api_by_name("cuMemHostUnregister");
    if (j->r->pinned == 1 && a != NULL && a->params_size <= 64 && a->nparams == 1) {
        uint8_t params[64] = {0};
        int32_t ret = -1;
        memcpy(params + j->b->host->api_param(a, 0)->offset, &j->r->map, sizeof j->r->map);
        if (j->b->host->call_real(a->id, params, &ret) != CUSHIM_OK || ret != 0)
            rb_log("shared region %d: cuMemHostUnregister returned %d", (int)(j->r - j->b->shm), (int)ret);
    }
    if (j->r == &j->b->shm[0])
        j->b->bell = NULL;
    munmap(j->r->map, j->r->size);
    *j->r = (rb_region){ 0 };
}

/* A region of the client's: mapped from a sealed memfd, or given back (size 0, no descriptor). */
int rb_shm_message(rb_state *b, int fd, const rm_hdr *hd, const uint8_t *buf, int passed)
{
    uint64_t size;
    uint32_t st = RM_SHM_REFUSED, region;
    int mrc = rm_shm_msg(buf, hd->length, &size, &region);
    rb_region *r = mrc == RM_OK ? &b->shm[region] : NULL;
    const char *why = "malformed";
    if (r != NULL && size == 0 && passed < 0) {
        rb_unmap_job j = { .b = b, .r = r };
        why = r->map == NULL ? "not mapped" : "unmapped";
        if (r->map != NULL && (!b->named || rm_workers_run(b->workers, b->tid, rb_shm_unmap, &j) != 0))
            rb_shm_unmap(&j);   /* on the thread that registered it when it can */
        st = RM_SHM_OK;
    } else if (r != NULL && r->map != NULL) {
        why = "refused (the region is mapped already)";
    } else if (r != NULL && passed >= 0 && size > RM_SHM_MAX - rb_shm_total(b)) {
        why = "refused (the client's regions would exceed RM_SHM_MAX bytes)";
    } else if (r != NULL && passed >= 0) {
        mrc = rm_shm_map(passed, size, &r->map);
        if (mrc == RM_OK) {
            r->size = r->usable = (size_t)size, r->pinned = 0, st = RM_SHM_OK;
            if (region == 0 && (b->bell = rm_bell_of(r->map, r->size)) != NULL) {
                r->usable -= RM_BELL_SPAN;   /* copies never reach the doorbell */
                b->bell_last = atomic_load(&b->bell->req_seq);
            }
        }
        why = mrc == RM_OK ? "mapped" : mrc == RM_EBOUNDS ? "refused (size)" :
              mrc == RM_EUNSUPPORTED ? "refused (not a sealed memfd of that size)" : "refused (mmap)";
    } else if (r != NULL) {
        why = "refused (no descriptor)";
    }
    if (passed >= 0)
        close(passed);   /* a mapping stays */
    if (b->verbose || st != RM_SHM_OK)
        rb_log("shared region %u: %s", r != NULL ? (unsigned)region : 0u, why);
    return rm_send(fd, RM_MSG_SHM, hd->seq, &st, sizeof st) == RM_OK ? 0 : -1;
}

/* ---- the doorbell ---- */
static uint64_t rb_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* 1 when a doorbell request waits, 0 when the socket has something (a message, a kick, the end): a bounded spin
   on both, then a sleep in poll() on the socket, where the client's RM_MSG_KICK (or its death) wakes it. */
int rb_bell_wait(int fd, rm_bell *bell, uint32_t last)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    uint64_t t0 = rb_now_ns();
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&bell->req_seq, memory_order_acquire) != last)
            return 1;
        if ((i & 63) == 0 && (poll(&p, 1, 0) > 0 || rb_now_ns() - t0 > RM_BELL_SPIN_NS))
            break;
        rm_bell_relax(i);
    }
    atomic_store(&bell->srv_sleeping, 1);   /* then look again: the client stores req_seq, then loads this */
    while (atomic_load(&bell->req_seq) == last && poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    atomic_store(&bell->srv_sleeping, 0);
    return atomic_load(&bell->req_seq) != last;
}

/* The request at the doorbell: copied out, run as an RM_MSG_CALL, answered there (or on the socket when the reply
   is larger). 0, or -1 when the reply could not be sent (the loop ends). */
int rb_bell_serve(rb_state *b, const rm_ctx *cx, int fd, rm_wr *w, uint8_t *dbuf)
{
    rm_bell *bell = b->bell;
    uint32_t seq = atomic_load_explicit(&bell->req_seq, memory_order_acquire), status, ret_size;
    uint8_t ret[64] = {0};
    size_t len;
    uint64_t tid;
    int rc = RM_OK;
    b->bell_last = seq;
    rm_wr_reset(w);
    if (rm_bell_take(bell, dbuf, &len, &tid) != RM_OK) {
        rm_encode_reply(NULL, 0, RM_ST_MALFORMED, ret, w);
    } else {
        b->tid = tid;   /* as an RM_MSG_THREAD would have said */
        b->named = 1;
        rb_call_on(b, cx, dbuf, len, NULL, 0, w, &status, ret, &ret_size);
    }
    size_t total = rm_wr_payload_len(w);
    int on_socket = w->err == RM_OK && total > RM_BELL_BYTES;
    if (w->err != RM_OK) {
        rc = w->err;
    } else if (on_socket) {
        bell->rep_len = RM_BELL_ON_SOCKET;   /* said first: the client reads the socket while this sends */
    } else {
        uint8_t *o = bell->rep;
        size_t at = w->ref != NULL ? w->ref_at : w->len;
        memcpy(o, w->p, at);
        if (w->ref != NULL) {
            memcpy(o + at, w->ref, w->ref_len);
            memcpy(o + at + w->ref_len, w->p + at, w->len - at);
        }
        bell->rep_len = (uint32_t)total;
    }
    if (rc == RM_OK) {
        atomic_store(&bell->rep_seq, seq);   /* then look at cli_sleeping: the client stores it, then loads rep_seq */
        if (atomic_load(&bell->cli_sleeping))
            rm_bell_wake(&bell->rep_seq);
    }
    if (rc == RM_OK && on_socket)
        rc = rm_send_wr(fd, RM_MSG_REPLY, seq, w);   /* a large output sent from the arena */
    rm_arena_reset(&b->arena);
    return rc == RM_OK ? 0 : -1;
}

