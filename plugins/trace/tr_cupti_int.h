/*
 * tr_cupti_int.h - what tr_cupti.c offers the pause policies (the CUPTI
 * functions loaded, attaching again after a detach), and what a pause policy
 * is: what CUPTI does while recording is paused with unhook=1, asked at a few
 * points through the table tr_cupti_start is handed (tr_gpause.h). The
 * product's is tr_gdetach.c (gpu_detach: CUPTI detached a while into a pause);
 * a bench-only build of the plugin links another in its place
 * (bench/gpu/trace_gpuab.c, the plugin's gpu-ab copy).
 */
#ifndef TR_CUPTI_INT_H
#define TR_CUPTI_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tr_base.h"

#if defined(TR_HAVE_CUPTI)
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

typedef CUptiResult (*f_enable)(CUpti_ActivityKind);
typedef CUptiResult (*f_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*f_next)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*f_flush)(uint32_t);
typedef CUptiResult (*f_push)(CUpti_ExternalCorrelationKind, uint64_t);
typedef CUptiResult (*f_pop)(CUpti_ExternalCorrelationKind, uint64_t *);
typedef CUptiResult (*f_ts_cb)(CUpti_TimestampCallbackFunc);
typedef CUptiResult (*f_ts)(uint64_t *);
typedef CUptiResult (*f_dropped)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*f_version)(uint32_t *);
typedef CUptiResult (*f_subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*f_unsubscribe)(CUpti_SubscriberHandle);
typedef CUptiResult (*f_enable_cb)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);

typedef struct tr_cu_fns {
    void *lib;
    f_enable enable;
    f_register reg;
    f_next next;
    f_flush flush;
    f_push push;
    f_pop pop;
    f_dropped dropped;
    int64_t offset;   /* add to a CUPTI timestamp to get ours */
    int on;
    int callbacks;    /* linked through callbacks (else external correlation ids) */
    f_ts_cb ts_cb;    /* our clock registered (NULL: CUPTI's own, shifted by offset); again on attaching again */
    CUptiResult (*finalize)(void);   /* cuptiFinalize (NULL: none): detaching, gpu_detach and the gpu-ab build */
} tr_cu_fns;
extern tr_cu_fns tr_cu;
/* bumped at each detach: a correlation id kept pending across one belongs to the attachment before */
extern _Atomic uint32_t tr_corr_gen;
/* After cuptiFinalize: CUPTI attached again as tr_cupti_start attached it - our clock, the buffers and GPU kinds,
   the subscriber. 0, or -1 when CUPTI refuses. */
int tr_cupti_attach_again(void);

/* ---- the pause policy: what tr_cupti.c asks of it, handed to tr_cupti_start (tr_gpause.h names the one the
   plugin links: tr_gdetach.c's; bench/gpu/trace_gpuab.c's in the gpu-ab copy) ---- */
typedef struct tr_gpause {
    /* At the end of a successful tr_cupti_start: 0, or -1 with 'err' set (CUPTI is not used then). */
    int (*start)(tr_state *st, double detach_s, char *err, size_t errlen);
    /* Callback mode: each launch, copy or set function whose callback is enabled; then all of them enabled ('en',
       the subscriber 'h'): 0, or -1 when the policy cannot work with them (callback mode is given up). */
    void (*callback_enabled)(CUpti_CallbackDomain dom, CUpti_CallbackId cbid);
    int (*subscribed)(CUpti_SubscriberHandle h, f_enable_cb en, uint32_t enabled);
    /* A callback not at an entry (at_exit: at the function's exit), on the calling thread inside the real
       function: 1 when the policy took it (nothing more is done with it). */
    int (*callback_exit)(int at_exit);
    /* A DRIVER or RUNTIME activity record: 1 when the policy took it. */
    int (*api_record)(const CUpti_Activity *r);
    /* Before the flush at exit: 0, or -1 when there is nothing to flush (detached); after it. */
    int (*before_flush)(void);
    void (*after_flush)(void);
    /* In a forked child of a process that started CUPTI (it is not carried over). */
    void (*fork_child)(void);
} tr_gpause;
#else
typedef struct tr_gpause {
    int none;   /* a build without CUPTI: no policy is asked anything */
} tr_gpause;
#endif

#endif /* TR_CUPTI_INT_H */
