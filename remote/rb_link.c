/*
 * rb_link.c - the back end's record of each link whose cuLinkCreate passed options written back (its logs, their
 * sizes, the wall time, threads per block). The driver keeps the option array, the values and the log buffers it
 * was given until cuLinkDestroy and writes into them during the link's later calls (cuda.h: they "accumulate data
 * until the CUlinkState is destroyed"), so they live here, not in the arena that is reset after each call, and
 * every later call's reply carries them (rm_ctx.link_out; docs/remote.md, "JIT options and tensor maps").
 * Calls of one back end run one at a time (rm_workers.h): no lock. A client's links keep at most RB_LINK_BYTES
 * between them (a create past it: RM_ST_TOO_LARGE, the program's CUDA_ERROR_OUT_OF_MEMORY).
 */
#include <stdlib.h>
#include <string.h>

#include "rb_state.h"

#define RB_LINK_BYTES (64u << 20)

typedef struct rb_link {
    uint64_t state;                      /* the driver's CUlinkState                                            */
    const rm_pplan *pp;                  /* cuLinkCreate's option values: their kinds                           */
    uint64_t n, bytes;
    uint8_t *block;                      /* n slots (8 bytes), n log sizes (4), n options (4), the log buffers  */
} rb_link;

static const int32_t *rb_link_opts(uint8_t *block, uint64_t n)
{
    return (const int32_t *)(block + n * 12);
}

/* cuLinkCreate: its option values, sizes, options and log buffers moved out of the arena into a block of their own,
   when one of them is written back. */
int rb_link_pre(rb_state *b, rm_call *c)
{
    const rm_plan *pl = c->plan;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i], *op;
        uint8_t *slots, *block;
        const int32_t *opts;
        uint64_t n = c->cap[i], total, at, kept = 0;
        if (pp->op != RM_OP_JITOPTS || !pp->jit_retained)
            continue;
        op = &pl->p[pp->func_param];
        memcpy(&slots, (uint8_t *)c->params + pp->offset, sizeof slots);
        memcpy(&opts, (uint8_t *)c->params + op->offset, sizeof opts);
        if (slots == NULL || n == 0)
            return RM_OK;
        const uint32_t *caps = (const uint32_t *)(slots + n * 8);
        total = n * 16;
        for (uint64_t k = 0; k < n; k++) {
            const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
            kept |= o != NULL && (o->kind == RM_JIT_INOUT || o->kind == RM_JIT_LOG);
            if (o != NULL && o->kind == RM_JIT_LOG)
                total += caps[k] + 1u;
        }
        if (!kept)
            return RM_OK;   /* values only: the driver keeps nothing past the call */
        rb_link *nl = realloc(b->links, (b->nlinks + 1) * sizeof *b->links);   /* room now: never after the call */
        if (nl == NULL)
            return RM_ENOMEM;
        b->links = nl;
        if (total > RB_LINK_BYTES - b->link_bytes || (block = calloc(1, total)) == NULL)
            return RM_ENOMEM;
        memcpy(block, slots, n * 12);   /* the slots and the sizes */
        memcpy(block + n * 12, opts, n * 4);
        at = n * 16;
        for (uint64_t k = 0; k < n; k++) {
            const rm_jit_opt *o = rm_jit_opt_of(pp, opts[k]);
            void *buf;
            memcpy(&buf, slots + k * 8, sizeof buf);
            if (o == NULL || o->kind != RM_JIT_LOG || buf == NULL)
                continue;
            void *mine = block + at;
            memcpy(mine, buf, caps[k]);
            memcpy(block + k * 8, &mine, sizeof mine);
            at += caps[k] + 1u;
        }
        void *vals = block, *ops = block + n * 12;
        memcpy((uint8_t *)c->params + pp->offset, &vals, sizeof vals);
        memcpy((uint8_t *)c->params + op->offset, &ops, sizeof ops);
        b->link_pending = block;
        b->link_pending_n = n;
        b->link_pending_pp = pp;
        b->link_pending_bytes = total;
        return RM_OK;
    }
    return RM_OK;
}

/* After the call: a created link keeps its block; cuLinkDestroy drops it. */
void rb_link_post(rb_state *b, rm_call *c, int ran, int32_t result)
{
    const rm_plan *pl = c->plan;
    if (b->link_pending != NULL && ran && result == 0) {   /* the driver holds the block from now on */
        uint64_t state = 0;
        for (uint32_t i = 0; i < pl->nparams; i++)   /* cuLinkCreate's CUlinkState *stateOut: one element out */
            if (pl->p[i].op == RM_OP_ARRAY && pl->p[i].dir == CUSHIM_DIR_OUT && pl->p[i].elem == 8) {
                const uint8_t *out;
                memcpy(&out, (uint8_t *)c->params + pl->p[i].offset, sizeof out);
                if (out != NULL)
                    memcpy(&state, out, sizeof state);
            }
        b->links[b->nlinks++] = (rb_link){ .state = state, .pp = b->link_pending_pp, .n = b->link_pending_n,
                                           .bytes = b->link_pending_bytes, .block = b->link_pending };
        b->link_bytes += b->link_pending_bytes;
        b->link_pending = NULL;   /* kept (room was made before the call); otherwise freed after the reply */
    }
    if (pl->link_drop && ran && result == 0 && pl->link_param >= 0) {
        uint64_t state;
        memcpy(&state, (uint8_t *)c->params + pl->p[pl->link_param].offset, sizeof state);
        for (uint32_t k = 0; k < b->nlinks; k++)
            if (b->links[k].state == state) {
                free(b->links[k].block);
                b->link_bytes -= b->links[k].bytes;
                b->links[k] = b->links[--b->nlinks];
                break;
            }
    }
}

/* After the reply went: a block whose cuLinkCreate failed (the reply carried its logs) is freed. */
void rb_link_done(rb_state *b)
{
    free(b->link_pending);
    b->link_pending = NULL;
}

void rb_link_out(void *user, uint64_t state, rm_wr *w)
{
    rb_state *b = user;
    for (uint32_t k = 0; k < b->nlinks; k++)
        if (b->links[k].state == state) {
            rb_link *l = &b->links[k];
            rm_wr_u8(w, 1);
            rm_jit_outputs_write(l->pp, rb_link_opts(l->block, l->n), l->n, l->block,
                                 (const uint32_t *)(l->block + l->n * 8), w);
            return;
        }
    rm_wr_u8(w, 0);
}

void rb_link_free(rb_state *b)
{
    for (uint32_t k = 0; k < b->nlinks; k++)
        free(b->links[k].block);
    free(b->links);
    b->links = NULL;
    b->nlinks = 0;
    rb_link_done(b);
}
