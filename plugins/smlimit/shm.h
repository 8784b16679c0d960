/*
 * shm.h - the region smlimit processes on one machine share: per device, a slot
 * per process with its weight (its limit), its recent usage, the end of its last
 * measured work and a heartbeat. No lock is waited for: each process writes
 * only its own slot and reads the others'. A slot is claimed by taking its
 * lock byte (plugins/common/region.h: held while the process lives, dropped by
 * the kernel however it dies, in whatever PID namespace), so a slot is taken
 * over only when its process is gone; one whose heartbeat is older than
 * SML_STALE_NS is not counted as sharing.
 */
#ifndef SML_SHM_H
#define SML_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SML_SHM_DEVICES 16
#define SML_SHM_SLOTS 32
#define SML_STALE_NS 2000000000ull   /* 2 s without a heartbeat: not sharing any more */
#define SML_SHM_MAGIC 0x344c4d53u    /* "SML4": the layout below (SML3 had no busy time nor kernel count,
                                        SML2 no live limits nor priorities, SML1 no turns); the region's
                                        name carries it: cushim-smlimit4-* */
#define SML_SHM_PREFIX "/cushim-smlimit4-"

typedef struct sml_slot {
    _Atomic int32_t pid;             /* 0: free                                       */
    _Atomic uint64_t start;          /* the process's start time (/proc, clock ticks)  */
    _Atomic uint32_t weight;         /* limit, per mille                              */
    _Atomic uint32_t usage;          /* measured busy share, per mille (recent)       */
    _Atomic uint64_t last_end;       /* CLOCK_MONOTONIC ns: end of its last measured work */
    _Atomic uint64_t heartbeat;      /* CLOCK_MONOTONIC ns                            */
    _Atomic uint32_t live_gen;       /* the region's live_gen this process has applied */
    _Atomic uint32_t prio;           /* option priority: SML_PRIO_* + 1; 0: takes no part */
    /* for 'cushim usage', published at each heartbeat (50 ms): since the process began, on this device */
    _Atomic uint64_t busy_ns;        /* measured GPU busy time (union of its work's intervals) */
    _Atomic uint64_t kernels;        /* launches admitted                              */
} sml_slot;

typedef struct sml_region {
    _Atomic uint32_t magic;
    uint32_t size;
    sml_slot slot[SML_SHM_DEVICES][SML_SHM_SLOTS];
    /* option turns: per device, the slot (index + 1) whose process has the GPU's
       turn, 0 when none: taken when a process starts a burst with nothing pending,
       given back when its work is done (smlimit.c, "Turns") */
    _Atomic uint32_t turn[SML_SHM_DEVICES];
    /* a process waiting for the turn (slot index + 1, 0 = none): the holder hands
       the turn to it when it gives the turn back, so that a holder with more work
       cannot take it again at once */
    _Atomic uint32_t turn_next[SML_SHM_DEVICES];
    /* live limits ('cushim limit GROUP --sm=30'): live_weight[d] is stored, then live_gen
       bumped (release); each process's poller compares live_gen with the last one it
       applied at each heartbeat (50 ms) and acknowledges it in its slots' live_gen */
    _Atomic uint32_t live_gen;
    _Atomic uint32_t live_weight[SML_SHM_DEVICES];   /* per mille; 0: none (each process's own limit);
                                                         1000: no limit */
    /* option priority: per device and level, bit k set while slot k's process has
       launches pending there (set when a launch is admitted with nothing pending,
       cleared when the poller sees its last one finish); a process of a lower level
       holds its launches while a higher level's mask is not empty (smlimit.c) */
    _Atomic uint32_t busy[SML_SHM_DEVICES][3];
    /* live priority ('cushim limit GROUP --priority=high'), stored before live_gen is bumped like live_weight:
       SML_PRIO_* + 1 for every process of the region, 0: each process's own. It fills what was the alignment
       gap before prio_end, so the layout (its size, the other fields' offsets) is SML4's: a region written
       before it existed reads 0 here */
    _Atomic uint32_t live_prio;
    /* per device and level: when a process of that level last finished work there
       (CLOCK_MONOTONIC ns): a lower level keeps one launch in flight at a time while a
       higher one has been active within SML_PRIO_RECENT_NS */
    _Atomic uint64_t prio_end[SML_SHM_DEVICES][3];
} sml_region;

/* live_prio took the gap between busy and prio_end: SML4's layout unchanged (processes and tools built before it
   still share the region) */
_Static_assert(offsetof(sml_region, live_prio) + sizeof(uint32_t) == offsetof(sml_region, prio_end) &&
                   sizeof(sml_region) == 33552,
               "sml_region's layout changed: bump SML_SHM_MAGIC and the region's name");

#define SML_PRIO_RECENT_NS 100000000ull   /* 100 ms */

enum { SML_PRIO_LOW = 0, SML_PRIO_NORMAL = 1, SML_PRIO_HIGH = 2 };

/* Map the region named 'name' ("/cushim-smlimit4-<uid>", in /dev/shm): this user's alone to write, else NULL
   with a reason in 'err'. */
sml_region *sml_shm_open(const char *name, char *err, size_t errlen);
/* 1 (once) when the region's file was shrunk under the mapping, which then reads private zeros. */
int sml_shm_lost(void);
/* In a fork child: the parent's region (and its slot locks) dropped; the child opens its own when it launches. */
void sml_shm_fork_child(void);
/* Leave slot s (ours): free for the next process. */
void sml_shm_leave(sml_slot *s);
/* This process's start time, 0 if unknown. */
uint64_t sml_proc_start(int32_t pid);
/* Claim a slot on 'dev' for 'pid'; NULL if all are taken by live processes. */
sml_slot *sml_shm_claim(sml_region *r, int dev, int32_t pid, uint64_t start, uint64_t now);
/* Is slot 's' (not ours) a live, recent partner? */
int sml_shm_live(const sml_slot *s, uint64_t now);
/* Device 'dev's turn: its holder (slot index + 1, 0 = none). In the functions below 'mine' is our slot. */
uint32_t sml_shm_turn_holder(sml_region *r, int dev);
/* Take the turn if it is free, ours already, or held by 'dead' (a holder found not
   live, 0 = none): 1 when ours. */
int sml_shm_turn_take(sml_region *r, int dev, const sml_slot *mine, uint32_t dead);
/* Give the turn back if ours: to the process waiting for it, if one is. */
void sml_shm_turn_give(sml_region *r, int dev, const sml_slot *mine);
/* Say that we wait for the turn (when nobody else is waiting yet), or no longer. */
void sml_shm_turn_wait_mark(sml_region *r, int dev, const sml_slot *mine);
void sml_shm_turn_wait_clear(sml_region *r, int dev, const sml_slot *mine);
/* Is another process waiting for the turn? */
int sml_shm_turn_waited_for(sml_region *r, int dev, const sml_slot *mine);

/* Option priority: say that 'mine' (level 'prio') has launches pending on 'dev', or no longer. */
void sml_shm_busy(sml_region *r, int dev, const sml_slot *mine, int prio, int on);
/* Has a process of a level above 'prio' launches pending on 'dev'? With 'check', bits of processes that are gone
   (killed while busy) are cleared first (a look at their lock bytes: a system call each). */
int sml_shm_higher_busy(sml_region *r, int dev, const sml_slot *mine, int prio, uint64_t now, int check);
/* Option priority: 'mine' (level 'prio') finished work on 'dev' at 'now'. */
void sml_shm_prio_end(sml_region *r, int dev, int prio, uint64_t now);
/* Has a level above 'prio' finished work on 'dev' within SML_PRIO_RECENT_NS of 'now'? */
int sml_shm_higher_recent(sml_region *r, int dev, int prio, uint64_t now);
/* Has another live process of the region used device 'dev' recently (its published usage, or launches pending)? */
int sml_shm_others_active(sml_region *r, int dev, const sml_slot *mine, uint64_t now);

#endif /* SML_SHM_H */
