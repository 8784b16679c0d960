/*
 * rm_codec_test.c - the remoting codec against the generated metadata, API by API (remote/, docs/remote.md).
 *
 * The table test: for every API the plans carry (forward, forward-if-null, hand-written), a params struct with
 * random inputs - values, strings, arrays sized by their count parameter (by value or behind a pointer), fixed
 * counts, structs with their pointer fields NULL, module images, kernel arguments - is encoded as the client
 * does, decoded as the server does into a params struct staged in the arena, and every input is compared byte
 * for byte with what the program passed (NULL stays NULL). Then the server side fills every output (a new
 * count behind a count pointer included), encodes the reply, and the client side decodes it into the
 * program's own buffers: every byte that came back must equal what the server wrote, and nothing past the
 * count the server gave may change. A parameter the walker dropped, sized wrongly or put in the wrong order
 * fails the comparison (or leaves bytes over, which the decoder refuses).
 *
 * Around it: the status of a call the server cannot take (unknown id, another layout, a class it refuses),
 * truncated and padded payloads, negative and oversized counts, outputs withheld after a failed call, image
 * sizes (PTX, ELF, fatbin), batches, and the classification's counts for the driver API.
 */
#define _GNU_SOURCE   /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rm_codec.h"

void rm_meta_generated(rm_meta *m);

static rm_plans *plans;
static rm_arena arena;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void rnd_fill(void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)p)[i] = (uint8_t)rnd();
}

static void put_int(void *p, unsigned size, uint64_t v)
{
    memcpy(p, &v, size);   /* little-endian: the low bytes */
}

static uint64_t get_int(const void *p, unsigned size)
{
    uint64_t v = 0;
    memcpy(&v, p, size);
    return v;
}

/* The test's own view of pointer fields: every POINTER/STRING/CALLBACK field of a struct set to NULL. */
static void zero_pointer_fields(const cushim_struct_info *st, uint8_t *base, int depth)
{
    for (uint32_t i = 0; depth < 8 && i < st->nfields; i++) {
        const cushim_field_info *f = &st->fields[i];
        uint32_t n = f->array_len ? f->array_len : 1;
        if (f->kind == CUSHIM_KIND_POINTER || f->kind == CUSHIM_KIND_STRING || f->kind == CUSHIM_KIND_CALLBACK)
            memset(base + f->offset, 0, f->size);
        else if (f->kind == CUSHIM_KIND_STRUCT && f->struct_type != NULL)
            for (uint32_t k = 0; k < n; k++)
                zero_pointer_fields(f->struct_type, base + f->offset + (size_t)(f->size / n) * k, depth + 1);
    }
}

/* ---- the context the codec asks: kernel argument sizes, string interning ---- */
typedef struct kp_state {
    uint32_t n, sizes[8];
} kp_state;

static kp_state kp;

static int kp_sizes(void *user, uint64_t func, uint32_t *n, uint32_t *sizes, uint32_t cap)
{
    (void)user, (void)func;
    if (kp.n > cap)
        return RM_EBOUNDS;
    *n = kp.n;
    memcpy(sizes, kp.sizes, kp.n * sizeof *sizes);
    return RM_OK;
}

static char *interned[64];
static int ninterned;

/* The client keeps each distinct string once (the plugin does the same). */
static const char *intern(void *user, const char *s, size_t n)
{
    (void)user;
    for (int i = 0; i < ninterned; i++)
        if (strlen(interned[i]) == n && memcmp(interned[i], s, n) == 0)
            return interned[i];
    if (ninterned == 64)
        return NULL;
    char *c = malloc(n + 1);
    memcpy(c, s, n);
    c[n] = '\0';
    interned[ninterned++] = c;
    return c;
}

/* The client keeps an array the server returned (OWNED_OUT) until the next one, as the plugin does per thread. */
static uint8_t kept[1 << 20];

static const void *keep(void *user, uint32_t param, const void *bytes, size_t n)
{
    (void)user, (void)param;
    if (n > sizeof kept)
        return NULL;
    memcpy(kept, bytes, n);
    return kept;
}

/* The client keeps a text a call returned (ncclGetLastError) until the next one. */
static char text_kept[RM_MAX_RET_STRING + 1];

static const char *ret_text(void *user, const char *s, size_t n)
{
    (void)user;
    if (n > RM_MAX_RET_STRING)
        return NULL;
    memcpy(text_kept, s, n);
    text_kept[n] = '\0';
    return text_kept;
}

static const rm_ctx ctx = { .kparam_sizes = kp_sizes, .intern = intern, .keep = keep, .ret_text = ret_text };

static int carried(const rm_plan *pl)
{
    return pl->cls == RM_CLASS_FORWARD || pl->cls == RM_CLASS_FORWARD_NULL || pl->cls == RM_CLASS_HAND;
}

/* ---- one API, one round ---- */
typedef struct side {
    uint8_t *params;
    void *bufs[RM_MAX_PARAMS];     /* what each pointer parameter points to (client) */
    uint64_t count[RM_MAX_PARAMS]; /* its elements (ARRAY), bytes (IMAGE), arguments (KPARAMS) */
    void *kargs[8];
    void **knode_args;             /* KNODE: the kernelParams array inside the struct */
} side;

/* A struct field's offset by name (the test's own reading of the metadata), or -1. */
static int field_offset(const cushim_struct_info *st, const char *name)
{
    for (uint32_t i = 0; st != NULL && i < st->nfields; i++)
        if (st->fields[i].name != NULL && strcmp(st->fields[i].name, name) == 0)
            return (int)st->fields[i].offset;
    return -1;
}

/* Sizes come from the metadata itself (cushim_param_info), not from the plan under test: a walker that drops a
   parameter or sizes it wrongly then disagrees with the test. */
static const cushim_param_info *meta_param(const rm_plan *pl, uint32_t i)
{
    return &pl->info->params[i];
}

static int by_value(const cushim_param_info *mp)
{
    return mp->kind != CUSHIM_KIND_POINTER && mp->kind != CUSHIM_KIND_STRING && mp->kind != CUSHIM_KIND_CALLBACK;
}

static uint32_t meta_elem(const cushim_param_info *mp)
{
    return mp->elem_size ? mp->elem_size : 1;   /* a void * with a count counts bytes */
}

/* Is parameter i the count of some array (through a pointer when 'indirect')? */
static int is_count_target(const rm_plan *pl, uint32_t i, int indirect)
{
    for (uint32_t k = 0; k < pl->nparams; k++) {
        const cushim_param_info *mp = meta_param(pl, k);
        if (mp->kind == CUSHIM_KIND_POINTER && mp->count_param == (int16_t)i && mp->fixed_count == 0 &&
            mp->count_indirect == indirect && pl->p[k].op == RM_OP_ARRAY)
            return 1;
    }
    return 0;
}

/* Is parameter i the rank that counts some array (rm_ranks: cuTensorMapEncode*'s tensorRank)? */
static int is_rank_count(const rm_plan *pl, uint32_t i)
{
    for (uint32_t k = 0; k < pl->nparams; k++) {
        const rm_rank *rk = rm_rank_find(pl->info->name, meta_param(pl, k)->name);
        if (rk != NULL && strcmp(rk->count, meta_param(pl, i)->name) == 0)
            return 1;
    }
    return 0;
}

static uint64_t count_now(const rm_plan *pl, uint32_t i, const uint8_t *params)
{
    const cushim_param_info *mp = meta_param(pl, i);
    const rm_rank *rk = rm_rank_find(pl->info->name, mp->name);
    for (uint32_t k = 0; rk != NULL && k < pl->nparams; k++) {   /* cuda.h: tensorRank less 0, 1 or 2 elements */
        const cushim_param_info *cp = meta_param(pl, k);
        uint64_t v = get_int(params + cp->offset, cp->size);
        if (strcmp(cp->name, rk->count) == 0)
            return v < rk->less || v > rk->max ? 0 : v - rk->less;
    }
    if (mp->fixed_count)
        return mp->fixed_count;
    if (mp->count_param < 0)
        return 1;
    const cushim_param_info *cp = meta_param(pl, (uint32_t)mp->count_param);
    if (!mp->count_indirect)
        return get_int(params + cp->offset, cp->size);
    void *q;
    memcpy(&q, params + cp->offset, sizeof q);
    return q ? get_int(q, cp->elem_size) : 0;
}

static void build_client(const rm_plan *pl, side *s)
{
    const cushim_api_info *a = pl->info;
    memset(s, 0, sizeof *s);
    s->params = calloc(1, a->params_size ? a->params_size : 1);
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const cushim_param_info *mp = meta_param(pl, i);
        if (!by_value(mp))
            continue;
        rnd_fill(s->params + mp->offset, mp->size);
        if (is_count_target(pl, i, 0))
            put_int(s->params + mp->offset, mp->size, rnd() % 6);
        if (is_rank_count(pl, i))
            put_int(s->params + mp->offset, mp->size, rnd() % 7);   /* 6: a rank the driver refuses */
    }
    for (uint32_t k = 0; k < pl->nptr; k++) {
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        void *buf = NULL;
        int present = pp->op != RM_OP_NULL_ONLY && rnd() % 4 != 0;
        if (present) {
            switch (pp->op) {
            case RM_OP_STRING_IN: {
                size_t n = rnd() % 40;
                char *t = malloc(n + 1);
                for (size_t j = 0; j < n; j++)
                    t[j] = (char)(' ' + rnd() % 94);
                t[n] = '\0';
                buf = t;
                break;
            }
            case RM_OP_STRING_OUT:
            case RM_OP_OWNED_OUT: {
                const char **slot = malloc(sizeof *slot);
                *slot = "sentinel";
                buf = slot;
                break;
            }
            case RM_OP_ARRAY: {
                uint32_t elem = meta_elem(meta_param(pl, i));
                uint64_t n = count_now(pl, i, s->params), bytes = n * elem;
                buf = malloc(bytes ? bytes : 1);
                if (meta_param(pl, i)->dir == CUSHIM_DIR_OUT)
                    memset(buf, 0xa5, bytes);
                else
                    rnd_fill(buf, bytes);
                if (is_count_target(pl, i, 1))
                    put_int(buf, elem, rnd() % 6);
                if (meta_param(pl, i)->struct_type != NULL)
                    for (uint64_t e = 0; e < n; e++) {
                        zero_pointer_fields(meta_param(pl, i)->struct_type, (uint8_t *)buf + e * elem, 0);
                        memset((uint8_t *)buf + e * elem + pp->zero_off, 0, pp->zero_size);   /* rm_zero_field */
                    }
                s->count[i] = n;
                break;
            }
            case RM_OP_IMAGE: {
                size_t n = 1 + rnd() % 100;
                char *t = malloc(n + 1);
                for (size_t j = 0; j < n; j++)
                    t[j] = (char)('a' + rnd() % 26);
                t[n] = '\0';
                buf = t;
                s->count[i] = n + 1;
                break;
            }
            case RM_OP_KPARAMS: {
                kp.n = (uint32_t)(rnd() % 7);
                void **args = malloc(8 * sizeof *args);
                for (uint32_t j = 0; j < kp.n; j++) {
                    kp.sizes[j] = (uint32_t)(1 + rnd() % 16);
                    args[j] = s->kargs[j] = malloc(kp.sizes[j]);
                    rnd_fill(args[j], kp.sizes[j]);
                }
                buf = args;
                s->count[i] = kp.n;
                break;
            }
            case RM_OP_KNODE: {   /* a kernel node: the struct (pointer fields NULL) and kernelParams, or NULL */
                const cushim_param_info *mp = meta_param(pl, i);
                int ko = field_offset(mp->struct_type, "kernelParams");
                buf = malloc(mp->elem_size);
                rnd_fill(buf, mp->elem_size);
                zero_pointer_fields(mp->struct_type, buf, 0);
                kp.n = (uint32_t)(rnd() % 7);
                void **args = rnd() % 4 != 0 ? malloc(8 * sizeof *args) : NULL;
                for (uint32_t j = 0; args != NULL && j < kp.n; j++) {
                    kp.sizes[j] = (uint32_t)(1 + rnd() % 16);
                    args[j] = s->kargs[j] = malloc(kp.sizes[j]);
                    rnd_fill(args[j], kp.sizes[j]);
                }
                assert_true(ko >= 0);
                memcpy((uint8_t *)buf + ko, &args, sizeof args);
                s->knode_args = args;
                s->count[i] = args != NULL ? kp.n : 0;
                break;
            }
            default:
                break;
            }
        }
        s->bufs[i] = buf;
        memcpy(s->params + pp->offset, &buf, sizeof buf);
    }
}

static void free_client(const rm_plan *pl, side *s)
{
    for (uint32_t i = 0; i < pl->nparams; i++)
        free(s->bufs[i]);
    for (uint32_t j = 0; j < 8; j++)
        free(s->kargs[j]);
    free(s->knode_args);
    free(s->params);
}

static void *ptr_of(const void *params, const rm_pplan *pp)
{
    void *v;
    memcpy(&v, (const uint8_t *)params + pp->offset, sizeof v);
    return v;
}

/* Every input the client gave is in the server's params, byte for byte. */
static void check_inputs(const rm_plan *pl, const side *cl, const rm_call *sv)
{
    const char *name = pl->info->name;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i];
        const cushim_param_info *mp = meta_param(pl, i);
        const uint8_t *sp = sv->params;
        /* an address rm_special.c carries as its value (cudaPointerGetAttributes's 'ptr'): compared as a value */
        const rm_special *hs = rm_special_find(pl->info->name, pl->info->categories);
        int hand_value = pp->op == RM_OP_VALUE && hs != NULL && hs->op == RM_OP_ARRAY && hs->func != NULL &&
                         strcmp(hs->func, mp->name) == 0;
        if (by_value(mp) || hand_value) {
            if (memcmp(cl->params + mp->offset, sp + mp->offset, mp->size) != 0)
                fail_msg("%s: value parameter %u '%s' (%u bytes at %u) differs on the server", name, i, mp->name,
                         mp->size, mp->offset);
            continue;
        }
        if (pp->op == 0 || pp->op == RM_OP_VALUE)
            fail_msg("%s: pointer parameter %u '%s' has no plan", name, i, mp->name);
        if (pp->op == RM_OP_OPAQUE)
            continue;
        void *c = cl->bufs[i], *s = ptr_of(sp, pp);
        if ((c == NULL) != (s == NULL))
            fail_msg("%s: pointer parameter %u is %s on the server", name, i, s ? "set" : "NULL");
        if (c == NULL)
            continue;
        switch (pp->op) {
        case RM_OP_STRING_IN:
            if (strcmp(c, s) != 0)
                fail_msg("%s: string %u '%s' became '%s'", name, i, (char *)c, (char *)s);
            break;
        case RM_OP_ARRAY:
            if (sv->cap[i] != cl->count[i])
                fail_msg("%s: array %u staged %llu elements, the client has %llu", name, i,
                         (unsigned long long)sv->cap[i], (unsigned long long)cl->count[i]);
            if (mp->dir != CUSHIM_DIR_OUT && memcmp(c, s, cl->count[i] * meta_elem(mp)) != 0)
                fail_msg("%s: array %u '%s' (%llu x %u bytes) differs on the server", name, i, mp->name,
                         (unsigned long long)cl->count[i], meta_elem(mp));
            break;
        case RM_OP_IMAGE:
            if (memcmp(c, s, cl->count[i]) != 0)
                fail_msg("%s: image %u differs", name, i);
            break;
        case RM_OP_KPARAMS:
            for (uint32_t j = 0; j < cl->count[i]; j++)
                if (memcmp(((void **)c)[j], ((void **)s)[j], kp.sizes[j]) != 0)
                    fail_msg("%s: kernel argument %u differs", name, j);
            break;
        case RM_OP_KNODE: {   /* the struct byte for byte but kernelParams, which holds the arguments */
            int ko = field_offset(mp->struct_type, "kernelParams");
            uint8_t *cc = malloc(mp->elem_size), *sc = malloc(mp->elem_size);
            void **sargs;
            memcpy(cc, c, mp->elem_size);
            memcpy(sc, s, mp->elem_size);
            memcpy(&sargs, sc + ko, sizeof sargs);
            memset(cc + ko, 0, 8);
            memset(sc + ko, 0, 8);
            if (memcmp(cc, sc, mp->elem_size) != 0)
                fail_msg("%s: kernel node %u differs on the server", name, i);
            if ((sargs == NULL) != (cl->knode_args == NULL))
                fail_msg("%s: kernel node's kernelParams is %s on the server", name, sargs ? "set" : "NULL");
            for (uint32_t j = 0; sargs != NULL && j < cl->count[i]; j++)
                if (memcmp(cl->knode_args[j], sargs[j], kp.sizes[j]) != 0)
                    fail_msg("%s: kernel node argument %u differs", name, j);
            free(cc);
            free(sc);
            break;
        }
        default:
            break;
        }
    }
}

/* The server writes every output; what the reply carries must land in the client's buffers. */
static const char *const out_strings[] = { "CUDA_ERROR_INVALID_VALUE", "", "no error" };

static void fill_outputs(const rm_plan *pl, rm_call *sv, void *retval)
{
    for (uint32_t k = 0; k < pl->nptr; k++) {
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        void *s = ptr_of(sv->params, pp);
        if (s == NULL)
            continue;
        if (pp->op == RM_OP_ARRAY && meta_param(pl, i)->dir != CUSHIM_DIR_IN) {
            uint32_t elem = meta_elem(meta_param(pl, i));
            rnd_fill(s, sv->cap[i] * elem);
            if (is_count_target(pl, i, 1))   /* the callee says how many it filled: at most the capacity */
                put_int(s, elem, rnd() % 8);
            if (pp->null_fields)   /* a struct returned with pointer fields: answered only when they are NULL */
                for (uint64_t e = 0; e < sv->cap[i]; e++)
                    zero_pointer_fields(pp->st, (uint8_t *)s + e * elem, 0);
        } else if (pp->op == RM_OP_STRING_OUT) {
            const char *v = rnd() % 4 ? out_strings[rnd() % 3] : NULL;
            memcpy(s, &v, sizeof v);
        }
    }
    /* an array the callee owns: its count output says how many (set after the outputs above got random bytes) */
    static uint64_t owned[5];
    for (uint32_t i = 0; i < pl->nparams; i++) {
        void *s = pl->p[i].op == RM_OP_OWNED_OUT ? ptr_of(sv->params, &pl->p[i]) : NULL;
        if (s == NULL)
            continue;
        void *cnt = ptr_of(sv->params, &pl->p[pl->p[i].func_param]);
        uint64_t n = cnt != NULL ? rnd() % 6 : 0;
        const void *arr = rnd() % 5 ? (const void *)owned : NULL;
        rnd_fill(owned, sizeof owned);
        if (cnt != NULL)
            memcpy(cnt, &n, 8);
        memcpy(s, &arr, sizeof arr);
    }
    rnd_fill(retval, pl->info->ret_size);
    if (pl->ret_status)
        memset(retval, 0, 4);
}

static void check_outputs(const rm_plan *pl, const side *cl, const rm_call *sv, const uint8_t *before[])
{
    const char *name = pl->info->name;
    for (uint32_t k = 0; k < pl->nptr; k++) {
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        void *c = cl->bufs[i], *s = ptr_of(sv->params, pp);
        if (c == NULL)
            continue;
        const cushim_param_info *mp = meta_param(pl, i);
        if (pp->op == RM_OP_ARRAY && mp->dir != CUSHIM_DIR_IN) {
            uint32_t elem = meta_elem(mp);
            uint64_t n = cl->count[i];
            if (mp->count_param >= 0 && mp->count_indirect) {   /* the count as the callee left it */
                uint64_t now = count_now(pl, i, sv->params);
                n = now < n ? now : n;
            }
            if (memcmp(c, s, n * elem) != 0)
                fail_msg("%s: output %u '%s' (%llu x %u bytes) differs from the server's", name, i, mp->name,
                         (unsigned long long)n, elem);
            if (memcmp((uint8_t *)c + n * elem, before[i] + n * elem, (cl->count[i] - n) * elem) != 0)
                fail_msg("%s: output %u changed past the %llu elements returned", name, i, (unsigned long long)n);
        } else if (pp->op == RM_OP_OWNED_OUT) {   /* the client's copy holds the server's elements */
            const uint8_t *cv, *sv_;
            uint64_t n = 0;
            const void *cnt = ptr_of(sv->params, &pl->p[pp->func_param]);
            memcpy(&cv, c, sizeof cv);
            memcpy(&sv_, s, sizeof sv_);
            if (cnt != NULL)
                memcpy(&n, cnt, 8);
            if ((cv == NULL) != (sv_ == NULL) || (cv != NULL && memcmp(cv, sv_, n * pp->elem) != 0))
                fail_msg("%s: owned array %u differs from the server's (%llu elements)", name, i, (unsigned long long)n);
        } else if (pp->op == RM_OP_STRING_OUT) {
            const char *cv, *sv_;
            memcpy(&cv, c, sizeof cv);
            memcpy(&sv_, s, sizeof sv_);
            if ((cv == NULL) != (sv_ == NULL) || (cv && strcmp(cv, sv_) != 0))
                fail_msg("%s: string output %u '%s', the server's '%s'", name, i, cv ? cv : "(null)",
                         sv_ ? sv_ : "(null)");
        }
    }
}

/* The server's context of a round: odd rounds read input byte arrays in place in the message. */
static const rm_ctx server_in_place = { .in_place_min = 1 };
static int in_place_round;

static int round_trip(const rm_plan *pl)
{
    side cl;
    rm_call cc, sc;
    rm_wr w, rw;
    uint32_t status = 99;
    uint8_t sret[64] = {0}, cret[64] = {0};
    const uint8_t *before[RM_MAX_PARAMS] = {0};
    int rc;

    build_client(pl, &cl);
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    rc = rm_encode_call(pl, cl.params, &ctx, &w, &cc);
    if (rc != RM_OK)
        fail_msg("%s: encode failed (%d)", pl->info->name, rc);
    rc = rm_decode_call(plans, w.p, w.len, &arena, in_place_round ? &server_in_place : NULL, &sc, &status);
    if (rc != RM_OK || status != RM_ST_OK)
        fail_msg("%s: server decode failed (%d, status %u) on %zu bytes", pl->info->name, rc, status, w.len);
    assert_ptr_equal(sc.plan, pl);
    check_inputs(pl, &cl, &sc);

    for (uint32_t i = 0; i < pl->nparams; i++)   /* the client's outputs as they were, for the check past n */
        if (cl.bufs[i] != NULL && pl->p[i].op == RM_OP_ARRAY) {
            size_t bytes = cl.count[i] * meta_elem(meta_param(pl, i));
            uint8_t *copy = malloc(bytes + 1);
            memcpy(copy, cl.bufs[i], bytes);
            before[i] = copy;
        }
    assert_true(pl->info->ret_size <= sizeof sret);
    fill_outputs(pl, &sc, sret);
    static const char server_text[] = "a text of the server's library";
    if (pl->ret_string)   /* a text the callee owns: its bytes go, never the server's pointer */
        memcpy(sret, &(const char *){ server_text }, sizeof(const char *));
    rc = rm_encode_reply(&sc, pl->id, RM_ST_OK, sret, &rw);
    assert_int_equal(rc, RM_OK);
    rc = rm_decode_reply(&cc, cret, rw.p, rw.len, &ctx, &status);
    if (rc != RM_OK || status != RM_ST_OK)
        fail_msg("%s: client reply decode failed (%d, status %u)", pl->info->name, rc, status);
    if (pl->ret_string) {
        const char *got;
        memcpy(&got, cret, sizeof got);
        assert_true(got != server_text && got != NULL);
        assert_string_equal(got, server_text);
        assert_null(memmem(rw.p, rw.len, sret, sizeof(const char *)));
    } else if (memcmp(cret, sret, pl->info->ret_size) != 0) {
        fail_msg("%s: result differs", pl->info->name);
    }
    check_outputs(pl, &cl, &sc, before);

    for (uint32_t i = 0; i < RM_MAX_PARAMS; i++)
        free((void *)before[i]);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
    free_client(pl, &cl);
    return 1;
}

static void test_table(void **state)
{
    (void)state;
    uint32_t apis = 0;
    for (uint32_t i = 0; i < plans->count; i++) {
        const rm_plan *pl = &plans->all[i];
        if (!carried(pl))
            continue;
        for (int r = 0; r < 6; r++) {
            in_place_round = r & 1;
            round_trip(pl);
        }
        apis++;
    }
    print_message("[          ] %u APIs round-tripped 6 times each\n", apis);
    assert_true(apis > 1000);
}

/* ---- the server's answers to calls it cannot take ---- */
static const rm_plan *plan_named(const char *name)
{
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, name) == 0)
            return &plans->all[i];
    fail_msg("no API %s", name);
    return NULL;
}

/* ---- VMM (docs/remote.md, "Virtual memory management") ---- */
static const cushim_field_info *field_named(const cushim_struct_info *st, const char *name)
{
    for (uint32_t i = 0; st != NULL && i < st->nfields; i++)
        if (strcmp(st->fields[i].name, name) == 0)
            return &st->fields[i];
    fail_msg("struct %s: no field %s", st ? st->name : "(null)", name);
    return NULL;
}

#define CHECK_FIELD(ST, CTYPE, NAME)                                                                   \
    do {                                                                                               \
        const cushim_field_info *f_ = field_named((ST), #NAME);                                         \
        assert_int_equal(f_->offset, offsetof(CTYPE, NAME));                                           \
        assert_int_equal(f_->size, sizeof(((CTYPE *)0)->NAME));                                        \
    } while (0)

/* The anonymous members' descriptors, against the real header's layout. */
static void test_anonymous_members(void **state)
{
    (void)state;
    const cushim_struct_info *prop = meta_param(plan_named("cuMemCreate"), 2)->struct_type;
    assert_non_null(prop);
    assert_string_equal(prop->name, "CUmemAllocationProp");
    const cushim_field_info *af = field_named(prop, "allocFlags");
    assert_int_equal(af->kind, CUSHIM_KIND_STRUCT);
    assert_int_equal(af->offset, offsetof(CUmemAllocationProp, allocFlags));
    assert_non_null(af->struct_type);
    assert_string_equal(af->struct_type->name, "CUmemAllocationProp.allocFlags");
    typedef __typeof__(((CUmemAllocationProp *)0)->allocFlags) alloc_flags;
    assert_int_equal(af->struct_type->size, sizeof(alloc_flags));
    assert_int_equal(af->struct_type->nfields, 4);
    CHECK_FIELD(af->struct_type, alloc_flags, compressionType);
    CHECK_FIELD(af->struct_type, alloc_flags, gpuDirectRDMACapable);
    CHECK_FIELD(af->struct_type, alloc_flags, usage);
    CHECK_FIELD(af->struct_type, alloc_flags, reserved);
    /* a union of plain data: CUexecAffinityParam.param { CUexecAffinitySmCount smCount; } */
    const cushim_struct_info *aff = meta_param(plan_named("cuCtxGetExecAffinity"), 0)->struct_type;
    assert_non_null(aff);
    const cushim_field_info *uf = field_named(aff, "param");
    assert_int_equal(uf->offset, offsetof(CUexecAffinityParam, param));
    assert_non_null(uf->struct_type);
    assert_string_equal(uf->struct_type->name, "CUexecAffinityParam.param");
    typedef __typeof__(((CUexecAffinityParam *)0)->param) affinity_param;
    assert_int_equal(uf->struct_type->size, sizeof(affinity_param));
    CHECK_FIELD(uf->struct_type, affinity_param, smCount);
    const cushim_field_info *sm = field_named(uf->struct_type, "smCount");
    assert_non_null(sm->struct_type);
    CHECK_FIELD(sm->struct_type, CUexecAffinitySmCount, val);
    /* what the remoting makes of them */
    assert_int_equal(plan_named("cuCtxGetExecAffinity")->cls, RM_CLASS_FORWARD);
    assert_int_equal(plan_named("cuArrayGetSparseProperties")->cls, RM_CLASS_FORWARD);
}

/* Encodes 'pl' with 'params' and returns the encoder's code; on RM_OK the message is left in 'w'. */
static int vmm_encode(const rm_plan *pl, void *params, rm_wr *w, rm_call *c)
{
    rm_wr_init(w, 0);
    return rm_encode_call(pl, params, &ctx, w, c);
}

static void test_vmm(void **state)
{
    (void)state;
    static const char *const forward[] = { "cuMemAddressReserve", "cuMemAddressFree", "cuMemRelease", "cuMemMap",
                                           "cuMemUnmap", "cuMemSetAccess", "cuMemRetainAllocationHandle" };
    for (size_t i = 0; i < sizeof forward / sizeof forward[0]; i++)
        assert_int_equal(plan_named(forward[i])->cls, RM_CLASS_FORWARD);
    /* cuMemSetAccess: its descriptors counted by 'count' */
    const rm_plan *sa = plan_named("cuMemSetAccess");
    assert_int_equal(sa->p[2].op, RM_OP_ARRAY);
    assert_int_equal(sa->p[2].count_param, 3);
    assert_int_equal(sa->p[2].elem, sizeof(CUmemAccessDesc));

    /* cuMemCreate: the properties cross while no handle type is asked for and win32HandleMetaData is NULL */
    const rm_plan *pl = plan_named("cuMemCreate");
    assert_int_equal(pl->cls, RM_CLASS_FORWARD_NULL);
    assert_non_null(strstr(pl->reason, "requestedHandleTypes"));
    uint8_t params[64] __attribute__((aligned(16))) = {0};
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h = 0;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.allocFlags.gpuDirectRDMACapable = 1;
    prop.allocFlags.usage = 0x1234;
    memcpy(params + pl->p[0].offset, &(void *){ &h }, 8);
    memcpy(params + pl->p[1].offset, &(size_t){ 2u << 20 }, 8);
    memcpy(params + pl->p[2].offset, &(void *){ &prop }, 8);
    rm_wr w;
    rm_call cc, sc;
    uint32_t status;
    assert_int_equal(vmm_encode(pl, params, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_OK);
    const CUmemAllocationProp *got = *(void **)((uint8_t *)sc.params + pl->p[2].offset);
    assert_memory_equal(got, &prop, sizeof prop);   /* allocFlags included */
    rm_arena_reset(&arena);
    /* the server refuses an exportable type a client sent anyway (patched into the message) */
    uint8_t *at = memmem(w.p, w.len, &prop, sizeof prop);
    assert_non_null(at);
    CUmemAllocationHandleType fd = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    memcpy(at + offsetof(CUmemAllocationProp, requestedHandleTypes), &fd, sizeof fd);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_EUNSUPPORTED);
    assert_int_equal(status, RM_ST_REFUSED);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    /* the client refuses it before sending: a POSIX fd, a fabric handle, and a win32HandleMetaData */
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    assert_int_equal(vmm_encode(pl, params, &w, &cc), RM_EUNSUPPORTED);
    rm_wr_free(&w);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    assert_int_equal(vmm_encode(pl, params, &w, &cc), RM_EUNSUPPORTED);
    rm_wr_free(&w);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    prop.win32HandleMetaData = &prop;
    assert_int_equal(vmm_encode(pl, params, &w, &cc), RM_EUNSUPPORTED);
    rm_wr_free(&w);
    prop.win32HandleMetaData = NULL;
    /* the granularity query takes any handle type (it creates nothing) */
    const rm_plan *gr = plan_named("cuMemGetAllocationGranularity");
    size_t gran = 0;
    memset(params, 0, sizeof params);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    memcpy(params + gr->p[0].offset, &(void *){ &gran }, 8);
    memcpy(params + gr->p[1].offset, &(void *){ &prop }, 8);
    assert_int_equal(vmm_encode(gr, params, &w, &cc), RM_OK);
    rm_wr_free(&w);

    /* cuMemGetAllocationPropertiesFromHandle: answered while the returned pointer field is NULL */
    const rm_plan *gp = plan_named("cuMemGetAllocationPropertiesFromHandle");
    assert_int_equal(gp->cls, RM_CLASS_FORWARD_NULL);
    for (int round = 0; round < 2; round++) {
        CUmemAllocationProp out;
        int32_t sret = 0, cret = -1;
        rm_wr rw;
        memset(&out, 0xa5, sizeof out);
        memset(params, 0, sizeof params);
        memcpy(params + gp->p[0].offset, &(void *){ &out }, 8);
        memcpy(params + gp->p[1].offset, &(uint64_t){ 0x8000000000001000ull }, 8);
        assert_int_equal(vmm_encode(gp, params, &w, &cc), RM_OK);
        assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_OK);
        CUmemAllocationProp *sv = *(void **)((uint8_t *)sc.params + gp->p[0].offset);
        memset(sv, 0, sizeof *sv);
        sv->type = CU_MEM_ALLOCATION_TYPE_PINNED;
        sv->location.id = 3;
        sv->allocFlags.usage = 7;
        if (round == 1)
            sv->win32HandleMetaData = (void *)0x1000;   /* the server's host pointer: never handed over */
        rm_wr_init(&rw, 0);
        assert_int_equal(rm_encode_reply(&sc, gp->id, RM_ST_OK, &sret, &rw), RM_OK);
        assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_OK);
        if (round == 0) {
            assert_int_equal(status, RM_ST_OK);
            assert_int_equal(cret, 0);
            assert_memory_equal(&out, sv, sizeof out);
        } else {
            assert_int_equal(status, RM_ST_REFUSED);
            assert_int_equal(out.type, (CUmemAllocationType)0xa5a5a5a5u);   /* untouched */
        }
        rm_wr_free(&rw);
        rm_wr_free(&w);
        rm_arena_reset(&arena);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t msg[64] = {0};
    uint32_t status, v;
    rm_call c;
    v = 0xfffffff0u;   /* an id no tree has */
    memcpy(msg, &v, 4);
    assert_int_equal(rm_decode_call(plans, msg, 8, &arena, NULL, &c, &status), RM_ELAYOUT);
    assert_int_equal(status, RM_ST_UNKNOWN_API);
    const rm_plan *pl = plan_named("cuDeviceGetCount");
    memcpy(msg, &pl->id, 4);
    v = pl->hash ^ 1;
    memcpy(msg + 4, &v, 4);
    assert_int_equal(rm_decode_call(plans, msg, 9, &arena, NULL, &c, &status), RM_ELAYOUT);
    assert_int_equal(status, RM_ST_LAYOUT);
    pl = plan_named("cuUserObjectCreate");
    assert_int_equal(pl->cls, RM_CLASS_NEEDS_HAND);
    memcpy(msg, &pl->id, 4);
    memcpy(msg + 4, &pl->hash, 4);
    assert_int_equal(rm_decode_call(plans, msg, 8, &arena, NULL, &c, &status), RM_EUNSUPPORTED);
    assert_int_equal(status, RM_ST_REFUSED);
    assert_int_equal(rm_decode_call(plans, msg, 3, &arena, NULL, &c, &status), RM_EMALFORMED);
    rm_arena_reset(&arena);
    /* host functions run in the client (plugins/remote/rp_hostfn.c): the function crosses the wire only as absent,
       so a server never calls a pointer a client sent; a present one is malformed */
    static const char *const hostfns[] = { "cuLaunchHostFunc", "cuStreamAddCallback_ptsz", "cudaLaunchHostFunc",
                                           "cudaStreamAddCallback" };
    for (size_t h = 0; h < sizeof hostfns / sizeof hostfns[0]; h++) {
        uint8_t params[64] __attribute__((aligned(16))) = {0};
        rm_wr w;
        pl = plan_named(hostfns[h]);
        assert_int_equal(pl->cls, RM_CLASS_HAND);
        assert_int_equal(pl->p[1].op, RM_OP_CLIENT);
        memcpy(params + pl->p[0].offset, &(uint64_t){ 0x5000 }, 8);   /* a stream */
        memcpy(params + pl->p[1].offset, &(void *){ (void *)test_refusals }, 8);
        rm_wr_init(&w, 0);
        assert_int_equal(rm_encode_call(pl, params, NULL, &w, &c), RM_EUNSUPPORTED);
        rm_wr_free(&w);
        memset(params + pl->p[1].offset, 0, 8);
        rm_wr_init(&w, 0);
        assert_int_equal(rm_encode_call(pl, params, NULL, &w, &c), RM_OK);
        assert_true(w.len <= sizeof msg);
        memcpy(msg, w.p, w.len);
        assert_int_equal(rm_decode_call(plans, msg, w.len, &arena, NULL, &c, &status), RM_OK);
        assert_null(*(void **)((uint8_t *)c.params + pl->p[1].offset));
        rm_arena_reset(&arena);
        for (size_t k = w.len - pl->nptr; k < w.len; k++) {   /* each 'present' byte set: none decodes */
            memcpy(msg, w.p, w.len);
            msg[k] = 1;
            assert_int_not_equal(rm_decode_call(plans, msg, w.len, &arena, NULL, &c, &status), RM_OK);
            rm_arena_reset(&arena);
        }
        rm_wr_free(&w);
    }
}

/* Every strict prefix of a valid call, and the call with a byte more, is refused. */
static void test_truncated(void **state)
{
    (void)state;
    static const char *const names[] = { "cuMemcpyHtoD_v2", "cuGraphGetNodes", "cuModuleGetFunction",
                                         "cuDeviceGetName", "cuLaunchKernel" };
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        const rm_plan *pl = plan_named(names[n]);
        for (int r = 0; r < 8; r++) {
            side cl;
            rm_call cc, sc;
            rm_wr w;
            uint32_t status;
            build_client(pl, &cl);
            rm_wr_init(&w, 0);
            assert_int_equal(rm_encode_call(pl, cl.params, &ctx, &w, &cc), RM_OK);
            for (size_t len = 0; len < w.len; len++) {
                uint8_t *cut = malloc(len + 1);
                memcpy(cut, w.p, len);
                assert_int_not_equal(rm_decode_call(plans, cut, len, &arena, NULL, &sc, &status), RM_OK);
                rm_arena_reset(&arena);
                free(cut);
            }
            rm_wr_u8(&w, 0);
            assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_EMALFORMED);
            rm_arena_reset(&arena);
            rm_wr_free(&w);
            free_client(pl, &cl);
        }
    }
}

/* Counts: negative or past the bounds is refused on both sides; a NULL count pointer counts 0. */
static void test_counts(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuDeviceGetName");
    cushim_params_cuDeviceGetName p = { 0 };
    char name[16];
    rm_wr w;
    rm_call c;
    p.name = name;
    p.len = -1;
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, &p, &ctx, &w, &c), RM_EBOUNDS);
    rm_wr_reset(&w);
    p.len = (int)sizeof name;
    assert_int_equal(rm_encode_call(pl, &p, &ctx, &w, &c), RM_OK);
    /* the server rechecks the count it stages by: the values follow id and hash, len (4 bytes) then dev */
    uint32_t status;
    int big = 1 << 30, over = 100 << 20, neg = -5;
    memcpy(w.p + 8, &big, 4);   /* past RM_MAX_ARENA */
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &c, &status), RM_EBOUNDS);
    assert_int_equal(status, RM_ST_TOO_LARGE);
    rm_arena_reset(&arena);
    memcpy(w.p + 8, &over, 4);   /* within it, past this arena's 64 MiB */
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &c, &status), RM_ENOMEM);
    assert_int_equal(status, RM_ST_TOO_LARGE);
    rm_arena_reset(&arena);
    memcpy(w.p + 8, &neg, 4);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &c, &status), RM_EBOUNDS);
    rm_arena_reset(&arena);
    /* a NULL count pointer: nodes has 0 elements */
    pl = plan_named("cuGraphGetNodes");
    CUgraphNode nodes[2];
    cushim_params_cuGraphGetNodes g = { .hGraph = (CUgraph)0x1234, .nodes = nodes, .numNodes = NULL };
    rm_wr_reset(&w);
    assert_int_equal(rm_encode_call(pl, &g, &ctx, &w, &c), RM_OK);
    assert_int_equal(c.cap[1], 0);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &c, &status), RM_OK);
    assert_int_equal(c.cap[1], 0);
    rm_arena_reset(&arena);
    /* a struct carried while its pointer fields are NULL (cuCtxCreate_v4's CUctxCreateParams) */
    pl = plan_named("cuCtxCreate_v4");
    assert_int_equal(pl->cls, RM_CLASS_FORWARD_NULL);
    CUexecAffinityParam aff;
    CUctxCreateParams cp = { 0 };
    CUcontext ctxv;
    cushim_params_cuCtxCreate_v4 x = { .pctx = &ctxv, .ctxCreateParams = &cp, .flags = 0, .dev = 0 };
    rm_wr_reset(&w);
    assert_int_equal(rm_encode_call(pl, &x, &ctx, &w, &c), RM_OK);
    cp.execAffinityParams = &aff;
    rm_wr_reset(&w);
    assert_int_equal(rm_encode_call(pl, &x, &ctx, &w, &c), RM_EUNSUPPORTED);
    /* ... and the server refuses one that arrives with a pointer inside */
    cp.execAffinityParams = NULL;
    rm_wr_reset(&w);
    assert_int_equal(rm_encode_call(pl, &x, &ctx, &w, &c), RM_OK);
    memset(w.p + w.len - sizeof cp + offsetof(CUctxCreateParams, execAffinityParams), 0x41, sizeof(void *));
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &c, &status), RM_EMALFORMED);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
}

/* A failed call's outputs are not sent: the program's buffers keep what they held, as with the driver. */
/* A returned text (ncclGetLastError, rm_plan.ret_string): its bytes up to RM_MAX_RET_STRING, NULL as NULL, a reply
   claiming more refused; the error texts of codes stay the client library's (not carried). */
static void test_ret_text(void **state)
{
    (void)state;
    const rm_plan *pl = NULL;
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, "ncclGetLastError") == 0)
            pl = &plans->all[i];
    if (pl == NULL)
        skip();
    assert_int_equal(pl->ret_string, 1);
    assert_int_equal(pl->cls, RM_CLASS_HAND);
    assert_int_equal(plan_named("ncclGetErrorString")->ret_string, 0);
    assert_int_equal(plan_named("cuDeviceGetCount")->ret_string, 0);
    static char text[RM_MAX_RET_STRING + 100];
    memset(text, 'x', sizeof text - 1);
    uint8_t params[64] = {0};
    const char *sret = text, *cret = NULL;
    rm_wr w, rw;
    rm_call cc, sc;
    uint32_t status;
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    assert_int_equal(rm_encode_call(pl, params, &ctx, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_OK);
    assert_int_equal(rm_encode_reply(&sc, pl->id, RM_ST_OK, &sret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_OK);
    assert_non_null(cret);
    assert_int_equal(strlen(cret), RM_MAX_RET_STRING);   /* bounded */
    sret = NULL;
    rm_wr_reset(&rw);
    assert_int_equal(rm_encode_reply(&sc, pl->id, RM_ST_OK, &sret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_OK);
    assert_null(cret);
    /* a hostile server claiming a longer text: refused */
    sret = "short";
    rm_wr_reset(&rw);
    assert_int_equal(rm_encode_reply(&sc, pl->id, RM_ST_OK, &sret, &rw), RM_OK);
    uint32_t big = RM_MAX_RET_STRING + 1;
    memcpy(rw.p + rw.len - 5 - 4, &big, 4);   /* the text's length, before its 5 bytes */
    assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_EMALFORMED);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
}

static void test_failed_call_keeps_outputs(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuDeviceGetCount");
    int count = 77, sret = 100, cret = 0;
    cushim_params_cuDeviceGetCount p = { .count = &count };
    rm_wr w, rw;
    rm_call cc, sc;
    uint32_t status;
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    assert_int_equal(rm_encode_call(pl, &p, &ctx, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_OK);
    **(int **)sc.params = 5;
    assert_int_equal(rm_encode_reply(&sc, pl->id, RM_ST_OK, &sret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_OK);
    assert_int_equal(cret, 100);
    assert_int_equal(count, 77);
    sret = 0;
    rm_wr_reset(&rw);
    assert_int_equal(rm_encode_reply(&sc, pl->id, RM_ST_OK, &sret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_OK);
    assert_int_equal(count, 5);
    /* a refusal: status only */
    rm_wr_reset(&rw);
    assert_int_equal(rm_encode_reply(NULL, pl->id, RM_ST_LAYOUT, NULL, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &cret, rw.p, rw.len, &ctx, &status), RM_OK);
    assert_int_equal(status, RM_ST_LAYOUT);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
}

static void test_image_sizes(void **state)
{
    (void)state;
    assert_int_equal(rm_image_size(".version 9.0\n", 100), 14);
    assert_int_equal(rm_image_size("abc", 3), 0);   /* no NUL within reach */
    uint8_t elf[256] = { 0x7f, 'E', 'L', 'F', 2, 1 };
    uint64_t shoff = 128;
    uint16_t shentsize = 64, shnum = 2;
    memcpy(elf + 40, &shoff, 8);
    memcpy(elf + 58, &shentsize, 2);
    memcpy(elf + 60, &shnum, 2);
    assert_int_equal(rm_image_size(elf, sizeof elf), 256);
    assert_int_equal(rm_image_size(elf, 200), 0);   /* the section table runs past what was received */
    uint64_t off = 100, size = 1000;   /* a section whose bytes lie past the end */
    memcpy(elf + 128 + 64 + 24, &off, 8);
    memcpy(elf + 128 + 64 + 32, &size, 8);
    assert_int_equal(rm_image_size(elf, sizeof elf), 0);
    uint8_t fat[64] = { 0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0 };
    uint64_t fsize = 48;
    memcpy(fat + 8, &fsize, 8);
    assert_int_equal(rm_image_size(fat, sizeof fat), 64);
    assert_int_equal(rm_image_size(fat, 63), 0);
}

static void test_batch(void **state)
{
    (void)state;
    rm_wr w;
    rm_rd r;
    const uint8_t *call;
    size_t len;
    rm_wr_init(&w, 0);
    rm_wr_u32(&w, 3);
    rm_wr_bytes(&w, "abc", 3);
    rm_wr_u32(&w, 0);
    rm_wr_u32(&w, 9);
    rm_wr_bytes(&w, "xy", 2);
    r = (rm_rd){ .p = w.p, .len = w.len };
    assert_int_equal(rm_batch_next(&r, &call, &len), RM_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(call, "abc", 3);
    assert_int_equal(rm_batch_next(&r, &call, &len), RM_OK);
    assert_int_equal(len, 0);
    assert_int_equal(rm_batch_next(&r, &call, &len), RM_EMALFORMED);
    rm_wr_free(&w);
}

/* The counts docs/remote.md gives, and classes of APIs the e2e run needs. */
static int sc_index(const rm_plan *pl, const char *name);

static void test_classification(void **state)
{
    (void)state;
    uint32_t n[RM_CLASS_COUNT] = {0};
    for (uint32_t i = 0; i < plans->count; i++)
        if (plans->all[i].info->library == CUSHIM_LIB_DRIVER)
            n[plans->all[i].cls]++;
    print_message("[          ] driver API: %u forward, %u forward-if-null, %u hand-written, %u needs-hand, %u "
                  "unsupported\n", n[1], n[2], n[3], n[4], n[5]);
    assert_int_equal(plan_named("cuMemcpyHtoD_v2")->cls, RM_CLASS_FORWARD);
    assert_int_equal(plan_named("cuMemcpyDtoH_v2")->cls, RM_CLASS_FORWARD);
    assert_int_equal(plan_named("cuGetErrorName")->cls, RM_CLASS_FORWARD);
    assert_int_equal(plan_named("cuModuleLoadData")->cls, RM_CLASS_HAND);
    assert_int_equal(plan_named("cuLaunchKernel")->cls, RM_CLASS_HAND);
    assert_int_equal(plan_named("cuStreamAddCallback")->cls, RM_CLASS_HAND);   /* run in the client (rp_hostfn.c) */
    assert_int_equal(plan_named("cuUserObjectCreate")->cls, RM_CLASS_NEEDS_HAND);
    const rm_plan *occ = plan_named("cuOccupancyMaxPotentialBlockSize");   /* its callback carried while NULL */
    assert_int_equal(occ->cls, RM_CLASS_HAND);
    assert_int_equal(occ->p[sc_index(occ, "blockSizeToDynamicSMemSize")].op, RM_OP_NULL_ONLY);
    assert_int_equal(plan_named("cuModuleLoad")->cls, RM_CLASS_HAND);   /* the file read in the client */
    assert_int_equal(plan_named("cuGraphicsMapResources")->cls, RM_CLASS_UNSUPPORTED);
    for (uint32_t i = 0; i < plans->count; i++)
        if (plans->all[i].cls != RM_CLASS_FORWARD)
            assert_non_null(plans->all[i].reason);
    /* a row of rm_special.c that carries a parameter as an array gets an array: metadata without the element's
       size (cudaIpcOpenMemHandle's devPtr once made a device address by an overlay glob) would leave it
       null-only, refused by the client whenever it is not NULL, while the API still lists as hand-written */
    unsigned degraded = 0;
    for (uint32_t i = 0; i < plans->count; i++) {
        const rm_plan *pl = &plans->all[i];
        const rm_special *sp = rm_special_find(pl->info->name, pl->info->categories);
        if (pl->cls != RM_CLASS_HAND || sp == NULL || sp->op != RM_OP_ARRAY || sp->param == NULL ||
            (sp->func != NULL && strcmp(sp->func, sp->param) == 0))
            continue;
        int k = sc_index(pl, sp->param);
        if (k >= 0 && pl->p[k].op == RM_OP_NULL_ONLY) {
            print_error("%s: '%s' planned null-only, its row says array\n", pl->info->name, sp->param);
            degraded++;
        }
    }
    assert_int_equal(degraded, 0);
    const rm_plan *ipc = plan_named("cudaIpcOpenMemHandle");
    assert_int_equal(ipc->cls, RM_CLASS_HAND);
    assert_int_equal(ipc->p[sc_index(ipc, "devPtr")].op, RM_OP_ARRAY);
    assert_int_equal(ipc->p[sc_index(ipc, "devPtr")].elem, 8);
    assert_int_equal(plan_named("cudaMemPoolExportToShareableHandle")->cls, RM_CLASS_UNSUPPORTED);
}

/* Zero copy: a large input is referenced by the client's writer (sent from the program's buffer with iovecs)
   and read in place by the server; the bytes the driver sees are the program's either way. */
static void test_zero_copy(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuMemcpyHtoD_v2");
    size_t n = 1u << 20;
    uint8_t *src = malloc(n), *msg = malloc(n + 64);
    struct { uint64_t dst; const void *src; size_t count; } params = { 0x1000, src, n };
    _Static_assert(sizeof params == 24, "cushim_params_cuMemcpyHtoD_v2");
    rm_wr w;
    rm_call cc, sc;
    uint32_t status;
    const rm_ctx in_place = { .in_place_min = RM_REF_MIN };
    rnd_fill(src, n);
    rm_wr_init(&w, 0);
    w.allow_ref = 1;
    assert_int_equal(rm_encode_call(pl, &params, &ctx, &w, &cc), RM_OK);
    assert_ptr_equal(w.ref, src);   /* not copied */
    assert_int_equal(w.ref_len, n);
    assert_true(w.len < 64);
    assert_int_equal(rm_wr_payload_len(&w), w.len + n);
    memcpy(msg, w.p, w.ref_at);   /* what writev puts on the wire */
    memcpy(msg + w.ref_at, src, n);
    memcpy(msg + w.ref_at + n, w.p + w.ref_at, w.len - w.ref_at);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(rm_decode_call(plans, msg, w.len + n, &arena, k ? &in_place : NULL, &sc, &status), RM_OK);
        const uint8_t *got;
        memcpy(&got, (uint8_t *)sc.params + 8, sizeof got);
        assert_memory_equal(got, src, n);
        if (k)
            assert_ptr_equal(got, msg + w.ref_at);   /* in place in the message */
        else
            assert_true(got >= arena.base && got < arena.base + arena.used);
        rm_arena_reset(&arena);
    }
    w.allow_ref = 0;   /* a writer that does not allow it (a batch): copied */
    rm_wr_reset(&w);
    assert_int_equal(rm_encode_call(pl, &params, &ctx, &w, &cc), RM_OK);
    assert_null(w.ref);
    assert_int_equal(w.len, 8 + 8 + 8 + 1 + n);
    rm_wr_free(&w);
    free(src);
    free(msg);
}

/* The asynchronous class (docs/remote.md, "Fast paths"): what it holds, and that no call with an output or a
   host pointer the program could change afterwards is in it. */
static void test_async_class(void **state)
{
    (void)state;
    uint32_t meta = 0, special = 0, group = 0, nccl = 0;
    for (uint32_t i = 0; i < plans->count; i++) {
        const rm_plan *pl = &plans->all[i];
        nccl += pl->info->library == CUSHIM_LIB_NCCL;
        if (!pl->async)
            continue;
        if (getenv("RM_TEST_LIST"))
            print_message("[          ] async %s (%s)\n", pl->info->name, pl->async_reason);
        meta += pl->async == RM_ASYNC_META;
        special += pl->async == RM_ASYNC_SPECIAL;
        group += pl->async == RM_ASYNC_GROUP;
        /* inside an NCCL group only (rp_nccl.c): NCCL's, values only */
        assert_int_equal(pl->info->library, pl->async == RM_ASYNC_GROUP ? CUSHIM_LIB_NCCL : CUSHIM_LIB_DRIVER);
        assert_true(pl->ret_status);
        assert_non_null(pl->async_reason);
        assert_true(pl->cls == RM_CLASS_FORWARD || pl->cls == RM_CLASS_HAND);
        assert_int_equal(pl->cache, RM_CACHE_NO);
        assert_false(pl->info->categories & (CUSHIM_CAT_QUERY | CUSHIM_CAT_ALLOC));
        for (uint32_t k = 0; k < pl->nparams; k++) {
            const cushim_param_info *p = &pl->info->params[k];
            /* the metadata, not the plan: an output or a host pointer the walker mislabelled fails here */
            if (p->kind == CUSHIM_KIND_POINTER || p->kind == CUSHIM_KIND_STRING) {
                assert_int_equal(p->dir, CUSHIM_DIR_IN);
                assert_int_equal(pl->async, RM_ASYNC_SPECIAL);   /* by metadata: values only */
                assert_true(pl->p[k].op == RM_OP_KPARAMS || pl->p[k].op == RM_OP_NULL_ONLY ||
                            pl->p[k].op == RM_OP_LCONFIG ||   /* a launch's configuration: copied at call time */
                            (pl->p[k].op == RM_OP_ARRAY && pl->p[k].dir == CUSHIM_DIR_IN));
            }
            /* a device address the call writes through on the device (NCCL's recvbuff) crosses as a value */
            assert_true((p->dir != CUSHIM_DIR_OUT && p->dir != CUSHIM_DIR_INOUT) || p->kind == CUSHIM_KIND_DEVPTR);
            assert_int_not_equal(p->kind, CUSHIM_KIND_CALLBACK);
        }
    }
    print_message("[          ] asynchronous: %u by metadata, %u by rm_special.c\n", meta, special);
    static const char *const async[] = { "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                                         "cuLaunchCooperativeKernel", "cuMemsetD8Async", "cuMemsetD32Async_ptsz",
                                         "cuMemcpyDtoDAsync_v2", "cuEventRecord", "cuEventRecordWithFlags",
                                         "cuStreamWaitEvent", "cuGraphLaunch", "cuMemsetD2D8Async" };
    static const char *const sync[] = { "cuStreamSynchronize", "cuStreamQuery", "cuEventQuery", "cuEventSynchronize",
                                        "cuCtxSynchronize", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
                                        "cuMemcpyHtoD_v2", "cuMemcpyDtoD_v2", "cuMemAllocAsync", "cuMemsetD8_v2",
                                        "cuLaunchHostFunc", "cuStreamAddCallback", "cuStreamBeginCapture_v2",
                                        "cuStreamEndCapture", "cuStreamDestroy_v2", "cuEventCreate",
                                        "cuMemcpy2DAsync_v2", "cuMemcpyAsync", "cuDeviceGetCount" };
    for (size_t i = 0; i < sizeof async / sizeof async[0]; i++)
        assert_true(plan_named(async[i])->async != RM_ASYNC_NO || (print_message("%s\n", async[i]), 0));
    for (size_t i = 0; i < sizeof sync / sizeof sync[0]; i++)
        assert_true(plan_named(sync[i])->async == RM_ASYNC_NO || (print_message("%s\n", sync[i]), 0));
    assert_true(meta >= 20 && special >= 6);
    print_message("[          ] inside an NCCL group: %u\n", group);
    if (nccl != 0) {   /* the tree has NCCL: its collectives, point-to-point calls and group bounds, nothing else */
        static const char *const in_group[] = { "ncclAllReduce", "pncclAllReduce", "ncclBroadcast", "ncclReduce",
                                                "ncclAllGather", "ncclReduceScatter", "ncclSend", "ncclRecv",
                                                "ncclGroupStart", "ncclGroupEnd", "ncclBcast" };
        static const char *const answered[] = { "ncclCommInitRank", "ncclCommInitRankConfig", "ncclGetUniqueId",
                                                "ncclCommDestroy", "ncclCommGetAsyncError", "ncclGetVersion",
                                                "ncclRedOpDestroy", "ncclCommCount" };
        for (size_t i = 0; i < sizeof in_group / sizeof in_group[0]; i++)
            assert_true(plan_named(in_group[i])->async == RM_ASYNC_GROUP || (print_message("%s\n", in_group[i]), 0));
        for (size_t i = 0; i < sizeof answered / sizeof answered[0]; i++)
            assert_true(plan_named(answered[i])->async == RM_ASYNC_NO || (print_message("%s\n", answered[i]), 0));
    } else {
        assert_int_equal(group, 0);
    }
}

/* Answers the client keeps: immutable queries only, each with its outputs; the chunkable copies. */
static void test_cache_and_chunk_class(void **state)
{
    (void)state;
    static const char *const forever[] = { "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetAttribute",
                                           "cuDeviceGetName", "cuDeviceGetUuid_v2", "cuDeviceTotalMem_v2",
                                           "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString" };
    static const char *const never[] = { "cuMemGetInfo_v2", "cuCtxGetCurrent", "cuCtxGetDevice", "cuStreamQuery",
                                         "cuMemAlloc_v2", "cuPointerGetAttribute", "cuCtxGetLimit",
                                         "cuDevicePrimaryCtxGetState", "cuModuleGetFunction", "cuEventElapsedTime" };
    for (size_t i = 0; i < sizeof forever / sizeof forever[0]; i++)
        assert_int_equal(plan_named(forever[i])->cache, RM_CACHE_PROCESS);
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        assert_int_equal(plan_named(never[i])->cache, RM_CACHE_NO);
    assert_int_equal(plan_named("cuFuncGetAttribute")->cache, RM_CACHE_FUNC);
    assert_int_equal(plan_named("cuFuncSetAttribute")->cache, RM_CACHE_FORGET);
    assert_int_equal(plan_named("cuModuleUnload")->cache, RM_CACHE_FORGET);
    const rm_plan *ga = plan_named("cuDeviceGetAttribute");
    assert_int_equal(ga->cache_skip_param, 1);
    assert_int_equal(ga->cache_skip_value, 20);   /* CU_DEVICE_ATTRIBUTE_COMPUTE_MODE */
    for (uint32_t i = 0; i < plans->count; i++) {
        const rm_plan *pl = &plans->all[i];
        if (pl->cache == RM_CACHE_PROCESS || pl->cache == RM_CACHE_FUNC) {   /* a query: nothing it changes */
            assert_true(pl->ret_status);
            assert_int_equal(pl->async, RM_ASYNC_NO);
            for (uint32_t k = 0; k < pl->nparams; k++)
                assert_true(pl->p[k].op != RM_OP_ARRAY || pl->p[k].dir == CUSHIM_DIR_OUT);
        }
        if (pl->chunk_host >= 0) {
            assert_int_equal(pl->p[pl->chunk_host].elem, 1);
            assert_int_equal(pl->p[pl->chunk_dev].op, RM_OP_VALUE);
            assert_int_equal(pl->p[pl->chunk_count].op, RM_OP_VALUE);
            assert_int_equal(pl->info->params[pl->chunk_dev].kind, CUSHIM_KIND_DEVPTR);
        }
    }
    assert_int_equal(plan_named("cuMemcpyHtoD_v2")->chunk_host, 1);
    assert_int_equal(plan_named("cuMemcpyDtoH_v2")->chunk_host, 0);
    assert_int_equal(plan_named("cuMemcpyHtoDAsync_v2")->chunk_host, 1);
    assert_int_equal(plan_named("cuMemcpyDtoD_v2")->chunk_host, -1);
    assert_int_equal(plan_named("cuMemcpyHtoA_v2")->chunk_host, -1);
}

/* ---- pointer-mode scalars (cuBLAS alpha/beta/result: RM_OP_SCALAR) ---- */
static int sc_how;           /* what the client's side says: RM_SCALAR_HOST, RM_SCALAR_DEVICE or an RM_E* code */
static uint32_t sc_bytes;

static int sc_scalar(void *user, const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes)
{
    (void)user, (void)pl, (void)param, (void)params;
    *bytes = sc_bytes;
    return sc_how;
}

static const rm_ctx sc_ctx = { .scalar = sc_scalar };

/* the server's side: its own library says the handle's mode is device (sck_device) or host */
static int sck_device, sck_calls;
static uint64_t sck_handle;

static int sck_check(void *user, const rm_plan *pl, const void *params, uint32_t param, int how)
{
    (void)user, (void)param;
    sck_calls++;
    memcpy(&sck_handle, (const uint8_t *)params + pl->p[0].offset, 8);   /* 'handle', decoded before the pointers */
    return (how == RM_SCALAR_DEVICE) == sck_device ? RM_OK : RM_EMALFORMED;
}

static const rm_ctx sck_ctx = { .scalar_check = sck_check };

static int sc_index(const rm_plan *pl, const char *name)
{
    for (uint32_t i = 0; i < pl->nparams; i++)
        if (strcmp(meta_param(pl, i)->name, name) == 0)
            return (int)i;
    fail_msg("%s has no parameter %s", pl->info->name, name);
    return -1;
}

static void *sc_ptr(const rm_plan *pl, const uint8_t *params, int i)
{
    void *v;
    memcpy(&v, params + pl->p[i].offset, sizeof v);
    return v;
}

/* alpha and beta in, by host value (their size as the client says, staged in 16 zeroed bytes) or as a device
   address passed untouched; result out only as a host value; matrices are addresses (the overlay). */
static void test_scalars(void **state)
{
    (void)state;
    int have_cublas = 0;   /* a tree without cuBLAS (13.5's): nothing to test */
    for (uint32_t i = 0; i < plans->count; i++)
        have_cublas |= strcmp(plans->all[i].info->name, "cublasSgemm_v2") == 0;
    if (!have_cublas)
        skip();
    static const char *const names[] = { "cublasSgemm_v2", "cublasGemmEx", "cublasZgemm_v2", "cublasLtMatmul" };
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        const rm_plan *pl = plan_named(names[n]);
        int ia = sc_index(pl, "alpha"), ib = sc_index(pl, "beta"), im = sc_index(pl, "A");
        assert_true(pl->cls == RM_CLASS_HAND);
        assert_int_equal(pl->p[ia].op, RM_OP_SCALAR);
        assert_int_equal(pl->p[ib].op, RM_OP_SCALAR);
        assert_int_equal(pl->p[im].op, RM_OP_VALUE);   /* a device address, never read in the client */
        for (int mode = 0; mode < 2; mode++) {
            uint8_t params[512] __attribute__((aligned(16))) = {0}, alpha[16], beta[16];
            uint32_t status;
            rm_call cc, sc;
            rm_wr w;
            rnd_fill(alpha, sizeof alpha);
            rnd_fill(beta, sizeof beta);
            memcpy(params + pl->p[ia].offset, &(void *){ alpha }, 8);
            memcpy(params + pl->p[ib].offset, &(void *){ beta }, 8);
            memcpy(params + pl->p[im].offset, &(uint64_t){ 0x7f0000001000ull }, 8);
            sc_how = mode ? RM_SCALAR_DEVICE : RM_SCALAR_HOST;
            sc_bytes = n == 2 ? 16 : n == 1 ? 8 : 4;
            rm_wr_init(&w, 0);
            assert_int_equal(rm_encode_call(pl, params, &sc_ctx, &w, &cc), RM_OK);
            assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_OK);
            assert_int_equal(get_int((uint8_t *)sc.params + pl->p[im].offset, 8), 0x7f0000001000ull);
            uint8_t *sa = sc_ptr(pl, sc.params, ia), *sb = sc_ptr(pl, sc.params, ib);
            if (mode) {   /* device addresses: the client's values, nothing read */
                assert_ptr_equal(sa, alpha);
                assert_ptr_equal(sb, beta);
            } else {
                uint8_t zero[16] = {0};
                assert_ptr_not_equal(sa, alpha);
                assert_memory_equal(sa, alpha, sc_bytes);
                assert_memory_equal(sb, beta, sc_bytes);
                if (sc_bytes < 16)   /* the rest of the staged block is zero: never the client's bytes */
                    assert_memory_equal(sa + sc_bytes, zero, 16 - sc_bytes);
            }
            for (size_t len = 0; len < w.len; len++) {   /* every strict prefix refused */
                rm_arena_reset(&arena);
                assert_int_not_equal(rm_decode_call(plans, w.p, len, &arena, NULL, &sc, &status), RM_OK);
            }
            rm_arena_reset(&arena);
            rm_wr_free(&w);
        }
        sc_how = RM_EUNSUPPORTED;   /* a size or mode the client cannot tell: the call is not sent */
        uint8_t params[512] __attribute__((aligned(16))) = {0}, alpha[16] = {0};
        memcpy(params + pl->p[ia].offset, &(void *){ alpha }, 8);
        rm_wr w;
        rm_call cc;
        rm_wr_init(&w, 0);
        assert_int_equal(rm_encode_call(pl, params, &sc_ctx, &w, &cc), RM_EUNSUPPORTED);
        rm_wr_reset(&w);
        sc_how = RM_SCALAR_HOST;
        sc_bytes = 17;   /* over RM_SCALAR_MAX */
        assert_int_equal(rm_encode_call(pl, params, &sc_ctx, &w, &cc), RM_EBOUNDS);
        rm_wr_reset(&w);
        assert_int_equal(rm_encode_call(pl, params, NULL, &w, &cc), RM_EUNSUPPORTED);   /* no scalar hook */
        rm_wr_free(&w);
    }

    /* result: out, a host value sent back whole, nothing past it written; in device mode nothing comes back */
    const rm_plan *pl = plan_named("cublasDdot_v2");
    int ir = sc_index(pl, "result");
    assert_int_equal(pl->p[ir].op, RM_OP_SCALAR);
    assert_int_equal(pl->p[ir].dir, CUSHIM_DIR_OUT);
    for (int mode = 0; mode < 2; mode++) {
        uint8_t params[256] __attribute__((aligned(16))) = {0}, result[24], reply_params[256];
        uint32_t status;
        int32_t ret = 0, got = -1;
        rm_call cc, sc;
        rm_wr w, rw;
        memset(result, 0xa5, sizeof result);
        memcpy(params + pl->p[ir].offset, &(void *){ result }, 8);
        sc_how = mode ? RM_SCALAR_DEVICE : RM_SCALAR_HOST;
        sc_bytes = 8;
        rm_wr_init(&w, 0);
        rm_wr_init(&rw, 0);
        assert_int_equal(rm_encode_call(pl, params, &sc_ctx, &w, &cc), RM_OK);
        assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &status), RM_OK);
        uint8_t *sr = sc_ptr(pl, sc.params, ir);
        if (mode) {
            assert_ptr_equal(sr, result);   /* the server's device address: the server writes it, not the codec */
        } else {
            assert_ptr_not_equal(sr, result);
            memcpy(sr, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
        }
        memcpy(reply_params, params, sizeof reply_params);
        assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
        assert_int_equal(rm_decode_reply(&cc, &got, rw.p, rw.len, NULL, &status), RM_OK);
        assert_int_equal(got, 0);
        if (mode) {
            uint8_t untouched[24];
            memset(untouched, 0xa5, sizeof untouched);
            assert_memory_equal(result, untouched, sizeof result);
        } else {
            assert_memory_equal(result, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
            for (int k = 8; k < 24; k++)
                assert_int_equal(result[k], 0xa5);
        }
        rm_arena_reset(&arena);
        rm_wr_free(&w);
        rm_wr_free(&rw);
    }

    /* the server's check (rm_ctx.scalar_check): asked with the decoded values, a way it refuses is malformed */
    {
        const rm_plan *sg = plan_named("cublasSgemm_v2");
        int ih = sc_index(sg, "handle"), ia = sc_index(sg, "alpha");
        for (int mode = 0; mode < 2; mode++)
            for (int server_device = 0; server_device < 2; server_device++) {
                uint8_t params[512] __attribute__((aligned(16))) = {0}, alpha[4] = {1, 2, 3, 4};
                uint32_t status;
                rm_call cc, sc;
                rm_wr w;
                memcpy(params + sg->p[ih].offset, &(uint64_t){ 0xabc0ull }, 8);
                memcpy(params + sg->p[ia].offset, &(void *){ alpha }, 8);
                sc_how = mode ? RM_SCALAR_DEVICE : RM_SCALAR_HOST;
                sc_bytes = 4;
                sck_device = server_device;
                sck_calls = 0;
                rm_wr_init(&w, 0);
                assert_int_equal(rm_encode_call(sg, params, &sc_ctx, &w, &cc), RM_OK);
                int rc = rm_decode_call(plans, w.p, w.len, &arena, &sck_ctx, &sc, &status);
                assert_int_equal(rc, mode == server_device ? RM_OK : RM_EMALFORMED);
                assert_int_equal(status, mode == server_device ? RM_ST_OK : RM_ST_MALFORMED);
                assert_true(sck_calls >= 1);
                assert_int_equal(sck_handle, 0xabc0ull);
                rm_arena_reset(&arena);
                rm_wr_free(&w);
            }
    }

    /* the server refuses what a client cannot have sent: another way, sizes 0 and 17, a NULL device address */
    pl = plan_named("cublasSgemm_v2");
    int ia = sc_index(pl, "alpha");
    static const uint8_t bad[][10] = { { 3 }, { RM_SCALAR_HOST, 0 }, { RM_SCALAR_HOST, 17 },
                                       { RM_SCALAR_DEVICE, 0, 0, 0, 0, 0, 0, 0, 0 } };
    static const size_t badlen[] = { 1, 2, 2, 9 };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        uint8_t params[512] __attribute__((aligned(16))) = {0}, alpha[4] = {0};
        uint32_t status;
        rm_call cc, sc;
        rm_wr w;
        memcpy(params + pl->p[ia].offset, &(void *){ alpha }, 8);
        sc_how = RM_SCALAR_HOST;
        sc_bytes = 4;
        rm_wr_init(&w, 0);
        assert_int_equal(rm_encode_call(pl, params, &sc_ctx, &w, &cc), RM_OK);
        /* alpha is the first pointer on the wire: its 6 bytes (way, size, 4 bytes) follow the values */
        size_t at = 8;
        for (uint32_t i = 0; i < pl->nparams; i++)
            if (pl->p[i].op == RM_OP_VALUE)
                at += pl->p[i].size;
        assert_int_equal(pl->order[0], (uint8_t)ia);
        assert_int_equal(w.p[at], RM_SCALAR_HOST);
        rm_wr msg;
        rm_wr_init(&msg, 0);
        rm_wr_bytes(&msg, w.p, at);
        rm_wr_bytes(&msg, bad[b], badlen[b]);
        rm_wr_bytes(&msg, w.p + at + 6, w.len - at - 6);
        assert_int_equal(rm_decode_call(plans, msg.p, msg.len, &arena, NULL, &sc, &status), RM_EMALFORMED);
        rm_arena_reset(&arena);
        rm_wr_free(&msg);
        rm_wr_free(&w);
    }
}

/* ---- values sized by their attribute (RM_OP_ATTR, RM_OP_ATTRS) and addresses looked up (RM_OP_ADDR) ---- */
/* Stand-ins for the two sides' shared regions: region 3 is [0x10000, +0x2000) in the client and [0x7f000000,
   +0x2000) in the server. */
static int ad_out(void *user, uint64_t addr, uint32_t *region, uint64_t *off)
{
    uint64_t base = user != NULL ? 0x7f000000u : 0x10000u;
    if (addr < base || addr - base >= 0x2000)
        return 0;
    *region = 3;
    *off = addr - base;
    return 1;
}

static int ad_in(void *user, uint32_t region, uint64_t off, uint64_t *addr)
{
    if (region != 3 || off >= 0x2000)
        return RM_EMALFORMED;
    *addr = (user != NULL ? 0x7f000000u : 0x10000u) + off;
    return RM_OK;
}

static int ad_server_tag;
static const rm_ctx ad_client = { .addr_out = ad_out, .addr_in = ad_in };
static const rm_ctx ad_server = { .addr_out = ad_out, .addr_in = ad_in, .user = &ad_server_tag };

/* cuPointerGetAttribute(data, attribute, ptr): encode, decode on the server, the server writes 'wrote' bytes of
   'fill' (as a driver that writes more than the type would), reply, client decode into a 32-byte buffer of 0xa5.
   Returns the bytes the client got written (the last that is not 0xa5, + 1), or -1 when refused somewhere. */
static int32_t pa_result;   /* the driver's result pa_round replies with (0 unless a test sets it) */

static int pa_round(int attr, uint64_t ptr, uint64_t *server_ptr, const uint8_t *fill, int wrote, uint8_t out[32],
                    uint32_t *reply_status)
{
    const rm_plan *pl = plan_named("cuPointerGetAttribute");
    int id = sc_index(pl, "data"), ia = sc_index(pl, "attribute"), ip = sc_index(pl, "ptr");
    uint8_t params[64] __attribute__((aligned(16))) = {0};
    uint32_t status;
    int32_t ret = 0;
    rm_call cc, sc;
    rm_wr w, rw;
    memset(out, 0xa5, 32);
    memcpy(params + pl->p[id].offset, &(void *){ out }, 8);
    memcpy(params + pl->p[ia].offset, &attr, 4);
    memcpy(params + pl->p[ip].offset, &ptr, 8);
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    int n = -1;
    if (rm_encode_call(pl, params, &ad_client, &w, &cc) != RM_OK)
        goto out;
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, &ad_server, &sc, &status), RM_OK);
    *server_ptr = get_int((uint8_t *)sc.params + pl->p[ip].offset, 8);
    uint8_t *staged = sc_ptr(pl, sc.params, id), kind = 0;
    uint32_t size = rm_attr_size_of(&pl->p[id], attr, &kind);
    for (int k = 0; k < RM_ATTR_STAGE; k++)   /* the program's bytes went in (rm_attr_sent), then zeros: RM_ATTR_STAGE
                                                 bytes of the arena, ASan checks the size */
        assert_int_equal(staged[k], (uint32_t)k < size ? 0xa5 : 0);
    memcpy(staged, fill, (size_t)wrote);
    ret = pa_result;
    assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
    ret = -1;
    assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &ad_client, reply_status), RM_OK);
    if (*reply_status == RM_ST_OK)
        assert_int_equal(ret, pa_result);
    n = 0;
    for (int k = 0; k < 32; k++)
        if (out[k] != 0xa5)
            n = k + 1;
out:
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
    return n;
}

static void test_attrs(void **state)
{
    (void)state;
    /* sizes by attribute: the test's own reading of cuda.h (the type each attribute's documentation names) */
    static const struct { int attr, size; } sizes[] = {
        { 1, 8 } /* CONTEXT */, { 2, 4 } /* MEMORY_TYPE */, { 3, 8 } /* DEVICE_POINTER */, { 5, 16 } /* P2P_TOKENS */,
        { 6, 4 } /* SYNC_MEMOPS */, { 7, 8 } /* BUFFER_ID */, { 8, 4 } /* IS_MANAGED */, { 9, 4 } /* DEVICE_ORDINAL */,
        { 11, 8 } /* RANGE_START_ADDR */, { 12, 8 } /* RANGE_SIZE */, { 13, 4 } /* MAPPED */,
        { 16, 4 } /* ACCESS_FLAGS */, { 17, 8 } /* MEMPOOL_HANDLE */, { 18, 8 } /* MAPPING_SIZE */,
        { 20, 8 } /* MEMORY_BLOCK_ID */,
    };
    uint8_t fill[RM_ATTR_STAGE], out[32];
    uint64_t sp;
    uint32_t st;
    rnd_fill(fill, sizeof fill);
    fill[0] = fill[0] ? fill[0] : 1;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        /* the driver writing all 64 staged bytes: the client gets exactly the attribute's size, the bytes equal */
        int n = pa_round(sizes[k].attr, 0x5000, &sp, fill, RM_ATTR_STAGE, out, &st);
        assert_int_equal(st, RM_ST_OK);
        assert_int_equal(sp, 0x5000);   /* a device address: as it is */
        if (sizes[k].attr == 3 || sizes[k].attr == 11) {   /* addresses: the server's, not in a region */
            assert_int_equal(n, 8);
        } else {
            assert_true(n <= sizes[k].size);
            assert_memory_equal(out, fill, (size_t)sizes[k].size);
        }
        for (int j = sizes[k].size; j < 32; j++)
            assert_int_equal(out[j], 0xa5);
    }
    /* the driver writing less than the table's size - P2P tokens' 12 bytes of members, a boolean's low byte: the
       program's bytes past them come back as they were (the server staged them), as locally */
    static const struct { int attr, wrote; } fewer[] = { { 5, 12 }, { 6, 1 }, { 2, 0 } };
    for (size_t k = 0; k < sizeof fewer / sizeof fewer[0]; k++) {
        assert_true(pa_round(fewer[k].attr, 0x5000, &sp, fill, fewer[k].wrote, out, &st) <= fewer[k].wrote);
        assert_int_equal(st, RM_ST_OK);
        if (fewer[k].wrote != 0)
            assert_memory_equal(out, fill, (size_t)fewer[k].wrote);
        for (int j = fewer[k].wrote; j < 32; j++)
            assert_int_equal(out[j], 0xa5);
    }
    /* a failed call (CUDA_ERROR_INVALID_VALUE) still gives what the driver wrote - driver 580 writes HOST_POINTER's
       8 bytes (NULL) for device memory - and the program's bytes where it wrote nothing; a host address of the
       server's is not sent (the program's bytes stay), a device address as it is */
    pa_result = 1;
    assert_int_equal(pa_round(4, 0x5000, &sp, (const uint8_t *)&(uint64_t){ 0 }, 8, out, &st), 8);
    assert_int_equal(st, RM_ST_OK);
    assert_int_equal(get_int(out, 8), 0);
    assert_int_equal(pa_round(4, 0x5000, &sp, fill, 0, out, &st), 0);
    assert_int_equal(pa_round(4, 0x5000, &sp, (const uint8_t *)&(uint64_t){ 0x7f100000u }, 8, out, &st), 0);
    assert_int_equal(st, RM_ST_OK);   /* not refused: the call's own error goes */
    assert_int_equal(pa_round(3, 0x5000, &sp, fill, 0, out, &st), 0);
    assert_int_equal(pa_round(3, 0x5000, &sp, (const uint8_t *)&(uint64_t){ 0x7f100000u }, 8, out, &st), 8);
    assert_int_equal(get_int(out, 8), 0x7f100000u);
    assert_true(pa_round(6, 0x5000, &sp, fill, 1, out, &st) <= 1);
    assert_int_equal(out[0], fill[0]);
    for (int j = 1; j < 32; j++)
        assert_int_equal(out[j], 0xa5);
    pa_result = 0;
    /* an attribute no table knows: refused in the client */
    assert_int_equal(pa_round(1000, 0x5000, &sp, fill, 8, out, &st), -1);
    assert_int_equal(pa_round(-1, 0x5000, &sp, fill, 8, out, &st), -1);

    /* shared pinned memory: the client's address goes as region 3 + offset and arrives as the server's */
    uint64_t srv = 0x7f000000u + 0x123;
    assert_int_equal(pa_round(4 /* HOST_POINTER */, 0x10000 + 0x123, &sp, (const uint8_t *)&srv, 8, out, &st), 8);
    assert_int_equal(sp, 0x7f000123u);
    assert_int_equal(st, RM_ST_OK);
    assert_int_equal(get_int(out, 8), 0x10123u);   /* ... and the server's host address back as the client's */
    assert_int_equal(pa_round(3 /* DEVICE_POINTER */, 0x10000 + 0x123, &sp, (const uint8_t *)&srv, 8, out, &st), 8);
    assert_int_equal(get_int(out, 8), 0x10123u);
    /* a host address of the server outside the regions: refused by the server, the program's buffer untouched */
    uint64_t alien = 0x7f100000u, null = 0;
    assert_int_equal(pa_round(4, 0x5000, &sp, (const uint8_t *)&alien, 8, out, &st), 0);
    assert_int_equal(st, RM_ST_REFUSED);
    /* NULL goes as NULL; a device address outside the regions as it is */
    assert_int_equal(pa_round(4, 0x5000, &sp, (const uint8_t *)&null, 8, out, &st), 8);
    assert_int_equal(get_int(out, 8), 0);
    assert_int_equal(pa_round(3, 0x5000, &sp, (const uint8_t *)&alien, 8, out, &st), 8);
    assert_int_equal(get_int(out, 8), alien);

    /* the server refuses a region it does not have and an offset past one; every prefix and a byte more */
    const rm_plan *pl = plan_named("cuPointerGetAttribute");
    uint8_t params[64] __attribute__((aligned(16))) = {0};
    uint64_t p = 0x10000 + 8;
    int attr = 2;
    rm_call cc, sc;
    rm_wr w;
    memcpy(params + pl->p[sc_index(pl, "data")].offset, &(void *){ out }, 8);
    memcpy(params + pl->p[sc_index(pl, "attribute")].offset, &attr, 4);
    memcpy(params + pl->p[sc_index(pl, "ptr")].offset, &p, 8);
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, params, &ad_client, &w, &cc), RM_OK);
    for (size_t len = 0; len < w.len; len++) {
        assert_int_not_equal(rm_decode_call(plans, w.p, len, &arena, &ad_server, &sc, &st), RM_OK);
        rm_arena_reset(&arena);
    }
    uint8_t more[128];
    memcpy(more, w.p, w.len);
    more[w.len] = 0;
    assert_int_equal(rm_decode_call(plans, more, w.len + 1, &arena, &ad_server, &sc, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_EMALFORMED);   /* no regions */
    rm_arena_reset(&arena);
    /* the layout: data (u8 present) and ptr's form, region and offset at the end */
    memcpy(more, w.p, w.len);
    uint32_t region = 4;
    memcpy(more + w.len - 12, &region, 4);
    assert_int_equal(rm_decode_call(plans, more, w.len, &arena, &ad_server, &sc, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    uint64_t far = 0x2000;
    memcpy(more, w.p, w.len);
    memcpy(more + w.len - 8, &far, 8);
    assert_int_equal(rm_decode_call(plans, more, w.len, &arena, &ad_server, &sc, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    /* an attribute the client would refuse, forged: refused by the server too */
    memcpy(more, w.p, w.len);
    int forged = 1000;
    memcpy(more + 8, &forged, 4);   /* the values follow the id and hash: 'attribute' is the only one */
    assert_int_equal(rm_decode_call(plans, more, w.len, &arena, &ad_server, &sc, &st), RM_EUNSUPPORTED);
    assert_int_equal(st, RM_ST_REFUSED);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
}

/* cuPointerGetAttributes: each value its own size, a NULL output left NULL; cuPointerSetAttribute's value in;
   a host address set refused; cuMemPoolGetAttribute by the pool table. */
static void test_attrs_many(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuPointerGetAttributes");
    int in = sc_index(pl, "numAttributes"), ia = sc_index(pl, "attributes"), id = sc_index(pl, "data"),
        ip = sc_index(pl, "ptr");
    assert_int_equal(pl->cls, RM_CLASS_HAND);
    assert_int_equal(pl->p[id].op, RM_OP_ATTRS);
    assert_int_equal(pl->p[ip].op, RM_OP_ADDR);
    int32_t attrs[RM_MAX_ATTRS + 1] = { 2, 3, 8, 12, 4 };   /* room for the count over the bound, below */
    static const int size[5] = { 4, 8, 4, 8, 8 };
    uint8_t vals[5][16];
    void *data[5];
    uint8_t params[64] __attribute__((aligned(16))) = {0};
    uint32_t n = 5, st;
    uint64_t ptr = 0x10000 + 64;
    int32_t ret = 0;
    memset(vals, 0xa5, sizeof vals);
    for (int k = 0; k < 5; k++)
        data[k] = k == 2 ? NULL : vals[k];
    memcpy(params + pl->p[in].offset, &n, 4);
    memcpy(params + pl->p[ia].offset, &(void *){ attrs }, 8);
    memcpy(params + pl->p[id].offset, &(void *){ data }, 8);
    memcpy(params + pl->p[ip].offset, &ptr, 8);
    rm_call cc, sc;
    rm_wr w, rw;
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    assert_int_equal(rm_encode_call(pl, params, &ad_client, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, &ad_server, &sc, &st), RM_OK);
    void **sv = sc_ptr(pl, sc.params, id);
    assert_int_equal(get_int((uint8_t *)sc.params + pl->p[ip].offset, 8), 0x7f000040u);
    uint64_t host = 0x7f000000u + 100;
    for (int k = 0; k < 5; k++) {
        if (k == 2) {
            assert_null(sv[k]);
            continue;
        }
        assert_non_null(sv[k]);
        for (int j = 0; j < RM_ATTR_STAGE; j++)   /* the program's bytes staged */
            assert_int_equal(((uint8_t *)sv[k])[j], j < size[k] ? 0xa5 : 0);
        memset(sv[k], 0x40 + k, k == 3 ? 5 : RM_ATTR_STAGE);   /* RANGE_SIZE: a driver writing 5 of 8 bytes */
        if (k == 1 || k == 4)
            memcpy(sv[k], &host, 8);
    }
    assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &ad_client, &st), RM_OK);
    assert_int_equal(st, RM_ST_OK);
    for (int k = 0; k < 5; k++) {
        for (int j = 0; j < 16; j++) {
            int want = k == 2 || j >= size[k] || (k == 3 && j >= 5) ? 0xa5 :
                       (k == 1 || k == 4) ? ((const uint8_t *)&(uint64_t){ 0x10064 })[j] : 0x40 + k;
            assert_int_equal(vals[k][j], want);
        }
    }
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
    /* an unknown attribute among them, or more than RM_MAX_ATTRS: refused in the client */
    attrs[3] = 1000;
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, params, &ad_client, &w, &cc), RM_EUNSUPPORTED);
    rm_wr_free(&w);
    n = RM_MAX_ATTRS + 1;   /* the program's array holds them: the bound is the codec's */
    for (uint32_t k = 0; k < n; k++)
        attrs[k] = 2;
    memcpy(params + pl->p[in].offset, &n, 4);
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, params, &ad_client, &w, &cc), RM_EBOUNDS);
    rm_wr_free(&w);

    /* cuPointerSetAttribute(SYNC_MEMOPS): an int in (4 bytes), staged in RM_ATTR_STAGE zeroed bytes */
    pl = plan_named("cuPointerSetAttribute");
    uint8_t sp[64] __attribute__((aligned(16))) = {0}, on[8] = { 1, 0x77, 0x77, 0x77 };
    int attr = 6;
    memcpy(sp + pl->p[sc_index(pl, "value")].offset, &(void *){ on }, 8);
    memcpy(sp + pl->p[sc_index(pl, "attribute")].offset, &attr, 4);
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, sp, &ad_client, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, &ad_server, &sc, &st), RM_OK);
    const uint8_t *staged = sc_ptr(pl, sc.params, sc_index(pl, "value"));
    for (int k = 0; k < RM_ATTR_STAGE; k++)
        assert_int_equal(staged[k], k == 0 ? 1 : k < 4 ? 0x77 : 0);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    attr = 4;   /* HOST_POINTER set: a client address the server cannot use */
    memcpy(sp + pl->p[sc_index(pl, "attribute")].offset, &attr, 4);
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, sp, &ad_client, &w, &cc), RM_EUNSUPPORTED);
    rm_wr_free(&w);

    /* the other tables: every value an ATTR sized by its enum (4: the release threshold; graph memory: u64s) */
    static const struct { const char *api; int attr, size; } others[] = {
        { "cuMemPoolSetAttribute", 1, 4 }, { "cudaMemPoolGetAttribute", 4, 8 }, { "cudaMemPoolSetAttribute", 1, 4 },
        { "cuDeviceGetGraphMemAttribute", 0, 8 }, { "cuDeviceSetGraphMemAttribute", 1, 8 },
        { "cudaDeviceGetGraphMemAttribute", 3, 8 }, { "cudaDeviceSetGraphMemAttribute", 1, 8 },
    };
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        const rm_plan *op = plan_named(others[k].api);
        const rm_pplan *vp = &op->p[sc_index(op, "value")];
        uint8_t kind;
        assert_int_equal(op->cls, RM_CLASS_HAND);
        assert_int_equal(vp->op, RM_OP_ATTR);
        assert_int_equal(rm_attr_size_of(vp, others[k].attr, &kind), others[k].size);
        assert_int_equal(rm_attr_size_of(vp, 1000, &kind), 0);
    }
    /* launch attribute unions (streams, kernel nodes): the tree's whole union (CUlaunchAttributeValue, 64 bytes in
       13.0), every id but the one whose value holds a pointer (DEVICE_UPDATABLE_KERNEL_NODE, 13) */
    static const char *const unions[] = { "cuStreamGetAttribute", "cuStreamSetAttribute_ptsz", "cuGraphKernelNodeGetAttribute",
                                          "cudaStreamSetAttribute", "cudaGraphKernelNodeGetAttribute" };
    for (size_t k = 0; k < sizeof unions / sizeof unions[0]; k++) {
        const rm_plan *op = plan_named(unions[k]);
        const rm_pplan *vp = NULL;
        uint8_t kind;
        for (uint32_t i = 0; i < op->nparams; i++)
            if (op->p[i].op == RM_OP_ATTR)
                vp = &op->p[i];
        assert_non_null(vp);
        assert_int_equal(op->cls, RM_CLASS_HAND);
        assert_int_equal(rm_attr_size_of(vp, 8 /* PRIORITY */, &kind), 64);
        assert_int_equal(kind, RM_ATTR_POINTEE);
        assert_int_equal(rm_attr_size_of(vp, 1 /* ACCESS_POLICY_WINDOW */, &kind), 64);
        assert_int_equal(rm_attr_size_of(vp, 13, &kind), 0);
        assert_int_equal(rm_attr_size_of(vp, 999, &kind), 0);
    }
    /* cuMemPoolGetAttribute(RELEASE_THRESHOLD): 8 bytes back */
    pl = plan_named("cuMemPoolGetAttribute");
    assert_int_equal(pl->cls, RM_CLASS_HAND);
    uint8_t mp[64] __attribute__((aligned(16))) = {0}, v[16];
    memset(v, 0xa5, sizeof v);
    attr = 4;   /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    memcpy(mp + pl->p[sc_index(pl, "value")].offset, &(void *){ v }, 8);
    memcpy(mp + pl->p[sc_index(pl, "attr")].offset, &attr, 4);
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    assert_int_equal(rm_encode_call(pl, mp, NULL, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
    memset(sc_ptr(pl, sc.params, sc_index(pl, "value")), 0x33, RM_ATTR_STAGE);
    assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, NULL, &st), RM_OK);
    for (int k = 0; k < 16; k++)
        assert_int_equal(v[k], k < 8 ? 0x33 : 0xa5);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
}

/* cuLaunchKernelEx's configuration: the struct and its attributes arrive whole, the count is the struct's, an id
   this tree does not name or one whose value holds a pointer refused on both sides, more than RM_MAX_LATTRS too. */
/* ---- JIT options (docs/remote.md, "JIT options"; rm_jit.c) ---- */
#define JIT_SLOT(v) ((void *)(uintptr_t)(v))

/* cuModuleLoadDataEx's or cuLinkCreate_v2's options encoded as the client does (the params live on for the reply). */
static int jit_encode(const char *api, unsigned n, CUjit_option *opts, void **vals, rm_wr *w, rm_call *cc)
{
    static const char image[] = ".version 7.0\n";
    static CUmodule mod;
    static CUlinkState st;
    static cushim_params_cuModuleLoadDataEx pm;
    static cushim_params_cuLinkCreate_v2 pc;
    const rm_plan *pl = plan_named(api);
    if (strcmp(api, "cuModuleLoadDataEx") == 0) {
        pm = (cushim_params_cuModuleLoadDataEx){ &mod, image, n, opts, vals };
        return rm_encode_call(pl, &pm, &ctx, w, cc);
    }
    pc = (cushim_params_cuLinkCreate_v2){ n, opts, vals, &st };
    return rm_encode_call(pl, &pc, &ctx, w, cc);
}

/* A link's kept outputs after a later call's own (rm_ctx.link_out, link_in): cuLinkComplete's reply carries them. */
static struct {
    const rm_pplan *pp;
    int32_t opts[3];
    uint8_t slots[3 * 8 + 3 * 4];   /* the server's block: slots, then log sizes */
    char log[16];
    uint64_t state;
} ln;
static void *ln_client_vals[3];
static char ln_client_log[16];

static void ln_out(void *user, uint64_t state, rm_wr *w)
{
    (void)user;
    rm_wr_u8(w, state == ln.state);
    if (state == ln.state)
        rm_jit_outputs_write(ln.pp, ln.opts, 3, ln.slots, (const uint32_t *)(ln.slots + 24), w);
}

static int ln_in(void *user, uint64_t state, rm_rd *r)
{
    static const uint32_t caps[3] = { 0, sizeof ln_client_log, 0 };
    (void)user;
    return state == ln.state ? rm_jit_outputs_read(ln.pp, ln.opts, 3, ln_client_vals, caps, r) : RM_EMALFORMED;
}

static void test_link_section(void)
{
    const rm_plan *lc = plan_named("cuLinkCreate_v2"), *cp = plan_named("cuLinkComplete"),
                  *ds = plan_named("cuLinkDestroy");
    assert_int_equal(cp->link_param, sc_index(cp, "state"));
    assert_int_equal(cp->link_drop, 0);
    assert_int_equal(ds->link_drop, 1);
    assert_int_equal(plan_named("cuLinkAddData_v2")->link_param, 0);
    ln.pp = &lc->p[sc_index(lc, "optionValues")];
    ln.opts[0] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, ln.opts[1] = CU_JIT_INFO_LOG_BUFFER, ln.opts[2] = CU_JIT_WALL_TIME;
    ln.state = 0xabc0;
    void *srv_log = ln.log;
    float wall = 0.5f;
    strcpy(ln.log, "linked");
    memcpy(ln.slots, &(uint64_t){ 7 }, 8);    /* the size written back: what the driver filled */
    memcpy(ln.slots + 8, &srv_log, 8);
    memcpy(ln.slots + 16, &wall, 4);
    memcpy(ln.slots + 24 + 4, &(uint32_t){ sizeof ln.log }, 4);
    ln_client_vals[0] = JIT_SLOT(sizeof ln_client_log);
    ln_client_vals[1] = ln_client_log;
    memset(ln_client_log, 'x', sizeof ln_client_log);
    rm_ctx sctx = { .link_out = ln_out }, cctx = ctx;
    cctx.link_in = ln_in;
    void *cubin = NULL;
    size_t size = 0;
    int32_t ret = 0;
    uint32_t st;
    rm_wr w, rw;
    rm_call cc, sc;
    for (int known = 1; known >= 0; known--) {
        cushim_params_cuLinkComplete p = { (CUlinkState)(uintptr_t)(known ? 0xabc0 : 0xdef0), &cubin, &size };
        rm_wr_init(&w, 0);
        rm_wr_init(&rw, 0);
        assert_int_equal(rm_encode_call(cp, &p, &cctx, &w, &cc), RM_OK);
        assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, &sctx, &sc, &st), RM_OK);
        ret = 218;   /* failed: the link's logs still go (outputs 2) */
        assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
        assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &cctx, &st), RM_OK);
        rm_arena_reset(&arena);
        rm_wr_free(&w);
        rm_wr_free(&rw);
    }
    assert_string_equal(ln_client_log, "linked");
    assert_int_equal(ln_client_log[7], 'x');
    assert_ptr_equal(ln_client_vals[0], JIT_SLOT(7));
    assert_memory_equal(&ln_client_vals[2], &wall, 4);
    /* a server claiming a link this client does not know: refused */
    cushim_params_cuLinkComplete p = { (CUlinkState)(uintptr_t)0xabc0, &cubin, &size };
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    assert_int_equal(rm_encode_call(cp, &p, &cctx, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, &sctx, &sc, &st), RM_OK);
    ret = 218;
    assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
    ln.state = 0x1234;   /* the client's record is another link */
    assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &cctx, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
    rm_wr_free(&rw);
}

static void test_jitopts(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuModuleLoadDataEx");
    assert_int_equal(pl->cls, RM_CLASS_HAND);
    assert_int_equal(pl->p[sc_index(pl, "optionValues")].op, RM_OP_JITOPTS);
    assert_int_equal(pl->p[sc_index(pl, "optionValues")].func_param, sc_index(pl, "options"));
    const rm_plan *lc2 = plan_named("cuLinkCreate_v2");
    assert_int_equal(lc2->p[sc_index(lc2, "optionValues")].jit_retained, 1);
    assert_int_equal(plan_named("cuLinkAddData_v2")->cls, RM_CLASS_HAND);
    const rm_plan *lib = plan_named("cuLibraryLoadData");
    assert_int_equal(lib->p[sc_index(lib, "jitOptionsValues")].op, RM_OP_JITOPTS);
    assert_int_equal(lib->p[sc_index(lib, "libraryOptionValues")].op, RM_OP_JITOPTS);
    assert_string_equal(rm_op_name(RM_OP_JITOPTS), "jitopts");

    /* the logs, their sizes, the wall time, threads per block and values, both ways */
    char info[64], error[32];
    memset(info, 'x', sizeof info);
    memset(error, 'y', sizeof error);
    float wall_in = 9.5f;
    void *wall_slot = NULL;
    memcpy(&wall_slot, &wall_in, sizeof wall_in);
    CUjit_option o[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_WALL_TIME, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_MAX_REGISTERS,
                         CU_JIT_THREADS_PER_BLOCK, CU_JIT_TARGET_FROM_CUCONTEXT };
    void *v[] = { info, wall_slot, JIT_SLOT(40), JIT_SLOT(sizeof error), error, JIT_SLOT(0x1234567800000020ull),
                  JIT_SLOT(100), JIT_SLOT(7) };
    rm_wr w, rw;
    rm_call cc, sc;
    uint32_t st;
    int32_t ret = 0;
    rm_wr_init(&w, 0);
    rm_wr_init(&rw, 0);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 8, o, v, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
    void **sv = sc_ptr(pl, sc.params, sc_index(pl, "optionValues"));
    assert_non_null(sv);
    for (int k = 1; k < 8; k++)   /* the values byte for byte (the upper half of MAX_REGISTERS's slot too) */
        if (k != 4)
            assert_ptr_equal(sv[k], v[k]);
    assert_true(sv[0] != NULL && sv[0] != (void *)info && sv[4] != NULL && sv[4] != (void *)error);
    for (int k = 0; k < 40; k++)   /* the server's log buffers: the sizes given, zeroed (ASan checks the size) */
        assert_int_equal(((char *)sv[0])[k], 0);
    for (int k = 0; k < (int)sizeof error; k++)
        assert_int_equal(((char *)sv[4])[k], 0);
    strcpy(sv[0], "fake info: 8 options");   /* the driver writes the logs, sizes, wall time and threads */
    float wall = 0.25f;
    memcpy(&sv[1], &wall, sizeof wall);
    sv[2] = JIT_SLOT(21);
    sv[3] = JIT_SLOT(0);
    sv[6] = JIT_SLOT(96);
    assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
    assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &ctx, &st), RM_OK);
    assert_string_equal(info, "fake info: 8 options");
    assert_int_equal(info[21], 'x');   /* the text and its NUL, nothing past it */
    assert_int_equal(error[0], 0);
    assert_int_equal(error[1], 'y');
    assert_ptr_equal(v[2], JIT_SLOT(21));
    assert_ptr_equal(v[3], JIT_SLOT(0));
    assert_ptr_equal(v[6], JIT_SLOT(96));
    assert_memory_equal(&v[1], &wall, sizeof wall);
    assert_ptr_equal(v[5], JIT_SLOT(0x1234567800000020ull));   /* a value only: not written back */
    rm_arena_reset(&arena);
    rm_wr_reset(&w);
    rm_wr_reset(&rw);

    /* a failed compile: its error log still comes back (outputs 2), its size too */
    memset(error, 'y', sizeof error);
    v[2] = JIT_SLOT(40);
    v[3] = JIT_SLOT(sizeof error);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 8, o, v, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
    sv = sc_ptr(pl, sc.params, sc_index(pl, "optionValues"));
    memset(sv[4], 'e', sizeof error);   /* a driver filling the whole buffer, no NUL: exactly its size comes */
    sv[3] = JIT_SLOT(sizeof error);
    ret = 218;   /* CUDA_ERROR_INVALID_PTX */
    assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
    ret = 0;
    assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &ctx, &st), RM_OK);
    assert_int_equal(ret, 218);
    for (int k = 0; k < (int)sizeof error; k++)
        assert_int_equal(error[k], 'e');
    assert_int_equal(info[0], 0);   /* the info log the driver left empty: its NUL */
    /* a server claiming more log bytes than the buffer holds: refused */
    uint8_t bad[512];
    uint32_t len;
    memcpy(bad, rw.p, rw.len);
    assert_int_equal(bad[16], 2);   /* id, status, ret_size, the result; outputs 2; the info log's length */
    memcpy(&len, bad + 17, 4);
    assert_int_equal(len, 1);   /* its NUL */
    len = 41;
    memcpy(bad + 17, &len, 4);
    ret = 0;
    assert_int_equal(rm_decode_reply(&cc, &ret, bad, rw.len, &ctx, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    rm_wr_reset(&w);
    rm_wr_reset(&rw);

    /* refused in the client, with the option's name */
    const char *names[] = { "g" };
    CUjit_option r1[] = { CU_JIT_GLOBAL_SYMBOL_NAMES }, r2[] = { (CUjit_option)99 }, r3[] = { CU_JIT_INFO_LOG_BUFFER },
                 r4[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES },
                 r5[] = { CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER };
    void *rv1[] = { names }, *rv3[] = { info }, *rv4[] = { info, JIT_SLOT(8), JIT_SLOT(8) },
         *rv5[] = { JIT_SLOT(RM_MAX_JIT_LOG + 1), info };
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 1, r1, rv1, &w, &cc), RM_EUNSUPPORTED);
    assert_string_equal(cc.refused, "CU_JIT_GLOBAL_SYMBOL_NAMES");
    assert_non_null(cc.refused_why);
    rm_wr_reset(&w);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 1, r2, rv1, &w, &cc), RM_EUNSUPPORTED);
    rm_wr_reset(&w);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 1, r3, rv3, &w, &cc), RM_EUNSUPPORTED);
    assert_string_equal(cc.refused, "CU_JIT_INFO_LOG_BUFFER");
    rm_wr_reset(&w);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 3, r4, rv4, &w, &cc), RM_EUNSUPPORTED);   /* size twice */
    rm_wr_reset(&w);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 2, r5, rv5, &w, &cc), RM_EBOUNDS);   /* over the bound */
    rm_wr_reset(&w);
    CUjit_option many[RM_MAX_JITOPTS + 1];
    void *manyv[RM_MAX_JITOPTS + 1];
    for (int k = 0; k <= RM_MAX_JITOPTS; k++)
        many[k] = CU_JIT_OPTIMIZATION_LEVEL, manyv[k] = JIT_SLOT(1);
    assert_int_equal(jit_encode("cuModuleLoadDataEx", RM_MAX_JITOPTS + 1, many, manyv, &w, &cc), RM_EBOUNDS);
    rm_wr_reset(&w);
    /* cuLinkCreate keeps its values (the back end's rb_link.c): carried, and the link's later calls carry them back */
    CUjit_option lc[] = { CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_WALL_TIME };
    void *lcv[] = { JIT_SLOT(2), NULL };
    assert_int_equal(jit_encode("cuLinkCreate_v2", 2, lc, lcv, &w, &cc), RM_OK);
    rm_wr_reset(&w);
    test_link_section();

    /* a hostile client: a log's present byte other than 0 or 1, and every prefix of a good call */
    CUjit_option h[] = { CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER };
    void *hv[] = { JIT_SLOT(16), info };
    assert_int_equal(jit_encode("cuModuleLoadDataEx", 2, h, hv, &w, &cc), RM_OK);
    for (size_t len = 0; len < w.len; len++) {
        assert_int_not_equal(rm_decode_call(plans, w.p, len, &arena, NULL, &sc, &st), RM_OK);
        rm_arena_reset(&arena);
    }
    memcpy(bad, w.p, w.len);
    bad[w.len - 1] = 2;
    assert_int_equal(rm_decode_call(plans, bad, w.len, &arena, NULL, &sc, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    /* ... and a size option it changed after the client's check: the server sizes the buffer by what it decoded */
    uint64_t big = RM_MAX_JIT_LOG + 1;
    memcpy(bad, w.p, w.len);
    memcpy(bad + w.len - 9, &big, 8);
    assert_int_equal(rm_decode_call(plans, bad, w.len, &arena, NULL, &sc, &st), RM_EBOUNDS);
    rm_arena_reset(&arena);
    big = 3;
    memcpy(bad + w.len - 9, &big, 8);
    assert_int_equal(rm_decode_call(plans, bad, w.len, &arena, NULL, &sc, &st), RM_OK);
    sv = sc_ptr(pl, sc.params, sc_index(pl, "optionValues"));
    assert_ptr_equal(sv[0], JIT_SLOT(3));
    memset(sv[1], 'z', 3);   /* the 3 bytes it may write (ASan: the buffer is exactly those) */
    rm_arena_reset(&arena);
    rm_wr_reset(&w);

    /* a library: BINARY_IS_PRESERVED goes as 0 (the server's copy of the image lives for the call only) */
    static const char image[] = ".version 7.0\n";
    CUlibrary l;
    CUlibraryOption lo[] = { CU_LIBRARY_BINARY_IS_PRESERVED }, lo_bad[] = { CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE };
    void *lov[] = { JIT_SLOT(1) };
    cushim_params_cuLibraryLoadData lp = { &l, image, NULL, NULL, 0, lo, lov, 1 };
    assert_int_equal(rm_encode_call(lib, &lp, &ctx, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
    sv = sc_ptr(lib, sc.params, sc_index(lib, "libraryOptionValues"));
    assert_ptr_equal(sv[0], NULL);
    rm_arena_reset(&arena);
    rm_wr_reset(&w);
    lp.libraryOptions = lo_bad;
    assert_int_equal(rm_encode_call(lib, &lp, &ctx, &w, &cc), RM_EUNSUPPORTED);
    assert_string_equal(cc.refused, "CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE");
    rm_wr_free(&w);
    rm_wr_free(&rw);
}

/* ---- tensor maps: arrays counted by tensorRank, the map staged aligned ---- */
static void test_tensormap(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuTensorMapEncodeTiled"), *im = plan_named("cuTensorMapEncodeIm2col");
    assert_int_equal(pl->cls, RM_CLASS_HAND);
    assert_int_equal(plan_named("cuTensorMapEncodeIm2colWide")->cls, RM_CLASS_HAND);
    assert_int_equal(plan_named("cuTensorMapReplaceAddress")->cls, RM_CLASS_HAND);
    assert_int_equal(pl->p[sc_index(pl, "tensorMap")].dir, CUSHIM_DIR_OUT);
    assert_int_equal(plan_named("cuTensorMapReplaceAddress")->p[0].dir, CUSHIM_DIR_INOUT);
    CUtensorMap map;
    cuuint64_t dim[5] = { 1, 2, 3, 4, 5 }, str[4] = { 16, 32, 64, 128 };
    cuuint32_t box[5] = { 6, 7, 8, 9, 10 }, es[5] = { 1, 1, 2, 1, 1 };
    int lo[3] = { -1, -2, -3 }, up[3] = { 1, 2, 3 };
    static const struct { unsigned rank, dims, strides; } cases[] = {
        { 1, 1, 0 }, { 3, 3, 2 }, { 5, 5, 4 }, { 0, 0, 0 }, { 6, 0, 0 }, { 0xffffffffu, 0, 0 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rm_wr w, rw;
        rm_call cc, sc;
        uint32_t st;
        int32_t ret = 0;
        cushim_params_cuTensorMapEncodeTiled p = { &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, cases[k].rank,
                                                   (void *)(uintptr_t)0x7000, dim, str, box, es,
                                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                                   CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE };
        rm_wr_init(&w, 0);
        rm_wr_init(&rw, 0);
        assert_int_equal(rm_encode_call(pl, &p, &ctx, &w, &cc), RM_OK);
        assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
        assert_int_equal(sc.cap[sc_index(pl, "globalDim")], cases[k].dims);
        assert_int_equal(sc.cap[sc_index(pl, "globalStrides")], cases[k].strides);
        assert_int_equal(sc.cap[sc_index(pl, "boxDim")], cases[k].dims);
        assert_int_equal(sc.cap[sc_index(pl, "elementStrides")], cases[k].dims);
        assert_memory_equal(sc_ptr(pl, sc.params, sc_index(pl, "globalDim")), dim, cases[k].dims * 8);
        assert_memory_equal(sc_ptr(pl, sc.params, sc_index(pl, "globalStrides")), str, cases[k].strides * 8);
        assert_memory_equal(sc_ptr(pl, sc.params, sc_index(pl, "boxDim")), box, cases[k].dims * 4);
        uint8_t *smap = sc_ptr(pl, sc.params, sc_index(pl, "tensorMap"));
        assert_int_equal((uintptr_t)smap & 127u, 0);   /* cuda.h: aligned to 64 bytes at least */
        for (int b = 0; b < 128; b++)
            smap[b] = (uint8_t)(b * 7 + k);
        assert_int_equal(rm_encode_reply(&sc, 0, RM_ST_OK, &ret, &rw), RM_OK);
        assert_int_equal(rm_decode_reply(&cc, &ret, rw.p, rw.len, &ctx, &st), RM_OK);
        assert_memory_equal(&map, smap, 128);
        rm_arena_reset(&arena);
        rm_wr_free(&w);
        rm_wr_free(&rw);
    }
    /* im2col: the pixel box corners hold tensorRank - 2 ints */
    for (unsigned rank = 2; rank <= 5; rank++) {
        rm_wr w;
        rm_call cc, sc;
        uint32_t st;
        cushim_params_cuTensorMapEncodeIm2col p = { &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank,
                                                    (void *)(uintptr_t)0x7000, dim, str, lo, up, 8, 16, es,
                                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE };
        rm_wr_init(&w, 0);
        assert_int_equal(rm_encode_call(im, &p, &ctx, &w, &cc), RM_OK);
        assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
        assert_int_equal(sc.cap[sc_index(im, "pixelBoxLowerCorner")], rank - 2);
        assert_int_equal(sc.cap[sc_index(im, "pixelBoxUpperCorner")], rank - 2);
        assert_int_equal(sc.cap[sc_index(im, "globalStrides")], rank - 1);
        assert_memory_equal(sc_ptr(im, sc.params, sc_index(im, "pixelBoxUpperCorner")), up, (rank - 2) * 4);
        rm_arena_reset(&arena);
        rm_wr_free(&w);
    }
}

static void test_lconfig(void **state)
{
    (void)state;
    const rm_plan *pl = plan_named("cuOccupancyMaxActiveClusters");
    int ic = sc_index(pl, "config"), in = sc_index(pl, "numClusters");
    assert_int_equal(pl->p[ic].op, RM_OP_LCONFIG);
    assert_int_equal(pl->cls, RM_CLASS_FORWARD);
    assert_int_equal(plan_named("cuLaunchKernelEx")->p[0].op, RM_OP_LCONFIG);
    uint32_t ao, no;
    const cushim_struct_info *at;
    assert_true(rm_lconfig_fields(pl->p[ic].st, &ao, &no, &at));
    assert_int_equal(at->size, 72);   /* CUlaunchAttribute: id, pad, a 64-byte value */
    uint8_t cfg[64] __attribute__((aligned(16))), attrs[3 * 72] __attribute__((aligned(16)));
    uint8_t params[64] __attribute__((aligned(16))) = {0};
    int clusters = -1;
    rnd_fill(cfg, sizeof cfg);
    rnd_fill(attrs, sizeof attrs);
    int32_t ids[3] = { 4 /* CLUSTER_DIMENSION */, 2 /* COOPERATIVE */, 8 /* PRIORITY */ };
    for (int k = 0; k < 3; k++)
        memcpy(attrs + k * 72, &ids[k], 4);
    memcpy(cfg + ao, &(void *){ attrs }, 8);
    memcpy(cfg + no, &(uint32_t){ 3 }, 4);
    memcpy(params + pl->p[ic].offset, &(void *){ cfg }, 8);
    memcpy(params + pl->p[in].offset, &(void *){ &clusters }, 8);
    rm_call cc, sc;
    rm_wr w;
    uint32_t st;
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, params, NULL, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
    const uint8_t *scfg = sc_ptr(pl, sc.params, ic), *sattrs;
    memcpy(&sattrs, scfg + ao, 8);
    assert_memory_equal(scfg, cfg, ao);   /* the fields before attrs, then numAttrs */
    assert_memory_equal(scfg + no, cfg + no, 4);
    assert_memory_equal(sattrs, attrs, sizeof attrs);
    rm_arena_reset(&arena);
    /* numAttrs changed on the wire (the struct's copy says 3, the count 2): malformed */
    uint8_t forged[1024];
    assert_true(w.len <= sizeof forged);
    memcpy(forged, w.p, w.len);
    size_t cnt = w.len - sizeof attrs - 4;
    memcpy(forged + cnt, &(uint32_t){ 2 }, 4);
    assert_int_equal(rm_decode_call(plans, forged, w.len - 72, &arena, NULL, &sc, &st), RM_EMALFORMED);
    rm_arena_reset(&arena);
    /* a refused id forged into the message: refused by the server */
    memcpy(forged, w.p, w.len);
    memcpy(forged + cnt + 4 + 72, &(int32_t){ 13 /* DEVICE_UPDATABLE_KERNEL_NODE */ }, 4);
    assert_int_equal(rm_decode_call(plans, forged, w.len, &arena, NULL, &sc, &st), RM_EUNSUPPORTED);
    rm_arena_reset(&arena);
    for (size_t len = 0; len < w.len; len++) {
        assert_int_not_equal(rm_decode_call(plans, w.p, len, &arena, NULL, &sc, &st), RM_OK);
        rm_arena_reset(&arena);
    }
    rm_wr_free(&w);
    /* the client refuses the same, and an id no enum names, and too many */
    static const int32_t bad[] = { 13, 9999 };
    for (size_t b = 0; b < 2; b++) {
        memcpy(attrs + 72, &bad[b], 4);
        rm_wr_init(&w, 0);
        assert_int_equal(rm_encode_call(pl, params, NULL, &w, &cc), RM_EUNSUPPORTED);
        rm_wr_free(&w);
    }
    memcpy(cfg + no, &(uint32_t){ RM_MAX_LATTRS + 1 }, 4);
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, params, NULL, &w, &cc), RM_EBOUNDS);
    rm_wr_free(&w);
    memcpy(cfg + no, &(uint32_t){ 0 }, 4);   /* none: attrs may be anything, goes NULL */
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, params, NULL, &w, &cc), RM_OK);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &sc, &st), RM_OK);
    memcpy(&sattrs, (const uint8_t *)sc_ptr(pl, sc.params, ic) + ao, 8);
    assert_null(sattrs);
    rm_arena_reset(&arena);
    rm_wr_free(&w);
}

static int setup(void **state)
{
    (void)state;
    rm_meta m;
    rm_meta_generated(&m);
    plans = rm_plans_build(&m);
    return plans != NULL && rm_arena_init(&arena, 64u << 20) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rm_plans_free(plans);
    rm_arena_destroy(&arena);
    for (int i = 0; i < ninterned; i++)
        free(interned[i]);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_failed_call_keeps_outputs),
        cmocka_unit_test(test_ret_text),
        cmocka_unit_test(test_image_sizes),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_classification),
        cmocka_unit_test(test_async_class),
        cmocka_unit_test(test_zero_copy),
        cmocka_unit_test(test_cache_and_chunk_class),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_anonymous_members),
        cmocka_unit_test(test_vmm),
        cmocka_unit_test(test_attrs),
        cmocka_unit_test(test_attrs_many),
        cmocka_unit_test(test_lconfig),
        cmocka_unit_test(test_jitopts),
        cmocka_unit_test(test_tensormap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
