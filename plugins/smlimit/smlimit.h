/*
 * smlimit.h - what the files of the smlimit plugin share (not a public header):
 * the per-device state, the pending launch markers, the real driver functions.
 * smlimit.c: options, hooks, lifecycle; poll.c: the polling thread that measures
 * finished launches and keeps the shares between processes; limitspec.c: reading
 * the limits; core.c: the admission logic; shm.c: the shared region; mps.c: the
 * priority handed to MPS.
 */
#ifndef SML_SMLIMIT_H
#define SML_SMLIMIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cushim/cushim.h>

#include "cushim_cuda_headers.h"  /* generated; installed as <cushim/cushim_cuda_headers.h> */
#include "core.h"
#include "shm.h"

#define SML_MAX_DEV SML_SHM_DEVICES
#define SML_STREAMS 64                  /* last finish per stream, per device (hashed) */
#define SML_MAX_PENDING 16384           /* markers in flight; a launch waits beyond    */
#define SML_BEAT_NS 50000000ull         /* shared-region heartbeat and share update    */
#define SML_TURN_POLL_NS 50000ull       /* a burst waiting for the turn looks this often */
#define SML_PRIO_JOIN_NS 200000000ull   /* priorities: launches after the first wait at most this long for the
                                           poller to join the region                      */

/* sml_state.path: which launch path sml_pre runs (smlimit.c): without or with priorities, asking the driver for the
   launch's device or (…1) not, one device being visible. 0 until the first launch resolves the real functions; OFF
   when some are missing (launches pass unlimited). */
enum {
    SML_PATH_OFF = -1,
    SML_PATH_UNRESOLVED = 0,
    SML_PATH_PLAIN = 1,
    SML_PATH_PRIO = 2,
    SML_PATH_PLAIN1 = 3,
    SML_PATH_PRIO1 = 4
};

typedef CUresult (*sml_ctx_get_device_fn)(CUdevice *);
typedef CUresult (*sml_ctx_get_current_fn)(CUcontext *);
typedef CUresult (*sml_ctx_set_current_fn)(CUcontext);
typedef CUresult (*sml_event_create_fn)(CUevent *, unsigned int);
typedef CUresult (*sml_event_record_fn)(CUevent, CUstream);
typedef CUresult (*sml_event_query_fn)(CUevent);
typedef CUresult (*sml_event_destroy_fn)(CUevent);
typedef CUresult (*sml_is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (*sml_capture_mode_fn)(CUstreamCaptureMode *);

typedef struct sml_marker {
    struct sml_marker *next;
    CUevent ev;
    CUcontext ctx;
    CUstream stream;
    int dev;
    uint64_t submit;
} sml_marker;

typedef struct sml_dev {
    pthread_mutex_t mu;                 /* the limiter and the stream table; never held across CUDA */
    int limited;
    double limit;                       /* the share asked for, (0, 1]: the configured one, or
                                           the group's live limit (poller, 'cushim limit')  */
    double limit_own;                   /* the configured share                         */
    uint32_t live_seen;                 /* the region's live_gen applied (poller)       */
    double share;                       /* in force (weights, work conserving)         */
    double share_min;                   /* the lowest in force so far (the report)     */
    sml_limiter lim;
    int started;                        /* the limiter has seen a launch               */
    uint64_t t_start;                   /* first launch                                */
    CUstream s_key[SML_STREAMS];
    uint64_t s_end[SML_STREAMS];
    sml_slot *slot;                     /* ours in the shared region, or NULL          */
    uint64_t beat_busy, beat_t;         /* usage between heartbeats                    */
    double usage;                       /* recent busy share                           */
    uint64_t waited_ns;                 /* time launching threads slept                */
    double clk_mhz;                     /* SM clock while our work runs (clock.c); 0: none */
    uint64_t clk_next;                  /* next clock sample (poller)                  */
    /* option turns (smlimit.c, "turns"): the region and our slot, set by the poller
       under mu once it has joined; the waits for the turn */
    sml_region *turn_region;
    const sml_slot *turn_slot;
    uint64_t turn_waits, turn_wait_ns, turn_gave_up;
    uint64_t turn_since;                /* when we took the turn; 0: not ours          */
    uint64_t turn_yields;               /* bursts cut short for a waiting process      */
    /* option priority (smlimit.c, "priorities"): the region and our slot, set by the
       poller under mu once it has joined; whether our busy bit is set; the waits */
    sml_region *prio_region;
    const sml_slot *prio_slot;
    int prio_pub;
    int prio_level;                     /* the level in force here (SML_PRIO_*, -1: no part): st->prio, or the
                                           group's live one ('cushim limit --priority'); written by the poller
                                           under mu, read under mu (and by the poller)   */
    uint64_t prio_waits, prio_wait_ns, prio_wait_max, prio_guard;
    int alone;                          /* policy default: no other process active here */
    int rdev;                           /* the physical device (CUDA_VISIBLE_DEVICES): its index in the
                                           shared region and in the limits, where processes that see the
                                           GPUs in other orders meet                          */
} sml_dev;

typedef struct sml_state {
    cushim_plugin *self;
    sml_dev dev[SML_MAX_DEV];
    uint64_t window_ns, poll_ns;
    int work_conserving, report, shared, turns;
    uint64_t turn_wait_ns;              /* the longest a burst waits for the turn       */
    double clock_ref_mhz;               /* 0: time shares; else throughput shares (clock.c) */
    int prio;                           /* the configured level, SML_PRIO_*; -1: takes no part in priorities
                                           (each device's prio_level is the one in force) */
    uint32_t prio_gen;                  /* the region's live_gen whose live_prio the poller applied */
    uint64_t prio_wait_ns;              /* the starvation guard: the longest a launch is held */
    int policy_default;                 /* HAMi's 'default': limit only while others use the GPU */
    sml_region *region;
    char region_name[128];              /* opened by the poller at its start (shared=1) */
    int32_t pid;
    uint64_t pid_start;
    /* markers: pending in recording order, and free events (with their context) */
    pthread_mutex_t mq;
    pthread_cond_t mq_cond;
    sml_marker *head, *tail, *free_list;
    uint32_t npending;
    int poller_started, stop;
    pthread_t poller;
    uint64_t groups[32];
    uint32_t ngroups;
    /* real functions */
    sml_ctx_get_device_fn ctx_get_device;
    sml_ctx_get_current_fn ctx_get_current;
    sml_ctx_set_current_fn ctx_set_current;
    sml_event_create_fn event_create;
    sml_event_record_fn event_record;
    sml_event_query_fn event_query;
    sml_event_destroy_fn event_destroy;
    sml_is_capturing_fn is_capturing;
    sml_capture_mode_fn capture_mode;
    CUresult (*pci_bus_id)(char *, int, CUdevice);   /* optional: clock_ref_mhz's NVML match */
    atomic_int path;                    /* SML_PATH_*: the launch path, 0 until resolved */
    int one_dev;                        /* one device visible: a launch's device is 0 (set before 'path') */
    atomic_int region_tried;            /* the poller has joined the region's devices, or failed to open it */
} sml_state;

/* clock.c: sample device i's SM clock into dev[i].clk_mhz (poller thread); reset after fork */
void sml_clock_sample(sml_state *st, int i);
void sml_clock_fork_child(void);
/* Policy default: does NVML list another compute process on device i? 1 yes, 0 no, -1 unknown (no NVML, no such
   device). Poller thread. */
int sml_nvml_others(sml_state *st, int i);
#define SML_CLOCK_EVERY_NS 2000000ull   /* clock samples while work is pending, at most every 2 ms */

/* mps.c: a process with priority 'prio' (SML_PRIO_*, -1 none) that will be an MPS client gets CUDA_MPS_CLIENT_PRIORITY
   (high 0, else 1) unless it is set; at init, before the driver reads it. */
void sml_mps_priority(const cushim_host *host, cushim_plugin *self, int prio);

/* One host serves the process; flush and fork_child get only 'self'. */
extern const cushim_host *sml_host;

uint64_t sml_now(void);                 /* CLOCK_MONOTONIC, ns */
void sml_sleep_ns(uint64_t ns);
/* Give the device's turn back when nothing of ours is pending there (d->mu held). */
void sml_turn_idle(sml_dev *d);
/* The polling thread (poll.c): started by the first launch's post hook. */
void *sml_poll_thread(void *arg);

#endif /* SML_SMLIMIT_H */
