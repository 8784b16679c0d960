/* tr_link.c - see tr_link.h. */
#include <stdlib.h>
#include <string.h>

#include "tr_link.h"

int tr_link_call(tr_link *l, uint32_t tid, uint32_t alt, uint64_t t, uint64_t seq)
{
    tl_thr *th = NULL;
    uint32_t i;
    for (i = 0; i < l->nthr; i++)
        if (l->thr[i].tid == tid && l->thr[i].alt == alt) {
            th = &l->thr[i];
            break;
        }
    if (th == NULL) {
        if (l->nthr == l->cap) {
            uint32_t cap = l->cap ? l->cap * 2 : 8;
            tl_thr *n = realloc(l->thr, cap * sizeof *n);
            if (n == NULL)
                return -1;
            l->thr = n;
            l->cap = cap;
        }
        th = &l->thr[l->nthr++];
        memset(th, 0, sizeof *th);
        th->tid = tid;
        th->alt = alt;
    }
    if (th->n >= TR_LINK_KEEP) {   /* bounded: the older half goes */
        uint32_t keep = TR_LINK_KEEP / 2;
        memmove(th->v, th->v + (th->n - keep), keep * sizeof *th->v);
        th->n = keep;
    }
    if (th->n == th->cap) {
        uint32_t cap = th->cap ? th->cap * 2 : 64;
        tl_ent *n = realloc(th->v, cap * sizeof *n);
        if (n == NULL)
            return -1;
        th->v = n;
        th->cap = cap;
    }
    /* calls of one thread come in entry order, but a nested call is rendered (exits) first: keep sorted */
    i = th->n;
    while (i > 0 && th->v[i - 1].t > t) {
        th->v[i] = th->v[i - 1];
        i--;
    }
    th->v[i].t = t;
    th->v[i].seq = seq;
    th->n++;
    return 0;
}

uint64_t tr_link_find(const tr_link *l, uint32_t tid, uint64_t start, uint64_t end)
{
    for (uint32_t i = 0; i < l->nthr; i++) {
        const tl_thr *th = &l->thr[i];
        uint32_t lo = 0, hi = th->n;
        if (th->tid != tid && th->alt != tid)
            continue;
        while (lo < hi) {   /* the first entry at or after start */
            uint32_t mid = lo + (hi - lo) / 2;
            if (th->v[mid].t < start)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < th->n && th->v[lo].t <= end)
            return th->v[lo].seq;
    }
    return 0;
}

int tr_link_defer(tr_link *l, uint32_t corr, uint32_t tid, uint64_t start, uint64_t end)
{
    if (l->npend >= TR_LINK_KEEP) {   /* bounded like the calls: the older half goes */
        uint32_t keep = TR_LINK_KEEP / 2;
        memmove(l->pend, l->pend + (l->npend - keep), keep * sizeof *l->pend);
        l->npend = keep;
    }
    if (l->npend == l->cap_pend) {
        uint32_t cap = l->cap_pend ? l->cap_pend * 2 : 64;
        tl_pend *n = realloc(l->pend, cap * sizeof *n);
        if (n == NULL)
            return -1;
        l->pend = n;
        l->cap_pend = cap;
    }
    l->pend[l->npend++] = (tl_pend){.corr = corr, .tid = tid, .start = start, .end = end};
    return 0;
}

void tr_link_free(tr_link *l)
{
    for (uint32_t i = 0; i < l->nthr; i++)
        free(l->thr[i].v);
    free(l->thr);
    free(l->pend);
    memset(l, 0, sizeof *l);
}
