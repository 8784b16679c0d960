/*
 * fake_stream.c - streams, events and host functions of the fake driver.
 *
 * Work the fake accepts (copies, sets, launches) completes before the call
 * returns, so streams only order host functions. cuLaunchHostFunc (and
 * cuStreamAddCallback, whose callback gets CUDA_SUCCESS) queues the
 * function for one callback thread that the fake owns, as the real driver runs
 * host functions on a thread of its own; synchronising a stream (or the
 * context) waits until the functions queued on it have run. Events record a
 * host timestamp, so cuEventElapsedTime measures real elapsed time.
 *
 * With FAKE_CUDA_KERNEL_US=N (tests of the compute-time limiter), each kernel
 * launch occupies its stream for N microseconds of wall time after the work
 * queued before it: an event recorded after it completes then (cuEventQuery
 * says CUDA_ERROR_NOT_READY until then, cuEventElapsedTime measures the
 * simulated times), and cuEventSynchronize, cuStreamSynchronize and
 * cuCtxSynchronize wait for it. The legacy and per-thread default streams
 * share one queue. Nothing runs: only time passes. FAKE_CUDA_KERNEL_LOG=FILE
 * appends each simulated kernel's "submit start end" (CLOCK_MONOTONIC ms) to FILE, so a
 * test can see how the kernels of several processes lie on one timeline.
 * FAKE_CUDA_SHARED_GPU=NAME makes the processes that set it share one simulated
 * GPU (a POSIX shared memory object NAME holding when it is next free): a kernel
 * starts no earlier than the last one any of them launched ends, as kernels of
 * processes that time-share a GPU cannot run at once (in launch order here,
 * where a real GPU switches between them every time slice).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fake_internal.h"

/* ---- streams ----------------------------------------------------------- */

static int fk_special_stream(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

CUresult fk_stream_check(CUstream s)
{
    if (!atomic_load(&fk_initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (fk_special_stream(s))
        return fk_ctx_valid(fk_current_ctx()) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    return s->magic == FK_MAGIC_STREAM ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- simulated kernel durations ---------------------------------------- */

static double fk_default_busy_until;       /* the legacy/per-thread default stream, under fk_lock */
static double fk_all_busy_until;           /* the latest end on any stream, under fk_lock         */

static double fk_kernel_ms(void)
{
    static _Atomic double ms = -1;
    double v = atomic_load(&ms);
    if (v < 0) {
        const char *e = getenv("FAKE_CUDA_KERNEL_US");
        v = e != NULL && *e ? strtod(e, NULL) / 1000.0 : 0.0;
        if (!(v >= 0))
            v = 0;
        atomic_store(&ms, v);
    }
    return v;
}

static double *fk_busy_slot(CUstream s)
{
    return fk_special_stream(s) ? &fk_default_busy_until : &s->busy_until_ms;
}

/* FAKE_CUDA_SHARED_GPU: the shared "free from" time in us (CLOCK_MONOTONIC), mapped once, or NULL */
static _Atomic uint64_t *fk_gpu;
static pthread_once_t fk_gpu_once = PTHREAD_ONCE_INIT;

static void fk_gpu_map(void)
{
    const char *name = getenv("FAKE_CUDA_SHARED_GPU");
    int fd;
    void *p;
    if (name == NULL || *name != '/' || (fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return;
    if (ftruncate(fd, 64) != 0) {   /* zero-filled; the same size for every process */
        close(fd);
        return;
    }
    p = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
        fk_gpu = (_Atomic uint64_t *)p;
}

static _Atomic uint64_t *fk_shared_gpu(void)
{
    pthread_once(&fk_gpu_once, fk_gpu_map);
    return fk_gpu;
}

static void fk_kernel_log(double submit, double start, double end)
{
    const char *path = getenv("FAKE_CUDA_KERNEL_LOG");
    char line[96];
    int fd, n;
    if (path == NULL || *path == '\0')
        return;
    if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return;
    n = snprintf(line, sizeof line, "%.3f %.3f %.3f\n", submit, start, end);
    if (n > 0 && write(fd, line, (size_t)n) != n) {
        /* a test's log: a short write shows as a malformed line there */
    }
    close(fd);
}

void fk_kernel_enqueue(CUstream s)
{
    double dur = fk_kernel_ms();
    double start, end;
    if (dur <= 0)
        return;
    double now = fk_now_ms();
    _Atomic uint64_t *gpu = fk_shared_gpu();
    pthread_mutex_lock(&fk_lock);
    double *b = fk_busy_slot(s);
    start = *b > now ? *b : now;
    if (gpu != NULL) {   /* after every kernel launched on the shared GPU so far */
        uint64_t cur = atomic_load(gpu), want;
        do {
            if ((double)cur / 1e3 > start)
                start = (double)cur / 1e3;
            want = (uint64_t)((start + dur) * 1e3);
        } while (!atomic_compare_exchange_weak(gpu, &cur, want));
    }
    end = *b = start + dur;
    if (*b > fk_all_busy_until)
        fk_all_busy_until = *b;
    pthread_mutex_unlock(&fk_lock);
    fk_kernel_log(now, start, end);
}

static _Thread_local int fk_all_streams;

double fk_all_done_ms(void)
{
    fk_all_streams = 1;
    double t = fk_stream_done_ms(NULL);
    fk_all_streams = 0;
    return t;
}

double fk_stream_done_ms(CUstream s)
{
    pthread_mutex_lock(&fk_lock);
    double t = s == NULL && fk_all_streams ? fk_all_busy_until : *fk_busy_slot(s);
    pthread_mutex_unlock(&fk_lock);
    return t;
}

void fk_wait_until_ms(double t)
{
    for (double now = fk_now_ms(); now < t; now = fk_now_ms()) {
        double left = t - now;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000), .tv_nsec = (long)((left - 1000.0 * (double)(time_t)(left / 1000)) * 1e6)};
        nanosleep(&ts, NULL);
    }
}

static CUresult fk_stream_create(CUstream *ph, unsigned int flags, int priority)
{
    FK_REQUIRE_INIT();
    if (ph == NULL || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = fk_current_ctx();
    if (!fk_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = fk_obj_alloc(sizeof *s);
    if (s == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = FK_MAGIC_STREAM;
    s->ctx = ctx;
    s->flags = flags;
    s->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
    *ph = s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FAKE_ENTER(cuStreamCreate);
    return fk_stream_create(phStream, Flags, 0);
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    FAKE_ENTER(cuStreamCreateWithPriority);
    return fk_stream_create(phStream, flags, priority);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FAKE_ENTER(cuStreamDestroy_v2);
    FK_REQUIRE_INIT();
    if (fk_special_stream(hStream) || hStream->magic != FK_MAGIC_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    fk_hostfn_drain(hStream);
    /* Kept (not freed) so that a use after destroy is reported, not undefined. */
    hStream->magic = FK_MAGIC_DEAD;
    return CUDA_SUCCESS;
}

static CUresult fk_stream_sync(CUstream s)
{
    CUresult r = fk_stream_check(s);
    if (r == CUDA_SUCCESS) {
        fk_wait_until_ms(fk_stream_done_ms(s));
        fk_hostfn_drain(fk_special_stream(s) ? NULL : s);
    }
    return r;
}

CUresult cuStreamSynchronize(CUstream hStream)
{
    FAKE_ENTER(cuStreamSynchronize);
    return fk_stream_sync(hStream);
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    FAKE_ENTER(cuStreamSynchronize_ptsz);
    return fk_stream_sync(hStream);
}

static CUresult fk_stream_query(CUstream s);

CUresult cuStreamQuery(CUstream hStream)
{
    FAKE_ENTER(cuStreamQuery);
    return fk_stream_query(hStream);
}

CUresult cuStreamQuery_ptsz(CUstream hStream)
{
    FAKE_ENTER(cuStreamQuery_ptsz);
    return fk_stream_query(hStream);
}

static CUresult fk_stream_wait_event(CUstream s, CUevent e)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    return e != NULL && e->magic == FK_MAGIC_EVENT ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FAKE_ENTER(cuStreamWaitEvent);
    (void)Flags;
    return fk_stream_wait_event(hStream, hEvent);
}

CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FAKE_ENTER(cuStreamWaitEvent_ptsz);
    (void)Flags;
    return fk_stream_wait_event(hStream, hEvent);
}

CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
    FAKE_ENTER(cuStreamGetPriority);
    CUresult r = fk_stream_check(hStream);
    if (r != CUDA_SUCCESS)
        return r;
    if (priority == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *priority = fk_special_stream(hStream) ? 0 : hStream->priority;
    return CUDA_SUCCESS;
}

/* ---- events ------------------------------------------------------------ */

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    FAKE_ENTER(cuEventCreate);
    FK_REQUIRE_INIT();
    if (phEvent == NULL || (Flags & ~0xfu) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_ctx_valid(fk_current_ctx()))
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUevent_st *e = fk_obj_alloc(sizeof *e);
    if (e == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = FK_MAGIC_EVENT;
    e->flags = Flags;
    *phEvent = e;
    return CUDA_SUCCESS;
}

static CUresult fk_event_check(CUevent e)
{
    if (!atomic_load(&fk_initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    return e != NULL && e->magic == FK_MAGIC_EVENT ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_event_record(CUevent e, CUstream s)
{
    CUresult r = fk_event_check(e);
    if (r == CUDA_SUCCESS)
        r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    double now = fk_now_ms();
    pthread_mutex_lock(&fk_lock);
    double done = *fk_busy_slot(s);
    e->recorded = 1;
    e->ms = done > now ? done : now;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    FAKE_ENTER(cuEventRecord);
    return fk_event_record(hEvent, hStream);
}

CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    FAKE_ENTER(cuEventRecord_ptsz);
    return fk_event_record(hEvent, hStream);
}

CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    FAKE_ENTER(cuEventRecordWithFlags);
    (void)flags;
    return fk_event_record(hEvent, hStream);
}

CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    FAKE_ENTER(cuEventRecordWithFlags_ptsz);
    (void)flags;
    return fk_event_record(hEvent, hStream);
}

/* When a recorded event completes (0: never recorded, complete). */
static double fk_event_done_ms(CUevent e)
{
    pthread_mutex_lock(&fk_lock);
    double t = e->recorded ? e->ms : 0;
    pthread_mutex_unlock(&fk_lock);
    return t;
}

CUresult cuEventQuery(CUevent hEvent)
{
    FAKE_ENTER(cuEventQuery);
    CUresult r = fk_event_check(hEvent);
    if (r == CUDA_SUCCESS && fk_event_done_ms(hEvent) > fk_now_ms())
        r = CUDA_ERROR_NOT_READY;
    return r;
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    FAKE_ENTER(cuEventSynchronize);
    CUresult r = fk_event_check(hEvent);
    if (r == CUDA_SUCCESS)
        fk_wait_until_ms(fk_event_done_ms(hEvent));
    return r;
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    FAKE_ENTER(cuEventDestroy_v2);
    CUresult r = fk_event_check(hEvent);
    if (r == CUDA_SUCCESS)
        hEvent->magic = FK_MAGIC_DEAD;
    return r;
}

static CUresult fk_elapsed(float *ms, CUevent a, CUevent b)
{
    CUresult r = fk_event_check(a);
    if (r == CUDA_SUCCESS)
        r = fk_event_check(b);
    if (r != CUDA_SUCCESS)
        return r;
    if (ms == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    if (!a->recorded || !b->recorded || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        r = CUDA_ERROR_INVALID_HANDLE;
    else
        *ms = (float)(b->ms - a->ms);
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FAKE_ENTER(cuEventElapsedTime_v2);
    return fk_elapsed(pMilliseconds, hStart, hEnd);
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FAKE_ENTER(cuEventElapsedTime);
    return fk_elapsed(pMilliseconds, hStart, hEnd);
}

/* ---- host functions ---------------------------------------------------- */

struct fk_hostfn {
    struct fk_hostfn *next;
    CUstream stream;
    CUhostFn fn;
    void *user;
};

/* Guarded by fk_hq_lock: the queue, the item running now and the thread. */
static pthread_mutex_t fk_hq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_hq_cond = PTHREAD_COND_INITIALIZER;
static struct fk_hostfn *fk_hq_head, *fk_hq_tail;
static struct fk_hostfn *fk_hq_running;
static int fk_hq_started;
static pthread_t fk_hq_thread;
static atomic_uint_fast64_t fk_hq_done;

static void *fk_hostfn_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fk_hq_lock);
    for (;;) {
        while (fk_hq_head == NULL)
            pthread_cond_wait(&fk_hq_cond, &fk_hq_lock);
        struct fk_hostfn *h = fk_hq_head;
        fk_hq_head = h->next;
        if (fk_hq_head == NULL)
            fk_hq_tail = NULL;
        fk_hq_running = h;
        pthread_mutex_unlock(&fk_hq_lock);
        h->fn(h->user);
        atomic_fetch_add(&fk_hq_done, 1);
        pthread_mutex_lock(&fk_hq_lock);
        fk_hq_running = NULL;
        free(h);
        pthread_cond_broadcast(&fk_hq_cond);
    }
    return NULL;
}

static int fk_hq_pending(CUstream s)
{
    if (fk_hq_running != NULL && (s == NULL || fk_hq_running->stream == s))
        return 1;
    for (struct fk_hostfn *h = fk_hq_head; h != NULL; h = h->next)
        if (s == NULL || h->stream == s)
            return 1;
    return 0;
}

void fk_hostfn_drain(CUstream s)
{
    pthread_mutex_lock(&fk_hq_lock);
    /* A host function that synchronises must not wait for itself. */
    if (!(fk_hq_started && pthread_equal(pthread_self(), fk_hq_thread)))
        while (fk_hq_pending(s))
            pthread_cond_wait(&fk_hq_cond, &fk_hq_lock);
    pthread_mutex_unlock(&fk_hq_lock);
}

static CUresult fk_launch_host_func(CUstream s, CUhostFn fn, void *user)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    if (fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_hostfn *h = calloc(1, sizeof *h);
    if (h == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    h->stream = fk_special_stream(s) ? NULL : s;
    h->fn = fn;
    h->user = user;
    pthread_mutex_lock(&fk_hq_lock);
    if (!fk_hq_started) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&fk_hq_thread, &attr, fk_hostfn_thread, NULL) != 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else
            fk_hq_started = 1;
        pthread_attr_destroy(&attr);
    }
    if (r == CUDA_SUCCESS) {
        if (fk_hq_tail != NULL)
            fk_hq_tail->next = h;
        else
            fk_hq_head = h;
        fk_hq_tail = h;
        pthread_cond_broadcast(&fk_hq_cond);
    } else {
        free(h);
    }
    pthread_mutex_unlock(&fk_hq_lock);
    return r;
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    FAKE_ENTER(cuLaunchHostFunc);
    return fk_launch_host_func(hStream, fn, userData);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    FAKE_ENTER(cuLaunchHostFunc_ptsz);
    return fk_launch_host_func(hStream, fn, userData);
}

/* cuStreamAddCallback: a host function that calls the callback with the stream and CUDA_SUCCESS (the fake's streams
   never fail). */
struct fk_stream_cb {
    CUstreamCallback cb;
    CUstream stream;
    void *user;
};

static void CUDA_CB fk_stream_cb_run(void *p)
{
    struct fk_stream_cb *c = p;
    c->cb(c->stream, CUDA_SUCCESS, c->user);
    free(c);
}

static CUresult fk_stream_add_callback(CUstream s, CUstreamCallback cb, void *user, unsigned flags)
{
    if (cb == NULL || flags != 0)
        return fk_stream_check(s) != CUDA_SUCCESS ? fk_stream_check(s) : CUDA_ERROR_INVALID_VALUE;
    struct fk_stream_cb *c = malloc(sizeof *c);
    if (c == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct fk_stream_cb){ .cb = cb, .stream = s, .user = user };
    CUresult r = fk_launch_host_func(s, fk_stream_cb_run, c);
    if (r != CUDA_SUCCESS)
        free(c);
    return r;
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    FAKE_ENTER(cuStreamAddCallback);
    return fk_stream_add_callback(hStream, callback, userData, flags);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    FAKE_ENTER(cuStreamAddCallback_ptsz);
    return fk_stream_add_callback(hStream, callback, userData, flags);
}

static CUresult fk_stream_query(CUstream s)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fk_hq_lock);
    int busy = fk_hq_pending(fk_special_stream(s) ? NULL : s);
    pthread_mutex_unlock(&fk_hq_lock);
    if (fk_stream_done_ms(s) > fk_now_ms())
        busy = 1;
    return busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

FK_EXPORT uint64_t fake_cuda_host_funcs_run(void)
{
    return atomic_load(&fk_hq_done);
}

/* A forked child has no callback thread: start afresh, dropping what was queued. */
static void fk_hq_prepare(void) { pthread_mutex_lock(&fk_hq_lock); }
static void fk_hq_parent(void) { pthread_mutex_unlock(&fk_hq_lock); }
static void fk_hq_child(void)
{
    fk_hq_head = fk_hq_tail = NULL;
    fk_hq_running = NULL;
    fk_hq_started = 0;
    pthread_mutex_unlock(&fk_hq_lock);
    pthread_cond_init(&fk_hq_cond, NULL);
}

__attribute__((constructor)) static void fk_stream_init(void)
{
    pthread_atfork(fk_hq_prepare, fk_hq_parent, fk_hq_child);
}

/* The flags a stream was created with (0 for the default streams). */
CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    FAKE_ENTER(cuStreamGetFlags);
    FK_REQUIRE_INIT();
    if (flags == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_special_stream(hStream)) {
        *flags = 0;
        return CUDA_SUCCESS;
    }
    if (hStream->magic != FK_MAGIC_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    *flags = hStream->flags;
    return CUDA_SUCCESS;
}

/* Stream capture and graphs: fake_graph.c. */
