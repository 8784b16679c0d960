/*
 * fake_cudart_stubs.c - every runtime export of the generated API list, as a weak default.
 *
 * cushim_runtime_apis.inc drives this file: each line becomes a weak function
 * that counts the call and returns cudaErrorNotSupported (or a zeroed value for
 * functions that do not return cudaError_t). fake_cudart.c defines the ones
 * that behave.
 */
#include <string.h>

#include "fake_cudart_internal.h"

static atomic_uint_fast64_t frt_calls[CUSHIM_API_ID_LIMIT];

void frt_count(uint32_t id)
{
    if (id < CUSHIM_API_ID_LIMIT)
        atomic_fetch_add_explicit(&frt_calls[id], 1, memory_order_relaxed);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define FRT_STUB_CUSHIM_RET_CUDAERROR(RET) return cudaErrorNotSupported;
#define FRT_STUB_CUSHIM_RET_CURESULT(RET) return (RET)CUDA_ERROR_NOT_SUPPORTED;
#define FRT_STUB_CUSHIM_RET_OTHER(RET) \
    { RET r_; memset(&r_, 0, sizeof r_); return r_; }

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) \
    __attribute__((weak)) RET NAME PROTO                        \
    {                                                           \
        frt_count(ID);                                          \
        FRT_STUB_##RETKIND(RET)                                 \
    }
#include "cushim_runtime_apis.inc"
#undef CUSHIM_API

#pragma GCC diagnostic pop

static const struct {
    uint32_t id;
    const char *name;
} frt_exports[] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) {ID, #NAME},
#include "cushim_runtime_apis.inc"
#undef CUSHIM_API
};

__attribute__((visibility("default"))) uint64_t fake_cudart_call_count(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof frt_exports / sizeof frt_exports[0]; i++)
        if (strcmp(frt_exports[i].name, name) == 0)
            return atomic_load(&frt_calls[frt_exports[i].id]);
    return 0;
}
