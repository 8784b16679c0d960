/*
 * rp_nccl.c - the client's part of NCCL forwarding (docs/remote.md, "NCCL"). NCCL's calls go to the server like
 * any other (the back end runs the server's libnccl, whose ranks meet through NCCL's own transports there); what
 * is decided here:
 *   - groups: NCCL keeps a group per thread; between ncclGroupStart and the outermost ncclGroupEnd a collective
 *     only joins the group (NCCL checks its arguments, and ncclGroupEnd launches the group and returns the first
 *     error of its calls). So inside a group the calls are queued with the asynchronous ones (rm_plan.h,
 *     RM_ASYNC_GROUP) and the outermost ncclGroupEnd is one round trip that reports the group's errors; outside
 *     a group every collective is answered, since a blocking communicator returns a collective's error at its
 *     call. The back end runs a client thread's calls on a thread of its own, in order, so the server's NCCL
 *     sees the group on one thread as the program made it.
 *   - ncclConfig_t: carried as its bytes while its strings are NULL (the codec checks it); the client copies it as
 *     far as the program's struct goes (its 'size': a program of an older nccl.h has a smaller struct) and drops
 *     commName, a label NCCL prints in its logs and hands its profiler (PyTorch names split communicators), so
 *     that such communicators are created; netName, which picks a network, is kept and so refused.
 *   - the remoting's own failures in NCCL's words (rp_nccl_error);
 *   - ncclGroupSimulateEnd closes a group level as ncclGroupEnd does (NCCL's simulated end), always answered: its
 *     ncclSimInfo_t (numbers only, described) comes back;
 *   - ncclRedOpCreatePreMulSum's scalar (rp_nccl_scalar): a host value of its datatype's size, or a device address,
 *     as its residence says (the back end checks the same residence before NCCL runs, rb_cublas.c).
 * ncclGetErrorString is not forwarded (remote.c's selector): the program's own libnccl answers it (NCCL's table of
 * the codes' texts). ncclGetLastError is: the server's libnccl set the text, which the reply carries
 * (rm_plan.ret_string) and the client keeps (rp_ret_text); a communicator it names that is not live goes as NULL
 * (NCCL does not use it); a lost server answers "".
 */
#include <stdatomic.h>
#include <string.h>

#include "rm_codec.h"
#include "rp_nccl.h"
#include "rm_names.h"

static uint32_t rn_start[2], rn_end[2];   /* ncclGroupStart/End and their pnccl forms */
static uint32_t rn_sim[2];                /* ncclGroupSimulateEnd: ends a group too, always answered (its simInfo) */
static int32_t rn_drv_invalid = 1, rn_drv_not_supported = 801, rn_drv_unavailable = 46;
static int32_t rn_invalid_arg = 4, rn_invalid_usage = 5, rn_remote = 6, rn_system = 2;   /* NCCL's */
static __thread int rn_depth;             /* this thread's group depth, as NCCL counts it */
static const cushim_host *rn_host;
static cushim_plugin *rn_self;
static const cushim_struct_info *rn_cfg;  /* ncclConfig_t, when the tree describes it */
static uint32_t rn_cfg_size_off = UINT32_MAX, rn_cfg_name_off = UINT32_MAX;
static atomic_int rn_name_logged;

void rp_nccl_init(const cushim_host *host, cushim_plugin *self)
{
    rn_host = host;
    rn_self = self;
    const cushim_api_info *a = host->api_by_name("ncclCommInitRankConfig");
    for (uint32_t i = 0; a != NULL && i < a->nparams; i++) {
        const cushim_param_info *p = host->api_param(a, i);
        if (strcmp(p->name, "config") == 0 && p->struct_type != NULL && p->struct_type->size <= RP_NCCL_CONFIG_MAX)
            rn_cfg = p->struct_type;
    }
    for (uint32_t f = 0; rn_cfg != NULL && f < rn_cfg->nfields; f++) {
        const cushim_field_info *fi = cushim_struct_field(host, rn_cfg, f);   /* never rn_cfg->fields[f] */
        if (fi == NULL || fi->name == NULL)
            continue;
        if (strcmp(fi->name, "size") == 0 && fi->size == sizeof(size_t))
            rn_cfg_size_off = fi->offset;
        if (strcmp(fi->name, "commName") == 0 && fi->size == sizeof(void *))
            rn_cfg_name_off = fi->offset;
    }
    if (rn_cfg_size_off == UINT32_MAX)
        rn_cfg = NULL;   /* not the layout this file knows: carried as the codec carries it */
    rn_start[0] = rm_api_id(host, "ncclGroupStart", UINT32_MAX);
    rn_start[1] = rm_api_id(host, "pncclGroupStart", UINT32_MAX);
    rn_end[0] = rm_api_id(host, "ncclGroupEnd", UINT32_MAX);
    rn_end[1] = rm_api_id(host, "pncclGroupEnd", UINT32_MAX);
    rn_sim[0] = rm_api_id(host, "ncclGroupSimulateEnd", UINT32_MAX);
    rn_sim[1] = rm_api_id(host, "pncclGroupSimulateEnd", UINT32_MAX);
    rn_drv_invalid = rm_result_code(host, "CUDA_ERROR_INVALID_VALUE", rn_drv_invalid);
    rn_drv_not_supported = rm_result_code(host, "CUDA_ERROR_NOT_SUPPORTED", rn_drv_not_supported);
    rn_drv_unavailable = rm_result_code(host, "CUDA_ERROR_DEVICE_UNAVAILABLE", rn_drv_unavailable);
    rn_invalid_arg = rm_result_code(host, "ncclInvalidArgument", rn_invalid_arg);
    rn_invalid_usage = rm_result_code(host, "ncclInvalidUsage", rn_invalid_usage);
    rn_remote = rm_result_code(host, "ncclRemoteError", rn_remote);
    rn_system = rm_result_code(host, "ncclSystemError", rn_system);
}

int rp_nccl_batched(const rm_plan *pl)
{
    if (pl->id == rn_start[0] || pl->id == rn_start[1]) {
        rn_depth++;
        return pl->async == RM_ASYNC_GROUP;
    }
    if (pl->id == rn_end[0] || pl->id == rn_end[1]) {
        if (rn_depth > 1) {
            rn_depth--;
            return pl->async == RM_ASYNC_GROUP;
        }
        rn_depth = 0;   /* the outermost end (or one without a start: NCCL's ncclInvalidUsage) is answered */
        return 0;
    }
    if (pl->id == rn_sim[0] || pl->id == rn_sim[1]) {
        rn_depth = rn_depth > 1 ? rn_depth - 1 : 0;   /* closes a level as ncclGroupEnd; its simInfo comes back */
        return 0;
    }
    return rn_depth > 0 && pl->async == RM_ASYNC_GROUP;
}

int32_t rp_nccl_error(int32_t driver_code)
{
    if (driver_code == 0)
        return 0;                                   /* ncclSuccess */
    if (driver_code == rn_drv_invalid)
        return rn_invalid_arg;     /* an argument the codec cannot carry (a config's string...) */
    if (driver_code == rn_drv_not_supported)
        return rn_invalid_usage;   /* not forwarded */
    if (driver_code == rn_drv_unavailable)
        return rn_remote;          /* the server (the back end) is gone: "a remote process exiting prematurely" */
    return rn_system;              /* the remoting failed otherwise (the server has no libnccl...) */
}

void rp_nccl_fork_child(void)
{
    rn_depth = 0;   /* the child's back end has no group open (the parent's thread's group stays the parent's) */
}

void rp_nccl_config(cushim_call *call, uint8_t *copy, void ***slot, void **orig)
{
    *slot = NULL;
    if (rn_cfg == NULL)
        return;
    for (uint32_t i = 0; i < call->info->nparams; i++) {
        const cushim_param_info *p = rn_host->api_param(call->info, i);
        if (p->struct_type != rn_cfg || strcmp(p->name, "config") != 0)
            continue;
        void **at = (void **)((uint8_t *)call->params + p->offset);
        const uint8_t *cfg = *at;
        size_t size;
        if (cfg == NULL)
            return;
        memcpy(&size, cfg + rn_cfg_size_off, sizeof size);
        if (size < rn_cfg_size_off + sizeof size)
            return;   /* not a configuration NCCL would take: sent as it is, for NCCL to refuse */
        size_t n = size < rn_cfg->size ? size : rn_cfg->size;
        memset(copy, 0, rn_cfg->size);
        memcpy(copy, cfg, n);
        void *name = NULL;
        if (rn_cfg_name_off != UINT32_MAX && rn_cfg_name_off + sizeof name <= n)
            memcpy(&name, copy + rn_cfg_name_off, sizeof name);
        if (name != NULL) {
            memset(copy + rn_cfg_name_off, 0, sizeof name);
            if (atomic_exchange(&rn_name_logged, 1) == 0)
                rn_host->log(rn_self, CUSHIM_LOG_INFO, "%s: the communicator's commName is not sent (a label of NCCL's "
                             "logs and profiler on the server)", call->info->name);
        }
        *slot = at;
        *orig = *at;
        *at = copy;
        return;
    }
}

/* The value named 'name' of the enum of parameter 'param' of 'a' (1), or 0. */
static int rp_nccl_enum(const cushim_host *h, const cushim_api_info *a, const char *param, const char *name, int64_t *v)
{
    for (uint32_t i = 0; a != NULL && i < a->nparams; i++) {
        const cushim_param_info *p = h->api_param(a, i);
        if (strcmp(p->name, param) != 0 || p->enum_type == NULL)
            continue;
        for (uint32_t k = 0; k < p->enum_type->nvalues; k++)
            if (strcmp(p->enum_type->values[k].name, name) == 0) {
                *v = p->enum_type->values[k].value;
                return 1;
            }
    }
    return 0;
}

/* A parameter's value by name (an enum: 4 bytes). */
static int rn_value(const cushim_api_info *a, const void *params, const char *name, int64_t *v)
{
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = rn_host->api_param(a, i);
        if (strcmp(p->name, name) == 0 && p->size == 4) {
            int32_t x;
            memcpy(&x, (const uint8_t *)params + p->offset, 4);
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* nccl.h's datatypes by their names: bytes of one element */
static uint32_t rn_dtype_bytes(const cushim_api_info *a, int64_t type)
{
    static const struct { const char *name; uint32_t bytes; } sizes[] = {
        { "ncclInt8", 1 }, { "ncclUint8", 1 }, { "ncclFloat8e4m3", 1 }, { "ncclFloat8e5m2", 1 },
        { "ncclFloat16", 2 }, { "ncclBfloat16", 2 },
        { "ncclInt32", 4 }, { "ncclUint32", 4 }, { "ncclFloat32", 4 },
        { "ncclInt64", 8 }, { "ncclUint64", 8 }, { "ncclFloat64", 8 },
    };
    int64_t v;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (rp_nccl_enum(rn_host, a, "datatype", sizes[i].name, &v) && v == type)
            return sizes[i].bytes;
    return 0;
}

int rp_nccl_scalar(const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes)
{
    const cushim_api_info *a = pl->info;
    int64_t where, type, dev, host;
    (void)param;
    if (rn_host == NULL || !rn_value(a, params, "residence", &where) ||
        !rp_nccl_enum(rn_host, a, "residence", "ncclScalarDevice", &dev) ||
        !rp_nccl_enum(rn_host, a, "residence", "ncclScalarHostImmediate", &host))
        return RM_EUNSUPPORTED;
    if (where == dev)
        return RM_SCALAR_DEVICE;
    if (where != host || !rn_value(a, params, "datatype", &type) || (*bytes = rn_dtype_bytes(a, type)) == 0)
        return RM_EUNSUPPORTED;
    return RM_SCALAR_HOST;
}
