/*
 * ml_budget.c - the budget region (ml_budget.h says how it stays consistent
 * with no lock waited for and any process killed at any instant).
 */
#define _GNU_SOURCE
#include "ml_budget.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cushim/cushim_io.h"

static void ml_zero_slot(ml_slot *s)
{
    for (int d = 0; d < ML_MAX_DEVICES; d++) {
        atomic_store_explicit(&s->used[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->managed[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->peak[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->spilled[d], 0, memory_order_relaxed);
    }
    for (int i = 0; i < ML_SLOT_LIBS; i++) {
        atomic_store_explicit(&s->libs[i].named, 0, memory_order_relaxed);
        atomic_store_explicit(&s->libs[i].used, 0, memory_order_relaxed);
        s->libs[i].dev = 0;
        memset(s->libs[i].name, 0, sizeof s->libs[i].name);
    }
    atomic_store_explicit(&s->host, 0, memory_order_relaxed);
    atomic_store_explicit(&s->denied, 0, memory_order_relaxed);
    atomic_store_explicit(&s->start, 0, memory_order_relaxed);
    atomic_store_explicit(&s->pid, 0, memory_order_release);
}

static void ml_own_slot(ml_budget *b, int i)
{
    ml_slot *s = &b->r->slots[i];
    uint32_t hw;
    char comm[16];
    ml_zero_slot(s);   /* a dead owner's figures go */
    rg_proc_comm(comm);
    memcpy(s->comm, comm, sizeof s->comm);
    atomic_store_explicit(&s->start, rg_proc_start(0), memory_order_relaxed);
    atomic_store_explicit(&s->pid, (uint64_t)getpid(), memory_order_release);
    hw = atomic_load(&b->r->hiwater);
    while (hw < (uint32_t)i + 1 && !atomic_compare_exchange_weak(&b->r->hiwater, &hw, (uint32_t)i + 1))
        ;
    b->slot = i;
}

static int ml_claim(ml_budget *b)
{
    if (!b->shared) {
        ml_own_slot(b, 0);
        return 0;
    }
    for (int i = 0; i < ML_BUDGET_SLOTS; i++) {
        /* a free slot, or one whose owner died: its lock byte is free */
        if (rg_lock_slot(&b->rg, (uint32_t)i) == 0) {
            ml_own_slot(b, i);
            return 0;
        }
    }
    return -1;
}

static int ml_private(ml_budget *b)
{
    void *p = mmap(NULL, sizeof(ml_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    b->r = p;
    b->shared = 0;
    b->r->magic = ML_BUDGET_MAGIC;
    b->r->version = 2;
    b->r->nslots = 1;
    b->r->ndev = ML_MAX_DEVICES;
    return ml_claim(b);
}

/* The shared file at 'path' (region.c: this user's or the named group's alone to write, of this layout). */
static int ml_map(ml_budget *b, const char *path, int readonly, char *err, size_t errlen)
{
    char why[600];
    if (rg_open(&b->rg, path, sizeof(ml_region), ML_BUDGET_MAGIC, 8, b->gid, readonly, why, sizeof why) != 0) {
        snprintf(err, errlen, "budget region: %s", why);
        return -1;
    }
    b->r = b->rg.base;
    if (!readonly && b->r->nslots == 0) {   /* the header's constants, read by the usage tool only */
        b->r->version = 2;
        b->r->nslots = ML_BUDGET_SLOTS;
        b->r->ndev = ML_MAX_DEVICES;
    }
    b->shared = 1;
    return 0;
}

int ml_budget_lost(ml_budget *b)
{
    if (!b->shared || !rg_lost(&b->rg))
        return 0;
    /* the mapping is private zeros now: a region of this process alone, our slot where it was */
    b->shared = 0;
    b->r->version = 2;
    b->r->nslots = ML_BUDGET_SLOTS;
    b->r->ndev = ML_MAX_DEVICES;
    atomic_store(&b->r->magic, ML_BUDGET_MAGIC);
    if (b->slot >= 0) {   /* what was charged is in private zeros now: the caller charges its allocations again */
        ml_own_slot(b, b->slot);
        atomic_store(&b->r->hiwater, (uint32_t)b->slot + 1);
    }
    return 1;
}

static void ml_budget_init(ml_budget *b, long gid)
{
    memset(b, 0, sizeof *b);
    b->rg.fd = -1;
    b->slot = -1;
    b->gid = gid;
}

int ml_budget_open(ml_budget *b, const char *path, char *err, size_t errlen)
{
    return ml_budget_open_group(b, path, -1, err, errlen);
}

int ml_budget_open_group(ml_budget *b, const char *path, long gid, char *err, size_t errlen)
{
    ml_budget_init(b, gid);
    if (path == NULL || *path == '\0')
        return ml_private(b);
    if (ml_map(b, path, 0, err, errlen) != 0)
        return ml_private(b) == 0 ? -1 : -2;
    if (ml_claim(b) != 0) {
        snprintf(err, errlen, "budget region '%s' has no free slot (%d processes)", path, ML_BUDGET_SLOTS);
        ml_budget_close(b);
        ml_budget_init(b, gid);
        return ml_private(b) == 0 ? -1 : -2;
    }
    return 0;
}

int ml_budget_attach(ml_budget *b, const char *path, char *err, size_t errlen)
{
    ml_budget_init(b, -1);
    return ml_map(b, path, 1, err, errlen);
}

int ml_budget_admin(ml_budget *b, const char *path, long gid, char *err, size_t errlen)
{
    ml_budget_init(b, gid);
    return ml_map(b, path, 0, err, errlen);
}

void ml_budget_close(ml_budget *b)
{
    if (b->shared) {
        if (b->slot >= 0 && !b->rg.readonly) {
            ml_zero_slot(&b->r->slots[b->slot]);
            rg_unlock_slot(&b->rg, (uint32_t)b->slot);
        }
        rg_close(&b->rg);
    } else if (b->r != NULL) {
        if (b->rg.base != NULL)   /* detached (rg_lost): the mapping is still the region module's */
            rg_close(&b->rg);
        else
            munmap(b->r, sizeof(ml_region));
    }
    b->r = NULL;
    b->shared = 0;
    b->slot = -1;
}

int ml_budget_reopen_child(ml_budget *b)
{
    char err[256];
    if (!b->shared) {
        /* a private mapping is copied with the process: the child inherits the parent's allocations'
           bookkeeping only in name (CUDA is not usable across fork), so it starts clean. */
        ml_zero_slot(&b->r->slots[b->slot >= 0 ? b->slot : 0]);
        atomic_store(&b->r->slots[b->slot >= 0 ? b->slot : 0].pid, (uint64_t)getpid());
        return 0;
    }
    /* our copy of the parent's description and mapping: a description and a slot of the child's own */
    b->slot = -1;
    if (rg_reopen_child(&b->rg, err, sizeof err) != 0) {
        long gid = b->gid;
        ml_budget_init(b, gid);
        return ml_private(b) == 0 ? -1 : -2;
    }
    b->r = b->rg.base;
    if (ml_claim(b) != 0) {
        long gid = b->gid;
        rg_close(&b->rg);
        ml_budget_init(b, gid);
        return ml_private(b) == 0 ? -1 : -2;
    }
    return 0;
}

int ml_budget_slot_alive(ml_budget *b, int i)
{
    if (!b->shared)
        return i == b->slot;
    if (i == b->slot)
        return 1;
    return rg_slot_held(&b->rg, (uint32_t)i);
}

int ml_budget_reclaim(ml_budget *b)
{
    int n = 0;
    uint32_t hw;
    if (!b->shared || b->rg.readonly)
        return 0;
    hw = atomic_load(&b->r->hiwater);
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
        ml_slot *s = &b->r->slots[i];
        int busy = atomic_load_explicit(&s->pid, memory_order_acquire) != 0;
        for (int d = 0; !busy && d < ML_MAX_DEVICES; d++)
            busy = atomic_load_explicit(&s->used[d], memory_order_relaxed) != 0;
        if (!busy || (int)i == b->slot)
            continue;
        /* holding the dead owner's lock byte makes us its only writer for a moment */
        if (rg_lock_slot(&b->rg, i) == 0) {
            ml_zero_slot(s);
            rg_unlock_slot(&b->rg, i);
            n++;
        }
    }
    return n;
}

uint64_t ml_budget_used(const ml_budget *b, int dev)
{
    uint64_t sum = 0;
    uint32_t hw = atomic_load_explicit(&b->r->hiwater, memory_order_acquire);
    if (dev < 0 || dev >= ML_MAX_DEVICES)
        return 0;
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++)
        sum += atomic_load_explicit(&b->r->slots[i].used[dev], memory_order_acquire);
    return sum;
}

int ml_budget_charge(ml_budget *b, int dev, uint64_t n, uint64_t limit)
{
    ml_slot *s;
    uint64_t mine, pk;
    if (dev < 0 || dev >= ML_MAX_DEVICES || b->slot < 0)
        return 0;   /* outside what we track: not limited */
    s = &b->r->slots[b->slot];
    {
        uint32_t dm = atomic_load_explicit(&b->r->devmax, memory_order_relaxed);
        while (dm < (uint32_t)dev + 1 &&
               !atomic_compare_exchange_weak_explicit(&b->r->devmax, &dm, (uint32_t)dev + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
            ;
    }
    if (limit) {
        uint64_t u = ml_budget_used(b, dev);
        if (u > limit || n > limit - u) {
            if (ml_budget_reclaim(b) == 0 || (u = ml_budget_used(b, dev)) > limit || n > limit - u) {
                atomic_fetch_add_explicit(&s->denied, 1, memory_order_relaxed);
                return -1;
            }
        }
    }
#ifdef ML_BUDGET_RACE_WINDOW
    sched_yield();   /* the unit test widens the window between the check and the add */
#endif
    mine = atomic_fetch_add_explicit(&s->used[dev], n, memory_order_acq_rel) + n;
    if (limit && b->shared) {
        /* another process may have charged meanwhile: the sum decides, never both */
        uint64_t u = ml_budget_used(b, dev);
        if (u > limit) {
            ml_budget_credit(b, dev, n);
            atomic_fetch_add_explicit(&s->denied, 1, memory_order_relaxed);
            return -1;
        }
    }
    pk = atomic_load_explicit(&s->peak[dev], memory_order_relaxed);
    while (mine > pk && !atomic_compare_exchange_weak_explicit(&s->peak[dev], &pk, mine, memory_order_relaxed,
                                                               memory_order_relaxed))
        ;
    return 0;
}

void ml_budget_credit(ml_budget *b, int dev, uint64_t n)
{
    ml_slot *s;
    uint64_t cur;
    if (dev < 0 || dev >= ML_MAX_DEVICES || b->slot < 0)
        return;
    s = &b->r->slots[b->slot];
    cur = atomic_load_explicit(&s->used[dev], memory_order_relaxed);
    /* our slot has one writer per field at a time only via atomics: CAS so a
       credit never takes it below zero */
    while (!atomic_compare_exchange_weak_explicit(&s->used[dev], &cur, cur > n ? cur - n : 0, memory_order_acq_rel,
                                                  memory_order_relaxed))
        ;
}

uint64_t ml_budget_spilled(const ml_budget *b, int dev)
{
    uint64_t sum = 0;
    uint32_t hw = atomic_load_explicit(&b->r->hiwater, memory_order_acquire);
    if (dev < 0 || dev >= ML_MAX_DEVICES)
        return 0;
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++)
        sum += atomic_load_explicit(&b->r->slots[i].spilled[dev], memory_order_acquire);
    return sum;
}

/* As ml_budget_charge: add to our slot, then the sum decides (two processes racing for the last bytes may
   both fail, never both pass). */
int ml_budget_spill_charge(ml_budget *b, int dev, uint64_t n, uint64_t bound)
{
    ml_slot *s;
    if (dev < 0 || dev >= ML_MAX_DEVICES || b->slot < 0)
        return -1;   /* nowhere to count it: not oversubscribed */
    s = &b->r->slots[b->slot];
    atomic_fetch_add_explicit(&s->spilled[dev], n, memory_order_acq_rel);
    if (bound) {
        uint64_t u = ml_budget_used(b, dev), sp = ml_budget_spilled(b, dev);
        if (u + sp < u || u + sp > bound) {
            ml_budget_spill_credit(b, dev, n);
            return -1;
        }
    }
    return 0;
}

void ml_budget_spill_credit(ml_budget *b, int dev, uint64_t n)
{
    _Atomic uint64_t *v;
    uint64_t cur;
    if (dev < 0 || dev >= ML_MAX_DEVICES || b->slot < 0)
        return;
    v = &b->r->slots[b->slot].spilled[dev];
    cur = atomic_load_explicit(v, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(v, &cur, cur > n ? cur - n : 0, memory_order_acq_rel,
                                                  memory_order_relaxed))
        ;
}

uint32_t ml_budget_set_live(ml_budget *b, const uint64_t live[ML_MAX_DEVICES])
{
    struct timespec ts;
    for (int d = 0; d < ML_MAX_DEVICES; d++) {
        if (live[d] == 0)
            continue;
        atomic_store_explicit(&b->r->live[d], live[d] == ML_LIVE_DROP ? 0 : live[d], memory_order_relaxed);
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    atomic_store_explicit(&b->r->live_when, (uint64_t)ts.tv_sec, memory_order_relaxed);
    /* after the values: a process that sees the new generation (acquire) reads them */
    return atomic_fetch_add_explicit(&b->r->live_gen, 1, memory_order_release) + 1;
}

int ml_budget_lib(ml_budget *b, const char *name, int dev)
{
    ml_slot *s;
    int i;
    if (b->r == NULL || b->slot < 0)
        return -1;
    s = &b->r->slots[b->slot];
    for (i = 0; i < ML_SLOT_LIBS - 1; i++) {
        ml_libent *e = &s->libs[i];
        if (!atomic_load_explicit(&e->named, memory_order_relaxed))
            break;
        if (e->dev == dev && strncmp(e->name, name, sizeof e->name - 1) == 0)
            return i;
    }
    if (i == ML_SLOT_LIBS - 1) {   /* full: the rest goes to the last entry */
        name = ML_LIB_OTHER;
        dev = -1;
        if (atomic_load_explicit(&s->libs[i].named, memory_order_relaxed))
            return i;
    }
    snprintf(s->libs[i].name, sizeof s->libs[i].name, "%s", name);
    s->libs[i].dev = dev;
    atomic_store_explicit(&s->libs[i].named, 1, memory_order_release);
    return i;
}

void ml_budget_lib_add(ml_budget *b, int idx, uint64_t n)
{
    if (b->r == NULL || b->slot < 0 || idx < 0 || idx >= ML_SLOT_LIBS)
        return;
    atomic_fetch_add_explicit(&b->r->slots[b->slot].libs[idx].used, n, memory_order_relaxed);
}

void ml_budget_lib_sub(ml_budget *b, int idx, uint64_t n)
{
    _Atomic uint64_t *v;
    uint64_t cur;
    if (b->r == NULL || b->slot < 0 || idx < 0 || idx >= ML_SLOT_LIBS)
        return;
    v = &b->r->slots[b->slot].libs[idx].used;
    cur = atomic_load_explicit(v, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(v, &cur, cur > n ? cur - n : 0, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

int ml_budget_path(const char *name, char *out, size_t outlen)
{
    if (name == NULL || *name == '\0')
        return -1;
    if (name[0] == '/') {
        if (strlen(name) >= outlen)
            return -1;
        snprintf(out, outlen, "%s", name);
        return 0;
    }
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.'))
            return -1;
    if (name[0] == '.' || (size_t)snprintf(out, outlen, "/dev/shm/cushim-budget-%s", name) >= outlen)
        return -1;
    return 0;
}
