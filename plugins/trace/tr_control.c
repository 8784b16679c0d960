/*
 * tr_control.c - the control part: whether calls are recorded now. One state,
 * 'paused' (the hooks test it), set by the options (paused, delay), the toggle
 * signal, capture ranges and the timer; with unhook=1 the call hooks follow it
 * (removed while paused, added again when not: tr_hooks_follow, under one lock).
 *
 * Capture ranges: recording starts paused and follows what the program marks,
 * as Nsight Systems' --capture-range does.
 *
 *   capture=cudaProfilerApi  each cuProfilerStart / cudaProfilerStart resumes recording (after the call), each
 *                            cuProfilerStop / cudaProfilerStop pauses it (before the call): the profiler calls
 *                            themselves are not recorded; torch.cuda.profiler.start()/stop() are these
 *   capture=nvtx:MESSAGE     recording runs while an NVTX range whose message is MESSAGE is open (pushed on any
 *                            thread, or started): from its push to its pop (the range records included); a
 *                            range of the default domain, as nsys's --nvtx-capture: MESSAGE@DOMAIN one of
 *                            DOMAIN, MESSAGE@* one of any domain ('\@' is an '@' of the message)
 *   delay=S, duration=S      recording from S seconds after the start, for S seconds (a timer thread)
 *
 * Ranges repeat (every start resumes, every stop pauses), or only the first N (capture_end=stop, repeat:N).
 * With unhook=1 the call hooks are added and removed here, on the thread that starts or stops the range, before
 * it goes on: no call of the range is missed (the toggle signal needs a watcher thread for that: below).
 * All share tr_hooks_follow's lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idsel.h"
#include "tr_control.h"
#include "tr_gpause.h"
#include "tr_hooks.h"
#include "tr_json.h"   /* tr_c_number */

/* The control part's own state (tr_state holds 'paused', 'capture', 'unhook' and 'hooked', which the hooks and
   the GPU part read). */
static struct {
    _Atomic uint64_t unhooked;    /* times the hooks were removed */
    int follow_warned;            /* the hooks could not be added again: said once */
    int capture_paused_start;     /* the ranges start paused (capture=, delay=)                       */
    char capture_desc[96];        /* what the summary and the file call the ranges                    */
    char *capture_msg;            /* nvtx:MESSAGE[@DOMAIN]'s message (its '\@' unescaped), a copy         */
    char *capture_dom;            /* its domain: NULL the default domain, "*" any                       */
    uint32_t capture_ids[4];      /* cuProfilerStart, cuProfilerStop, cudaProfilerStart, cudaProfilerStop */
    uint64_t capture_group, cuinit_group;
    _Atomic int cuda_used;        /* a capture range is asked for and the process called cuInit          */
    _Atomic int capture_open;     /* nvtx: capture ranges open now                                    */
    _Atomic uint64_t captures;    /* ranges that resumed recording                                    */
    _Atomic uint64_t capture_lost;   /* nvtx: started ranges past the 64 kept open at once             */
    uint32_t capture_max;         /* capture_end=stop (1), repeat:N (N): ranges recorded; 0: every one */
    _Atomic int capture_done;     /* capture_max ranges have ended: no more                           */
} ctl;

static pthread_mutex_t tr_follow_lock = PTHREAD_MUTEX_INITIALIZER;

void tr_hooks_follow(tr_state *st)
{
    pthread_mutex_lock(&tr_follow_lock);
    if (atomic_load(&st->paused)) {
        if (atomic_load(&st->hooked)) {
            tr_hooks_remove(st);
            atomic_fetch_add(&ctl.unhooked, 1);
        }
        tr_cupti_follow(1);
    } else {
        tr_cupti_follow(0);   /* CUPTI attached before the first call recorded again can launch */
        if (!atomic_load(&st->hooked) && tr_hooks_add(st) != 0 && !ctl.follow_warned) {
            ctl.follow_warned = 1;
            tr_host->log(st->self, CUSHIM_LOG_WARN, "unhook: the hooks could not be added again; calls are not "
                         "recorded");
        }
    }
    tr_cupti_followed(atomic_load(&st->paused));
    pthread_mutex_unlock(&tr_follow_lock);
}

/* Pause (1) or resume (0) for a capture range; a resume counts a range. Not from a signal handler. */
static void tr_capture_set(tr_state *st, int paused)
{
    int was;
    if (!paused && atomic_load(&ctl.capture_done))   /* capture_end: every range allowed has been recorded */
        return;
    was = atomic_exchange(&st->paused, paused);
    if (was && !paused)
        atomic_fetch_add(&ctl.captures, 1);
    if (!was && paused && ctl.capture_max != 0 && atomic_load(&ctl.captures) >= ctl.capture_max)
        atomic_store(&ctl.capture_done, 1);
    if (st->unhook && was != paused)
        tr_hooks_follow(st);
}

static void tr_capture_pre(cushim_call *call, tr_state *st)
{
    if (call->api_id == ctl.capture_ids[1] || call->api_id == ctl.capture_ids[3])   /* a stop */
        tr_capture_set(st, 1);
}

static int tr_capture_pre_hook(cushim_call *call, void *user, uint64_t *slot)
{
    (void)slot;
    tr_capture_pre(call, user);
    return CUSHIM_CONTINUE;
}

static void tr_capture_post_hook(cushim_call *call, void *user, uint64_t *slot)
{
    tr_state *st = user;
    (void)slot;
    if (call->api_id == ctl.capture_ids[0] || call->api_id == ctl.capture_ids[2])   /* a start */
        tr_capture_set(st, 0);
}

static void tr_timer_begin(tr_state *st);
static _Atomic int tr_tm_wanted;   /* delay=/duration=: the timer starts at the process's first cuInit */

static void tr_cuinit_post_hook(cushim_call *call, void *user, uint64_t *slot)
{
    tr_state *st = user;
    (void)call;
    (void)slot;
    if (!atomic_load_explicit(&ctl.cuda_used, memory_order_relaxed))
        atomic_store(&ctl.cuda_used, 1);
    if (atomic_load_explicit(&tr_tm_wanted, memory_order_relaxed) && atomic_exchange(&tr_tm_wanted, 0))
        tr_timer_begin(st);
}

int tr_capture_parse(tr_state *st, const char *spec, char *why, size_t cap)
{
    if (spec == NULL || spec[0] == '\0') {
        st->capture = TR_CAPTURE_NONE;
        return 0;
    }
    if (strcmp(spec, "cudaProfilerApi") == 0) {
        st->capture = TR_CAPTURE_PROFILER;
        ctl.capture_paused_start = 1;
        return 0;
    }
    if (strncmp(spec, "nvtx:", 5) == 0 && spec[5] != '\0') {
        /* MESSAGE[@DOMAIN]: the last '@' not escaped splits them; '\@' in MESSAGE is an '@' */
        const char *m = spec + 5, *at = NULL;
        size_t n = 0;
        for (const char *p = m; *p; p++)
            if (*p == '@' && (p == m || p[-1] != '\\'))
                at = p;
        if (at == m || (at != NULL && at[1] == '\0')) {
            snprintf(why, cap, "capture=%s: an empty %s in 'nvtx:MESSAGE@DOMAIN'", spec, at == m ? "MESSAGE" : "DOMAIN");
            return -1;
        }
        if ((ctl.capture_msg = malloc(strlen(m) + 1)) == NULL ||
            (at != NULL && (ctl.capture_dom = strdup(at + 1)) == NULL)) {
            snprintf(why, cap, "capture=%s: out of memory", spec);
            return -1;
        }
        for (const char *p = m; *p && p != at; p++)
            if (!(p[0] == '\\' && p[1] == '@'))
                ctl.capture_msg[n++] = *p;
        ctl.capture_msg[n] = '\0';
        st->capture = TR_CAPTURE_NVTX;
        ctl.capture_paused_start = 1;
        return 0;
    }
    snprintf(why, cap, "capture=%s: not 'cudaProfilerApi' or 'nvtx:MESSAGE[@DOMAIN]'", spec);
    return -1;
}

int tr_capture_end_parse(tr_state *st, const char *spec, char *why, size_t cap)
{
    char *end;
    unsigned long long n;
    if (spec == NULL || spec[0] == '\0' || strcmp(spec, "repeat") == 0)
        return 0;   /* every range */
    if (st->capture != TR_CAPTURE_PROFILER && st->capture != TR_CAPTURE_NVTX) {
        snprintf(why, cap, "capture_end=%s needs capture=cudaProfilerApi or capture=nvtx:MESSAGE", spec);
        return -1;
    }
    if (strcmp(spec, "stop") == 0) {
        ctl.capture_max = 1;
        return 0;
    }
    if (strncmp(spec, "repeat:", 7) == 0 && spec[7] >= '1' && spec[7] <= '9') {
        errno = 0;
        n = strtoull(spec + 7, &end, 10);
        if (*end == '\0' && errno == 0 && n <= UINT32_MAX) {
            ctl.capture_max = (uint32_t)n;
            return 0;
        }
    }
    snprintf(why, cap, "capture_end=%s: not 'repeat', 'stop' or 'repeat:N' (N from 1)", spec);
    return -1;
}

int tr_capture_start(tr_state *st)
{
    static const char *const names[4] = {"cuProfilerStart", "cuProfilerStop", "cudaProfilerStart",
                                          "cudaProfilerStop"};
    cushim_hook_spec spec;
    idsel sel = {0};
    int rc;
    if (st->capture == TR_CAPTURE_NONE)
        return 0;
    /* cuInit: the process uses CUDA (a shell between the launcher and the program does not, and is not told at
       its exit that it opened no range) */
    if (tr_hooks_add_post(st, "base:cuInit", tr_cuinit_post_hook, &ctl.cuinit_group) != 0)
        atomic_store(&ctl.cuda_used, 1);   /* not known: said at exit whatever the process did */
    if (st->capture != TR_CAPTURE_PROFILER)
        return 0;
    for (int k = 0; k < 4; k++) {
        const cushim_api_info *info = tr_host->api_by_name(names[k]);
        ctl.capture_ids[k] = info != NULL ? info->id : UINT32_MAX;   /* none in this build: never matched */
        if (info != NULL && idsel_add(&sel, ctl.capture_ids[k]) != 0) {
            idsel_free(&sel);
            tr_host->log(st->self, CUSHIM_LOG_ERROR, "out of memory");
            return -1;
        }
    }
    if (sel.s == NULL) {
        tr_host->log(st->self, CUSHIM_LOG_ERROR, "capture=cudaProfilerApi: this build has no profiler API to hook");
        return -1;
    }
    memset(&spec, 0, sizeof spec);
    spec.size = sizeof spec;
    spec.select = sel.s;
    /* before the recording's pre hook (a stop is not recorded), after its post hook (nor is a start) */
    spec.priority = -2000;
    spec.pre = tr_capture_pre_hook;
    spec.post = tr_capture_post_hook;
    spec.user = st;
    rc = tr_host->hooks_add(st->self, &spec, &ctl.capture_group);
    idsel_free(&sel);
    if (rc != CUSHIM_OK) {
        tr_host->log(st->self, CUSHIM_LOG_ERROR, "capture=cudaProfilerApi: cannot hook the profiler API");
        return -1;
    }
    return 0;
}

/* ---- capture=nvtx:MESSAGE (tr_nvtx.c calls these) ---- */

/* The thread's open capture ranges pushed in each domain, the outermost only (a capture range nested in one
   of its domain does not end it): the domain and its push level plus one; 0: free. Past TR_CAP_PUSHED
   domains with one open at once on a thread: not followed, counted (capture_lost). */
#define TR_CAP_PUSHED 8
static _Thread_local struct { uint32_t dom; int level; } tr_cap_pushed[TR_CAP_PUSHED];
/* Started ranges (nvtxRangeStart: they end on any thread) that are capture ranges, by id; 0 = free. */
#define TR_CAP_STARTED 64
static _Atomic uint64_t tr_cap_started[TR_CAP_STARTED];

/* A range of message 'msg' in domain 'dom_name' (NULL: the default domain) is a capture range. */
static int tr_capture_match(const tr_state *st, const char *msg, const char *dom_name)
{
    if (st == NULL || st->capture != TR_CAPTURE_NVTX || msg == NULL || strcmp(msg, ctl.capture_msg) != 0)
        return 0;
    if (ctl.capture_dom == NULL)
        return dom_name == NULL;
    return strcmp(ctl.capture_dom, "*") == 0 || (dom_name != NULL && strcmp(dom_name, ctl.capture_dom) == 0);
}

static void tr_capture_open(tr_state *st)
{
    if (atomic_fetch_add(&ctl.capture_open, 1) == 0)
        tr_capture_set(st, 0);
}

static void tr_capture_close(tr_state *st)
{
    if (atomic_fetch_sub(&ctl.capture_open, 1) == 1)
        tr_capture_set(st, 1);
}

void tr_capture_nvtx_push(tr_state *st, const char *msg, uint32_t dom, const char *dom_name, int level)
{
    int free_slot = -1;
    if (!tr_capture_match(st, msg, dom_name))
        return;
    for (int i = 0; i < TR_CAP_PUSHED; i++) {
        if (tr_cap_pushed[i].level != 0 && tr_cap_pushed[i].dom == dom)
            return;   /* nested in a capture range of its domain */
        if (tr_cap_pushed[i].level == 0 && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0) {
        atomic_fetch_add(&ctl.capture_lost, 1);
        return;
    }
    tr_cap_pushed[free_slot].dom = dom;
    tr_cap_pushed[free_slot].level = level + 1;
    tr_capture_open(st);
}

void tr_capture_nvtx_pop(tr_state *st, uint32_t dom, int level)
{
    if (st == NULL)
        return;
    for (int i = 0; i < TR_CAP_PUSHED; i++)
        if (tr_cap_pushed[i].level == level + 1 && tr_cap_pushed[i].dom == dom) {
            tr_cap_pushed[i].level = 0;
            tr_capture_close(st);
            return;
        }
}

void tr_capture_nvtx_start(tr_state *st, const char *msg, uint32_t dom, const char *dom_name, uint64_t id)
{
    (void)dom;
    if (!tr_capture_match(st, msg, dom_name))
        return;
    for (int i = 0; i < TR_CAP_STARTED; i++) {
        uint64_t z = 0;
        if (atomic_compare_exchange_strong(&tr_cap_started[i], &z, id)) {
            tr_capture_open(st);
            return;
        }
    }
    atomic_fetch_add(&ctl.capture_lost, 1);   /* more than 64 open at once: this one does not count */
}

void tr_capture_nvtx_end(tr_state *st, uint64_t id)
{
    if (st == NULL || st->capture != TR_CAPTURE_NVTX || id == 0)
        return;
    for (int i = 0; i < TR_CAP_STARTED; i++) {
        uint64_t v = id;
        if (atomic_compare_exchange_strong(&tr_cap_started[i], &v, 0)) {
            tr_capture_close(st);
            return;
        }
    }
}

/* ---- delay=, duration=: recording from DELAY seconds after the plugin starts, for DURATION seconds ----
   A thread (its signals blocked) waits on a condition variable on CLOCK_MONOTONIC until each moment and pauses or
   resumes as a capture range does; flush (exit) and the deadlines' passing end it. It starts at the process's
   first cuInit, not with the plugin: a process that makes no CUDA call (a shell between the launcher and the
   program, a helper it runs) has no such thread; the moments that passed before are applied then, on the calling
   thread, before cuInit returns to the program. A forked child of a process whose timer runs gets a thread of its
   own for what is left (the moments are absolute: the child keeps the parent's schedule); the child of one whose
   timer has not started starts it at its own first cuInit. */

static pthread_mutex_t tr_tm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tr_tm_cond;
static uint64_t tr_tm_resume_at, tr_tm_pause_at;   /* CLOCK_MONOTONIC ns; 0: none (done) */
static int tr_tm_quit;
static _Atomic int tr_tm_on;
static tr_helper tr_tm_helper;

static void *tr_timer_main(void *arg)
{
    tr_state *st = arg;
    pthread_mutex_lock(&tr_tm_lock);
    while (!tr_tm_quit) {
        /* the next moment: the resume while one is due, then the pause */
        int pause = tr_tm_resume_at == 0;
        uint64_t next = pause ? tr_tm_pause_at : tr_tm_resume_at;
        struct timespec ts;
        if (next == 0)
            break;
        if (tw_mono_ns() >= next) {
            *(pause ? &tr_tm_pause_at : &tr_tm_resume_at) = 0;
            pthread_mutex_unlock(&tr_tm_lock);
            tr_capture_set(st, pause);
            pthread_mutex_lock(&tr_tm_lock);
            continue;
        }
        ts.tv_sec = (time_t)(next / 1000000000ull);
        ts.tv_nsec = (long)(next % 1000000000ull);
        pthread_cond_timedwait(&tr_tm_cond, &tr_tm_lock, &ts);
    }
    pthread_mutex_unlock(&tr_tm_lock);
    return NULL;
}

static int tr_timer_thread(tr_state *st)
{
    tr_cond_init_monotonic(&tr_tm_cond);
    if (tr_helper_thread(&tr_tm_helper, tr_timer_main, st) != 0)
        return -1;
    atomic_store(&tr_tm_on, 1);
    return 0;
}

int tr_timer_parse(tr_state *st, double delay_s, double duration_s, char *why, size_t cap)
{
    uint64_t now = tw_mono_ns();
    if (!(delay_s >= 0 && delay_s < 1e9) || !(duration_s >= 0 && duration_s < 1e9)) {
        snprintf(why, cap, "delay=%g, duration=%g: seconds, 0 or more", delay_s, duration_s);
        return -1;
    }
    if (delay_s == 0 && duration_s == 0)
        return 0;
    if (st->capture != TR_CAPTURE_NONE) {
        snprintf(why, cap, "capture= and delay=/duration= exclude each other (one kind of range)");
        return -1;
    }
    st->capture = TR_CAPTURE_TIME;
    ctl.capture_paused_start = delay_s > 0;
    tr_tm_resume_at = delay_s > 0 ? now + (uint64_t)(delay_s * 1e9) : 0;
    tr_tm_pause_at = duration_s > 0 ? now + (uint64_t)((delay_s + duration_s) * 1e9) : 0;
    tr_tm_quit = 0;
    if (delay_s == 0)   /* recording from the start: the one range is open */
        atomic_fetch_add(&ctl.captures, 1);
    return 0;
}

static _Atomic int tr_tm_missed;   /* the whole window had passed at the first cuInit */

int tr_timer_missed(void)
{
    return atomic_load(&tr_tm_missed);
}

/* The moments already passed, applied now (in order: the resume, then the pause); 1 when one is still to come. */
static int tr_timer_catch_up(tr_state *st)
{
    int left;
    pthread_mutex_lock(&tr_tm_lock);
    uint64_t now = tw_mono_ns();
    int resume = tr_tm_resume_at != 0 && now >= tr_tm_resume_at;
    if (resume)
        tr_tm_resume_at = 0;
    int pause = tr_tm_resume_at == 0 && tr_tm_pause_at != 0 && now >= tr_tm_pause_at;
    if (pause)
        tr_tm_pause_at = 0;
    left = !tr_tm_quit && (tr_tm_resume_at != 0 || tr_tm_pause_at != 0);
    pthread_mutex_unlock(&tr_tm_lock);
    if (resume && pause && atomic_load(&st->paused))   /* the whole window: nothing will be recorded (said at exit) */
        atomic_store(&tr_tm_missed, 1);
    else if (resume)
        tr_capture_set(st, 0);
    else if (pause)
        tr_capture_set(st, 1);
    return left;
}

/* The timer's thread started; without one, said (recording stays as it is). */
static void tr_timer_run(tr_state *st)
{
    if (tr_timer_thread(st) != 0)
        tr_host->log(st->self, CUSHIM_LOG_WARN, "%s: no thread for the timer: recording stays as it is now (%s)",
                     ctl.capture_desc, atomic_load(&st->paused) ? "paused" : "on");
}

static void tr_timer_begin(tr_state *st)
{
    if (tr_timer_catch_up(st))
        tr_timer_run(st);
}

void tr_timer_start(tr_state *st)
{
    if (st->capture != TR_CAPTURE_TIME || (tr_tm_resume_at == 0 && tr_tm_pause_at == 0))
        return;
    if (ctl.cuinit_group != 0)   /* at the first cuInit */
        atomic_store(&tr_tm_wanted, 1);
    else
        tr_timer_run(st);        /* cuInit could not be hooked: now */
}

void tr_timer_stop(void)
{
    if (!atomic_exchange(&tr_tm_on, 0))
        return;
    pthread_mutex_lock(&tr_tm_lock);
    tr_tm_quit = 1;
    pthread_cond_signal(&tr_tm_cond);
    pthread_mutex_unlock(&tr_tm_lock);
}

void tr_capture_fork_child(tr_state *st)
{
    pthread_mutex_init(&tr_follow_lock, NULL);   /* a thread of the parent may have held it at the fork */
    pthread_mutex_init(&tr_tm_lock, NULL);
    if (atomic_exchange(&tr_tm_on, 0) && !tr_tm_quit && (tr_tm_resume_at != 0 || tr_tm_pause_at != 0))
        tr_timer_thread(st);   /* the parent's schedule: what is left of it */
}

/* ---- toggle=SIG: pause and resume recording (a capture range) ---- */

static int tr_toggle_sig;

static void tr_on_toggle(int sig)
{
    (void)sig;
    if (tr_st != NULL) {
        atomic_fetch_xor_explicit(&tr_st->paused, 1, memory_order_relaxed);
        tr_unhook_wake();
    }
}

/* "USR1", "SIGUSR2", "RTMIN+3", "SIGRTMIN", a number: the signal, 0 when not one of those. */
static int tr_toggle_parse(const char *n)
{
    char *end;
    long v;
    if (strncmp(n, "SIG", 3) == 0)
        n += 3;
    if (strcmp(n, "USR1") == 0)
        return SIGUSR1;
    if (strcmp(n, "USR2") == 0)
        return SIGUSR2;
    if (strncmp(n, "RTMIN", 5) == 0) {
        v = n[5] == '\0' ? 0 : n[5] == '+' ? strtol(n + 6, &end, 10) : -1;
        if (n[5] == '+' && (*end != '\0' || end == n + 6))
            return 0;
        return v >= 0 && SIGRTMIN + v <= SIGRTMAX ? SIGRTMIN + (int)v : 0;
    }
    v = strtol(n, &end, 10);
    return *n != '\0' && *end == '\0' && (v == SIGUSR1 || v == SIGUSR2 || (v >= SIGRTMIN && v <= SIGRTMAX)) ? (int)v : 0;
}

int tr_toggle_install(const char *name, char *why, size_t cap)
{
    struct sigaction sa, old;
    int sig = tr_toggle_parse(name);
    if (sig == 0) {
        snprintf(why, cap, "not USR1, USR2 or RTMIN+N");
        return -1;
    }
    if (tr_toggle_sig == sig)
        return 0;
    if (sigaction(sig, NULL, &old) != 0 || (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL) ||
        ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != NULL)) {
        snprintf(why, cap, "the program already handles or ignores that signal");
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tr_on_toggle;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0) {
        snprintf(why, cap, "sigaction: %s", strerror(errno));
        return -1;
    }
    tr_toggle_sig = sig;
    return 0;
}

/* ---- unhook=1: the call hooks removed while paused ----
   Adding and removing hooks takes the host's locks and memory: not in a signal handler. The toggle handler posts
   a semaphore (async-signal-safe); this thread, its signals blocked, makes the hooks follow 'paused'. A pause
   takes effect at once (the hooks check 'paused'); the hooks come back a moment after a resume. */

static sem_t tr_unhook_sem;
static _Atomic int tr_unhook_on, tr_unhook_quit;
static tr_helper tr_unhook_helper;

void tr_unhook_wake(void)
{
    if (atomic_load_explicit(&tr_unhook_on, memory_order_acquire))
        sem_post(&tr_unhook_sem);
}

static void *tr_unhook_main(void *arg)
{
    tr_state *st = arg;
    for (;;) {
        while (sem_wait(&tr_unhook_sem) != 0 && errno == EINTR)
            ;
        if (atomic_load(&tr_unhook_quit))
            return NULL;
        tr_hooks_follow(st);
    }
}

int tr_unhook_start(tr_state *st)
{
    if (sem_init(&tr_unhook_sem, 0, 0) != 0)
        return -1;
    atomic_store(&tr_unhook_quit, 0);
    if (tr_helper_thread(&tr_unhook_helper, tr_unhook_main, st) != 0)
        return -1;
    atomic_store_explicit(&tr_unhook_on, 1, memory_order_release);
    sem_post(&tr_unhook_sem);   /* the hooks follow 'paused' as it is now (a fork's child: as the parent left it) */
    return 0;
}

void tr_unhook_fork_child(tr_state *st)
{
    /* the thread did not survive the fork: another one for the child */
    if (atomic_exchange(&tr_unhook_on, 0))
        tr_unhook_start(st);
}

void tr_unhook_stop(void)
{
    if (atomic_exchange(&tr_unhook_on, 0)) {
        atomic_store(&tr_unhook_quit, 1);
        sem_post(&tr_unhook_sem);
    }
}

/* ---- the part: options, start, exit, fork ---- */

static int tr_control_setup(tr_state *st, char *why, size_t cap)
{
    const cushim_host *host = tr_host;
    cushim_plugin *self = st->self;
    double delay = host->opt_double(self, "delay"), duration = host->opt_double(self, "duration");
    char dn[40], un[40];   /* as the user wrote them: '.' whatever locale the program set (drop-in mode) */
    if (tr_capture_parse(st, host->opt_string(self, "capture"), why, cap) != 0 ||
        tr_capture_end_parse(st, host->opt_string(self, "capture_end"), why, cap) != 0 ||
        tr_timer_parse(st, delay, duration, why, cap) != 0)
        return -1;
    snprintf(dn, sizeof dn, "%.9g", delay);
    snprintf(un, sizeof un, "%.9g", duration);
    tr_c_number(dn);
    tr_c_number(un);
    if (st->capture == TR_CAPTURE_TIME && duration == 0)
        snprintf(ctl.capture_desc, sizeof ctl.capture_desc, "delay=%s", dn);
    else if (st->capture == TR_CAPTURE_TIME && delay == 0)
        snprintf(ctl.capture_desc, sizeof ctl.capture_desc, "duration=%s", un);
    else if (st->capture == TR_CAPTURE_TIME)
        snprintf(ctl.capture_desc, sizeof ctl.capture_desc, "delay=%s,duration=%s", dn, un);
    else if (st->capture != TR_CAPTURE_NONE && ctl.capture_max == 0)
        snprintf(ctl.capture_desc, sizeof ctl.capture_desc, "%s", host->opt_string(self, "capture"));
    else if (st->capture != TR_CAPTURE_NONE)
        snprintf(ctl.capture_desc, sizeof ctl.capture_desc, "%s,capture_end=%s", host->opt_string(self, "capture"),
                 host->opt_string(self, "capture_end"));
    st->w.capture = st->capture != TR_CAPTURE_NONE ? ctl.capture_desc : NULL;
    st->w.captures = &ctl.captures;
    st->w.unhooked = &ctl.unhooked;
    return 0;
}

static void tr_control_fini(tr_state *st)
{
    (void)st;
    free(ctl.capture_msg);
    free(ctl.capture_dom);
    ctl.capture_msg = ctl.capture_dom = NULL;
}

/* After the hooks part: the capture ranges' hooks, 'paused' as the options say, the toggle, unhook, the timer. */
static int tr_control_start(tr_state *st)
{
    const cushim_host *host = tr_host;
    cushim_plugin *self = st->self;
    const char *tg = host->opt_string(self, "toggle");
    char why[160] = "";
    int toggled = 0;
    if (tr_capture_start(st) != 0)
        return -1;
    /* a capture range starts paused: recording begins at the range's start */
    atomic_store(&st->paused, host->opt_bool(self, "paused") || ctl.capture_paused_start ? 1 : 0);
    if (tg != NULL && tg[0] != '\0') {
        if (tr_toggle_install(tg, why, sizeof why) != 0)
            host->log(self, CUSHIM_LOG_WARN, "toggle=%s: %s; recording is not toggled", tg, why);
        else
            toggled = 1;
    }
    st->unhook = host->opt_bool(self, "unhook");
    if (st->unhook && atomic_load(&st->paused)) {   /* paused from the start: no hook from the first call */
        tr_hooks_remove(st);
        atomic_fetch_add(&ctl.unhooked, 1);
    }
    if (st->unhook && toggled && tr_unhook_start(st) != 0) {
        host->log(self, CUSHIM_LOG_WARN, "unhook: no thread to follow the toggle; paused calls keep their hooks");
        /* hooks that stay while paused read the exit clock themselves (one read a paused call, not two) */
        if (tr_hooks_self_timed(st) != 0)
            host->log(self, CUSHIM_LOG_WARN, "unhook: the hooks could not be added again");
    }
    tr_timer_start(st);
    return 0;
}

static void tr_control_flush(tr_state *st)
{
    tr_unhook_stop();
    tr_timer_stop();
    if (st->capture != TR_CAPTURE_NONE && atomic_load(&ctl.captures) == 0 &&
        atomic_load(&ctl.cuda_used))   /* a process that made no CUDA call (a shell) has nothing to be told */
        tr_host->log(st->self, CUSHIM_LOG_WARN, "%s%s: %s; no call was recorded",
                     st->capture == TR_CAPTURE_TIME ? "" : "capture=", ctl.capture_desc,
                     st->capture == TR_CAPTURE_PROFILER
                         ? "the program never called cudaProfilerStart or cuProfilerStart"
                     : st->capture == TR_CAPTURE_NVTX
                         ? "no NVTX range with that message (in that domain) was opened (is NVTX_INJECTION64_PATH the "
                           "trace plugin? "
                           "cushim run --trace sets it)"
                         : tr_timer_missed() ? "the window had passed when the process first called cuInit"
                                             : "the program ended before the delay passed");
    if (atomic_load(&ctl.capture_lost) != 0)
        tr_host->log(st->self, CUSHIM_LOG_WARN, "capture=%s: %llu ranges were not followed (started while 64 "
                     "were open, or pushed on a thread with ranges of 8 domains open; their calls recorded only where "
                     "another range was open)", ctl.capture_desc,
                     (unsigned long long)atomic_load(&ctl.capture_lost));
}

static void tr_control_fork_child(tr_state *st)
{
    tr_capture_fork_child(st);
    atomic_store(&ctl.unhooked, 0);   /* the child's file counts the child's own (tw_fork_child: the writer's) */
    tr_unhook_fork_child(st);
}

const tr_part tr_part_control = {
    .name = "control",
    .setup = tr_control_setup,
    .start = tr_control_start,
    .flush = tr_control_flush,
    .fork_child = tr_control_fork_child,
    .fini = tr_control_fini,
};
