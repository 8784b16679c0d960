/*
 * rc_int.h - what the runtime part's files share (docs/remote.md, "Runtime-API programs"); remote.c sees only
 * rc_cudart.h. Owners:
 *   rc_cudart.c  the plugin's side ('rc', written by rc_init only), the calls by metadata, the thread's device
 *                and runtime context, the translated calls' errors, the dispatch (rc_pre);
 *   rc_stub.c    nvcc's registrations and the stub table: a stub's server function per device, its kernel;
 *   rc_launch.c  the <<<>>> configurations and the launches, their configuration checked here;
 *   rc_func.c    the other calls that take a stub (attributes, occupancy, its function, kernel, name...);
 *   rc_copy.c    cudaMemcpy* by kind, pinned host memory.
 */
#ifndef RC_INT_H
#define RC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_cudart.h"

#define RC_MAX_DEVICES 64

typedef struct rc_dim3 {
    unsigned x, y, z;
} rc_dim3;

/* launch configurations (cudaLaunchConfig_t, CUlaunchConfig) and their attributes, as rc_launch.c reads and
   writes them: each layout checked against the tree's metadata at init (rc_layout) */
#define RC_MAX_LATTRS RM_MAX_LATTRS /* attributes per launch configuration: what the codec carries */
#define RC_MAX_LATTR_ID 64          /* launch attribute ids mapped */
typedef struct rc_lattr {           /* cudaLaunchAttribute and CUlaunchAttribute: an id, a 64-byte value union */
    uint32_t id;
    uint8_t pad[4];
    _Alignas(8) uint8_t value[64];
} rc_lattr;
typedef struct rc_rt_lconfig {      /* cudaLaunchConfig_t */
    rc_dim3 grid, block;
    size_t shmem;
    void *stream;
    rc_lattr *attrs;
    unsigned nattrs;
} rc_rt_lconfig;
typedef struct rc_cu_lconfig {      /* CUlaunchConfig */
    rc_dim3 grid, block;
    unsigned shmem;
    void *stream;
    rc_lattr *attrs;
    unsigned nattrs;
} rc_cu_lconfig;
typedef struct rc_field {
    const char *name;
    size_t offset;
} rc_field;

/* a driver or runtime API of the tree, called by metadata (parameters by index) */
typedef struct rc_api {
    const cushim_api_info *a;
    const rm_plan *pl;
} rc_api;

/* The plugin's side: set by rc_init before any hook runs, read-only after. */
typedef struct rc_env {
    const cushim_host *host;         /* NULL: rc_init failed or never ran (preloaded only) */
    cushim_plugin *self;
    const rm_plans *plans;
    rc_forward_fn forward;
    rc_host_alloc_fn halloc;
    rc_host_free_fn hfree;
    void *user;
    /* the runtime's codes */
    int32_t e_inval, e_devfn, e_kind, e_missing_config, e_config, e_oom, e_symbol, e_notsup;
    int32_t drv[6], rt[6], nvml[6];  /* rc_lib_error's table: drv[1] is CUDA_ERROR_INVALID_VALUE, drv[4] OOM */
} rc_env;
extern rc_env rc;

/* rc_cudart.c */
int rc_api_of(rc_api *api, const char *name);                   /* 0, or -1 logged */
int rc_api_maybe(rc_api *api, const char *name);                /* 0, or -1 silently: not in this tree */
void rc_put(const rc_api *api, uint8_t *params, uint32_t index, const void *v, size_t n);
void rc_get(const cushim_call *call, const char *name, void *v, size_t n);
int32_t rc_call(const rc_api *api, uint8_t *params);            /* the server's result, or remote.c's error */
int32_t rc_fail(int32_t r);                                     /* kept for cudaGetLastError when an error */
int32_t rc_context(void);                                       /* the thread's device's runtime context */
int rc_current_device(void);
/* 1 when struct 's' (the metadata's) has 'size' bytes and each named field at its offset */
int rc_layout(const cushim_struct_info *s, size_t size, const rc_field *fields, size_t n);
void rc_log_once(_Atomic int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* rc_stub.c */
int rc_stub_init(int *have_kernels);                            /* 0, or -1 */
int32_t rc_stub_function(const void *stub, uint64_t *f);        /* the stub's (or kernel's) function here */
int rc_stub_max_threads(const void *stub, uint64_t f);          /* threads per block, 0: unknown */
int32_t rc_stub_kernel(const void *stub, uint64_t *k);          /* cudaGetKernel's CUkernel */
const char *rc_stub_name(const void *p);                        /* the registered name, NULL: none */
void rc_stub_forget(int dev);                                   /* 'dev' < 0: everything (a new back end) */
void rc_stub_fork_child(void);

/* rc_launch.c (its init before rc_func_init's) */
int rc_launch_init(void);
int rc_launch_pre(cushim_call *call, int32_t *result);          /* 1: answered */
/* a cudaLaunchConfig_t as the driver's, into 'attrs' (RC_MAX_LATTRS): 0 or the runtime's error (not kept) */
int32_t rc_launch_config(const void *config, rc_cu_lconfig *out, rc_lattr *attrs);
int rc_launch_configs(void);                                    /* 1: rc_launch_config translates (after init) */

/* rc_func.c */
int rc_func_init(int have_kernels);
int rc_func_pre(cushim_call *call, int32_t *result);

/* rc_copy.c */
int rc_copy_init(void);
int rc_copy_pre(cushim_call *call, int32_t *result);

#endif /* RC_INT_H */
