/*
 * fake_cupti.c - a stand-in libcupti for the trace plugin's CPU test of --trace-gpu (trace_gpu in
 * run_trace.sh): the activity and callback API functions the plugin uses, with the record layouts of the
 * toolkit's cupti_activity.h. It cannot see GPU work, so it makes some up.
 *   Callback mode (the plugin's first choice): cuptiSubscribe registers with the fake driver's entry hook
 *   (fake_cuda_set_api_callback, tests/fake/fake_stubs.c); every call of a driver function the subscriber
 *   enabled gets an entry and an exit callback with a new correlation id, and becomes, at
 *   cuptiActivityFlushAll, one kernel record with that id.
 *   With FAKE_CUPTI_BUSY=1, cuptiSubscribe answers that another subscriber exists (as under Nsight Systems):
 *   every external correlation id pushed (the plugin's pre hook of a launch, copy or set) becomes one kernel
 *   record and its external correlation record, the kernels first (the order the plugin must tolerate).
 * Kernels are "fake_kernel_a"/"fake_kernel_b" on stream 7; one memcpy record no call is correlated with.
 * cuptiEnableDomain (the GPU benchmark's plumbing test, run_gpubench_ab.sh) enables every function it knows.
 * The trace plugin's gpu-ab copy (TR_GPU_AB, the GPU check tracegpuab; run_gpubench_ab.sh): with the DRIVER kind
 * enabled, every driver call made while subscribed becomes an API record; cuptiActivityDisable turns a kind off;
 * cuptiFinalize detaches everything (subscriber, buffers, clock, kinds) and is refused outside an exit callback,
 * where NVIDIA's cupti_finalize sample calls it (the real one is not, but the plugin must call it there).
 * cuptiActivityFlushAll after cuptiFinalize, with nothing attached again since, says so on stderr (the real
 * CUPTI would start again there).
 * FAKE_CUPTI_DRIVER_CALL=1: cuptiActivityRegisterCallbacks calls cuCtxGetCurrent through the global scope, as the
 * real CUPTI makes CUDA calls while it starts (e2e trace_gpu_nvtx_first).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_version.h>

#define FC_MAX 4096
#define FC_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc fc_request;
static CUpti_BuffersCallbackCompleteFunc fc_complete;
static CUpti_TimestampCallbackFunc fc_ts;
static uint64_t fc_ids[FC_MAX];
static uint32_t fc_n;
static char fc_names[FC_MAX][32];
static int fc_callbacks;   /* the ids in fc_ids are CUPTI correlation ids from callbacks */
static uint32_t fc_next_corr = 100;

/* The driver functions this stand-in knows callback ids of (the rest: CUPTI_ERROR_INVALID_PARAMETER). */
static const struct {
    CUpti_CallbackId cbid;
    const char *name;
} fc_cbids[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, "cuCtxGetCurrent"},
};
#define FC_NCBIDS (sizeof fc_cbids / sizeof fc_cbids[0])
static CUpti_CallbackFunc fc_cb;
static void *fc_cb_user;
static int fc_enabled[FC_NCBIDS];
static int fc_driver_kind;        /* CUPTI_ACTIVITY_KIND_DRIVER enabled: API records */
static uint32_t fc_api_n;         /* API records waiting for the next flush */
static __thread int fc_in_exit;   /* inside an exit callback: where cuptiFinalize is accepted */
static int fc_finalized;          /* cuptiFinalize ran and nothing attached again since (atomic) */

FC_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid, const char **name)
{
    for (size_t i = 0; dom == CUPTI_CB_DOMAIN_DRIVER_API && i < FC_NCBIDS; i++)
        if (fc_cbids[i].cbid == cbid) {
            *name = fc_cbids[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

FC_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle h, CUpti_CallbackDomain dom,
                                          CUpti_CallbackId cbid)
{
    (void)h;
    for (size_t i = 0; dom == CUPTI_CB_DOMAIN_DRIVER_API && i < FC_NCBIDS; i++)
        if (fc_cbids[i].cbid == cbid) {
            fc_enabled[i] = enable != 0;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

/* Every function of the domain this stand-in knows (bench/gpu/launch_bench.c's BENCH_CUPTI: the whole driver API). */
FC_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle h, CUpti_CallbackDomain dom)
{
    (void)h;
    if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < FC_NCBIDS; i++)
        fc_enabled[i] = enable != 0;
    return CUPTI_SUCCESS;
}

/* The fake driver's entry hook: CUPTI's callbacks of an enabled function, a correlation id for its work. */
static void fc_api_enter(const char *name)
{
    if (__atomic_load_n(&fc_driver_kind, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&fc_lock);
        if (fc_api_n < FC_MAX)
            fc_api_n++;
        pthread_mutex_unlock(&fc_lock);
    }
    for (size_t i = 0; i < FC_NCBIDS; i++) {
        CUpti_CallbackData d;
        if (!fc_enabled[i] || strcmp(fc_cbids[i].name, name) != 0)
            continue;
        memset(&d, 0, sizeof d);
        d.functionName = name;
        pthread_mutex_lock(&fc_lock);
        d.correlationId = fc_next_corr++;
        if (fc_n < FC_MAX)
            fc_ids[fc_n++] = d.correlationId;
        pthread_mutex_unlock(&fc_lock);
        d.callbackSite = CUPTI_API_ENTER;
        fc_cb(fc_cb_user, CUPTI_CB_DOMAIN_DRIVER_API, fc_cbids[i].cbid, &d);
        d.callbackSite = CUPTI_API_EXIT;
        fc_in_exit = 1;
        fc_cb(fc_cb_user, CUPTI_CB_DOMAIN_DRIVER_API, fc_cbids[i].cbid, &d);
        fc_in_exit = 0;
        if (fc_cb == NULL)   /* finalized in that callback */
            return;
    }
}

FC_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *user)
{
    const char *busy = getenv("FAKE_CUPTI_BUSY");
    void (*set)(void (*)(const char *));
    if (busy != NULL && busy[0] == '1')
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    *(void **)(void *)&set = dlsym(RTLD_DEFAULT, "fake_cuda_set_api_callback");
    if (set == NULL)
        return CUPTI_ERROR_NOT_INITIALIZED;
    fc_cb = cb;
    fc_cb_user = user;
    fc_callbacks = 1;
    *h = (CUpti_SubscriberHandle)(void *)&fc_cb;
    set(fc_api_enter);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
    void (*set)(void (*)(const char *));
    (void)h;
    *(void **)(void *)&set = dlsym(RTLD_DEFAULT, "fake_cuda_set_api_callback");
    if (set != NULL)
        set(NULL);
    fc_callbacks = 0;
    memset(fc_enabled, 0, sizeof fc_enabled);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                     CUpti_BuffersCallbackCompleteFunc done)
{
    if (getenv("FAKE_CUPTI_DRIVER_CALL") != NULL) {
        /* the real CUPTI makes CUDA calls as it starts, through the global scope (the shim's exports) */
        CUresult (*cur)(CUcontext *) = (CUresult(*)(CUcontext *))dlsym(RTLD_DEFAULT, "cuCtxGetCurrent");
        CUcontext c;
        if (cur != NULL)
            cur(&c);
    }
    fc_request = req;
    fc_complete = done;
    __atomic_store_n(&fc_finalized, 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    fc_ts = f;
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER)
        __atomic_store_n(&fc_driver_kind, 1, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER)
        __atomic_store_n(&fc_driver_kind, 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiFinalize(void)
{
    if (!fc_in_exit)
        return CUPTI_ERROR_NOT_SUPPORTED;
    cuptiUnsubscribe(NULL);
    pthread_mutex_lock(&fc_lock);
    fc_cb = NULL;
    fc_request = NULL;
    fc_complete = NULL;
    fc_ts = NULL;
    __atomic_store_n(&fc_finalized, 1, __ATOMIC_RELAXED);
    fc_n = 0;
    fc_api_n = 0;
    __atomic_store_n(&fc_driver_kind, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fc_lock);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || fc_callbacks)   /* callback mode never pushes */
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fc_lock);
    if (fc_n < FC_MAX)
        fc_ids[fc_n++] = id;
    pthread_mutex_unlock(&fc_lock);
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *last)
{
    (void)kind;
    *last = 0;
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx, (void)stream;
    *dropped = 0;
    return CUPTI_SUCCESS;
}

static size_t fc_size(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    default: return 0;
    }
}

FC_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
    uint8_t *p = *rec == NULL ? buffer : (uint8_t *)*rec + fc_size(*rec);
    if (p + sizeof(CUpti_Activity) > buffer + valid || fc_size((CUpti_Activity *)p) == 0)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)p;
    return CUPTI_SUCCESS;
}

FC_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    uint8_t *buf = NULL;
    size_t size = 0, max = 0, off = 0;
    uint64_t t = fc_ts ? fc_ts() : 1000000;
    (void)flag;
    if (__atomic_load_n(&fc_finalized, __ATOMIC_RELAXED))   /* the real one would start CUPTI again here */
        fprintf(stderr, "fake_cupti: cuptiActivityFlushAll after cuptiFinalize\n");
    if (fc_request == NULL || fc_complete == NULL)
        return CUPTI_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&fc_lock);
    fc_request(&buf, &size, &max);
    if (buf == NULL) {
        pthread_mutex_unlock(&fc_lock);
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < fc_n && off + sizeof(CUpti_ActivityKernel10) <= size; i++) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = t + i * 1000;
        k.end = k.start + 500;
        k.deviceId = 0;
        k.streamId = 7;
        k.correlationId = fc_callbacks ? (uint32_t)fc_ids[i] : i + 1;
        k.gridX = (int32_t)i + 1, k.gridY = 1, k.gridZ = 1, k.blockX = 128, k.blockY = 1, k.blockZ = 1;
        memcpy(fc_names[i], "fake_kernel_", 12);
        fc_names[i][12] = (char)('a' + i % 2);   /* two kernel names */
        k.name = fc_names[i];
        memcpy(buf + off, &k, sizeof k);
        off += sizeof k;
    }
    if (off + sizeof(CUpti_ActivityMemcpy6) <= size) {
        CUpti_ActivityMemcpy6 m;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.copyKind = 1;   /* HtoD */
        m.bytes = 4096;
        m.start = t;
        m.end = t + 100;
        m.streamId = 7;
        m.correlationId = 999999;   /* no call carries it */
        memcpy(buf + off, &m, sizeof m);
        off += sizeof m;
    }
    for (uint32_t i = 0; !fc_callbacks && i < fc_n && off + sizeof(CUpti_ActivityExternalCorrelation) <= size; i++) {
        CUpti_ActivityExternalCorrelation e;
        memset(&e, 0, sizeof e);
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        e.externalId = fc_ids[i];
        e.correlationId = i + 1;
        memcpy(buf + off, &e, sizeof e);
        off += sizeof e;
    }
    for (uint32_t i = 0; i < fc_api_n && off + sizeof(CUpti_ActivityAPI) <= size; i++) {
        CUpti_ActivityAPI a;
        memset(&a, 0, sizeof a);
        a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
        a.start = t;
        a.end = t + 10;
        a.correlationId = 500000 + i;
        memcpy(buf + off, &a, sizeof a);
        off += sizeof a;
    }
    fc_n = 0;
    fc_api_n = 0;
    pthread_mutex_unlock(&fc_lock);
    fc_complete(NULL, 0, buf, size, off);
    return CUPTI_SUCCESS;
}
