/*
 * fuzz_lua.c - libFuzzer harness for the lua plugin's bridge (plugins/lua): the fuzz bytes are a
 * policy, loaded as a hot reload would load it - compiled and run once under the sandbox, the
 * instruction budget and the memory cap - and, when it loads, its hooks are called the way the host
 * calls them, with a synthetic call object for each API of a small metadata table written here (a
 * scalar, output pointers of each kind, a string, a struct by pointer with a nested struct, an array
 * and an enum, a struct by value, a character buffer with its length, a call returning no status).
 * Each API is called with the program's pointers valid, and with them NULL or pointing at no memory
 * (the real call then fails, as a driver would); a real call also fails when a hook changed a pointer.
 * Then the policy's at_exit functions run. Last, the input's first three lines are a subject, a pattern and
 * a replacement for string.find, .match, .gmatch and .gsub: the plugin's (lp_pattern.c, which charges its
 * steps to the budget) must return or raise what liblua's own do, wherever it stays within the budget.
 *
 * Checked for every input: no crash, no sanitizer report, no leak; every call returns a status the
 * policy or the fail rule gave; the program's memory outside the outputs is never written (canaries);
 * and no input runs longer than tools/fuzz.sh's per-input timeout: the budget is what bounds a
 * policy. The liblua the plugin opens is the system's (isolate=plain: ASan sees its longjmp).
 *
 *   bash tools/fuzz.sh lua
 *   build-fuzz/fuzz_lua tests/fuzz/corpus/lua/quota.lua     (one input)
 *
 * Built with -DFUZZ_LUA_MAIN it is also the unit test lp_fuzz_replay (tests/unit/plugins.cmake): a main()
 * that runs each file it is given as one input, so that CI replays the seeds without libFuzzer.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "lp_engine.h"
#include "lp_hooks.h"
#include "lp_pattern.h"
#include "lp_state.h"
#include "lp_watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const cushim_plugin_def *cushim_plugin_entry(void);   /* lua.c's CUSHIM_PLUGIN */

/* ------------------------------------------------------------------------ */
/* Synthetic metadata                                                       */
/* ------------------------------------------------------------------------ */
typedef struct fz_dim3 { unsigned int x, y, z; } fz_dim3;
typedef struct fz_config {
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX;
    fz_dim3 grid2;            /* a nested struct                 */
    int pad[3];               /* an array                        */
    int mtype;                /* an enum                         */
    const char *label;        /* a string                        */
    void *hStream;
} fz_config;

static const cushim_enum_value fz_attr_values[] = {
    {"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK", 1}, {"CU_DEVICE_ATTRIBUTE_WARP_SIZE", 10}};
static const cushim_enum_info fz_attr_enum = {.name = "CUdevice_attribute", .size = 4, .nvalues = 2,
                                              .values = fz_attr_values};
static const cushim_enum_value fz_mt_values[] = {{"CU_MEMORYTYPE_HOST", 1}, {"CU_MEMORYTYPE_DEVICE", 2}};
static const cushim_enum_info fz_mt_enum = {.name = "CUmemorytype", .size = 4, .nvalues = 2, .values = fz_mt_values};

/* F(name, type, kind, offset, size, array_len, enum, struct) */
#define F(n, ty, k, off, sz, al, e, st)                                                                     \
    {.name = n, .type = ty, .kind = k, .offset = (uint32_t)(off), .size = sz, .array_len = al, .enum_type = e, \
     .struct_type = st}
static const cushim_field_info fz_dim3_fields[] = {
    F("x", "unsigned int", CUSHIM_KIND_SCALAR, 0, 4, 0, NULL, NULL),
    F("y", "unsigned int", CUSHIM_KIND_SCALAR, 4, 4, 0, NULL, NULL),
    F("z", "unsigned int", CUSHIM_KIND_SCALAR, 8, 4, 0, NULL, NULL),
};
static const cushim_struct_info fz_dim3_info = {.name = "dim3", .size = sizeof(fz_dim3), .nfields = 3,
                                                .fields = fz_dim3_fields};
static const cushim_field_info fz_config_fields[] = {
    F("gridDimX", "unsigned int", CUSHIM_KIND_SCALAR, offsetof(fz_config, gridDimX), 4, 0, NULL, NULL),
    F("gridDimY", "unsigned int", CUSHIM_KIND_SCALAR, offsetof(fz_config, gridDimY), 4, 0, NULL, NULL),
    F("gridDimZ", "unsigned int", CUSHIM_KIND_SCALAR, offsetof(fz_config, gridDimZ), 4, 0, NULL, NULL),
    F("blockDimX", "unsigned int", CUSHIM_KIND_SCALAR, offsetof(fz_config, blockDimX), 4, 0, NULL, NULL),
    F("grid2", "dim3", CUSHIM_KIND_STRUCT, offsetof(fz_config, grid2), sizeof(fz_dim3), 0, NULL, &fz_dim3_info),
    F("pad", "int[3]", CUSHIM_KIND_SCALAR, offsetof(fz_config, pad), 12, 3, NULL, NULL),
    F("mtype", "CUmemorytype", CUSHIM_KIND_ENUM, offsetof(fz_config, mtype), 4, 0, &fz_mt_enum, NULL),
    F("label", "const char *", CUSHIM_KIND_STRING, offsetof(fz_config, label), 8, 0, NULL, NULL),
    F("hStream", "CUstream", CUSHIM_KIND_HANDLE, offsetof(fz_config, hStream), 8, 0, NULL, NULL),
};
static const cushim_struct_info fz_config_info = {.name = "CUlaunchConfig", .size = sizeof(fz_config), .nfields = 9,
                                                  .fields = fz_config_fields};

/* P(name, type, canonical, kind, dir, offset, size, count_param, elem_size, pointee, enum, struct) */
#define P(n, ty, ct, k, d, off, sz, cp, es, pk, e, st)                                                     \
    {.name = n, .type = ty, .canonical_type = ct, .kind = k, .dir = d, .offset = (uint16_t)(off),           \
     .size = (uint16_t)(sz), .count_param = cp, .elem_size = es, .pointee = pk, .enum_type = e, .struct_type = st}
enum { FZ_SYNC, FZ_ALLOC, FZ_FREE, FZ_LAUNCHEX, FZ_ATTR, FZ_NAME, FZ_CUDAMALLOC, FZ_ERRSTR, FZ_RTERRSTR, FZ_GETFUNC,
       FZ_RTLAUNCH, FZ_ELAPSED, FZ_NAPI };

typedef struct { unsigned long long *dptr; size_t bytesize; } fz_p_alloc;
typedef struct { unsigned long long dptr; } fz_p_free;
typedef struct { const fz_config *config; void *f; void **kernelParams; void **extra; } fz_p_launchex;
typedef struct { int *pi; int attrib; int dev; } fz_p_attr;
typedef struct { char *name; int len; int dev; } fz_p_name;
typedef struct { void **devPtr; size_t size; } fz_p_cudamalloc;
typedef struct { int error; const char **pStr; } fz_p_errstr;
typedef struct { int error; } fz_p_rterrstr;
typedef struct { void **hfunc; void *hmod; const char *name; } fz_p_getfunc;
typedef struct { const void *func; fz_dim3 gridDim; fz_dim3 blockDim; void **args; size_t sharedMem; void *stream; }
    fz_p_rtlaunch;
typedef struct { float *pMilliseconds; void *hStart; void *hEnd; } fz_p_elapsed;

static const cushim_param_info fz_alloc_p[] = {
    P("dptr", "CUdeviceptr *", "unsigned long long *", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT,
      offsetof(fz_p_alloc, dptr), 8, -1, 8, CUSHIM_KIND_DEVPTR, NULL, NULL),
    P("bytesize", "size_t", "unsigned long", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, offsetof(fz_p_alloc, bytesize), 8,
      -1, 0, 0, NULL, NULL)};
static const cushim_param_info fz_free_p[] = {
    P("dptr", "CUdeviceptr", "unsigned long long", CUSHIM_KIND_DEVPTR, CUSHIM_DIR_IN, 0, 8, -1, 0, 0, NULL, NULL)};
static const cushim_param_info fz_launchex_p[] = {
    P("config", "const CUlaunchConfig *", "const struct CUlaunchConfig_st *", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN,
      offsetof(fz_p_launchex, config), 8, -1, sizeof(fz_config), CUSHIM_KIND_STRUCT, NULL, &fz_config_info),
    P("f", "CUfunction", "struct CUfunc_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN, offsetof(fz_p_launchex, f), 8, -1,
      0, 0, NULL, NULL),
    P("kernelParams", "void **", "void **", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN,
      offsetof(fz_p_launchex, kernelParams), 8, -1, 8, CUSHIM_KIND_POINTER, NULL, NULL),
    P("extra", "void **", "void **", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN, offsetof(fz_p_launchex, extra), 8, -1, 8,
      CUSHIM_KIND_POINTER, NULL, NULL)};
static const cushim_param_info fz_attr_p[] = {
    P("pi", "int *", "int *", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, offsetof(fz_p_attr, pi), 8, -1, 4,
      CUSHIM_KIND_SCALAR, NULL, NULL),
    P("attrib", "CUdevice_attribute", "enum CUdevice_attribute_enum", CUSHIM_KIND_ENUM, CUSHIM_DIR_IN,
      offsetof(fz_p_attr, attrib), 4, -1, 0, 0, &fz_attr_enum, NULL),
    P("dev", "CUdevice", "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, offsetof(fz_p_attr, dev), 4, -1, 0, 0, NULL,
      NULL)};
static const cushim_param_info fz_name_p[] = {
    P("name", "char *", "char *", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, offsetof(fz_p_name, name), 8, 1, 1,
      CUSHIM_KIND_SCALAR, NULL, NULL),
    P("len", "int", "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, offsetof(fz_p_name, len), 4, -1, 0, 0, NULL, NULL),
    P("dev", "CUdevice", "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, offsetof(fz_p_name, dev), 4, -1, 0, 0, NULL,
      NULL)};
static const cushim_param_info fz_cudamalloc_p[] = {
    P("devPtr", "void **", "void **", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, offsetof(fz_p_cudamalloc, devPtr), 8, -1,
      8, CUSHIM_KIND_POINTER, NULL, NULL),
    P("size", "size_t", "unsigned long", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, offsetof(fz_p_cudamalloc, size), 8, -1,
      0, 0, NULL, NULL)};
static const cushim_param_info fz_errstr_p[] = {
    P("error", "CUresult", "enum cudaError_enum", CUSHIM_KIND_ENUM, CUSHIM_DIR_IN, offsetof(fz_p_errstr, error), 4,
      -1, 0, 0, NULL, NULL),
    P("pStr", "const char **", "const char **", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, offsetof(fz_p_errstr, pStr), 8,
      -1, 8, CUSHIM_KIND_STRING, NULL, NULL)};
static const cushim_param_info fz_rterrstr_p[] = {
    P("error", "cudaError_t", "enum cudaError", CUSHIM_KIND_ENUM, CUSHIM_DIR_IN, 0, 4, -1, 0, 0, NULL, NULL)};
static const cushim_param_info fz_getfunc_p[] = {
    P("hfunc", "CUfunction *", "struct CUfunc_st **", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT,
      offsetof(fz_p_getfunc, hfunc), 8, -1, 8, CUSHIM_KIND_HANDLE, NULL, NULL),
    P("hmod", "CUmodule", "struct CUmod_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN, offsetof(fz_p_getfunc, hmod), 8,
      -1, 0, 0, NULL, NULL),
    P("name", "const char *", "const char *", CUSHIM_KIND_STRING, CUSHIM_DIR_IN, offsetof(fz_p_getfunc, name), 8,
      -1, 1, 0, NULL, NULL)};
static const cushim_param_info fz_rtlaunch_p[] = {
    P("func", "const void *", "const void *", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN, offsetof(fz_p_rtlaunch, func), 8,
      -1, 0, 0, NULL, NULL),
    P("gridDim", "dim3", "struct dim3", CUSHIM_KIND_STRUCT, CUSHIM_DIR_IN, offsetof(fz_p_rtlaunch, gridDim), 12, -1,
      0, 0, NULL, &fz_dim3_info),
    P("blockDim", "dim3", "struct dim3", CUSHIM_KIND_STRUCT, CUSHIM_DIR_IN, offsetof(fz_p_rtlaunch, blockDim), 12,
      -1, 0, 0, NULL, &fz_dim3_info),
    P("args", "void **", "void **", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN, offsetof(fz_p_rtlaunch, args), 8, -1, 8,
      CUSHIM_KIND_POINTER, NULL, NULL),
    P("sharedMem", "size_t", "unsigned long", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, offsetof(fz_p_rtlaunch, sharedMem),
      8, -1, 0, 0, NULL, NULL),
    P("stream", "cudaStream_t", "struct CUstream_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN,
      offsetof(fz_p_rtlaunch, stream), 8, -1, 0, 0, NULL, NULL)};
static const cushim_param_info fz_elapsed_p[] = {
    P("pMilliseconds", "float *", "float *", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT,
      offsetof(fz_p_elapsed, pMilliseconds), 8, -1, 4, CUSHIM_KIND_SCALAR, NULL, NULL),
    P("hStart", "CUevent", "struct CUevent_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN, offsetof(fz_p_elapsed, hStart),
      8, -1, 0, 0, NULL, NULL),
    P("hEnd", "CUevent", "struct CUevent_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN, offsetof(fz_p_elapsed, hEnd), 8,
      -1, 0, 0, NULL, NULL)};

#define API(i, n, base, lib, rk, cat, ps, rs, ps_)                                                            \
    {.id = i, .name = n, .base_name = base, .library = lib, .ret_kind = rk, .categories = cat,               \
     .return_type = rk == CUSHIM_RET_OTHER ? "const char *" : "CUresult", .header = "fuzz.h", .line = i + 1,   \
     .params_size = ps, .ret_size = rs, .nparams = (uint16_t)(sizeof ps_ / sizeof ps_[0]), .params = ps_}
static const cushim_param_info fz_none_p[1];
static const cushim_api_info fz_apis[FZ_NAPI] = {
    {.id = FZ_SYNC, .name = "cuCtxSynchronize", .base_name = "cuCtxSynchronize", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .categories = CUSHIM_CAT_SYNC, .return_type = "CUresult", .header = "fuzz.h",
     .line = 1, .ret_size = 4, .params = fz_none_p},
    API(FZ_ALLOC, "cuMemAlloc_v2", "cuMemAlloc", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT, CUSHIM_CAT_ALLOC,
        sizeof(fz_p_alloc), 4, fz_alloc_p),
    API(FZ_FREE, "cuMemFree_v2", "cuMemFree", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT, CUSHIM_CAT_FREE,
        sizeof(fz_p_free), 4, fz_free_p),
    API(FZ_LAUNCHEX, "cuLaunchKernelEx", "cuLaunchKernelEx", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT,
        CUSHIM_CAT_LAUNCH, sizeof(fz_p_launchex), 4, fz_launchex_p),
    API(FZ_ATTR, "cuDeviceGetAttribute", "cuDeviceGetAttribute", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT,
        CUSHIM_CAT_DEVICE, sizeof(fz_p_attr), 4, fz_attr_p),
    API(FZ_NAME, "cuDeviceGetName", "cuDeviceGetName", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT, CUSHIM_CAT_DEVICE,
        sizeof(fz_p_name), 4, fz_name_p),
    API(FZ_CUDAMALLOC, "cudaMalloc", "cudaMalloc", CUSHIM_LIB_RUNTIME, CUSHIM_RET_CUDAERROR, CUSHIM_CAT_ALLOC,
        sizeof(fz_p_cudamalloc), 4, fz_cudamalloc_p),
    API(FZ_ERRSTR, "cuGetErrorString", "cuGetErrorString", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT, CUSHIM_CAT_QUERY,
        sizeof(fz_p_errstr), 4, fz_errstr_p),
    API(FZ_RTERRSTR, "cudaGetErrorString", "cudaGetErrorString", CUSHIM_LIB_RUNTIME, CUSHIM_RET_OTHER,
        CUSHIM_CAT_QUERY, sizeof(fz_p_rterrstr), 8, fz_rterrstr_p),
    API(FZ_GETFUNC, "cuModuleGetFunction", "cuModuleGetFunction", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT,
        CUSHIM_CAT_MODULE, sizeof(fz_p_getfunc), 4, fz_getfunc_p),
    API(FZ_RTLAUNCH, "cudaLaunchKernel", "cudaLaunchKernel", CUSHIM_LIB_RUNTIME, CUSHIM_RET_CUDAERROR,
        CUSHIM_CAT_LAUNCH, sizeof(fz_p_rtlaunch), 4, fz_rtlaunch_p),
    API(FZ_ELAPSED, "cuEventElapsedTime", "cuEventElapsedTime", CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT,
        CUSHIM_CAT_EVENT, sizeof(fz_p_elapsed), 4, fz_elapsed_p),
};

/* ------------------------------------------------------------------------ */
/* The host                                                                 */
/* ------------------------------------------------------------------------ */
static struct {
    char script[64], report[64];
    void *tls;
    void (*tls_free)(void *);
    int hooked;                   /* the plugin's hook group is registered */
    uint64_t seq;
} fz;

static uint32_t fz_api_id_limit(void) { return FZ_NAPI; }
static const cushim_api_info *fz_api_by_id(uint32_t id) { return id < FZ_NAPI ? &fz_apis[id] : NULL; }
static const cushim_api_info *fz_api_by_name(const char *name)
{
    for (int i = 0; name != NULL && i < FZ_NAPI; i++)
        if (!strcmp(fz_apis[i].name, name))
            return &fz_apis[i];
    return NULL;
}
static const cushim_param_info *fz_api_param(const cushim_api_info *api, uint32_t i)
{
    return api != NULL && i < api->nparams ? &api->params[i] : NULL;
}

/* A selector's atom against one API: NAME (exact or base), a glob, all, lib:driver|runtime, !ATOM. */
static int fz_atom(const char *a, size_t n, const cushim_api_info *api, int *bad)
{
    char buf[256];
    while (n > 0 && *a == ' ')
        a++, n--;
    while (n > 0 && a[n - 1] == ' ')
        n--;
    if (n == 0 || n >= sizeof buf) {
        *bad = 1;
        return 0;
    }
    memcpy(buf, a, n);
    buf[n] = '\0';
    if (buf[0] == '!')
        return !fz_atom(buf + 1, n - 1, api, bad);
    if (!strcmp(buf, "all"))
        return 1;
    if (!strncmp(buf, "lib:", 4)) {
        if (strcmp(buf + 4, "driver") && strcmp(buf + 4, "runtime"))
            *bad = 1;
        return api->library == (!strcmp(buf + 4, "driver") ? CUSHIM_LIB_DRIVER : CUSHIM_LIB_RUNTIME);
    }
    if (strchr(buf, ':') != NULL) {
        *bad = 1;
        return 0;
    }
    if (strpbrk(buf, "*?[") != NULL)
        return fnmatch(buf, api->name, 0) == 0;
    return !strcmp(buf, api->name) || !strcmp(buf, api->base_name);
}

static int fz_match(const char *sel, const cushim_api_info *api, int *bad)
{
    for (const char *term = sel;;) {
        size_t tn = strcspn(term, ",");
        int all = 1;
        for (const char *a = term; a < term + tn;) {
            size_t an = strcspn(a, "&,");
            all &= fz_atom(a, an, api, bad);
            a += an + (a[an] == '&');
        }
        if (all && !*bad)
            return 1;
        if (term[tn] == '\0')
            return 0;
        term += tn + 1;
    }
}

static int fz_api_select(const char *sel, uint32_t *ids, uint32_t cap, char *err, size_t errlen)
{
    int n = 0, bad = 0;
    for (uint32_t i = 0; i < FZ_NAPI; i++)
        if (fz_match(sel, &fz_apis[i], &bad) && !bad && (uint32_t)n < cap)
            ids[n++] = i;
    if (bad) {
        if (err != NULL)
            snprintf(err, errlen, "not a selector of the fuzz host");
        return CUSHIM_EINVAL;
    }
    return n;
}

static const struct { const char *name; uint32_t kind; int32_t code; } fz_results[] = {
    {"CUDA_SUCCESS", CUSHIM_RET_CURESULT, 0}, {"CUDA_ERROR_INVALID_VALUE", CUSHIM_RET_CURESULT, 1},
    {"CUDA_ERROR_OUT_OF_MEMORY", CUSHIM_RET_CURESULT, 2}, {"CUDA_ERROR_NOT_PERMITTED", CUSHIM_RET_CURESULT, 800},
    {"CUDA_ERROR_UNKNOWN", CUSHIM_RET_CURESULT, 999}, {"cudaSuccess", CUSHIM_RET_CUDAERROR, 0},
    {"cudaErrorMemoryAllocation", CUSHIM_RET_CUDAERROR, 2}, {"cudaErrorUnknown", CUSHIM_RET_CUDAERROR, 999},
};
static const char *fz_result_name(uint32_t kind, int32_t code)
{
    for (size_t i = 0; i < sizeof fz_results / sizeof fz_results[0]; i++)
        if (fz_results[i].kind == kind && fz_results[i].code == code)
            return fz_results[i].name;
    return NULL;
}
static int fz_result_by_name(const char *name, uint32_t *kind, int32_t *code)
{
    for (size_t i = 0; name != NULL && i < sizeof fz_results / sizeof fz_results[0]; i++)
        if (!strcmp(fz_results[i].name, name)) {
            *kind = fz_results[i].kind;
            *code = fz_results[i].code;
            return CUSHIM_OK;
        }
    return CUSHIM_ENOENT;
}
static const char *fz_enum_value_name(const cushim_enum_info *e, int64_t v)
{
    for (uint32_t i = 0; e != NULL && i < e->nvalues; i++)
        if (e->values[i].value == v)
            return e->values[i].name;
    return NULL;
}
static int fz_enum_constant(const char *name, int64_t *v, const cushim_enum_info **type)
{
    const cushim_enum_info *es[] = {&fz_attr_enum, &fz_mt_enum};
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; name != NULL && i < es[k]->nvalues; i++)
            if (!strcmp(es[k]->values[i].name, name)) {
                *v = es[k]->values[i].value;
                if (type != NULL)
                    *type = es[k];
                return CUSHIM_OK;
            }
    return CUSHIM_ENOMATCH;
}

static int fz_hooks_add(cushim_plugin *self, const cushim_hook_spec *spec, uint64_t *group)
{
    (void)self;
    FUZZ_CHECK(spec->pre == lp_pre && spec->post == lp_post);
    *group = 1;
    fz.hooked = 1;
    return CUSHIM_OK;
}
static int fz_hooks_remove(cushim_plugin *self, uint64_t group)
{
    (void)self;
    (void)group;
    return CUSHIM_OK;
}

static uint64_t fz_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static uint64_t fz_thread_id(void) { return (uint64_t)gettid(); }
static int fz_tls_create(cushim_plugin *self, void (*destructor)(void *), uint32_t *key)
{
    (void)self;
    fz.tls_free = destructor;
    *key = 0;
    return CUSHIM_OK;
}
static void *fz_tls_get(uint32_t key) { return key == 0 ? fz.tls : NULL; }
static int fz_tls_set(uint32_t key, void *v)
{
    if (key != 0)
        return CUSHIM_EINVAL;
    fz.tls = v;
    return CUSHIM_OK;
}
static void fz_log(cushim_plugin *self, int level, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    (void)self;
    (void)level;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);   /* formatted (what the shim would do), not printed */
    va_end(ap);
}
static int fz_log_enabled(int level) { return level >= CUSHIM_LOG_DEBUG; }

static const char *fz_opt_string(cushim_plugin *self, const char *name)
{
    (void)self;
    if (!strcmp(name, "script"))
        return fz.script;
    if (!strcmp(name, "fail"))
        return "closed";
    if (!strcmp(name, "report"))
        return fz.report;
    if (!strcmp(name, "isolate"))
        return "plain";   /* the process's libc: ASan sees Lua's longjmp */
    if (!strcmp(name, "allow"))
        return "";
    return NULL;          /* lualib: the system's */
}
static int64_t fz_opt_int(cushim_plugin *self, const char *name)
{
    (void)self;
    if (!strcmp(name, "budget"))
        return 20000;
    if (!strcmp(name, "reload_ms"))
        return 250;
    if (!strcmp(name, "error_rate"))
        return 1000000;   /* every hook error formatted */
    return 0;
}
static int fz_opt_bool(cushim_plugin *self, const char *name)
{
    (void)self;
    (void)name;
    return 0;             /* reload=false: no watcher thread; the harness reloads */
}
static uint64_t fz_opt_bytes(cushim_plugin *self, const char *name)
{
    (void)self;
    return !strcmp(name, "mem") ? 1u << 20 : 0;
}
static uint32_t fz_opt_count(cushim_plugin *self, const char *name)
{
    (void)self;
    return !strcmp(name, "opt") ? 2 : 0;
}
static const char *fz_opt_string_at(cushim_plugin *self, const char *name, uint32_t i)
{
    (void)self;
    (void)name;
    return i == 0 ? "limit=1000" : "select=cuMem*";
}
static int fz_secure(void) { return 0; }

/* cushim.real.NAME: succeeds (the plugin points the outputs at its own memory). */
static int fz_call_real(uint32_t id, void *params, void *retval)
{
    (void)params;
    if (id >= FZ_NAPI)
        return CUSHIM_EINVAL;
    if (fz_apis[id].ret_kind == CUSHIM_RET_OTHER)
        *(const char **)retval = "fuzz";
    else
        *(int32_t *)retval = 0;
    return CUSHIM_OK;
}

static struct cushim_plugin *fz_self = (struct cushim_plugin *)&fz;
static const cushim_host fz_host = {
    .size = sizeof(cushim_host),
    .abi_version = CUSHIM_ABI_VERSION,
    .sizeof_call = sizeof(cushim_call),
    .sizeof_api_info = sizeof(cushim_api_info),
    .sizeof_param_info = sizeof(cushim_param_info),
    .cuda_version = 13000,
    .api_id_limit = fz_api_id_limit,
    .api_by_id = fz_api_by_id,
    .api_by_name = fz_api_by_name,
    .api_param = fz_api_param,
    .api_select = fz_api_select,
    .result_name = fz_result_name,
    .result_by_name = fz_result_by_name,
    .hooks_add = fz_hooks_add,
    .hooks_remove = fz_hooks_remove,
    .thread_id = fz_thread_id,
    .now_ns = fz_now,
    .tls_create = fz_tls_create,
    .tls_get = fz_tls_get,
    .tls_set = fz_tls_set,
    .log = fz_log,
    .log_enabled = fz_log_enabled,
    .opt_string = fz_opt_string,
    .opt_int = fz_opt_int,
    .opt_bool = fz_opt_bool,
    .opt_bytes = fz_opt_bytes,
    .opt_count = fz_opt_count,
    .opt_string_at = fz_opt_string_at,
    .secure = fz_secure,
    .enum_value_name = fz_enum_value_name,
    .enum_constant = fz_enum_constant,
    .call_real = fz_call_real,
};

/* ------------------------------------------------------------------------ */
/* The program's side of one call                                           */
/* ------------------------------------------------------------------------ */
#define FZ_CANARY 0xa5u

/* What the program passes: every output and input it points at, between canaries. */
typedef struct fz_frame {
    unsigned char before[16];
    unsigned long long dptr;
    int pi;
    char name[32];
    void *ptr;
    const char *str;
    void *handle;
    float ms;
    fz_config config;
    unsigned char after[16];
} fz_frame;

static unsigned char *fz_nomem;   /* a page that cannot be read */

static void fz_frame_init(fz_frame *f)
{
    memset(f, 0, sizeof *f);
    memset(f->before, FZ_CANARY, sizeof f->before);
    memset(f->after, FZ_CANARY, sizeof f->after);
    f->config = (fz_config){.gridDimX = 7, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .grid2 = {2, 3, 4},
                            .pad = {1, 2, 3}, .mtype = 2, .label = "kernel", .hStream = (void *)0x1234};
}

/* The parameter block of 'id' pointing into 'f' (bad: NULL, or memory that cannot be read). */
static void fz_params(uint32_t id, fz_frame *f, unsigned char *p, int bad)
{
    void *out = bad == 1 ? NULL : bad == 2 ? (void *)fz_nomem : NULL;
    const char *s = bad == 2 ? (const char *)fz_nomem : bad == 1 ? NULL : "kernA";
#define OUT(field) (bad ? out : (void *)&f->field)
    switch (id) {
    case FZ_ALLOC: *(fz_p_alloc *)p = (fz_p_alloc){OUT(dptr), 4096}; break;
    case FZ_FREE: *(fz_p_free *)p = (fz_p_free){0xdead0000}; break;
    case FZ_LAUNCHEX: *(fz_p_launchex *)p = (fz_p_launchex){OUT(config), (void *)0x42, NULL, NULL}; break;
    case FZ_ATTR: *(fz_p_attr *)p = (fz_p_attr){OUT(pi), 1, 0}; break;
    case FZ_NAME: *(fz_p_name *)p = (fz_p_name){OUT(name), (int)sizeof f->name, 0}; break;
    case FZ_CUDAMALLOC: *(fz_p_cudamalloc *)p = (fz_p_cudamalloc){OUT(ptr), 64}; break;
    case FZ_ERRSTR: *(fz_p_errstr *)p = (fz_p_errstr){2, OUT(str)}; break;
    case FZ_RTERRSTR: *(fz_p_rterrstr *)p = (fz_p_rterrstr){2}; break;
    case FZ_GETFUNC: *(fz_p_getfunc *)p = (fz_p_getfunc){OUT(handle), (void *)0x77, s}; break;
    case FZ_RTLAUNCH: *(fz_p_rtlaunch *)p = (fz_p_rtlaunch){(void *)0x99, {1, 1, 1}, {32, 1, 1}, NULL, 0, NULL}; break;
    case FZ_ELAPSED: *(fz_p_elapsed *)p = (fz_p_elapsed){OUT(ms), NULL, NULL}; break;
    }
#undef OUT
}

/* The driver's side: succeeds and writes the outputs when every pointer is the one the program passed
   (a hook may have changed them: call.PARAM = v, call:set_raw) and valid; else fails, as a driver
   refuses a pointer it cannot use. */
static int32_t fz_real(uint32_t id, fz_frame *f, unsigned char *p, const unsigned char *orig, int bad)
{
    if (bad || memcmp(p, orig, fz_apis[id].params_size) != 0) {
        /* only the scalars may differ: compare the pointers */
        for (uint32_t i = 0; i < fz_apis[id].nparams; i++) {
            const cushim_param_info *q = &fz_apis[id].params[i];
            if ((q->kind == CUSHIM_KIND_POINTER || q->kind == CUSHIM_KIND_STRING) &&
                (bad || memcmp(p + q->offset, orig + q->offset, 8) != 0))
                return 1;
        }
    }
    switch (id) {
    case FZ_ALLOC: f->dptr = 0x7000000; break;
    case FZ_ATTR: f->pi = 1024; break;
    case FZ_NAME: snprintf(f->name, sizeof f->name, "Fuzz GPU"); break;
    case FZ_CUDAMALLOC: f->ptr = (void *)0x7100000; break;
    case FZ_ERRSTR: f->str = "out of memory"; break;
    case FZ_GETFUNC: f->handle = (void *)0x55; break;
    case FZ_ELAPSED: f->ms = 1.5f; break;
    }
    return 0;
}

static void fz_call(uint32_t id, int bad)
{
    fz_frame f;
    _Alignas(16) unsigned char params[128], orig[128], ret[16];
    cushim_call call;
    uint64_t slot = 0;
    int rc;
    fz_frame_init(&f);
    memset(params, 0, sizeof params);
    fz_params(id, &f, params, bad);
    memcpy(orig, params, sizeof orig);
    memset(ret, 0, sizeof ret);
    call = (cushim_call){.size = sizeof call, .api_id = id, .info = &fz_apis[id], .params = params, .retval = ret,
                         .seq = ++fz.seq, .tid = fz_thread_id()};
    rc = lp_pre(&call, NULL, &slot);
    FUZZ_CHECK(rc == CUSHIM_CONTINUE || rc == CUSHIM_SKIP);
    if (rc == CUSHIM_SKIP)
        call.flags |= CUSHIM_CALL_SKIPPED;
    else if (fz_apis[id].ret_kind == CUSHIM_RET_OTHER)
        *(const char **)ret = "fuzz";
    else
        *(int32_t *)ret = fz_real(id, &f, params, orig, bad);
    lp_post(&call, NULL, &slot);
    for (size_t i = 0; i < sizeof f.before; i++)
        FUZZ_CHECK(f.before[i] == FZ_CANARY && f.after[i] == FZ_CANARY);
}

/* ------------------------------------------------------------------------ */
/* String patterns: the plugin's matcher against liblua's own               */
/* ------------------------------------------------------------------------ */
/* A plain state of the same liblua: 'string' its own library, 'mine' the plugin's find, match, gmatch and
   gsub (lp_pattern.c), charged to fz_pt. An operation that stays within fz_pt's budget is run by both, and
   what they return or raise must be the same; one that does not is not run by liblua's (it might not end). */
static lua_State *fz_ref;
static lp_thread fz_pt;

static void *fz_ref_alloc(void *ud, void *p, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, nsize);
}

static int fz_load(lua_State *L, const char *code)
{
    return luaL_loadbufferx(L, code, strlen(code), "=fuzz", "t");
}

static void fz_ref_init(void)
{
    lua_State *L = fz_ref = lua_newstate(fz_ref_alloc, NULL);
    FUZZ_CHECK(L != NULL);
    *(lp_thread **)lua_getextraspace(L) = &fz_pt;
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    lua_settop(L, 0);
    lua_newtable(L);
    lp_pattern_open(L);
    lua_setglobal(L, "mine");
    /* gsub's replacements besides the string: a table and a function of the captures */
    FUZZ_CHECK(fz_load(L, "return {a = 'A', b = false, c = 1.5, d = {}, ['1'] = 'one', [2] = 'two'}, "
                                  "function(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) "
                                  "end if t[1] == 'x' then return false end if t[1] == 'y' then return {} end "
                                  "return t.n .. ':' .. table.concat(t, '|') end") == LUA_OK);
    lua_call(L, 0, 2);
    lua_setglobal(L, "fz_rfun");
    lua_setglobal(L, "fz_rtab");
}

/* Calls lib.name(args at 1..n) (gmatch: every value of the iteration, at most 64 rounds), leaving
   ok, the values (or the error) on the stack above 'base'. 1 when it stayed within the budget. */
static int fz_ref_run(lua_State *L, const char *lib, const char *name, int n)
{
    static const char drive[] =
        "local f, gm, s, p, a, b = ... "
        "if not gm then return f(s, p, a, b) end "
        "local t, k = {}, 0 for c1, c2, c3 in f(s, p, a) do k = k + 1 t[#t + 1] = tostring(c1) .. ',' .. "
        "tostring(c2) .. ',' .. tostring(c3) if k == 64 then break end end return k, table.concat(t, ';')";
    int top = lua_gettop(L);
    fz_pt.used = 0;
    fz_pt.limit = 200000;
    fz_pt.spent = 0;
    FUZZ_CHECK(fz_load(L, drive) == LUA_OK);
    lua_getglobal(L, lib);
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    lua_pushboolean(L, !strcmp(name, "gmatch"));
    for (int i = 1; i <= n; i++)
        lua_pushvalue(L, i);
    lua_pushboolean(L, lua_pcall(L, n + 2, LUA_MULTRET, 0) == LUA_OK);
    lua_insert(L, top + 1);
    if (fz_pt.spent) {   /* the budget's hook is on this state now (lp_budget_raise): off again */
        lua_sethook(L, NULL, 0, 0);
        fz_pt.spent = 0;
        return 0;
    }
    return 1;
}

/* The plugin's and liblua's string.NAME on the arguments at 1..n: the same values or the same error. */
static void fz_compare(const char *name, int n)
{
    lua_State *L = fz_ref;
    int base = lua_gettop(L), mid, na, nb;
    if (!fz_ref_run(L, "mine", name, n)) {
        lua_settop(L, base);
        return;
    }
    mid = lua_gettop(L);
    FUZZ_CHECK(fz_ref_run(L, "string", name, n));
    na = mid - base;
    nb = lua_gettop(L) - mid;
    int same = na == nb;
    for (int i = 1; same && i <= na; i++) {
        int a = base + i, b = mid + i;
        same = lua_type(L, a) == lua_type(L, b) &&
               (lua_rawequal(L, a, b) || (lua_type(L, a) == LUA_TNUMBER && lua_tonumberx(L, a, NULL) !=
                                          lua_tonumberx(L, a, NULL)));   /* NaN */
    }
    if (!same) {
        fprintf(stderr, "string.%s differs on:", name);
        for (int i = 1; i <= n; i++)
            fprintf(stderr, " [%s]", luaL_tolstring(L, i, NULL)), lua_pop(L, 1);
        fprintf(stderr, "\n  plugin's:");
        for (int i = base + 1; i <= mid; i++)
            fprintf(stderr, " [%s]", luaL_tolstring(L, i, NULL)), lua_pop(L, 1);
        fprintf(stderr, "\n  liblua's:");
        for (int i = mid + 1; i <= lua_gettop(L); i++)
            fprintf(stderr, " [%s]", luaL_tolstring(L, i, NULL)), lua_pop(L, 1);
        fprintf(stderr, "\n");
        FUZZ_CHECK(!"the plugin's string patterns differ from Lua's");
    }
    lua_settop(L, base);
}

/* Subject s, pattern p and replacement r through find, match, gmatch and gsub, with some positions. */
static void fz_patterns(const char *s, size_t ls, const char *p, size_t lp, const char *r, size_t lr, int init)
{
    lua_State *L = fz_ref;
    lua_settop(L, 0);
    lua_pushlstring(L, s, ls);
    lua_pushlstring(L, p, lp);
    lua_pushinteger(L, init);
    fz_compare("find", 3);
    fz_compare("match", 3);
    fz_compare("gmatch", 3);
    lua_pushboolean(L, 1);   /* find, plain */
    fz_compare("find", 4);
    lua_settop(L, 2);
    fz_compare("find", 2);
    fz_compare("gmatch", 2);
    lua_pushlstring(L, r, lr);
    fz_compare("gsub", 3);
    lua_pushinteger(L, init);   /* at most 'init' replacements */
    fz_compare("gsub", 4);
    lua_settop(L, 2);
    lua_getglobal(L, "fz_rtab");
    fz_compare("gsub", 3);
    lua_settop(L, 2);
    lua_getglobal(L, "fz_rfun");
    fz_compare("gsub", 3);
    lua_settop(L, 0);
}

/* Cases the fuzzer may take long to reach: every kind of item, capture and error. */
static void fz_pattern_cases(void)
{
    static const char *const c[][3] = {
        {"hello world from Lua", "(%w+) (%w+)", "%2 %1"}, {"hello", "l+", "L"}, {"hello", "l*", "<%0>"},
        {"hello", "l-o", "x"}, {"hello", "l?l", "x"}, {"  trim  ", "^%s*(.-)%s*$", "%1"},
        {"f(a(b)c)d", "%b()", "[%0]"}, {"THE (quick) fox", "%f[%a]%a+", "w"}, {"abc", "()b()", "%1-%2"},
        {"abcabc", "(abc)%1", "d"}, {"x = 1, y = 2", "(%w+)%s*=%s*(%w+)", "%2=%1"}, {"abc", "", "-"},
        {"abc", "^", "-"}, {"abc", "$", "-"}, {"a.b.c", ".", "%%"}, {"a.b.c", "%.", "%"}, {"[x]", "[]x[]+", "y"},
        {"a-b", "[a-]+", "z"}, {"a^b", "[%^b]+", "z"}, {"a]b", "[^]]", "z"}, {"aaa", "a-$", "b"},
        {"key=val", "(%w+)=(%w+)", "%3"}, {"abc", "(", "x"}, {"abc", "%", "x"}, {"abc", "[a", "x"},
        {"abc", "(()", "x"}, {"abc", "%b", "x"}, {"abc", "%fx", "x"}, {"abc", "a)", "x"}, {"abc", "%1", "x"},
        {"abc", "(a)%2", "x"}, {"abc", "(a%1)", "x"}, {"x y", "%S+", "%9"}, {"xyz", "(x)(y)(z)", "%4"},
        {"\0a\0", "%z", "0"}, {"caf\xc3\xa9", "[\x80-\xff]+", "?"}, {"aaaa", "a-a-a-b", "x"},
        {"end$", "d$$", "x"}, {"a.b", "a.b", "x"}, {"x^y", "x^y", "z"}, {"12ab", "%d+%a%A", "x"},
        {"((()))", "%b()%b()", "x"}, {"ab", "%bab", "x"}, {"aa", "%baa", "x"}, {"abcd", "[%a-z]+", "x"},
        {"a1", "[%w_]", "x"}, {"x", "[%", "x"}, {"x", "[", "x"}, {"x", "[^", "x"}, {"xy", "x%", "x"},
        {"hello", "(h)(e)(l)(l)(o)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)"
                  "(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)(.?)", "x"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (int init = -3; init <= 4; init++)
            fz_patterns(c[i][0], strlen(c[i][0]), c[i][1], strlen(c[i][1]), c[i][2], strlen(c[i][2]), init);
}

/* The input as a subject, a pattern and a replacement: its first three lines. */
static void fz_patterns_of(const uint8_t *data, size_t size)
{
    const char *f[3] = {"", "", ""};
    size_t n[3] = {0, 0, 0};
    const char *at = (const char *)data, *end = at + size;
    for (int k = 0; k < 3 && at <= end; k++) {
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        f[k] = at;
        n[k] = (size_t)((nl != NULL ? nl : end) - at);
        at += n[k] + 1;
    }
    fz_patterns(f[0], n[0], f[1], n[1], f[2], n[2], size > 0 ? (int)(data[0] % 7) - 3 : 1);
}

/* ------------------------------------------------------------------------ */
/* One input                                                                */
/* ------------------------------------------------------------------------ */
/* The policy file and the report file: memory files, reached by their /proc/self/fd paths (regular files to
   the plugin), so that nothing is left behind however the fuzzer ends. */
static int fz_script_fd, fz_report_fd;

static int fz_memfile(const char *name, char *path, size_t n)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0);
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

static int fz_write(int fd, const uint8_t *data, size_t size)
{
    if (ftruncate(fd, 0) != 0)
        return -1;
    return size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size ? 0 : -1;
}

static void fz_init(void)
{
    const cushim_plugin_def *def = cushim_plugin_entry();
    FUZZ_CHECK(def != NULL);
    fz_script_fd = fz_memfile("fuzz_lua.lua", fz.script, sizeof fz.script);
    fz_report_fd = fz_memfile("fuzz_lua.report", fz.report, sizeof fz.report);
    fz_nomem = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FUZZ_CHECK(fz_nomem != MAP_FAILED);
    FUZZ_CHECK(def->init(&fz_host, fz_self) == 0);
    fz_ref_init();
    fz_pattern_cases();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    lp_thread *t;
    if (!ready) {
        fz_init();
        ready = 1;
    }
    if (size > (1u << 16))
        return 0;
    FUZZ_CHECK(fz_write(fz_script_fd, data, size) == 0);
    FUZZ_CHECK(ftruncate(fz_report_fd, 0) == 0);
    lp_reload();
    for (int bad = 0; bad < 3; bad++)
        for (uint32_t id = 0; id < FZ_NAPI; id++)
            fz_call(id, bad);
    t = fz.tls;
    if (t != NULL && t->L != NULL && !t->broken)
        lp_state_run_exit(t);
    fz_patterns_of(data, size);
    return 0;
}

#ifdef FUZZ_LUA_MAIN
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        static uint8_t buf[1 << 16];
        FILE *f = fopen(argv[i], "rb");
        size_t n;
        FUZZ_CHECK(f != NULL);
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        printf("%s: ok\n", argv[i]);
    }
    return 0;
}
#endif
