/*
 * rc_func.c - the runtime's calls that take a kernel's host stub, other than launches (docs/remote.md, "Runtime-API
 * programs", "A stub's function and kernel"): each answered in the client through its driver form on the stub's
 * server function (rc_stub.c, the lookup a launch uses; a kernel cudaGetKernel handed out is taken where a stub
 * is): cudaFuncGetAttributes (cuFuncGetAttribute field by field), cudaFuncSetAttribute, the occupancy calculator,
 * cudaGetFuncBySymbol (the server's CUfunction), cudaGetKernel (its CUkernel), cudaFuncGetName and
 * cudaFuncGetParamInfo; and those whose parameters are their driver form's but the stub and a launch configuration
 * (rc_sames: cudaFuncSetCacheConfig, cudaFuncSetSharedMemConfig, cudaOccupancyAvailableDynamicSMemPerBlock,
 * cudaOccupancyMaxPotentialClusterSize, cudaOccupancyMaxActiveClusters; the kernel nodes cudaGraphAddKernelNode and
 * cudaGraph[Exec]KernelNodeSetParams, whose cudaKernelNodeParams becomes a CUDA_KERNEL_NODE_PARAMS_v2 with the
 * stub's function, its arguments carried as the driver path carries a kernel node's).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rc_int.h"
#include "rm_names.h"

/* A runtime call whose parameters are its driver form's, in order and size, but the stub (the function there) and a
   launch configuration (translated, rc_launch_config). */
typedef struct rc_same {
    const char *rt, *drv;
    uint32_t id;                       /* the runtime API's, UINT32_MAX: not taken (the server refuses it) */
    int stub, config;                  /* their parameter indexes, -1: none */
    int node;                          /* a cudaKernelNodeParams (its func a stub) as CUDA_KERNEL_NODE_PARAMS_v2 */
    rc_api api;
} rc_same;

/* struct cudaKernelNodeParams and CUDA_KERNEL_NODE_PARAMS_v2, as read and written here (checked in rc_func_init) */
typedef struct rc_rt_knode {
    const void *func;
    rc_dim3 grid, block;
    unsigned shmem;
    void **args, **extra;
} rc_rt_knode;
typedef struct rc_cu_knode {
    uint64_t func;
    rc_dim3 grid, block;
    unsigned shmem;
    void **args, **extra;
    uint64_t kern, ctx;
} rc_cu_knode;

static rc_same rc_sames[] = {
    /* enum cudaFuncCache and cudaSharedMemConfig have the driver's values */
    { .rt = "cudaFuncSetCacheConfig", .drv = "cuFuncSetCacheConfig", .stub = 0, .config = -1, .node = -1 },
    { .rt = "cudaFuncSetSharedMemConfig", .drv = "cuFuncSetSharedMemConfig", .stub = 0, .config = -1, .node = -1 },
    { .rt = "cudaOccupancyAvailableDynamicSMemPerBlock", .drv = "cuOccupancyAvailableDynamicSMemPerBlock", .stub = 1,
      .config = -1, .node = -1 },
    { .rt = "cudaOccupancyMaxPotentialClusterSize", .drv = "cuOccupancyMaxPotentialClusterSize", .stub = 1,
      .config = 2, .node = -1 },
    { .rt = "cudaOccupancyMaxActiveClusters", .drv = "cuOccupancyMaxActiveClusters", .stub = 1, .config = 2,
      .node = -1 },
    /* kernel nodes: the driver path carries the node's arguments (RM_OP_KNODE, docs/remote.md "Graphs") */
    { .rt = "cudaGraphAddKernelNode", .drv = "cuGraphAddKernelNode_v2", .stub = -1, .config = -1, .node = 4 },
    { .rt = "cudaGraphKernelNodeSetParams", .drv = "cuGraphKernelNodeSetParams_v2", .stub = -1, .config = -1,
      .node = 1 },
    { .rt = "cudaGraphExecKernelNodeSetParams", .drv = "cuGraphExecKernelNodeSetParams_v2", .stub = -1,
      .config = -1, .node = 2 },
};
#define RC_NSAMES (sizeof rc_sames / sizeof rc_sames[0])

/* the driver calls and runtime APIs this file takes (rc_func_init) */
static struct {
    rc_api fattr, fsetattr, occupancy;
    rc_api paraminfo;                  /* cuFuncGetParamInfo: CUDA 12.4 on (cudaFuncGetParamInfo) */
    uint32_t id_fattr, id_fsetattr, id_occ[2], id_funcsym, id_getkernel;
    uint32_t id_fname, id_fparam;      /* cudaFuncGetName, cudaFuncGetParamInfo */
} rf;

/* cudaFuncGetAttributes: struct cudaFuncAttributes (CUDA 11 to 13: three size_t, then ints), field by field from
   cuFuncGetAttribute; the attribute numbers 0-9 name the fields in this order but for the first five. */
static int32_t rc_func_attributes(const cushim_call *call)
{
    static const struct {
        uint16_t offset, size, attrib;
    } map[] = { { 0, 8, 1 }, { 8, 8, 2 }, { 16, 8, 3 }, { 24, 4, 0 }, { 28, 4, 4 }, { 32, 4, 5 }, { 36, 4, 6 },
                { 40, 4, 7 }, { 44, 4, 8 }, { 48, 4, 9 } };
    uint8_t *attr;
    const void *func;
    uint64_t f;
    rc_get(call, "attr", &attr, sizeof attr);
    rc_get(call, "func", &func, sizeof func);
    if (attr == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc_stub_function(func, &f);
    if (r != 0)
        return rc_fail(r);
    memset(attr, 0, 144);   /* rc_init checked the struct's size */
    for (size_t i = 0; i < sizeof map / sizeof map[0] && r == 0; i++) {
        uint8_t params[256] = {0};
        int v = 0, *pv = &v;
        uint32_t a = map[i].attrib;
        rc_put(&rf.fattr, params, 0, &pv, sizeof pv);
        rc_put(&rf.fattr, params, 1, &a, sizeof a);
        rc_put(&rf.fattr, params, 2, &f, sizeof f);
        if ((r = rc_call(&rf.fattr, params)) == 0) {
            int64_t wide = v;
            memcpy(attr + map[i].offset, map[i].size == 8 ? (const void *)&wide : (const void *)&v, map[i].size);
        }
    }
    return rc_fail(r);
}

/* cudaFuncSetAttribute and the occupancy calculator: the stub's function, then the driver's call (the runtime's
   attribute numbers are the driver's) */
static int32_t rc_func_call(const cushim_call *call, int occupancy)
{
    const void *func;
    uint64_t f;
    uint8_t params[256] = {0};
    rc_get(call, "func", &func, sizeof func);
    int32_t r = rc_stub_function(func, &f);
    if (r != 0)
        return rc_fail(r);
    if (occupancy) {
        int *nb;
        int bs;
        size_t dyn;
        unsigned flags = 0;
        rc_get(call, "numBlocks", &nb, sizeof nb);
        rc_get(call, "blockSize", &bs, sizeof bs);
        rc_get(call, "dynamicSMemSize", &dyn, sizeof dyn);
        rc_get(call, "flags", &flags, sizeof flags);
        rc_put(&rf.occupancy, params, 0, &nb, sizeof nb);
        rc_put(&rf.occupancy, params, 1, &f, sizeof f);
        rc_put(&rf.occupancy, params, 2, &bs, sizeof bs);
        rc_put(&rf.occupancy, params, 3, &dyn, sizeof dyn);
        rc_put(&rf.occupancy, params, 4, &flags, sizeof flags);
        return rc_fail(rc_call(&rf.occupancy, params));
    }
    int32_t attr, value;
    rc_get(call, "attr", &attr, sizeof attr);
    rc_get(call, "value", &value, sizeof value);
    rc_put(&rf.fsetattr, params, 0, &f, sizeof f);
    rc_put(&rf.fsetattr, params, 1, &attr, sizeof attr);
    rc_put(&rf.fsetattr, params, 2, &value, sizeof value);
    return rc_fail(rc_call(&rf.fsetattr, params));
}

/* A stub's object written to the output parameter OUT (NULL: cudaErrorInvalidValue), from the stub in parameter STUB
   by GET (an unregistered address: cudaErrorInvalidDeviceFunction, as for its launch). */
static int32_t rc_stub_out(const cushim_call *call, const char *out_name, const char *stub_name,
                           int32_t (*get)(const void *stub, uint64_t *v))
{
    void **out;
    const void *stub;
    uint64_t v = 0;
    rc_get(call, out_name, &out, sizeof out);
    rc_get(call, stub_name, &stub, sizeof stub);
    if (out == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = get(stub, &v);
    if (r != 0)
        return rc_fail(r);
    *out = (void *)(uintptr_t)v;
    return 0;
}

/* cudaGetFuncBySymbol: the function a launch of the stub uses on the thread's device (rc_stub_function: its module
   loaded on the server if not yet, cuModuleGetFunction), as the server's CUfunction - the value the program's own
   cuModuleGetFunction gives here (driver handles cross as they are), so cuFuncGetAttribute, cuLaunchKernel... on
   it are forwarded like any. */
static int32_t rc_func_by_symbol(const cushim_call *call)
{
    return rc_stub_out(call, "functionPtr", "symbolPtr", rc_stub_function);
}

/* cudaGetKernel: the stub's kernel (rc_stub_kernel), for the driver's calls on it (cuKernelGetFunction,
   cuKernelGetAttribute...), forwarded as they are; the runtime's calls that take a stub take it too. */
static int32_t rc_get_kernel(const cushim_call *call)
{
    return rc_stub_out(call, "kernelPtr", "entryFuncAddr", rc_stub_kernel);
}

/* cudaFuncGetName: the name the stub was registered with (nvcc's device name, which the driver's cuFuncGetName
   gives too), kept here for the process's life; cudaFuncGetParamInfo: the server's cuFuncGetParamInfo on the
   stub's function (its outputs carried back as that driver call's). */
static int32_t rc_func_name(const cushim_call *call)
{
    const char **out;
    const void *func;
    uint64_t f;
    rc_get(call, "name", &out, sizeof out);
    rc_get(call, "func", &func, sizeof func);
    if (out == NULL)
        return rc_fail(rc.e_inval);
    int32_t r = rc_stub_function(func, &f);   /* registered and loadable, as the runtime's answer needs */
    if (r != 0)
        return rc_fail(r);
    const char *name = rc_stub_name(func);
    if (name == NULL)
        return rc_fail(rc.e_devfn);
    *out = name;
    return 0;
}

static int32_t rc_func_param_info(const cushim_call *call)
{
    const void *func;
    size_t index, *offset, *size;
    uint64_t f;
    uint8_t params[256] = {0};
    rc_get(call, "func", &func, sizeof func);
    rc_get(call, "paramIndex", &index, sizeof index);
    rc_get(call, "paramOffset", &offset, sizeof offset);
    rc_get(call, "paramSize", &size, sizeof size);
    int32_t r = rc_stub_function(func, &f);
    if (r != 0)
        return rc_fail(r);
    rc_put(&rf.paraminfo, params, 0, &f, sizeof f);
    rc_put(&rf.paraminfo, params, 1, &index, sizeof index);
    rc_put(&rf.paraminfo, params, 2, &offset, sizeof offset);
    rc_put(&rf.paraminfo, params, 3, &size, sizeof size);
    return rc_fail(rc_call(&rf.paraminfo, params));
}

/* A call of rc_sames: its parameters copied into the driver form's, the stub's function put in, a launch
   configuration translated. An output pointer is the program's: the driver plan carries it back. */
static int32_t rc_func_same(const cushim_call *call, const rc_same *sm)
{
    uint8_t params[256] = {0};
    const void *stub = NULL;
    uint64_t f = 0;
    rc_cu_lconfig d;
    rc_lattr attrs[RC_MAX_LATTRS];
    const rc_cu_lconfig *pd = &d;
    rc_cu_knode kn;
    const rc_cu_knode *pkn = &kn;
    int32_t r = 0;
    for (uint32_t i = 0; i < call->info->nparams; i++) {
        const cushim_param_info *p = rc.host->api_param(call->info, i);
        if ((int)i == sm->stub) {
            memcpy(&stub, (const uint8_t *)call->params + p->offset, sizeof stub);
            r = rc_stub_function(stub, &f);
            rc_put(&sm->api, params, i, &f, sizeof f);
        } else if ((int)i == sm->config) {
            const void *config;
            memcpy(&config, (const uint8_t *)call->params + p->offset, sizeof config);
            if (r == 0)
                r = rc_launch_config(config, &d, attrs);
            rc_put(&sm->api, params, i, &pd, sizeof pd);
        } else if ((int)i == sm->node) {
            const rc_rt_knode *n;
            memcpy(&n, (const uint8_t *)call->params + p->offset, sizeof n);
            r = n == NULL ? rc.e_inval : rc_stub_function(n->func, &f);
            if (r == 0)
                kn = (rc_cu_knode){ .func = f, .grid = n->grid, .block = n->block, .shmem = n->shmem,
                                    .args = n->args, .extra = n->extra };
            rc_put(&sm->api, params, i, &pkn, sizeof pkn);
        } else {
            rc_put(&sm->api, params, i, (const uint8_t *)call->params + p->offset, p->size);
        }
        if (r != 0)
            return rc_fail(r);
    }
    return rc_fail(rc_call(&sm->api, params));
}

/* 1 when runtime API 'rt' and driver API 'drv' take the same parameters, in order and size. */
static int rc_same_shape(const cushim_api_info *rt, const cushim_api_info *drv)
{
    if (rt == NULL || drv == NULL || rt->nparams != drv->nparams)
        return 0;
    for (uint32_t i = 0; i < rt->nparams; i++) {
        const cushim_param_info *a = rc.host->api_param(rt, i), *b = rc.host->api_param(drv, i);
        if (a == NULL || b == NULL || a->size != b->size)
            return 0;
    }
    return 1;
}

int rc_func_pre(cushim_call *call, int32_t *result)
{
    uint32_t id = call->api_id;
    for (size_t i = 0; i < RC_NSAMES; i++)
        if (id == rc_sames[i].id) {
            *result = rc_func_same(call, &rc_sames[i]);
            return 1;
        }
    if (id == rf.id_fname || id == rf.id_fparam) {
        *result = id == rf.id_fname ? rc_func_name(call) : rc_func_param_info(call);
        return 1;
    }
    if (id == rf.id_funcsym || id == rf.id_getkernel) {
        *result = id == rf.id_funcsym ? rc_func_by_symbol(call) : rc_get_kernel(call);
        return 1;
    }
    if (id == rf.id_fattr || id == rf.id_fsetattr || id == rf.id_occ[0] || id == rf.id_occ[1]) {
        *result = id == rf.id_fattr ? rc_func_attributes(call) : rc_func_call(call, id != rf.id_fsetattr);
        return 1;
    }
    return 0;
}

int rc_func_init(int have_kernels)
{
    const cushim_host *host = rc.host;
    int bad = rc_api_of(&rf.fattr, "cuFuncGetAttribute") | rc_api_of(&rf.fsetattr, "cuFuncSetAttribute") |
              rc_api_of(&rf.occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    rf.id_fsetattr = rm_api_id(host, "cudaFuncSetAttribute", UINT32_MAX);
    rf.id_occ[0] = rm_api_id(host, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", UINT32_MAX);
    rf.id_occ[1] = rm_api_id(host, "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", UINT32_MAX);
    rf.id_fattr = rm_api_id(host, "cudaFuncGetAttributes", UINT32_MAX);
    rf.id_funcsym = rm_api_id(host, "cudaGetFuncBySymbol", UINT32_MAX);
    rf.id_getkernel = have_kernels ? rm_api_id(host, "cudaGetKernel", UINT32_MAX) : UINT32_MAX;   /* CUDA 12 on */
    rf.id_fname = rm_api_id(host, "cudaFuncGetName", UINT32_MAX);
    rf.id_fparam = UINT32_MAX;   /* CUDA 12.4 on, with the driver's */
    if (host->api_by_name("cudaFuncGetParamInfo") != NULL && rc_api_maybe(&rf.paraminfo, "cuFuncGetParamInfo") == 0)
        rf.id_fparam = rm_api_id(host, "cudaFuncGetParamInfo", UINT32_MAX);
    static const rc_field rt_kn[] = { { "func", offsetof(rc_rt_knode, func) },
                                      { "gridDim", offsetof(rc_rt_knode, grid) },
                                      { "blockDim", offsetof(rc_rt_knode, block) },
                                      { "sharedMemBytes", offsetof(rc_rt_knode, shmem) },
                                      { "kernelParams", offsetof(rc_rt_knode, args) },
                                      { "extra", offsetof(rc_rt_knode, extra) } };
    static const rc_field cu_kn[] = { { "func", offsetof(rc_cu_knode, func) },
                                      { "gridDimX", offsetof(rc_cu_knode, grid) },
                                      { "blockDimX", offsetof(rc_cu_knode, block) },
                                      { "sharedMemBytes", offsetof(rc_cu_knode, shmem) },
                                      { "kernelParams", offsetof(rc_cu_knode, args) },
                                      { "extra", offsetof(rc_cu_knode, extra) },
                                      { "kern", offsetof(rc_cu_knode, kern) },
                                      { "ctx", offsetof(rc_cu_knode, ctx) } };
    int nodes = rc_layout(host->struct_by_name("cudaKernelNodeParams"), sizeof(rc_rt_knode), rt_kn, 6) &&
                rc_layout(host->struct_by_name("CUDA_KERNEL_NODE_PARAMS_v2"), sizeof(rc_cu_knode), cu_kn, 8);
    for (size_t i = 0; i < RC_NSAMES; i++) {
        rc_same *sm = &rc_sames[i];
        const cushim_api_info *rt = host->api_by_name(sm->rt);
        sm->id = UINT32_MAX;
        if (rt != NULL && rc_api_maybe(&sm->api, sm->drv) == 0 && rc_same_shape(rt, sm->api.a) &&
            (sm->config < 0 || rc_launch_configs()) && (sm->node < 0 || nodes))
            sm->id = rt->id;
    }
    const cushim_api_info *fa = host->api_by_name("cudaFuncGetAttributes");
    const cushim_param_info *fp = fa ? host->api_param(fa, 0) : NULL;
    if (fp == NULL || fp->elem_size != 144)   /* another layout of struct cudaFuncAttributes: not translated */
        rf.id_fattr = UINT32_MAX;
    return bad ? -1 : 0;
}
