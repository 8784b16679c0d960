/*
 * poll.c - smlimit's measuring side: one thread per process queries the events
 * recorded after launches, in recording order (a later event on a stream is not
 * queried while an earlier one is pending), and reports each finished launch to
 * its device's limiter as the interval from max(its submit time, the previous
 * finish seen on its stream, the last finish another process reported on the
 * device) to the time the poll saw it finish. Every SML_BEAT_NS it also
 * publishes this process's usage in the shared region and sets each device's
 * share from the partners' weights (core.c: sml_weighted_share).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "limitspec.h"
#include "smlimit.h"

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

/* Device d's priority level in force (d->mu held): 'level' (SML_PRIO_*, -1: no part) in our slot 'd->slot' (NULL:
   not joined yet). A busy bit published at another level or for another slot is taken back first; with launches
   pending here, ours is published at the new level (launched before we joined, or before the level changed). */
static void sml_prio_level_set(sml_state *st, sml_dev *d, int level)
{
    if (d->prio_pub && (d->prio_slot != d->slot || d->prio_level != level)) {
        sml_shm_busy(d->prio_region, d->rdev, d->prio_slot, d->prio_level, 0);
        d->prio_pub = 0;
    }
    d->prio_level = level;
    d->prio_region = d->slot != NULL && level >= 0 ? st->region : NULL;
    d->prio_slot = d->slot != NULL && level >= 0 ? d->slot : NULL;
    if (d->slot != NULL)
        atomic_store(&d->slot->prio, (uint32_t)(level + 1));
    if (d->prio_slot != NULL && d->lim.outstanding > 0 && !d->prio_pub) {
        sml_shm_busy(d->prio_region, d->rdev, d->prio_slot, level, 1);
        d->prio_pub = 1;
    }
}

/* The group's live priority ('cushim limit GROUP --priority=high', shm.h), region generation 'g': every device's
   level in force, and the launch path that goes with it. Before the devices' acknowledgements of 'g'. */
static void sml_live_prio_apply(sml_state *st, uint32_t g)
{
    uint32_t v = atomic_load_explicit(&st->region->live_prio, memory_order_relaxed);
    int level = v >= 1 && v <= 3 ? (int)v - 1 : st->prio, any = 0, was = -2, path;
    st->prio_gen = g;
    for (int i = 0; i < SML_MAX_DEV; i++) {
        sml_dev *d = &st->dev[i];
        if (!d->limited)   /* no hook here: nothing to order */
            continue;
        pthread_mutex_lock(&d->mu);
        if (was == -2)
            was = d->prio_level;
        if (d->prio_level != level)
            sml_prio_level_set(st, d, level);
        pthread_mutex_unlock(&d->mu);
        any = 1;
    }
    if (!any || was == level)
        return;
    /* the launch path: with the priority work while a level is in force (once resolved: OFF stays OFF) */
    path = atomic_load(&st->path);
    if (level >= 0 && (path == SML_PATH_PLAIN || path == SML_PATH_PLAIN1))
        atomic_compare_exchange_strong(&st->path, &path, path == SML_PATH_PLAIN ? SML_PATH_PRIO : SML_PATH_PRIO1);
    else if (level < 0 && (path == SML_PATH_PRIO || path == SML_PATH_PRIO1))
        atomic_compare_exchange_strong(&st->path, &path, path == SML_PATH_PRIO ? SML_PATH_PLAIN : SML_PATH_PLAIN1);
    sml_host->log(st->self, CUSHIM_LOG_INFO, "live priority %s (was %s; %s)", sml_priority_name(level),
                  sml_priority_name(was), v >= 1 && v <= 3 ? "set by cushim limit" : "this process's own");
}

/* The group's live limit of device i ('cushim limit GROUP --sm=N', shm.h), if it moved: d->limit. */
static void sml_live_apply(sml_state *st, int i, uint32_t g)
{
    sml_dev *d = &st->dev[i];
    uint32_t w = atomic_load_explicit(&st->region->live_weight[d->rdev], memory_order_relaxed);
    double was = d->limit;
    d->limit = w == 0 ? d->limit_own : w >= 1000 ? 1.0 : w / 1000.0;
    d->live_seen = g;
    if (d->limit != was)
        sml_host->log(st->self, CUSHIM_LOG_INFO, "device %d: live limit %.4g%% (was %.4g%%; %s)", i, d->limit * 100,
                      was * 100, w == 0 ? "this process's own" : "set by cushim limit");
}

/* Device i's share at a heartbeat; 'g': the region's live_gen read at this heartbeat (its live priority applied). */
static void sml_update_share(sml_state *st, int i, uint64_t now, uint32_t g)
{
    sml_dev *d = &st->dev[i];
    double own;
    uint64_t busy, kernels;
    if (st->region != NULL && g != d->live_seen)
        sml_live_apply(st, i, g);
    own = d->limit;
    pthread_mutex_lock(&d->mu);
    busy = d->lim.busy_ns;
    kernels = d->lim.admitted;
    pthread_mutex_unlock(&d->mu);
    if (d->beat_t != 0 && now > d->beat_t) {
        double u = (double)(busy - d->beat_busy) / (double)(now - d->beat_t);
        d->usage = d->usage + 0.5 * (u - d->usage);
    }
    d->beat_busy = busy;
    d->beat_t = now;
    if (st->region != NULL) {
        if (d->slot == NULL || atomic_load(&d->slot->pid) != st->pid) {
            d->slot = sml_shm_claim(st->region, d->rdev, st->pid, st->pid_start, now);
            if (st->turns) {   /* the launching threads read these under the lock */
                pthread_mutex_lock(&d->mu);
                if (d->turn_slot != NULL && d->turn_slot != d->slot)
                    sml_shm_turn_give(d->turn_region, d->rdev, d->turn_slot);
                d->turn_region = d->slot != NULL ? st->region : NULL;
                d->turn_slot = d->slot;
                d->turn_since = 0;   /* a turn of the old slot is given back above */
                /* joined in the middle of a burst (the first one, before the region was
                   open): ours if nobody has the turn, as if it had been taken at its start */
                if (d->turn_slot != NULL && d->lim.outstanding > 0 &&
                    sml_shm_turn_take(d->turn_region, d->rdev, d->turn_slot, 0))
                    d->turn_since = now;
                pthread_mutex_unlock(&d->mu);
            }
            pthread_mutex_lock(&d->mu);   /* the launching threads read these under the lock */
            sml_prio_level_set(st, d, d->prio_level);
            pthread_mutex_unlock(&d->mu);
        }
        if (d->slot != NULL) {
            double w[SML_SHM_SLOTS], u[SML_SHM_SLOTS];
            int n = 0;
            /* no limit (a priority alone, or a live 100%) claims no share of the partners' */
            atomic_store(&d->slot->weight, d->limit >= 1.0 ? 0 : (uint32_t)(d->limit * 1000));
            atomic_store(&d->slot->usage, (uint32_t)(d->usage * 1000));
            atomic_store(&d->slot->heartbeat, now);
            atomic_store_explicit(&d->slot->busy_ns, busy, memory_order_relaxed);      /* cushim usage */
            atomic_store_explicit(&d->slot->kernels, kernels, memory_order_relaxed);
            atomic_store(&d->slot->live_gen, g);   /* applied: 'cushim limit' waits for it */
            for (int k = 0; k < SML_SHM_SLOTS; k++) {
                const sml_slot *o = &st->region->slot[d->rdev][k];
                if (o == d->slot || !sml_shm_live(o, now))
                    continue;
                w[n] = atomic_load(&o->weight) / 1000.0;
                u[n] = atomic_load(&o->usage) / 1000.0;
                n++;
            }
            /* a partner using less than its share, with 5 points of slack, leaves the rest */
            own = d->limit >= 1.0 ? 1.0 : sml_weighted_share(d->limit, w, u, n, st->work_conserving, 0.05);
        }
    }
    /* policy default (HAMi's GPU_CORE_UTILIZATION_POLICY=default): no limit while no other process uses the
       device - none of the region's, and none on NVML's list of compute processes (other users, other
       containers); limited again at the first heartbeat after one does */
    if (st->policy_default) {
        int others = sml_nvml_others(st, i) == 1;
        if (!others && st->region != NULL && d->slot != NULL)
            others = sml_shm_others_active(st->region, d->rdev, d->slot, now);
        d->alone = !others;
        if (d->alone)
            own = 1.0;
    }
    if (st->clock_ref_mhz > 0)   /* a share of throughput: less time while the GPU runs faster */
        own = sml_clock_share(own, st->clock_ref_mhz, d->clk_mhz);
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
        const sml_slot *o = &st->region->slot[st->dev[i].rdev][k];
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
        uint64_t own = m->submit, start;
        if (*prev > own)
            own = *prev;
        start = clip > own ? clip : own;
        sml_complete_clipped(&d->lim, own, start, now, 1, now);
        *prev = now;
    } else {
        sml_forget(&d->lim, 1);
    }
    sml_turn_idle(d);
    pthread_mutex_unlock(&d->mu);
    if (measured && d->slot != NULL)
        atomic_store(&d->slot->last_end, now);
    if (measured && d->prio_slot != NULL)   /* read without the lock: only the poller (this thread) writes them */
        sml_shm_prio_end(d->prio_region, d->rdev, d->prio_level, now);
}

void *sml_poll_thread(void *arg)
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
            if (st->region != NULL && sml_shm_lost())
                sml_host->log(st->self, CUSHIM_LOG_WARN, "the shared region %s was truncated under this process: "
                              "no sharing between processes from now on", st->region_name);
            uint32_t g = 0;
            if (st->region != NULL &&
                (g = atomic_load_explicit(&st->region->live_gen, memory_order_acquire)) != st->prio_gen)
                sml_live_prio_apply(st, g);
            for (int i = 0; i < SML_MAX_DEV; i++)
                if (st->dev[i].limited && st->dev[i].started)
                    sml_update_share(st, i, now, g);
            if (st->region == NULL || st->prio < 0)
                atomic_store(&st->region_tried, 1);   /* nothing to wait for */
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
            sml_dev *md = &st->dev[m->dev];
            next = m->next;
            if (st->clock_ref_mhz > 0 && md->limited && now >= md->clk_next) {   /* the clock our work runs at */
                md->clk_next = now + SML_CLOCK_EVERY_NS;
                sml_clock_sample(st, m->dev);
            }
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
