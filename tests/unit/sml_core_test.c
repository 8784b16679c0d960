/*
 * sml_core_test.c - the smlimit admission logic (plugins/smlimit/core.c) under a
 * simulated clock and a simulated GPU. The GPU runs each stream's kernels in
 * order (a kernel starts at max(submit, end of the previous one on its stream);
 * streams of one process run concurrently); a measurement reaches the limiter
 * 'poll' ns after the kernel ended, as from the plugin's polling thread, with
 * the start the plugin would compute (max(submit, previous observed end)). The
 * achieved share is the union of the true kernel intervals over a measurement
 * span after a warm-up, so it checks the whole loop, not the bookkeeping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"

#define MS 1000000ull
#define US 1000ull
#define MAXK 200000
#define MAXS 8

typedef struct kern {
    uint64_t submit, start, end;
    int stream, proc;
} kern;

typedef struct sim {
    kern k[MAXK];
    uint32_t nk;
    uint32_t observed;              /* kernels measured, in end order (see next_obs) */
    uint8_t seen[MAXK];
    uint64_t stream_end[2][MAXS];   /* true end of the last kernel per stream        */
    uint64_t obs_end[2][MAXS];      /* observed end of the last measured kernel       */
    uint64_t gpu_end;               /* serialised GPU (two processes): last end       */
    uint64_t last_end[2];           /* each process's last observed end (the region)  */
    int serial;                     /* 1: processes time-share the GPU (no overlap)   */
} sim;

static sim S;

static void sim_reset(int serial)
{
    memset(&S, 0, sizeof S);
    S.serial = serial;
}

static void sim_submit(int proc, int stream, uint64_t now, uint64_t dur)
{
    kern *k = &S.k[S.nk++];
    assert_true(S.nk < MAXK);
    k->submit = now;
    k->stream = stream;
    k->proc = proc;
    k->start = now > S.stream_end[proc][stream] ? now : S.stream_end[proc][stream];
    if (S.serial && S.gpu_end > k->start)
        k->start = S.gpu_end;
    k->end = k->start + dur;
    S.stream_end[proc][stream] = k->end;
    if (S.serial)
        S.gpu_end = k->end;
}

/* The unobserved kernel that ends first; -1 if none. */
static int sim_next_obs(void)
{
    int best = -1;
    for (uint32_t i = S.observed; i < S.nk; i++)
        if (!S.seen[i] && (best < 0 || S.k[i].end < S.k[best].end))
            best = (int)i;
    return best;
}

static void sim_observe(sml_limiter *l, int i, uint64_t now, int clip)
{
    kern *k = &S.k[i];
    uint64_t own = k->submit > S.obs_end[k->proc][k->stream] ? k->submit : S.obs_end[k->proc][k->stream];
    uint64_t start = own;
    /* as the plugin: no earlier than the last end another process reported */
    if (clip && S.last_end[1 - k->proc] > start)
        start = S.last_end[1 - k->proc];
    sml_complete_clipped(l, own, start, now, 1, now);
    S.obs_end[k->proc][k->stream] = now;
    S.last_end[k->proc] = now;
    S.seen[i] = 1;
    while (S.observed < S.nk && S.seen[S.observed])
        S.observed++;
}

/* Union of the true intervals of 'proc' (-1: all) within [a, b). */
static uint64_t sim_busy(int proc, uint64_t a, uint64_t b)
{
    uint64_t total = 0, cur_s = 0, cur_e = 0;
    int have = 0;
    /* kernels are submitted in time order per stream; sort by start (insertion into a copy) */
    static kern tmp[MAXK];
    uint32_t n = 0;
    for (uint32_t i = 0; i < S.nk; i++) {
        if (proc >= 0 && S.k[i].proc != proc)
            continue;
        uint64_t s = S.k[i].start < a ? a : S.k[i].start, e = S.k[i].end > b ? b : S.k[i].end;
        if (e <= s)
            continue;
        tmp[n] = S.k[i];
        tmp[n].start = s;
        tmp[n].end = e;
        n++;
    }
    for (uint32_t i = 1; i < n; i++)   /* nearly sorted already: insertion sort is cheap */
        for (uint32_t j = i; j > 0 && tmp[j - 1].start > tmp[j].start; j--) {
            kern t = tmp[j];
            tmp[j] = tmp[j - 1];
            tmp[j - 1] = t;
        }
    for (uint32_t i = 0; i < n; i++) {
        if (have && tmp[i].start <= cur_e) {
            if (tmp[i].end > cur_e)
                cur_e = tmp[i].end;
        } else {
            if (have)
                total += cur_e - cur_s;
            cur_s = tmp[i].start;
            cur_e = tmp[i].end;
            have = 1;
        }
    }
    if (have)
        total += cur_e - cur_s;
    return total;
}

/* A workload: one application thread launching kernels of 'dur' ns, round
   robin over 'nstreams', 'cost' ns of CPU per launch; active 'on' ns out of
   every 'period' ns (period 0: always). */
typedef struct load {
    uint64_t dur, cost, on, period;
    int nstreams;
} load;

typedef struct proc {
    sml_limiter l;
    load w;
    uint64_t next;                  /* next time the application acts      */
    int rr;
} proc;

static int proc_active(const proc *p, uint64_t t)
{
    return p->w.period == 0 || t % p->w.period < p->w.on;
}

/* Run nproc processes until 'end'; measurements arrive 'poll' ns late. */
static void sim_run(proc *ps, int nproc, uint64_t end, uint64_t poll, int clip)
{
    for (;;) {
        int who = -1, obs = sim_next_obs();
        uint64_t t = UINT64_MAX;
        for (int i = 0; i < nproc; i++)
            if (ps[i].next < t) {
                t = ps[i].next;
                who = i;
            }
        if (obs >= 0 && S.k[obs].end + poll <= t) {
            uint64_t now = S.k[obs].end + poll;
            if (now >= end)
                return;
            sim_observe(&ps[S.k[obs].proc].l, obs, now, clip);
            continue;
        }
        if (t >= end)
            return;
        proc *p = &ps[who];
        if (!proc_active(p, t)) {
            p->next = (t / p->w.period + 1) * p->w.period;
            continue;
        }
        uint64_t d = sml_admit(&p->l, t);
        if (d > 0) {
            p->next = t + d;
            continue;
        }
        sim_submit(who, p->rr, t, p->w.dur);
        p->rr = (p->rr + 1) % p->w.nstreams;
        p->next = t + p->w.cost;
    }
}

static double run_one(double share, load w, uint64_t poll)
{
    proc p;
    memset(&p, 0, sizeof p);
    sim_reset(0);
    sml_init(&p.l, share, 100 * MS, 0);
    p.w = w;
    sim_run(&p, 1, 4000 * MS, poll, 0);
    if (getenv("SML_DEBUG"))
        fprintf(stderr, "measured %.4f true %.4f admitted %llu delays %llu est %.0f\n",
                (double)p.l.busy_ns / (4000.0 * MS), (double)sim_busy(0, 0, 4000 * MS) / (4000.0 * MS),
                (unsigned long long)p.l.admitted, (unsigned long long)p.l.delays, p.l.est_ns);
    return (double)sim_busy(0, 1000 * MS, 4000 * MS) / (double)(3000 * MS);
}

static void check_share(double share, load w, uint64_t poll, double tol)
{
    double got = run_one(share, w, poll);
    if (got < share - tol || got > share + tol) {
        print_error("share %.2f, kernel %llu us, %d stream(s), poll %llu us: achieved %.4f\n", share,
                    (unsigned long long)(w.dur / US), w.nstreams, (unsigned long long)(poll / US), got);
        fail();
    }
}

/* 25/50/75 for large and small kernels, one and several streams: within the
   issue's 5 points, and in fact within 2. */
static void test_steady_shares(void **state)
{
    (void)state;
    static const double shares[] = {0.25, 0.50, 0.75};
    static const load loads[] = {
        {.dur = 1700 * US, .cost = 5 * US, .nstreams = 1},   /* big bf16 matmuls */
        {.dur = 60 * US, .cost = 5 * US, .nstreams = 1},     /* small kernels, launch-queue deep */
        {.dur = 800 * US, .cost = 4 * US, .nstreams = 4},    /* several streams overlapping */
    };
    for (size_t i = 0; i < sizeof shares / sizeof shares[0]; i++)
        for (size_t j = 0; j < sizeof loads / sizeof loads[0]; j++) {
            check_share(shares[i], loads[j], 0, 0.02);
            check_share(shares[i], loads[j], 20 * US, 0.05);
        }
}

/* A kernel longer than the window: the debt is repaid, the long-run share holds. */
static void test_long_kernels(void **state)
{
    (void)state;
    proc p;
    memset(&p, 0, sizeof p);
    sim_reset(0);
    sml_init(&p.l, 0.25, 100 * MS, 0);
    p.w = (load){.dur = 400 * MS, .cost = 5 * US, .nstreams = 1};
    sim_run(&p, 1, 40000 * MS, 0, 0);
    double got = (double)sim_busy(0, 0, 40000 * MS) / (double)(40000 * MS);
    assert_true(got > 0.20 && got < 0.30);
    /* never more than share * T + cap + one kernel in any stretch starting at a refill */
    assert_true(sim_busy(0, 0, 2000 * MS) <= 500 * MS + 25 * MS + 400 * MS);
}

/* Bursty load after idle time: the credit is bounded by one window. */
static void test_bursts_and_idle(void **state)
{
    (void)state;
    proc p;
    memset(&p, 0, sizeof p);
    sim_reset(0);
    sml_init(&p.l, 0.5, 100 * MS, 0);
    p.w = (load){.dur = 500 * US, .cost = 5 * US, .nstreams = 1, .on = 200 * MS, .period = 1000 * MS};
    sim_run(&p, 1, 10000 * MS, 0, 0);
    for (uint64_t c = 1; c < 10; c++) {
        uint64_t busy = sim_busy(0, c * 1000 * MS, (c + 1) * 1000 * MS);
        /* 200 ms active at 50%: 100 ms, plus at most the 50 ms cap (+ one kernel) */
        if (busy > 150 * MS + 500 * US || busy < 100 * MS) {
            print_error("cycle %llu: busy %llu us\n", (unsigned long long)c, (unsigned long long)(busy / US));
            fail();
        }
    }
    /* a long idle period earns no more than the cap */
    sml_limiter l;
    sml_init(&l, 0.3, 100 * MS, 0);
    sml_complete(&l, 0, 30 * MS, 1, 30 * MS);         /* spend the initial credit */
    uint64_t t = 3600000 * MS;                         /* an hour later */
    int admitted = 0;
    while (sml_admit(&l, t) == 0 && admitted < 1000) {
        sml_complete(&l, t + (uint64_t)admitted * MS, t + (uint64_t)(admitted + 1) * MS, 1, t);
        admitted++;
    }
    if (admitted < 29 || admitted > 31) {   /* cap = 30 ms = 30 kernels of 1 ms */
        print_error("admitted %d launches of 1 ms after an hour idle\n", admitted);
        fail();
    }
}

/* Two processes time-sharing the GPU at 30 and 70, each measuring its kernels
   clipped by the last completion seen in the shared region: throughput in the
   ratio 30:70 within 10%. */
static void test_two_processes(void **state)
{
    (void)state;
    proc ps[2];
    memset(ps, 0, sizeof ps);
    sim_reset(1);
    sml_init(&ps[0].l, 0.30, 100 * MS, 0);
    sml_init(&ps[1].l, 0.70, 100 * MS, 0);
    ps[0].w = (load){.dur = 1000 * US, .cost = 5 * US, .nstreams = 1};
    ps[1].w = (load){.dur = 1000 * US, .cost = 5 * US, .nstreams = 1};
    sim_run(ps, 2, 4000 * MS, 20 * US, 1);
    double a = (double)sim_busy(0, 1000 * MS, 4000 * MS), b = (double)sim_busy(1, 1000 * MS, 4000 * MS);
    double ratio = a / b, want = 30.0 / 70.0;
    if (ratio < want * 0.9 || ratio > want * 1.1) {
        print_error("30/70: busy %.0f / %.0f us, ratio %.3f (want %.3f)\n", a / 1e3, b / 1e3, ratio, want);
        fail();
    }
}

/* ---- two processes on a time-sliced GPU ------------------------------------
   Without MPS a GPU runs one process's context at a time. Measured on an H200
   (tests/gpu/smlimit/slice_probe.cu, docs/isolation.md): while two processes have
   work the GPU switches between them every ~2.08 ms, preempting a running kernel;
   new work from an idle process preempts the running one at once when its slice
   is over; and each switch leaves the GPU idle ~150 us (a light kernel; more when
   much state is saved). Simulated in 1 us ticks: a context runs until its queue is
   empty or its slice is over, a kernel progresses only while its context runs,
   kernel lengths vary by +-10%. Each process measures as the plugin does (poll.c):
   a launch over [max(submit, its previous finish seen, the other's last finish
   seen), finish + poll]. With 'turns' (the option turns=1, smlimit.c), a process
   that starts a burst with nothing pending takes the turn first, waiting for the
   other's burst to end (at most 100 ms), and gives it back when idle. The truth
   is each process's GPU time over [1 s, 4 s). */

#define TS_MAXK 8192

typedef struct ts_kern {
    uint64_t submit, end, left;
} ts_kern;

typedef struct ts_proc {
    sml_limiter l;
    ts_kern k[TS_MAXK];             /* a ring: the counters below run on             */
    uint32_t n, head, obs;          /* submitted, first unfinished, first unobserved */
    uint64_t next, prev_seen, run;
} ts_proc;

static ts_proc TS[2];

/* GPU time of process 0 over process 1's, at limits s0 and s1 */
static double ts_ratio(double s0, double s1, uint64_t dur, uint64_t slice, uint64_t sw, uint64_t poll, int turns)
{
    const uint64_t end = 4000 * MS, m0 = 1000 * MS;
    int cur = -1, holder = -1;
    uint64_t wait_since[2] = {0, 0};
    uint64_t slice_end = 0, idle_until = 0, rng = 42;
    memset(TS, 0, sizeof TS);
    sml_init(&TS[0].l, s0, 100 * MS, 0);
    sml_init(&TS[1].l, s1, 100 * MS, 0);
    TS[1].next = 300 * US;   /* not in lockstep */
    for (uint64_t t = 0; t < end; t += US) {
        for (int p = 0; p < 2; p++) {   /* each process's poller */
            ts_proc *q = &TS[p];
            while (q->obs < q->head && q->k[q->obs % TS_MAXK].end + poll <= t) {
                ts_kern *k = &q->k[q->obs++ % TS_MAXK];
                uint64_t seen = k->end + poll, own = k->submit > q->prev_seen ? k->submit : q->prev_seen;
                uint64_t st = TS[1 - p].prev_seen > own ? TS[1 - p].prev_seen : own;
                sml_complete_clipped(&q->l, own, st, seen, 1, seen);
                q->prev_seen = seen;
                if (q->obs == q->n && holder == p)
                    holder = -1;   /* idle: the turn is given back */
            }
        }
        for (int p = 0; p < 2; p++) {   /* each application thread */
            ts_proc *q = &TS[p];
            uint64_t d;
            if (q->next > t)
                continue;
            if (turns && q->obs == q->n && holder != p) {   /* a burst starts: take the turn */
                if (holder >= 0) {
                    if (!wait_since[p])
                        wait_since[p] = t;
                    if (t - wait_since[p] < 100 * MS) {
                        q->next = t + 50 * US;
                        continue;
                    }
                } else {
                    holder = p;
                }
                wait_since[p] = 0;
            }
            if ((d = sml_admit(&q->l, t)) > 0) {
                q->next = t + d;
                continue;
            }
            assert_true(q->n - q->obs < TS_MAXK);
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            q->k[q->n++ % TS_MAXK] = (ts_kern){.submit = t,
                                               .left = dur - dur / 10 + (rng >> 33) % (dur / 5 / US + 1) * US};
            q->next = t + 5 * US;
        }
        /* the GPU: switch when the running context is out of work or its slice is over */
        int other = cur < 0 ? 0 : 1 - cur;
        int cur_has = cur >= 0 && TS[cur].head < TS[cur].n, other_has = TS[other].head < TS[other].n;
        if (cur < 0 && !other_has && TS[1].head < TS[1].n)
            other = 1, other_has = 1;
        if (other_has && (!cur_has || t >= slice_end)) {
            if (cur >= 0 && cur != other)
                idle_until = t + sw;
            cur = other;
            slice_end = t + sw + slice;
            cur_has = 1;
        }
        if (cur_has && t >= idle_until) {
            ts_proc *q = &TS[cur];
            ts_kern *k = &q->k[q->head % TS_MAXK];
            if (t >= m0)
                q->run += US;
            if ((k->left -= US) == 0) {
                k->end = t + US;
                q->head++;
            }
        }
    }
    if (getenv("SML_DEBUG"))
        fprintf(stderr, "slice %llu us, switch %llu us, kernel %llu us%s: GPU time %.4f / %.4f, counted %.4f / %.4f\n",
                (unsigned long long)(slice / US), (unsigned long long)(sw / US), (unsigned long long)(dur / US),
                turns ? ", turns" : "",
                TS[0].run / 3e9, TS[1].run / 3e9, TS[0].l.busy_ns / 4e9, TS[1].l.busy_ns / 4e9);
    return (double)TS[0].run / (double)TS[1].run;
}

/* 30/70 on a time-sliced GPU: the GPU time in that ratio within 10% for kernels
   shorter than, near and longer than the slice; with the H200's slice and a
   150 us switch, for kernels of 50 us to 8 ms. The switch's idle time lands in
   the interval of the process switched to, the same amount for both: the
   smaller share loses more of its part (at 300 us and 8 ms kernels the ratio is
   0.36; the GPU check read 0.367 for bf16 matmuls, docs/isolation.md). */
static void test_two_processes_timesliced(void **state)
{
    (void)state;
    static const uint64_t slices[] = {1000 * US, 2000 * US, 4000 * US};
    static const uint64_t durs[] = {200 * US, 1700 * US, 5000 * US};
    static const uint64_t h200[] = {50 * US, 200 * US, 800 * US, 1650 * US, 3000 * US, 8000 * US};
    const double want = 30.0 / 70.0;
    for (size_t i = 0; i < sizeof slices / sizeof slices[0] + 1; i++)
        for (size_t j = 0; j < (i < 3 ? 3 : 6); j++) {
            uint64_t sl = i < 3 ? slices[i] : 2080 * US, du = i < 3 ? durs[j] : h200[j], sw = i < 3 ? 0 : 150 * US;
            double got = ts_ratio(0.30, 0.70, du, sl, sw, 20 * US, 0);
            if (got < want * 0.9 || got > want * 1.1) {
                print_error("slice %llu us, switch %llu us, kernel %llu us: ratio %.3f, want %.3f\n",
                            (unsigned long long)(sl / US), (unsigned long long)(sw / US),
                            (unsigned long long)(du / US), got, want);
                fail();
            }
        }
    /* the switch's idle time costs the smaller share more: a ratio below the target */
    assert_true(ts_ratio(0.30, 0.70, 8000 * US, 2080 * US, 300 * US, 20 * US, 0) < want * 0.9);
    /* with turns the bursts do not overlap: within 5% even at 300 us a switch, and the GPU
       loses less to switching (both processes together get more) */
    for (size_t j = 0; j < sizeof h200 / sizeof h200[0]; j++) {
        double got = ts_ratio(0.30, 0.70, h200[j], 2080 * US, 300 * US, 20 * US, 1);
        double both = (double)(TS[0].run + TS[1].run);
        if (got < want * 0.95 || got > want * 1.05) {
            print_error("turns, kernel %llu us: ratio %.3f, want %.3f\n", (unsigned long long)(h200[j] / US), got,
                        want);
            fail();
        }
        ts_ratio(0.30, 0.70, h200[j], 2080 * US, 300 * US, 20 * US, 0);
        assert_true(both > (double)(TS[0].run + TS[1].run));
    }
}

/* The union of overlapping intervals, in any order, and the bounded set. */
static void test_union(void **state)
{
    (void)state;
    sml_limiter l;
    sml_init(&l, 1.0, 100 * MS, 0);
    assert_int_equal(sml_union_add(&l, 10, 20), 10);
    assert_int_equal(sml_union_add(&l, 30, 40), 10);
    assert_int_equal(sml_union_add(&l, 15, 35), 10);   /* fills the gap 20..30 */
    assert_int_equal(sml_union_add(&l, 0, 50), 20);    /* 0..10 and 40..50 */
    assert_int_equal(l.niv, 1);
    assert_int_equal(sml_union_add(&l, 5, 45), 0);
    assert_int_equal(sml_union_add(&l, 60, 60), 0);
    assert_int_equal(sml_union_add(&l, 70, 60), 0);
    for (uint64_t i = 0; i < 3 * SML_MAX_IV; i++)
        assert_int_equal(sml_union_add(&l, 1000 + 10 * i, 1005 + 10 * i), 5);
    assert_true(l.niv <= SML_MAX_IV);
    assert_int_equal(sml_union_add(&l, 1000 + 10 * (3 * SML_MAX_IV - 1), 1005 + 10 * (3 * SML_MAX_IV - 1)), 0);
}

/* Admission details: one probe launch before the first measurement, waits
   bounded by the window, shares clamped, the clock going back harmless. */
static void test_admission(void **state)
{
    (void)state;
    sml_limiter l;
    sml_init(&l, 0.5, 10 * MS, 1000);
    assert_int_equal(sml_admit(&l, 1000), 0);
    uint64_t d = sml_admit(&l, 1000);                  /* unmeasured: one at a time */
    assert_true(d >= 20 * US && d <= 10 * MS);
    sml_complete(&l, 1000, 1000 + 1 * MS, 1, 1000 + 1 * MS);
    assert_true(l.est_ns > 0.99e6 && l.est_ns < 1.01e6);
    assert_int_equal(l.outstanding, 0);
    /* 5 ms cap - 1 ms = 4 ms: four more 1 ms launches fit, the fifth waits */
    for (int i = 0; i < 4; i++)
        assert_int_equal(sml_admit(&l, 1000 + 1 * MS), 0);
    d = sml_admit(&l, 1000 + 1 * MS);
    assert_true(d > 0 && d <= 10 * MS);
    /* a launch taken back (another process's turn) is neither outstanding nor counted */
    uint64_t out = l.outstanding, adm = l.admitted;
    sml_unadmit(&l);
    assert_int_equal(l.outstanding, out - 1);
    assert_int_equal(l.admitted, adm - 1);
    sml_forget(&l, 10);
    assert_int_equal(l.outstanding, 0);
    sml_unadmit(&l);   /* never below zero */
    assert_int_equal(l.outstanding, 0);
    /* the clock going back accrues nothing and breaks nothing */
    int64_t before = l.tokens;
    assert_int_equal(sml_admit(&l, 5), 0);
    assert_true(l.tokens == before);
    /* a huge measured interval is capped at the debt bound; waits stay bounded */
    sml_complete(&l, 0, UINT64_MAX / 2, 1, 2 * MS);
    assert_true(l.tokens == -l.debt_max);
    d = sml_admit(&l, 2 * MS);
    assert_true(d > 0 && d <= 10 * MS);
    sml_set_share(&l, 0.0, 3 * MS);
    assert_true(l.share > 0 && l.share < 0.01);
    sml_set_share(&l, 7.0, 3 * MS);
    assert_true(l.share == 1.0);
}

/* Weights and work conservation between processes on one device. */
/* clock_ref_mhz: the time share scaled by the full-load clock over the clock the work runs at */
static void test_clock_share(void **state)
{
    (void)state;
    assert_true(sml_clock_share(0.5, 0, 1800) == 0.5);       /* off */
    assert_true(sml_clock_share(0.5, 1455, 0) == 0.5);       /* no sample yet */
    assert_true(fabs(sml_clock_share(0.5, 1455, 1815) - 0.5 * 1455.0 / 1815.0) < 1e-12);
    assert_true(fabs(sml_clock_share(0.25, 1500, 1000) - 0.375) < 1e-12);   /* slower than full load: more time */
    assert_true(sml_clock_share(0.9, 2000, 1000) == 1.0);    /* never above 1 */
    assert_true(fabs(sml_clock_share(0.5, 100, 2000) - 0.125) < 1e-12);     /* factor at least 1/4 */
    assert_true(fabs(sml_clock_share(0.1, 2000, 100) - 0.4) < 1e-12);       /* factor at most 4 */
    /* a fixed point: a GPU whose clock rises as its time share falls still gets share x ref / clock */
    {
        double share = 0.5, t = share;
        for (int k = 0; k < 50; k++) {
            double mhz = 1455 + (1980 - 1455) * (1 - t);   /* a made-up clock curve */
            t = sml_clock_share(share, 1455, mhz);
        }
        assert_true(fabs(t * (1455 + (1980 - 1455) * (1 - t)) / 1455 - share) < 1e-6);
    }
}

static void test_weighted_share(void **state)
{
    (void)state;
    const double w2[] = {0.70}, busy[] = {0.70}, idle[] = {0.0};
    const double w3[] = {0.60, 0.60}, u3[] = {0.40, 0.0};
    /* alone, or limits adding up to at most 100: the limit itself */
    assert_true(sml_weighted_share(0.30, NULL, NULL, 0, 0, 0.05) == 0.30);
    assert_true(sml_weighted_share(0.30, w2, busy, 1, 0, 0.05) == 0.30);
    /* 60 + 60 + 60: scaled to a third each */
    double s = sml_weighted_share(0.60, w3, u3, 2, 0, 0.05);
    assert_true(s > 0.333 && s < 0.334);
    /* work conserving: a busy partner leaves nothing, an idle one its share less the slack */
    assert_true(sml_weighted_share(0.30, w2, busy, 1, 1, 0.05) == 0.30);
    s = sml_weighted_share(0.30, w2, idle, 1, 1, 0.05);
    assert_true(s > 0.949 && s < 0.951);
    /* never above 1; a partner's nonsense weight counts as none */
    const double wbad[] = {-3.0}, ubad[] = {0.0};
    assert_true(sml_weighted_share(0.90, w2, idle, 1, 1, 0.0) == 1.0);
    assert_true(sml_weighted_share(0.50, wbad, ubad, 1, 1, 0.0) == 0.50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union),
        cmocka_unit_test(test_admission),
        cmocka_unit_test(test_steady_shares),
        cmocka_unit_test(test_long_kernels),
        cmocka_unit_test(test_bursts_and_idle),
        cmocka_unit_test(test_two_processes),
        cmocka_unit_test(test_two_processes_timesliced),
        cmocka_unit_test(test_weighted_share),
        cmocka_unit_test(test_clock_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
