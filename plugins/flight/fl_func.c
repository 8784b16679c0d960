/*
 * fl_func.c - the kernels a flight record names: at a function's first launch on a thread (a miss in the
 * thread's cache of 64), its name (cuFuncGetName, cuKernelGetName) and its argument layout (cuFuncGetParamInfo,
 * cuKernelGetParamInfo: offset and size of each argument) are written once into the ring's function table; every
 * later launch copies its arguments' bytes by that layout after the params, once the driver has accepted the
 * launch (it has read them: plain copies). Names are never looked up on the launch path, and a dead process's
 * file still names its kernels. A module or library unloaded bumps a generation: a handle the driver reuses is
 * described again.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"

typedef int (*fl_getname_fn)(const char **name, void *handle);
typedef int (*fl_paraminfo_fn)(void *handle, size_t index, size_t *offset, size_t *size);

static struct {
    uint32_t id_fname, id_kname, id_fparam, id_kparam;   /* 0: this build has no such API */
    int32_t invalid_value;                              /* CUDA_ERROR_INVALID_VALUE */
    _Atomic int resolved;
    fl_getname_fn fname, kname;
    fl_paraminfo_fn fparam, kparam;
    pthread_mutex_t lock;       /* appending to the table */
    uint64_t *gens;             /* the generation each entry was described in (this process's) */
    uint32_t ngens;
} fl_fn = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Atomic uint64_t fl_func_gen = 1;

static uint32_t fl_id_of(const cushim_host *h, const char *name)
{
    const cushim_api_info *a = h->api_by_name(name);
    return a != NULL ? a->id : 0;
}

int fl_func_init(const cushim_host *h)
{
    uint32_t kind;
    fl_fn.id_fname = fl_id_of(h, "cuFuncGetName");
    fl_fn.id_kname = fl_id_of(h, "cuKernelGetName");
    fl_fn.id_fparam = fl_id_of(h, "cuFuncGetParamInfo");
    fl_fn.id_kparam = fl_id_of(h, "cuKernelGetParamInfo");
    if (h->result_by_name("CUDA_ERROR_INVALID_VALUE", &kind, &fl_fn.invalid_value) != CUSHIM_OK)
        fl_fn.invalid_value = 1;
    return 0;
}

/* The driver's functions, at the first description (not at init: a process that launches nothing never
   resolves them). */
static void fl_resolve(void)
{
    void *p;
    if (atomic_load_explicit(&fl_fn.resolved, memory_order_acquire))
        return;
#define FL_REAL(field, id, type)                                     \
    p = (id) != 0 ? fl_host->real(id) : NULL;                        \
    memcpy(&fl_fn.field, &p, sizeof p);                              \
    (void)sizeof(type)
    FL_REAL(fname, fl_fn.id_fname, fl_getname_fn);
    FL_REAL(kname, fl_fn.id_kname, fl_getname_fn);
    FL_REAL(fparam, fl_fn.id_fparam, fl_paraminfo_fn);
    FL_REAL(kparam, fl_fn.id_kparam, fl_paraminfo_fn);
#undef FL_REAL
    atomic_store_explicit(&fl_fn.resolved, 1, memory_order_release);
}

/* The argument layout through 'q' (cuFuncGetParamInfo or cuKernelGetParamInfo): 1 known (every argument
   described), 2 known but more than FL_FUNC_ARGS, 0 unknown (no such query, or it refused the handle). */
static uint32_t fl_layout(fl_paraminfo_fn q, void *handle, fl_func *fn)
{
    uint32_t i;
    if (q == NULL)
        return 0;
    for (i = 0; i < FL_FUNC_ARGS; i++) {
        size_t off = 0, size = 0;
        int rc = q(handle, i, &off, &size);
        if (rc == fl_fn.invalid_value && i > 0)
            break;   /* past the last argument */
        if (rc == fl_fn.invalid_value && i == 0)
            return 1;   /* a kernel without arguments (nargs 0) */
        if (rc != 0)
            return 0;
        if (off > 0xffff || size > 0xffff)
            return 0;
        fn->arg_off[i] = (uint16_t)off;
        fn->arg_size[i] = (uint16_t)size;
        fn->nargs = i + 1;
    }
    if (i == FL_FUNC_ARGS) {
        size_t off, size;
        return q(handle, i, &off, &size) == 0 ? 2 : 1;
    }
    return 1;
}

/* The table entry of 'handle' described in this generation, appended if there is none. UINT32_MAX: the table is
   full (counted). */
static __attribute__((noinline)) uint32_t fl_describe(fl_ring *rg, uint64_t handle, uint64_t seq, uint64_t gen)
{
    fl_head *h = rg->head;
    fl_func *tab = (fl_func *)((char *)rg->base + h->off_funcs);
    uint32_t used, idx = UINT32_MAX;
    const char *name = NULL;
    pthread_mutex_lock(&fl_fn.lock);
    used = atomic_load(&h->funcs_used);
    if (fl_fn.gens == NULL) {
        fl_fn.gens = calloc(h->nfuncs, sizeof *fl_fn.gens);
        fl_fn.ngens = fl_fn.gens != NULL ? h->nfuncs : 0;
    }
    for (uint32_t i = used; i-- > 0;)
        if (atomic_load_explicit(&tab[i].handle, memory_order_relaxed) == handle && i < fl_fn.ngens &&
            fl_fn.gens[i] == gen) {
            idx = i;
            goto out;
        }
    if (used >= h->nfuncs || used >= fl_fn.ngens) {
        atomic_fetch_add(&h->funcs_lost, 1);
        goto out;
    }
    fl_resolve();
    fl_func *fn = &tab[used];
    memset((char *)fn + sizeof fn->handle, 0, sizeof *fn - sizeof fn->handle);
    fn->first_seq = seq;
    if ((fl_fn.fname == NULL || fl_fn.fname(&name, (void *)(uintptr_t)handle) != 0) &&
        (fl_fn.kname == NULL || fl_fn.kname(&name, (void *)(uintptr_t)handle) != 0))
        name = NULL;
    if (name != NULL)
        strncpy(fn->name, name, FL_FUNC_NAME - 1);
    fn->args_known = fl_layout(fl_fn.fparam, (void *)(uintptr_t)handle, fn);
    if (fn->args_known == 0) {
        fn->nargs = 0;
        fn->args_known = fl_layout(fl_fn.kparam, (void *)(uintptr_t)handle, fn);
    }
    fl_fn.gens[used] = gen;
    atomic_store_explicit(&fn->handle, handle, memory_order_release);
    atomic_store_explicit(&h->funcs_used, used + 1, memory_order_release);
    idx = used;
out:
    pthread_mutex_unlock(&fl_fn.lock);
    return idx;
}

static inline uint32_t fl_hash(uint64_t p)
{
    return (uint32_t)((p * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The arguments' bytes after the params, by the function's layout: where the record has room, 8- and 4-byte
   arguments (pointers, ints) in line; then the record finished with its flags 'f' and FL_R_ARGS... The general
   case (any size, room checked an argument), out of line. */
static __attribute__((noinline)) void fl_args_copy(const fl_func *fn, void *const *kp, fl_rec *r, uint16_t f)
{
    unsigned char *out = (unsigned char *)(r + 1) + fl_pad8(r->params_len);
    uint32_t room = FL_REC_DATA - fl_pad8(r->params_len), used = 0, trunc = 0, nargs = fn->nargs;
    for (uint32_t i = 0; i < nargs; i++) {
        uint32_t off = fn->arg_off[i], size = fn->arg_size[i];
        const void *src = kp[i];
        if (off + size > room || src == NULL) {
            if (off + size <= room)
                memset(out + off, 0, size);   /* not a former record's bytes */
            trunc = 1;
            continue;
        }
        if (size == 8)   /* pointers and 64-bit scalars, ints: in line */
            __builtin_memcpy(out + off, src, 8);
        else if (size == 4)
            __builtin_memcpy(out + off, src, 4);
        else
            memcpy(out + off, src, size);
        if (off + size > used)
            used = off + size;
    }
    r->args_len = (uint16_t)used;
    f |= (uint16_t)(FL_R_ARGS | (trunc || fn->args_known == 2 ? FL_R_ARGS_TRUNC : 0));
    atomic_store_explicit(&r->flags, f, memory_order_release);
}

/* A miss in the thread's cache: the function's table entry (described now if need be) and its copy plan in 'e',
   then the launch's arguments as on a hit. */
static __attribute__((noinline)) void fl_func_args_miss(fl_thread *t, const fl_plan *pl, const cushim_call *call,
                                                        fl_rec *r, uint16_t f, fl_fcache *e, uint64_t handle,
                                                        uint64_t gen)
{
    uint32_t idx = fl_describe(t->ring, handle, call->seq, gen), end = 0, m4 = 0, simple;
    const fl_func *fn;
    if (idx == UINT32_MAX) {
        atomic_store_explicit(&r->flags, f, memory_order_release);
        return;
    }
    fn = &t->funcs[idx];
    simple = fn->args_known == 1 && fn->nargs <= 32;
    for (uint32_t i = 0; simple && i < fn->nargs; i++) {
        uint32_t sz = fn->arg_size[i];
        if (sz != 4 && sz != 8)
            simple = 0;
        if (sz == 4)
            m4 |= 1u << i;
        if (fn->arg_off[i] + sz > end)
            end = fn->arg_off[i] + sz;
    }
    e->key = handle;
    e->gen = gen;
    e->fn = fn;
    e->m4 = m4;
    e->end = (uint16_t)(end <= 0xffff ? end : 0xffff);
    e->nargs = (uint8_t)(simple ? fn->nargs : 0);
    e->simple = (uint8_t)simple;
    fl_func_args(t, pl, call, r, f);   /* a hit now */
}

/* The usual kernel's arguments (e->simple: pointers and ints, all in the record's room): no size or room test
   an argument - the same bytes as fl_args_copy. 0 when one is NULL (the driver accepted it anyway): then
   fl_args_copy says what is missing. */
static inline __attribute__((always_inline)) int fl_args_simple(const fl_fcache *e, const fl_func *fn,
                                                                void *const *kp, fl_rec *r)
{
    unsigned char *out = (unsigned char *)(r + 1) + fl_pad8(r->params_len);
    uint32_t m4 = e->m4, n = e->nargs;
    for (uint32_t i = 0; i < n; i++, m4 >>= 1) {
        const void *src = kp[i];
        if (__builtin_expect(src == NULL, 0))
            return 0;
        if (m4 & 1)
            __builtin_memcpy(out + fn->arg_off[i], src, 4);
        else
            __builtin_memcpy(out + fn->arg_off[i], src, 8);
    }
    r->args_len = e->end;
    return 1;
}

/* Only tail calls out of the usual case (a hit, a kernel of pointers and ints): no registers to save. */
void fl_func_args(fl_thread *t, const fl_plan *pl, const cushim_call *call, fl_rec *r, uint16_t f)
{
    const unsigned char *pv = call->params;
    uint64_t handle, gen = atomic_load_explicit(&fl_func_gen, memory_order_acquire);
    void *const *kp;
    fl_fcache *e;
    const fl_func *fn;
    memcpy(&handle, pv + pl->func_off, sizeof handle);
    memcpy(&kp, pv + pl->args_off, sizeof kp);
    if (handle == 0 || kp == NULL)   /* no function, or the 'extra' form: nothing described to copy */
        goto out;
    e = &t->cache[fl_hash(handle) & (FL_FCACHE - 1)];
    if (__builtin_expect(e->key != handle || e->gen != gen, 0)) {
        fl_func_args_miss(t, pl, call, r, f, e, handle, gen);
        return;
    }
    fn = e->fn;
    if (__builtin_expect(e->simple, 1) && e->end <= FL_REC_DATA - fl_pad8(r->params_len) &&
        __builtin_expect(fl_args_simple(e, fn, kp, r), 1)) {
        f |= FL_R_ARGS;
        goto out;
    }
    if (fn->args_known != 0) {
        fl_args_copy(fn, kp, r, f);
        return;
    }
out:
    atomic_store_explicit(&r->flags, f, memory_order_release);
}

void fl_func_unloaded(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user;
    (void)slot;
    if (cushim_call_result(call) == 0)
        atomic_fetch_add_explicit(&fl_func_gen, 1, memory_order_release);
}

void fl_func_fork_child(void)
{
    /* the child's file has a table of its own: every cached index is the parent's */
    atomic_fetch_add(&fl_func_gen, 1);
    pthread_mutex_init(&fl_fn.lock, NULL);
    free(fl_fn.gens);
    fl_fn.gens = NULL;
    fl_fn.ngens = 0;
}
