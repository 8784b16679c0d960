/*
 * flight.h - what the flight recorder's parts share (docs/plugins/flight.md): the per-API plan the hooks read,
 * the per-thread state, and each module's entry points. Each module owns its own state: flight.c the ring and
 * the threads, fl_func.c the kernels' names and argument layouts, fl_alloc.c the allocation tables' writes,
 * fl_event.c the events, dumps, signals and the watchdog.
 */
#ifndef FLIGHT_H
#define FLIGHT_H

#include <stdint.h>

#include <cushim/cushim.h>

#include "fl_ring.h"
#include "fl_shape.h"

/* What the hooks do for one API, decided once at init from the metadata (fl_plan_build). */
typedef struct fl_plan {
    uint16_t params_len;   /* bytes of the params struct kept (at most FL_REC_DATA)             */
    uint8_t status;        /* a 4-byte status result (cushim_ret_is_status): kept, errors checked  */
    uint8_t launch;        /* a driver launch with a function and kernelParams: arguments kept    */
    uint8_t sync;          /* category sync: the watchdog looks at it                             */
    uint8_t trunc;         /* the params struct is longer than what is kept                       */
    uint8_t post_only;     /* a query that does not wait: one record at its return (fl_post_query)  */
    uint8_t pad0;
    uint16_t func_off;     /* launch: the function handle's offset in the params                  */
    uint16_t args_off;     /* launch: kernelParams' offset                                        */
    uint16_t pad;
    uint64_t head_word;    /* a record's flags, params_len and args_len at entry, as one little-endian word
                              (the depth is or'ed in at bits 48-55) */
} fl_plan;

/* A thread's cache of the kernels it launched: the function table's entry by handle, valid while its
   generation is fl_func_gen's (bumped when modules are unloaded). */
#define FL_FCACHE 64u
typedef struct fl_fcache {
    uint64_t key;
    uint64_t gen;
    const fl_func *fn;     /* its entry in the ring's function table                             */
    uint32_t m4;           /* simple: bit i set when argument i is 4 bytes (else 8)              */
    uint16_t end;          /* simple: the end of the last argument's bytes                       */
    uint8_t nargs;
    uint8_t simple;        /* every argument known, of 4 or 8 bytes: copied without a size test  */
} fl_fcache;

typedef struct fl_thread {
    fl_slice *slice;
    uint32_t mask;         /* the ring's n - 1; 0 for the sink (a thread that is not recorded)   */
    uint32_t sink;         /* 1: records go nowhere (no slice was left)                          */
    uint32_t al_busy;      /* fl_alloc.c's hook holds its lock on this thread                    */
    uint32_t pad;
    fl_ring *ring;
    const fl_func *funcs;  /* the ring's function table                                          */
    fl_fcache cache[FL_FCACHE];
} fl_thread;

/* ---- flight.c ---- */
extern const cushim_host *fl_host;
extern cushim_plugin *fl_self;
extern const fl_plan *fl_plans;
/* The calling thread's state (made at its first recorded call), else NULL. */
fl_thread *fl_thread_me(void);
/* Now, in the records' clock (fl_clock.h: TSC ticks, or the host's ns - then the call's entry time if the core
   took it). */
uint64_t fl_time(const cushim_call *call);
/* The process's ring once made (the first recorded call makes it), else NULL. */
fl_ring *fl_ring_now(void);
/* The ring, made now if it is not yet ('t_first': the making call's entry in the records' clock, the file's time
   origin): NULL when it
   cannot be (said once: the recorder is off). */
fl_ring *fl_ring_ensure(uint64_t t_first);

/* ---- fl_func.c: kernels ---- */
/* Resolves the driver's name and parameter-layout queries. 0. */
int fl_func_init(const cushim_host *h);
/* A launch's post hook after success: the kernel's arguments copied after the params (layout from the
   function table, described at the function's first launch), then the record finished: its flags 'f' with
   FL_R_ARGS... added, stored with release. */
void fl_func_args(fl_thread *t, const fl_plan *pl, const cushim_call *call, fl_rec *r, uint16_t f);
/* A module or library was unloaded: every thread asks again. */
void fl_func_unloaded(cushim_call *call, void *user, uint64_t *slot);
void fl_func_fork_child(void);

/* ---- fl_alloc.c: live allocations ---- */
/* Its post hook on every API with an allocation role (host->alloc_role). 0, or -1 (said). */
int fl_alloc_init(const cushim_host *h, cushim_plugin *self, uint64_t *group);
void fl_alloc_fork_child(void);

/* ---- fl_event.c: events, dumps, signals, the watchdog ---- */
typedef struct fl_event_config {
    int on_error;          /* FL_ON_* */
    double hang_s;         /* 0: no watchdog */
    int request_sig;       /* 0: none */
    uint32_t max_dumps;
    int signals;           /* fatal signals marked in the ring */
    const char *dump_dir;  /* NULL: the ring's directory */
} fl_event_config;
#define FL_ON_OFF 0
#define FL_ON_STICKY 1
#define FL_ON_ANY 2
/* Reads the sticky codes by name. 0, or -1 with 'why' set. */
int fl_event_init(const cushim_host *h, const fl_event_config *c, char *why, size_t whylen);
/* The ring was just made: the signal handlers and the watchdog. */
void fl_event_ring_ready(fl_ring *rg);
/* A recorded call returned an error (status kind, not 0): the post hook's slow path. */
void fl_event_error(const cushim_call *call, const fl_rec *r);
void fl_event_fork_child(void);
void fl_event_stop(void);

#endif /* FLIGHT_H */
