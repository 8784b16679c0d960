/*
 * ml_budget.h - memlimit's budget: per-process usage slots in a region that
 * processes sharing a budget map from one file (/dev/shm/cushim-budget-NAME or
 * HAMi's CUDA_DEVICE_MEMORY_SHARED_CACHE path); a private anonymous mapping
 * otherwise. Host-free (the usage tool and the unit tests link it alone).
 *
 * No lock is ever waited for. Each process owns one slot and is its only
 * writer; a charge adds to the own slot and then checks the sum of all slots
 * against the limit (backing out when over), so two processes racing for the
 * last bytes may both fail but never both succeed past the limit. Liveness is
 * an open-file-description record lock (F_OFD_SETLK) on one byte per slot,
 * taken when the slot is claimed and dropped by the kernel when the process
 * dies however it dies: anyone can then find the slot dead (its lock is free),
 * zero it and give it back, idempotently. Nothing waits on these locks.
 */
#ifndef ML_BUDGET_H
#define ML_BUDGET_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "ml_limits.h"
#include "region.h"

#define ML_BUDGET_MAGIC 0x34746764626d6c63ull /* "clmbdgt4": host-backed bytes (clmbdgt3 had none,
                                                  clmbdgt2 no memory by library, clmbdgt1 no live limits) */
#define ML_LIVE_UNLIMITED UINT64_MAX           /* a live limit of "no limit" (ml_region.live)   */
#define ML_BUDGET_SLOTS 1024
#define ML_LOCK_BASE RG_LOCK_BASE             /* lock byte of slot i: ML_LOCK_BASE + i (region.h) */

/* Memory by library: per slot, the bytes of its 'used' (charged device memory) by the library that allocated
   them, per device. An entry is named once (name and device written, then 'named' stored with release) and
   keeps its name while its process lives; only its owner writes it (or a reclaimer zeroes a dead owner's).
   When every entry is taken, the last one is named ML_LIB_OTHER with device -1 and takes the rest. */
#define ML_SLOT_LIBS 32
#define ML_LIB_NAME 40
#define ML_LIB_OTHER "(other)"
typedef struct ml_libent {
    _Atomic uint32_t named;                  /* 0: free; 1: name and dev are written      */
    int32_t dev;                             /* the device; -1: every device (ML_LIB_OTHER) */
    char name[ML_LIB_NAME];                  /* NUL-terminated (the reader checks)         */
    _Atomic uint64_t used;                   /* bytes charged now                          */
} ml_libent;

/* ML_CAT_SPILL: a device allocation oversubscription backed with managed memory in host memory (ml_oversub.h):
   in the slot's 'spilled', never in 'used'. */
enum { ML_CAT_DEVICE = 0, ML_CAT_MANAGED = 1, ML_CAT_HOST = 2, ML_CAT_SPILL = 3, ML_NCATS = 4 };

typedef struct ml_slot {
    _Atomic uint64_t pid;                    /* owner, 0: free                          */
    _Atomic uint64_t start;                  /* owner's start time (clock ticks), for display */
    _Atomic uint64_t used[ML_MAX_DEVICES];   /* charged device bytes (incl. arrays, and managed
                                                when managed memory is charged)        */
    _Atomic uint64_t managed[ML_MAX_DEVICES];/* managed bytes (shown, charged or not)   */
    _Atomic uint64_t host;                   /* page-locked host bytes (shown)          */
    _Atomic uint64_t peak[ML_MAX_DEVICES];
    _Atomic uint64_t denied;                 /* allocations refused                     */
    char comm[16];
    ml_libent libs[ML_SLOT_LIBS];            /* 'used' by allocating library (above)    */
    _Atomic uint64_t spilled[ML_MAX_DEVICES];/* host-backed device allocations (oversubscription) */
} ml_slot;

typedef struct ml_region {
    _Atomic uint64_t magic;
    uint32_t version, nslots, ndev;
    _Atomic uint32_t devmax;                 /* one past the highest device ever charged */
    _Atomic uint64_t limit[ML_MAX_DEVICES];  /* the last configured limits, for display */
    _Atomic uint32_t hiwater;                /* slots [0, hiwater) were ever used        */
    /* live limits ('cushim limit NAME --mem=...'): each live[d] is stored, then live_gen
       is bumped (release); a process compares live_gen with the last one it applied on
       each allocation and query (one relaxed load) and reads live[] when it moved */
    _Atomic uint32_t live_gen;
    _Atomic uint64_t live[ML_MAX_DEVICES];   /* 0: none (each process's own limit); ML_LIVE_UNLIMITED; bytes */
    _Atomic uint64_t live_when;              /* CLOCK_REALTIME seconds of the last change, for display */
    ml_slot slots[ML_BUDGET_SLOTS];
} ml_region;

typedef struct ml_budget {
    ml_region *r;            /* the region: rg.base when shared, else a private anonymous mapping    */
    rg_region rg;            /* the shared file (plugins/common/region.h)                          */
    int shared;              /* the region is a file (else a private mapping)                      */
    int slot;                /* ours, -1 none                                                      */
    long gid;                /* the group it is shared with, -1: this user alone                   */
} ml_budget;

/* Open (creating) the region at 'path' (NULL: private) and claim a slot.
   0, or -1 with a reason in err (then b is a usable private budget). The file
   must be this user's and writable by nobody else (cushim_open_shared): a
   region another user can write is refused, root included; with 'gid' >= 0
   (ml_budget_open_group) it is shared with that group instead. */
int ml_budget_open(ml_budget *b, const char *path, char *err, size_t errlen);
int ml_budget_open_group(ml_budget *b, const char *path, long gid, char *err, size_t errlen);
/* Open for writing the header only, no slot claimed ('cushim limit'): the same owner rules as joining. */
int ml_budget_admin(ml_budget *b, const char *path, long gid, char *err, size_t errlen);
/* Open for reading (the usage tool, whoever owns the file; no slot claimed). */
int ml_budget_attach(ml_budget *b, const char *path, char *err, size_t errlen);
/* The file was shrunk under the mapping (truncated by its owner or root): the
   mapping now reads private zeros. Detach from it: the region becomes this
   process's own (its slot kept, so charges in flight stay consistent) and
   the caller charges its live allocations again. 1 when it was lost (once),
   0 otherwise. ml_budget_lost_flag: the one load that says whether to ask. */
int ml_budget_lost(ml_budget *b);
static inline int ml_budget_lost_flag(const ml_budget *b)
{
    return b->shared && __atomic_load_n(&b->rg.lost, __ATOMIC_RELAXED);
}
void ml_budget_close(ml_budget *b);
/* After fork(), in the child: a slot of its own (the parent's stays the parent's). */
int ml_budget_reopen_child(ml_budget *b);

/* Charge 'n' bytes on device 'dev' against 'limit' (0: none). 0 or -1 (over). */
int ml_budget_charge(ml_budget *b, int dev, uint64_t n, uint64_t limit);
/* Give back n bytes (never below zero). */
void ml_budget_credit(ml_budget *b, int dev, uint64_t n);
/* Sum over all live slots of device 'dev'. */
uint64_t ml_budget_used(const ml_budget *b, int dev);
/* Oversubscription (ml_oversub.h): charge 'n' host-backed bytes on 'dev' to our slot's 'spilled' while the
   budget's used + spilled stays within 'bound' (0: none); 0 or -1 (past it). Credit gives them back; spilled is
   the sum over all slots. */
int ml_budget_spill_charge(ml_budget *b, int dev, uint64_t n, uint64_t bound);
void ml_budget_spill_credit(ml_budget *b, int dev, uint64_t n);
uint64_t ml_budget_spilled(const ml_budget *b, int dev);
/* Zero and free slots whose owners died; returns how many. */
int ml_budget_reclaim(ml_budget *b);
/* 1 if slot i's owner is alive (its lock is held), 0 if not. */
int ml_budget_slot_alive(ml_budget *b, int i);
/* The live limits' generation: moves with every change (ml_budget_set_live). */
static inline uint32_t ml_budget_live_gen(const ml_budget *b)
{
    return atomic_load_explicit(&b->r->live_gen, memory_order_relaxed);
}
/* Set the live limits of a shared budget: live[d] 0 leaves device d as it is, ML_LIVE_UNLIMITED means no
   limit, UINT64_MAX - 1 drops the live limit (each process's own applies again), else bytes. Returns the new
   generation. The caller has the region open for writing (region.c's owner rules). */
#define ML_LIVE_DROP (UINT64_MAX - 1)
uint32_t ml_budget_set_live(ml_budget *b, const uint64_t live[ML_MAX_DEVICES]);

/* Memory by library, in our slot (the caller serialises ml_budget_lib): the index of the entry of library
   'name' on device 'dev', named now when new; when the entries are all taken, the ML_LIB_OTHER entry's. -1:
   no slot. */
int ml_budget_lib(ml_budget *b, const char *name, int dev);
/* Add or take (never below zero) 'n' bytes to entry 'idx' of our slot. */
void ml_budget_lib_add(ml_budget *b, int idx, uint64_t n);
void ml_budget_lib_sub(ml_budget *b, int idx, uint64_t n);

/* The region path of budget NAME ("/dev/shm/cushim-budget-NAME"); a NAME
   starting with '/' is a path. -1 for a bad name. */
int ml_budget_path(const char *name, char *out, size_t outlen);

#endif
