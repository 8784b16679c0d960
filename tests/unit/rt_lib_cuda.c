/*
 * rt_lib_cuda.c - a stand-in libcuda.so.1 for the runtime's unit tests: a few
 * driver functions that count their calls, and a cuGetProcAddress that hands
 * out its own functions (plus one export the shim does not wrap).
 * Independent of the generated tables; the real fake driver is tests/fake.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STUB_EXPORT __attribute__((visibility("default")))

static int rt_stub_calls;

STUB_EXPORT int rt_stub_call_count(void)
{
    return __atomic_load_n(&rt_stub_calls, __ATOMIC_RELAXED);
}

STUB_EXPORT int cuInit(unsigned int flags)
{
    (void)flags;
    __atomic_fetch_add(&rt_stub_calls, 1, __ATOMIC_RELAXED);
    return 0;
}

STUB_EXPORT int cuDriverGetVersion(int *v)
{
    __atomic_fetch_add(&rt_stub_calls, 1, __ATOMIC_RELAXED);
    if (v == NULL)
        return 1;
    *v = 13000;
    return 0;
}

STUB_EXPORT int cuCtxGetCurrent(void **pctx)
{
    __atomic_fetch_add(&rt_stub_calls, 1, __ATOMIC_RELAXED);
    *pctx = NULL;
    return 0;
}

STUB_EXPORT int cuMemAlloc_v2(unsigned long long *dptr, size_t size)
{
    __atomic_fetch_add(&rt_stub_calls, 1, __ATOMIC_RELAXED);
    *dptr = (unsigned long long)(uintptr_t)malloc(size);
    return 0;
}

STUB_EXPORT int cuStubOnly(void)
{
    return 42;
}

STUB_EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
STUB_EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                                    int *status);

/* The stub's own function for a cuGetProcAddress symbol (what the test compares with). */
STUB_EXPORT void *rt_stub_lookup(const char *symbol, int version)
{
    void *f = NULL;
    if (strcmp(symbol, "cuInit") == 0) f = (void *)cuInit;
    else if (strcmp(symbol, "cuDriverGetVersion") == 0) f = (void *)cuDriverGetVersion;
    else if (strcmp(symbol, "cuCtxGetCurrent") == 0) f = (void *)cuCtxGetCurrent;
    else if (strcmp(symbol, "cuMemAlloc") == 0 && version >= 3020) f = (void *)cuMemAlloc_v2;
    else if (strcmp(symbol, "cuStubOnly") == 0) f = (void *)cuStubOnly;
    else if (strcmp(symbol, "cuAlias") == 0) f = (void *)cuInit;   /* not in the table */
    else if (strcmp(symbol, "cuGetProcAddress") == 0)
        f = version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    return f;
}

STUB_EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                                    int *status)
{
    (void)flags;
    void *f = rt_stub_lookup(symbol, version);
    if (pfn != NULL)
        *pfn = f;
    if (status != NULL)
        *status = f ? 0 : 1;
    return f ? 0 : 500;
}

STUB_EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
