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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cushim/cushim_io.h"
#include "cushim_api_ids.h"     /* generated; installed as <cushim/cushim_api_ids.h> */
#include "cushim_params.h"      /* generated; installed as <cushim/cushim_params.h> */
#include "limitspec.h"
#include "smlimit.h"
#include "visible.h"   /* plugins/common */

_Static_assert(SML_LIMIT_DEVICES == SML_MAX_DEV, "limitspec.h and shm.h disagree on the device count");

const cushim_host *sml_host;
static atomic_int sml_no_poller_logged;

uint64_t sml_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sml_sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- hooks ---------------------------------------------------------------- */

/* The launching thread's device, as the driver says. */
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
   not load the driver for us. Returns the launch path (SML_PATH_*, smlimit.h):
   sml_pre reads it once a launch, so a process without a priority runs a path
   compiled without any of the priority work. */
static __attribute__((noinline)) int sml_ready(sml_state *st)
{
    int r;
    pthread_mutex_lock(&st->mq);
    if ((r = atomic_load(&st->path)) == SML_PATH_UNRESOLVED) {
        r = sml_resolve(st) != 0 ? SML_PATH_OFF
            : st->prio >= 0     ? (st->one_dev ? SML_PATH_PRIO1 : SML_PATH_PRIO)
                                : (st->one_dev ? SML_PATH_PLAIN1 : SML_PATH_PLAIN);
        atomic_store_explicit(&st->path, r, memory_order_release);
        if (r == SML_PATH_OFF)
            sml_host->log(st->self, CUSHIM_LOG_ERROR, "the driver lacks cuCtxGetDevice, cuEventQuery or another "
                                                      "function smlimit needs: launches are not limited");
        else
            sml_host->log(st->self, CUSHIM_LOG_DEBUG, "launch path: %s%s",
                          r == SML_PATH_PRIO || r == SML_PATH_PRIO1 ? "with priorities" : "without priorities",
                          st->one_dev ? ", one device" : "");
    }
    pthread_mutex_unlock(&st->mq);
    return r;
}

/* ---- turns ---------------------------------------------------------------------
 * Without MPS the GPU runs one process's context at a time and, while several
 * have work, switches between them every time slice (~2 ms on an H200), each
 * switch leaving it idle for ~170 us (docs/isolation.md, the GPU check's probe).
 * That idle time lands in the measured interval of the process switched to, the
 * same amount for every process, so the smaller share loses more of its part
 * (30/70 got 0.37 for 0.43), and the switching costs every process throughput.
 * With turns=1 a process that starts a burst with nothing pending on the device
 * first takes the device's turn in the shared region and gives it back when its
 * work there is done: bursts of the processes follow one another instead of
 * overlapping (sml_pre: a launch admitted with nothing of ours pending takes the
 * turn, or is taken back and asks again). A burst waits for the turn at most
 * turn_wait_ms (then it launches anyway: a holder that never goes idle, or work
 * that waits for the waiting process, cannot stall it longer); a holder that is
 * gone is passed over. The price is latency: a burst may wait for the other's
 * burst (the limiter bounds a burst to about half a window of GPU time; a holder
 * that has had the turn for half a window while another process waits admits
 * nothing more until its work is done, and the turn passes on).
 */
void sml_turn_idle(sml_dev *d)
{
    if (d->turn_slot != NULL && d->lim.outstanding == 0) {
        sml_shm_turn_give(d->turn_region, d->rdev, d->turn_slot);
        d->turn_since = 0;
    }
    if (d->prio_pub && d->lim.outstanding == 0) {   /* priorities: nothing of ours pending any more */
        sml_shm_busy(d->prio_region, d->rdev, d->prio_slot, d->prio_level, 0);
        d->prio_pub = 0;
    }
}

/* ---- priorities ------------------------------------------------------------------
 * Option priority (or HAMi's CUDA_TASK_PRIORITY): processes of one region take
 * part with a level, high, normal or low. A process publishes, per device, that it
 * has launches pending there (a bit in the region, set when a launch is admitted
 * with nothing of it pending, cleared when the poller sees its last one finish).
 * A launch of a lower level is held (sleeping 50 us at a time) while a process of
 * a higher level has work pending on the device; it goes ahead when that work is
 * done (work-conserving: a high-priority process that is idle costs nothing) or
 * after priority_wait_ms (the starvation guard: a busy high-priority process slows
 * a lower one to one launch per guard period, never stops it). Nothing running is
 * preempted: a lower process's kernels already on the GPU run to their end (and
 * time-slice with the higher one's meanwhile). A process that takes no part
 * (neither option nor variable) neither waits nor is waited for.
 */
/* Should this launch (d->mu held) be held for a higher priority's work? *t0: when it began to wait, 0 none yet;
   set to UINT64_MAX once it may go (its wait counted). Out of line: a process without a priority never calls it. */
static __attribute__((noinline)) int sml_prio_hold(sml_state *st, sml_dev *d, uint64_t now, uint64_t *t0)
{
    int held;
    if (d->prio_level < 0 || d->prio_level == SML_PRIO_HIGH) {
        *t0 = UINT64_MAX;   /* nothing to yield to (or no part any more: 'cushim limit --priority=off') */
        return 0;
    }
    if (d->prio_slot == NULL) {
        /* the poller (started by our first launch) has not joined the region yet: our work pending here would
           not be seen by a higher level's process, nor would we see theirs; wait for it, bounded */
        if (d->lim.admitted > 0 && !atomic_load(&st->region_tried) && now - d->t_start < SML_PRIO_JOIN_NS)
            return 1;
        *t0 = UINT64_MAX;
        return 0;
    }
    /* a process of a higher priority has work pending here, or has had within SML_PRIO_RECENT_NS and we have
       work in flight (so that what it waits behind when it starts again is one launch of ours, not a queue):
       hold, up to the starvation guard */
    held = sml_shm_higher_busy(d->prio_region, d->rdev, d->prio_slot, d->prio_level, now, *t0 == 0) ||
           (d->lim.outstanding > 0 && sml_shm_higher_recent(d->prio_region, d->rdev, d->prio_level, now));
    if (held && *t0 == 0)
        *t0 = now;
    if (held && now - *t0 < st->prio_wait_ns)
        return 1;
    if (*t0 != 0) {
        uint64_t w = now - *t0;
        d->prio_waits++;
        d->prio_wait_ns += w;
        if (w > d->prio_wait_max)
            d->prio_wait_max = w;
        d->prio_guard += held;
    }
    *t0 = UINT64_MAX;
    return 0;
}

/* A burst found another process's turn in region 'r': 1 when the launch should ask
   again (after a short sleep), 0 when it has waited turn_wait_ms and launches without
   the turn (counted as a wait that gave up). The first time, a holder that is gone is
   passed over ('dead'); else we get in line. */
static int sml_turn_blocked(sml_state *st, sml_dev *d, sml_region *r, uint64_t *t0, uint32_t *dead)
{
    uint64_t now = sml_now();
    if (*t0 == 0) {
        uint32_t holder = sml_shm_turn_holder(r, d->rdev);
        *t0 = now;
        if (holder != 0 && !sml_shm_live(&r->slot[d->rdev][holder - 1], now)) {
            *dead = holder;
            return 1;
        }
        pthread_mutex_lock(&d->mu);
        if (d->turn_slot != NULL)   /* the holder hands the turn to us when it is done */
            sml_shm_turn_wait_mark(r, d->rdev, d->turn_slot);
        pthread_mutex_unlock(&d->mu);
    } else if (now - *t0 >= st->turn_wait_ns) {
        pthread_mutex_lock(&d->mu);
        d->turn_waits++;
        d->turn_wait_ns += now - *t0;
        d->turn_gave_up++;
        if (d->turn_slot != NULL)
            sml_shm_turn_wait_clear(r, d->rdev, d->turn_slot);
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    sml_sleep_ns(SML_TURN_POLL_NS);
    return 1;
}

/* The pre hook's body, compiled once per launch path (sml_pre): 'with_prio' 0 leaves out every priority branch, so
   a process without a priority pays nothing for them (bench/cpu/smlimit_instr.sh); 'one_dev' 1 (one device
   visible: every context is on it) takes device 0 without asking the driver (a launch without a context then
   fails its capture query below, and its result in sml_post). */
static inline __attribute__((always_inline)) int sml_pre_run(cushim_call *call, sml_state *st, uint64_t *slot,
                                                             const int with_prio, const int one_dev)
{
    int i = one_dev ? 0 : sml_current_device(st);
    sml_dev *d;
    uint64_t now, wait, turn_t0 = 0;   /* when this launch began to wait for the turn; MAX: gave up */
    uint64_t prio_t0 = 0;              /* when it began to wait for a higher priority's work; MAX: done */
    uint32_t dead = 0;
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
    if (i < 0 || !(d = &st->dev[i])->limited)
        return CUSHIM_CONTINUE;
    /* a launch captured into a graph runs nothing now (its replay is a cuGraphLaunch),
       and an event recorded after it would become part of the graph: leave it alone */
    if (call->api_id != CUSHIM_API_cuLaunchCooperativeKernelMultiDevice &&
        (st->is_capturing(sml_launch_stream(call), &cap) != CUDA_SUCCESS || cap != CU_STREAM_CAPTURE_STATUS_NONE))
        return CUSHIM_CONTINUE;
    for (;;) {
        int burst, other_turn = 0;
        sml_region *turn_r = NULL;
        now = sml_now();
        pthread_mutex_lock(&d->mu);
        if (!d->started) {
            d->started = 1;
            d->t_start = now;
            sml_init(&d->lim, d->share, st->window_ns, now);
        }
        if (with_prio && prio_t0 != UINT64_MAX && sml_prio_hold(st, d, now, &prio_t0)) {
            pthread_mutex_unlock(&d->mu);
            sml_sleep_ns(SML_TURN_POLL_NS);
            continue;
        }
        burst = d->lim.outstanding == 0;   /* nothing of ours pending: this launch starts a burst */
        if (!burst && d->turn_since != 0 && d->turn_region != NULL && turn_t0 != UINT64_MAX &&
            now - d->turn_since >= st->window_ns / 2 &&
            sml_shm_turn_waited_for(d->turn_region, d->rdev, d->turn_slot)) {
            /* our turn has lasted half a window and another process waits: nothing more
               until our work is done (the turn then passes to it) */
            if (d->turn_since != UINT64_MAX) {
                d->turn_yields++;
                d->turn_since = UINT64_MAX;   /* counted once; still not 0: ours until given */
            }
            pthread_mutex_unlock(&d->mu);
            sml_sleep_ns(SML_TURN_POLL_NS);
            continue;
        }
        if (with_prio && d->prio_level == SML_PRIO_HIGH && d->limit >= 1.0 && d->share >= 1.0) {
            /* no limit here and nothing to yield to: only counted (a lower level keeps the limiter's bound on
               its queued work, about a window of it, so that what it has queued when a higher one starts is
               bounded) */
            sml_admit_free(&d->lim);
            wait = 0;
        } else {
            wait = sml_admit(&d->lim, now);
        }
        if (wait > 0) {
            d->waited_ns += wait;
            if (burst)   /* handed the turn while out of budget: nothing of ours runs, pass it on */
                sml_turn_idle(d);
        } else if (burst && turn_t0 != UINT64_MAX && d->turn_region != NULL) {
            if (sml_shm_turn_take(d->turn_region, d->rdev, d->turn_slot, dead)) {
                d->turn_since = now;
                if (turn_t0 != 0) {
                    d->turn_waits++;
                    d->turn_wait_ns += now - turn_t0;
                }
            } else {
                sml_unadmit(&d->lim);   /* another process's turn: not yet */
                other_turn = 1;
                turn_r = d->turn_region;
            }
        }
        if (with_prio) {
            if (wait == 0 && !other_turn && d->prio_slot != NULL && !d->prio_pub) {
                /* admitted: ours is pending here now (cleared by sml_turn_idle when it is done) */
                sml_shm_busy(d->prio_region, d->rdev, d->prio_slot, d->prio_level, 1);
                d->prio_pub = 1;
            }
        }
        pthread_mutex_unlock(&d->mu);
        if (other_turn) {
            if (!sml_turn_blocked(st, d, turn_r, &turn_t0, &dead))
                turn_t0 = UINT64_MAX;   /* waited long enough: launch without the turn */
            continue;
        }
        if (wait == 0)
            break;
        sml_sleep_ns(wait);
    }
    *slot = now;
    return CUSHIM_CONTINUE;
}

static __attribute__((noinline)) int sml_pre_plain(cushim_call *call, sml_state *st, uint64_t *slot)
{
    return sml_pre_run(call, st, slot, 0, 0);
}

static __attribute__((noinline)) int sml_pre_prio(cushim_call *call, sml_state *st, uint64_t *slot)
{
    return sml_pre_run(call, st, slot, 1, 0);
}

static __attribute__((noinline)) int sml_pre_plain1(cushim_call *call, sml_state *st, uint64_t *slot)
{
    return sml_pre_run(call, st, slot, 0, 1);
}

static __attribute__((noinline)) int sml_pre_prio1(cushim_call *call, sml_state *st, uint64_t *slot)
{
    return sml_pre_run(call, st, slot, 1, 1);
}

/* A process's first launch: resolve, then the path chosen (a call of its own, so that sml_pre keeps no frame). */
static __attribute__((noinline)) int sml_pre_first(cushim_call *call, sml_state *st, uint64_t *slot)
{
    switch (sml_ready(st)) {
    case SML_PATH_PLAIN:
        return sml_pre_plain(call, st, slot);
    case SML_PATH_PRIO:
        return sml_pre_prio(call, st, slot);
    case SML_PATH_PLAIN1:
        return sml_pre_plain1(call, st, slot);
    case SML_PATH_PRIO1:
        return sml_pre_prio1(call, st, slot);
    default:
        return CUSHIM_CONTINUE;
    }
}

/* The launch path is chosen once a launch by the value that also says the real functions are resolved (one load
   and compare, as before priorities, then a tail jump): SML_PATH_PLAIN runs the body compiled without the
   priority work, SML_PATH_PRIO the one with it, the ...1 paths the same without asking for the device (all out
   of line, so none pays another's prologue). A priority that arrives while the process runs ('cushim limit
   --priority', poll.c) switches it by storing SML_PATH_PRIO(1) after the devices' prio_level, and back to
   SML_PATH_PLAIN(1) when it is taken away (a launch already on the priority path then finds level -1 and
   takes no part). */
static int sml_pre(cushim_call *call, void *user, uint64_t *slot)
{
    sml_state *st = user;
    int path = atomic_load_explicit(&st->path, memory_order_acquire);
    if (__builtin_expect(path == SML_PATH_PLAIN, 1))
        return sml_pre_plain(call, st, slot);
    if (path == SML_PATH_PLAIN1)
        return sml_pre_plain1(call, st, slot);
    if (path == SML_PATH_PRIO)
        return sml_pre_prio(call, st, slot);
    if (path == SML_PATH_PRIO1)
        return sml_pre_prio1(call, st, slot);
    if (path == SML_PATH_UNRESOLVED)
        return sml_pre_first(call, st, slot);
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
    if (*slot == 0 || (i = st->one_dev ? 0 : sml_current_device(st)) < 0)
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
        /* the program's signals not taken (cushim_io.h) */
        if (cushim_thread_create(&st->poller, &a, "cushim-smlimit", sml_poll_thread, st) == 0)
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
    sml_turn_idle(d);
    pthread_mutex_unlock(&d->mu);
}

/* ", SM clock 1815 MHz (ref 1455)" for the report, or "" */
static const char *sml_clock_note(const sml_state *st, const sml_dev *d, char note[64])
{
    if (st->clock_ref_mhz <= 0)
        return "";
    snprintf(note, 64, ", SM clock %.0f MHz (ref %.0f)", d->clk_mhz, st->clock_ref_mhz);
    return note;
}

/* ", turns: 12 waits (3.1 ms), 0 gave up, 2 yielded" for the report, or "" */
static const char *sml_turn_note(const sml_state *st, const sml_dev *d, char note[96])
{
    if (!st->turns)
        return "";
    snprintf(note, 96, ", turns: %llu waits (%.3f ms), %llu gave up, %llu yielded",
             (unsigned long long)d->turn_waits, d->turn_wait_ns / 1e6, (unsigned long long)d->turn_gave_up,
             (unsigned long long)d->turn_yields);
    return note;
}

/* ", priority low: 12 waits for higher priority (3.1 ms, longest 0.9 ms), 2 by the guard" for the report, or "" */
static const char *sml_prio_note(const sml_state *st, const sml_dev *d, char note[128])
{
    if (st->prio < 0 && d->prio_level < 0 && d->prio_waits == 0)
        return "";
    snprintf(note, 128, ", priority %s: %llu waits for higher priority (%.3f ms, longest %.3f ms), %llu by the guard",
             sml_priority_name(d->prio_level), (unsigned long long)d->prio_waits, d->prio_wait_ns / 1e6,
             d->prio_wait_max / 1e6, (unsigned long long)d->prio_guard);
    return note;
}

/* ---- lifecycle --------------------------------------------------------------- */

static int sml_resolve(sml_state *st)
{
    CUresult (*count)(int *) = (CUresult(*)(int *))sml_host->real(CUSHIM_API_cuDeviceGetCount);
    int n = 0;
    /* at the first launch the driver is initialised: with one device visible no launch asks for its device */
    st->one_dev = count != NULL && count(&n) == CUDA_SUCCESS && n == 1;
#define SML_REAL(field, api) (st->field = (__typeof__(st->field))sml_host->real(CUSHIM_API_##api)) != NULL
    return SML_REAL(ctx_get_device, cuCtxGetDevice) && SML_REAL(ctx_get_current, cuCtxGetCurrent) &&
                   SML_REAL(ctx_set_current, cuCtxSetCurrent) && SML_REAL(event_create, cuEventCreate) &&
                   SML_REAL(event_record, cuEventRecord) && SML_REAL(event_query, cuEventQuery) &&
                   SML_REAL(event_destroy, cuEventDestroy_v2) &&
                   SML_REAL(is_capturing, cuStreamIsCapturing) &&
                   SML_REAL(capture_mode, cuThreadExchangeStreamCaptureMode) &&
                   (SML_REAL(pci_bus_id, cuDeviceGetPCIBusId) || 1)   /* optional: clock_ref_mhz */
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
    int prio = -1, policy_default = 0;
    const char *ptext, *pol;
    sml_host = host;
    /* priorities: the option, else HAMi's CUDA_TASK_PRIORITY; a value that cannot be read is an error (the
       option) or one warning (the variable: a priority is not a safety limit) */
    ptext = host->opt_string(self, "priority");
    if (ptext != NULL && *ptext) {
        if (sml_parse_priority(ptext, &prio) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "priority=%.40s: give high, normal or low (or HAMi's number: 0 high, "
                      "1 normal, 2 low)", ptext);
            return -1;
        }
    } else if ((ptext = host->env("CUDA_TASK_PRIORITY")) != NULL && *ptext && sml_parse_priority(ptext, &prio) != 0) {
        host->log(self, CUSHIM_LOG_WARN, "CUDA_TASK_PRIORITY=%.40s is not a number: no priority", ptext);
        prio = -1;
    }
    /* under MPS, the client priority too (mps.c): before the driver connects, at its initialisation */
    sml_mps_priority(host, self, prio);
    /* HAMi's GPU_CORE_UTILIZATION_POLICY (or the option policy): force (limit at all times), default (limit
       only while another process uses the GPU), disable (no limit) */
    pol = host->opt_string(self, "policy");
    if (pol == NULL || !*pol)
        pol = host->env("GPU_CORE_UTILIZATION_POLICY");
    if (pol != NULL && *pol) {
        if (!strcasecmp(pol, "default")) {
            policy_default = 1;
        } else if (!strcasecmp(pol, "disable")) {
            host->log(self, CUSHIM_LOG_INFO, "policy disable: no compute limit");
            if (prio < 0)
                return 0;
        } else if (strcasecmp(pol, "force") != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "policy '%.40s': give force, default or disable", pol);
            return -1;
        }
    }
    if (host->opt_given(self, "limit")) {
        if (sml_parse_limits(host->opt_string(self, "limit"), pct, err, sizeof err) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "limit: %s", err);
            return -1;
        }
    } else if (sml_env_limits(host->env, pct, err, sizeof err) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "%s", err);
        return -1;
    }
    if (pol != NULL && !strcasecmp(pol, "disable"))
        for (int i = 0; i < SML_MAX_DEV; i++)
            pct[i] = 0;
    for (int i = 0; i < SML_MAX_DEV; i++)
        any |= pct[i] > 0 && pct[i] < 100;
    if (prio >= 0 && !host->opt_bool(self, "shared")) {
        host->log(self, CUSHIM_LOG_WARN, "priority needs shared=1 (processes meet in the shared region): no priority");
        prio = -1;
    }
    if (!any && prio < 0) {
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
    st->turns = host->opt_bool(self, "turns");
    if (st->turns && !st->shared) {
        host->log(self, CUSHIM_LOG_WARN, "turns=1 needs shared=1 (the turn is kept in the shared region): no turns");
        st->turns = 0;
    }
    st->turn_wait_ns = (uint64_t)host->opt_int(self, "turn_wait_ms") * 1000000ull;
    st->prio = prio;
    st->prio_wait_ns = (uint64_t)host->opt_int(self, "priority_wait_ms") * 1000000ull;
    st->policy_default = policy_default;
    st->clock_ref_mhz = (double)host->opt_int(self, "clock_ref_mhz");
    if (st->clock_ref_mhz < 0 || st->clock_ref_mhz > 10000) {
        host->log(self, CUSHIM_LOG_ERROR, "clock_ref_mhz=%g: give 0 (time shares) or the GPU's SM clock under full "
                  "load in MHz, at most 10000", st->clock_ref_mhz);
        free(st);
        return -1;
    }
    if (st->window_ns < 1000000ull || st->window_ns > 10000000000ull || st->poll_ns < 1000 ||
        st->poll_ns > 10000000ull || st->turn_wait_ns < 1000000ull || st->turn_wait_ns > 10000000000ull ||
        st->prio_wait_ns < 1000000ull || st->prio_wait_ns > 10000000000ull) {
        host->log(self, CUSHIM_LOG_ERROR, "window_ms, poll_us, turn_wait_ms and priority_wait_ms must be in 1..10000");
        free(st);
        return -1;
    }
    pthread_mutex_init(&st->mq, NULL);
    pthread_cond_init(&st->mq_cond, NULL);
    st->pid = (int32_t)getpid();
    st->pid_start = sml_proc_start(st->pid);
    for (int i = 0; i < SML_MAX_DEV; i++) {
        sml_dev *d = &st->dev[i];
        /* CUDA ordinal i is physical device p: the limits and the region are by physical device (a list of
           UUIDs cannot be mapped by index: the ordinal then, docs/limitations.md) */
        int p = vis_physical(host->env("CUDA_VISIBLE_DEVICES"), i);
        d->rdev = p >= 0 && p < SML_MAX_DEV ? p : i;
        pthread_mutex_init(&d->mu, NULL);
        /* a process with a priority and no limit here is admitted at 100% (its launches are seen, for the
           priorities, and a live limit can reach it) */
        p = d->rdev;
        d->limited = (pct[p] > 0 && pct[p] < 100) || prio >= 0;
        d->prio_level = prio;
        d->limit = d->limit_own = d->share = d->share_min = pct[p] > 0 && pct[p] < 100 ? pct[p] / 100.0 : 1.0;
    }
    if (st->shared) {
        const char *group = host->opt_string(self, "group");
        if (group != NULL && *group && strspn(group, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(group)) {
            host->log(self, CUSHIM_LOG_ERROR, "group '%s': use [a-z0-9_-] only", group);
            free(st);
            return -1;
        }
        snprintf(st->region_name, sizeof st->region_name, SML_SHM_PREFIX "%u%s%.64s", (unsigned)geteuid(),
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
        for (int i = 0; i < SML_MAX_DEV && len < sizeof line && !same; i++)   /* physical devices */
            if (pct[i] > 0 && pct[i] < 100)
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%d:%.4g%%", len ? " " : "", i, pct[i]);
        host->log(self, CUSHIM_LOG_INFO, "limits (device:percent): %s; window %llu ms%s%s%s%s", line,
                  (unsigned long long)(st->window_ns / 1000000), st->work_conserving ? ", work conserving" : "",
                  prio >= 0 ? ", priority " : "", prio >= 0 ? sml_priority_name(prio) : "",
                  policy_default ? ", policy default (limited only while another process uses the device)" : "");
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
        /* on the stack: thread-local buffers would be static TLS a dlopen'd plugin takes from glibc's small shared
           surplus (docs/plugin-sdk.md) */
        char clock_note[64], turn_note[96], prio_note[128];
        pthread_mutex_lock(&d->mu);
        if (st->report)
            sml_host->log(self, CUSHIM_LOG_WARN,
                          "device %d: limit %.4g%%: busy %.3f ms of %.3f ms (%.1f%%), %llu launches admitted, "
                          "%llu waits, %.3f ms waited, share in force %.4g%% (lowest %.4g%%)%s%s%s",
                          i, d->limit * 100, d->lim.busy_ns / 1e6, (now - d->t_start) / 1e6,
                          now > d->t_start ? 100.0 * (double)d->lim.busy_ns / (double)(now - d->t_start) : 0.0,
                          (unsigned long long)d->lim.admitted, (unsigned long long)d->lim.delays,
                          d->waited_ns / 1e6, d->share * 100, d->share_min * 100, sml_clock_note(st, d, clock_note),
                          sml_turn_note(st, d, turn_note), sml_prio_note(st, d, prio_note));
        if (d->turn_slot != NULL)   /* leaving: the turn to whoever waits */
            sml_shm_turn_give(d->turn_region, d->rdev, d->turn_slot);
        if (d->prio_pub) {   /* and nothing of ours holds lower priorities back */
            sml_shm_busy(d->prio_region, d->rdev, d->prio_slot, d->prio_level, 0);
            d->prio_pub = 0;
        }
        pthread_mutex_unlock(&d->mu);
        if (d->slot != NULL)
            sml_shm_leave(d->slot);   /* leave the region */
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
    atomic_store(&st->region_tried, 0);
    st->prio_gen = 0;
    {   /* the path of the configured priority, as the parent had before a live one (once resolved) */
        int path = atomic_load(&st->path);
        if (st->prio < 0 && (path == SML_PATH_PRIO || path == SML_PATH_PRIO1))
            atomic_store(&st->path, path == SML_PATH_PRIO ? SML_PATH_PLAIN : SML_PATH_PLAIN1);
        else if (st->prio >= 0 && (path == SML_PATH_PLAIN || path == SML_PATH_PLAIN1))
            atomic_store(&st->path, path == SML_PATH_PLAIN ? SML_PATH_PRIO : SML_PATH_PRIO1);
    }
    st->pid = (int32_t)getpid();
    st->pid_start = sml_proc_start(st->pid);
    if (st->region != NULL) {
        sml_shm_fork_child();
        st->region = NULL;
    }
    for (int i = 0; i < SML_MAX_DEV; i++) {
        sml_dev *d = &st->dev[i];
        pthread_mutex_init(&d->mu, NULL);
        d->started = 0;
        d->slot = NULL;
        d->beat_t = d->beat_busy = 0;
        d->usage = 0;
        d->limit = d->share = d->share_min = d->limit_own;   /* the child reads the live limit again */
        d->live_seen = 0;
        d->waited_ns = 0;
        d->clk_mhz = 0;
        d->clk_next = 0;
        d->turn_region = NULL;   /* the parent's turn stays the parent's */
        d->turn_slot = NULL;
        d->turn_waits = d->turn_wait_ns = d->turn_gave_up = d->turn_since = d->turn_yields = 0;
        d->prio_region = NULL;   /* the parent's bits stay the parent's */
        d->prio_slot = NULL;
        d->prio_pub = 0;
        d->prio_level = st->prio;   /* the child reads the live priority again */
        d->prio_waits = d->prio_wait_ns = d->prio_wait_max = d->prio_guard = 0;
        d->alone = 0;
        memset(d->s_key, 0, sizeof d->s_key);
    }
    sml_clock_fork_child();
}

static const cushim_option sml_options[] = {
    {"limit", CUSHIM_OPT_STRING, NULL,
     "percent of each device's time: 30, or per physical device (CUDA_VISIBLE_DEVICES's numbers) 0:30,1:50; default "
     "CUDA_DEVICE_SM_LIMIT[_<i>]; 100: none"},
    {"window_ms", CUSHIM_OPT_INT, "100", "burst bound: an idle process saves up at most limit x window of GPU time"},
    {"poll_us", CUSHIM_OPT_INT, "20", "how often pending launches are checked for completion"},
    {"work_conserving", CUSHIM_OPT_BOOL, "false", "also use the share that partners on the device leave unused"},
    {"shared", CUSHIM_OPT_BOOL, "true", "meet other processes in /dev/shm/cushim-smlimit4-<uid> (weights)"},
    {"group", CUSHIM_OPT_STRING, "", "processes share weights within a group: /dev/shm/cushim-smlimit4-<uid>-<group>"},
    {"turns", CUSHIM_OPT_BOOL, "false",
     "processes sharing a device take turns: a burst waits for another process's burst to end instead of "
     "time-slicing with it (exact shares, fewer context switches; more latency)"},
    {"turn_wait_ms", CUSHIM_OPT_INT, "100", "the longest a burst waits for the turn before it launches anyway"},
    {"report", CUSHIM_OPT_BOOL, "false", "log each device's measured busy time and waits at exit"},
    {"priority", CUSHIM_OPT_STRING, "",
     "high, normal or low (or HAMi's CUDA_TASK_PRIORITY number, its default): a launch of a lower priority waits "
     "while a process of a higher one has work pending on the device (needs shared)"},
    {"priority_wait_ms", CUSHIM_OPT_INT, "100",
     "starvation guard: the longest a launch waits for a higher priority's work"},
    {"policy", CUSHIM_OPT_STRING, "",
     "force (limit at all times), default (only while another process of the region uses the device), disable; "
     "default: GPU_CORE_UTILIZATION_POLICY, else force"},
    {"clock_ref_mhz", CUSHIM_OPT_INT, "0",
     "hold a share of throughput, not time: the GPU's SM clock under full load (MHz); the time share is scaled "
     "by it over the clock the work runs at (NVML). 0: time shares"},
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
