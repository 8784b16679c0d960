/*
 * dispatch.h - the dispatch core (dispatch.c): the slots, lazy resolution of
 * real functions, the fast-path targets, the slow path and its call frames,
 * failing closed.
 */
#ifndef RT_DISPATCH_H
#define RT_DISPATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base.h"
#include "cushim/cushim.h"
#include "cushim_api_ids.h"
#include "hooks.h"
#include "libs.h"
#include "thread.h"

/* Everything the call path reads of one API, in 32 bytes: one cache line (bench/cpu/footprint.sh). */
typedef struct rt_slot {
    /* What the exported wrapper tail-calls: 'real' when resolved, the slot has no chain and the shim has not
       failed closed; rt_first_of[id] while the real is unknown; else rt_slow_of[id]. Recomputed lock-free by
       rt_fast_update after any of its inputs changed. */
    _Atomic(void *) fast;
    _Atomic(void *) real;                  /* the real function (or a cuGetProcAddress handler) */
    _Atomic(const hk_chain *) chain;       /* NULL: no hook, no counter       */
    int16_t index1;                        /* 1 + the index in cushim_gen_apis; 0 until rt_slots_index */
    _Atomic uint8_t foreign;               /* forwarded untouched (dispatch.c rt_check_foreign) */
} __attribute__((aligned(32))) rt_slot;

/* wrapper_table.c */
extern rt_slot rt_slots[CUSHIM_API_ID_LIMIT];            /* 'fast' starts at the first entry */
void *rt_first_target(uint32_t id);   /* where a first call goes: the real function or the slow path */
void rt_fast_update(uint32_t id);
void rt_fast_update_all(void);

enum { RT_MODE_DIRECT = 0, RT_MODE_HOOKED = 1, RT_MODE_SKIPPED = 2, RT_MODE_FAIL = LB_FAIL_MISSING,
       RT_MODE_FAIL_INIT = LB_FAIL_INIT };

/* One hooked call on this thread's stack (wrap.h). */
typedef struct rt_frame {
    cushim_call call;                   /* what hooks see                            */
    struct rt_frame *saved_top;         /* rec->top at entry, restored at exit       */
    const hk_chain *chain;              /* snapshot used for pre and post            */
    th_rec *rec;
    uint32_t npre;                      /* pre hooks reached (post hooks run for these) */
    uint8_t in_hook;                    /* callbacks running: CUDA calls go straight through */
    uint8_t active;                     /* pushed; cleared by rt_end / rt_abandon    */
    uint8_t saved_in_cb;
    struct _pthread_cleanup_buffer cbuf;   /* glibc runs rt_abandon on a longjmp past us */
    uint64_t slots[CUSHIM_MAX_HOOKS];
} rt_frame;

/* The slow path's decision (RT_MODE_*; f->call.real is the function to call);
   for a hooked call the frame is pushed and the pre hooks have run. */
RT_HOT_FN int rt_enter(rt_frame *f, uint32_t id, void *params, void *retval);
RT_HOT_FN void rt_post(rt_frame *f);             /* post hooks; pops the frame */
void rt_end(rt_frame *f);                        /* pops a frame left pushed (unwinding) */
static inline void rt_frame_cleanup(rt_frame *f)
{
    if (RT_UNLIKELY(f->active))
        rt_end(f);
}
void *rt_resolve(uint32_t id);                   /* slot real, resolving it once */
void *rt_lib_real(uint32_t id);                  /* the library's own function */
void rt_record_real(uint32_t id, void *lib_fn);
const cushim_call *rt_current_call(void);
int rt_in_hook(void);                            /* a hook callback runs on this thread */
/* Fail closed: every CUDA call (but the cuGetProcAddress family) returns an
   initialisation error; 'why' is logged again at the first refused call. */
void rt_fail_closed(const char *why);
int rt_failed(void);
void rt_hooks_off(void);                         /* at exit, before plugins flush */
int rt_hooks_are_off(void);
void rt_set_disabled(int disabled);

#endif /* RT_DISPATCH_H */
