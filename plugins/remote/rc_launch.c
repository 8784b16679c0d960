/*
 * rc_launch.c - the runtime's launches over remoting (docs/remote.md, "Runtime-API programs"): nvcc's <<<>>>
 * configurations (__cudaPushCallConfiguration / __cudaPopCallConfiguration, per thread), cudaLaunchKernel[_ptsz]
 * and CUDA 13's __cudaGetKernel / __cudaLaunchKernel[_ptsz], each a driver launch on the stub's server function
 * (rc_stub.c). A launch may be batched (remote.c), so its configuration is checked here first, as the runtime does
 * before the driver sees it: a batched call's error would come back later, from another call. The launches with a
 * configuration struct (cudaLaunchKernelExC[_ptsz]: cuLaunchKernelEx[_ptsz], its attributes mapped to the driver's)
 * and the cooperative ones (cuLaunchCooperativeKernel[_ptsz]) go the same way.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rc_int.h"
#include "rm_names.h"

#define RC_EXPORT __attribute__((visibility("default")))
#define RC_MAX_CONFIGS 16

typedef struct rc_config {
    rc_dim3 grid, block;
    size_t shmem;
    void *stream;
} rc_config;
static __thread rc_config rc_configs[RC_MAX_CONFIGS];
static __thread int rc_nconfigs;

/* the driver calls and runtime APIs this file takes (rc_launch_init) */
static struct {
    rc_api launch[2], coop[2], ex[2];  /* cuLaunchKernel, cuLaunchCooperativeKernel, cuLaunchKernelEx [_ptsz] */
    uint32_t id_launch[2][2];          /* cudaLaunchKernel, cudaLaunchCooperativeKernel: [cooperative][ptsz] */
    uint32_t id_ex[2];                 /* cudaLaunchKernelExC[_ptsz] */
    int have_ex;                       /* the launch configurations translate (rc_lattr_init) */
    int16_t lattr_map[RC_MAX_LATTR_ID];   /* a runtime launch attribute's driver id, -1: none */
} rl;

/* <<<grid, block, shmem, stream>>>: pushed by the caller, popped by the stub before it launches. */
RC_EXPORT unsigned __cudaPushCallConfiguration(rc_dim3 gridDim, rc_dim3 blockDim, size_t sharedMem, void *stream);
unsigned __cudaPushCallConfiguration(rc_dim3 gridDim, rc_dim3 blockDim, size_t sharedMem, void *stream)
{
    if (rc_nconfigs == RC_MAX_CONFIGS)
        return 1;
    rc_configs[rc_nconfigs++] = (rc_config){ gridDim, blockDim, sharedMem, stream };
    return 0;
}

RC_EXPORT int __cudaPopCallConfiguration(rc_dim3 *gridDim, rc_dim3 *blockDim, size_t *sharedMem, void *stream);
int __cudaPopCallConfiguration(rc_dim3 *gridDim, rc_dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (rc_nconfigs == 0)
        return rc.host ? rc.e_missing_config : 52;   /* cudaErrorMissingConfiguration */
    rc_config c = rc_configs[--rc_nconfigs];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shmem;
    memcpy(stream, &c.stream, sizeof c.stream);
    return 0;
}

/* The configuration, checked here as the runtime does before the driver sees it: launches may be batched
   (remote.c), and a batched call's error would come back later, from another call. 0 or the runtime's error. */
static int32_t rc_check_config(const void *stub, uint64_t f, rc_dim3 g, rc_dim3 b, size_t shmem)
{
    if (shmem > UINT32_MAX)
        return rc.e_inval;
    int max = rc_stub_max_threads(stub, f);
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0 ||
        (max > 0 && (uint64_t)b.x * b.y * b.z > (uint64_t)max))
        return rc.e_config;
    return 0;
}

/* cuLaunchKernel[_ptsz], or cuLaunchCooperativeKernel[_ptsz] (no 'extra'), on the stub's function. */
static int32_t rc_launch(const void *stub, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream,
                         int per_thread, int cooperative)
{
    uint64_t f = 0;
    if (rc.host == NULL)
        return 3;   /* cudaErrorInitializationError: the plugin was preloaded but not loaded as a plugin */
    if (shmem > UINT32_MAX)
        return rc_fail(rc.e_inval);
    int32_t r = rc_stub_function(stub, &f);
    if (r == 0)
        r = rc_check_config(stub, f, g, b, shmem);
    if (r != 0)
        return rc_fail(r);
    const rc_api *api = cooperative ? &rl.coop[per_thread] : &rl.launch[per_thread];
    uint8_t params[256] = {0};
    unsigned v[6] = { g.x, g.y, g.z, b.x, b.y, b.z }, sh = (unsigned)shmem;
    void *extra = NULL;
    rc_put(api, params, 0, &f, sizeof f);
    for (uint32_t i = 0; i < 6; i++)
        rc_put(api, params, 1 + i, &v[i], sizeof v[i]);
    rc_put(api, params, 7, &sh, sizeof sh);
    rc_put(api, params, 8, &stream, sizeof stream);
    rc_put(api, params, 9, &args, sizeof args);
    if (!cooperative)
        rc_put(api, params, 10, &extra, sizeof extra);
    r = rc_call(api, params);
    return rc_fail(r == rc.drv[1] ? rc.e_config : r);   /* the runtime's word for a launch the driver refuses */
}

/* cudaLaunchConfig_t as the driver's CUlaunchConfig (layouts checked against the metadata in rc_launch_init): the
   dimensions, shared memory and stream copied, each attribute's id mapped by name (cudaLaunchAttributeFooBar is
   CU_LAUNCH_ATTRIBUTE_FOO_BAR) and its value union copied whole (the same 64 bytes in both). An id with no driver
   form, too many attributes or a NULL list: cudaErrorInvalidValue, logged once. */
int32_t rc_launch_config(const void *config, rc_cu_lconfig *out, rc_lattr *attrs)
{
    static _Atomic int warned;
    const rc_rt_lconfig *c = config;
    if (!rl.have_ex)
        return rc.e_notsup;
    if (c == NULL || (c->nattrs != 0 && c->attrs == NULL) || c->shmem > UINT32_MAX)
        return rc.e_inval;
    if (c->nattrs > RC_MAX_LATTRS) {
        rc_log_once(&warned, "a launch configuration with %u attributes (at most %u are carried): "
                    "cudaErrorInvalidValue", c->nattrs, RC_MAX_LATTRS);
        return rc.e_inval;
    }
    for (unsigned k = 0; k < c->nattrs; k++) {
        uint32_t id = c->attrs[k].id;
        if (id >= RC_MAX_LATTR_ID || rl.lattr_map[id] < 0) {
            rc_log_once(&warned, "launch attribute %u has no driver form in this tree: cudaErrorInvalidValue", id);
            return rc.e_inval;
        }
        attrs[k] = c->attrs[k];
        attrs[k].id = (uint32_t)rl.lattr_map[id];
    }
    *out = (rc_cu_lconfig){ .grid = c->grid, .block = c->block, .shmem = (unsigned)c->shmem, .stream = c->stream,
                            .attrs = c->nattrs ? attrs : NULL, .nattrs = c->nattrs };
    return 0;
}

int rc_launch_configs(void)
{
    return rl.have_ex;
}

/* cudaLaunchKernelExC[_ptsz]: cuLaunchKernelEx[_ptsz] on the stub's function, batched as the other launches. */
static int32_t rc_launch_ex(const void *config, const void *stub, void **args, int per_thread)
{
    rc_cu_lconfig d;
    rc_lattr attrs[RC_MAX_LATTRS];
    uint64_t f = 0;
    int32_t r = rc_launch_config(config, &d, attrs);
    if (r == 0)
        r = rc_stub_function(stub, &f);
    if (r == 0)
        r = rc_check_config(stub, f, d.grid, d.block, d.shmem);
    if (r != 0)
        return rc_fail(r);
    const rc_api *api = &rl.ex[per_thread];
    uint8_t params[256] = {0};
    const rc_cu_lconfig *pd = &d;
    void *extra = NULL;
    rc_put(api, params, 0, &pd, sizeof pd);
    rc_put(api, params, 1, &f, sizeof f);
    rc_put(api, params, 2, &args, sizeof args);
    rc_put(api, params, 3, &extra, sizeof extra);
    r = rc_call(api, params);
    return rc_fail(r == rc.drv[1] ? rc.e_config : r);
}

/* CUDA 13's launch path (nvcc without __NV_LEGACY_LAUNCH): a kernel handle per stub, then a launch by it. */
RC_EXPORT int __cudaGetKernel(void **kernel, const void *stub);
int __cudaGetKernel(void **kernel, const void *stub)
{
    if (kernel == NULL)
        return 1;   /* cudaErrorInvalidValue */
    *kernel = (void *)stub;   /* this client's kernel handle is the stub's address */
    return 0;
}

RC_EXPORT int __cudaLaunchKernel(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream);
int __cudaLaunchKernel(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream)
{
    return rc_launch(kernel, g, b, args, shmem, stream, 0, 0);
}

RC_EXPORT int __cudaLaunchKernel_ptsz(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream);
int __cudaLaunchKernel_ptsz(void *kernel, rc_dim3 g, rc_dim3 b, void **args, size_t shmem, void *stream)
{
    return rc_launch(kernel, g, b, args, shmem, stream, 1, 0);
}

int rc_launch_pre(cushim_call *call, int32_t *result)
{
    for (int pt = 0; pt < 2; pt++)
        for (int coop = 0; coop < 2; coop++)
            if (call->api_id == rl.id_launch[coop][pt]) {
                const void *func;
                rc_dim3 g, b;
                void **args;
                size_t shmem;
                void *stream;
                rc_get(call, "func", &func, sizeof func);
                rc_get(call, "gridDim", &g, sizeof g);
                rc_get(call, "blockDim", &b, sizeof b);
                rc_get(call, "args", &args, sizeof args);
                rc_get(call, "sharedMem", &shmem, sizeof shmem);
                rc_get(call, "stream", &stream, sizeof stream);
                *result = rc_launch(func, g, b, args, shmem, stream, pt, coop);
                return 1;
            }
    for (int pt = 0; pt < 2; pt++)
        if (call->api_id == rl.id_ex[pt]) {
            const void *config, *func;
            void **args;
            rc_get(call, "config", &config, sizeof config);
            rc_get(call, "func", &func, sizeof func);
            rc_get(call, "args", &args, sizeof args);
            *result = rc_launch_ex(config, func, args, pt);
            return 1;
        }
    return 0;
}

/* cudaLaunchAttributeFooBar -> CU_LAUNCH_ATTRIBUTE_FOO_BAR */
static void rc_lattr_driver_name(const char *rt, char *out, size_t cap)
{
    static const char prefix[] = "CU_LAUNCH_ATTRIBUTE";
    size_t n = 0;
    for (const char *p = prefix; *p && n + 1 < cap; p++)
        out[n++] = *p;
    for (const char *p = rt + strlen("cudaLaunchAttribute"); *p && n + 2 < cap; p++) {
        if (*p >= 'A' && *p <= 'Z')
            out[n++] = '_';
        out[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
    }
    out[n] = '\0';
}

/* cudaLaunchKernelExC and the cluster occupancy calls: the structs laid out as this file reads them, and each
   runtime attribute id's driver id (by name). 0: translated; -1: those calls stay the server's to refuse. */
static int rc_lattr_init(void)
{
    static const rc_field rt_cfg[] = { { "gridDim", offsetof(rc_rt_lconfig, grid) },
                                       { "blockDim", offsetof(rc_rt_lconfig, block) },
                                       { "dynamicSmemBytes", offsetof(rc_rt_lconfig, shmem) },
                                       { "stream", offsetof(rc_rt_lconfig, stream) },
                                       { "attrs", offsetof(rc_rt_lconfig, attrs) },
                                       { "numAttrs", offsetof(rc_rt_lconfig, nattrs) } };
    static const rc_field cu_cfg[] = { { "gridDimX", offsetof(rc_cu_lconfig, grid) },
                                       { "blockDimX", offsetof(rc_cu_lconfig, block) },
                                       { "sharedMemBytes", offsetof(rc_cu_lconfig, shmem) },
                                       { "hStream", offsetof(rc_cu_lconfig, stream) },
                                       { "attrs", offsetof(rc_cu_lconfig, attrs) },
                                       { "numAttrs", offsetof(rc_cu_lconfig, nattrs) } };
    static const rc_field rt_attr[] = { { "id", offsetof(rc_lattr, id) }, { "val", offsetof(rc_lattr, value) } };
    static const rc_field cu_attr[] = { { "id", offsetof(rc_lattr, id) }, { "value", offsetof(rc_lattr, value) } };
    if (!rc_layout(rc.host->struct_by_name("cudaLaunchConfig_t"), sizeof(rc_rt_lconfig), rt_cfg, 6) ||
        !rc_layout(rc.host->struct_by_name("CUlaunchConfig"), sizeof(rc_cu_lconfig), cu_cfg, 6) ||
        !rc_layout(rc.host->struct_by_name("cudaLaunchAttribute"), sizeof(rc_lattr), rt_attr, 2) ||
        !rc_layout(rc.host->struct_by_name("CUlaunchAttribute"), sizeof(rc_lattr), cu_attr, 2))
        return -1;
    const cushim_enum_info *e = rc.host->enum_by_name("cudaLaunchAttributeID");
    if (e == NULL)
        return -1;
    for (uint32_t i = 0; i < RC_MAX_LATTR_ID; i++)
        rl.lattr_map[i] = -1;
    for (uint32_t k = 0; k < e->nvalues; k++) {
        const cushim_enum_value *v = cushim_enum_value_at(rc.host, e, k);
        char name[128];
        int64_t cu;
        if (v == NULL || v->value < 0 || v->value >= RC_MAX_LATTR_ID ||
            strncmp(v->name, "cudaLaunchAttribute", strlen("cudaLaunchAttribute")) != 0)
            continue;
        rc_lattr_driver_name(v->name, name, sizeof name);
        if (rc.host->enum_constant(name, &cu, NULL) == CUSHIM_OK && cu >= 0 && cu < INT16_MAX)
            rl.lattr_map[v->value] = (int16_t)cu;
    }
    return 0;
}

int rc_launch_init(void)
{
    rl.id_launch[0][0] = rm_api_id(rc.host, "cudaLaunchKernel", UINT32_MAX);
    rl.id_launch[0][1] = rm_api_id(rc.host, "cudaLaunchKernel_ptsz", UINT32_MAX);
    int bad = rc_api_of(&rl.launch[0], "cuLaunchKernel") | rc_api_of(&rl.launch[1], "cuLaunchKernel_ptsz");
    for (int pt = 0; pt < 2; pt++)
        rl.id_launch[1][pt] = rl.id_ex[pt] = UINT32_MAX;
    if (rc_api_maybe(&rl.coop[0], "cuLaunchCooperativeKernel") == 0 &&
        rc_api_maybe(&rl.coop[1], "cuLaunchCooperativeKernel_ptsz") == 0) {
        rl.id_launch[1][0] = rm_api_id(rc.host, "cudaLaunchCooperativeKernel", UINT32_MAX);
        rl.id_launch[1][1] = rm_api_id(rc.host, "cudaLaunchCooperativeKernel_ptsz", UINT32_MAX);
    }
    rl.have_ex = rc_lattr_init() == 0;
    if (rl.have_ex && rc_api_maybe(&rl.ex[0], "cuLaunchKernelEx") == 0 &&
        rc_api_maybe(&rl.ex[1], "cuLaunchKernelEx_ptsz") == 0) {
        rl.id_ex[0] = rm_api_id(rc.host, "cudaLaunchKernelExC", UINT32_MAX);
        rl.id_ex[1] = rm_api_id(rc.host, "cudaLaunchKernelExC_ptsz", UINT32_MAX);
    }
    return bad ? -1 : 0;
}
