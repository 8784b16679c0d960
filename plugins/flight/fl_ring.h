/*
 * fl_ring.h - the flight recorder's file: one per process, under /dev/shm by default, mapped shared by the
 * process that writes it and read by 'cushim flight dump' while the process runs or after it died (SIGKILL and
 * the OOM killer included: the file is the record). The layout is this header's structs at the offsets the
 * file header gives; every struct is a multiple of 8 bytes, little-endian, no pointers.
 *
 *   fl_head      (FL_HEAD_SIZE: one page)  what the process is, where the parts lie, the event of a dump
 *   functions    nfuncs  x fl_func   kernels seen at launches: handle, name, argument layout (appended)
 *   allocations  nallocs x fl_alloc  live allocations, open addressing on the base address
 *   freed        nfreed  x fl_alloc  the last allocations released, a ring ('freed_head' counts them)
 *   slices       nslices x (fl_slice + n x FL_REC_SIZE)  one per recording thread, a ring of its last n calls
 *
 * A record is written by its thread alone: 'seq' 0 first, then the body, then 'seq' (release); the exit fills
 * 'result', 't_exit' and the kernel arguments, then 'flags' |= FL_R_DONE (release). A reader copies a record and
 * keeps it when 'seq' is the same non-zero value before and after the copy. Host-free: the plugin and the tool
 * (tools/cushim-flight.c) share it.
 */
#ifndef FL_RING_H
#define FL_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FL_MAGIC 0x31544847494c4643ull   /* "CFLIGHT1" */
#define FL_VERSION 2u                     /* 2: the clock fields (1: times are ns, read as FL_CLOCK_HOST) */
#define FL_HEAD_SIZE 4096u
#define FL_REC_SIZE 256u                  /* one call: fl_rec, then params and kernel arguments */
#define FL_REC_DATA (FL_REC_SIZE - 48u)   /* bytes after the record's header                     */
#define FL_FUNC_ARGS 24u                  /* kernel arguments described per function               */
#define FL_FUNC_NAME 256u                 /* bytes of a kernel's name kept (NUL included)           */
#define FL_N_MAX (1u << 20)               /* calls per thread at most                              */
#define FL_SLICES_MAX 4096u

/* fl_head.clock: what the records' and the allocations' times are (an event's are always ns) */
#define FL_CLOCK_HOST 0u  /* CLOCK_MONOTONIC ns, the host's clock                                        */
#define FL_CLOCK_TSC 1u   /* TSC ticks: ns through cal0 and the latest later pair (fl_clock.h)            */
#define FL_CAL_EVERY 4096u   /* a thread's calls between the pairs it leaves in its slice (FL_CLOCK_TSC)   */

/* A (TSC, CLOCK_MONOTONIC ns) pair. */
typedef struct fl_cal {
    uint64_t tsc, ns;     /* ns 0: none                                                                */
} fl_cal;

/* fl_head.event.kind */
#define FL_EV_NONE 0      /* the ring as it is (a live process, or one killed by SIGKILL)            */
#define FL_EV_STICKY 1    /* a call returned a sticky error (the context is lost)                     */
#define FL_EV_ERROR 2     /* a call returned an error (on_error=any)                                  */
#define FL_EV_SIGNAL 3    /* a fatal signal                                                           */
#define FL_EV_HANG 4      /* a synchronising call blocked longer than hang=                           */
#define FL_EV_REQUEST 5   /* SIGUSR2 (signal=), asked for                                             */

typedef struct fl_event {
    uint32_t kind;        /* FL_EV_*                                                                   */
    int32_t signo;        /* FL_EV_SIGNAL, FL_EV_REQUEST: the signal                                   */
    int32_t si_code;
    int32_t result;       /* FL_EV_STICKY, FL_EV_ERROR: the call's result                               */
    uint64_t addr;        /* FL_EV_SIGNAL: si_addr                                                     */
    uint64_t tid;         /* the thread the event happened on                                          */
    uint64_t seq;         /* the call it names (its record's seq), 0 if none                            */
    uint64_t t;           /* when, host clock (ns)                                                     */
    uint64_t blocked_ns;  /* FL_EV_HANG: how long the call had been blocked                             */
    uint32_t api_id;      /* the call's API, 0 if none                                                 */
    uint32_t number;      /* the process's dumps so far, this one included                              */
} fl_event;

typedef struct fl_head {
    uint64_t magic;       /* FL_MAGIC, written last when the file is made                               */
    uint32_t version;     /* FL_VERSION                                                                */
    uint32_t head_size;   /* FL_HEAD_SIZE                                                              */
    uint32_t rec_size;    /* FL_REC_SIZE                                                               */
    uint32_t n;           /* records per slice: a power of two                                          */
    uint32_t nslices, nfuncs, nallocs, nfreed;
    uint64_t slice_size;  /* bytes: fl_slice + n records                                                */
    uint64_t off_funcs, off_allocs, off_freed, off_slices;
    uint64_t file_size;
    int64_t pid;
    uint64_t start;       /* the process's start time (/proc/PID/stat field 22, clock ticks)              */
    uint64_t t0;          /* host clock (ns, CLOCK_MONOTONIC) when the file was made                     */
    int64_t wall0_ns;     /* CLOCK_REALTIME then (ns since 1970)                                        */
    uint32_t cuda_version;    /* of the metadata the plugin ran with (13000)                             */
    uint32_t api_id_limit;
    char comm[16];        /* the program's name (/proc/self/comm)                                       */
    char host_version[96];    /* host->version()                                                        */
    /* counters, written with atomics by the process */
    _Atomic uint32_t slices_used;   /* slices claimed (high-water mark)                                   */
    _Atomic uint32_t funcs_used;
    _Atomic uint64_t freed_head;    /* releases recorded in 'freed' so far                                */
    _Atomic uint64_t threads_lost;  /* threads not recorded: no slice left                                */
    _Atomic uint64_t allocs_lost;   /* allocations not tracked: the table full                            */
    _Atomic uint64_t funcs_lost;    /* kernels not described: the table full                              */
    _Atomic uint32_t alloc_lock;    /* the allocation and function tables' writer lock (a spin flag)       */
    uint32_t pad0;
    fl_event event;       /* a dump's event (the live ring: FL_EV_SIGNAL once a fatal signal came)       */
    uint64_t last_ok_sync_seq;      /* reserved                                                          */
    uint32_t clock;       /* FL_CLOCK_* (version 2)                                                       */
    uint32_t pad1;
    fl_cal cal0;          /* FL_CLOCK_TSC: at t0 (cal0.ns == t0)                                          */
    fl_cal cal1;          /* ... a later one: 1 ms on when the file is made; renewed by the watchdog, a fatal
                             signal, and in a dump's copy when it is made                                 */
} fl_head;

_Static_assert(sizeof(fl_head) <= FL_HEAD_SIZE, "the header fits its page");

/* A kernel seen at a launch: what the dump names it and how it cuts its arguments. Appended, never moved:
   'handle' written last (release). Several entries may name one handle (a module unloaded, another loaded at
   the same address): the one with the largest 'first_seq' not above a launch's seq is that launch's. */
typedef struct fl_func {
    _Atomic uint64_t handle;    /* CUfunction / CUkernel                                                  */
    uint64_t first_seq;         /* the launch that described it                                          */
    uint32_t nargs;             /* arguments described (FL_FUNC_ARGS at most); 0: none known              */
    uint32_t args_known;        /* 1: the driver told the layout (cuFuncGetParamInfo)                     */
    uint16_t arg_off[FL_FUNC_ARGS];
    uint16_t arg_size[FL_FUNC_ARGS];
    char name[FL_FUNC_NAME];
} fl_func;

/* fl_alloc.state */
#define FL_A_EMPTY 0u
#define FL_A_LIVE 1u
#define FL_A_GONE 2u      /* released: a tombstone in the table                                          */

typedef struct fl_alloc {
    uint64_t base, size;
    uint64_t seq;         /* the call that made it                                                      */
    uint64_t t;           /* its entry (host clock, ns)                                                 */
    uint64_t free_seq;    /* freed entries: the call that released it                                    */
    uint64_t free_t;      /* ... its entry                                                              */
    uint32_t tid;         /* the thread that made it                                                    */
    _Atomic uint32_t state;   /* FL_A_*                                                                 */
    uint16_t api_id;
    uint16_t free_api;
    uint8_t mem;          /* cushim_role_mem                                                             */
    uint8_t pad[3];
} fl_alloc;

/* fl_slice.state */
#define FL_S_FREE 0u
#define FL_S_ACTIVE 1u
#define FL_S_EXITED 2u    /* its thread ended: kept for the dump, reused when no slice is left          */
#define FL_S_CLAIMING 3u

typedef struct fl_slice {
    _Atomic uint32_t state;
    uint32_t index;
    uint64_t tid;
    _Atomic uint64_t head;    /* calls recorded on this slice so far (the next record: head % n)           */
    uint64_t t_claim;
    char name[16];            /* the thread's name when it claimed the slice                               */
    fl_cal cal;               /* FL_CLOCK_TSC: a pair its thread took at its latest FL_CAL_EVERY-th call      */
} fl_slice;

/* fl_rec.flags */
#define FL_R_DONE 1u          /* the call returned: result and t_exit are set                              */
#define FL_R_SKIPPED 2u       /* a plugin skipped the real call                                           */
#define FL_R_TRUNC 4u         /* the params struct did not fit: 'params_len' bytes kept                     */
#define FL_R_ARGS 8u          /* kernel arguments follow the params (args_len bytes, the launch's layout)    */
#define FL_R_ARGS_TRUNC 16u   /* ... not all of them                                                       */
#define FL_R_UNTIMED 32u      /* a query recorded at its return, one clock read: t_exit is its entry time    */

typedef struct fl_rec {
    _Atomic uint64_t seq;     /* the call's seq (unique in the process); 0 while being written             */
    uint64_t t_enter, t_exit; /* ns, host clock; t_exit 0 while the call runs                              */
    uint64_t tid;
    uint32_t api_id;
    int32_t result;           /* CUresult, cudaError_t, ... (status kinds); 0 otherwise                    */
    _Atomic uint16_t flags;   /* FL_R_*                                                                    */
    uint16_t params_len;      /* bytes of the params struct kept at the record's data                      */
    uint16_t args_len;        /* bytes of kernel arguments after them (padded params: pad8(params_len))     */
    uint8_t depth;            /* enclosing hooked calls on the thread (255: more)                          */
    uint8_t reserved;
} fl_rec;

_Static_assert(sizeof(fl_rec) == 48, "the record header");
_Static_assert(offsetof(fl_rec, params_len) == offsetof(fl_rec, flags) + 2 &&
                   offsetof(fl_rec, args_len) == offsetof(fl_rec, flags) + 4 &&
                   offsetof(fl_rec, depth) == offsetof(fl_rec, flags) + 6,
               "flags, params_len, args_len, depth: one word (the hook writes them at once)");
_Static_assert(sizeof(fl_slice) == 64, "the slice header");
_Static_assert(sizeof(fl_alloc) == 64, "an allocation");
_Static_assert(sizeof(fl_func) % 8 == 0, "a function");

/* A reader's acquire fence between copying a record and reading its seq again. ThreadSanitizer does not model
   atomic_thread_fence (GCC rejects it with -fsanitize=thread): there a read-modify-write of a dummy stands in, as
   in runtime/rt_internal.h. */
#if defined(__SANITIZE_THREAD__)
static _Atomic int fl_fence_dummy __attribute__((unused));
#define FL_FENCE_ACQUIRE() ((void)atomic_fetch_add_explicit(&fl_fence_dummy, 0, memory_order_acq_rel))
#else
#define FL_FENCE_ACQUIRE() atomic_thread_fence(memory_order_acquire)
#endif

static inline uint32_t fl_pad8(uint32_t n)
{
    return (n + 7u) & ~7u;
}

static inline fl_slice *fl_slice_at(const fl_head *h, void *base, uint32_t i)
{
    return (fl_slice *)((char *)base + h->off_slices + (uint64_t)i * h->slice_size);
}

static inline fl_rec *fl_rec_at(const fl_slice *s, uint32_t mask, uint64_t k)
{
    return (fl_rec *)((char *)(s + 1) + (size_t)(k & mask) * FL_REC_SIZE);
}

/* ---- the process's ring (fl_ring.c) ---- */
typedef struct fl_ring {
    void *base;           /* the mapping, NULL when none                                                */
    size_t size;
    int fd;
    uint64_t dev, ino;    /* the file, to recognise 'fd' before closing it                              */
    fl_head *head;
    uint32_t mask;        /* n - 1                                                                     */
    char path[512];
    char dir[400];
} fl_ring;

typedef struct fl_ring_config {
    const char *dir;
    uint32_t n;           /* rounded up to a power of two                                              */
    uint32_t nslices, nfuncs, nallocs, nfreed;
    uint64_t t0;
    uint32_t cuda_version, api_id_limit;
    const char *host_version;
    uint32_t clock;       /* FL_CLOCK_*                                                                 */
    fl_cal cal0, cal1;    /* FL_CLOCK_TSC: the first two pairs (t0 is cal0.ns)                            */
} fl_ring_config;

/* Makes, sizes (the header and the tables reserved with fallocate: a full file system fails here, not later with
   SIGBUS) and maps this process's file '<dir>/cushim-flight-<pid>-<start>.ring': created 0600, O_EXCL,
   O_NOFOLLOW, O_CLOEXEC (an exec closes it). A file of that name from this process's earlier program (exec keeps
   the pid and start time) is replaced. 0, or -1 with one line in 'why'. */
int fl_ring_create(fl_ring *r, const fl_ring_config *c, char *why, size_t whylen);
/* At exit: the file removed ('unlink_it') and the descriptor closed (when it is still ours). The mapping stays: a
   thread that ends later still releases its slice there. */
void fl_ring_finish(fl_ring *r, int unlink_it);
/* In a fork child: the parent's file is the parent's. The mapping is replaced by private memory at the same
   address (a hook of a call the fork happened inside may still store into its record) and the descriptor closed
   when it is still the file; the child makes its own file at its next call. */
void fl_ring_forget(fl_ring *r);
/* A slice for thread 'tid': a free one (its records reserved with fallocate), else the oldest exited one. NULL
   when none is left or the file system is full ('*nospace' set then). */
fl_slice *fl_ring_claim(fl_ring *r, uint64_t tid, uint64_t now, int *nospace);
/* Its thread ended. */
void fl_ring_release(fl_ring *r, fl_slice *s);

/* A copy of the ring as it is now into a new file 'path' (0600, O_EXCL), with 'ev' as its event; records being
   written while copied are left out (their seq zeroed). Async-signal-safe (system calls only, a 4 KiB buffer on
   the stack). 0, or -1 with errno. */
int fl_ring_snapshot(const fl_ring *r, const char *path, const fl_event *ev);
/* The event in the ring itself (a fatal signal: the file is the dump), flushed with msync. Async-signal-safe. */
void fl_ring_mark(fl_ring *r, const fl_event *ev);

/* Async-signal-safe text: appends 's' / the decimal 'v' / "0x..." at out[*len], within cap (NUL-terminated). */
void fl_put(char *out, size_t cap, size_t *len, const char *s);
void fl_put_u64(char *out, size_t cap, size_t *len, uint64_t v);
void fl_put_hex(char *out, size_t cap, size_t *len, uint64_t v);

#endif /* FL_RING_H */
