/*
 * fake_module.c - modules, libraries and kernel launches of the fake driver.
 *
 * Any non-NULL image loads; a module has every function one asks for, except
 * names starting with "missing", which are CUDA_ERROR_NOT_FOUND. A function's
 * parameters (cuFuncGetParamInfo, cuKernelGetParamInfo) are spelled after "__"
 * in its name, one letter each: p a pointer (8 bytes), l a 64-bit integer, d a
 * double, i a 32-bit integer, f a float, at their natural alignment ("scale__pfi":
 * a pointer, a float, an int); a name without "__" has no layout to tell
 * (CUDA_ERROR_NOT_SUPPORTED, as before). Launches are
 * checked (handle, block size, stream) and recorded, never run: tests read the
 * count and the last kernel's name through fake_cuda_launch_count() and
 * fake_cuda_last_launch_name(). Two exceptions (fake_graph.c): a kernel named
 * "fk_add_i32__pii" (p, n, v) adds v to the n ints at p, so that tests see launches
 * take effect in order; and a stream being captured records the launch into its
 * graph instead (fake_graph.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_internal.h"

static atomic_uint_fast64_t fk_launches;
static char fk_last_launch[128];   /* under fk_lock */

static struct CUmod_st *fk_module_new(void)
{
    struct CUmod_st *m = fk_obj_alloc(sizeof *m);
    if (m != NULL)
        m->magic = FK_MAGIC_MODULE;
    return m;
}

/* A file's bytes and a NUL (at most 64 KiB: the fake's images are small); NULL when it cannot be read. */
static char *fk_read_file(const char *path, CUresult *r)
{
    char *b = calloc(1, 65536);
    FILE *f = path != NULL ? fopen(path, "rb") : NULL;
    *r = path == NULL ? CUDA_ERROR_INVALID_VALUE : f == NULL ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_SUCCESS;
    if (b == NULL || f == NULL) {
        if (f != NULL)
            fclose(f);
        free(b);
        *r = *r == CUDA_SUCCESS ? CUDA_ERROR_OUT_OF_MEMORY : *r;
        return NULL;
    }
    if (fread(b, 1, 65535, f) == 0 && ferror(f))
        *r = CUDA_ERROR_FILE_NOT_FOUND;
    fclose(f);
    return b;
}

/* cuda.h: a module from a file - the same as cuModuleLoadData of its contents */
CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    FAKE_ENTER(cuModuleLoad);
    FK_REQUIRE_INIT();
    CUresult r;
    char *image = fk_read_file(fname, &r);
    if (image == NULL || r != CUDA_SUCCESS) {
        free(image);
        return r;
    }
    if (module == NULL || !fk_ctx_valid(fk_current_ctx())) {
        free(image);
        return module == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    }
    struct CUmod_st *m = fk_module_new();
    if (m != NULL)
        m->ptx = fk_ptx_copy(image);
    free(image);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *module = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    FAKE_ENTER(cuModuleLoadData);
    FK_REQUIRE_INIT();
    if (module == NULL || image == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_ctx_valid(fk_current_ctx()))
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUmod_st *m = fk_module_new();
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->ptx = fk_ptx_copy(image);
    *module = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
    FAKE_ENTER(cuModuleLoadDataEx);
    FK_REQUIRE_INIT();
    if (module == NULL || image == NULL || (numOptions > 0 && (options == NULL || optionValues == NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_ctx_valid(fk_current_ctx()))
        return CUDA_ERROR_INVALID_CONTEXT;
    int failed = fk_jit_fails(image);   /* JIT options (fake_jit.c): logs written, a failure too */
    CUresult r = fk_jit_options("cuModuleLoadDataEx", numOptions, options, optionValues, failed);
    if (r != CUDA_SUCCESS || failed)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_PTX;
    struct CUmod_st *m = fk_module_new();
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->ptx = fk_ptx_copy(image);
    *module = m;
    return CUDA_SUCCESS;
}

static CUresult fk_module_get_function(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    FK_REQUIRE_INIT();
    if (hfunc == NULL || name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (hmod == NULL || hmod->magic != FK_MAGIC_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    if (strncmp(name, "missing", 7) == 0)
        return CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&fk_lock);
    struct CUfunc_st *f;
    for (f = hmod->funcs; f != NULL; f = f->next)
        if (strcmp(f->name, name) == 0)
            break;
    if (f == NULL && (f = fk_obj_alloc(sizeof *f)) != NULL) {
        f->magic = FK_MAGIC_FUNC;
        f->module = hmod;
        strncpy(f->name, name, sizeof f->name - 1);
        f->next = hmod->funcs;
        hmod->funcs = f;
    }
    pthread_mutex_unlock(&fk_lock);
    if (f == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *hfunc = f;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    FAKE_ENTER(cuModuleGetFunction);
    return fk_module_get_function(hfunc, hmod, name);
}

static CUresult fk_module_unload(CUmodule hmod)
{
    FK_REQUIRE_INIT();
    if (hmod == NULL || hmod->magic != FK_MAGIC_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&fk_lock);
    hmod->magic = FK_MAGIC_DEAD;
    for (struct CUfunc_st *f = hmod->funcs; f != NULL; f = f->next)
        f->magic = FK_MAGIC_DEAD;   /* kept: a stale handle is caught */
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
    FAKE_ENTER(cuModuleUnload);
    return fk_module_unload(hmod);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    FAKE_ENTER(cuFuncGetName);
    FK_REQUIRE_INIT();
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (hfunc == NULL || hfunc->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = hfunc->name;
    return CUDA_SUCCESS;
}

/* ---- libraries and kernels (context-independent) ------------------------ */

static CUresult fk_library_load(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                void **libraryOptionValues, unsigned int numLibraryOptions);

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    FAKE_ENTER(cuLibraryLoadData);
    FK_REQUIRE_INIT();
    return fk_library_load(library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                           libraryOptionValues, numLibraryOptions);
}

static CUresult fk_library_load(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                void **libraryOptionValues, unsigned int numLibraryOptions)
{
    if (library == NULL || code == NULL ||
        (numLibraryOptions != 0 && (libraryOptions == NULL || libraryOptionValues == NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned k = 0; k < numLibraryOptions; k++)
        if ((unsigned)libraryOptions[k] >= (unsigned)CU_LIBRARY_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    int failed = fk_jit_fails(code);   /* JIT options (fake_jit.c) */
    CUresult r = fk_jit_options("cuLibraryLoadData", numJitOptions, jitOptions, jitOptionsValues, failed);
    if (r != CUDA_SUCCESS || failed)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_PTX;
    struct CUlib_st *l = fk_obj_alloc(sizeof *l);
    struct CUmod_st *m = fk_module_new();
    if (l == NULL || m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = FK_MAGIC_LIBRARY;
    l->module = m;
    *library = l;
    return CUDA_SUCCESS;
}

/* cuda.h: a library from a file; CU_LIBRARY_BINARY_IS_PRESERVED "with cuLibraryLoadFromFile() is invalid" */
CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
{
    FAKE_ENTER(cuLibraryLoadFromFile);
    FK_REQUIRE_INIT();
    for (unsigned k = 0; libraryOptions != NULL && k < numLibraryOptions; k++)
        if (libraryOptions[k] == CU_LIBRARY_BINARY_IS_PRESERVED)
            return CUDA_ERROR_INVALID_VALUE;
    CUresult r;
    char *code = fk_read_file(fileName, &r);
    if (code == NULL || r != CUDA_SUCCESS) {
        free(code);
        return r;
    }
    r = fk_library_load(library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                        libraryOptionValues, numLibraryOptions);
    free(code);
    return r;
}

static int fk_library_valid(CUlibrary l)
{
    return l != NULL && l->magic == FK_MAGIC_LIBRARY;
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    FAKE_ENTER(cuLibraryGetModule);
    FK_REQUIRE_INIT();
    if (pMod == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_library_valid(library))
        return CUDA_ERROR_INVALID_HANDLE;
    *pMod = library->module;
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    FAKE_ENTER(cuLibraryGetKernel);
    FK_REQUIRE_INIT();
    if (pKernel == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_library_valid(library))
        return CUDA_ERROR_INVALID_HANDLE;
    CUfunction f;
    CUresult r = fk_module_get_function(&f, library->module, name);
    if (r != CUDA_SUCCESS)
        return r;
    struct CUkern_st *k = fk_obj_alloc(sizeof *k);
    if (k == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    k->magic = FK_MAGIC_KERNEL;
    k->func = f;
    *pKernel = k;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    FAKE_ENTER(cuKernelGetFunction);
    FK_REQUIRE_INIT();
    if (pFunc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (kernel == NULL || kernel->magic != FK_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!fk_ctx_valid(fk_current_ctx()))
        return CUDA_ERROR_INVALID_CONTEXT;
    *pFunc = kernel->func;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    FAKE_ENTER(cuKernelGetName);
    FK_REQUIRE_INIT();
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (hfunc == NULL || hfunc->magic != FK_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = hfunc->func->name;
    return CUDA_SUCCESS;
}

CUresult cuLibraryUnload(CUlibrary library)
{
    FAKE_ENTER(cuLibraryUnload);
    FK_REQUIRE_INIT();
    if (!fk_library_valid(library))
        return CUDA_ERROR_INVALID_HANDLE;
    library->magic = FK_MAGIC_DEAD;
    return fk_module_unload(library->module);
}

/* A parameter of a name's "__" suffix: 0, or CUDA_ERROR_INVALID_VALUE past the last (as the driver answers). */
CUresult fk_param_info(const char *name, size_t index, size_t *offset, size_t *size)
{
    const char *spec = strstr(name, "__");
    size_t off = 0, k = 0;
    if (spec == NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (offset == NULL && size == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (const char *c = spec + 2; *c != '\0'; c++, k++) {
        size_t sz = *c == 'p' || *c == 'l' || *c == 'd' ? 8 : *c == 'i' || *c == 'f' ? 4 : 0;
        if (sz == 0)
            return CUDA_ERROR_NOT_SUPPORTED;
        off = (off + sz - 1) / sz * sz;
        if (k == index) {
            if (offset != NULL)
                *offset = off;
            if (size != NULL)
                *size = sz;
            return CUDA_SUCCESS;
        }
        off += sz;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

/* cuFuncGetParamInfo: fake_paraminfo.c (from the module's PTX, else from the name's '__' suffix here). */

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    FAKE_ENTER(cuKernelGetParamInfo);
    FK_REQUIRE_INIT();
    if (kernel == NULL || kernel->magic != FK_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    return fk_param_info(kernel->func->name, paramIndex, paramOffset, paramSize);
}

/* ---- launches ---------------------------------------------------------- */

static CUresult fk_launch_checked(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                  unsigned int by, unsigned int bz, CUstream s, void **params, void **extra)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    /* cuLaunchKernel accepts a CUkernel where a CUfunction is expected. */
    if (f != NULL && ((struct CUkern_st *)(void *)f)->magic == FK_MAGIC_KERNEL)
        f = ((struct CUkern_st *)(void *)f)->func;
    if (f == NULL || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
        (unsigned long long)bx * by * bz > 1024 || (params != NULL && extra != NULL))
        return CUDA_ERROR_INVALID_VALUE;
    fk_work w;
    if ((r = fk_work_kernel(&w, f, (const unsigned[3]){ gx, gy, gz }, (const unsigned[3]){ bx, by, bz },
                            fk_work_wants_args(s, f) ? params : NULL)) !=
        CUDA_SUCCESS)
        return r;
    if (fk_capture(s, &w, &r))   /* a stream being captured: recorded into its graph (fake_graph.c) */
        return r;
    fk_work_run(&w, s, "stream");
    return CUDA_SUCCESS;
}

/* A launch's failure also invalidates a capture of its stream, as the driver's does. */
static CUresult fk_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                          unsigned int by, unsigned int bz, CUstream s, void **params, void **extra)
{
    CUresult r = fk_launch_checked(f, gx, gy, gz, bx, by, bz, s, params, extra);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED && fk_stream_check(s) == CUDA_SUCCESS)
        fk_capture_fail(s);
    return r;
}

void fk_kernel_record(const fk_work *w, CUstream s)
{
    pthread_mutex_lock(&fk_lock);
    memcpy(fk_last_launch, w->f->name, sizeof fk_last_launch);
    pthread_mutex_unlock(&fk_lock);
    atomic_fetch_add(&fk_launches, 1);
    fk_kernel_enqueue(s);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    FAKE_ENTER(cuLaunchKernel);
    (void)sharedMemBytes;
    return fk_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream, kernelParams, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    FAKE_ENTER(cuLaunchKernel_ptsz);
    (void)sharedMemBytes;
    return fk_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream, kernelParams, extra);
}

/* A launch configuration's attributes, as the driver checks them: a cluster's dimensions divide the grid's
   (CUDA_ERROR_INVALID_CLUSTER_SIZE otherwise), cooperative 0 or 1; the ids the fake does not model: invalid. */
CUresult fk_launch_attrs(const CUlaunchConfig *c)
{
    if (c->numAttrs != 0 && c->attrs == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned int k = 0; k < c->numAttrs; k++) {
        const CUlaunchAttribute *a = &c->attrs[k];
        switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
            break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            if (a->value.cooperative != 0 && a->value.cooperative != 1)
                return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
            unsigned x = a->value.clusterDim.x, y = a->value.clusterDim.y, z = a->value.clusterDim.z;
            if (x == 0 || y == 0 || z == 0 || x * y * z > 8 || c->gridDimX % x || c->gridDimY % y || c->gridDimZ % z)
                return CUDA_ERROR_INVALID_CLUSTER_SIZE;
            break;
        }
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

static CUresult fk_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    if (c == NULL)
        return atomic_load(&fk_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = fk_launch_attrs(c);
    if (r != CUDA_SUCCESS)
        return r;
    return fk_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                     c->hStream, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    FAKE_ENTER(cuLaunchKernelEx);
    return fk_launch_ex(config, f, kernelParams, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    FAKE_ENTER(cuLaunchKernelEx_ptsz);
    return fk_launch_ex(config, f, kernelParams, extra);
}

/* A cooperative launch: every block resident at once, 132 multiprocessors of 2048 threads
   (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE past that), then run as any launch. */
static CUresult fk_launch_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, CUstream s, void **params)
{
    uint64_t threads = (uint64_t)bx * by * bz, blocks = (uint64_t)gx * gy * gz;
    if (threads != 0 && threads <= 1024 && blocks > 132 * (2048 / threads))
        return atomic_load(&fk_initialized) ? CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE : CUDA_ERROR_NOT_INITIALIZED;
    return fk_launch(f, gx, gy, gz, bx, by, bz, s, params, NULL);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                   unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
    FAKE_ENTER(cuLaunchCooperativeKernel);
    (void)sharedMemBytes;
    return fk_launch_coop(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream, kernelParams);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    FAKE_ENTER(cuLaunchCooperativeKernel_ptsz);
    (void)sharedMemBytes;
    return fk_launch_coop(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream, kernelParams);
}

FK_EXPORT uint64_t fake_cuda_launch_count(void)
{
    return atomic_load(&fk_launches);
}

FK_EXPORT const char *fake_cuda_last_launch_name(void)
{
    return fk_last_launch;
}

/* ---- linking: cuLinkCreate, cuLinkAddData, cuLinkComplete, cuLinkDestroy ----------------------------------------
   The fake "links" by concatenating the PTX texts it was given (each without its NUL), then a NUL: an image its own
   cuModuleLoadData takes. The image is the link state's until cuLinkDestroy, as the driver's cubin is. */
struct CUlinkState_st {
    char *image;
    size_t len;
    /* cuLinkCreate's options, kept for the link's life as the driver keeps them (fake_jit.c writes the logs) */
    unsigned n;
    CUjit_option opts[64];
    void **vals;
    uint32_t info_size, error_size;
    char info[1024];
};

static void fk_link_info(CUlinkState st, const char *more)
{
    size_t at = strlen(st->info);
    snprintf(st->info + at, sizeof st->info - at, "%s", more);
    fk_jit_link_log(st->n, st->opts, st->vals, 0, st->info, st->info_size);
}

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut)
{
    FAKE_ENTER(cuLinkCreate_v2);
    FK_REQUIRE_INIT();
    if (stateOut == NULL || (numOptions != 0 && (options == NULL || optionValues == NULL)) || numOptions > 64)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned k = 0; k < numOptions; k++)
        if ((unsigned)options[k] >= (unsigned)CU_JIT_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    CUlinkState st = calloc(1, sizeof *st);
    if (st == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    st->n = numOptions;
    memcpy(st->opts, options, numOptions * sizeof *options);
    st->vals = optionValues;
    st->info_size = fk_jit_size(numOptions, options, optionValues, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
    st->error_size = fk_jit_size(numOptions, options, optionValues, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
    snprintf(st->info, sizeof st->info, "fake-link: %u options", numOptions);
    fk_link_info(st, "");
    fk_jit_link_log(st->n, st->opts, st->vals, 1, "", st->error_size);
    *stateOut = st;
    return CUDA_SUCCESS;
}

static CUresult fk_link_add(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                            unsigned int numOptions, CUjit_option *options, void **optionValues);

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                          unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    FAKE_ENTER(cuLinkAddData_v2);
    FK_REQUIRE_INIT();
    return fk_link_add(state, type, data, size, name, numOptions, options, optionValues);
}

/* cuda.h: an input takes compiler options only, none of the logs, the wall time or the target */
static CUresult fk_link_add(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                            unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    (void)name;
    if (state == NULL || data == NULL || size == 0 || type != CU_JIT_INPUT_PTX)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned k = 0; k < numOptions && options != NULL; k++)
        if (options[k] == CU_JIT_WALL_TIME || options[k] == CU_JIT_INFO_LOG_BUFFER ||
            options[k] == CU_JIT_ERROR_LOG_BUFFER || options[k] == CU_JIT_TARGET_FROM_CUCONTEXT ||
            options[k] == CU_JIT_TARGET)
            return CUDA_ERROR_INVALID_VALUE;
    int failed = fk_jit_fails(data);
    CUresult r = fk_jit_options("cuLinkAddData", numOptions, options, optionValues, failed);
    char more[160];
    snprintf(more, sizeof more, failed ? "fake-link: %.64s: syntax error" : " +%.64s", name ? name : "?");
    if (r == CUDA_SUCCESS && failed)
        fk_jit_link_log(state->n, state->opts, state->vals, 1, more, state->error_size);
    else if (r == CUDA_SUCCESS)
        fk_link_info(state, more);
    if (r != CUDA_SUCCESS || failed)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_PTX;
    size_t n = strnlen(data, size);
    char *b = realloc(state->image, state->len + n + 1);
    if (b == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(b + state->len, data, n);
    state->len += n;
    b[state->len] = '\0';
    state->image = b;
    return CUDA_SUCCESS;
}

/* The file's bytes as cuLinkAddData's (cuda.h: "equivalent to invoking cuLinkAddData on the contents of the file") */
CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                          CUjit_option *options, void **optionValues)
{
    FAKE_ENTER(cuLinkAddFile_v2);
    FK_REQUIRE_INIT();
    char buf[65536];
    FILE *f = path != NULL ? fopen(path, "rb") : NULL;
    if (f == NULL)
        return path == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_FILE_NOT_FOUND;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return fk_link_add(state, type, buf, n + 1, path, numOptions, options, optionValues);
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    FAKE_ENTER(cuLinkComplete);
    FK_REQUIRE_INIT();
    if (state == NULL || cubinOut == NULL || sizeOut == NULL || state->image == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *cubinOut = state->image;
    *sizeOut = state->len + 1;
    char more[64];
    snprintf(more, sizeof more, " = %zu bytes", state->len + 1);
    fk_link_info(state, more);
    fk_jit_wall(state->n, state->opts, state->vals, 0.5f);
    return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state)
{
    FAKE_ENTER(cuLinkDestroy);
    if (state == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    free(state->image);
    free(state);
    return CUDA_SUCCESS;
}
