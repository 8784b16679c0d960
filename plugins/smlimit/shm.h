/*
 * shm.h - the region smlimit processes on one machine share: per device, a slot
 * per process with its weight (its limit), its recent usage, the end of its last
 * measured work and a heartbeat. No lock: each process writes only its own
 * slot (claimed with a compare-and-swap on the pid) and reads the others'.
 * A slot whose process is gone (no such pid, or a pid reused by a process
 * started at another time) or whose heartbeat is older than SML_STALE_NS is
 * ignored and may be taken over.
 */
#ifndef SML_SHM_H
#define SML_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SML_SHM_DEVICES 16
#define SML_SHM_SLOTS 32
#define SML_STALE_NS 2000000000ull   /* 2 s without a heartbeat: not sharing any more */
#define SML_SHM_MAGIC 0x314c4d53u    /* "SML1": the layout below                     */

typedef struct sml_slot {
    _Atomic int32_t pid;             /* 0: free                                       */
    _Atomic uint64_t start;          /* the process's start time (/proc, clock ticks)  */
    _Atomic uint32_t weight;         /* limit, per mille                              */
    _Atomic uint32_t usage;          /* measured busy share, per mille (recent)       */
    _Atomic uint64_t last_end;       /* CLOCK_MONOTONIC ns: end of its last measured work */
    _Atomic uint64_t heartbeat;      /* CLOCK_MONOTONIC ns                            */
} sml_slot;

typedef struct sml_region {
    _Atomic uint32_t magic;
    uint32_t size;
    sml_slot slot[SML_SHM_DEVICES][SML_SHM_SLOTS];
} sml_region;

/* Map the region named 'name' ("/cushim-smlimit-<uid>"); NULL with a reason in 'err'. */
sml_region *sml_shm_open(const char *name, char *err, size_t errlen);
/* This process's start time, 0 if unknown. */
uint64_t sml_proc_start(int32_t pid);
/* Claim a slot on 'dev' for 'pid'; NULL if all are taken by live processes. */
sml_slot *sml_shm_claim(sml_region *r, int dev, int32_t pid, uint64_t start, uint64_t now);
/* Is slot 's' (not ours) a live, recent partner? */
int sml_shm_live(const sml_slot *s, uint64_t now);

#endif /* SML_SHM_H */
