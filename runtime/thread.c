/*
 * thread.c - per-thread records: the reader state of the reclamation epochs,
 * the kernel thread id, call sequence numbers and plugins' per-thread values.
 *
 * A thread gets a record at its first hooked call (or first host->tls_set).
 * Records are claimed from a lock-free list and made with mmap, so claiming one
 * is async-signal-safe; they are never freed, only recycled: a pthread key
 * destructor runs the plugins' TLS destructors at thread exit and returns the
 * record. So memory is bounded by the largest number of threads alive at once.
 * The list is what writers scan (epoch.c, hooks.c's stop at exit).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"
#include "module.h"
#include "once.h"
#include "thread.h"
#include "unwind.h"

__thread rt_tls_t rt_tls __attribute__((tls_model("initial-exec")));

#define TH_CHUNK 16   /* records per mmap */

static _Atomic(th_rec *) th_head;
static _Atomic uint32_t th_next_id = 1;
static pthread_key_t th_key;
static _Atomic int th_key_ok;

typedef struct th_key_slot {
    _Atomic int state;               /* 0 free, 1 live, 2 dead (its plugin failed) */
    void (*destructor)(void *);
    cushim_plugin *owner;
} th_key_slot;
static th_key_slot th_keys[TH_MAX_KEYS];
static _Atomic uint32_t th_nkeys;

th_rec *th_rec_first(void)
{
    return atomic_load_explicit(&th_head, memory_order_acquire);
}

uint32_t th_tid(void)
{
    uint32_t t = rt_tid_cache;
    if (RT_UNLIKELY(t == 0))
        rt_tid_cache = t = rt_sys_gettid();
    return t;
}

/* A new chunk: the first record is ours, the others are pushed free. */
static th_rec *th_make_chunk(void)
{
    th_rec *c = mmap(NULL, TH_CHUNK * sizeof(th_rec), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED)
        return NULL;
    for (int i = 0; i < TH_CHUNK; i++) {
        c[i].id = atomic_fetch_add(&th_next_id, 1);
        c[i].next = i + 1 < TH_CHUNK ? &c[i + 1] : NULL;
    }
    atomic_store_explicit(&c[0].in_use, 1, memory_order_relaxed);
    th_rec *head = atomic_load_explicit(&th_head, memory_order_relaxed);
    do
        c[TH_CHUNK - 1].next = head;
    while (!atomic_compare_exchange_weak_explicit(&th_head, &head, c, memory_order_release,
                                                  memory_order_relaxed));
    return c;
}

th_rec *th_rec_get(void)
{
    th_rec *r = rt_tls.rec;
    if (RT_LIKELY(r != NULL))
        return r;
    for (r = th_rec_first(); r != NULL; r = r->next) {
        uint32_t expected = 0;
        if (atomic_load_explicit(&r->in_use, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&r->in_use, &expected, 1))
            break;
    }
    if (r == NULL && (r = th_make_chunk()) == NULL)
        return NULL;
    atomic_store_explicit(&r->tid, th_tid(), memory_order_relaxed);
    r->uw_head = (void **)(uw_thread_pointer() + uw_off);
    rt_tls.rec = r;
    /* glibc stores the first 32 keys' values without allocating: the key is
       made at initialisation, before plugins or hooks exist. */
    if (atomic_load_explicit(&th_key_ok, memory_order_acquire))
        pthread_setspecific(th_key, r);
    return r;
}

void th_drop_calls(th_rec *r)
{
    r->top = NULL;
    atomic_store_explicit(&r->in_cb, 0, memory_order_relaxed);
    __atomic_store_n(&r->ctr, 0, __ATOMIC_RELEASE);
}

void th_release(th_rec *r)
{
    th_drop_calls(r);
    atomic_store_explicit(&r->in_use, 0, memory_order_release);
}

/* Thread exit: plugins' destructors (as pthread keys: up to 4 rounds while
   values are set again), then the record goes back to the list. */
static void th_exit(void *p)
{
    th_rec *r = p;
    for (int round = 0; round < 4; round++) {
        int again = 0;
        uint32_t n = atomic_load_explicit(&th_nkeys, memory_order_acquire);
        for (uint32_t k = 0; k < n && k < TH_MAX_KEYS; k++) {
            void *v = r->tls[k];
            if (v == NULL)
                continue;
            r->tls[k] = NULL;
            if (atomic_load_explicit(&th_keys[k].state, memory_order_acquire) != 0 &&
                th_keys[k].destructor != NULL) {   /* a failed plugin's too: its code stays loaded */
                th_keys[k].destructor(v);
                again = 1;
            }
        }
        if (!again)
            break;
    }
    memset(r->tls, 0, sizeof r->tls);
    th_drop_calls(r);
    rt_tls.rec = NULL;
    atomic_store_explicit(&r->in_use, 0, memory_order_release);
}

/* The thread-exit destructor, at initialisation. */
static void th_key_init(void)
{
    if (atomic_load(&th_key_ok))
        return;
    if (pthread_key_create(&th_key, th_exit) == 0) {
        atomic_store_explicit(&th_key_ok, 1, memory_order_release);
        if (rt_tls.rec != NULL)
            pthread_setspecific(th_key, rt_tls.rec);
    }
}

/* fork() child: other threads' records are free. */
static void th_fork_child(uint32_t parent_tid)
{
    (void)parent_tid;
    th_rec *mine = rt_tls.rec;
    for (th_rec *r = th_rec_first(); r != NULL; r = r->next) {
        if (r == mine || !atomic_load_explicit(&r->in_use, memory_order_relaxed))
            continue;
        /* Its thread does not exist here: no destructors (as for pthread keys). */
        memset(r->tls, 0, sizeof r->tls);
        th_release(r);
    }
    rt_tid_cache = rt_sys_gettid();
    if (mine != NULL)
        atomic_store_explicit(&mine->tid, rt_tid_cache, memory_order_relaxed);
}

int th_tls_create(cushim_plugin *owner, void (*destructor)(void *), uint32_t *key)
{
    if (key == NULL)
        return CUSHIM_EINVAL;
    uint32_t k = atomic_load(&th_nkeys);
    do {
        if (k >= TH_MAX_KEYS)
            return CUSHIM_ELIMIT;
    } while (!atomic_compare_exchange_weak(&th_nkeys, &k, k + 1));
    th_keys[k].destructor = destructor;
    th_keys[k].owner = owner;
    atomic_store_explicit(&th_keys[k].state, 1, memory_order_release);
    *key = k;
    return CUSHIM_OK;
}

static int th_key_live(uint32_t key)
{
    return key < TH_MAX_KEYS && atomic_load_explicit(&th_keys[key].state, memory_order_acquire) == 1;
}

void *th_tls_get(uint32_t key)
{
    th_rec *r = rt_tls.rec;
    if (r == NULL || !th_key_live(key))
        return NULL;
    return r->tls[key];
}

int th_tls_set(uint32_t key, void *value)
{
    if (!th_key_live(key))
        return CUSHIM_ENOENT;
    th_rec *r = th_rec_get();
    if (r == NULL)
        return CUSHIM_ENOMEM;
    r->tls[key] = value;
    return CUSHIM_OK;
}

/* A failed plugin's keys die: tls_get/tls_set refuse them from now on; the
   value of the thread undoing the plugin is destroyed now, other threads'
   at their exit (keys are never reused). */
void th_tls_release(cushim_plugin *owner)
{
    uint32_t n = atomic_load(&th_nkeys);
    th_rec *mine = rt_tls.rec;
    for (uint32_t k = 0; k < n && k < TH_MAX_KEYS; k++) {
        if (th_keys[k].owner != owner)
            continue;
        atomic_store_explicit(&th_keys[k].state, 2, memory_order_release);
        void *v = mine != NULL ? mine->tls[k] : NULL;
        if (v != NULL) {
            mine->tls[k] = NULL;
            if (th_keys[k].destructor != NULL)
                th_keys[k].destructor(v);
        }
    }
}

LC_MODULE(thread, .level = LC_CORE, .init = th_key_init, .fork_child = th_fork_child);
