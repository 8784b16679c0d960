/*
 * tr_kname.c - the kernel's name on launches, from the real driver: cuFuncGetName
 * (CUDA 12.3+; cuKernelGetName for a CUkernel; cudaGetFuncBySymbol first for the
 * runtime's host stubs), called through host->real so no hook sees it. Each
 * function is asked once: a small per-thread cache (no lock on a hit) in front of
 * a process-wide map under a mutex; both are invalidated by a generation count
 * that the unloading of any module or library bumps. Names are interned and live
 * as long as the process (the records hold pointers to them).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tr_kname.h"
#include "tr_plan.h"

/* ---- kernel names: interned strings, a global map, a per-thread cache ---- */

typedef struct tr_intern {
    struct tr_intern *next;
    char s[];
} tr_intern;

static pthread_mutex_t tr_names_lock = PTHREAD_MUTEX_INITIALIZER;
static tr_intern *tr_interned;
static tr_name_entry *tr_names;           /* open addressing, under tr_names_lock */
static uint32_t tr_names_cap, tr_names_n;
_Atomic uint64_t tr_names_gen = 1;         /* bumped when modules are unloaded     */

/* The driver's name functions: API ids (0: not in this build), resolved at start (tr_kernel_names_setup). */
static struct {
    uint32_t api_funcgetname, api_kernelgetname, api_getfuncbysymbol, api_getprocaddress;
    /* cuFuncGetName / cuKernelGetName from the driver's cuGetProcAddress when the tree has no such API (an 11.8 or
       early 12.x build on a newer driver): resolved at the first name query; 1 = none */
    _Atomic(void *) drv_funcgetname, drv_kernelgetname;
} kn;

void tr_kernel_names_setup(void)
{
    kn.api_funcgetname = tr_api_id_of("cuFuncGetName");
    kn.api_kernelgetname = tr_api_id_of("cuKernelGetName");
    kn.api_getfuncbysymbol = tr_api_id_of("cudaGetFuncBySymbol");
    kn.api_getprocaddress = tr_api_id_of("cuGetProcAddress");
}

static const char *tr_intern_str(const char *s)
{
    size_t n = strlen(s);
    tr_intern *i;
    for (i = tr_interned; i != NULL; i = i->next)
        if (strcmp(i->s, s) == 0)
            return i->s;
    if ((i = malloc(sizeof *i + n + 1)) == NULL)
        return NULL;
    memcpy(i->s, s, n + 1);
    i->next = tr_interned;
    tr_interned = i;
    return i->s;
}

#define ptr_hash tr_ptr_hash

/* Global map lookup/insert under the lock. */
static const char *names_get(const void *key, uint64_t gen, int *found)
{
    *found = 0;
    if (tr_names_cap == 0)
        return NULL;
    for (uint32_t h = ptr_hash(key) & (tr_names_cap - 1);; h = (h + 1) & (tr_names_cap - 1)) {
        if (tr_names[h].key == NULL)
            return NULL;
        if (tr_names[h].key == key) {
            if (tr_names[h].gen != gen)
                return NULL;
            *found = 1;
            return tr_names[h].name;
        }
    }
}

static void names_put(const void *key, uint64_t gen, const char *name)
{
    uint32_t h;
    if ((tr_names_n + 1) * 2 > tr_names_cap) {
        uint32_t cap = tr_names_cap ? tr_names_cap * 2 : 256;
        tr_name_entry *n = calloc(cap, sizeof *n);
        if (n == NULL)
            return;
        for (uint32_t i = 0; i < tr_names_cap; i++)
            if (tr_names[i].key != NULL && tr_names[i].gen == gen) {
                for (h = ptr_hash(tr_names[i].key) & (cap - 1); n[h].key; h = (h + 1) & (cap - 1))
                    ;
                n[h] = tr_names[i];
            }
        free(tr_names);
        tr_names = n;
        tr_names_cap = cap;
        tr_names_n = 0;
        for (uint32_t i = 0; i < cap; i++)
            tr_names_n += n[i].key != NULL;
    }
    for (h = ptr_hash(key) & (tr_names_cap - 1); tr_names[h].key && tr_names[h].key != key;
         h = (h + 1) & (tr_names_cap - 1))
        ;
    if (tr_names[h].key == NULL)
        tr_names_n++;
    tr_names[h].key = key;
    tr_names[h].gen = gen;
    tr_names[h].name = name;
}

typedef int (*tr_getname_fn)(const char **name, const void *f);
typedef int (*tr_getfunc_fn)(void **f, const void *stub);
typedef int (*tr_getproc_fn)(const char *symbol, void **pfn, int cuda_version, unsigned long long flags);

/* A name query function: the tree's API through host->real, else (an 11.8 or early 12.x tree, whose headers
   predate it) the real driver's own, asked of its cuGetProcAddress once (cached in *cache; (void *)1: none).
   Called directly: no hook sees it, as with host->real. */
static tr_getname_fn name_fn(uint32_t api, _Atomic(void *) *cache, const char *symbol)
{
    if (api != 0)
        return (tr_getname_fn)tr_host->real(api);
    void *p = atomic_load_explicit(cache, memory_order_acquire);
    if (p == NULL) {
        tr_getproc_fn g = kn.api_getprocaddress ? (tr_getproc_fn)tr_host->real(kn.api_getprocaddress) : NULL;
        void *fn = NULL;
        if (g == NULL || g(symbol, &fn, 12030, 0) != 0)   /* both came with CUDA 12.3 */
            fn = NULL;
        p = fn != NULL ? fn : (void *)1;
        atomic_store_explicit(cache, p, memory_order_release);
    }
    return p == (void *)1 ? NULL : (tr_getname_fn)p;
}

/* The real driver's name of a function (never through hooks). */
static const char *kernel_name_query(int launch, const void *key)
{
    const char *name = NULL;
    const void *f = key;
    if (launch == TR_LAUNCH_STUB) {
        tr_getfunc_fn gf = kn.api_getfuncbysymbol ? (tr_getfunc_fn)tr_host->real(kn.api_getfuncbysymbol) : NULL;
        void *fn = NULL;
        if (gf == NULL || gf(&fn, key) != 0 || fn == NULL)
            return NULL;
        f = fn;
    }
    if (launch != TR_LAUNCH_KERNEL) {
        tr_getname_fn g = name_fn(kn.api_funcgetname, &kn.drv_funcgetname, "cuFuncGetName");
        if (g != NULL && g(&name, f) == 0 && name != NULL)
            return name;
    }
    tr_getname_fn g = name_fn(kn.api_kernelgetname, &kn.drv_kernelgetname, "cuKernelGetName");
    name = NULL;
    if (g != NULL && g(&name, f) == 0 && name != NULL)
        return name;
    return NULL;
}

const char *tr_kernel_name_slow(tr_state *st, tr_tbuf *tb, int launch, const void *key)
{
    tr_name_entry *cache = tb->prod;
    uint64_t gen = atomic_load_explicit(&tr_names_gen, memory_order_acquire);
    uint32_t slot = ptr_hash(key) & (TR_NAME_CACHE - 1);
    const char *name;
    int found;
    (void)st;   /* the names are the kernel-name part's own (kn, the map); the hooks' call keeps its form */
    if (key == NULL)
        return NULL;
    if (cache == NULL && (cache = tb->prod = calloc(TR_NAME_CACHE, sizeof *cache)) == NULL)
        return NULL;
    if (cache[slot].key == key && cache[slot].gen == gen)
        return cache[slot].name;
    pthread_mutex_lock(&tr_names_lock);
    name = names_get(key, gen, &found);
    pthread_mutex_unlock(&tr_names_lock);
    if (!found) {
        const char *q = kernel_name_query(launch, key);
        pthread_mutex_lock(&tr_names_lock);
        name = q ? tr_intern_str(q) : NULL;
        names_put(key, gen, name);
        pthread_mutex_unlock(&tr_names_lock);
    }
    cache[slot].key = key;
    cache[slot].gen = gen;
    cache[slot].name = name;
    return name;
}

void tr_kernel_names_unloaded(cushim_call *call, void *user, uint64_t *slot)
{
    (void)call, (void)user, (void)slot;
    atomic_fetch_add_explicit(&tr_names_gen, 1, memory_order_release);
}

void tr_kernel_names_fork_child(void)
{
    pthread_mutex_init(&tr_names_lock, NULL);
}
