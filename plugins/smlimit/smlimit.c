/*
 * smlimit.c - the smlimit plugin: hold a process to a share of each GPU's time
 * (docs/plugins/smlimit.md).
 *
 *   CUSHIM_PLUGINS='smlimit:limit=30'            # 30% of every device's time
 *   CUSHIM_PLUGINS='smlimit:limit=0:30\,1:50'     # per device (',' escaped in CUSHIM_PLUGINS)
 *   cushim run --sm-limit=30 -- ./app            # the same through the launcher
 *   CUDA_DEVICE_SM_LIMIT=30 [CUDA_DEVICE_SM_LIMIT_1=50] with smlimit loaded, no limit=
 *
 * A pre hook on every driver launch path (cuLaunchKernel(Ex), cooperative and
 * multi-device launches, cuGraphLaunch, the legacy cuLaunch*; runtime and
 * library launches reach these) asks the device's limiter (core.c) whether the
 * process is within its budget of measured GPU time and, if not, sleeps the
 * launching thread until it is. A post hook records an event (timing disabled)
 * after each launch on its stream; one polling thread queries the events in
 * order and reports each finished launch as the interval from max(its submit
 * time, the previous finish on its stream, the last finish of another process
 * on the device) to the time the poll saw it finish. The limiter counts the
 * union of those intervals. Several processes on a device meet in a shared
 * region (shm.c): limits above 100 in total are scaled down in proportion
 * (weights), and with work_conserving=1 a process also uses the share its
 * partners leave unused. A limit of 100, or none, registers no hook at all.
 * Built on the public SDK headers (and the generated params structs) only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim.h>
#include "cushim_api_ids.h"     /* generated; installed as <cushim/cushim_api_ids.h> */
#include "cushim_params.h"      /* generated; installed as <cushim/cushim_params.h> */

#include "core.h"
#include "shm.h"

#define SML_MAX_DEV SML_SHM_DEVICES
#define SML_STREAMS 64                  /* last finish per stream, per device (hashed) */
#define SML_MAX_PENDING 16384           /* markers in flight; a launch waits beyond    */
#define SML_BEAT_NS 50000000ull         /* shared-region heartbeat and share update    */

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
    double limit;                       /* the configured share, (0, 1)                */
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
} sml_dev;

typedef struct sml_state {
    cushim_plugin *self;
    sml_dev dev[SML_MAX_DEV];
    uint64_t window_ns, poll_ns;
    int work_conserving, report, shared;
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
    atomic_int resolved;                /* 0: not yet, 1: usable, -1: missing functions */
} sml_state;

static const cushim_host *sml_host;
static atomic_int sml_no_poller_logged;

static uint64_t sml_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sml_sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- limits ------------------------------------------------------------ */

/* "30" | "0:30,1:50" | "30,1:50" (a bare number: every device not named).
   Percent in [0, 100]; 0 and 100 mean no limit, as in HAMi-core. */
static int sml_parse_limits(const char *text, double out[SML_MAX_DEV], char *err, size_t errlen)
{
    const char *p = text;
    double all = 0;
    int given[SML_MAX_DEV] = {0};
    double per[SML_MAX_DEV] = {0};
    while (*p) {
        char *end;
        long dev = -1;
        double v;
        while (*p == ' ')
            p++;
        v = strtod(p, &end);
        if (end == p)
            goto bad;
        if (*end == ':') {
            if (v < 0 || v >= SML_MAX_DEV || v != (double)(long)v) {
                snprintf(err, errlen, "device '%.*s' is not a number in 0..%d", (int)(end - p), p, SML_MAX_DEV - 1);
                return -1;
            }
            dev = (long)v;
            p = end + 1;
            v = strtod(p, &end);
            if (end == p)
                goto bad;
        }
        if (!(v >= 0 && v <= 100)) {
            snprintf(err, errlen, "limit '%.*s' is not a percentage in 0..100", (int)(end - p), p);
            return -1;
        }
        if (*end == '%')
            end++;
        if (dev < 0)
            all = v;
        else {
            given[dev] = 1;
            per[dev] = v;
        }
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            goto bad;
    }
    for (int i = 0; i < SML_MAX_DEV; i++)
        out[i] = given[i] ? per[i] : all;
    return 0;
bad:
    snprintf(err, errlen, "cannot read '%s': want PERCENT or DEV:PERCENT,... (e.g. 30 or 0:30,1:50)", text);
    return -1;
}

/* HAMi-core's variables: CUDA_DEVICE_SM_LIMIT_<i>, else CUDA_DEVICE_SM_LIMIT;
   unset or 0 means none. */
static int sml_env_limits(double out[SML_MAX_DEV], char *err, size_t errlen)
{
    const char *all = sml_host->env("CUDA_DEVICE_SM_LIMIT");
    double base = 0;
    if (all != NULL && *all) {
        char *end;
        base = strtod(all, &end);
        if (end == all || *end != '\0' || !(base >= 0)) {
            snprintf(err, errlen, "CUDA_DEVICE_SM_LIMIT='%s' is not a percentage", all);
            return -1;
        }
    }
    for (int i = 0; i < SML_MAX_DEV; i++) {
        char name[40];
        const char *v;
        out[i] = base;
        snprintf(name, sizeof name, "CUDA_DEVICE_SM_LIMIT_%d", i);
        if ((v = sml_host->env(name)) != NULL && *v) {
            char *end;
            double d = strtod(v, &end);
            if (end == v || *end != '\0' || !(d >= 0)) {
                snprintf(err, errlen, "%s='%s' is not a percentage", name, v);
                return -1;
            }
            if (d > 0)
                out[i] = d;
        }
        if (out[i] > 100)
            out[i] = 100;
    }
    return 0;
}

/* ---- the stream table (under the device lock) ---------------------------- */

static uint32_t sml_stream_hash(CUstream s)
{
    uint64_t x = (uint64_t)(uintptr_t)s;
    x ^= x >> 17;
    x *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 40) % SML_STREAMS;
}

static uint64_t *sml_stream_end(sml_dev *d, CUstream s)
{
    uint32_t h = sml_stream_hash(s);
    if (d->s_key[h] != s) {   /* a collision forgets the other stream's end: it only loses a clip */
        d->s_key[h] = s;
        d->s_end[h] = 0;
    }
    return &d->s_end[h];
}

/* ---- shares between processes ------------------------------------------- */

static void sml_update_share(sml_state *st, int i, uint64_t now)
{
    sml_dev *d = &st->dev[i];
    double own = d->limit;
    uint64_t busy;
    pthread_mutex_lock(&d->mu);
    busy = d->lim.busy_ns;
    pthread_mutex_unlock(&d->mu);
    if (d->beat_t != 0 && now > d->beat_t) {
        double u = (double)(busy - d->beat_busy) / (double)(now - d->beat_t);
        d->usage = d->usage + 0.5 * (u - d->usage);
    }
    d->beat_busy = busy;
    d->beat_t = now;
    if (st->region != NULL) {
        if (d->slot == NULL || atomic_load(&d->slot->pid) != st->pid)
            d->slot = sml_shm_claim(st->region, i, st->pid, st->pid_start, now);
        if (d->slot != NULL) {
            double w[SML_SHM_SLOTS], u[SML_SHM_SLOTS];
            int n = 0;
            atomic_store(&d->slot->weight, (uint32_t)(d->limit * 1000));
            atomic_store(&d->slot->usage, (uint32_t)(d->usage * 1000));
            atomic_store(&d->slot->heartbeat, now);
            for (int k = 0; k < SML_SHM_SLOTS; k++) {
                const sml_slot *o = &st->region->slot[i][k];
                if (o == d->slot || !sml_shm_live(o, now))
                    continue;
                w[n] = atomic_load(&o->weight) / 1000.0;
                u[n] = atomic_load(&o->usage) / 1000.0;
                n++;
            }
            /* a partner using less than its share, with 5 points of slack, leaves the rest */
            own = sml_weighted_share(d->limit, w, u, n, st->work_conserving, 0.05);
        }
    }
    pthread_mutex_lock(&d->mu);
    if (own != d->share) {
        sml_set_share(&d->lim, own, now);
        d->share = own;
    }
    if (own < d->share_min)
        d->share_min = own;
    pthread_mutex_unlock(&d->mu);
}

/* Ends of other processes' work on device i: the clip for a start. */
static uint64_t sml_others_end(const sml_state *st, int i)
{
    uint64_t m = 0;
    if (st->region == NULL || st->dev[i].slot == NULL)
        return 0;
    for (int k = 0; k < SML_SHM_SLOTS; k++) {
        const sml_slot *o = &st->region->slot[i][k];
        uint64_t e;
        if (o == st->dev[i].slot || atomic_load(&o->pid) == 0)
            continue;
        if ((e = atomic_load(&o->last_end)) > m)
            m = e;
    }
    return m;
}

/* ---- the poller ------------------------------------------------------------ */

static void sml_finish(sml_state *st, sml_marker *m, uint64_t now, uint64_t clip, int measured)
{
    sml_dev *d = &st->dev[m->dev];
    pthread_mutex_lock(&d->mu);
    if (measured) {
        uint64_t *prev = sml_stream_end(d, m->stream);
        uint64_t start = m->submit;
        if (*prev > start)
            start = *prev;
        if (clip > start)
            start = clip;
        sml_complete(&d->lim, start, now, 1, now);
        *prev = now;
    } else {
        sml_forget(&d->lim, 1);
    }
    pthread_mutex_unlock(&d->mu);
    if (measured && d->slot != NULL)
        atomic_store(&d->slot->last_end, now);
}

static void *sml_poll_thread(void *arg)
{
    sml_state *st = arg;
    CUcontext cur = NULL;
    uint64_t next_beat = 0;
    CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* sleep as long as asked, not 50 us more */
    /* cuEventQuery is an "unsafe" call while another thread captures a graph in
       global mode: it would invalidate that capture. Relaxed: this thread may. */
    st->capture_mode(&relaxed);
    if (st->shared && st->region == NULL) {   /* only a process that launches joins the region */
        char err[256] = "";
        if ((st->region = sml_shm_open(st->region_name, err, sizeof err)) == NULL)
            sml_host->log(st->self, CUSHIM_LOG_WARN, "no sharing between processes: %s", err);
    }
    pthread_mutex_lock(&st->mq);
    while (!st->stop) {
        sml_marker *list, *keep = NULL, *keep_last = NULL, *done = NULL, *m, *next;
        CUstream blocked[32];
        int nblocked = 0;
        uint64_t now = sml_now(), clip[SML_MAX_DEV];
        if (now >= next_beat) {
            pthread_mutex_unlock(&st->mq);
            for (int i = 0; i < SML_MAX_DEV; i++)
                if (st->dev[i].limited && st->dev[i].started)
                    sml_update_share(st, i, now);
            next_beat = now + SML_BEAT_NS;
            pthread_mutex_lock(&st->mq);
        }
        if (st->head == NULL) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 50000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&st->mq_cond, &st->mq, &ts);
            continue;
        }
        list = st->head;
        st->head = st->tail = NULL;
        pthread_mutex_unlock(&st->mq);

        for (int i = 0; i < SML_MAX_DEV; i++)
            clip[i] = st->dev[i].limited ? sml_others_end(st, i) : 0;
        for (m = list; m != NULL; m = next) {
            int skip = 0;
            CUresult r;
            next = m->next;
            for (int b = 0; b < nblocked && !skip; b++)
                skip = blocked[b] == m->stream;   /* in order on a stream: a later one is not done either */
            if (!skip) {
                r = CUDA_SUCCESS;
                if (m->ctx != cur)
                    r = st->ctx_set_current(m->ctx);
                if (r == CUDA_SUCCESS) {
                    cur = m->ctx;
                    r = st->event_query(m->ev);
                }
                if (r == CUDA_ERROR_NOT_READY) {
                    if (nblocked < (int)(sizeof blocked / sizeof blocked[0]))
                        blocked[nblocked++] = m->stream;
                    skip = 1;
                } else {
                    uint64_t t = sml_now();
                    sml_finish(st, m, t, clip[m->dev], r == CUDA_SUCCESS);
                    if (r != CUDA_SUCCESS) {   /* its context is gone: so is the event */
                        m->ev = NULL;
                        cur = NULL;
                    }
                    m->next = done;
                    done = m;
                    continue;
                }
            }
            m->next = NULL;
            if (keep_last != NULL)
                keep_last->next = m;
            else
                keep = m;
            keep_last = m;
        }

        pthread_mutex_lock(&st->mq);
        if (keep != NULL) {   /* still pending, before the ones recorded meanwhile */
            if (st->head == NULL)
                st->tail = keep_last;
            keep_last->next = st->head;
            st->head = keep;
        }
        for (m = done; m != NULL; m = next) {
            next = m->next;
            st->npending--;
            if (m->ev == NULL) {
                free(m);
                continue;
            }
            m->next = st->free_list;
            st->free_list = m;
        }
        pthread_cond_broadcast(&st->mq_cond);
        if (st->head != NULL) {
            pthread_mutex_unlock(&st->mq);
            sml_sleep_ns(st->poll_ns);
            pthread_mutex_lock(&st->mq);
        }
    }
    pthread_mutex_unlock(&st->mq);
    return NULL;
}

/* ---- hooks ---------------------------------------------------------------- */

static int sml_current_device(const sml_state *st)
{
    CUdevice dev;
    if (st->ctx_get_device(&dev) != CUDA_SUCCESS || dev < 0 || dev >= SML_MAX_DEV)
        return -1;
    return (int)dev;
}

static CUstream sml_launch_stream(const cushim_call *call);

static int sml_resolve(sml_state *st);

/* The real functions, resolved at the first launch rather than in init: a
   process that never launches (a shell the environment passes through) must
   not load the driver for us. 1 when usable. */
static int sml_ready(sml_state *st)
{
    int r = atomic_load_explicit(&st->resolved, memory_order_acquire);
    if (r != 0)
        return r > 0;
    pthread_mutex_lock(&st->mq);
    if ((r = atomic_load(&st->resolved)) == 0) {
        r = sml_resolve(st) == 0 ? 1 : -1;
        atomic_store_explicit(&st->resolved, r, memory_order_release);
        if (r < 0)
            sml_host->log(st->self, CUSHIM_LOG_ERROR, "the driver lacks cuCtxGetDevice, cuEventQuery or another "
                                                      "function smlimit needs: launches are not limited");
    }
    pthread_mutex_unlock(&st->mq);
    return r > 0;
}

static int sml_pre(cushim_call *call, void *user, uint64_t *slot)
{
    sml_state *st = user;
    int i;
    if (!sml_ready(st))
        return CUSHIM_CONTINUE;
    i = sml_current_device(st);
    sml_dev *d;
    uint64_t now, wait;
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
    if (i < 0 || !(d = &st->dev[i])->limited)
        return CUSHIM_CONTINUE;
    /* a launch captured into a graph runs nothing now (its replay is a cuGraphLaunch),
       and an event recorded after it would become part of the graph: leave it alone */
    if (call->api_id != CUSHIM_API_cuLaunchCooperativeKernelMultiDevice &&
        (st->is_capturing(sml_launch_stream(call), &cap) != CUDA_SUCCESS || cap != CU_STREAM_CAPTURE_STATUS_NONE))
        return CUSHIM_CONTINUE;
    for (;;) {
        now = sml_now();
        pthread_mutex_lock(&d->mu);
        if (!d->started) {
            d->started = 1;
            d->t_start = now;
            sml_init(&d->lim, d->share, st->window_ns, now);
        }
        wait = sml_admit(&d->lim, now);
        if (wait > 0)
            d->waited_ns += wait;
        pthread_mutex_unlock(&d->mu);
        if (wait == 0)
            break;
        sml_sleep_ns(wait);
    }
    *slot = now;
    return CUSHIM_CONTINUE;
}

/* The stream a launch went to, as a handle valid for the legacy cuEventRecord. */
static CUstream sml_launch_stream(const cushim_call *call)
{
    CUstream s = NULL;
    const void *p = call->params;
    switch (call->api_id) {
    case CUSHIM_API_cuLaunchKernel:
    case CUSHIM_API_cuLaunchKernel_ptsz:
        s = ((const cushim_params_cuLaunchKernel *)p)->hStream;
        break;
    case CUSHIM_API_cuLaunchKernelEx:
    case CUSHIM_API_cuLaunchKernelEx_ptsz: {
        const CUlaunchConfig *c = ((const cushim_params_cuLaunchKernelEx *)p)->config;
        s = c != NULL ? c->hStream : NULL;
        break;
    }
    case CUSHIM_API_cuLaunchCooperativeKernel:
    case CUSHIM_API_cuLaunchCooperativeKernel_ptsz:
        s = ((const cushim_params_cuLaunchCooperativeKernel *)p)->hStream;
        break;
    case CUSHIM_API_cuGraphLaunch:
    case CUSHIM_API_cuGraphLaunch_ptsz:
        s = ((const cushim_params_cuGraphLaunch *)p)->hStream;
        break;
    case CUSHIM_API_cuLaunchGridAsync:
        s = ((const cushim_params_cuLaunchGridAsync *)p)->hStream;
        break;
    default:   /* cuLaunch, cuLaunchGrid: the legacy stream */
        break;
    }
    if (s == NULL && call->info != NULL && call->info->per_thread != CUSHIM_PT_NONE)
        s = CU_STREAM_PER_THREAD;
    return s;
}

static void sml_post(cushim_call *call, void *user, uint64_t *slot)
{
    sml_state *st = user;
    int i;
    sml_dev *d;
    sml_marker *m = NULL, **pp;
    CUcontext ctx = NULL;
    CUstream s;
    if (*slot == 0 || (i = sml_current_device(st)) < 0)
        return;
    d = &st->dev[i];
    if (cushim_call_result(call) != CUDA_SUCCESS || call->api_id == CUSHIM_API_cuLaunchCooperativeKernelMultiDevice ||
        st->ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == NULL)
        goto forget;   /* multi-device launches span several contexts: admitted, not measured */
    s = sml_launch_stream(call);
    pthread_mutex_lock(&st->mq);
    while (st->npending >= SML_MAX_PENDING && !st->stop)
        pthread_cond_wait(&st->mq_cond, &st->mq);
    for (pp = &st->free_list; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->ctx == ctx) {
            m = *pp;
            *pp = m->next;
            break;
        }
    st->npending++;
    pthread_mutex_unlock(&st->mq);
    if (m == NULL) {
        if ((m = calloc(1, sizeof *m)) == NULL || st->event_create(&m->ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            free(m);
            pthread_mutex_lock(&st->mq);
            st->npending--;
            pthread_mutex_unlock(&st->mq);
            goto forget;
        }
        m->ctx = ctx;
    }
    m->stream = s;
    m->dev = i;
    m->submit = *slot;
    m->next = NULL;
    if (st->event_record(m->ev, s) != CUDA_SUCCESS) {
        st->event_destroy(m->ev);
        free(m);
        pthread_mutex_lock(&st->mq);
        st->npending--;
        pthread_mutex_unlock(&st->mq);
        goto forget;
    }
    pthread_mutex_lock(&st->mq);
    if (!st->poller_started && !st->stop) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&st->poller, &a, sml_poll_thread, st) == 0)
            st->poller_started = 1;
        pthread_attr_destroy(&a);
    }
    if (!st->poller_started) {
        /* nobody would ever measure it: keep the event, count the launch as done */
        m->next = st->free_list;
        st->free_list = m;
        st->npending--;
        pthread_mutex_unlock(&st->mq);
        if (!atomic_exchange(&sml_no_poller_logged, 1))
            sml_host->log(st->self, CUSHIM_LOG_ERROR, "cannot start the polling thread: launches are not limited");
        goto forget;
    }
    if (st->tail != NULL)
        st->tail->next = m;
    else
        st->head = m;
    st->tail = m;
    pthread_cond_broadcast(&st->mq_cond);
    pthread_mutex_unlock(&st->mq);
    return;
forget:
    pthread_mutex_lock(&d->mu);
    sml_forget(&d->lim, 1);
    pthread_mutex_unlock(&d->mu);
}

/* ---- lifecycle --------------------------------------------------------------- */

static int sml_resolve(sml_state *st)
{
#define SML_REAL(field, api) (st->field = (__typeof__(st->field))sml_host->real(CUSHIM_API_##api)) != NULL
    return SML_REAL(ctx_get_device, cuCtxGetDevice) && SML_REAL(ctx_get_current, cuCtxGetCurrent) &&
                   SML_REAL(ctx_set_current, cuCtxSetCurrent) && SML_REAL(event_create, cuEventCreate) &&
                   SML_REAL(event_record, cuEventRecord) && SML_REAL(event_query, cuEventQuery) &&
                   SML_REAL(event_destroy, cuEventDestroy_v2) &&
                   SML_REAL(is_capturing, cuStreamIsCapturing) &&
                   SML_REAL(capture_mode, cuThreadExchangeStreamCaptureMode)
               ? 0
               : -1;
#undef SML_REAL
}

/* Every driver launch path: the driver's launch category less host functions
   (which use no GPU time). */
static int sml_register(sml_state *st)
{
    uint32_t ids[64];
    char err[200] = "";
    int n = sml_host->api_select("cat:launch&lib:driver", ids, 64, err, sizeof err);
    if (n <= 0 || n > 64) {
        sml_host->log(st->self, CUSHIM_LOG_ERROR, "cannot select the launch APIs (%d): %s", n, err);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        const cushim_api_info *info = sml_host->api_by_id(ids[k]);
        cushim_hook_spec spec;
        if (info == NULL || strcmp(info->base_name, "cuLaunchHostFunc") == 0)
            continue;
        if (st->ngroups == sizeof st->groups / sizeof st->groups[0])
            return -1;
        memset(&spec, 0, sizeof spec);
        spec.size = sizeof spec;
        spec.api_id = ids[k];
        spec.priority = 500;   /* after tracers and quota checks at 0: a refused call never waits */
        spec.pre = sml_pre;
        spec.post = sml_post;
        spec.user = st;
        if (sml_host->hooks_add(st->self, &spec, &st->groups[st->ngroups]) != CUSHIM_OK) {
            sml_host->log(st->self, CUSHIM_LOG_ERROR, "cannot hook %s", info->name);
            return -1;
        }
        st->ngroups++;
    }
    return 0;
}

static int sml_init_plugin(const cushim_host *host, cushim_plugin *self)
{
    char err[256] = "";
    double pct[SML_MAX_DEV];
    int any = 0;
    sml_state *st;
    sml_host = host;
    if (host->opt_given(self, "limit")) {
        if (sml_parse_limits(host->opt_string(self, "limit"), pct, err, sizeof err) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "limit: %s", err);
            return -1;
        }
    } else if (sml_env_limits(pct, err, sizeof err) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "%s", err);
        return -1;
    }
    for (int i = 0; i < SML_MAX_DEV; i++)
        any |= pct[i] > 0 && pct[i] < 100;
    if (!any) {
        host->log(self, CUSHIM_LOG_INFO, "no limit below 100%%: no hook registered");
        return 0;
    }
    if ((st = calloc(1, sizeof *st)) == NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        return -1;
    }
    st->self = self;
    st->window_ns = (uint64_t)host->opt_int(self, "window_ms") * 1000000ull;
    st->poll_ns = (uint64_t)host->opt_int(self, "poll_us") * 1000ull;
    st->work_conserving = host->opt_bool(self, "work_conserving");
    st->report = host->opt_bool(self, "report");
    st->shared = host->opt_bool(self, "shared");
    if (st->window_ns < 1000000ull || st->window_ns > 10000000000ull || st->poll_ns < 1000 ||
        st->poll_ns > 10000000ull) {
        host->log(self, CUSHIM_LOG_ERROR, "window_ms must be in 1..10000 and poll_us in 1..10000");
        free(st);
        return -1;
    }
    pthread_mutex_init(&st->mq, NULL);
    pthread_cond_init(&st->mq_cond, NULL);
    st->pid = (int32_t)getpid();
    st->pid_start = sml_proc_start(st->pid);
    for (int i = 0; i < SML_MAX_DEV; i++) {
        sml_dev *d = &st->dev[i];
        pthread_mutex_init(&d->mu, NULL);
        d->limited = pct[i] > 0 && pct[i] < 100;
        d->limit = d->share = d->share_min = d->limited ? pct[i] / 100.0 : 1.0;
    }
    if (st->shared) {
        const char *group = host->opt_string(self, "group");
        if (group != NULL && *group && strspn(group, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(group)) {
            host->log(self, CUSHIM_LOG_ERROR, "group '%s': use [a-z0-9_-] only", group);
            free(st);
            return -1;
        }
        snprintf(st->region_name, sizeof st->region_name, "/cushim-smlimit-%u%s%.64s", (unsigned)geteuid(),
                 group && *group ? "-" : "", group ? group : "");
    }
    host->plugin_set_data(self, st);
    if (sml_register(st) != 0) {
        for (uint32_t g = 0; g < st->ngroups; g++)
            host->hooks_remove(self, st->groups[g]);
        host->plugin_set_data(self, NULL);
        if (host->hooks_sync() == CUSHIM_OK)
            free(st);
        return -1;
    }
    if (host->log_enabled(CUSHIM_LOG_INFO)) {
        char line[SML_MAX_DEV * 16] = "";
        size_t len = 0;
        int same = 1;
        for (int i = 1; i < SML_MAX_DEV; i++)
            same &= pct[i] == pct[0];
        if (same)
            snprintf(line, sizeof line, "%.4g%% on every device", pct[0]);
        for (int i = 0; i < SML_MAX_DEV && len < sizeof line && !same; i++)
            if (st->dev[i].limited)
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%d:%.4g%%", len ? " " : "", i, pct[i]);
        host->log(self, CUSHIM_LOG_INFO, "limits (device:percent): %s; window %llu ms%s", line,
                  (unsigned long long)(st->window_ns / 1000000), st->work_conserving ? ", work conserving" : "");
    }
    return 0;
}

static void sml_flush(cushim_plugin *self)
{
    sml_state *st = sml_host ? sml_host->plugin_data(self) : NULL;
    uint64_t now = sml_now();
    if (st == NULL)
        return;
    pthread_mutex_lock(&st->mq);
    st->stop = 1;
    pthread_cond_broadcast(&st->mq_cond);
    pthread_mutex_unlock(&st->mq);
    for (int i = 0; i < SML_MAX_DEV; i++) {
        sml_dev *d = &st->dev[i];
        if (!d->limited || !d->started)
            continue;
        pthread_mutex_lock(&d->mu);
        if (st->report)
            sml_host->log(self, CUSHIM_LOG_WARN,
                          "device %d: limit %.4g%%: busy %.3f ms of %.3f ms (%.1f%%), %llu launches admitted, "
                          "%llu waits, %.3f ms waited, share in force %.4g%% (lowest %.4g%%)",
                          i, d->limit * 100, d->lim.busy_ns / 1e6, (now - d->t_start) / 1e6,
                          now > d->t_start ? 100.0 * (double)d->lim.busy_ns / (double)(now - d->t_start) : 0.0,
                          (unsigned long long)d->lim.admitted, (unsigned long long)d->lim.delays,
                          d->waited_ns / 1e6, d->share * 100, d->share_min * 100);
        pthread_mutex_unlock(&d->mu);
        if (d->slot != NULL && atomic_load(&d->slot->pid) == st->pid)
            atomic_store(&d->slot->pid, 0);   /* leave the region */
    }
}

/* The child has no poller and none of the parent's CUDA state: start afresh. */
static void sml_fork_child(cushim_plugin *self)
{
    sml_state *st = sml_host ? sml_host->plugin_data(self) : NULL;
    if (st == NULL)
        return;
    pthread_mutex_init(&st->mq, NULL);
    pthread_cond_init(&st->mq_cond, NULL);
    st->head = st->tail = st->free_list = NULL;   /* the parent's events mean nothing here: dropped */
    st->npending = 0;
    st->poller_started = 0;
    st->pid = (int32_t)getpid();
    st->pid_start = sml_proc_start(st->pid);
    for (int i = 0; i < SML_MAX_DEV; i++) {
        sml_dev *d = &st->dev[i];
        pthread_mutex_init(&d->mu, NULL);
        d->started = 0;
        d->slot = NULL;
        d->beat_t = d->beat_busy = 0;
        d->usage = 0;
        d->share = d->share_min = d->limit;
        d->waited_ns = 0;
        memset(d->s_key, 0, sizeof d->s_key);
    }
}

static const cushim_option sml_options[] = {
    {"limit", CUSHIM_OPT_STRING, NULL,
     "percent of each device's time: 30, or per device 0:30,1:50; default CUDA_DEVICE_SM_LIMIT[_<i>]; 100: none"},
    {"window_ms", CUSHIM_OPT_INT, "100", "burst bound: an idle process saves up at most limit x window of GPU time"},
    {"poll_us", CUSHIM_OPT_INT, "20", "how often pending launches are checked for completion"},
    {"work_conserving", CUSHIM_OPT_BOOL, "false", "also use the share that partners on the device leave unused"},
    {"shared", CUSHIM_OPT_BOOL, "true", "meet other processes in /dev/shm/cushim-smlimit-<uid> (weights)"},
    {"group", CUSHIM_OPT_STRING, "", "processes share weights within a group: /dev/shm/cushim-smlimit-<uid>-<group>"},
    {"report", CUSHIM_OPT_BOOL, "false", "log each device's measured busy time and waits at exit"},
    {NULL, 0, NULL, NULL},
};

static const cushim_plugin_def sml_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "smlimit",
    .version = "0.1.0",
    .description = "hold a process to a share of each GPU's time, measured with events",
    .options = sml_options,
    .init = sml_init_plugin,
    .flush = sml_flush,
    .fork_child = sml_fork_child,
};

CUSHIM_PLUGIN(sml_def)
