/* tr_nest.c - see tr_nest.h. */
#include <string.h>

#include "tr_nest.h"

void tr_nest_ext(tr_nest *n, uint32_t corr, uint64_t ext)
{
    uint32_t i = n->next_ext++ % TR_NEST_EXT;
    n->corr[i] = corr;
    n->ext[i] = ext;
}

static uint32_t slot_of(uint32_t tid)
{
    return (tid * 2654435761u) >> 26;   /* 64 slots */
}

/* the external id given for API record 'corr', taken out of the ring; 0 when none */
static uint64_t take_ext(tr_nest *n, uint32_t corr)
{
    /* newest first: the external record comes just before its API record */
    for (uint32_t k = 0; k < TR_NEST_EXT && k < n->next_ext; k++) {
        uint32_t i = (n->next_ext - 1 - k) % TR_NEST_EXT;
        if (n->corr[i] == corr && n->ext[i] != 0) {
            uint64_t ext = n->ext[i];
            n->ext[i] = 0;
            return ext;
        }
    }
    return 0;
}

uint64_t tr_nest_driver(tr_nest *n, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end)
{
    uint64_t ext = take_ext(n, corr);
    if (ext == 0 || tid == 0)
        return ext;
    {
        uint32_t s = slot_of(tid), j;
        if (n->thr[s].tid != tid) {
            memset(&n->thr[s], 0, sizeof n->thr[s]);
            n->thr[s].tid = tid;
        }
        j = n->thr[s].n++ % TR_NEST_DEPTH;
        n->thr[s].start[j] = start;
        n->thr[s].end[j] = end;
        n->thr[s].ext[j] = ext;
    }
    return ext;
}

uint64_t tr_nest_runtime(tr_nest *n, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end)
{
    uint32_t s = slot_of(tid), have;
    if (take_ext(n, corr) != 0)
        return 0;   /* the shim saw this runtime call itself: its own link stands */
    if (tid == 0 || n->thr[s].tid != tid)
        return 0;
    have = n->thr[s].n < TR_NEST_DEPTH ? n->thr[s].n : TR_NEST_DEPTH;
    for (uint32_t k = 0; k < have; k++) {
        uint32_t j = (n->thr[s].n - 1 - k) % TR_NEST_DEPTH;
        if (n->thr[s].start[j] >= start && n->thr[s].end[j] <= end)
            return n->thr[s].ext[j];
    }
    return 0;
}
