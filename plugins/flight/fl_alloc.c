/*
 * fl_alloc.c - the live allocations a dump attributes pointers to: a post hook on every API with an
 * allocation role (host->alloc_role, the generated roles memlimit is built on; sizes and results read through
 * memlimit's ml_size.c, compiled in as it is) keeps the ring's allocation table - base, size, the call that made
 * it - and, on release, moves the entry to the ring of the last releases (so a dump can say a pointer falls in
 * memory freed by call #N). Only calls that succeeded and were not skipped count; handles (VMM, arrays) are not
 * addresses and are left out. A runtime call's own driver call (cudaMalloc's cuMemAlloc) returns first: the
 * outer call then takes the entry over, so a dump names the program's call.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"
#include "idsel.h"
#include "ml_size.h"

static struct {
    pthread_mutex_t lock;   /* the table's writers (this process) */
    uint8_t *use;           /* by API id: 0 not tracked, else the role's action */
    uint32_t id_limit;
} fl_al = {.lock = PTHREAD_MUTEX_INITIALIZER};


static inline uint64_t fl_al_hash(uint64_t p)
{
    return (p >> 8) * 0x9e3779b97f4a7c15ull;
}

static fl_alloc *fl_al_table(fl_ring *rg)
{
    return (fl_alloc *)((char *)rg->base + rg->head->off_allocs);
}

/* Under the lock. The live entry of 'base', or NULL; *free_slot: where a new one goes (NULL: full). */
static fl_alloc *fl_al_find(fl_ring *rg, uint64_t base, fl_alloc **free_slot)
{
    fl_alloc *tab = fl_al_table(rg);
    uint32_t cap = rg->head->nallocs, i = (uint32_t)(fl_al_hash(base) % cap);
    *free_slot = NULL;
    for (uint32_t k = 0; k < cap; k++, i = i + 1 == cap ? 0 : i + 1) {
        uint32_t st = atomic_load_explicit(&tab[i].state, memory_order_relaxed);
        if (st == FL_A_EMPTY) {
            if (*free_slot == NULL)
                *free_slot = &tab[i];
            return NULL;
        }
        if (st == FL_A_GONE && *free_slot == NULL)
            *free_slot = &tab[i];
        if (st == FL_A_LIVE && tab[i].base == base)
            return &tab[i];
    }
    return NULL;
}

static void fl_al_add(fl_ring *rg, const cushim_call *call, uint64_t base, uint64_t size, uint32_t mem)
{
    fl_alloc *e, *slot;
    if ((e = fl_al_find(rg, base, &slot)) == NULL && (e = slot) == NULL) {
        atomic_fetch_add(&rg->head->allocs_lost, 1);
        return;
    }
    /* readers skip it while it changes; the exchange's acquire keeps the stores below after it */
    (void)atomic_exchange_explicit(&e->state, FL_A_EMPTY, memory_order_acq_rel);
    e->base = base;
    if (size != 0 || e->size == 0)   /* the outer call of a nested pair may not know the size: keep the inner's */
        e->size = size;
    e->seq = call->seq;
    e->t = fl_time(call);
    e->tid = (uint32_t)call->tid;
    e->api_id = (uint16_t)call->api_id;
    e->free_seq = 0;
    e->free_t = 0;
    e->free_api = 0;
    e->mem = (uint8_t)mem;
    atomic_store_explicit(&e->state, FL_A_LIVE, memory_order_release);
}

static void fl_al_remove(fl_ring *rg, const cushim_call *call, uint64_t base)
{
    fl_head *h = rg->head;
    fl_alloc *e, *slot, *f;
    uint64_t k;
    if ((e = fl_al_find(rg, base, &slot)) == NULL)
        return;   /* not ours (made before the recorder, or by the inner call of this release) */
    k = atomic_fetch_add(&h->freed_head, 1);
    f = (fl_alloc *)((char *)rg->base + h->off_freed) + (k % h->nfreed);
    (void)atomic_exchange_explicit(&f->state, FL_A_EMPTY, memory_order_acq_rel);
    f->base = e->base;
    f->size = e->size;
    f->seq = e->seq;
    f->t = e->t;
    f->tid = e->tid;
    f->api_id = e->api_id;
    f->mem = e->mem;
    f->free_seq = call->seq;
    f->free_t = fl_time(call);
    f->free_api = (uint16_t)call->api_id;
    atomic_store_explicit(&f->state, FL_A_GONE, memory_order_release);
    atomic_store_explicit(&e->state, FL_A_GONE, memory_order_release);
}

static void fl_al_post(cushim_call *call, void *user, uint64_t *slot)
{
    const cushim_alloc_role *r;
    fl_ring *rg;
    uint8_t action;
    fl_thread *t = fl_thread_me();   /* NULL: a thread whose calls are not recorded (filter=) */
    (void)user;
    (void)slot;
    if (call->api_id >= fl_al.id_limit || (action = fl_al.use[call->api_id]) == 0 ||
        !cushim_call_vouched(call, call->info) || (t != NULL && t->al_busy))
        return;
    if ((r = fl_host->alloc_role(call->api_id)) == NULL || (rg = fl_ring_ensure(fl_time(call))) == NULL)
        return;
    /* inside the lock: a signal handler's call on this thread does not wait for itself */
    if (t != NULL)
        t->al_busy = 1;
    if (action == CUSHIM_ROLE_RELEASE || action == CUSHIM_ROLE_UNIMPORT) {
        uint64_t base = ml_arg(fl_host, call, r->ref_arg);
        if (base != 0) {
            pthread_mutex_lock(&fl_al.lock);
            fl_al_remove(rg, call, base);
            pthread_mutex_unlock(&fl_al.lock);
        }
    } else {
        uint64_t base = ml_role_out(fl_host, call, r);
        uint64_t size = action == CUSHIM_ROLE_ALLOC ? ml_role_size(fl_host, call, r, 1) : 0;
        if (base != 0) {
            pthread_mutex_lock(&fl_al.lock);
            fl_al_add(rg, call, base, size, r->mem);
            pthread_mutex_unlock(&fl_al.lock);
        }
    }
    if (t != NULL)
        t->al_busy = 0;
}

int fl_alloc_init(const cushim_host *h, cushim_plugin *self, uint64_t *group)
{
    cushim_hook_spec spec;
    idsel sel = {0};
    int rc;
    fl_al.id_limit = h->api_id_limit();
    fl_al.use = calloc(fl_al.id_limit ? fl_al.id_limit : 1, 1);
    if (fl_al.use == NULL)
        return -1;
    for (uint32_t i = 0; i < h->api_count(); i++) {
        const cushim_api_info *a = h->api_at(i);
        const cushim_alloc_role *r = a != NULL ? h->alloc_role(a->id) : NULL;
        int ref;
        if (r == NULL || r->action == CUSHIM_ROLE_NONE || a->id >= fl_al.id_limit || r->mem == CUSHIM_MEM_ARRAY)
            continue;
        ref = r->action == CUSHIM_ROLE_RELEASE || r->action == CUSHIM_ROLE_UNIMPORT ? r->ref_arg : r->out_arg;
        if (r->size_rule != CUSHIM_SIZE_NODE && ml_arg_is_handle(h, a, ref))
            continue;   /* a VMM handle is no address */
        fl_al.use[a->id] = r->action;
        if (idsel_add(&sel, a->id) != 0) {
            idsel_free(&sel);
            return -1;
        }
    }
    if (sel.s == NULL)
        return -1;   /* no API with a role in this build: nothing to attribute to */
    memset(&spec, 0, sizeof spec);
    spec.size = sizeof spec;
    spec.select = sel.s;
    spec.priority = 1000000;   /* its post hook early among the post hooks: right after the call */
    spec.post = fl_al_post;
    rc = h->hooks_add(self, &spec, group);
    idsel_free(&sel);
    if (rc != CUSHIM_OK) {
        h->log(self, CUSHIM_LOG_WARN, "no allocation tracking (hooks_add: %d): dumps will not attribute pointers", rc);
        return -1;
    }
    return 0;
}

void fl_alloc_fork_child(void)
{
    pthread_mutex_init(&fl_al.lock, NULL);
}
