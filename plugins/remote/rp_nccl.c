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
 *   - the remoting's own failures in NCCL's words (rp_nccl_error).
 * ncclGetErrorString and ncclGetLastError are not forwarded (remote.c's selector): the program's own libnccl
 * answers them, exactly for the first (a table of NCCL's), and with its own, empty, last error for the second.
 */
#include <string.h>

#include "rp_nccl.h"

static uint32_t rn_start[2], rn_end[2];   /* ncclGroupStart/End and their pnccl forms */
static int32_t rn_drv_invalid = 1, rn_drv_not_supported = 801, rn_drv_unavailable = 46;
static int32_t rn_invalid_arg = 4, rn_invalid_usage = 5, rn_remote = 6, rn_system = 2;   /* NCCL's */
static __thread int rn_depth;             /* this thread's group depth, as NCCL counts it */

static uint32_t rn_id(const cushim_host *h, const char *name)
{
    const cushim_api_info *a = h->api_by_name(name);
    return a != NULL ? a->id : UINT32_MAX;
}

static int32_t rn_code(const cushim_host *h, const char *name, int32_t dflt)
{
    uint32_t kind;
    int32_t code = dflt;
    if (h->result_by_name(name, &kind, &code) != CUSHIM_OK)
        code = dflt;
    return code;
}

void rp_nccl_init(const cushim_host *host)
{
    rn_start[0] = rn_id(host, "ncclGroupStart");
    rn_start[1] = rn_id(host, "pncclGroupStart");
    rn_end[0] = rn_id(host, "ncclGroupEnd");
    rn_end[1] = rn_id(host, "pncclGroupEnd");
    rn_drv_invalid = rn_code(host, "CUDA_ERROR_INVALID_VALUE", rn_drv_invalid);
    rn_drv_not_supported = rn_code(host, "CUDA_ERROR_NOT_SUPPORTED", rn_drv_not_supported);
    rn_drv_unavailable = rn_code(host, "CUDA_ERROR_DEVICE_UNAVAILABLE", rn_drv_unavailable);
    rn_invalid_arg = rn_code(host, "ncclInvalidArgument", rn_invalid_arg);
    rn_invalid_usage = rn_code(host, "ncclInvalidUsage", rn_invalid_usage);
    rn_remote = rn_code(host, "ncclRemoteError", rn_remote);
    rn_system = rn_code(host, "ncclSystemError", rn_system);
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
