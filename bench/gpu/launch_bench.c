/*
 * launch_bench.c - cost of the shim on the two hottest driver paths.
 *
 * USAGE: launch_bench [LAUNCHES [GETCURRENT_CALLS]]   (defaults 200000, 10000000)
 *   BENCH_LABEL=name     label printed on the result line
 *   BENCH_HOOKS=1        register an empty pre and post hook on every driver API
 *                        (needs libcushim.so preloaded: cushim_host_get is looked
 *                        up with dlsym(RTLD_DEFAULT, ...))
 *   BENCH_CUPTI=1        subscribe an empty CUPTI callback to the whole driver API
 *                        domain (libcupti from BENCH_CUPTI_LIB, else libcupti.so.13)
 *   BENCH_HOOKS_TIME=1   the BENCH_HOOKS group with CUSHIM_HOOK_TIME (the core reads
 *                        the clock at entry); 2: the hooks the trace plugin registers, empty:
 *                        the same, but on cuCtxGetCurrent (a read-only query: the plugin
 *                        hooks its exit alone) the post hook alone
 *   BENCH_AB=N           then, in the same process, N blocks in ABBA order with the
 *                        configuration's addition on and off: the empty hooks added and
 *                        removed (BENCH_HOOKS), the CUPTI domain enabled and disabled
 *                        (BENCH_CUPTI), or recording toggled with SIGUSR2 (BENCH_AB_SIGNAL=1:
 *                        the trace plugin with toggle=USR2). Each block: BENCH_AB_CALLS
 *                        (200000) cuCtxGetCurrent calls and BENCH_AB_BURSTS (8) bursts of
 *                        256 launches, timed alone; BENCH_AB_GAP_MS (0) of sleep before each
 *                        block, so that work the previous block left to other threads (the
 *                        trace writer rendering its records) is done. Adds to the line: ab_pairs, and the
 *                        medians over the on/off pairs of the on block minus the off block
 *                        (ab_ctx_ns, ab_burst_ns per call) - the addition's cost measured
 *                        inside one process, free of the processes' spread
 *   BENCH_AB_VS=1        with BENCH_CUPTI=1 and the trace plugin preloaded with toggle=USR2, unhook and
 *                        paused: BENCH_AB's blocks (rounded down to cycles of eight, at least one) in cycles
 *                        none, trace, CUPTI, floor, floor, CUPTI, trace, none (a palindrome: a linear drift
 *                        cancels) - trace recording (its hooks in), the empty CUPTI callback and the floor of
 *                        any recorder (this program's own two TSC reads and one 64-byte record in a ring
 *                        around each call, as bench/cpu's 'floor', through the shim with no hook) in the same
 *                        process, each against the blocks with none of them. Adds ab_vs_cycles, the medians
 *                        over cycles of the added ns per call (ab_vs_{trace,cupti,floor}_{ctx_ns,burst_ns};
 *                        _lmed_ns: the median launch of as many bursts again, each launch timed alone) and
 *                        this process's ratios of those medians: trace / CUPTI (ab_vs_ratio_ctx,
 *                        ab_vs_ratio_burst, ab_vs_ratio_lmed), floor / CUPTI (ab_vs_floor_ratio_ctx,
 *                        ab_vs_floor_ratio_burst, ab_vs_floor_ratio_lmed;
 *                        nan where CUPTI added nothing measurable). The plugin must start paused:
 *                        the cycle's first block has neither. Paired, so a process that runs slower or faster
 *                        (its core, its neighbours) moves every side together
 *   BENCH_GATE=1         each timed burst of launches waits on the GPU behind a gate: a one-thread kernel
 *                        launched first (untimed) spins on a flag in mapped host memory until the burst is
 *                        timed, so the GPU runs nothing while the burst is issued and the burst's time is the
 *                        host's alone (without it the empty kernels run while later ones are issued, and the
 *                        driver's bookkeeping of finished work lands in the burst at random: +-200 ns)
 *
 * Measures the empty-kernel cuLaunchKernel rate (launches/s over LAUNCHES launches
 * on one stream, from the first launch to cuStreamSynchronize, plus the host issue
 * time per launch; once the stream's queue is full that loop runs at the GPU's rate), the
 * host issue time per launch in bursts of 256 launches each timed alone (a synchronize between
 * bursts, so no launch waits for room in the queue: the host's own cost of a launch), and the
 * cost of cuCtxGetCurrent (ns/call). Prints one line:
 *   label=L launches_per_s=X issue_ns=Y burst_ns=B ctxgetcurrent_ns=Z hooks=H
 * bench/gpu/run.sh runs it many times per configuration, interleaved.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cushim/cushim.h"
#include "floor.h"

static const char lb_ptx[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry lb_empty()\n"
    "{\n"
    "\tret;\n"
    "}\n"
    /* BENCH_GATE: spins until *flag >= want (a volatile load from mapped host memory each turn) */
    ".visible .entry lb_gate(.param .u64 flag, .param .u32 want)\n"
    "{\n"
    "\t.reg .u64 %rd<2>;\n"
    "\t.reg .u32 %r<3>;\n"
    "\t.reg .pred %p<2>;\n"
    "\tld.param.u64 %rd1, [flag];\n"
    "\tld.param.u32 %r2, [want];\n"
    "LB_SPIN:\n"
    "\tld.volatile.global.u32 %r1, [%rd1];\n"
    "\tsetp.lt.u32 %p1, %r1, %r2;\n"
    "\t@%p1 bra LB_SPIN;\n"
    "\tret;\n"
    "}\n";

/* BENCH_GATE: the gate kernel, its flag (host and device addresses) and the last value written. */
static CUfunction lb_gate_fn;
static volatile uint32_t *lb_gate_flag;
static CUdeviceptr lb_gate_dflag;
static uint32_t lb_gate_gen;

/* BENCH_GATE: before a burst, the gate kernel on 'stream' (the GPU waits there until lb_gate_open); nothing
   without BENCH_GATE. 0, or -1 when the launch failed. */
static int lb_gate_close(CUstream stream)
{
    uint32_t want = lb_gate_gen + 1;
    void *args[] = {&lb_gate_dflag, &want};
    if (lb_gate_fn == NULL)
        return 0;
    return cuLaunchKernel(lb_gate_fn, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL) == CUDA_SUCCESS ? 0 : -1;
}

/* After the burst is timed: the gate kernel returns. */
static void lb_gate_open(void)
{
    if (lb_gate_fn != NULL)
        __atomic_store_n(lb_gate_flag, ++lb_gate_gen, __ATOMIC_SEQ_CST);
}

#define LB_CHECK(call)                                                                   \
    do {                                                                                 \
        CUresult lb_r = (call);                                                          \
        if (lb_r != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "launch_bench: %s failed: %d\n", #call, (int)lb_r);           \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

static double lb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int lb_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)call;
    (void)user;
    (void)slot;
    return CUSHIM_CONTINUE;
}

static void lb_post(cushim_call *call, void *user, uint64_t *slot)
{
    (void)call;
    (void)user;
    (void)slot;
}

/* Registers lb_pre/lb_post on every driver API (one group, "lib:driver");
   returns how many APIs, or -1. */
static const cushim_host *lb_host;
static cushim_plugin *lb_self;
static uint64_t lb_group, lb_query_group;

/* The empty hook groups on every driver API: on (added) or off (removed). 0, or -1. */
static int lb_hooks_set(int on)
{
    const char *t = getenv("BENCH_HOOKS_TIME");
    int timed = t ? atoi(t) : 0;
    cushim_hook_spec spec = { .size = sizeof spec, .select = "lib:driver", .pre = lb_pre, .post = lb_post,
                              .flags = timed ? CUSHIM_HOOK_TIME : 0 };
    int r;
    if (!on) {
        r = lb_group ? lb_host->hooks_remove(lb_self, lb_group) : CUSHIM_OK;
        if (lb_query_group && lb_host->hooks_remove(lb_self, lb_query_group) != CUSHIM_OK)
            r = -1;
        lb_group = lb_query_group = 0;
        return r == CUSHIM_OK ? 0 : -1;
    }
    if (timed == 2) {   /* the trace plugin's shape */
        cushim_hook_spec q = spec;
        spec.select = "lib:driver & !name:cuCtxGetCurrent";
        q.select = "name:cuCtxGetCurrent";
        q.pre = NULL;
        q.flags = spec.flags;
        if ((r = lb_host->hooks_add(lb_self, &q, &lb_query_group)) != CUSHIM_OK) {
            fprintf(stderr, "launch_bench: adding the query hook failed: %d\n", r);
            return -1;
        }
    }
    if ((r = lb_host->hooks_add(lb_self, &spec, &lb_group)) != CUSHIM_OK) {
        fprintf(stderr, "launch_bench: adding the hooks failed: %d\n", r);
        return -1;
    }
    return 0;
}

static int lb_add_hooks(void)
{
    cushim_host_get_fn get = (cushim_host_get_fn)dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME);
    const cushim_host *host = get ? get(CUSHIM_ABI_VERSION) : NULL;
    if (host == NULL) {
        fprintf(stderr, "launch_bench: BENCH_HOOKS=1 but cushim_host_get not found: preload libcushim.so\n");
        return -1;
    }
    static const cushim_plugin_def def = { .size = sizeof def, .abi_version = CUSHIM_ABI_VERSION,
                                           .name = "launch-bench" };
    char err[256] = "";
    int r;
    lb_host = host;
    if ((r = host->plugin_register(&def, NULL, &lb_self, err, sizeof err)) != CUSHIM_OK) {
        fprintf(stderr, "launch_bench: registering the plugin failed: %d %s\n", r, err);
        return -1;
    }
    if (lb_hooks_set(1) != 0)
        return -1;
    return host->api_select("lib:driver", NULL, 0, NULL, 0);
}

/* CUPTI through dlopen, so the other configurations do not load it at all. */
typedef void (*lb_cupti_cb)(void *, int, uint32_t, const void *);

static void lb_cupti_empty(void *user, int domain, uint32_t cbid, const void *data)
{
    (void)user;
    (void)domain;
    (void)cbid;
    (void)data;
}

typedef int (*enable_fn)(uint32_t, void *, int);
static enable_fn lb_cupti_enable;   /* for BENCH_AB: the domain on and off */
static void *lb_cupti_sub;

static int lb_enable_cupti(void)
{
    const char *lib = getenv("BENCH_CUPTI_LIB");
    void *h = dlopen(lib && *lib ? lib : "libcupti.so.13", RTLD_NOW);
    if (!h)
        h = dlopen("libcupti.so", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "launch_bench: cannot load CUPTI: %s (set BENCH_CUPTI_LIB)\n", dlerror());
        return -1;
    }
    typedef int (*subscribe_fn)(void **, lb_cupti_cb, void *);
    subscribe_fn subscribe = (subscribe_fn)dlsym(h, "cuptiSubscribe");
    enable_fn enable = (enable_fn)dlsym(h, "cuptiEnableDomain");
    void *sub = NULL;
    if (!subscribe || !enable) {
        fprintf(stderr, "launch_bench: cuptiSubscribe/cuptiEnableDomain not found\n");
        return -1;
    }
    int r = subscribe(&sub, lb_cupti_empty, NULL);
    if (r == 0)
        r = enable(1, sub, 1 /* CUPTI_CB_DOMAIN_DRIVER_API */);
    if (r != 0) {
        fprintf(stderr, "launch_bench: CUPTI subscribe/enable failed: %d\n", r);
        return -1;
    }
    lb_cupti_enable = enable;
    lb_cupti_sub = sub;
    return 0;
}

#define LB_BURST 256   /* launches per timed burst: well under a stream's queue of pending launches */

static int lb_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double lb_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, lb_cmp);
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* BENCH_AB's switch: 1 = the configuration's addition on. 0, or -1. */
static int lb_ab_set(int on, int kind)
{
    switch (kind) {
    case 1: return lb_hooks_set(on);
    case 2: return lb_cupti_enable(on ? 1u : 0u, lb_cupti_sub, 1 /* CUPTI_CB_DOMAIN_DRIVER_API */) == 0 ? 0 : -1;
    case 3: return raise(SIGUSR2) == 0 ? 0 : -1;   /* the trace plugin's toggle: every delivery flips */
    default: return -1;
    }
}

/* The floor of any recorder of every call (BENCH_AB_VS; bench/floor.h) around the real driver's functions. */
static __attribute__((noinline)) CUresult lb_floor_ctx(CUcontext *cur)
{
    uint64_t t0 = bf_clock();
    CUresult r = cuCtxGetCurrent(cur);
    uint64_t t1 = bf_clock();
    bf_record(1, t0, t1, (uint32_t)r, (uint64_t)(uintptr_t)cur, (uint64_t)(uintptr_t)*cur);
    return r;
}

static __attribute__((noinline)) CUresult lb_floor_launch(CUfunction fn, CUstream stream)
{
    uint64_t t0 = bf_clock();
    CUresult r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL);
    uint64_t t1 = bf_clock();
    bf_record(2, t0, t1, (uint32_t)r, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)stream);
    return r;
}

/* TSC ticks per ns (lb_tsc_calibrate), for the per-launch times of lb_bursts. */
static double lb_tsc_per_ns;

static void lb_tsc_calibrate(void)
{
    struct timespec ts = {0, 50 * 1000000L};
    double t0 = lb_now();
    uint64_t c0 = bf_clock();
    nanosleep(&ts, NULL);
    uint64_t c1 = bf_clock();
    double t1 = lb_now();
    lb_tsc_per_ns = (double)(c1 - c0) / ((t1 - t0) * 1e9);
}

static int lb_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* 'bursts' bursts of LB_BURST empty launches (after the gate, when BENCH_GATE), each followed by a synchronize,
   so no launch waits for room in the queue; each launch through the floor recorder when 'floor'. With
   'burst_ns', each burst is timed whole: ns per launch of the host's issue cost. With 'med_ns' instead, each
   launch is timed alone with the TSC: the median launch's ns (the typical launch, where a burst's mean also
   carries the driver's occasional slow launch, which moves a block's mean by +-10%). 0, or -1 when a launch or
   synchronize failed. */
static int lb_bursts(CUfunction fn, CUstream stream, long bursts, int floor, double *burst_ns, double *med_ns)
{
    static uint32_t *ticks;
    static long cap;
    double acc = 0;
    long n = 0, errors = 0;
    if (med_ns != NULL && cap < bursts * LB_BURST) {
        free(ticks);
        cap = bursts * LB_BURST;
        if ((ticks = malloc((size_t)cap * sizeof *ticks)) == NULL) {
            cap = 0;
            return -1;
        }
    }
    for (long b = 0; b < bursts; b++) {
        if (lb_gate_close(stream) != 0)
            return -1;
        double b0 = lb_now();
        for (int i = 0; i < LB_BURST; i++) {
            uint64_t c0 = med_ns != NULL ? bf_clock() : 0;
            errors += (floor ? lb_floor_launch(fn, stream)
                             : cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL)) != CUDA_SUCCESS;
            if (med_ns != NULL) {
                uint64_t d = bf_clock() - c0;
                ticks[n++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
            }
        }
        acc += lb_now() - b0;
        lb_gate_open();   /* also after a failed launch: the synchronize would hang */
        errors += cuStreamSynchronize(stream) != CUDA_SUCCESS;
    }
    if (burst_ns != NULL)
        *burst_ns = bursts > 0 ? acc * 1e9 / ((double)bursts * LB_BURST) : 0.0;
    if (med_ns != NULL) {
        qsort(ticks, (size_t)n, sizeof *ticks, lb_cmp_u32);
        *med_ns = n > 0 && lb_tsc_per_ns > 0 ? (double)ticks[n / 2] / lb_tsc_per_ns : 0.0;
    }
    return errors ? -1 : 0;
}

/* One block: ns per cuCtxGetCurrent over 'calls', ns per launch over 'bursts' bursts of LB_BURST; each call
   through the floor recorder when 'floor'. 0, or -1. */
static int lb_block_as(CUfunction fn, CUstream stream, long calls, int bursts, int floor, double *ctx_ns,
                       double *burst_ns)
{
    CUcontext cur;
    double t0 = lb_now();
    long errors = 0;
    if (floor) {
        for (long i = 0; i < calls; i++)
            errors += lb_floor_ctx(&cur) != CUDA_SUCCESS;
    } else {
        for (long i = 0; i < calls; i++)
            errors += cuCtxGetCurrent(&cur) != CUDA_SUCCESS;
    }
    *ctx_ns = (lb_now() - t0) * 1e9 / (double)calls;
    return errors || lb_bursts(fn, stream, bursts, floor, burst_ns, NULL) != 0 ? -1 : 0;
}

static int lb_block(CUfunction fn, CUstream stream, long calls, int bursts, double *ctx_ns, double *burst_ns)
{
    return lb_block_as(fn, stream, calls, bursts, 0, ctx_ns, burst_ns);
}

/* BENCH_AB: 'blocks' blocks, on/off in ABBA order (on first, the state the process started in); prints
   ab_pairs, ab_ctx_ns and ab_burst_ns (medians over the pairs of on minus off). 0, or -1. */
static int lb_ab(CUfunction fn, CUstream stream, int blocks, int kind)
{
    const char *c = getenv("BENCH_AB_CALLS"), *b = getenv("BENCH_AB_BURSTS"), *g = getenv("BENCH_AB_GAP_MS");
    long calls = c && atol(c) > 0 ? atol(c) : 200000, gap_ms = g && atol(g) > 0 ? atol(g) : 0;
    int bursts = b && atoi(b) > 0 ? atoi(b) : 8, on = 1, pairs = 0;
    double *dctx = calloc((size_t)blocks, sizeof *dctx), *dlaunch = calloc((size_t)blocks, sizeof *dlaunch);
    double prev_ctx = 0, prev_burst = 0;
    if (dctx == NULL || dlaunch == NULL)
        return -1;
    for (int k = 0; k < blocks; k++) {
        double x, y;
        /* ABBA: on off off on on off ... - the state changes before blocks 1, 3, 5, ... */
        if (k % 2 == 1) {
            on = !on;
            if (lb_ab_set(on, kind) != 0) {
                fprintf(stderr, "launch_bench: BENCH_AB could not switch %s\n", on ? "on" : "off");
                return -1;
            }
        }
        if (gap_ms > 0) {
            struct timespec ts = {gap_ms / 1000, (gap_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (lb_block(fn, stream, calls, bursts, &x, &y) != 0) {
            fprintf(stderr, "launch_bench: a BENCH_AB block failed\n");
            return -1;
        }
        if (k % 2 == 1) {   /* a pair: this block and the one before, in opposite states */
            dctx[pairs] = on ? x - prev_ctx : prev_ctx - x;
            dlaunch[pairs] = on ? y - prev_burst : prev_burst - y;
            pairs++;
        }
        prev_ctx = x;
        prev_burst = y;
    }
    printf(" ab_pairs=%d ab_ctx_ns=%.2f ab_burst_ns=%.1f", pairs, lb_median(dctx, pairs), lb_median(dlaunch, pairs));
    free(dctx);
    free(dlaunch);
    return 0;
}

/* BENCH_AB_VS: the trace plugin, the CUPTI callback and the floor in one process (the header says how). 0, or -1. */
static int lb_ab_vs(CUfunction fn, CUstream stream, int blocks)
{
    static const char cycle[8] = {'O', 'T', 'C', 'F', 'F', 'C', 'T', 'O'};
    const char *c = getenv("BENCH_AB_CALLS"), *b = getenv("BENCH_AB_BURSTS"), *g = getenv("BENCH_AB_GAP_MS");
    long calls = c && atol(c) > 0 ? atol(c) : 200000, gap_ms = g && atol(g) > 0 ? atol(g) : 0;
    int bursts = b && atoi(b) > 0 ? atoi(b) : 8, cycles = blocks / 8 > 0 ? blocks / 8 : 1;
    int trace_on = 0, cupti_on = 0, rc = -1;   /* the plugin starts paused; the domain is switched off below */
    double *v = calloc((size_t)cycles * 9, sizeof *v);
    /* per cycle: added ns per call of trace, CUPTI, floor on cuCtxGetCurrent, on a launch (a burst's mean), on the
       median launch */
    double *add[3][3];
    if (v == NULL || lb_cupti_enable(0u, lb_cupti_sub, 1 /* CUPTI_CB_DOMAIN_DRIVER_API */) != 0) {
        fprintf(stderr, "launch_bench: BENCH_AB_VS: no memory, or the CUPTI domain could not be disabled\n");
        goto out;
    }
    for (int i = 0; i < 9; i++)
        add[i / 3][i % 3] = v + i * cycles;
    lb_tsc_calibrate();
    for (int k = 0; k < cycles; k++) {
        double sum[4][3] = {{0}};   /* none, trace, CUPTI, floor: ctx ns, burst ns, median launch ns, over the
                                       cycle's two blocks */
        for (int j = 0; j < 8; j++) {
            int want_t = cycle[j] == 'T', want_c = cycle[j] == 'C', want_f = cycle[j] == 'F';
            int which = want_t ? 1 : want_c ? 2 : want_f ? 3 : 0;
            double x, y, z;
            if (cupti_on && !want_c) {
                if (lb_cupti_enable(0u, lb_cupti_sub, 1) != 0) {
                    fprintf(stderr, "launch_bench: BENCH_AB_VS could not disable the CUPTI domain\n");
                    goto out;
                }
                cupti_on = 0;
            }
            if (trace_on != want_t) {
                if (raise(SIGUSR2) != 0) {   /* the trace plugin's toggle: every delivery flips */
                    fprintf(stderr, "launch_bench: BENCH_AB_VS could not raise SIGUSR2\n");
                    goto out;
                }
                trace_on = want_t;
            }
            if (want_c && !cupti_on) {
                if (lb_cupti_enable(1u, lb_cupti_sub, 1) != 0) {
                    fprintf(stderr, "launch_bench: BENCH_AB_VS could not enable the CUPTI domain\n");
                    goto out;
                }
                cupti_on = 1;
            }
            if (gap_ms > 0) {   /* the writer's rendering and the plugin's re-hooking settle */
                struct timespec ts = {gap_ms / 1000, (gap_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
            if (lb_block_as(fn, stream, calls, bursts, want_f, &x, &y) != 0 ||
                lb_bursts(fn, stream, bursts, want_f, NULL, &z) != 0) {
                fprintf(stderr, "launch_bench: a BENCH_AB_VS block failed\n");
                goto out;
            }
            sum[which][0] += x;
            sum[which][1] += y;
            sum[which][2] += z;
        }
        for (int m = 0; m < 3; m++)
            for (int w = 0; w < 3; w++)
                add[m][w][k] = (sum[w + 1][m] - sum[0][m]) / 2;
    }
    {
        double med[3][3];   /* trace, CUPTI, floor x ctx, burst, median launch */
        for (int m = 0; m < 3; m++)
            for (int w = 0; w < 3; w++)
                med[m][w] = lb_median(add[m][w], cycles);
        printf(" ab_vs_cycles=%d ab_vs_trace_ctx_ns=%.2f ab_vs_cupti_ctx_ns=%.2f ab_vs_floor_ctx_ns=%.2f"
               " ab_vs_trace_burst_ns=%.1f ab_vs_cupti_burst_ns=%.1f ab_vs_floor_burst_ns=%.1f"
               " ab_vs_ratio_ctx=%.3f ab_vs_ratio_burst=%.3f ab_vs_floor_ratio_ctx=%.3f ab_vs_floor_ratio_burst=%.3f",
               cycles, med[0][0], med[0][1], med[0][2], med[1][0], med[1][1], med[1][2],
               /* nan where CUPTI added nothing measurable: no ratio */
               med[0][1] > 0 ? med[0][0] / med[0][1] : NAN, med[1][1] > 0 ? med[1][0] / med[1][1] : NAN,
               med[0][1] > 0 ? med[0][2] / med[0][1] : NAN, med[1][1] > 0 ? med[1][2] / med[1][1] : NAN);
        printf(" ab_vs_trace_lmed_ns=%.1f ab_vs_cupti_lmed_ns=%.1f ab_vs_floor_lmed_ns=%.1f ab_vs_ratio_lmed=%.3f"
               " ab_vs_floor_ratio_lmed=%.3f", med[2][0], med[2][1], med[2][2],
               med[2][1] > 0 ? med[2][0] / med[2][1] : NAN, med[2][1] > 0 ? med[2][2] / med[2][1] : NAN);
    }
    rc = 0;
out:
    if (trace_on)
        raise(SIGUSR2);
    if (cupti_on)
        lb_cupti_enable(0u, lb_cupti_sub, 1);
    free(v);
    return rc;
}

int main(int argc, char **argv)
{
    long launches = argc > 1 ? atol(argv[1]) : 200000;
    long calls = argc > 2 ? atol(argv[2]) : 10000000;
    const char *label = getenv("BENCH_LABEL");
    const char *hooks_env = getenv("BENCH_HOOKS");
    const char *cupti_env = getenv("BENCH_CUPTI");
    int hooks = 0;

    if (hooks_env && atoi(hooks_env)) {
        hooks = lb_add_hooks();
        if (hooks <= 0)
            return 1;
    }
    if (cupti_env && atoi(cupti_env) && lb_enable_cupti() != 0)
        return 1;

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    LB_CHECK(cuInit(0));
    LB_CHECK(cuDeviceGet(&dev, 0));
    LB_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    LB_CHECK(cuCtxSetCurrent(ctx));
    LB_CHECK(cuModuleLoadData(&mod, lb_ptx));
    LB_CHECK(cuModuleGetFunction(&fn, mod, "lb_empty"));
    LB_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    {
        const char *g = getenv("BENCH_GATE");
        if (g && atoi(g)) {
            void *host = NULL;
            LB_CHECK(cuModuleGetFunction(&lb_gate_fn, mod, "lb_gate"));
            LB_CHECK(cuMemHostAlloc(&host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP));
            LB_CHECK(cuMemHostGetDevicePointer(&lb_gate_dflag, host, 0));
            lb_gate_flag = host;
            *lb_gate_flag = 0;
        }
    }

    for (int i = 0; i < 2000; i++)
        LB_CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
    LB_CHECK(cuStreamSynchronize(stream));

    long errors = 0;
    double t0 = lb_now();
    for (long i = 0; i < launches; i++)
        errors += cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL) != CUDA_SUCCESS;
    double t1 = lb_now();
    LB_CHECK(cuStreamSynchronize(stream));
    double t2 = lb_now();
    if (errors) {
        fprintf(stderr, "launch_bench: %ld launches failed\n", errors);
        return 1;
    }

    /* The same launches in bursts of LB_BURST, each timed alone and followed by a synchronize: the host's issue
       cost of a launch without the queue-full waits of the loop above (whose time per launch is the GPU's
       rate once the stream's queue is full). */
    double burst_ns = 0;
    if (lb_bursts(fn, stream, (launches + LB_BURST - 1) / LB_BURST, 0, &burst_ns, NULL) != 0) {
        fprintf(stderr, "launch_bench: a burst of launches failed\n");
        return 1;
    }

    CUcontext cur = NULL;
    for (long i = 0; i < 100000; i++)
        errors += cuCtxGetCurrent(&cur) != CUDA_SUCCESS;
    double t3 = lb_now();
    for (long i = 0; i < calls; i++)
        errors += cuCtxGetCurrent(&cur) != CUDA_SUCCESS;
    double t4 = lb_now();
    if (errors || cur != ctx) {
        fprintf(stderr, "launch_bench: cuCtxGetCurrent failed (%ld errors) or wrong context\n", errors);
        return 1;
    }

    printf("label=%s launches_per_s=%.0f issue_ns=%.1f burst_ns=%.1f ctxgetcurrent_ns=%.2f hooks=%d cupti=%d gate=%d",
           label ? label : "unnamed", (double)launches / (t2 - t0), (t1 - t0) * 1e9 / (double)launches,
           burst_ns, (t4 - t3) * 1e9 / (double)calls, hooks, cupti_env && atoi(cupti_env) ? 1 : 0,
           lb_gate_fn != NULL);
    {
        const char *ab = getenv("BENCH_AB"), *sig = getenv("BENCH_AB_SIGNAL"), *vs = getenv("BENCH_AB_VS");
        int kind = sig && atoi(sig) ? 3 : cupti_env && atoi(cupti_env) ? 2 : hooks > 0 ? 1 : 0;
        if (ab && atoi(ab) > 1 && vs && atoi(vs)) {
            if (!(cupti_env && atoi(cupti_env))) {
                fprintf(stderr, "launch_bench: BENCH_AB_VS needs BENCH_CUPTI=1 (and the trace plugin, toggle=USR2)\n");
                return 1;
            }
            if (bf_init() != 0 || lb_ab_vs(fn, stream, atoi(ab)) != 0)
                return 1;
        } else if (ab && atoi(ab) > 1) {
            if (kind == 0) {
                fprintf(stderr, "launch_bench: BENCH_AB needs BENCH_HOOKS, BENCH_CUPTI or BENCH_AB_SIGNAL\n");
                return 1;
            }
            if (lb_ab(fn, stream, atoi(ab) & ~1, kind) != 0)
                return 1;
        }
    }
    printf("\n");
    cuStreamDestroy(stream);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
