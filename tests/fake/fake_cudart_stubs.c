/*
 * fake_cudart_stubs.c - every runtime export of the generated API list, as a weak default.
 *
 * cushim_runtime_apis.inc drives this file: each line becomes a weak function
 * that counts the call and returns cudaErrorNotSupported (or a zeroed value for
 * functions that do not return cudaError_t). fake_cudart.c defines the ones
 * that behave. FAKE_CUDART_COUNTS=<file>: per-name call counts written at exit
 * ('<file>.<pid>' from a forked child), as the fake driver does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

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

static pid_t frt_first_pid;

static void frt_write_counts(void)
{
    const char *path = getenv("FAKE_CUDART_COUNTS");
    if (path == NULL || *path == '\0')
        return;
    char buf[4096];
    if (getpid() != frt_first_pid)
        snprintf(buf, sizeof buf, "%s.%ld", path, (long)getpid());
    else
        snprintf(buf, sizeof buf, "%s", path);
    FILE *f = fopen(buf, "w");
    if (f == NULL)
        return;
    for (size_t i = 0; i < sizeof frt_exports / sizeof frt_exports[0]; i++) {
        uint64_t n = atomic_load(&frt_calls[frt_exports[i].id]);
        if (n)
            fprintf(f, "%s\t%llu\n", frt_exports[i].name, (unsigned long long)n);
    }
    fclose(f);
}

static void frt_after_fork_child(void)
{
    for (size_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        atomic_store(&frt_calls[i], 0);
}

__attribute__((constructor)) static void frt_stubs_init(void)
{
    const char *s = getenv("FAKE_CUDA_COUNTS_OWNER_PID");   /* shared with the fake driver */
    if (s != NULL && *s != '\0') {
        frt_first_pid = (pid_t)atol(s);
    } else {
        char buf[32];
        frt_first_pid = getpid();
        snprintf(buf, sizeof buf, "%ld", (long)frt_first_pid);
        setenv("FAKE_CUDA_COUNTS_OWNER_PID", buf, 0);
    }
    atexit(frt_write_counts);
    pthread_atfork(NULL, NULL, frt_after_fork_child);
}
