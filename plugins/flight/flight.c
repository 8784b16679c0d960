/*
 * flight.c - the flight recorder: the last N calls of every thread kept, for almost nothing, in a file that
 * outlives the process (docs/plugins/flight.md).
 *
 *   CUSHIM_PLUGINS='flight:n=1024'        (or cushim run --flight[=N] -- CMD)
 *   cushim flight dump PID|FILE           the text summary; --format=json: Perfetto/Chrome JSON
 *
 * One pre+post hook group on every selected API, run first among pre hooks and last among post hooks. The pre
 * hook claims the next record of the thread's slice (a ring in the file, fl_ring.h) and copies the raw params
 * struct into it; the post hook adds the result and the exit time, and after a successful driver launch the
 * kernel's arguments (fl_func.c). Times are the TSC read in line where it can be (fl_clock.h: converted to ns
 * by the reader), else the host's clock. Nothing is formatted, locked or allocated on that path: rendering is the dump
 * tool's (tools/cushim-flight.c), from the metadata. The file is made at the process's first recorded call (a
 * shell that makes none leaves none), removed at a normal exit, and left where the process dies of a signal
 * or is killed. Built on the public SDK only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim_io.h>

#include "fl_clock.h"
#include "flight.h"
#include "idsel.h"

const cushim_host *fl_host;
cushim_plugin *fl_self;
const fl_plan *fl_plans;

/* The calling thread's state: one TLS load per hook (TLS descriptors, plugins/flight/CMakeLists.txt). */
static __thread fl_thread *fl_me;

static struct {
    fl_ring ring;
    _Atomic int ready;          /* 0: no file yet, 1: made, 2: could not be made (said; recorder off) */
    pthread_mutex_t lock;       /* making the file                                               */
    fl_ring_config cfg;
    char *dir;
    uint32_t tls_key;
    int tsc;                    /* times are TSC ticks (fl_clock.h), else the host's ns          */
    uint64_t group, query_group, alloc_group, unload_group;
    int have_query, have_alloc, have_unload;
    int keep;
    _Atomic int lost_said;      /* threads without a slice: said once                            */
} fl_st = {.lock = PTHREAD_MUTEX_INITIALIZER};

fl_thread *fl_thread_me(void)
{
    return fl_me;
}

uint64_t fl_time(const cushim_call *call)
{
    return fl_st.tsc ? fl_rdtsc() : call->t_enter_ns != 0 ? call->t_enter_ns : fl_host->now_ns();
}

fl_ring *fl_ring_now(void)
{
    return atomic_load_explicit(&fl_st.ready, memory_order_acquire) == 1 ? &fl_st.ring : NULL;
}

static void fl_hooks_off(void)
{
    if (fl_st.group != 0)
        fl_host->hooks_remove(fl_self, fl_st.group);
    if (fl_st.have_query)
        fl_host->hooks_remove(fl_self, fl_st.query_group);
    if (fl_st.have_alloc)
        fl_host->hooks_remove(fl_self, fl_st.alloc_group);
    if (fl_st.have_unload)
        fl_host->hooks_remove(fl_self, fl_st.unload_group);
}

fl_ring *fl_ring_ensure(uint64_t t_first)
{
    int s = atomic_load_explicit(&fl_st.ready, memory_order_acquire);
    if (s != 0)
        return s == 1 ? &fl_st.ring : NULL;
    pthread_mutex_lock(&fl_st.lock);
    s = atomic_load_explicit(&fl_st.ready, memory_order_relaxed);
    if (s == 0) {
        char why[600];
        fl_st.cfg.t0 = t_first != 0 ? t_first : fl_host->now_ns();
        if (fl_st.tsc) {
            /* the first rate over 1 ms at least, once a process: a file that a process killed early leaves has
               one; later pairs (the threads', the watchdog's, a dump's) only make it better */
            struct timespec ms = {0, 1000000};
            double rate;
            fl_st.cfg.clock = FL_CLOCK_TSC;
            fl_cal_take(&fl_st.cfg.cal0);
            nanosleep(&ms, NULL);
            fl_cal_take(&fl_st.cfg.cal1);
            rate = fl_cal_rate(&fl_st.cfg.cal0, &fl_st.cfg.cal1);
            fl_st.cfg.t0 = t_first != 0 && rate > 0 ? fl_tsc_ns(&fl_st.cfg.cal0, rate, t_first) : fl_st.cfg.cal0.ns;
        }
        if (fl_ring_create(&fl_st.ring, &fl_st.cfg, why, sizeof why) == 0) {
            s = 1;
            atomic_store_explicit(&fl_st.ready, 1, memory_order_release);
            fl_host->log(fl_self, CUSHIM_LOG_INFO, "recording the last %u calls of each thread in %s",
                         fl_st.ring.head->n, fl_st.ring.path);
            fl_event_ring_ready(&fl_st.ring);
        } else {
            s = 2;
            atomic_store_explicit(&fl_st.ready, 2, memory_order_release);
            fl_host->log(fl_self, CUSHIM_LOG_WARN, "%s; the flight recorder is off (the program runs on)", why);
            fl_hooks_off();
        }
    }
    pthread_mutex_unlock(&fl_st.lock);
    return s == 1 ? &fl_st.ring : NULL;
}

/* ---- threads ---- */

/* A thread ended (the host's TLS destructor, on that thread): its slice is kept for the dump and reused once
   no free one is left. */
static void fl_thread_end(void *p)
{
    fl_thread *t = p;
    fl_ring *rg = fl_ring_now();
    if (fl_me == t)
        fl_me = NULL;
    if (rg != NULL && !t->sink)
        fl_ring_release(rg, t->slice);
    free(t);
}

/* The calling thread's first recorded call: the file made if need be, a slice claimed (or the thread's own
   one-record sink when none is left: its calls cost the same and go nowhere). NULL: not recorded. */
static __attribute__((noinline)) fl_thread *fl_thread_new(uint64_t t_first)
{
    fl_ring *rg = fl_ring_ensure(t_first);
    fl_thread *t;
    fl_slice *s;
    int nospace = 0;
    if (rg == NULL)
        return NULL;
    /* the sink: a slice header and one record after the state, cache-line aligned */
    t = aligned_alloc(64, (sizeof *t + 63) / 64 * 64 + sizeof(fl_slice) + FL_REC_SIZE);
    if (t == NULL)
        return NULL;
    memset(t, 0, (sizeof *t + 63) / 64 * 64 + sizeof(fl_slice) + FL_REC_SIZE);
    s = fl_ring_claim(rg, fl_host->thread_id(), fl_host->now_ns(), &nospace);
    t->ring = rg;
    t->funcs = (const fl_func *)((const char *)rg->base + rg->head->off_funcs);
    if (s != NULL) {
        t->slice = s;
        t->mask = rg->mask;
    } else {
        t->slice = (fl_slice *)((char *)t + (sizeof *t + 63) / 64 * 64);
        t->mask = 0;
        t->sink = 1;
        atomic_fetch_add(&rg->head->threads_lost, 1);
        if (!atomic_exchange(&fl_st.lost_said, 1))
            fl_host->log(fl_self, CUSHIM_LOG_WARN, "thread %llu is not recorded: %s (threads=%u); said once",
                         (unsigned long long)fl_host->thread_id(),
                         nospace ? "no space left for its slice in the ring's directory" : "every slice is in use",
                         rg->head->nslices);
    }
    if (fl_host->tls_set(fl_st.tls_key, t) != CUSHIM_OK) {
        if (!t->sink)
            fl_ring_release(rg, t->slice);
        free(t);
        return NULL;
    }
    fl_me = t;
    return t;
}

/* ---- hooks ---- */

/* The params struct into the record: 16-byte moves, then the tail, in line (a call to memcpy would make the
   hook save registers; the structs are small: 64 bytes for cuLaunchKernel, in 4 steps of 5 instructions). */
typedef uint64_t fl_v16 __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) void fl_copy(unsigned char *d, const unsigned char *s, uint32_t n)
{
    uint32_t i = 0;
    if (n == 8) {   /* one pointer: most queries (cuCtxGetCurrent, cudaGetDevice, cuCtxGetDevice) */
        uint64_t w;
        __builtin_memcpy(&w, s, 8);
        __builtin_memcpy(d, &w, 8);
        return;
    }
    for (; i + 16 <= n; i += 16) {
        fl_v16 v;
        __builtin_memcpy(&v, s + i, 16);
        __builtin_memcpy(d + i, &v, 16);
        __asm__("" ::: "memory");   /* keeps the compiler from making the loop a memcpy call again */
    }
    if (i + 8 <= n) {
        uint64_t w;
        __builtin_memcpy(&w, s + i, 8);
        __builtin_memcpy(d + i, &w, 8);
        i += 8;
    }
    if (__builtin_expect(i == n, 1))   /* a struct with a pointer in it is a multiple of 8 bytes */
        return;
    if (i + 4 <= n) {
        uint32_t w;
        __builtin_memcpy(&w, s + i, 4);
        __builtin_memcpy(d + i, &w, 4);
        i += 4;
    }
    for (; i < n; i++)
        d[i] = s[i];
}

/* The call's record: the next of the thread's slice, its seq zeroed before the slice says it is there (readers
   skip a record with seq 0); a signal handler's call between the load and the store takes the same record and
   loses it to this one. Plain stores, one release to publish. */
/* A pair in the slice, every FL_CAL_EVERY calls of its thread (TSC times): the rate of a file a killed process
   left is measured up to its last few thousand calls. */
static __attribute__((noinline)) void fl_cal_slice(fl_slice *s)
{
    fl_cal c;
    fl_cal_take(&c);
    fl_cal_store(&s->cal, &c);
}

static inline __attribute__((always_inline)) void fl_record(fl_thread *t, const cushim_call *call, uint64_t *slot,
                                                            uint64_t te, int tsc)
{
    const fl_plan *pl = &fl_plans[call->api_id];
    fl_slice *s = t->slice;
    uint64_t k = atomic_load_explicit(&s->head, memory_order_relaxed);
    fl_rec *r = fl_rec_at(s, t->mask, k);
    uint64_t word;
    atomic_store_explicit(&r->seq, 0, memory_order_relaxed);
    atomic_store_explicit(&s->head, k + 1, memory_order_release);
    /* what the watchdog reads of other threads' records, as relaxed atomics (plain stores on x86-64) */
    __atomic_store_n(&r->t_enter, te, __ATOMIC_RELAXED);
    r->t_exit = 0;
    __atomic_store_n(&r->tid, call->tid, __ATOMIC_RELAXED);
    __atomic_store_n(&r->api_id, call->api_id, __ATOMIC_RELAXED);
    r->result = 0;
    /* flags, params_len, args_len (0), depth, reserved: one store */
    word = pl->head_word | (uint64_t)(call->depth < 255 ? call->depth : 255) << 48;
    __builtin_memcpy((char *)r + offsetof(fl_rec, flags), &word, sizeof word);
    fl_copy((unsigned char *)(r + 1), call->params, pl->params_len);
    atomic_store_explicit(&r->seq, call->seq, memory_order_release);
    *slot = (uint64_t)(uintptr_t)r;
    if (tsc && __builtin_expect((k & (FL_CAL_EVERY - 1)) == 0, 0))
        fl_cal_slice(s);
}

/* The thread's first recorded call (no state yet): made, then recorded. */
static __attribute__((noinline)) int fl_pre_first(cushim_call *call, uint64_t *slot, uint64_t te, int tsc)
{
    fl_thread *t = fl_thread_new(te);
    if (t != NULL)
        fl_record(t, call, slot, te, tsc);
    return CUSHIM_CONTINUE;
}

/* 'tsc': the entry time is the TSC's, read here (the hooks are registered without the host's clocks), else the
   host's. Two copies of each hook, one per clock: no test of the clock on the call path. */
static inline __attribute__((always_inline)) int fl_pre_as(cushim_call *call, uint64_t *slot, int tsc)
{
    fl_thread *t = fl_me;
    uint64_t te = tsc ? fl_rdtsc() : call->t_enter_ns;
    if (__builtin_expect(t == NULL, 0))
        return fl_pre_first(call, slot, te, tsc);
    fl_record(t, call, slot, te, tsc);
    return CUSHIM_CONTINUE;
}

static int fl_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user;
    return fl_pre_as(call, slot, 0);
}

static int fl_pre_tsc(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user;
    return fl_pre_as(call, slot, 1);
}

/* A driver launch that succeeded: its kernel's arguments after the params, then the record finished. */
static __attribute__((noinline)) void fl_post_launch(const fl_plan *pl, const cushim_call *call, fl_rec *r,
                                                     uint16_t f)
{
    fl_thread *t = fl_me;
    if (t != NULL && !t->sink) {
        fl_func_args(t, pl, call, r, f);   /* finishes the record */
        return;
    }
    atomic_store_explicit(&r->flags, f, memory_order_release);
}

static inline __attribute__((always_inline)) void fl_post_as(cushim_call *call, uint64_t *slot, int tsc)
{
    fl_rec *r = (fl_rec *)(uintptr_t)*slot;
    uint64_t tx = tsc ? fl_rdtsc() : call->t_exit_ns;
    const fl_plan *pl;
    uint16_t f;
    /* overwritten meanwhile (a ring of n calls wrapped inside this one): nothing to finish */
    if (r == NULL || atomic_load_explicit(&r->seq, memory_order_relaxed) != call->seq)
        return;
    pl = &fl_plans[call->api_id];
    f = (uint16_t)(atomic_load_explicit(&r->flags, memory_order_relaxed) | FL_R_DONE);
    if (call->flags & CUSHIM_CALL_SKIPPED)
        f |= FL_R_SKIPPED;
    r->t_exit = tx;
    if (pl->status) {
        int32_t res = *(const int32_t *)call->retval;
        r->result = res;
        if (__builtin_expect(res != 0, 0)) {
            atomic_store_explicit(&r->flags, f, memory_order_release);
            fl_event_error(call, r);
            return;
        }
    }
    if (__builtin_expect(pl->launch, 0) && !(f & FL_R_SKIPPED)) {
        fl_post_launch(pl, call, r, f);
        return;
    }
    atomic_store_explicit(&r->flags, f, memory_order_release);
}

static void fl_post(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user;
    fl_post_as(call, slot, 0);
}

static void fl_post_tsc(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user;
    fl_post_as(call, slot, 1);
}

/* The thread's first recorded call is a query: the thread made, then the query recorded. */
static __attribute__((noinline)) void fl_post_query_first(cushim_call *call, uint64_t te, int tsc);

/* A read-only query that does not wait (pl->post_only), hooked without a pre hook: its one record written at its
   return, complete, with one clock read - the TSC read here at its return ('tsc'), else the entry time the core
   took (CUSHIM_HOOK_TIME); no exit clock, no pre hook call (docs/plugins/flight.md "Cost"). Such a call cannot
   hang, and one that faults inside the driver is the one call the ring then lacks. Every call out of it is a tail
   call: no register saved on its way. */
static inline __attribute__((always_inline)) void fl_post_query_as(cushim_call *call, fl_thread *t, uint64_t te,
                                                                   int tsc)
{
    const fl_plan *pl;
    fl_slice *s;
    fl_rec *r;
    uint64_t k, word;
    uint16_t f;
    pl = &fl_plans[call->api_id];
    s = t->slice;
    k = atomic_load_explicit(&s->head, memory_order_relaxed);
    r = fl_rec_at(s, t->mask, k);
    f = FL_R_DONE | FL_R_UNTIMED | ((call->flags & CUSHIM_CALL_SKIPPED) ? FL_R_SKIPPED : 0);
    atomic_store_explicit(&r->seq, 0, memory_order_relaxed);
    atomic_store_explicit(&s->head, k + 1, memory_order_release);
    __atomic_store_n(&r->t_enter, te, __ATOMIC_RELAXED);
    r->t_exit = te;
    __atomic_store_n(&r->tid, call->tid, __ATOMIC_RELAXED);
    __atomic_store_n(&r->api_id, call->api_id, __ATOMIC_RELAXED);
    r->result = pl->status ? *(const int32_t *)call->retval : 0;
    /* flags (done), params_len, args_len (0), depth, reserved: one store */
    word = pl->head_word | f | (uint64_t)(call->depth < 255 ? call->depth : 255) << 48;
    __builtin_memcpy((char *)r + offsetof(fl_rec, flags), &word, sizeof word);
    fl_copy((unsigned char *)(r + 1), call->params, pl->params_len);
    atomic_store_explicit(&r->seq, call->seq, memory_order_release);
    if (__builtin_expect(r->result != 0, 0))
        fl_event_error(call, r);
    else if (tsc && __builtin_expect((k & (FL_CAL_EVERY - 1)) == 0, 0))
        fl_cal_slice(s);
}

static __attribute__((noinline)) void fl_post_query_first(cushim_call *call, uint64_t te, int tsc)
{
    fl_thread *t = fl_thread_new(te);
    if (t == NULL)
        return;
    if (tsc)
        fl_post_query_as(call, t, te, 1);
    else
        fl_post_query_as(call, t, te, 0);
}

static void fl_post_query(cushim_call *call, void *user, uint64_t *slot)
{
    fl_thread *t = fl_me;
    uint64_t te = call->t_enter_ns;
    (void)user;
    (void)slot;
    if (__builtin_expect(te == 0, 0))
        te = fl_host->now_ns();
    if (__builtin_expect(t == NULL, 0)) {
        fl_post_query_first(call, te, 0);
        return;
    }
    fl_post_query_as(call, t, te, 0);
}

static void fl_post_query_tsc(cushim_call *call, void *user, uint64_t *slot)
{
    fl_thread *t = fl_me;
    uint64_t te = fl_rdtsc();
    (void)user;
    (void)slot;
    if (__builtin_expect(t == NULL, 0)) {
        fl_post_query_first(call, te, 1);
        return;
    }
    fl_post_query_as(call, t, te, 1);
}

/* ---- init ---- */

static int fl_plan_build(const cushim_host *h, fl_plan **out)
{
    uint32_t limit = h->api_id_limit();
    fl_plan *p = calloc(limit ? limit : 1, sizeof *p);
    if (p == NULL)
        return -1;
    for (uint32_t i = 0; i < h->api_count(); i++) {
        const cushim_api_info *a = h->api_at(i);
        fl_plan *pl;
        fl_shape sh;
        if (a == NULL || a->id >= limit)
            continue;
        pl = &p[a->id];
        pl->params_len = (uint16_t)(a->params_size < FL_REC_DATA ? a->params_size : FL_REC_DATA);
        pl->trunc = a->params_size > FL_REC_DATA;
        pl->head_word = (uint64_t)(pl->trunc ? FL_R_TRUNC : 0) | (uint64_t)pl->params_len << 16;
        pl->status = cushim_ret_is_status(a->ret_kind) && a->ret_size == 4;
        pl->sync = (a->categories & CUSHIM_CAT_SYNC) != 0;
        fl_shape_of(a, h->api_param, &sh);
        if (sh.driver_launch) {
            pl->launch = 1;
            pl->func_off = h->api_param(a, (uint32_t)sh.func)->offset;
            pl->args_off = h->api_param(a, (uint32_t)sh.args)->offset;
        }
        pl->post_only = (a->categories & CUSHIM_CAT_QUERY) && !pl->sync && !pl->launch;
    }
    *out = p;
    return 0;
}

/* A directory option made absolute now (the program may change its working directory later). */
static char *fl_abs_dir(const char *d)
{
    char cwd[512];
    size_t n = strlen(d);
    char *out;
    if (d[0] == '/' || d[0] == '\0' || getcwd(cwd, sizeof cwd) == NULL)
        out = strdup(d);
    else if ((out = malloc(strlen(cwd) + n + 2)) != NULL)
        sprintf(out, "%s/%s", cwd, d);
    return out;
}

static int fl_opt_range(cushim_plugin *self, const char *name, int64_t lo, int64_t hi, uint32_t *out)
{
    int64_t v = fl_host->opt_int(self, name);
    if (v < lo || v > hi) {
        fl_host->log(self, CUSHIM_LOG_ERROR, "%s=%lld: from %lld to %lld", name, (long long)v, (long long)lo,
                     (long long)hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* The filter's APIs hooked in two groups, first in and last out (the record sees what every other plugin did):
   pre + post with both clocks on most (fl_pre, fl_post), the exit alone with the entry clock on read-only
   queries that do not wait (fl_post_query: one hook call and one clock read a query). */
static int fl_hooks_on(const cushim_host *host, cushim_plugin *self, const char *filter, const fl_plan *plans)
{
    uint32_t limit = host->api_id_limit();
    uint32_t *ids = malloc((size_t)(limit ? limit : 1) * sizeof *ids);
    idsel sel[2] = {{0}, {0}};
    char err[256] = "";
    cushim_hook_spec spec;
    int n, rc = -1;
    if (ids == NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        return -1;
    }
    n = host->api_select(filter, ids, limit, err, sizeof err);
    if (n <= 0) {
        host->log(self, CUSHIM_LOG_ERROR, "filter=%s: %s", filter,
                  n == 0 || n == CUSHIM_ENOMATCH ? "matches no API of this build" : "not a valid selector");
        goto out;
    }
    for (int i = 0; i < n && (uint32_t)i < limit; i++) {
        int k;
        if (ids[i] >= limit)
            continue;
        k = plans[ids[i]].post_only ? 1 : 0;
        if (idsel_add(&sel[k], ids[i]) != 0) {
            host->log(self, CUSHIM_LOG_ERROR, "out of memory");
            goto out;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (sel[k].s == NULL)
            continue;
        memset(&spec, 0, sizeof spec);
        spec.size = sizeof spec;
        /* the TSC's hooks read their clock themselves; the host's are given the host's */
        spec.flags = fl_st.tsc ? 0u : k == 0 ? CUSHIM_HOOK_TIME | CUSHIM_HOOK_EXIT_TIME : CUSHIM_HOOK_TIME;
        spec.select = sel[k].s;
        spec.priority = -1000000;
        spec.pre = k != 0 ? NULL : fl_st.tsc ? fl_pre_tsc : fl_pre;
        spec.post = k == 0 ? (fl_st.tsc ? fl_post_tsc : fl_post) : fl_st.tsc ? fl_post_query_tsc : fl_post_query;
        if (host->hooks_add(self, &spec, k == 0 ? &fl_st.group : &fl_st.query_group) != CUSHIM_OK) {
            host->log(self, CUSHIM_LOG_ERROR, "filter=%s: the host refused its hooks", filter);
            fl_hooks_off();
            goto out;
        }
        if (k == 1)
            fl_st.have_query = 1;
    }
    rc = 0;
out:
    idsel_free(&sel[0]);
    idsel_free(&sel[1]);
    free(ids);
    return rc;
}

static int fl_init(const cushim_host *host, cushim_plugin *self)
{
    fl_event_config ec;
    cushim_hook_spec spec;
    fl_plan *plans;
    const char *filter, *on, *sig, *dd, *clk;
    char why[300];
    if (fl_host != NULL) {
        host->log(self, CUSHIM_LOG_ERROR, "the flight recorder is loaded once per process");
        return -1;
    }
    if (!CUSHIM_HOST_HAS(host, alloc_role)) {
        host->log(self, CUSHIM_LOG_ERROR, "this shim has no allocation roles (SDK ABI 1.0 or later needed)");
        return -1;
    }
    if (host->api_id_limit() > 65535) {
        host->log(self, CUSHIM_LOG_ERROR, "API ids past 65535: the allocation table keeps 16 bits");
        return -1;
    }
    fl_host = host;
    fl_self = self;
    memset(&ec, 0, sizeof ec);
    if (fl_opt_range(self, "n", 16, FL_N_MAX, &fl_st.cfg.n) != 0 ||
        fl_opt_range(self, "threads", 1, FL_SLICES_MAX, &fl_st.cfg.nslices) != 0 ||
        fl_opt_range(self, "allocs", 16, 1 << 22, &fl_st.cfg.nallocs) != 0 ||
        fl_opt_range(self, "funcs", 16, 1 << 20, &fl_st.cfg.nfuncs) != 0 ||
        fl_opt_range(self, "dumps", 0, 1000000, &ec.max_dumps) != 0)
        goto fail;
    fl_st.cfg.nfreed = 1024;
    fl_st.dir = fl_abs_dir(host->opt_string(self, "dir"));
    if (fl_st.dir == NULL)
        goto fail;
    for (size_t n = strlen(fl_st.dir); n > 1 && fl_st.dir[n - 1] == '/'; n--)
        fl_st.dir[n - 1] = '\0';
    if (fl_st.dir[0] == '\0' || strlen(fl_st.dir) > 300) {
        host->log(self, CUSHIM_LOG_ERROR, "dir='%.40s': a directory (at most 300 bytes) expected", fl_st.dir);
        goto fail;
    }
    fl_st.cfg.dir = fl_st.dir;
    fl_st.cfg.cuda_version = host->cuda_version;
    fl_st.cfg.api_id_limit = host->api_id_limit();
    fl_st.cfg.host_version = host->version();
    fl_st.keep = host->opt_bool(self, "keep");
    clk = host->opt_string(self, "clock");
    if (tsc_choose(clk, &fl_st.tsc, why, sizeof why) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "%s", why);
        goto fail;
    }
    on = host->opt_string(self, "on_error");
    ec.on_error = strcmp(on, "sticky") == 0 ? FL_ON_STICKY : strcmp(on, "any") == 0 ? FL_ON_ANY
                : strcmp(on, "off") == 0    ? FL_ON_OFF
                                            : -1;
    if (ec.on_error < 0) {
        host->log(self, CUSHIM_LOG_ERROR, "on_error=%s: sticky, any or off", on);
        goto fail;
    }
    ec.hang_s = host->opt_double(self, "hang");
    if (!(ec.hang_s >= 0 && ec.hang_s < 1e6)) {
        host->log(self, CUSHIM_LOG_ERROR, "hang=%g: seconds, 0 (no watchdog) or more", ec.hang_s);
        goto fail;
    }
    sig = host->opt_string(self, "signal");
    ec.request_sig = sig[0] == '\0' || strcmp(sig, "off") == 0 ? 0
                   : strcmp(sig, "USR2") == 0 || strcmp(sig, "SIGUSR2") == 0 ? 12
                   : strcmp(sig, "USR1") == 0 || strcmp(sig, "SIGUSR1") == 0 ? 10
                                                                           : -1;
    if (ec.request_sig < 0) {
        host->log(self, CUSHIM_LOG_ERROR, "signal=%s: USR2, USR1 or off", sig);
        goto fail;
    }
    ec.signals = host->opt_bool(self, "signals");
    dd = host->opt_string(self, "dump_dir");
    ec.dump_dir = dd[0] != '\0' ? fl_abs_dir(dd) : NULL;
    if (fl_event_init(host, &ec, why, sizeof why) != 0) {
        host->log(self, CUSHIM_LOG_ERROR, "%s", why);
        goto fail;
    }
    if (fl_plan_build(host, &plans) != 0 || fl_func_init(host) != 0 ||
        host->tls_create(self, fl_thread_end, &fl_st.tls_key) != CUSHIM_OK) {
        host->log(self, CUSHIM_LOG_ERROR, "out of memory");
        goto fail;
    }
    fl_plans = plans;
    filter = host->opt_string(self, "filter");
    if (fl_hooks_on(host, self, filter[0] != '\0' ? filter : "all", plans) != 0)
        goto fail;
    if (fl_alloc_init(host, self, &fl_st.alloc_group) == 0)
        fl_st.have_alloc = 1;
    memset(&spec, 0, sizeof spec);
    spec.size = sizeof spec;
    spec.select = "cuModuleUnload,cuLibraryUnload";
    spec.post = fl_func_unloaded;
    fl_st.have_unload = host->hooks_add(self, &spec, &fl_st.unload_group) == CUSHIM_OK;
    host->plugin_set_data(self, &fl_st);
    return 0;
fail:
    fl_host = NULL;
    return -1;
}

static void fl_flush(cushim_plugin *self)
{
    (void)self;
    fl_event_stop();
    if (fl_ring_now() == NULL)
        return;
    fl_ring_finish(&fl_st.ring, !fl_st.keep);
}

static void fl_fork_child(cushim_plugin *self)
{
    fl_thread *t = fl_me;
    (void)self;
    if (t != NULL) {
        fl_host->tls_set(fl_st.tls_key, NULL);
        fl_me = NULL;
        free(t);
    }
    if (atomic_load(&fl_st.ready) == 1) {
        /* the parent's file is the parent's: the child's stores (a hook of a call the fork happened inside)
           land in private memory from here; the child makes its own file at its next call */
        fl_ring_forget(&fl_st.ring);
    }
    pthread_mutex_init(&fl_st.lock, NULL);
    atomic_store(&fl_st.lost_said, 0);
    fl_func_fork_child();
    fl_alloc_fork_child();
    fl_event_fork_child();
    atomic_store(&fl_st.ready, 0);
}

static const cushim_option fl_options[] = {
    {"n", CUSHIM_OPT_INT, "1024", "calls kept per thread (rounded up to a power of two; 256 bytes each)"},
    {"dir", CUSHIM_OPT_STRING, "/dev/shm", "the directory of the ring file cushim-flight-<pid>-<start>.ring"},
    {"filter", CUSHIM_OPT_STRING, "all", "the APIs recorded (a selector)"},
    {"threads", CUSHIM_OPT_INT, "256", "threads recorded at once (a slice each; an ended thread's is reused)"},
    {"allocs", CUSHIM_OPT_INT, "16384", "live allocations tracked for pointer attribution"},
    {"funcs", CUSHIM_OPT_INT, "2048", "kernels described (name, argument layout)"},
    {"on_error", CUSHIM_OPT_STRING, "sticky", "a dump at the first call returning a sticky error ('sticky'), at "
                                              "every call returning an error ('any', up to 'dumps'), or none ('off')"},
    {"hang", CUSHIM_OPT_DOUBLE, "0", "a dump when a synchronising call is blocked longer than this many seconds "
                                     "(0: no watchdog)"},
    {"signal", CUSHIM_OPT_STRING, "USR2", "a dump on each delivery of this signal (USR2, USR1, off), when the "
                                          "program leaves it at its default"},
    {"signals", CUSHIM_OPT_BOOL, "true", "mark a fatal signal in the ring and say where it is"},
    {"dumps", CUSHIM_OPT_INT, "16", "dump files a process makes at most"},
    {"dump_dir", CUSHIM_OPT_STRING, "", "where dump files go (default: the ring's directory)"},
    {"keep", CUSHIM_OPT_BOOL, "false", "keep the ring file at a normal exit"},
    {"clock", CUSHIM_OPT_STRING, "auto", "the records' clock: 'tsc' (read in the hooks, converted to ns when the "
                                         "file is read), 'host' (the core's clock), 'auto' (tsc where the TSC is "
                                         "invariant and the kernel's clocksource)"},
    {NULL, 0, NULL, NULL},
};

static const cushim_plugin_def fl_def = {
    .size = sizeof(cushim_plugin_def),
    .abi_version = CUSHIM_ABI_VERSION,
    .name = "flight",
    .version = "0.1.0",
    .description = "an always-on flight recorder: the last calls of every thread in a file that outlives the "
                   "process, dumped on a sticky error, a fatal signal, a hang or a request",
    .options = fl_options,
    .init = fl_init,
    .flush = fl_flush,
    .fork_child = fl_fork_child,
};

CUSHIM_PLUGIN(fl_def)
