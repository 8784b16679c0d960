/*
 * tr_clock.c - the writer's conversion of the hooks' TSC times to the host's ns (tr_clock.h): a table of (TSC,
 * now_ns) pairs, each the narrowest bracket of four tries (plugins/common/tsc.c), and piecewise-linear
 * interpolation between them. The host's clock is itself the TSC extrapolated from an anchor it renews every
 * second (runtime/clock.c), so between two pairs it is linear in the TSC but where it renewed (a new rate, or a
 * step forward by its drift); pairs kept every 10 ms (and the last one moved forward at each drain) follow it to
 * within a pair's bracket, tens of ns, but in a segment where it renewed. Monotonic: the pairs are, and so is
 * each segment's line. Bounded: past TR_CLOCK_MAX pairs the older ones are thinned out.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "tr_clock.h"
#include "tsc.h"

static int tr_clock_push(tr_clock *c, const tr_cal *p)
{
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 64;
        tr_cal *nv = realloc(c->v, cap * sizeof *nv);
        if (nv == NULL)
            return -1;
        c->v = nv;
        c->cap = cap;
    }
    c->v[c->n++] = *p;
    c->gen++;
    return 0;
}

static void tr_clock_pair(tr_clock *c, tr_cal *p)
{
    tsc_pair(c->now_ns, &p->tsc, &p->ns);
}

int tr_clock_start(tr_clock *c, uint64_t (*now_ns)(void))
{
    tr_cal p;
    c->now_ns = now_ns;
    c->n = c->hint = 0;
    c->gen++;
    tr_clock_pair(c, &p);
    return tr_clock_push(c, &p);
}

void tr_clock_take(tr_clock *c)
{
    tr_cal p;
    if (c->now_ns == NULL)
        return;
    if (c->n == 0 && tr_clock_start(c, c->now_ns) != 0)
        return;
    tr_clock_pair(c, &p);
    while (p.ns < c->v[0].ns + TR_CLOCK_FIRST_NS) {   /* the first rate: over 1 ms at least (once) */
        uint64_t left = c->v[0].ns + TR_CLOCK_FIRST_NS - p.ns;
        struct timespec ts = {0, (long)(left < 1000000 ? left : 1000000)};
        nanosleep(&ts, NULL);
        tr_clock_pair(c, &p);
    }
    if (p.tsc <= c->v[c->n - 1].tsc || p.ns < c->v[c->n - 1].ns)
        return;   /* no progress (never on an invariant TSC): the table stays in order */
    c->gen++;
    if (c->n >= 2 && c->v[c->n - 1].ns - c->v[c->n - 2].ns < TR_CLOCK_EVERY_NS)
        c->v[c->n - 1] = p;   /* the last pair moves forward until it is 10 ms after the one before */
    else if (tr_clock_push(c, &p) != 0)
        c->v[c->n - 1] = p;   /* no memory: coarser, still in order */
    if (c->n > TR_CLOCK_MAX) {   /* every other old pair dropped: v[0] and the latest TR_CLOCK_RECENT stay */
        uint32_t old = c->n - TR_CLOCK_RECENT, k = 1;
        for (uint32_t i = 2; i < old; i += 2)
            c->v[k++] = c->v[i];
        for (uint32_t i = old; i < c->n; i++)
            c->v[k++] = c->v[i];
        c->n = k;
        c->hint = 0;
        c->gen++;
    }
}

/* 'tsc' on the line through pair a at 'rate' ns a tick. */
static uint64_t tr_clock_line(const tr_cal *a, double rate, uint64_t tsc)
{
    if (tsc >= a->tsc)
        return a->ns + (uint64_t)((double)(tsc - a->tsc) * rate + 0.5);
    {
        uint64_t d = (uint64_t)((double)(a->tsc - tsc) * rate + 0.5);
        return d < a->ns ? a->ns - d : 1;
    }
}

uint64_t tr_clock_ns(tr_clock *c, uint64_t tsc)
{
    uint32_t lo, hi;
    if (tsc == 0 || c->n == 0)
        return tsc;
    /* a time after the last pair (a record published while the writer drains): a pair now, so that it converts
       between pairs too rather than on a line extrapolated from a short segment; at most one a record, and only
       at the edge of what the threads have published */
    if (tsc > c->v[c->n - 1].tsc && c->n >= 2 && c->now_ns != NULL)
        tr_clock_take(c);
    if (c->n == 1)   /* no rate yet (tr_clock_take makes one before the writer converts): 1 GHz */
        return tsc >= c->v[0].tsc ? c->v[0].ns + (tsc - c->v[0].tsc) : c->v[0].ns - (c->v[0].tsc - tsc);
    /* the segment [lo, lo + 1] holding 'tsc' (the first or the last one beyond the table): most records fall
       in the last one or in the one before */
    if (c->hint + 1 < c->n && c->v[c->hint].tsc <= tsc && tsc <= c->v[c->hint + 1].tsc) {
        lo = c->hint;
    } else if (tsc >= c->v[c->n - 2].tsc) {
        lo = c->n - 2;
    } else if (tsc <= c->v[1].tsc) {
        lo = 0;
    } else {
        lo = 0;
        hi = c->n - 1;   /* v[lo].tsc < tsc < v[hi].tsc */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (c->v[mid].tsc <= tsc)
                lo = mid;
            else
                hi = mid;
        }
    }
    if (lo != c->hint || c->hint_gen != c->gen + 1) {   /* the rate once a segment and table: no division a record */
        c->hint = lo;
        c->hint_gen = c->gen + 1;
        c->hint_rate = (double)(c->v[lo + 1].ns - c->v[lo].ns) / (double)(c->v[lo + 1].tsc - c->v[lo].tsc);
    }
    return tr_clock_line(&c->v[lo], c->hint_rate, tsc);
}

void tr_clock_free(tr_clock *c)
{
    free(c->v);
    c->v = NULL;
    c->n = c->cap = c->hint = 0;
    c->gen++;
}
