/*
 * core.c - the smlimit admission logic (core.h): a token bucket of measured GPU
 * time, the union of busy intervals, the learned GPU time per launch. Pure and
 * single-threaded: the plugin holds one lock per device around these calls.
 */
#include "core.h"

#include <string.h>

#define SML_EST_WEIGHT 0.25     /* EWMA weight of a new per-launch sample                */
#define SML_DEBT_WINDOWS 100    /* debt_max = this many windows of GPU time (>= 1 s)     */

static double sml_clamp_share(double share)
{
    if (!(share > 0.0))          /* also NaN */
        return 1e-3;
    return share > 1.0 ? 1.0 : share;
}

static void sml_accrue(sml_limiter *l, uint64_t now)
{
    if (now <= l->t_accrued)
        return;                  /* a clock that went back, or no time passed */
    double add = (double)(now - l->t_accrued) * l->share;
    l->t_accrued = now;
    if (add >= (double)(l->cap - l->tokens) || add > 9e18)
        l->tokens = l->cap;
    else
        l->tokens += (int64_t)add;
}

static void sml_set_cap(sml_limiter *l)
{
    double cap = l->share * (double)l->window_ns;
    l->cap = cap < 1.0 ? 1 : (int64_t)cap;
    if (l->tokens > l->cap)
        l->tokens = l->cap;
}

void sml_init(sml_limiter *l, double share, uint64_t window_ns, uint64_t now)
{
    memset(l, 0, sizeof *l);
    l->share = sml_clamp_share(share);
    l->window_ns = window_ns ? window_ns : 1;
    l->debt_max = (int64_t)(l->window_ns * SML_DEBT_WINDOWS < 1000000000ull ? 1000000000ull
                                                                            : l->window_ns * SML_DEBT_WINDOWS);
    sml_set_cap(l);
    l->tokens = l->cap;
    l->t_accrued = now;
}

void sml_set_share(sml_limiter *l, double share, uint64_t now)
{
    sml_accrue(l, now);          /* the time before the change at the old rate */
    l->share = sml_clamp_share(share);
    sml_set_cap(l);
}

uint64_t sml_admit(sml_limiter *l, uint64_t now)
{
    double need;
    sml_accrue(l, now);
    if (l->est_ns <= 0.0) {
        /* nothing measured yet: one launch at a time until we know its cost */
        if (l->outstanding == 0 && l->tokens > 0) {
            l->outstanding++;
            l->admitted++;
            return 0;
        }
        need = l->tokens > 0 ? 0.0 : (double)(1 - l->tokens);
    } else {
        double queued = (double)l->outstanding * l->est_ns;
        double floor = l->blocked ? (double)l->cap / 2 : 0.0;
        if ((double)l->tokens - queued > floor) {
            l->outstanding++;
            l->admitted++;
            l->blocked = 0;
            return 0;
        }
        need = queued + floor - (double)l->tokens + 1.0;
    }
    l->blocked = 1;
    l->delays++;
    /* the wait until the tokens cover the need, at the current rate; waits for
       a measurement (need 0) are short polls */
    double wait = need / l->share;
    if (wait < 20000.0)
        wait = 20000.0;          /* 20 us: a measurement arrives from another thread */
    if (wait > (double)l->window_ns)
        wait = (double)l->window_ns;
    return (uint64_t)wait;
}

void sml_admit_free(sml_limiter *l)
{
    l->outstanding++;
    l->admitted++;
}

uint64_t sml_union_add(sml_limiter *l, uint64_t start, uint64_t end)
{
    uint64_t covered = 0, s = start, e = end;
    uint32_t i = 0, j, w;
    if (end <= start)
        return 0;
    /* intervals entirely before: skip; overlapping or touching: merge */
    while (i < l->niv && l->iv[i][1] < start)
        i++;
    j = i;
    while (j < l->niv && l->iv[j][0] <= end) {
        uint64_t a = l->iv[j][0] > start ? l->iv[j][0] : start;
        uint64_t b = l->iv[j][1] < end ? l->iv[j][1] : end;
        if (b > a)
            covered += b - a;
        if (l->iv[j][0] < s)
            s = l->iv[j][0];
        if (l->iv[j][1] > e)
            e = l->iv[j][1];
        j++;
    }
    /* replace [i, j) by [s, e] */
    if (j > i) {
        l->iv[i][0] = s;
        l->iv[i][1] = e;
        w = i + 1;
        memmove(&l->iv[w], &l->iv[j], (size_t)(l->niv - j) * sizeof l->iv[0]);
        l->niv -= j - w;
    } else {
        if (l->niv == SML_MAX_IV) {
            /* forget the oldest interval: a late report overlapping it would be
               counted twice, which errs on the side of the limit */
            if (i == 0)
                return (end - start) - covered;   /* older than all we keep */
            memmove(&l->iv[0], &l->iv[1], (size_t)(l->niv - 1) * sizeof l->iv[0]);
            l->niv--;
            i--;
        }
        memmove(&l->iv[i + 1], &l->iv[i], (size_t)(l->niv - i) * sizeof l->iv[0]);
        l->iv[i][0] = start;
        l->iv[i][1] = end;
        l->niv++;
    }
    return (end - start) - covered;
}

static uint64_t sml_complete_as(sml_limiter *l, uint64_t start, uint64_t end, uint32_t launches, uint64_t now,
                                int learn, uint64_t learn_ns)
{
    uint64_t add = sml_union_add(l, start, end);
    sml_accrue(l, now);
    if (learn && launches > 0 && (end > start || learn_ns > 0)) {
        /* the launch's cost in union terms: kernels overlapping on several
           streams cost the budget once, so they must be estimated so too */
        double sample = (double)(learn_ns > 0 ? learn_ns : add) / (double)launches;
        l->est_ns = l->est_ns <= 0.0 ? sample : l->est_ns + SML_EST_WEIGHT * (sample - l->est_ns);
        if (l->est_ns < 1.0)
            l->est_ns = 1.0;
    }
    sml_forget(l, launches);
    l->busy_ns += add;
    if (add > (uint64_t)(l->tokens + l->debt_max))
        l->tokens = -l->debt_max;
    else
        l->tokens -= (int64_t)add;
    return add;
}

uint64_t sml_complete(sml_limiter *l, uint64_t start, uint64_t end, uint32_t launches, uint64_t now)
{
    return sml_complete_as(l, start, end, launches, now, 1, 0);
}

uint64_t sml_complete_clipped(sml_limiter *l, uint64_t own_start, uint64_t start, uint64_t end, uint32_t launches,
                              uint64_t now)
{
    if (start <= own_start)   /* not moved */
        return sml_complete_as(l, start, end, launches, now, 1, 0);
    if (l->est_ns > 0.0)
        return sml_complete_as(l, start, end, launches, now, 0, 0);
    return sml_complete_as(l, start, end, launches, now, 1, end > own_start ? end - own_start : 0);
}

void sml_unadmit(sml_limiter *l)
{
    if (l->outstanding > 0)
        l->outstanding--;
    if (l->admitted > 0)
        l->admitted--;
}

void sml_forget(sml_limiter *l, uint32_t launches)
{
    l->outstanding = l->outstanding > launches ? l->outstanding - launches : 0;
}

double sml_weighted_share(double own, const double *w, const double *u, int n, int work_conserving, double slack)
{
    double sum = own, unused = 0, share;
    for (int i = 0; i < n; i++)
        sum += w[i] > 0 ? w[i] : 0;
    for (int i = 0; i < n; i++) {
        double mine = w[i] > 0 ? (sum > 1.0 ? w[i] / sum : w[i]) : 0;
        if (mine > u[i])
            unused += mine - u[i];
    }
    share = sum > 1.0 ? own / sum : own;
    if (work_conserving && unused > slack)
        share += unused - slack;
    return share > 1.0 ? 1.0 : share;
}

double sml_clock_share(double share, double ref_mhz, double mhz)
{
    double f, out;
    if (!(ref_mhz > 0) || !(mhz > 0))
        return share;
    f = ref_mhz / mhz;
    if (f < 0.25)
        f = 0.25;
    if (f > 4.0)
        f = 4.0;
    out = share * f;
    return out > 1.0 ? 1.0 : out;
}
