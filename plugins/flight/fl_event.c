/*
 * fl_event.c - when the flight recorder leaves a dump, and saying where it is (one line on stderr each):
 *   - a call of the program (depth 0) that returns a sticky error - the codes of the headers that leave the
 *     context unusable, resolved by name at init - the first one of the process; with on_error=any, every
 *     call that returns an error (up to dumps=);
 *   - a synchronising call blocked longer than hang= seconds: a watchdog thread (cushim_thread_create: every
 *     signal blocked) looks at the newest records of each thread;
 *   - the request signal (signal=USR2) when the program leaves it at its default;
 *   - a fatal signal: the event is written into the ring itself, which the process leaves behind as it dies
 *     (no copy: the handler only writes and msyncs a page). The handlers are plugins/common/fatal.c's, as the
 *     trace's: the program's own handler comes first; the mark is made where the default action - death - is
 *     what remains.
 * A dump is a copy of the ring with its event (fl_ring_snapshot), 'cushim-flight-<pid>-<start>-dump<k>-<what>.ring'
 * in dump_dir (default: the ring's directory). The copy and the lines use system calls only: the same code
 * serves the signal handlers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim_io.h>

#include "fatal.h"
#include "fl_clock.h"
#include "flight.h"

static struct {
    fl_event_config c;
    struct {
        uint32_t kind;
        int32_t code;
    } sticky[32];
    int nsticky;
    cushim_stderr_id err;
    fl_ring *_Atomic rg;            /* the ring once made (fl_event_ring_ready)                          */
    _Atomic int sticky_done;
    _Atomic uint32_t dumps;         /* dump numbers given out                                            */
    _Atomic int limit_said;
    /* signals: installed once per process image (a fork's child keeps its parent's handlers) */
    int installed;
    _Atomic int fatal_done;
    int req_installed;
    /* the watchdog */
    pthread_t wd;
    int wd_on;
    _Atomic int wd_quit;
    pthread_mutex_t wd_mu;
    pthread_cond_t wd_cv;
} fl_ev = {.wd_mu = PTHREAD_MUTEX_INITIALIZER};

static const char *const fl_sticky_names[] = {
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_ASSERT", "CUDA_ERROR_ECC_UNCORRECTABLE",
    "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "CUDA_ERROR_CONTAINED", "CUDA_ERROR_TENSOR_MEMORY_LEAK",
    "cudaErrorIllegalAddress", "cudaErrorLaunchFailure", "cudaErrorLaunchTimeout", "cudaErrorHardwareStackError",
    "cudaErrorIllegalInstruction", "cudaErrorMisalignedAddress", "cudaErrorInvalidAddressSpace", "cudaErrorInvalidPc",
    "cudaErrorAssert", "cudaErrorECCUncorrectable", "cudaErrorLaunchIncompatibleTexturing", "cudaErrorContained",
    "cudaErrorTensorMemoryLeak", NULL,
};

int fl_event_init(const cushim_host *h, const fl_event_config *c, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    fl_ev.c = *c;
    for (int i = 0; fl_sticky_names[i] != NULL && fl_ev.nsticky < 32; i++) {
        uint32_t kind;
        int32_t code;
        if (h->result_by_name(fl_sticky_names[i], &kind, &code) == CUSHIM_OK) {
            fl_ev.sticky[fl_ev.nsticky].kind = kind;
            fl_ev.sticky[fl_ev.nsticky].code = code;
            fl_ev.nsticky++;
        }
    }
    cushim_stderr_mark(&fl_ev.err);
    return 0;
}

static int fl_is_sticky(uint32_t kind, int32_t code)
{
    for (int i = 0; i < fl_ev.nsticky; i++)
        if (fl_ev.sticky[i].kind == kind && fl_ev.sticky[i].code == code)
            return 1;
    return 0;
}

static uint64_t fl_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- lines and dumps (async-signal-safe) ---- */

static void fl_say(const char *text)
{
    char line[1400];
    size_t len = 0;
    int fd = cushim_stderr_fd(&fl_ev.err);
    if (fd < 0)
        return;
    line[0] = '\0';
    fl_put(line, sizeof line, &len, "cushim[");
    fl_put_u64(line, sizeof line, &len, (uint64_t)getpid());
    fl_put(line, sizeof line, &len, "] flight: ");
    fl_put(line, sizeof line, &len, text);
    fl_put(line, sizeof line, &len, "\n");
    if (len > 0 && line[len - 1] != '\n')
        line[len - 1] = '\n';   /* cut: the line still ends */
    (void)cushim_write_all(fd, line, len);
}

/* "<what>: the last calls are in PATH (cushim flight dump PATH)" */
static void fl_say_where(const char *what, const char *path)
{
    char t[1300];
    size_t len = 0;
    t[0] = '\0';
    fl_put(t, sizeof t, &len, what);
    fl_put(t, sizeof t, &len, ": the last calls are in ");
    fl_put(t, sizeof t, &len, path);
    fl_put(t, sizeof t, &len, " (cushim flight dump ");
    fl_put(t, sizeof t, &len, path);
    fl_put(t, sizeof t, &len, ")");
    fl_say(t);
}

static const char *fl_kind_word(uint32_t kind)
{
    switch (kind) {
    case FL_EV_STICKY: return "sticky";
    case FL_EV_ERROR: return "error";
    case FL_EV_SIGNAL: return "signal";
    case FL_EV_HANG: return "hang";
    case FL_EV_REQUEST: return "request";
    default: return "dump";
    }
}

/* A dump file of the ring as it is now, with event 'ev'; 'what' opens the line that says where. */
static void fl_dump(fl_event *ev, const char *what)
{
    fl_ring *rg = atomic_load(&fl_ev.rg);
    char path[760];
    size_t len = 0;
    uint32_t k;
    if (rg == NULL || rg->head == NULL)
        return;
    k = atomic_fetch_add(&fl_ev.dumps, 1) + 1;
    if (k > fl_ev.c.max_dumps) {
        if (!atomic_exchange(&fl_ev.limit_said, 1)) {
            char t[200];
            size_t n = 0;
            t[0] = '\0';
            fl_put(t, sizeof t, &n, what);
            fl_put(t, sizeof t, &n, ": no dump (this process made its dumps=");
            fl_put_u64(t, sizeof t, &n, fl_ev.c.max_dumps);
            fl_put(t, sizeof t, &n, "; said once)");
            fl_say(t);
        }
        return;
    }
    ev->number = k;
    path[0] = '\0';
    fl_put(path, sizeof path, &len, fl_ev.c.dump_dir != NULL ? fl_ev.c.dump_dir : rg->dir);
    fl_put(path, sizeof path, &len, "/cushim-flight-");
    fl_put_u64(path, sizeof path, &len, (uint64_t)rg->head->pid);
    fl_put(path, sizeof path, &len, "-");
    fl_put_u64(path, sizeof path, &len, rg->head->start);
    fl_put(path, sizeof path, &len, "-dump");
    fl_put_u64(path, sizeof path, &len, k);
    fl_put(path, sizeof path, &len, "-");
    fl_put(path, sizeof path, &len, fl_kind_word(ev->kind));
    fl_put(path, sizeof path, &len, ".ring");
    if (fl_ring_snapshot(rg, path, ev) != 0) {
        char t[1000];
        size_t n = 0;
        int e = errno;
        t[0] = '\0';
        fl_put(t, sizeof t, &n, what);
        fl_put(t, sizeof t, &n, ": cannot write the dump ");
        fl_put(t, sizeof t, &n, path);
        fl_put(t, sizeof t, &n, " (errno ");
        fl_put_u64(t, sizeof t, &n, (uint64_t)e);
        fl_put(t, sizeof t, &n, "); the ring itself is ");
        fl_put(t, sizeof t, &n, rg->path);
        fl_say(t);
        return;
    }
    fl_say_where(what, path);
}

/* ---- errors ---- */

void fl_event_error(const cushim_call *call, const fl_rec *r)
{
    const cushim_api_info *info = call->info;
    fl_event ev;
    char what[400];
    const char *rn;
    int sticky;
    if (fl_ev.c.on_error == FL_ON_OFF || call->depth != 0 || info == NULL)
        return;
    sticky = fl_is_sticky(info->ret_kind, r->result);
    if (sticky) {
        if (atomic_exchange(&fl_ev.sticky_done, 1))
            return;   /* every later call returns it too: the first one is the event */
    } else if (fl_ev.c.on_error != FL_ON_ANY) {
        return;
    }
    memset(&ev, 0, sizeof ev);
    ev.kind = sticky ? FL_EV_STICKY : FL_EV_ERROR;
    ev.result = r->result;
    ev.tid = call->tid;
    ev.seq = call->seq;
    ev.t = call->t_exit_ns ? call->t_exit_ns : fl_host->now_ns();
    ev.api_id = call->api_id;
    rn = fl_host->result_name(info->ret_kind, r->result);
    snprintf(what, sizeof what, "%s returned %s%s", info->name, rn != NULL ? rn : "an error",
             sticky ? " (a sticky error: the context is lost)" : "");
    if (rn == NULL)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %d", (int)r->result);
    fl_dump(&ev, what);
}

/* ---- signals ---- */

static const char *fl_sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a signal";
    }
}

/* The process dies of 'sig' (plugins/common/fatal.c calls it where the default action is what remains, after
   the program's own handler): the event goes into the ring, which stays behind. */
static void fl_mark_fatal(int sig, const siginfo_t *si)
{
    fl_ring *rg = atomic_load(&fl_ev.rg);
    fl_event ev;
    char what[200];
    size_t len = 0;
    int expect = 0;
    if (rg == NULL || rg->head == NULL || !atomic_compare_exchange_strong(&fl_ev.fatal_done, &expect, 1))
        return;
    memset(&ev, 0, sizeof ev);
    ev.kind = FL_EV_SIGNAL;
    ev.signo = sig;
    ev.si_code = si != NULL ? si->si_code : 0;
    ev.addr = si != NULL ? (uint64_t)(uintptr_t)si->si_addr : 0;
    ev.tid = (uint64_t)syscall(SYS_gettid);
    ev.t = fl_clock_ns();
    ev.number = atomic_load(&fl_ev.dumps) + 1;
    fl_ring_mark(rg, &ev);
    what[0] = '\0';
    fl_put(what, sizeof what, &len, fl_sig_name(sig));
    if (si != NULL && si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS)) {
        fl_put(what, sizeof what, &len, " (address ");
        fl_put_hex(what, sizeof what, &len, ev.addr);
        fl_put(what, sizeof what, &len, ")");
    }
    fl_put(what, sizeof what, &len, " on thread ");
    fl_put_u64(what, sizeof what, &len, ev.tid);
    fl_say_where(what, rg->path);
}

static void fl_on_request(int sig)
{
    int saved = errno;
    fl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = FL_EV_REQUEST;
    ev.signo = sig;
    ev.tid = (uint64_t)syscall(SYS_gettid);
    ev.t = fl_clock_ns();
    fl_dump(&ev, fl_sig_name(sig));
    errno = saved;
}

static void fl_signals_install(void)
{
    struct sigaction sa, cur;
    if (fl_ev.installed)
        return;
    fl_ev.installed = 1;
    if (fl_ev.c.signals)
        fatal_install(NULL, fl_mark_fatal);
    if (fl_ev.c.request_sig != 0 && sigaction(fl_ev.c.request_sig, NULL, &cur) == 0 &&
        !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = fl_on_request;
        sa.sa_flags = SA_RESTART;
        sigfillset(&sa.sa_mask);
        fl_ev.req_installed = sigaction(fl_ev.c.request_sig, &sa, NULL) == 0;
    }
}

/* ---- the watchdog ---- */

#define FL_WD_LOOK 8u   /* the newest records of a thread it looks at (a call and the calls it made)   */

static void fl_wd_check(fl_ring *rg, uint64_t *reported, uint64_t hang_ns)
{
    fl_head *h = rg->head;
    uint64_t now = fl_host->now_ns();
    uint32_t used = atomic_load(&h->slices_used);
    double rate = 0;
    if (h->clock == FL_CLOCK_TSC) {
        /* the records' TSC times in ns through a pair taken now, left in the file for its readers too */
        fl_cal c;
        fl_cal_take(&c);
        rate = fl_cal_rate(&h->cal0, &c);
        if (rate == 0)
            return;
        fl_cal_store(&h->cal1, &c);
        now = c.ns;
    }
    for (uint32_t i = 0; i < used && i < h->nslices; i++) {
        fl_slice *s = fl_slice_at(h, rg->base, i);
        uint64_t head;
        if (atomic_load_explicit(&s->state, memory_order_acquire) != FL_S_ACTIVE)
            continue;
        head = atomic_load_explicit(&s->head, memory_order_acquire);
        for (uint32_t j = 0; j < FL_WD_LOOK && j < head && j <= rg->mask; j++) {
            fl_rec *r = fl_rec_at(s, rg->mask, head - 1 - j);
            uint64_t seq = atomic_load_explicit(&r->seq, memory_order_acquire);
            uint64_t t = __atomic_load_n(&r->t_enter, __ATOMIC_RELAXED);
            if (rate > 0)
                t = fl_tsc_ns(&h->cal0, rate, t);
            uint64_t tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
            uint32_t api = __atomic_load_n(&r->api_id, __ATOMIC_RELAXED);
            uint16_t f = atomic_load_explicit(&r->flags, memory_order_acquire);
            if (seq == 0 || (f & FL_R_DONE) || atomic_load_explicit(&r->seq, memory_order_acquire) != seq ||
                api >= h->api_id_limit || !fl_plans[api].sync || t == 0 || now < t || now - t < hang_ns ||
                reported[i] == seq)
                continue;
            reported[i] = seq;
            {
                const cushim_api_info *info = fl_host->api_by_id(api);
                fl_event ev;
                char what[300];
                memset(&ev, 0, sizeof ev);
                ev.kind = FL_EV_HANG;
                ev.tid = tid;
                ev.seq = seq;
                ev.t = now;
                ev.blocked_ns = now - t;
                ev.api_id = api;
                snprintf(what, sizeof what, "%s has been blocked for %.1f s on thread %llu (hang=%g)",
                         info != NULL ? info->name : "a call", (double)(now - t) / 1e9, (unsigned long long)tid,
                         fl_ev.c.hang_s);
                fl_dump(&ev, what);
            }
            break;
        }
    }
}

static void *fl_wd_main(void *arg)
{
    fl_ring *rg = arg;
    uint64_t hang_ns = (uint64_t)(fl_ev.c.hang_s * 1e9);
    uint64_t period = hang_ns / 4;
    uint64_t *reported = calloc(rg->head->nslices, sizeof *reported);
    if (period < 10000000u)
        period = 10000000u;
    if (period > 1000000000u)
        period = 1000000000u;
    pthread_mutex_lock(&fl_ev.wd_mu);
    while (!atomic_load(&fl_ev.wd_quit)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)(period % 1000000000u);
        ts.tv_sec += (time_t)(period / 1000000000u) + ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&fl_ev.wd_cv, &fl_ev.wd_mu, &ts);
        if (atomic_load(&fl_ev.wd_quit) || reported == NULL)
            continue;
        pthread_mutex_unlock(&fl_ev.wd_mu);
        fl_wd_check(rg, reported, hang_ns);
        pthread_mutex_lock(&fl_ev.wd_mu);
    }
    pthread_mutex_unlock(&fl_ev.wd_mu);
    free(reported);
    return NULL;
}

static void fl_wd_start(fl_ring *rg)
{
    pthread_condattr_t ca;
    if (fl_ev.c.hang_s <= 0 || fl_ev.wd_on)
        return;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&fl_ev.wd_cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_store(&fl_ev.wd_quit, 0);
    if (cushim_thread_create(&fl_ev.wd, NULL, "cushim-flight", fl_wd_main, rg) == 0)
        fl_ev.wd_on = 1;
    else
        fl_host->log(fl_self, CUSHIM_LOG_WARN, "hang=%g: no watchdog thread: hangs are not dumped", fl_ev.c.hang_s);
}

/* ---- life ---- */

void fl_event_ring_ready(fl_ring *rg)
{
    atomic_store(&fl_ev.rg, rg);
    fl_signals_install();
    fl_wd_start(rg);
}

void fl_event_stop(void)
{
    if (!fl_ev.wd_on)
        return;
    pthread_mutex_lock(&fl_ev.wd_mu);
    atomic_store(&fl_ev.wd_quit, 1);
    pthread_cond_signal(&fl_ev.wd_cv);
    pthread_mutex_unlock(&fl_ev.wd_mu);
    pthread_join(fl_ev.wd, NULL);
    fl_ev.wd_on = 0;
}

void fl_event_fork_child(void)
{
    /* the child's own dumps, its own file (made at its next call, which starts its watchdog again); the
       handlers stay installed (the child has them) */
    atomic_store(&fl_ev.rg, NULL);
    atomic_store(&fl_ev.sticky_done, 0);
    atomic_store(&fl_ev.dumps, 0);
    atomic_store(&fl_ev.limit_said, 0);
    atomic_store(&fl_ev.fatal_done, 0);
    pthread_mutex_init(&fl_ev.wd_mu, NULL);
    fl_ev.wd_on = 0;
}
