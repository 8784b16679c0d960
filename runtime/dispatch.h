/*
 * dispatch.h - the dispatch core (dispatch.c): lazy resolution of real
 * functions (handed to the slots, slots.h), the slow path and its call frames.
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
#include "slots.h"
#include "thread.h"

void *rt_first_target(uint32_t id);   /* where a first call goes: the real function or the slow path */

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

#endif /* RT_DISPATCH_H */
