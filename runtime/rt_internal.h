/*
 * rt_internal.h - declarations shared by the modules of the runtime (libcushim.so).
 *
 * Module prefixes: rt_ dispatch core (dispatch.c), hk_ hook chains and groups
 * (hooks.c), ep_ reclamation epochs (epoch.c), th_ per-thread records
 * (thread.c), clk_ the cheap clock (clock.c), sel_ selectors (select.c), op_
 * plugin options (options.c), pl_ plugin records and lifecycle (plugins.c),
 * ldr_ CUSHIM_PLUGINS (loader.c), hs_ the host table (host.c), lc_ process
 * initialisation, exit and fork (lifecycle.c, once.c), cnt_ call counter
 * (counts.c), cfg_ configuration (config.c), log_ logging (log.c), elf_ ELF
 * symbol tables of loaded objects (elfsym.c), rl_ real libraries and the real
 * dlsym (reallib.c), dl_ the dlsym/dlvsym decision (dlsym.c, dlsym_entry.c),
 * gp_ cuGetProcAddress interposition (getproc.c), api_ metadata look-ups
 * (api.c). Nothing here is exported from the library.
 */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"
#include "cushim_api_ids.h"

#define RT_HIDDEN __attribute__((visibility("hidden")))
#define CUSHIM_EXPORT __attribute__((visibility("default")))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The globals a hooked call reads (the clock's anchor, the lifecycle, unwind and epoch flags): all in one
   section, so they share a few lines of one page instead of one line and one page each among the rest of
   .data and .bss. A call made between stretches of the program's own work (PyTorch's Python between its CUDA
   calls) finds little of the shim in the near caches and TLBs: bench/cpu/footprint.sh counts the lines and
   pages a call touches. The linker gathers the section from every object (an orphan section of its own). */
#define RT_HOT __attribute__((section(".cushim_hot")))
/* The functions every hooked call runs, for the same reason: GCC puts them in .text.hot, which the linker
   gathers at the start of .text; each starts a cache line, so that it runs in as few lines as its code needs
   (a line costs a call ~2-3 ns in a real program: docs/benchmarks.md "The floor of any recorder"). */
#define RT_HOT_FN __attribute__((hot, aligned(64)))

/* Fences. ThreadSanitizer does not model atomic_thread_fence (GCC rejects it
   with -fsanitize=thread): there a seq_cst read-modify-write of a dummy stands
   in, which on x86 is the same full barrier. */
#if defined(__SANITIZE_THREAD__)
extern _Atomic int rt_fence_dummy;
#define RT_FENCE_SEQ_CST() ((void)atomic_fetch_add_explicit(&rt_fence_dummy, 0, memory_order_seq_cst))
#define RT_FENCE_ACQUIRE() ((void)atomic_fetch_add_explicit(&rt_fence_dummy, 0, memory_order_acq_rel))
#else
#define RT_FENCE_SEQ_CST() atomic_thread_fence(memory_order_seq_cst)
#define RT_FENCE_ACQUIRE() atomic_thread_fence(memory_order_acquire)
#endif

/* ---- generated metadata (cushim_meta.c) ---- */
extern const cushim_api_info cushim_gen_apis[];
extern const uint32_t cushim_gen_api_count;
extern const uint16_t cushim_gen_by_name[];
extern const int16_t cushim_gen_index_of_id[CUSHIM_API_ID_LIMIT];
/* type metadata (types.c) */
extern const cushim_enum_info cushim_gen_enums[];
extern const uint32_t cushim_gen_enum_count;
extern const cushim_struct_info cushim_gen_structs[];
extern const uint32_t cushim_gen_struct_count;
extern const uint32_t cushim_gen_enum_name_count;
extern const char *const cushim_gen_enum_names[];
extern const uint16_t cushim_gen_enum_name_index[];
extern const uint32_t cushim_gen_enum_const_count;
extern const char *const cushim_gen_enum_const_names[];
extern const uint16_t cushim_gen_enum_const_at[][2];
extern const uint16_t cushim_gen_struct_by_name[];

/* types.c */
const cushim_enum_info *types_enum_by_name(const char *type_name);
const char *types_enum_value_name(const cushim_enum_info *e, int64_t value);
int types_enum_constant(const char *constant_name, int64_t *value, const cushim_enum_info **type);
const cushim_struct_info *types_struct_by_name(const char *type_name);

/* api.c */
int api_index_by_name(const char *name);          /* index into cushim_gen_apis or -1 */
const cushim_api_info *api_info(uint32_t id);      /* NULL if absent */
const cushim_api_info *api_by_name(const char *name);   /* exported name; NULL if absent */
const cushim_alloc_role *rt_alloc_role(uint32_t api_id); /* roles.c; NULL if none */
uint32_t cushim_api_id_limit(void);                /* exported: copies of the shim recognise each other */

/* ---- the interposed libraries (libs.c, from cushim_libs.inc) ---- */
#define LB_MAX_NAMES 8
typedef struct lb_library {
    int value;                                /* cushim_library */
    const char *name;                         /* "driver": selectors lib:NAME */
    int ret_kind;                             /* cushim_ret_kind of its status type */
    long long success, fail, fail_init;       /* fail: real function missing; fail_init: failed closed */
    const char *sonames[LB_MAX_NAMES];        /* NULL-terminated */
    const char *prefixes[LB_MAX_NAMES];       /* NULL-terminated */
    const char *entry;                        /* its own entry-point lookup, or NULL */
    int by_default;                           /* interposed unless CUSHIM_LIBS says otherwise */
} lb_library;
extern const lb_library lb_libraries[];
extern const unsigned lb_nlibraries;
const lb_library *lb_by_value(int value);
const lb_library *lb_by_ret_kind(int kind);
long long lb_fail_value(int ret_kind, int mode);
void lb_fail_write(int ret_kind, int mode, void *out, size_t size);   /* wrap.h's RT_FAIL */
int lb_name_may_be_ours(const char *name);
const char *lb_symver(int value);   /* "libcudart.so.13": its exports' version node, or NULL */
int lb_chosen(int value);   /* CUSHIM_LIBS (default: every library not 'opt-in') */

/* ---- once (once.c) ---- */
/* Like pthread_once, but a call on the thread running the routine (a signal
   handler, a plugin's init calling CUDA) returns 0 at once instead of waiting
   for itself, and a forked child whose parent was inside the routine on
   another thread runs it again instead of waiting for a thread that does not
   exist. State: 0 idle, 1 done, else (pid << 32) | tid of the runner. */
typedef struct rt_once_t {
    _Atomic uint64_t state;
} rt_once_t;
#define RT_ONCE_INIT { 0 }
int rt_once(rt_once_t *once, void (*fn)(void));   /* 1: done; 0: re-entered by the runner */
/* fork() child: a routine this thread was running in the parent stays ours. */
void rt_once_after_fork(rt_once_t *once, uint32_t parent_tid);
uint32_t rt_sys_gettid(void);
/* This thread's kernel tid, cached (initial-exec TLS, 4 bytes; 0 until asked).
   In once.c, which needs nothing else of the runtime (config.c links it alone
   into its fuzzing harness). */
extern __thread uint32_t rt_tid_cache __attribute__((tls_model("initial-exec")));

/* ---- per-thread records (thread.c) ---- */
#define TH_MAX_KEYS 64            /* plugin TLS keys (host->tls_create) */
struct rt_frame;
typedef struct th_rec {
    /* Reader state of the reclamation epochs, written only by the owner with
       single instructions (signal-safe), read by writers: (epoch << 16) | nest. */
    uint64_t ctr;
    struct rt_frame *top;         /* innermost hooked call in progress on this thread */
    _Atomic uint32_t in_cb;       /* 1 while hook callbacks run (exit waits for 0) */
    _Atomic uint32_t in_use;      /* claimed by a live thread */
    _Atomic uint32_t tid;         /* the owner's kernel thread id */
    uint32_t id;                  /* record number, from 1: high bits of seq */
    uint64_t seq_count;           /* calls numbered on this record */
    void **uw_head;               /* glibc's cleanup list head of the owner (unwind.c) */
    struct th_rec *next;          /* every record ever made; never unlinked */
    void *tls[TH_MAX_KEYS];       /* plugin per-thread values */
} __attribute__((aligned(64))) th_rec;

/* Initial-exec: no __tls_get_addr on the call path; 8 bytes (and once.c's 4)
   fit the static TLS surplus glibc keeps for dlopen'ed libraries (drop-in mode). Written rarely:
   what changes per call lives in the record (a store and reload through %fs
   does not forward quickly on some CPUs). */
typedef struct rt_tls_t {
    th_rec *rec;                  /* this thread's record, NULL until needed */
} rt_tls_t;
extern __thread rt_tls_t rt_tls __attribute__((tls_model("initial-exec")));

th_rec *th_rec_get(void);         /* this thread's record, registered on first use; NULL: no memory */
th_rec *th_rec_first(void);       /* all records, for scans (follow ->next) */
uint32_t th_tid(void);            /* cached kernel thread id */
/* Unique in the process, never 0: (record id << 40) | calls numbered on it.
   One non-locked xadd: atomic with respect to this thread's signal handlers,
   and only the owner writes seq_count. */
static inline uint64_t th_seq(th_rec *r)
{
    uint64_t n = 1;
#if defined(__SANITIZE_THREAD__)
    n = __atomic_fetch_add(&r->seq_count, 1, __ATOMIC_RELAXED);
#else
    __asm__ volatile("xaddq %0, %1" : "+r"(n), "+m"(r->seq_count));
#endif
    return ((uint64_t)r->id << 40) | ((n + 1) & ((1ull << 40) - 1));
}
void th_key_init(void);           /* thread-exit destructor; at initialisation */
void th_after_fork(void);         /* fork child: other threads' records are free */
int th_tls_create(cushim_plugin *owner, void (*destructor)(void *), uint32_t *key);
void *th_tls_get(uint32_t key);
int th_tls_set(uint32_t key, void *value);
void th_tls_release(cushim_plugin *owner);   /* a plugin that failed: its keys die */

/* ---- reclamation epochs (epoch.c) ---- */
#define EP_NEST_BITS 16
#define EP_NEST_MASK ((1ull << EP_NEST_BITS) - 1)
extern _Atomic uint64_t ep_epoch;
extern int ep_fence;              /* 1: readers fence (no membarrier(2)) */
void ep_init(void);
uint64_t ep_advance(void);        /* a new epoch; readers starting later see all prior publications */
/* The smallest epoch of a reader inside a section (UINT64_MAX if none), after a
   barrier that makes every reader's entry visible. 'skip' is not looked at. */
uint64_t ep_min_active(const th_rec *skip);
/* Waits until no reader other than 'skip' is inside a section begun before 'e'. */
void ep_wait(uint64_t e, const th_rec *skip);
int ep_barrier(void);             /* membarrier(2) or a fence; 0 on success */
void ep_poison(void);             /* a reader's state was lost: never free again */
int ep_poisoned(void);
/* A record inside a section whose thread no longer exists (it left by
   SYS_exit, not pthread_exit): reset it, so it holds nobody back. */
int ep_reap(th_rec *r);

/* Reader side, on the call path: signal-safe (single-instruction updates of
   the owner's own counter), no locked instruction unless ep_fence. */
static inline void ep_add_(uint64_t *p, int64_t d)
{
#if defined(__SANITIZE_THREAD__)
    __atomic_fetch_add(p, (uint64_t)d, __ATOMIC_ACQ_REL);
#else
    __asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(d) : "memory");
#endif
}
static inline void ep_enter(th_rec *r)
{
    uint64_t c = __atomic_load_n(&r->ctr, __ATOMIC_RELAXED);
    uint64_t e = atomic_load_explicit(&ep_epoch, memory_order_acquire);
    /* Outermost (no level held: the epoch now, level 1) or nested (one level more): chosen without a branch, so
       that neither case runs a code line of its own (an outermost and a nested call alternate in cudart's
       queries). A signal handler between the load and the store enters and leaves as many levels (a handler
       that jumps out has its levels dropped by the frames' cleanups): the value stored is still right. */
    uint64_t n = (c & EP_NEST_MASK) ? c + 1 : (e << EP_NEST_BITS) | 1;
    __atomic_store_n(&r->ctr, n, __ATOMIC_RELAXED);
    if (RT_UNLIKELY(ep_fence))
        RT_FENCE_SEQ_CST();
    else
        atomic_signal_fence(memory_order_seq_cst);
}
static inline void ep_exit(th_rec *r)
{
    if (RT_LIKELY(__atomic_load_n(&r->ctr, __ATOMIC_RELAXED) & EP_NEST_MASK))   /* 0: reset (rt_live_top) */
        ep_add_(&r->ctr, -1);   /* x86 stores are releases; the asm is a compiler barrier */
}
static inline int ep_inside(const th_rec *r)
{
    return r != NULL && (__atomic_load_n(&r->ctr, __ATOMIC_RELAXED) & EP_NEST_MASK) != 0;
}

/* ---- hook chains and groups (hooks.c) ---- */
typedef struct hk_entry {
    cushim_pre_fn pre;
    cushim_post_fn post;
    void *user;
    int32_t priority;
    uint32_t flags;               /* CUSHIM_HOOK_* */
    uint64_t group;
} hk_entry;

/* Immutable once published (but 'refs'); freed after a grace period (epoch.c). Shared by every API whose
   hooks are the same (hooks.c): one line for all the APIs a plugin hooks alike. 24 bytes of header: a chain
   of one hook is one cache line (hk_alloc aligns it). */
typedef struct hk_chain {
    union {
        uint64_t refs;               /* live: the slots that hold it (under the hook mutex) */
        struct hk_chain *retired_next;   /* retired (refs 0): limbo link     */
    };
    uint64_t retired_epoch;          /* free once no reader is older         */
    uint32_t n;                      /* number of hooks                      */
    uint32_t flags;                  /* union of the entries' CUSHIM_HOOK_*, and HK_HAS_PRE */
    hk_entry e[];
} hk_chain;

#define HK_HAS_PRE 0x80000000u       /* chain flag: some entry has a pre hook (hk_publish sets it) */
extern const hk_chain hk_count_only;   /* counter on, no hook; shared, never freed */
void hk_install_counting(void);        /* every API gets at least the counting chain */
void hk_reset_after_fork(void);        /* fork child */
int hk_add(cushim_plugin *owner, const cushim_hook_spec *spec, uint64_t *group);
int hk_remove(cushim_plugin *owner, uint64_t group);
void hk_remove_owner(cushim_plugin *owner);   /* undo: every group of a plugin */
int hk_sync(void);
void hk_stats(uint64_t *live_chains, uint64_t *limbo_chains);   /* tests */
void hk_lock(void);
void hk_unlock(void);

/* ---- longjmp detection (unwind.c) ---- */
enum { UW_NONE = 0, UW_GLIBC = 1, UW_INLINE = 2 };
extern int uw_mode;
extern long uw_off;
/* glibc's old-style cleanup buffers: exported (GLIBC_2.2.5 and 2.34); pthread.h
   declares only the struct. */
extern void _pthread_cleanup_push(struct _pthread_cleanup_buffer *buffer, void (*routine)(void *), void *arg);
extern void _pthread_cleanup_pop(struct _pthread_cleanup_buffer *buffer, int execute);
static inline char *uw_thread_pointer(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}
static inline void uw_push_mode(struct _pthread_cleanup_buffer *b, void (*fn)(void *), void *arg, int mode,
                                void **head)
{
    if (RT_LIKELY(mode == UW_INLINE)) {
        b->__routine = fn;
        b->__arg = arg;
        b->__prev = *head;
        atomic_signal_fence(memory_order_seq_cst);   /* complete before a handler can see it */
        *head = b;
    } else if (mode == UW_GLIBC) {
        _pthread_cleanup_push(b, fn, arg);
    }
}
/* 'head' is the calling thread's list head (th_rec.uw_head): reading the
   thread pointer costs a %fs: load per push and pop otherwise. */
static inline void uw_push(struct _pthread_cleanup_buffer *b, void (*fn)(void *), void *arg, void **head)
{
    uw_push_mode(b, fn, arg, uw_mode, head);
}
static inline void uw_pop(struct _pthread_cleanup_buffer *b, void **head)
{
    if (RT_LIKELY(uw_mode == UW_INLINE))
        *head = b->__prev;
    else if (uw_mode == UW_GLIBC)
        _pthread_cleanup_pop(b, 0);
}

/* ---- dispatch (dispatch.c) ---- */
/* Everything the call path reads of one API, in 32 bytes: one cache line (bench/cpu/footprint.sh). */
typedef struct rt_slot {
    /* What the exported wrapper tail-calls: 'real' when resolved, the slot has no chain and the shim has not
       failed closed; rt_first_of[id] while the real is unknown; else rt_slow_of[id]. Recomputed lock-free by
       rt_fast_update after any of its inputs changed. */
    _Atomic(void *) fast;
    _Atomic(void *) real;                  /* the real function (or a cuGetProcAddress handler) */
    _Atomic(const hk_chain *) chain;       /* NULL: no hook, no counter       */
    int16_t index1;                        /* 1 + the index in cushim_gen_apis; 0 until rt_slots_index */
    _Atomic uint8_t foreign;               /* forwarded untouched (dispatch.c rt_check_foreign) */
} __attribute__((aligned(32))) rt_slot;

/* wrapper_table.c */
extern rt_slot rt_slots[CUSHIM_API_ID_LIMIT];            /* 'fast' starts at the first entry */
extern void *const rt_wrapper_of[CUSHIM_API_ID_LIMIT];   /* our exported wrapper       */
extern void *const rt_slow_of[CUSHIM_API_ID_LIMIT];      /* its slow path              */
extern void *const rt_first_of[CUSHIM_API_ID_LIMIT];     /* its first entry (first_entry.c) */
void *rt_first_target(uint32_t id);   /* where a first call goes: the real function or the slow path */
void rt_slots_index(void);            /* every slot's index1 (initialisation, before lc_ready) */
void rt_fast_update(uint32_t id);
void rt_fast_update_all(void);

enum { RT_MODE_DIRECT = 0, RT_MODE_HOOKED = 1, RT_MODE_SKIPPED = 2, RT_MODE_FAIL = 3, RT_MODE_FAIL_INIT = 4 };

/* One hooked call on this thread's stack (wrap.h). */
typedef struct rt_frame {
    cushim_call call;                   /* what hooks see                            */
    struct rt_frame *saved_top;         /* rec->top at entry, restored at exit       */
    const hk_chain *chain;              /* snapshot used for pre and post            */
    th_rec *rec;
    uint32_t npre;                      /* pre hooks reached (post hooks run for these) */
    uint8_t in_hook;                    /* callbacks running: CUDA calls go straight through */
    uint8_t active;                     /* pushed; cleared by rt_end / rt_abandon    */
    uint8_t saved_in_cb;
    struct _pthread_cleanup_buffer cbuf;   /* glibc runs rt_abandon on a longjmp past us */
    uint64_t slots[CUSHIM_MAX_HOOKS];
} rt_frame;

/* The slow path's decision (RT_MODE_*; f->call.real is the function to call);
   for a hooked call the frame is pushed and the pre hooks have run. */
RT_HOT_FN int rt_enter(rt_frame *f, uint32_t id, void *params, void *retval);
void rt_longjmp_probe(void);                     /* at initialisation: how longjmps are seen */
RT_HOT_FN void rt_post(rt_frame *f);             /* post hooks; pops the frame */
void rt_end(rt_frame *f);                        /* pops a frame left pushed (unwinding) */
static inline void rt_frame_cleanup(rt_frame *f)
{
    if (RT_UNLIKELY(f->active))
        rt_end(f);
}
void *rt_resolve(uint32_t id);                   /* slot real, resolving it once */
int rt_call_real(uint32_t id, void *params, void *retval);   /* invoke.c: host->call_real */
void *rt_lib_real(uint32_t id);                  /* the library's own function */
void rt_record_real(uint32_t id, void *lib_fn);
const cushim_call *rt_current_call(void);
int rt_in_hook(void);                            /* a hook callback runs on this thread */
/* Fail closed: every CUDA call (but the cuGetProcAddress family) returns an
   initialisation error; 'why' is logged again at the first refused call. */
void rt_fail_closed(const char *why);
int rt_failed(void);
void rt_hooks_off(void);                         /* at exit, before plugins flush */
int rt_hooks_are_off(void);
void rt_set_disabled(int disabled);

/* ---- the cheap clock (clock.c) ---- */
typedef struct clk_state_t {
    _Atomic uint32_t seq;        /* odd: the anchor is being renewed */
    _Atomic int mode;            /* 0 clock_gettime, 1 calibrating, 2 tsc */
    _Atomic uint64_t tsc0, ns0;  /* anchor */
    _Atomic uint64_t mult;       /* ns per tick << 32 */
    _Atomic uint64_t period;     /* ticks between renewals; 0 unless mode 2 */
    _Atomic uint64_t width0;     /* the anchor's uncertainty: ticks between the TSC reads around its time */
} __attribute__((aligned(64))) clk_state_t;
extern clk_state_t clk;
extern uint64_t clk_renew_ns;   /* the anchor's lifetime, 1 s (a unit test shortens it) */
void clk_init(void);
uint64_t clk_renew(void);   /* clock_gettime, renewing the anchor when due */
static inline uint64_t clk_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
/* The anchor snapshot taken with seqlock value 's' extrapolated to 'tsc': 1 and *ns when 's' was even, the
   snapshot held (the value unchanged after it) and the anchor is still valid at 'tsc'; else 0. */
static inline int clk_extrapolate(uint32_t s, uint64_t tsc, uint64_t *ns)
{
    uint64_t d = tsc - atomic_load_explicit(&clk.tsc0, memory_order_relaxed);
    if (RT_LIKELY(d < atomic_load_explicit(&clk.period, memory_order_relaxed) && !(s & 1))) {
        uint64_t v = atomic_load_explicit(&clk.ns0, memory_order_relaxed) +
                     (uint64_t)(((unsigned __int128)d * atomic_load_explicit(&clk.mult, memory_order_relaxed)) >> 32);
        RT_FENCE_ACQUIRE();
        if (RT_LIKELY(atomic_load_explicit(&clk.seq, memory_order_relaxed) == s)) {
            *ns = v;
            return 1;
        }
    }
    return 0;
}
/* CLOCK_MONOTONIC ns from the TSC (a seqlock snapshot of the anchor; clk_renew when it is being renewed or due). */
static inline uint64_t clk_now_ns(void)
{
    uint32_t s = atomic_load_explicit(&clk.seq, memory_order_acquire);
    uint64_t ns;
    if (RT_LIKELY(clk_extrapolate(s, clk_rdtsc(), &ns)))
        return ns;
    return clk_renew();
}

/* ---- selectors (select.c) ---- */
int sel_select(const char *selector, uint32_t *ids, uint32_t cap, char *err, size_t errlen);
int sel_match(const char *selector, uint32_t api_id);

/* ---- plugin options (options.c) ---- */
typedef struct op_value {
    uint32_t decl;                      /* index into the declared options */
    char *text;
} op_value;
typedef struct op_set {
    const cushim_option *decl;
    uint32_t ndecl;
    uint32_t nvalues;
    op_value *values;                   /* in the order given */
} op_set;
/* Declarations and their defaults valid? Then parse "k=v,k=v" ('\' escapes)
   into 's'. On failure 'err' names the option, the value and the expectation. */
int op_load(op_set *s, const cushim_option *decl, const char *text, char *err, size_t errlen);
void op_free(op_set *s);
const cushim_option *op_decl(const op_set *s, const char *name, uint32_t *index);
const char *op_text(const op_set *s, uint32_t decl, uint32_t nth);   /* nth given, else default */
uint32_t op_count(const op_set *s, uint32_t decl);
int op_parse_int(const char *v, int64_t *out);
int op_parse_bool(const char *v, int *out);
int op_parse_double(const char *v, double *out);
int op_parse_bytes(const char *v, uint64_t *out);

/* ---- plugins (plugins.c) ---- */
enum { PL_LOADING = 1, PL_ACTIVE = 2, PL_FAILED = 3, PL_FLUSHED = 4 };
struct cushim_plugin {
    const cushim_plugin_def *def;
    char name[64];
    char *path;                         /* NULL: registered in-process */
    int optional;                       /* '?' in CUSHIM_PLUGINS */
    int from_env;                       /* loaded from CUSHIM_PLUGINS (failures fail closed) */
    _Atomic int state;
    uint32_t loader_tid;                /* thread running init */
    op_set opts;
    void *data;
};
int pl_valid(const cushim_plugin *p);   /* one of ours (pointer comparison only) */
int pl_state(const cushim_plugin *p);
int pl_loaded(const char *name);        /* a plugin of that name is loading or active */
/* Validate 'def' (size, ABI, name, options), create the record, run init. On
   failure everything it registered is undone, 'err' says why, and *out is the
   failed record (or NULL when none was made). */
int pl_load(const cushim_plugin_def *def, const char *options, const char *path, int optional,
            int from_env, cushim_plugin **out, char *err, size_t errlen);
int pl_register(const cushim_plugin_def *def, const char *options, cushim_plugin **self, char *err,
                size_t errlen);
void pl_flush_all(void);                /* reverse load order */
void pl_after_fork(uint32_t parent_tid);   /* fork child: interrupted inits fail; fork_child */
void pl_log(const cushim_plugin *p, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pl_vlog(const cushim_plugin *p, int level, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
void pl_report_failure(const cushim_plugin *p, const char *name, int optional, int from_env,
                       const char *why);

/* ---- CUSHIM_PLUGINS (loader.c) ---- */
void ldr_load_env(void);                /* once, from initialisation */
/* Load the specs of 'list' (CUSHIM_PLUGINS syntax) from index *taken on,
   advancing it before each (a forked child resumes after the interrupted one). */
void ldr_load_list(const char *list, _Atomic uint32_t *taken);
/* The directory shipped plugins are looked up in, for the shim at 'self_path'. */
int ldr_plugin_file(const char *self_path, const char *name, char *out, size_t cap, char *tried,
                    size_t tried_cap);

/* ---- the host table (host.c) ---- */
extern const cushim_host hs_host;

/* ---- process lifecycle (lifecycle.c) ---- */
int rt_init(void);                      /* 1: initialised; 0: re-entered during initialisation */
extern _Atomic int lc_is_ready;
static inline int lc_ready(void)
{
    return atomic_load_explicit(&lc_is_ready, memory_order_acquire);
}
int lc_exiting(void);                   /* plugins flushed: no new hooks, no sync */

/* ---- call counter (counts.c) ---- */
extern int cnt_enabled;
void cnt_init(void);
void cnt_add(uint32_t id);
uint64_t cnt_get(uint32_t id);
void cnt_write(void);
void cnt_after_fork_child(void);
/* Where a CUSHIM_COUNTS path sends its lines (cnt_init): CNT_KIND_FD for one of the
   process's own descriptors (*fd set: /dev/stderr, /dev/fd/N, /proc/self/fd/N, or a
   link to one), CNT_KIND_APPEND for another non-regular or /proc path (opened and
   appended to at exit), CNT_KIND_FILE for a regular file (claimed, may be created),
   CNT_KIND_BAD when it cannot be used (*err set: a directory, a missing device). */
enum { CNT_KIND_FILE = 0, CNT_KIND_FD = 1, CNT_KIND_APPEND = 2, CNT_KIND_BAD = 3 };
int cnt_path_kind(const char *path, int *fd, int *err);

/* ---- configuration (config.c) ---- */
enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };
enum { CFG_DISABLE_ENV = 1, CFG_DISABLE_PEER = 2 };   /* rt_config.disable, non-zero: why */
typedef struct rt_config {
    int disable;                /* CUSHIM_DISABLE=1, or another copy of cushim came first */
    int log_level;              /* CUSHIM_LOG */
    int log_fd;                 /* CUSHIM_LOG_FILE or stderr */
    const char *counts_path;    /* CUSHIM_COUNTS or NULL ("-" when counts_fd is set) */
    const char *real_libcuda;   /* CUSHIM_REAL_LIBCUDA or NULL */
    int counts_fd;              /* CUSHIM_COUNTS=-: fd 2 as it was at start (dup, CLOEXEC), or -1 */
} rt_config;
const rt_config *cfg_get(void);
/* Where log lines go: log_fd while it still is the CUSHIM_LOG_FILE opened at load
   (a program that closed it may have reused the number), else stderr. */
int cfg_log_target(void);
/* Secure-execution mode (AT_SECURE: setuid, setgid, file capabilities). */
int cfg_secure(void);
/* getenv for a variable that names a file or code (CUSHIM_REAL_LIBCUDA, CUSHIM_COUNTS,
   CUSHIM_LOG_FILE, CUSHIM_PLUGINS, ...): NULL in secure-execution mode, with one log
   line per variable that was set. Every such variable must be read through this. */
const char *cfg_env_path(const char *name);
/* The value parser behind cfg_get, pure (no environment, no files): checks 'value'
   of variable 'var' (CFG_VAR_*). Returns 0 when accepted (*out: the boolean, the log
   level, or for a path CFG_PATH_STDERR / CFG_PATH_FILE), -1 when not: then 'msg'
   holds the one line to log (variable, quoted value, reason, what happens instead)
   and *out the default. Exposed for the fuzz harness (tests/fuzz/). */
enum { CFG_VAR_DISABLE, CFG_VAR_LOG, CFG_VAR_LOG_FILE, CFG_VAR_COUNTS, CFG_VAR_REAL_LIBCUDA,
       CFG_VAR_COUNT_ };
enum { CFG_PATH_FILE = 1, CFG_PATH_STDERR = 2 };
#define CFG_PATH_MAX 4096            /* longest accepted path value, NUL included */
int cfg_parse(int var, const char *value, int *out, char *msg, size_t cap);
/* 'value' quoted for a log line: non-printable bytes as \xNN, cut at 'cap'. */
void cfg_quote(const char *value, char *buf, size_t cap);

/* peer.c (config level): another copy of cushim loaded first. */
/* 1 when an object loaded before this one (link-map order) exports
   cushim_api_id_limit, i.e. is another copy of cushim: its file name is copied to
   'peer' and ours to 'self' (cap bytes each). No libc look-up, no allocation: safe
   from any constructor, before ours. */
int peer_find(char *peer, char *self, size_t cap);

/* ---- logging (log.c) ---- */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A reason into err[errlen] (if err); returns CUSHIM_EINVAL. */
int rt_seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
/* One line 'text' at 'level' to 'fd', unfiltered: for config.c, which cannot call
   cfg_get while it is loading the configuration. */
void log_line(int fd, int level, const char *text);

/* ---- ELF symbol tables (elfsym.c) ---- */
typedef void *(*rl_dlsym_fn)(void *, const char *);
typedef void *(*rl_dlvsym_fn)(void *, const char *, const char *);
rl_dlsym_fn elf_real_dlsym(void);     /* glibc's; safe before any initialisation */
rl_dlvsym_fn elf_real_dlvsym(void);
void *elf_find_in_libc(const char *name);   /* default-version definition in libc.so.6 / libdl.so.2 */
/* Objects after the one loaded at 'after_addr' named 'after_name' (its l_addr and
   l_name), in load order, except the one at 'skip_addr': the first that defines
   'name'. Returns its symbol address (an IFUNC's resolver) or NULL. */
void *elf_next_definer(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                       const char *name);
void *elf_next_definer_obj(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                           const char *name, uintptr_t *def_addr, const char **def_name);
int elf_loaded_after(uintptr_t a, uintptr_t b);   /* object at a comes after object at b */
const char *elf_object_symbol(uintptr_t base, uint32_t k, void **addr);   /* k-th export, NULL past the end */
void *elf_chain_next(const char *name);     /* next "dlsym"/"dlvsym" after us (an interposer's or libc's) */
int elf_object_defines(uintptr_t base, const char *name);        /* the object loaded at base */
int elf_object_defines_at(const void *addr, const char *name);   /* the object containing addr */
int elf_version_matches(const void *addr, const char *name, const char *version);   /* as glibc's dlvsym */
int elf_object_soname(const void *addr, char *out, size_t cap);   /* DT_SONAME, else file base name */

/* ---- real libraries (reallib.c) ---- */
enum { RL_NONE = 0, RL_SELF = 1, RL_DRIVER = 2, RL_RUNTIME = 3, RL_OTHER = 4,
       RL_LIBRARY = 5 /* another interposed library (NVML, ...: libs.c) */ };
rl_dlsym_fn rl_real_dlsym(void);
rl_dlvsym_fn rl_real_dlvsym(void);
void *rl_dlsym(void *handle, const char *name);   /* glibc's, caller = the shim */
void *rl_dlsym_next(const char *name);            /* RTLD_NEXT relative to the shim */
void *rl_driver_handle(void);                     /* NULL if no driver (searched again after a load) */
void *rl_next_layer(const char *name);            /* another interposer's 'name' after us, or NULL */
void *rl_prev_layer(const char *name);            /* a preloaded interposer's 'name' before us, or NULL */
void *rl_driver_real(const char *name);           /* the next layer's, else the driver's; pinned */
void rl_pin(const void *fn);                      /* keep fn's object loaded for good */
int rl_classify(const void *addr);
/* The loaded object holding addr: its load address, and its name copied into name[cap] (NULL: not wanted) while
   ld.so holds its lock - never a pointer into ld.so's own string, which a dlopen on another thread may be writing */
int rl_object_of(const void *addr, uintptr_t *base, char *name, size_t cap);
uintptr_t rl_self_base(void);
void *rl_self_handle(void);                       /* our link_map = our dlopen handle */
int rl_is_dropin(void);
void *rl_library_real(const lb_library *lib, const char *name);   /* never loads it; prefers our copy */
int rl_is_our_copy(const lb_library *lib, const void *fn);   /* fn's copy is this build's major (lb_symver) */
void rl_scan_copies(const lb_library *lib);       /* warn once when several copies are loaded */
void rl_scan_copies_versioned(void);               /* rl_scan_copies of each library with a version node */

/* ---- cuGetProcAddress family (getproc.c) ---- */
void *gp_handler_for(uint32_t id);          /* hand-written "real", or NULL */
uint64_t gp_passthrough_count(void);
void gp_reset_after_fork(void);      /* fork child */

#endif /* RT_INTERNAL_H */
