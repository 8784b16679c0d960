/*
 * tr_gdetach.c - the GPU part's pause policy (tr_cupti_int.h): gpu_detach. With
 * unhook=1 and callback mode, CUPTI keeps costing a launch ~2.5 us while
 * attached (its GPU records and our callbacks; docs/plugins/trace.md), so
 * gpu_detach seconds into a pause a helper thread flushes CUPTI's buffers (not
 * in a callback: the PyTorch profiler flushes from a thread of its own too;
 * CUPTI's documentation does not say a flush may run inside its callbacks) and
 * the next launch's exit callback detaches it (cuptiFinalize, where NVIDIA's
 * cupti_finalize sample and PyTorch's profiler call it); a resume attaches it
 * again as at start before the hooks are added again. A pause shorter than that
 * leaves it attached.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "tr_gpause.h"
#include "tr_record.h"

#if defined(TR_HAVE_CUPTI)
/* gpu_detach (see the top of the file): ATTACHED -> PENDING at a pause (tr_cupti_follow) -> FLUSHED when 'due'
   (gd_main, the flusher thread) -> DETACHING -> DETACHED at the next launch's exit callback (gd_detach, on that
   thread) -> ATTACHED at the resume; a resume while PENDING or FLUSHED only goes back. The moves to and from
   PENDING and FLUSHED are made under gd_lock (the flusher holds it while it flushes); FLUSHED -> DETACHING by the
   callback's compare-and-swap alone. */
enum { GD_ATTACHED, GD_PENDING, GD_FLUSHED, GD_DETACHING, GD_DETACHED };
static pthread_mutex_t gd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gd_cond;
static struct {
    _Atomic int ready;      /* tr_cupti_start succeeded in callback mode and gpu_detach > 0; 0 again when CUPTI
                               refused a detach or an attachment */
    _Atomic int state;
    tr_helper helper;       /* the flusher thread's start */
    int thread;             /* the flusher thread was asked for (gd_lock) */
    uint64_t due;           /* PENDING: flushed at this time (tw_mono_ns; gd_lock) */
    uint64_t grace_ns;
} gd;

/* The flusher thread: while PENDING, at 'due' CUPTI's records so far are handed over (forced: work still running
   comes out unfinished and is counted as dropped), then FLUSHED. Quiet: CUDA calls CUPTI makes here are not the
   application's. */
static void gd_init(void *arg)
{
    (void)arg;
    /* its thread buffer attached inside the start-up (tr_helper_thread_init), where no fork lands: the allocation
       that a fork at the first pause ('forkpending') could catch under a sanitizer's allocator lock otherwise */
    tr_thread_quiet(1);
}

static void *gd_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gd_lock);   /* tr_cupti_follow holds it while it starts this thread */
    for (;;) {
        struct timespec ts;
        int want = GD_PENDING;
        if (atomic_load(&gd.state) != GD_PENDING) {
            pthread_cond_wait(&gd_cond, &gd_lock);
            continue;
        }
        if (tw_mono_ns() < gd.due) {
            ts.tv_sec = (time_t)(gd.due / 1000000000ull);
            ts.tv_nsec = (long)(gd.due % 1000000000ull);
            pthread_cond_timedwait(&gd_cond, &gd_lock, &ts);
            continue;
        }
        /* no fork meanwhile: the flush allocates (CUPTI, our buffer callback), and a child would inherit an
           allocator's lock held (ASan's; glibc's malloc copes) */
        tw_nofork_begin();
        tr_cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        tw_nofork_end();
        atomic_compare_exchange_strong(&gd.state, &want, GD_FLUSHED);
    }
    return NULL;
}

/* At a launch's exit callback while FLUSHED: CUPTI detached. Work launched since the flush is not drawn. */
static void gd_detach(void)
{
    int want = GD_FLUSHED;
    CUptiResult r;
    if (!atomic_compare_exchange_strong(&gd.state, &want, GD_DETACHING))
        return;
    r = tr_cu.finalize();
    if (r == CUPTI_SUCCESS) {
        atomic_fetch_add(&tr_corr_gen, 1);
        atomic_fetch_add(&tr_st->w.gpu_detached, 1);
        atomic_store(&gd.state, GD_DETACHED);
    } else {   /* still attached: not tried again */
        atomic_fetch_add(&tr_st->w.gpu_detach_failed, 1);
        atomic_store(&gd.ready, 0);
        atomic_store(&gd.state, GD_ATTACHED);
    }
}

/* A detach under way (DETACHING) ends, within ms milliseconds; the state then */
static int gd_settled(int ms)
{
    for (int i = 0; i < ms && atomic_load(&gd.state) == GD_DETACHING; i++) {
        struct timespec one = {0, 1000 * 1000};
        nanosleep(&one, NULL);
    }
    return atomic_load(&gd.state);
}

void tr_cupti_follow(int paused)
{
    int q, bad, st;
    if (!atomic_load_explicit(&gd.ready, memory_order_acquire))
        return;
    pthread_mutex_lock(&gd_lock);
    if (paused) {
        if (!gd.thread) {   /* the flusher, at the first pause */
            tr_cond_init_monotonic(&gd_cond);
            gd.thread = 1;
            if (tr_helper_thread_init(&gd.helper, gd_init, gd_main, NULL) != 0) {
                atomic_store(&gd.ready, 0);
                pthread_mutex_unlock(&gd_lock);
                tr_host->log(tr_st->self, CUSHIM_LOG_WARN, "gpu_detach: no thread to flush CUPTI; it stays attached "
                             "while paused");
                return;
            }
        }
        if (atomic_load(&gd.state) == GD_ATTACHED) {
            gd.due = tw_mono_ns() + gd.grace_ns;
            atomic_store(&gd.state, GD_PENDING);
            pthread_cond_signal(&gd_cond);
        }
        pthread_mutex_unlock(&gd_lock);
        return;
    }
    st = atomic_load(&gd.state);
    if (st == GD_PENDING || st == GD_FLUSHED) {   /* not detached yet (a launch may be detaching it now) */
        int want = st;
        if (atomic_compare_exchange_strong(&gd.state, &want, GD_ATTACHED)) {
            pthread_mutex_unlock(&gd_lock);
            return;
        }
    }
    pthread_mutex_unlock(&gd_lock);
    if (gd_settled(5000) != GD_DETACHED)
        return;
    q = tr_thread_quiet(1);
    bad = tr_cupti_attach_again() != 0;
    tr_thread_quiet(q);
    if (bad) {   /* stays DETACHED: nothing more asked of CUPTI, not even at exit */
        atomic_store(&gd.ready, 0);
        atomic_fetch_add(&tr_st->w.gpu_detach_failed, 1);
        snprintf(tr_st->w.note, sizeof tr_st->w.note, "GPU tracing off after a pause: CUPTI could not be attached "
                 "again");
        tr_host->log(tr_st->self, CUSHIM_LOG_WARN, "gpu_detach: CUPTI could not be attached again after a pause; "
                     "GPU tracing is off from here (the calls are still traced; gpu_detach=0 keeps CUPTI attached)");
        return;
    }
    atomic_fetch_add(&tr_st->w.gpu_attached, 1);
    atomic_store(&gd.state, GD_ATTACHED);
}

void tr_cupti_followed(int paused)
{
    (void)paused;
}

static int gd_start(tr_state *st, double detach_s, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    gd.grace_ns = (uint64_t)(detach_s * 1e9);
    if (tr_cu.callbacks && st->unhook && detach_s > 0 && tr_cu.finalize != NULL)
        atomic_store_explicit(&gd.ready, 1, memory_order_release);
    return 0;
}

static void gd_callback_enabled(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
    (void)dom, (void)cbid;
}

static int gd_subscribed(CUpti_SubscriberHandle h, f_enable_cb en, uint32_t enabled)
{
    (void)h, (void)en, (void)enabled;
    return 0;
}

static int gd_callback_exit(int at_exit)
{
    (void)at_exit;
    if (atomic_load_explicit(&gd.state, memory_order_relaxed) == GD_FLUSHED)
        gd_detach();
    return 0;
}

static int gd_api_record(const CUpti_Activity *r)
{
    (void)r;
    return 0;
}

static int gd_before_flush(void)
{
    int st;
    pthread_mutex_lock(&gd_lock);   /* after a flush under way */
    st = atomic_load(&gd.state);
    if (st == GD_PENDING || st == GD_FLUSHED)   /* no detach from here on */
        atomic_compare_exchange_strong(&gd.state, &st, GD_ATTACHED);
    pthread_mutex_unlock(&gd_lock);
    return gd_settled(2000) != GD_ATTACHED ? -1 : 0;
}

static void gd_after_flush(void)
{
}

static void gd_fork_child(void)
{
    pthread_mutex_init(&gd_lock, NULL);
    gd.thread = 0;
    atomic_store(&gd.ready, 0);
    atomic_store(&gd.state, GD_ATTACHED);
}

const tr_gpause tr_gpause_policy = {
    .start = gd_start,
    .callback_enabled = gd_callback_enabled,
    .subscribed = gd_subscribed,
    .callback_exit = gd_callback_exit,
    .api_record = gd_api_record,
    .before_flush = gd_before_flush,
    .after_flush = gd_after_flush,
    .fork_child = gd_fork_child,
};

#else /* !TR_HAVE_CUPTI */
const tr_gpause tr_gpause_policy = {0};
void tr_cupti_follow(int paused) { (void)paused; }
void tr_cupti_followed(int paused) { (void)paused; }
#endif
