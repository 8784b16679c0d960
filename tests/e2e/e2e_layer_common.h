/*
 * e2e_layer_common.h - what the two fake interposers of the stacking tests share (included once
 * by each of e2e_layer_hami.c and e2e_layer_cuonly.c, after LX and LY_HOOKED - how many of
 * ly_names the layer hooks - are defined): the hooked names,
 * call counters, the memory quota, the counts file, and the hooks that only count, check the
 * quota and forward. LY_COMMON_HOOKS(get_real) defines them; get_real(i) returns the real
 * function of ly_names[i] and counts the forwarded call.
 */
#ifndef E2E_LAYER_COMMON_H
#define E2E_LAYER_COMMON_H

enum {
    LY_cuInit,
    LY_cuDriverGetVersion,
    LY_cuDeviceGetCount,
    LY_cuMemAlloc_v2,
    LY_cuMemFree_v2,
    LY_cuGetProcAddress,
    LY_cuGetProcAddress_v2,
    LY_N
};
static const char *const ly_names[LY_N] = { "cuInit",        "cuDriverGetVersion", "cuDeviceGetCount",
                                            "cuMemAlloc_v2", "cuMemFree_v2",       "cuGetProcAddress",
                                            "cuGetProcAddress_v2" };
static void *ly_real[LY_N];
static _Atomic uint64_t ly_calls[LY_N], ly_fwd[LY_N];

static int ly_index(const char *name)
{
    for (int i = 0; i < LY_N; i++)
        if (name != NULL && strcmp(name, ly_names[i]) == 0)
            return i;
    return -1;
}

/* Entries into the hook of 'name' (0 for names it does not hook). */
LX uint64_t e2e_layer_calls(const char *name)
{
    int i = ly_index(name);
    return i < 0 ? 0 : atomic_load(&ly_calls[i]);
}

/* Calls the hook of 'name' made to its real function. */
LX uint64_t e2e_layer_forwarded(const char *name)
{
    int i = ly_index(name);
    return i < 0 ? 0 : atomic_load(&ly_fwd[i]);
}

/* 1 if this layer hooks 'name' (the first LY_HOOKED of ly_names). */
LX int e2e_layer_hooks(const char *name)
{
    int i = ly_index(name);
    return i >= 0 && i < LY_HOOKED;
}

static void ly_write_counts(void)
{
    const char *path = getenv("E2E_LAYER_COUNTS");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f == NULL)
        return;
    for (int i = 0; i < LY_N; i++)
        if (atomic_load(&ly_calls[i]) != 0)
            fprintf(f, "%s\t%llu\n", ly_names[i], (unsigned long long)atomic_load(&ly_calls[i]));
    fclose(f);
}

static void ly_write_at_exit(void)
{
    static atomic_int once;
    if (atomic_exchange(&once, 1) == 0)
        atexit(ly_write_counts);
}

/* The quota: bytes in use through this layer, E2E_LAYER_LIMIT (0 or unset: none). */
static pthread_mutex_t ly_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    CUdeviceptr p;
    size_t n;
} ly_live[256];
static size_t ly_used;

static int ly_reserve(size_t n)
{
    const char *v = getenv("E2E_LAYER_LIMIT");
    size_t limit = v ? (size_t)strtoull(v, NULL, 0) : 0;
    pthread_mutex_lock(&ly_mu);
    int ok = limit == 0 || ly_used + n <= limit;
    if (ok)
        ly_used += n;
    pthread_mutex_unlock(&ly_mu);
    return ok;
}

static void ly_track(CUdeviceptr p, size_t n, int ok)
{
    pthread_mutex_lock(&ly_mu);
    if (!ok) {
        ly_used -= n;
    } else {
        for (size_t i = 0; i < sizeof ly_live / sizeof ly_live[0]; i++)
            if (ly_live[i].p == 0) {
                ly_live[i].p = p, ly_live[i].n = n;
                break;
            }
    }
    pthread_mutex_unlock(&ly_mu);
}

static void ly_release(CUdeviceptr p)
{
    pthread_mutex_lock(&ly_mu);
    for (size_t i = 0; i < sizeof ly_live / sizeof ly_live[0]; i++)
        if (ly_live[i].p == p && p != 0) {
            ly_used -= ly_live[i].n;
            ly_live[i].p = 0;
            break;
        }
    pthread_mutex_unlock(&ly_mu);
}

#define LY_CALL(get_real, ID, T, ...)                                                              \
    do {                                                                                           \
        atomic_fetch_add(&ly_calls[ID], 1);                                                        \
        __typeof__(T) real_ = (T)get_real(ID);                                                     \
        return real_ ? real_(__VA_ARGS__) : CUDA_ERROR_NOT_FOUND;                                  \
    } while (0)

#define LY_COMMON_HOOKS(get_real)                                                                  \
    LX CUresult cuInit(unsigned int flags)                                                         \
    {                                                                                              \
        LY_CALL(get_real, LY_cuInit, CUresult(*)(unsigned int), flags);                            \
    }                                                                                              \
    LX CUresult cuDriverGetVersion(int *v)                                                         \
    {                                                                                              \
        LY_CALL(get_real, LY_cuDriverGetVersion, CUresult(*)(int *), v);                           \
    }                                                                                              \
    LX CUresult cuDeviceGetCount(int *n)                                                           \
    {                                                                                              \
        LY_CALL(get_real, LY_cuDeviceGetCount, CUresult(*)(int *), n);                             \
    }                                                                                              \
    LX CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)                                  \
    {                                                                                              \
        atomic_fetch_add(&ly_calls[LY_cuMemAlloc_v2], 1);                                          \
        if (!ly_reserve(bytesize))                                                                 \
            return CUDA_ERROR_OUT_OF_MEMORY;                                                       \
        CUresult (*real_)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))get_real(   \
            LY_cuMemAlloc_v2);                                                                     \
        CUresult r_ = real_ ? real_(dptr, bytesize) : CUDA_ERROR_NOT_FOUND;                        \
        ly_track(dptr && r_ == CUDA_SUCCESS ? *dptr : 0, bytesize, r_ == CUDA_SUCCESS);            \
        return r_;                                                                                 \
    }                                                                                              \
    LX CUresult cuMemFree_v2(CUdeviceptr dptr)                                                     \
    {                                                                                              \
        atomic_fetch_add(&ly_calls[LY_cuMemFree_v2], 1);                                           \
        CUresult (*real_)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))get_real(LY_cuMemFree_v2);      \
        CUresult r_ = real_ ? real_(dptr) : CUDA_ERROR_NOT_FOUND;                                  \
        if (r_ == CUDA_SUCCESS)                                                                    \
            ly_release(dptr);                                                                      \
        return r_;                                                                                 \
    }

#endif /* E2E_LAYER_COMMON_H */
