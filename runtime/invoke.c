/*
 * invoke.c - host->call_real: call the real function of any API with its
 * arguments in a params struct (cushim_params_<name>), for plugins that cannot
 * know the signature at compile time (the Lua bridge's cushim.real.NAME()).
 * One invoker per API, expanded from the generated .inc files: it unpacks the
 * struct exactly as the wrapper's hooked path does (UNPACK) and stores the
 * return value. The function called is rt_resolve(id), as for host->real: it
 * never enters hooks and is not counted. host->call (rt_call_hooked) calls our
 * own exported wrapper instead (rt_wrapper_of), so the call runs the hooks as
 * the program's would: the remoting's back end runs its client's calls so.
 * Every library of the tree has invokers (NVML, NCCL, cuBLAS...: the remoting's
 * server answers their calls through them, docs/remote.md).
 */
#include <string.h>

#include "cushim_all_params.h"
#include "dispatch.h"
#include "invoke.h"
#include "wrapper_table.h"

typedef void (*rt_invoker)(void *real, void *params, void *retval);

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK)                  \
    static void rt_inv_##NAME(void *real, void *pv, void *rv)                    \
    {                                                                            \
        cushim_params_##NAME *p = pv;                                            \
        RET r_ = ((RET(*) PROTO)real)UNPACK;                                     \
        (void)p;                                                                 \
        memcpy(rv, &r_, sizeof r_);                                              \
    }
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
#include "cushim_separate_apis.inc"
#undef CUSHIM_API

static const rt_invoker rt_invokers[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = rt_inv_##NAME,
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
#include "cushim_separate_apis.inc"
#undef CUSHIM_API
};

int rt_call_real(uint32_t api_id, void *params, void *retval)
{
    void *real;
    if (api_id >= CUSHIM_API_ID_LIMIT || rt_invokers[api_id] == NULL || params == NULL || retval == NULL)
        return CUSHIM_EINVAL;
    real = rt_resolve(api_id);
    if (real == NULL)
        return CUSHIM_ENOENT;
    rt_invokers[api_id](real, params, retval);
    return CUSHIM_OK;
}

int rt_call_hooked(uint32_t api_id, void *params, void *retval)
{
    if (api_id >= CUSHIM_API_ID_LIMIT || rt_invokers[api_id] == NULL || rt_wrapper_of[api_id] == NULL ||
        params == NULL || retval == NULL)
        return CUSHIM_EINVAL;
    rt_invokers[api_id](rt_wrapper_of[api_id], params, retval);
    return CUSHIM_OK;
}
