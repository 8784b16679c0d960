/*
 * ml_caller.c - the library behind an allocation (ml_caller.h says what is
 * skipped and why the cache).
 */
#define _GNU_SOURCE
#include "ml_caller.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unwind.h>

#define MC_CACHE 1024       /* direct-mapped, by return address */
#define MC_SKIP (-1)
#define MC_NAME_LEN 40      /* ML_LIB_NAME: a name fits a region entry */

typedef struct mc_cell {
    uintptr_t pc;           /* 0: empty */
    int id;                 /* name id, or MC_SKIP */
} mc_cell;

static pthread_mutex_t mc_mu = PTHREAD_MUTEX_INITIALIZER;
static mc_cell mc_cache[MC_CACHE];
static char mc_names[ML_CALLER_NAMES][MC_NAME_LEN] = {"(unknown)", "(program)"};
static int mc_nnames = 2;
static const void *mc_skip_base[8];
static int mc_nskip;

typedef struct mc_walk {
    int n;                  /* frames seen */
    int id;                 /* the answer: a name id once found */
} mc_walk;

static int mc_lookup(uintptr_t pc);

/* One frame of the walk: stop at the first one that is not skipped (unwinding further costs per frame). */
static _Unwind_Reason_Code mc_frame(struct _Unwind_Context *uc, void *arg)
{
    mc_walk *w = arg;
    uintptr_t pc = (uintptr_t)_Unwind_GetIP(uc);
    int cls;
    if (pc == 0 || ++w->n > ML_CALLER_DEPTH)
        return _URC_END_OF_STACK;
    if (w->n == 1)
        return _URC_NO_REASON;   /* ml_caller itself */
    if ((cls = mc_lookup(pc)) == MC_SKIP)
        return _URC_NO_REASON;
    w->id = cls;
    return _URC_END_OF_STACK;
}

void ml_caller_init(const void *const *addrs, int n)
{
    mc_walk w = {0, ML_CALLER_UNKNOWN};
    pthread_mutex_lock(&mc_mu);
    for (int i = 0; i < n && mc_nskip < (int)(sizeof mc_skip_base / sizeof mc_skip_base[0]); i++) {
        Dl_info di;
        if (addrs[i] != NULL && dladdr(addrs[i], &di) != 0 && di.dli_fbase != NULL)
            mc_skip_base[mc_nskip++] = di.dli_fbase;
    }
    /* what was classified before these skips may now be skipped: the cache starts again (under TSan the first
       frame the walk drops is its interceptor's, so ml_caller's own frame was classified, and cached, before) */
    memset(mc_cache, 0, sizeof mc_cache);
    pthread_mutex_unlock(&mc_mu);
    /* the unwinder's first walk reads this object's unwind tables (and, were libgcc_s not linked, would load
       it): now, not inside a hook */
    w.n = ML_CALLER_DEPTH;
    _Unwind_Backtrace(mc_frame, &w);
}

void ml_caller_fork_child(void)
{
    pthread_mutex_init(&mc_mu, NULL);
}

/* Is 'base' the CUDA driver or runtime (any copy), or the shim under another name? */
static int mc_skipped_name(const char *base)
{
    return strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libcudart.so", 12) == 0 ||
           strncmp(base, "libcudart_static", 16) == 0 || strncmp(base, "libcushim", 9) == 0;
}

/* The id of name 'n' (first 'len' bytes), added when new; mc_mu held. */
static int mc_intern(const char *n, size_t len)
{
    if (len >= MC_NAME_LEN)
        len = MC_NAME_LEN - 1;
    for (int i = 0; i < mc_nnames; i++)
        if (strncmp(mc_names[i], n, len) == 0 && mc_names[i][len] == '\0')
            return i;
    if (mc_nnames == ML_CALLER_NAMES)
        return ML_CALLER_UNKNOWN;
    memcpy(mc_names[mc_nnames], n, len);
    mc_names[mc_nnames][len] = '\0';
    return mc_nnames++;
}

/* Classify return address 'pc': MC_SKIP or a name id; mc_mu held. */
static int mc_classify(uintptr_t pc)
{
    Dl_info di;
    struct link_map *lm = NULL;
    const char *base, *so;
    size_t len;
    /* pc - 1: the call instruction itself (a call that ends a function returns into the next one) */
    if (dladdr1((void *)(pc - 1), &di, (void **)&lm, RTLD_DL_LINKMAP) == 0 || lm == NULL)
        return ML_CALLER_UNKNOWN;
    for (int i = 0; i < mc_nskip; i++)
        if (di.dli_fbase == mc_skip_base[i])
            return MC_SKIP;
    if (lm->l_name == NULL || lm->l_name[0] == '\0')
        return ML_CALLER_PROGRAM;   /* the main executable's link map has no name */
    base = strrchr(lm->l_name, '/');
    base = base != NULL ? base + 1 : lm->l_name;
    if (mc_skipped_name(base))
        return MC_SKIP;
    so = strstr(base, ".so");
    len = so != NULL && (so[3] == '\0' || so[3] == '.') ? (size_t)(so + 3 - base) : strlen(base);
    return len == 0 ? ML_CALLER_UNKNOWN : mc_intern(base, len);
}

/* The class of return address 'pc', from the cache or classified now. */
static int mc_lookup(uintptr_t pc)
{
    mc_cell *c = &mc_cache[(pc >> 2) % MC_CACHE];
    int cls;
    pthread_mutex_lock(&mc_mu);
    if (c->pc == pc) {
        cls = c->id;
    } else {
        cls = mc_classify(pc);
        c->pc = pc;
        c->id = cls;
    }
    pthread_mutex_unlock(&mc_mu);
    return cls;
}

int ml_caller(void)
{
    mc_walk w = {0, ML_CALLER_UNKNOWN};
    _Unwind_Backtrace(mc_frame, &w);
    return w.id;
}

const char *ml_caller_name(int id)
{
    const char *n;
    pthread_mutex_lock(&mc_mu);
    n = id >= 0 && id < mc_nnames ? mc_names[id] : mc_names[ML_CALLER_UNKNOWN];
    pthread_mutex_unlock(&mc_mu);
    return n;
}
