/*
 * fake_nccl.c - a small fake NCCL (libnccl.so.2) for the CPU tests: buffers in host memory (the fake driver's
 * device memory), counts in FAKE_NCCL_COUNTS ("%p" in it stands for the pid: several processes of one test).
 * ncclMemAlloc/ncclMemFree take device memory of the process's driver (cuMemAlloc_v2); ncclCommRegister gives a
 * handle that ncclCommDeregister takes back once. Every other export is absent (the shim answers ncclSystemError).
 *
 * One rank: an all-reduce copies. Several ranks, in several processes (docs/remote.md, "NCCL": two clients'
 * back ends in one cushim-serve): the unique id names a folder under $TMPDIR (or /tmp), "fake-nccl-<token>",
 * where the ranks meet - ncclCommInitRank waits until every rank has joined (as NCCL's bootstrap does), and each
 * collective writes this rank's send buffer to a file of its own, waits for every rank's, and reduces them in
 * rank order (float32 and int32; sum, max, min). Files are written whole and then renamed, so a reader never sees
 * half of one; a rank removes its file of collective k once every rank has written its file of k+1 (all have read
 * k). A rank missing for 10 s fails the call (ncclSystemError) instead of hanging.
 *
 * Groups as NCCL's: between ncclGroupStart and ncclGroupEnd (on one thread: the depth is the thread's) a
 * collective's arguments are checked at the call and the collective is run by the outermost ncclGroupEnd, in the
 * order of the calls, which returns the first failure - so a collective that reached another thread than its
 * group's start would not run there.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcount.h"

static const char *const fl_names[] = {"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce",
                                       "ncclCommDestroy", "ncclGetErrorString", "ncclGroupStart", "ncclGroupEnd",
                                       "ncclCommCount", "ncclCommUserRank", "ncclCommGetAsyncError",
                                       "ncclGetLastError", "ncclCommInitRankConfig", "ncclMemAlloc",
                                       "ncclMemFree", "ncclCommRegister", "ncclCommDeregister",
                                       "ncclRedOpCreatePreMulSum", "ncclRedOpDestroy", "ncclGroupSimulateEnd"};
FL_COUNTING("FAKE_NCCL_COUNTS", fake_nccl_count)

#define FN_MAGIC "fake-nccl:"
#define FN_MAX_COMMS 64
#define FN_MAX_PENDING 64
#define FN_WAIT_MS 10000

struct ncclComm {
    int nranks, rank;
    uint64_t seq;          /* this rank's collectives so far */
    char dir[200];         /* where the ranks meet (several ranks) */
};
static struct ncclComm *fn_comms[FN_MAX_COMMS];
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct fn_op {
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    ncclComm_t comm;
} fn_op;
static _Thread_local int fn_depth;
static _Thread_local int fn_npending;
static _Thread_local fn_op fn_pending[FN_MAX_PENDING];
static _Thread_local ncclResult_t fn_group_error;
static char fn_last_error[1024];   /* as NCCL's: one text for the process, the last warning */

static ncclResult_t fn_fail(ncclResult_t r, const char *fmt, int value)
{
    pthread_mutex_lock(&fn_lock);
    snprintf(fn_last_error, sizeof fn_last_error, fmt, value);
    pthread_mutex_unlock(&fn_lock);
    return r;
}

static int fn_known(ncclComm_t c)
{
    int found = 0;
    pthread_mutex_lock(&fn_lock);
    for (int i = 0; i < FN_MAX_COMMS && !found; i++)
        found = c != NULL && fn_comms[i] == c;
    pthread_mutex_unlock(&fn_lock);
    return found;
}

FL_EXPORT ncclResult_t ncclGetVersion(int *version)
{
    FK_COUNT(0);
    if (version == NULL)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static atomic_uint n;
    struct timespec ts;
    FK_COUNT(1);
    if (id == NULL)
        return ncclInvalidArgument;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, FN_MAGIC "%x-%llx-%x", (unsigned)getpid(),
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, atomic_fetch_add(&n, 1));
    return ncclSuccess;
}

static void fn_sleep_ms(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static void fn_path(char *out, size_t size, const struct ncclComm *c, const char *tag, uint64_t seq, int rank)
{
    snprintf(out, size, "%s/%s.%llu.%d", c->dir, tag, (unsigned long long)seq, rank);
}

/* Writes this rank's 'len' bytes as (tag, seq), waits for every rank's and reads them into all[rank * len]
   (all may be NULL: a barrier). 0, or -1 when a rank did not come in time or a file was short. */
static int fn_meet(struct ncclComm *c, const char *tag, uint64_t seq, const void *data, size_t len, uint8_t *all)
{
    char path[300], tmp[320];
    fn_path(path, sizeof path, c, tag, seq, c->rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (len != 0 && write(fd, data, len) != (ssize_t)len) || close(fd) != 0 || rename(tmp, path) != 0) {
        if (fd >= 0)
            unlink(tmp);
        return -1;
    }
    for (int r = 0; r < c->nranks; r++) {
        fn_path(path, sizeof path, c, tag, seq, r);
        int waited = 0;
        while ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 && errno == ENOENT && waited++ < FN_WAIT_MS)
            fn_sleep_ms();
        if (fd < 0)
            return -1;
        ssize_t got = len != 0 && all != NULL ? read(fd, all + (size_t)r * len, len) : 0;
        close(fd);
        if (all != NULL && len != 0 && got != (ssize_t)len)
            return -1;
    }
    if (seq > 0) {   /* every rank has written seq: all read seq - 1 */
        fn_path(path, sizeof path, c, tag, seq - 1, c->rank);
        unlink(path);
    }
    return 0;
}

FL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    FK_COUNT(2);
    if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    struct ncclComm *c = calloc(1, sizeof *c);
    if (c == NULL)
        return ncclSystemError;
    c->nranks = nranks, c->rank = rank;
    if (nranks > 1) {
        const char *tmpdir = getenv("TMPDIR");
        commId.internal[sizeof commId.internal - 1] = '\0';
        if (strncmp(commId.internal, FN_MAGIC, strlen(FN_MAGIC)) != 0 ||
            strpbrk(commId.internal + strlen(FN_MAGIC), "/.") != NULL) {
            free(c);
            return ncclInvalidArgument;   /* not an id of this fake's */
        }
        snprintf(c->dir, sizeof c->dir, "%s/fake-nccl-%s", tmpdir != NULL && *tmpdir != '\0' ? tmpdir : "/tmp",
                 commId.internal + strlen(FN_MAGIC));
        if ((mkdir(c->dir, 0700) != 0 && errno != EEXIST) || fn_meet(c, "init", 0, NULL, 0, NULL) != 0) {
            free(c);
            return ncclSystemError;   /* NCCL's bootstrap would wait; the fake gives up after FN_WAIT_MS */
        }
    }
    pthread_mutex_lock(&fn_lock);
    int slot = -1;
    for (int i = 0; i < FN_MAX_COMMS && slot < 0; i++)
        if (fn_comms[i] == NULL)
            slot = i;
    if (slot >= 0)
        fn_comms[slot] = c;
    pthread_mutex_unlock(&fn_lock);
    if (slot < 0) {
        free(c);
        return ncclSystemError;
    }
    *comm = c;
    return ncclSuccess;
}

/* A configuration as NCCL checks one: its magic and version from NCCL_CONFIG_INITIALIZER, a size it can read. */
FL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                              ncclConfig_t *config)
{
    FK_COUNT(12);
    if (config != NULL) {
        ncclConfig_t want = NCCL_CONFIG_INITIALIZER;
        if (config->magic != want.magic || config->version > want.version || config->size < sizeof(size_t) * 2 ||
            config->size > sizeof *config)
            return ncclInvalidArgument;
    }
    atomic_fetch_sub(&fl_calls[2], 1);   /* counted as itself, not as ncclCommInitRank */
    ncclResult_t r = ncclCommInitRank(comm, nranks, commId, rank);
    /* a non-blocking communicator (nccl.h: "ncclInProgress"): made, its initialisation reported by
       ncclCommGetAsyncError - here already done */
    return r == ncclSuccess && config != NULL && config->blocking == 0 ? ncclInProgress : r;
}

static size_t fn_elem(ncclDataType_t t)
{
    return t == ncclFloat32 || t == ncclInt32 ? 4 : 0;
}

/* ncclRedOpCreatePreMulSum's ops: ncclNumOps + index; each rank's input times its scalar, then summed */
#define FN_MAX_OPS 8
static struct {
    int used;
    ncclDataType_t type;
    float scalar;
} fn_ops[FN_MAX_OPS];

static int fn_premul(ncclRedOp_t op, ncclDataType_t type, float *scalar)
{
    int i = (int)op - (int)ncclNumOps, ok;
    pthread_mutex_lock(&fn_lock);
    ok = i >= 0 && i < FN_MAX_OPS && fn_ops[i].used && fn_ops[i].type == type;
    if (ok)
        *scalar = fn_ops[i].scalar;
    pthread_mutex_unlock(&fn_lock);
    return ok;
}

static ncclResult_t fn_check(const void *send, void *recv, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm)
{
    float s;
    if (fn_known(comm) && fn_premul(op, type, &s))
        return send != NULL && recv != NULL ? ncclSuccess : ncclInvalidArgument;
    if (!fn_known(comm) || send == NULL || recv == NULL)
        return ncclInvalidArgument;
    if (fn_elem(type) == 0)
        return fn_fail(ncclInvalidArgument, "fake NCCL: datatype %d is not supported", (int)type);
    if (comm->nranks > 1 && op != ncclSum && op != ncclMax && op != ncclMin)
        return ncclInvalidArgument;
    return ncclSuccess;
}

static ncclResult_t fn_allreduce_plain(const fn_op *o);

static ncclResult_t fn_allreduce(const fn_op *o)
{
    float s;
    if (!fn_premul(o->op, o->type, &s))
        return fn_allreduce_plain(o);
    size_t len = o->count * fn_elem(o->type);
    uint8_t *scaled = malloc(len + 1);
    if (scaled == NULL)
        return ncclSystemError;
    for (size_t i = 0; i < o->count; i++) {   /* float32 or int32 (fn_elem) */
        if (o->type == ncclFloat32) {
            float v;
            memcpy(&v, (const uint8_t *)o->send + i * 4, 4);
            v *= s;
            memcpy(scaled + i * 4, &v, 4);
        } else {
            int32_t v;
            memcpy(&v, (const uint8_t *)o->send + i * 4, 4);
            v = (int32_t)((float)v * s);
            memcpy(scaled + i * 4, &v, 4);
        }
    }
    fn_op sum = *o;
    sum.send = scaled;
    sum.op = ncclSum;
    ncclResult_t r = fn_allreduce_plain(&sum);
    free(scaled);
    return r;
}

static ncclResult_t fn_allreduce_plain(const fn_op *o)
{
    struct ncclComm *c = o->comm;
    size_t len = o->count * fn_elem(o->type);
    if (c->nranks == 1) {
        memmove(o->recv, o->send, len);   /* one rank: the sum is its own data */
        return ncclSuccess;
    }
    uint8_t *all = malloc(len * (size_t)c->nranks + 1);
    if (all == NULL || fn_meet(c, "coll", c->seq++, o->send, len, all) != 0) {
        free(all);
        return ncclSystemError;
    }
    for (size_t i = 0; i < o->count; i++) {
        if (o->type == ncclFloat32) {
            float v;
            memcpy(&v, all + i * 4, 4);
            for (int r = 1; r < c->nranks; r++) {
                float w;
                memcpy(&w, all + (size_t)r * len + i * 4, 4);
                v = o->op == ncclSum ? v + w : o->op == ncclMax ? (w > v ? w : v) : (w < v ? w : v);
            }
            memcpy((uint8_t *)o->recv + i * 4, &v, 4);
        } else {
            int32_t v;
            memcpy(&v, all + i * 4, 4);
            for (int r = 1; r < c->nranks; r++) {
                int32_t w;
                memcpy(&w, all + (size_t)r * len + i * 4, 4);
                v = o->op == ncclSum ? (int32_t)((uint32_t)v + (uint32_t)w) : o->op == ncclMax ? (w > v ? w : v)
                                                                                                : (w < v ? w : v);
            }
            memcpy((uint8_t *)o->recv + i * 4, &v, 4);
        }
    }
    free(all);
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    FK_COUNT(3);
    (void)stream;
    ncclResult_t r = fn_check(sendbuff, recvbuff, datatype, op, comm);
    fn_op o = {sendbuff, recvbuff, count, datatype, op, comm};
    if (r != ncclSuccess) {
        if (fn_depth > 0 && fn_group_error == ncclSuccess)
            fn_group_error = r;   /* as NCCL: returned here, and by ncclGroupEnd */
        return r;
    }
    if (fn_depth == 0)
        return fn_allreduce(&o);
    if (fn_npending == FN_MAX_PENDING)
        return ncclInternalError;
    fn_pending[fn_npending++] = o;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    FK_COUNT(4);
    int found = 0;
    pthread_mutex_lock(&fn_lock);
    for (int i = 0; i < FN_MAX_COMMS && !found; i++)
        if (comm != NULL && fn_comms[i] == comm)
            fn_comms[i] = NULL, found = 1;
    pthread_mutex_unlock(&fn_lock);
    if (!found)
        return ncclInvalidArgument;
    free(comm);
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    FK_COUNT(8);
    if (!fn_known(comm) || count == NULL)
        return ncclInvalidArgument;
    *count = comm->nranks;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    FK_COUNT(9);
    if (!fn_known(comm) || rank == NULL)
        return ncclInvalidArgument;
    *rank = comm->rank;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    FK_COUNT(10);
    if (!fn_known(comm) || asyncError == NULL)
        return ncclInvalidArgument;
    *asyncError = ncclSuccess;
    return ncclSuccess;
}

FL_EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
    FK_COUNT(5);
    return result == ncclSuccess ? "no error" : result == ncclSystemError ? "unhandled system error" : "error";
}

FL_EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    FK_COUNT(11);
    (void)comm;   /* NCCL: "comm is currently unused and can be set to NULL" */
    return fn_last_error;
}

FL_EXPORT ncclResult_t ncclGroupStart(void)
{
    FK_COUNT(6);
    if (fn_depth++ == 0)
        fn_group_error = ncclSuccess;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclGroupEnd(void)
{
    FK_COUNT(7);
    if (fn_depth == 0)
        return ncclInvalidUsage;
    if (--fn_depth > 0)
        return ncclSuccess;
    ncclResult_t r = fn_group_error;
    for (int i = 0; i < fn_npending; i++) {
        ncclResult_t ri = fn_allreduce(&fn_pending[i]);
        if (r == ncclSuccess)
            r = ri;
    }
    fn_npending = 0;
    return r;
}

/* ncclMemAlloc/ncclMemFree: device memory of the process's driver (NCCL's are cuMem* allocations; here
   cuMemAlloc_v2, in the calling thread's current context, as the program's own cudaMalloc made current). */
static void *fn_driver(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *f = h != NULL ? dlsym(h, name) : NULL;
    if (h != NULL)
        dlclose(h);
    return f;
}

FL_EXPORT ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    FK_COUNT(13);
    int (*alloc)(unsigned long long *, size_t) = (int (*)(unsigned long long *, size_t))fn_driver("cuMemAlloc_v2");
    unsigned long long d = 0;
    if (ptr == NULL || size == 0)
        return ncclInvalidArgument;
    if (alloc == NULL || alloc(&d, size) != 0)
        return fn_fail(ncclUnhandledCudaError, "fake NCCL: cuMemAlloc of %d bytes failed", (int)size);
    *ptr = (void *)(uintptr_t)d;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclMemFree(void *ptr)
{
    FK_COUNT(14);
    int (*release)(unsigned long long) = (int (*)(unsigned long long))fn_driver("cuMemFree_v2");
    if (ptr == NULL)
        return ncclSuccess;
    if (release == NULL || release((unsigned long long)(uintptr_t)ptr) != 0)
        return fn_fail(ncclUnhandledCudaError, "fake NCCL: cuMemFree failed (%d)", 0);
    return ncclSuccess;
}

/* Buffer registration: a handle is a block of the fake's naming its communicator and buffer; Deregister takes only
   a handle it gave and has not taken back (NCCL's handles are its own pointers). */
typedef struct fn_reg {
    ncclComm_t comm;
    void *buff;
} fn_reg;
static fn_reg *fn_regs[FN_MAX_COMMS];

FL_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    FK_COUNT(15);
    fn_reg *r = NULL;
    if (!fn_known(comm) || buff == NULL || size == 0 || handle == NULL || (r = calloc(1, sizeof *r)) == NULL)
        return ncclInvalidArgument;
    r->comm = comm;
    r->buff = buff;
    pthread_mutex_lock(&fn_lock);
    for (int i = 0; i < FN_MAX_COMMS && r != NULL; i++)
        if (fn_regs[i] == NULL)
            fn_regs[i] = r, *handle = r, r = NULL;
    pthread_mutex_unlock(&fn_lock);
    free(r);   /* no room left: not registered */
    return r == NULL ? ncclSuccess : ncclInternalError;
}

FL_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    FK_COUNT(16);
    int found = 0;
    pthread_mutex_lock(&fn_lock);
    for (int i = 0; i < FN_MAX_COMMS && !found; i++)
        if (handle != NULL && fn_regs[i] == handle && fn_regs[i]->comm == comm)
            fn_regs[i] = NULL, found = 1;
    pthread_mutex_unlock(&fn_lock);
    if (!found)
        return ncclInvalidArgument;
    free(handle);
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                                ncclScalarResidence_t residence, ncclComm_t comm)
{
    FK_COUNT(17);
    float s;
    int32_t k;
    if (op == NULL || scalar == NULL || !fn_known(comm) || fn_elem(datatype) == 0)
        return ncclInvalidArgument;
    /* the fake's device memory is host memory: a device scalar is read as NCCL's kernel would, at the
       collective; here at once (the tests set it before) */
    (void)residence;
    if (datatype == ncclFloat32) {
        memcpy(&s, scalar, sizeof s);
    } else {
        memcpy(&k, scalar, sizeof k);
        s = (float)k;
    }
    int found = -1;
    pthread_mutex_lock(&fn_lock);
    for (int i = 0; i < FN_MAX_OPS && found < 0; i++)
        if (!fn_ops[i].used) {
            fn_ops[i].used = 1, fn_ops[i].type = datatype, fn_ops[i].scalar = s;
            found = i;
        }
    pthread_mutex_unlock(&fn_lock);
    if (found < 0)
        return ncclInternalError;
    *op = (ncclRedOp_t)((int)ncclNumOps + found);
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    FK_COUNT(18);
    int i = (int)op - (int)ncclNumOps, ok;
    if (!fn_known(comm))
        return ncclInvalidArgument;
    pthread_mutex_lock(&fn_lock);
    ok = i >= 0 && i < FN_MAX_OPS && fn_ops[i].used;
    if (ok)
        fn_ops[i].used = 0;
    pthread_mutex_unlock(&fn_lock);
    return ok ? ncclSuccess : ncclInvalidArgument;
}

/* A simulated ncclGroupEnd: the group is closed and nothing runs; the estimate is 1.5 us per pending collective
   (NCCL's model, here a number the tests can tell from another). The struct as NCCL_SIM_INFO_INITIALIZER made it. */
FL_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
    FK_COUNT(19);
    if (simInfo == NULL || simInfo->size != sizeof *simInfo || simInfo->magic != 0x74685283u)
        return ncclInvalidArgument;
    if (fn_depth == 0)
        return ncclInvalidUsage;
    if (--fn_depth > 0)
        return ncclSuccess;
    simInfo->estimatedTime = 1.5f * (float)fn_npending;
    fn_npending = 0;
    ncclResult_t r = fn_group_error;
    fn_group_error = ncclSuccess;
    return r;
}
