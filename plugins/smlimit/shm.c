/*
 * shm.c - the smlimit shared region (shm.h): mapping, slot claims, liveness.
 */
#define _GNU_SOURCE
#include "shm.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cushim/cushim_io.h"
#include "region.h"

/* The one region of this process (region.c: opening, layout, SIGBUS guard, slot locks); owned here. */
static rg_region sml_rg;
static _Atomic uint32_t sml_own[SML_SHM_DEVICES];   /* bit k: slot k of the device is this process's */

int sml_shm_lost(void)
{
    return rg_lost(&sml_rg);
}

sml_region *sml_shm_open(const char *name, char *err, size_t errlen)
{
    char path[128];
    /* /dev/shm/<name>, as shm_open(3) would make it; this user's alone to write: whoever can write the region
       can take the GPU's turns from its users, or truncate it under them */
    snprintf(path, sizeof path, "/dev/shm%s", name);
    if (rg_open(&sml_rg, path, sizeof(sml_region), SML_SHM_MAGIC, 4, -1, 0, err, errlen) != 0)
        return NULL;
    for (int d = 0; d < SML_SHM_DEVICES; d++)
        atomic_store(&sml_own[d], 0);
    return sml_rg.base;
}

void sml_shm_fork_child(void)
{
    /* the parent's description and mapping would share its slot locks with us, and keep them alive after the
       parent dies: dropped (the child's poller opens the region again when it launches) */
    rg_close(&sml_rg);
    for (int d = 0; d < SML_SHM_DEVICES; d++)
        atomic_store(&sml_own[d], 0);
}

uint64_t sml_proc_start(int32_t pid)
{
    return rg_proc_start((pid_t)pid);
}

/* Slot s's index in the region's lock bytes, or -1 when s is not in this process's region (a test's). */
static long sml_index(const sml_slot *s, int *dev, int *k)
{
    const sml_region *r = sml_rg.base;
    if (r == NULL || s < &r->slot[0][0] || s >= &r->slot[0][0] + SML_SHM_DEVICES * SML_SHM_SLOTS)
        return -1;
    long idx = (long)(s - &r->slot[0][0]);
    *dev = (int)(idx / SML_SHM_SLOTS);
    *k = (int)(idx % SML_SHM_SLOTS);
    return idx;
}

/* A live process holds the slot: its heartbeat is recent and its lock byte is held (by this process: a slot
   of ours; by another: found with F_OFD_GETLK). Pids are never compared: across PID namespaces a pid names
   another process, or none. */
int sml_shm_live(const sml_slot *s, uint64_t now)
{
    int32_t pid = atomic_load(&s->pid);
    uint64_t hb = atomic_load(&s->heartbeat);
    int dev, k;
    long idx;
    if (pid == 0 || hb + SML_STALE_NS <= now)
        return 0;
    if ((idx = sml_index(s, &dev, &k)) < 0)
        return 1;   /* not a region of ours (a test's): the heartbeat alone */
    if (atomic_load(&sml_own[dev]) & (1u << k))
        return 1;
    return rg_slot_held(&sml_rg, (uint32_t)idx);
}

sml_slot *sml_shm_claim(sml_region *r, int dev, int32_t pid, uint64_t start, uint64_t now)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES)
        return NULL;
    uint32_t own = atomic_load(&sml_own[dev]);
    for (int i = 0; i < SML_SHM_SLOTS; i++)
        if (own & (1u << i)) {   /* ours already (a re-claim) */
            sml_slot *s = &r->slot[dev][i];
            atomic_store(&s->pid, pid);
            atomic_store(&s->heartbeat, now);
            return s;
        }
    for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < SML_SHM_SLOTS; i++) {
        sml_slot *s = &r->slot[dev][i];
        /* first pass: slots never used or left; second: those whose process died (however it died, in
           whatever namespace): its lock byte is free. A region that is not this process's file (a test's)
           takes free pids only. */
        if (pass == 0 ? atomic_load(&s->pid) != 0 : r != sml_rg.base)
            continue;
        if (r == sml_rg.base) {
            if (rg_lock_slot(&sml_rg, (uint32_t)(dev * SML_SHM_SLOTS + i)) != 0)
                continue;
            atomic_fetch_or(&sml_own[dev], 1u << i);
            atomic_store(&s->pid, pid);
        } else {
            int32_t old = 0;
            if (!atomic_compare_exchange_strong(&s->pid, &old, pid))
                continue;
        }
        atomic_store(&s->start, start);
        atomic_store(&s->usage, 0);
        atomic_store(&s->last_end, 0);
        atomic_store(&s->heartbeat, now);
        atomic_store(&s->live_gen, 0);
        atomic_store(&s->prio, 0);
        atomic_store(&s->busy_ns, 0);
        atomic_store(&s->kernels, 0);
        for (int p = 0; p < 3; p++)   /* a dead owner's pending work is not inherited either */
            atomic_fetch_and(&r->busy[dev][p], ~(1u << i));
        {   /* a dead owner's turn, or place in line, is not inherited with its slot */
            uint32_t me = (uint32_t)i + 1, m = me;
            atomic_compare_exchange_strong(&r->turn[dev], &m, 0);
            m = me;
            atomic_compare_exchange_strong(&r->turn_next[dev], &m, 0);
        }
        return s;
    }
    return NULL;
}

void sml_shm_leave(sml_slot *s)
{
    int dev, k;
    long idx = sml_index(s, &dev, &k);
    atomic_store(&s->pid, 0);
    if (idx >= 0 && (atomic_fetch_and(&sml_own[dev], ~(1u << k)) & (1u << k)))
        rg_unlock_slot(&sml_rg, (uint32_t)idx);
}

/* Our slot's number on device 'dev' (index + 1), 0 when 'dev' is out of range or 'mine' is not one of its slots. */
static uint32_t sml_slot_id(sml_region *r, int dev, const sml_slot *mine)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES)
        return 0;
    ptrdiff_t k = mine - &r->slot[dev][0];
    return k >= 0 && k < SML_SHM_SLOTS ? (uint32_t)k + 1 : 0;
}

uint32_t sml_shm_turn_holder(sml_region *r, int dev)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES)
        return 0;
    uint32_t h = atomic_load(&r->turn[dev]);
    return h <= SML_SHM_SLOTS ? h : 0;   /* nonsense written by someone: nobody's */
}

int sml_shm_turn_take(sml_region *r, int dev, const sml_slot *mine, uint32_t dead)
{
    uint32_t me, cur;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return 0;
    cur = atomic_load(&r->turn[dev]);
    if (cur != me && ((cur != 0 && cur <= SML_SHM_SLOTS && cur != dead) ||
                      !atomic_compare_exchange_strong(&r->turn[dev], &cur, me)))
        return 0;
    sml_shm_turn_wait_clear(r, dev, mine);
    if (dead != 0) {   /* a gone process is nobody's next either */
        uint32_t d = dead;
        atomic_compare_exchange_strong(&r->turn_next[dev], &d, 0);
    }
    return 1;
}

void sml_shm_turn_wait_mark(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me, none = 0;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return;
    atomic_compare_exchange_strong(&r->turn_next[dev], &none, me);
}

void sml_shm_turn_wait_clear(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return;
    atomic_compare_exchange_strong(&r->turn_next[dev], &me, 0);
}

void sml_shm_turn_give(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me, next;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return;
    next = atomic_load(&r->turn_next[dev]);
    if (next == me || next > SML_SHM_SLOTS)
        next = 0;
    /* to the waiting process (it clears turn_next when it sees the turn is its own;
       one that is gone by then is passed over by the next process that waits) */
    atomic_compare_exchange_strong(&r->turn[dev], &me, next);
}

int sml_shm_turn_waited_for(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me, next;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return 0;
    next = atomic_load(&r->turn_next[dev]);
    return next != 0 && next != me && next <= SML_SHM_SLOTS;
}

/* Slot s's bit in its device's masks (s is in r->slot[dev]). */
static uint32_t sml_bit(const sml_region *r, int dev, const sml_slot *s)
{
    long k = (long)(s - &r->slot[dev][0]);
    return k >= 0 && k < SML_SHM_SLOTS ? 1u << k : 0;
}

void sml_shm_busy(sml_region *r, int dev, const sml_slot *mine, int prio, int on)
{
    uint32_t bit = sml_bit(r, dev, mine);
    if (bit == 0 || prio < 0 || prio > SML_PRIO_HIGH)
        return;
    if (on)
        atomic_fetch_or(&r->busy[dev][prio], bit);
    else
        atomic_fetch_and(&r->busy[dev][prio], ~bit);
}

int sml_shm_higher_busy(sml_region *r, int dev, const sml_slot *mine, int prio, uint64_t now, int check)
{
    uint32_t own = ~sml_bit(r, dev, mine), any = 0;
    for (int p = prio + 1; p <= SML_PRIO_HIGH; p++) {
        uint32_t m = atomic_load_explicit(&r->busy[dev][p], memory_order_acquire) & own;
        for (uint32_t left = check ? m : 0; left != 0; left &= left - 1) {   /* each set bit */
            int k = __builtin_ctz(left);
            if (!sml_shm_live(&r->slot[dev][k], now)) {   /* gone while busy */
                atomic_fetch_and(&r->busy[dev][p], ~(1u << k));
                m &= ~(1u << k);
            }
        }
        any |= m;
    }
    return any != 0;
}

int sml_shm_others_active(sml_region *r, int dev, const sml_slot *mine, uint64_t now)
{
    uint32_t own = ~sml_bit(r, dev, mine), m = 0;
    for (int p = 0; p < 3; p++)
        m |= atomic_load(&r->busy[dev][p]) & own;
    for (; m != 0; m &= m - 1)   /* pending work of a live process (not one killed while busy) */
        if (sml_shm_live(&r->slot[dev][__builtin_ctz(m)], now))
            return 1;
    for (int k = 0; k < SML_SHM_SLOTS; k++) {
        const sml_slot *o = &r->slot[dev][k];
        /* work of it finished within the last 100 ms, or 1% of the GPU's time as it measured it over its last
           heartbeats */
        uint64_t end = atomic_load(&o->last_end);
        if (o != mine && (atomic_load(&o->usage) >= 10 || (end != 0 && end + 100000000ull > now)) &&
            sml_shm_live(o, now))
            return 1;
    }
    return 0;
}

void sml_shm_prio_end(sml_region *r, int dev, int prio, uint64_t now)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES || prio < 0 || prio > SML_PRIO_HIGH)
        return;
    if (atomic_load_explicit(&r->prio_end[dev][prio], memory_order_relaxed) < now)   /* a store a finish, at most */
        atomic_store_explicit(&r->prio_end[dev][prio], now, memory_order_relaxed);
}

int sml_shm_higher_recent(sml_region *r, int dev, int prio, uint64_t now)
{
    for (int p = prio + 1; p <= SML_PRIO_HIGH; p++) {
        uint64_t e = atomic_load_explicit(&r->prio_end[dev][p], memory_order_relaxed);
        if (e != 0 && e <= now + SML_PRIO_RECENT_NS && now < e + SML_PRIO_RECENT_NS)
            return 1;
    }
    return 0;
}
