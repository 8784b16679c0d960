/*
 * cupti_activity.c - CUPTI activity tracing alone: the comparison of the GPU
 * check 'tracebench' (tests/gpu/checks/trace.sh) when Nsight Systems is not
 * installed. An injection library (CUDA_INJECTION64_PATH) that enables what a
 * tracer of API calls and GPU work built on CUPTI's activity API alone needs:
 * concurrent kernels, memcpy, memset, runtime and driver API records (until
 * 2026-12-03 also external correlation, which --trace-gpu enabled before it
 * linked through callbacks: no record without a push, nothing else changed),
 * with 4 MiB buffers like the trace plugin's, and does the least a tracer can
 * do with the records: it counts them per kind. No shim involved.
 *
 * USAGE:
 *   CUDA_INJECTION64_PATH=/path/libcupti_activity.so [CUPTI_ACTIVITY_OUT=FILE] PROGRAM...
 * CUPTI_ACTIVITY_KINDS=gpu enables only the kernel, memcpy and memset kinds (no API records); gpu+cb adds a
 * callback subscriber with an empty callback on the driver and runtime functions whose names hold Launch, Memcpy
 * or Memset (what --trace-gpu's linking subscribes to): what CUPTI's GPU records and that subscriber cost each
 * call, apart from the API records (the experiment of docs/benchmarks.md "What --trace-gpu's CUPTI costs").
 * At exit (atexit, registered at injection) it flushes CUPTI's buffers and
 * writes 'kernel N', 'memcpy N', 'memset N', 'runtime N', 'driver N',
 * 'other N', 'dropped N' lines to FILE (when given): the proof that it
 * recorded the program's GPU work.
 */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CA_EXPORT __attribute__((visibility("default")))
#define CA_BUF (4u * 1024u * 1024u)

enum { CA_KERNEL, CA_MEMCPY, CA_MEMSET, CA_RUNTIME, CA_DRIVER, CA_OTHER, CA_DROPPED, CA_N };
static const char *const ca_names[CA_N] = { "kernel", "memcpy", "memset", "runtime", "driver", "other", "dropped" };
static uint64_t ca_count[CA_N];
static int ca_on;
static uint64_t ca_cb_calls;   /* gpu+cb's callbacks */

static void CUPTIAPI ca_request(uint8_t **buffer, size_t *size, size_t *max)
{
    *buffer = aligned_alloc(8, CA_BUF);
    *size = *buffer ? CA_BUF : 0;
    *max = 0;
}

static void CUPTIAPI ca_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    size_t dropped = 0;
    (void)size;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        int k;
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: k = CA_KERNEL; break;
        case CUPTI_ACTIVITY_KIND_MEMCPY: k = CA_MEMCPY; break;
        case CUPTI_ACTIVITY_KIND_MEMSET: k = CA_MEMSET; break;
        case CUPTI_ACTIVITY_KIND_RUNTIME: k = CA_RUNTIME; break;
        case CUPTI_ACTIVITY_KIND_DRIVER: k = CA_DRIVER; break;
        default: k = CA_OTHER; break;
        }
        __atomic_fetch_add(&ca_count[k], 1, __ATOMIC_RELAXED);
    }
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped > 0)
        __atomic_fetch_add(&ca_count[CA_DROPPED], dropped, __ATOMIC_RELAXED);
    free(buffer);
}

static void ca_exit(void)
{
    const char *out = getenv("CUPTI_ACTIVITY_OUT");
    if (!ca_on)
        return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (out != NULL && out[0]) {
        FILE *f = fopen(out, "w");
        if (f == NULL) {
            perror("cupti_activity: CUPTI_ACTIVITY_OUT");
            return;
        }
        for (int i = 0; i < CA_N; i++)
            fprintf(f, "%s %llu\n", ca_names[i], (unsigned long long)__atomic_load_n(&ca_count[i], __ATOMIC_RELAXED));
        fprintf(f, "callbacks %llu\n", (unsigned long long)__atomic_load_n(&ca_cb_calls, __ATOMIC_RELAXED));
        fclose(f);
    }
}

static void CUPTIAPI ca_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
    (void)ud, (void)dom, (void)cbid, (void)data;
    __atomic_fetch_add(&ca_cb_calls, 1, __ATOMIC_RELAXED);
}

/* gpu+cb: the empty subscriber on the functions --trace-gpu subscribes to */
static CUptiResult ca_subscribe(void)
{
    static const struct {
        CUpti_CallbackDomain dom;
        uint32_t n;
    } doms[2] = {{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE}};
    CUpti_SubscriberHandle h;
    CUptiResult r = cuptiSubscribe(&h, ca_cb, NULL);
    for (int k = 0; r == CUPTI_SUCCESS && k < 2; k++)
        for (uint32_t cbid = 1; r == CUPTI_SUCCESS && cbid < doms[k].n; cbid++) {
            const char *name = NULL;
            if (cuptiGetCallbackName(doms[k].dom, cbid, &name) != CUPTI_SUCCESS || name == NULL ||
                !(strstr(name, "Launch") || strstr(name, "Memcpy") || strstr(name, "Memset")))
                continue;
            r = cuptiEnableCallback(1, h, doms[k].dom, cbid);
        }
    return r;
}

CA_EXPORT int InitializeInjection(void)
{
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    };
    const char *which = getenv("CUPTI_ACTIVITY_KINDS");
    int gpu_only = which != NULL && strncmp(which, "gpu", 3) == 0;
    size_t n = gpu_only ? 3 : sizeof kinds / sizeof kinds[0];
    CUptiResult r = cuptiActivityRegisterCallbacks(ca_request, ca_complete);
    for (size_t i = 0; r == CUPTI_SUCCESS && i < n; i++)
        r = cuptiActivityEnable(kinds[i]);
    if (r == CUPTI_SUCCESS && which != NULL && strcmp(which, "gpu+cb") == 0)
        r = ca_subscribe();
    if (r != CUPTI_SUCCESS) {
        const char *s = NULL;
        cuptiGetResultString(r, &s);
        fprintf(stderr, "cupti_activity: enabling activity records failed: %s\n", s ? s : "?");
        return 0;
    }
    ca_on = 1;
    atexit(ca_exit);
    return 1;
}
