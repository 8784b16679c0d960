/*
 * fake_stubs.c - every driver export of the generated API list, as a weak default.
 *
 * The generated cushim_driver_apis.inc drives this file: each CUSHIM_API line
 * becomes a weak function that counts the call and answers
 * CUDA_ERROR_NOT_INITIALIZED before cuInit, CUDA_ERROR_NOT_SUPPORTED after.
 * The hand-written core (the other fake_*.c files) replaces the ones that
 * behave with strong definitions. The same list yields the name table behind
 * the call counters and the address table behind cuGetProcAddress; the library
 * is linked with -Bsymbolic so those addresses are the fake's own even when a
 * shim that exports the same names is preloaded.
 */
#include <stdio.h>
#include <string.h>

#include "fake_internal.h"

static atomic_uint_fast64_t fk_calls[CUSHIM_API_ID_LIMIT];

/* A stand-in profiler's entry callback (tests/e2e/fake_cupti.c, as CUPTI's driver callbacks): called with the
   export's name at the entry of every call. */
typedef void (*fk_api_cb_fn)(const char *name);
static _Atomic(fk_api_cb_fn) fk_api_cb;
static const char *fk_export_name(uint32_t id);

void fk_count(uint32_t id)
{
    fk_api_cb_fn cb;
    if (id < CUSHIM_API_ID_LIMIT)
        atomic_fetch_add_explicit(&fk_calls[id], 1, memory_order_relaxed);
    if ((cb = atomic_load_explicit(&fk_api_cb, memory_order_acquire)) != NULL)
        cb(fk_export_name(id));
}

FK_EXPORT void fake_cuda_set_api_callback(fk_api_cb_fn cb)
{
    atomic_store_explicit(&fk_api_cb, cb, memory_order_release);
}

void fk_counts_reset(void)
{
    for (size_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        atomic_store(&fk_calls[i], 0);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define FK_STUB_CUSHIM_RET_CURESULT(RET) \
    return atomic_load(&fk_initialized) ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_NOT_INITIALIZED;
#define FK_STUB_CUSHIM_RET_CUDAERROR(RET) return (RET)801;
#define FK_STUB_CUSHIM_RET_OTHER(RET) \
    { RET r_; memset(&r_, 0, sizeof r_); return r_; }

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) \
    __attribute__((weak)) RET NAME PROTO                        \
    {                                                           \
        fk_count(ID);                                           \
        FK_STUB_##RETKIND(RET)                                  \
    }
#include "cushim_driver_apis.inc"
#undef CUSHIM_API

#pragma GCC diagnostic pop

struct fk_export {
    uint32_t id;
    const char *name;
    void *addr;
};

static const struct fk_export fk_exports[] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) {ID, #NAME, (void *)&NAME},
#include "cushim_driver_apis.inc"
#undef CUSHIM_API
};

#define FK_NEXPORTS (sizeof fk_exports / sizeof fk_exports[0])

FK_HIDDEN void *fk_export_addr(uint32_t id)
{
    for (size_t i = 0; i < FK_NEXPORTS; i++)
        if (fk_exports[i].id == id)
            return fk_exports[i].addr;
    return NULL;
}

static const char *fk_export_name(uint32_t id)
{
    for (size_t i = 0; i < FK_NEXPORTS; i++)
        if (fk_exports[i].id == id)
            return fk_exports[i].name;
    return "";
}

static const struct fk_export *fk_export_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < FK_NEXPORTS; i++)
        if (strcmp(fk_exports[i].name, name) == 0)
            return &fk_exports[i];
    return NULL;
}

FK_EXPORT uint64_t fake_cuda_call_count(const char *name)
{
    const struct fk_export *e = fk_export_by_name(name);
    return e ? atomic_load(&fk_calls[e->id]) : 0;
}

FK_EXPORT uint64_t fake_cuda_calls_total(void)
{
    uint64_t n = 0;
    for (size_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        n += atomic_load(&fk_calls[i]);
    return n;
}

FK_EXPORT int fake_cuda_dump_counts(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    for (size_t i = 0; i < FK_NEXPORTS; i++) {
        uint64_t n = atomic_load(&fk_calls[fk_exports[i].id]);
        if (n)
            fprintf(f, "%s\t%llu\n", fk_exports[i].name, (unsigned long long)n);
    }
    return fclose(f) == 0 ? 0 : -1;
}

FK_EXPORT void *fake_cuda_proc(const char *name)
{
    const struct fk_export *e = fk_export_by_name(name);
    return e ? e->addr : NULL;
}
