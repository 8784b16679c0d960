/*
 * tr_cupti.c - GPU activity for the trace plugin (option gpu=1): kernels,
 * copies and sets from CUPTI's activity API, loaded at run time (dlopen of
 * libcupti.so from the toolkit), each linked to the call that launched it.
 *
 * Linking, preferred way ("callbacks"): a CUPTI callback subscriber enabled
 * only on the driver and runtime functions that put work on the GPU (names
 * with Launch, Memcpy or Memset). The pre hook of a traced launch, copy or set
 * call pushes our seq on a per-thread stack (popped by its post hook); CUPTI's
 * entry callback of the same call, made inside the real function, reads the
 * call's CUPTI correlation id - the one its kernel, copy or set activity record
 * carries - and stores (that id -> our seq) as a CORR record. A runtime call
 * the shim does not see (a runtime that binds its own symbols, as PyTorch's
 * does) gives its kernel the runtime call's id: its entry callback keeps the id
 * pending on the thread, and the first traced driver call inside it takes it.
 * CUPTI then records only GPU work: no activity record per API call.
 *
 * Fallback ("activity"), when CUPTI has another subscriber (Nsight Systems, a
 * profiler in the application): the pre hook pushes our seq as an external
 * correlation id; CUPTI reports (its correlation id -> our seq) records
 * before the activity records of API calls (so the RUNTIME and DRIVER kinds are
 * enabled too), which the writer uses to draw a flow from the call to the GPU
 * event. A kernel launched through the runtime carries the runtime call's
 * correlation id, and CUPTI records nothing for the driver call inside it, which
 * is where our id was pushed when the shim sees only that one: the runtime
 * records of launch, copy and set APIs go to the writer (TR_REC_RTAPI), which
 * links them to our calls by thread and time (tr_link.h).
 *
 * While paused with unhook=1, what CUPTI does is the pause policy's
 * (tr_cupti_int.h): the product's, tr_gdetach.c, detaches it gpu_detach
 * seconds into a pause and attaches it again at the resume.
 *
 * CUPTI timestamps come from our clock (cuptiActivityRegisterTimestampCallback)
 * where CUPTI offers that, else are shifted by the offset measured at start.
 * CUPTI's own thread (the buffer callbacks) is marked quiet: CUDA calls it
 * makes are never recorded as the application's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cushim/cushim_io.h"
#include "tr_cupti.h"
#include "tr_cupti_int.h"
#include "tr_record.h"

#if defined(TR_HAVE_CUPTI)



tr_cu_fns tr_cu;
static const tr_gpause *gp;   /* the pause policy tr_cupti_start was handed */
static int cu_forked;   /* this is a forked child of a process that had started CUPTI (tr_cupti_fork_child) */


/* The traced launch, copy and set calls open on this thread, innermost last (callback mode; deeper than
   TR_CORR_DEPTH: counted, the innermost kept ones stand for them), and the CUPTI correlation id of a
   runtime call the shim does not see, waiting for the first traced driver call inside it. */
#define TR_CORR_DEPTH 8
static __thread uint64_t corr_stack[TR_CORR_DEPTH];
static __thread uint32_t corr_n;
static __thread uint32_t corr_rt_pending;
/* CUPTI's attachment a pending id belongs to: a detach (gpu_detach) inside a runtime call skips its exit callback,
   so an id left pending then must not be taken after CUPTI is attached again */
static __thread uint32_t corr_rt_gen;
_Atomic uint32_t tr_corr_gen;

#define TR_CUPTI_BUF (4u * 1024u * 1024u)

typedef CUptiResult (*f_cbname)(CUpti_CallbackDomain, CUpti_CallbackId, const char **);
static f_cbname cb_name;

/* A function that may put work on the GPU, by its CUPTI name. */
static int puts_gpu_work(const char *name)
{
    return strstr(name, "Launch") || strstr(name, "Memcpy") || strstr(name, "Memset");
}

/* by runtime cbid: 0 not looked at yet, 1 a launch/copy/set API, 2 another; written by whichever thread
   completes a buffer first (the same value each time) */
static _Atomic unsigned char rt_kind[4096];

/* A runtime API that may put work on the GPU: its record is worth linking. */
static int rt_launches(uint32_t cbid)
{
    unsigned char k = cbid < 4096 ? atomic_load_explicit(&rt_kind[cbid], memory_order_relaxed) : 0;
    const char *name = NULL;
    if (k != 0)
        return k == 1;
    if (cb_name == NULL || cb_name(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || name == NULL)
        k = 1;   /* unknown: forwarded (the writer only links what matches a call) */
    else
        k = puts_gpu_work(name) ? 1 : 2;
    if (cbid < 4096)
        atomic_store_explicit(&rt_kind[cbid], k, memory_order_relaxed);
    return k == 1;
}

static uint64_t CUPTIAPI ts_ours(void)
{
    return tr_host->now_ns();
}

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max)
{
    *buffer = aligned_alloc(8, TR_CUPTI_BUF);
    *size = *buffer ? TR_CUPTI_BUF : 0;
    *max = 0;
}

/* a CUPTI timestamp on our clock */
static uint64_t ts_shift(uint64_t t)
{
    return (uint64_t)((int64_t)t + tr_cu.offset);
}

static void gpu_rec(tr_gpu *g, const char *name)
{
    if (g->start == 0 || g->end < g->start) {   /* unfinished when forced out (a detach): no times to show */
        if (tr_st)
            atomic_fetch_add(&tr_st->w.gpu_dropped, 1);
        return;
    }
    g->start = ts_shift(g->start);
    g->end = ts_shift(g->end);
    tr_record(TR_REC_GPU, 0, 0, g->start, g, sizeof *g, name ? name : "", name ? (uint32_t)strlen(name) : 0);
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    size_t dropped = 0;
    (void)size;
    tr_thread_quiet(1);
    while (valid > 0 && tr_cu.next(buffer, valid, &r) == CUPTI_SUCCESS) {
        tr_gpu g;
        memset(&g, 0, sizeof g);
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            g.kind = TR_GPU_KERNEL;
            g.start = k->start;
            g.end = k->end;
            g.device = k->deviceId;
            g.stream = k->streamId;
            g.correlation = k->correlationId;
            g.grid[0] = (uint32_t)k->gridX, g.grid[1] = (uint32_t)k->gridY, g.grid[2] = (uint32_t)k->gridZ;
            g.block[0] = (uint32_t)k->blockX, g.block[1] = (uint32_t)k->blockY, g.block[2] = (uint32_t)k->blockZ;
            gpu_rec(&g, k->name);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
            g.kind = TR_GPU_MEMCPY;
            g.start = m->start;
            g.end = m->end;
            g.bytes = m->bytes;
            g.copy_kind = m->copyKind;
            g.device = m->deviceId;
            g.stream = m->streamId;
            g.correlation = m->correlationId;
            gpu_rec(&g, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
            g.kind = TR_GPU_MEMSET;
            g.start = m->start;
            g.end = m->end;
            g.bytes = m->bytes;
            g.device = m->deviceId;
            g.stream = m->streamId;
            g.correlation = m->correlationId;
            gpu_rec(&g, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)r;
            if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
                tr_record(TR_REC_CORR, e->correlationId, e->externalId, 0, NULL, 0, NULL, 0);
            break;
        }
        case CUPTI_ACTIVITY_KIND_DRIVER:
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
            const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)r;
            uint64_t end;
            if (gp->api_record(r) || r->kind != CUPTI_ACTIVITY_KIND_RUNTIME)   /* the pause policy's first */
                break;
            end = ts_shift(a->end);
            if (rt_launches(a->cbid))
                tr_record(TR_REC_RTAPI, a->correlationId, a->threadId, ts_shift(a->start), &end, sizeof end, NULL, 0);
            break;
        }
        default:
            break;
        }
    }
    if (tr_cu.dropped != NULL && tr_cu.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped > 0 && tr_st)
        atomic_fetch_add(&tr_st->w.gpu_dropped, dropped);
    free(buffer);
}

/* CUPTI's buffers ours and its records of GPU work on (at start; the gpu-ab build again after each detach). 0, or
   -1 when CUPTI refuses. */
static int gpu_records_on(void)
{
    if (tr_cu.reg(buf_request, buf_complete) != CUPTI_SUCCESS ||
        tr_cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
        tr_cu.enable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS || tr_cu.enable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS)
        return -1;
    return 0;
}


/* CUPTI's entry (and, enabled with it, exit) callback of a launch, copy or set function: its correlation id
   belongs to the traced call open on this thread (see the top of the file). Runs on the calling thread,
   inside the real function. */
static void CUPTIAPI corr_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
    const CUpti_CallbackData *d = data;
    uint64_t cur;
    (void)ud, (void)cbid;
    if ((dom != CUPTI_CB_DOMAIN_DRIVER_API && dom != CUPTI_CB_DOMAIN_RUNTIME_API) || d == NULL)
        return;
    if (d->callbackSite != CUPTI_API_ENTER) {
        if (gp->callback_exit(d->callbackSite == CUPTI_API_EXIT))   /* the pause policy's (a detach) */
            return;
        if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
            corr_rt_pending = 0;   /* its driver calls are over */
        return;
    }
    cur = corr_n == 0 ? 0 : corr_stack[(corr_n < TR_CORR_DEPTH ? corr_n : TR_CORR_DEPTH) - 1];
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (cur != 0)   /* the shim saw this runtime call: its pre hook pushed it just now */
            tr_record(TR_REC_CORR, d->correlationId, cur, 0, NULL, 0, NULL, 0);
        else
            corr_rt_pending = d->correlationId, corr_rt_gen = atomic_load_explicit(&tr_corr_gen, memory_order_relaxed);
        return;
    }
    if (cur == 0)
        return;   /* a driver call the trace does not record */
    tr_record(TR_REC_CORR, d->correlationId, cur, 0, NULL, 0, NULL, 0);
    if (corr_rt_pending != 0) {
        if (corr_rt_gen == atomic_load_explicit(&tr_corr_gen, memory_order_relaxed))
            tr_record(TR_REC_CORR, corr_rt_pending, cur, 0, NULL, 0, NULL, 0);
        corr_rt_pending = 0;
    }
}

/* Callback mode: a subscriber on the launch, copy and set functions of both API domains. 0, or -1 when CUPTI
   will not have us (another subscriber: Nsight Systems, a profiler in the application) and the external
   correlation ids must do. */
static int corr_callbacks_start(void)
{
    f_subscribe sub = (f_subscribe)dlsym(tr_cu.lib, "cuptiSubscribe");
    f_unsubscribe unsub = (f_unsubscribe)dlsym(tr_cu.lib, "cuptiUnsubscribe");
    f_enable_cb en = (f_enable_cb)dlsym(tr_cu.lib, "cuptiEnableCallback");
    static const struct {
        CUpti_CallbackDomain dom;
        uint32_t n;
    } doms[2] = {{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE}};
    CUpti_SubscriberHandle h = NULL;
    uint32_t enabled = 0;
    if (sub == NULL || en == NULL || cb_name == NULL || sub(&h, corr_cb, NULL) != CUPTI_SUCCESS)
        return -1;
    for (int k = 0; k < 2; k++)
        for (uint32_t cbid = 1; cbid < doms[k].n; cbid++) {
            const char *name = NULL;
            if (cb_name(doms[k].dom, cbid, &name) != CUPTI_SUCCESS || name == NULL || !puts_gpu_work(name))
                continue;
            if (en(1, h, doms[k].dom, cbid) != CUPTI_SUCCESS) {
                if (unsub != NULL)
                    unsub(h);
                return -1;
            }
            gp->callback_enabled(doms[k].dom, cbid);
            enabled++;
        }
    if (enabled == 0) {
        if (unsub != NULL)
            unsub(h);
        return -1;
    }
    if (gp->subscribed(h, en, enabled) != 0) {
        if (unsub != NULL)
            unsub(h);
        return -1;
    }
    return 0;
}

/* CUPTI starts threads of its own while it is set up (the worker that hands its activity buffers over), on the
   program's thread that made the call the trace recorded first: they inherit that thread's signal mask and
   would take the program's signals (cushim_io.h, cushim_thread_create; e2e_sigmask). So it is set up with every
   signal blocked, the mask restored after (a signal sent meanwhile waits, pending, for that moment). */
static void cupti_block_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
}

/* After cuptiFinalize: CUPTI attached again as tr_cupti_start attached it - our clock, the buffers and GPU kinds,
   the subscriber. 0, or -1 when CUPTI refuses. */
int tr_cupti_attach_again(void)
{
    sigset_t old;
    int rc = -1;
    cupti_block_signals(&old);
    if ((tr_cu.ts_cb == NULL || tr_cu.ts_cb(ts_ours) == CUPTI_SUCCESS) && gpu_records_on() == 0)
        rc = corr_callbacks_start();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}


/* In a forked child. CUPTI started in the parent does not carry over: its threads are gone, its locks may be held
   by them, and CUDA itself is unusable in the child of a process that initialised it. So nothing is asked of CUPTI
   here - no flush at the child's exit, no second start when the child opens its own file (tr_cupti_start says
   why, and the child's file notes it) - and the records in CUPTI's buffers at the fork stay the parent's. A child
   of a process that had not started CUPTI starts it as any process does. gpu_detach: no flusher thread, its lock
   maybe held by the parent's. */
void tr_cupti_fork_child(void)
{
    if (tr_cu.on) {
        tr_cu.on = 0;
        tr_cu.callbacks = 0;
        cu_forked = 1;
    }
    corr_n = 0;
    corr_rt_pending = 0;
    if (gp != NULL)
        gp->fork_child();
}


static int cupti_start_masked(tr_state *st, const char *path, double detach_s, char *err, size_t errlen);

int tr_cupti_start(tr_state *st, const char *path, double detach_s, const tr_gpause *policy, char *err,
                   size_t errlen)
{
    sigset_t old;
    int rc;
    gp = policy;
    cupti_block_signals(&old);   /* see cupti_block_signals */
    rc = cupti_start_masked(st, path, detach_s, err, errlen);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static int cupti_start_masked(tr_state *st, const char *path, double detach_s, char *err, size_t errlen)
{
    char buf[1024];
    if (cu_forked) {
        snprintf(err, errlen, "this is a forked child of a process whose GPU work was traced (CUDA and CUPTI do not "
                 "carry over a fork; the parent's file has the parent's GPU work)");
        return -1;
    }
    const char *home = tr_host->env_path("CUDA_HOME");
    const char *tries[4];
    int nt = 0;
    f_ts_cb tscb;
    f_ts ts;
    if (path != NULL && path[0])
        tries[nt++] = path;
    else {
        if (home != NULL && home[0]) {
            snprintf(buf, sizeof buf, "%s/lib64/libcupti.so", home);
            tries[nt++] = buf;
        }
        tries[nt++] = "/usr/local/cuda/lib64/libcupti.so";
        tries[nt++] = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so";
        tries[nt++] = "libcupti.so";
    }
    char why[400] = "";
    for (int i = 0; i < nt && tr_cu.lib == NULL; i++) {
        /* a path must be a regular file, looked at without blocking: dlopen of a FIFO waits for a writer forever
           (a file replaced in between is left: runtime/loader.c says why the descriptor is not dlopened) */
        if (strchr(tries[i], '/') != NULL) {
            int fd = cushim_open_regular(tries[i], O_RDONLY, 0, why, sizeof why);
            if (fd < 0 && errno == EINVAL)
                continue;
            if (fd >= 0)
                close(fd);
            why[0] = '\0';   /* another failure (missing) is dlopen's to tell */
        }
        tr_cu.lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (tr_cu.lib == NULL) {
        const char *e = nt == 1 && why[0] != '\0' ? why : dlerror();
        snprintf(err, errlen, "cannot load CUPTI (%s%s): %s; give cupti=PATH or set CUDA_HOME", tries[0],
                 nt > 1 ? " and the toolkit's defaults" : "", e != NULL ? e : "not found");
        return -1;
    }
    tr_cu.enable = (f_enable)dlsym(tr_cu.lib, "cuptiActivityEnable");
    tr_cu.reg = (f_register)dlsym(tr_cu.lib, "cuptiActivityRegisterCallbacks");
    tr_cu.next = (f_next)dlsym(tr_cu.lib, "cuptiActivityGetNextRecord");
    tr_cu.flush = (f_flush)dlsym(tr_cu.lib, "cuptiActivityFlushAll");
    tr_cu.push = (f_push)dlsym(tr_cu.lib, "cuptiActivityPushExternalCorrelationId");
    tr_cu.pop = (f_pop)dlsym(tr_cu.lib, "cuptiActivityPopExternalCorrelationId");
    tr_cu.dropped = (f_dropped)dlsym(tr_cu.lib, "cuptiActivityGetNumDroppedRecords");
    tscb = (f_ts_cb)dlsym(tr_cu.lib, "cuptiActivityRegisterTimestampCallback");
    ts = (f_ts)dlsym(tr_cu.lib, "cuptiGetTimestamp");
    cb_name = (f_cbname)dlsym(tr_cu.lib, "cuptiGetCallbackName");
    if (!tr_cu.enable || !tr_cu.reg || !tr_cu.next || !tr_cu.flush || !tr_cu.push || !tr_cu.pop) {
        snprintf(err, errlen, "the CUPTI loaded lacks the activity API's functions");
        return -1;
    }
    {
        /* the activity records are read with this build's struct layouts (CUpti_ActivityKernel10...): a CUPTI
           of an older CUDA major release writes older ones */
        f_version ver = (f_version)dlsym(tr_cu.lib, "cuptiGetVersion");
        uint32_t v = 0;
        if (ver == NULL || ver(&v) != CUPTI_SUCCESS || v / 10000 < CUPTI_API_VERSION / 10000) {
            snprintf(err, errlen, "the CUPTI loaded has API version %u, this build reads the records of CUDA %u "
                     "(API version %u): give cupti=PATH of that toolkit", v, (unsigned)CUPTI_API_VERSION / 10000,
                     (unsigned)CUPTI_API_VERSION);
            return -1;
        }
    }
    tr_cu.offset = 0;
    if (tscb == NULL || tscb(ts_ours) != CUPTI_SUCCESS) {
        tscb = NULL;   /* CUPTI's own clock, shifted */
        uint64_t c = 0;
        if (ts != NULL && ts(&c) == CUPTI_SUCCESS)
            tr_cu.offset = (int64_t)tr_host->now_ns() - (int64_t)c;
    }
    tr_cu.ts_cb = tscb;
    tr_cu.finalize = (CUptiResult(*)(void))dlsym(tr_cu.lib, "cuptiFinalize");
    if (gpu_records_on() != 0) {
        snprintf(err, errlen, "CUPTI refused to enable activity records (another profiler attached?)");
        return -1;
    }
    tr_cu.callbacks = corr_callbacks_start() == 0;
    if (!tr_cu.callbacks &&
        (tr_cu.enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) != CUPTI_SUCCESS ||
         /* external correlation records precede API activity records only: CUPTI must record the API calls
            too (their records are skipped here), as PyTorch's profiler does */
         tr_cu.enable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS || tr_cu.enable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS)) {
        snprintf(err, errlen, "CUPTI refused to enable activity records (another profiler attached?)");
        return -1;
    }
    if (gp->start(st, detach_s, err, errlen) != 0)   /* the pause policy (a gpu-ab build may refuse) */
        return -1;
    st->w.gpu_corr = tr_cu.callbacks ? "callbacks" : "activity";
    if (!tr_cu.callbacks)
        tr_host->log(st->self, CUSHIM_LOG_INFO, "CUPTI has another callback subscriber: GPU work is linked to calls "
                     "through CUPTI's API activity records (every call recorded a second time: slower)");
    tr_cu.on = 1;
    return 0;
}

void tr_cupti_flush(void)
{
    if (tr_cu.on) {
        if (gp->before_flush() != 0)
            return;   /* detached: its records were handed over then, and a call now would attach it again */
        int q = tr_thread_quiet(1);
        tr_cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        tr_thread_quiet(q);
        gp->after_flush();
    }
}

void tr_cupti_push(uint64_t seq)
{
    if (tr_cu.callbacks) {
        if (corr_n < TR_CORR_DEPTH)
            corr_stack[corr_n] = seq;
        corr_n++;
    } else if (tr_cu.on) {
        tr_cu.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, seq);
    }
}

void tr_cupti_pop(void)
{
    uint64_t last;
    if (tr_cu.callbacks) {
        if (corr_n > 0)
            corr_n--;
    } else if (tr_cu.on) {
        tr_cu.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
}

#else /* !TR_HAVE_CUPTI */

int tr_cupti_start(tr_state *st, const char *path, double detach_s, const tr_gpause *policy, char *err,
                   size_t errlen)
{
    (void)st, (void)path, (void)detach_s, (void)policy;
    snprintf(err, errlen, "this build has no CUPTI headers (cupti_activity.h was not found at build time)");
    return -1;
}
void tr_cupti_flush(void) {}
void tr_cupti_push(uint64_t seq) { (void)seq; }
void tr_cupti_pop(void) {}
void tr_cupti_fork_child(void) {}
#endif
