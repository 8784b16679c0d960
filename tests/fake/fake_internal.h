/*
 * fake_internal.h - state shared by the translation units of the fake driver.
 *
 * One mutex guards everything (the fake is a test double, not a fast path).
 * Every exported entry point starts with FAKE_ENTER(name), which counts the
 * call under its exported name; per-thread variants (_ptds/_ptsz) count under
 * their own names and share the implementation of the legacy export.
 * Internal helpers are 'fk_' and hidden; entry points never call other entry
 * points, so a preloaded shim never sees calls the application did not make.
 */
#ifndef FAKE_INTERNAL_H
#define FAKE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cushim_cuda_headers.h"
#include "cushim_api_ids.h"
#include "fake_cuda.h"

#define FK_HIDDEN __attribute__((visibility("hidden")))
#define FK_EXPORT __attribute__((visibility("default")))

#define FK_MAX_DEVICES 8

/* Magic words that identify live fake objects behind opaque handles. */
#define FK_MAGIC_CTX 0x43545846u     /* "FXTC" */
#define FK_MAGIC_STREAM 0x4d525453u
#define FK_MAGIC_EVENT 0x544e5645u
#define FK_MAGIC_MODULE 0x444f4d46u
#define FK_MAGIC_FUNC 0x434e5546u
#define FK_MAGIC_LIBRARY 0x4242494cu
#define FK_MAGIC_KERNEL 0x4e52454bu
#define FK_MAGIC_DEAD 0xdeadbeefu

struct CUctx_st {
    uint32_t magic;
    int device;
    int primary;           /* the device's primary context            */
    int refcount;          /* retains of a primary context            */
    unsigned int flags;
};

struct CUstream_st {
    uint32_t magic;
    CUcontext ctx;
    unsigned int flags;
    int priority;
    double busy_until_ms;  /* simulated kernels (FAKE_CUDA_KERNEL_US) run until then */
};

struct CUevent_st {
    uint32_t magic;
    unsigned int flags;
    int recorded;
    double ms;             /* time of the last record, in milliseconds; with simulated
                              kernel durations, when the work before it is done */
};

struct CUfunc_st {
    uint32_t magic;
    struct CUfunc_st *next;
    char name[128];
    struct CUmod_st *module;   /* cuFuncGetParamInfo reads its PTX (fake_paraminfo.c) */
    int max_dynamic_shared;    /* cuFuncSetAttribute's (fake_funcattr.c) */
};

struct CUmod_st {
    uint32_t magic;
    struct CUfunc_st *funcs;
    char *ptx;                 /* a copy of a PTX image, else NULL (fake_paraminfo.c) */
};

/* Kernels and libraries are the context-independent twins of the above. */
struct CUlib_st {
    uint32_t magic;
    struct CUmod_st *module;
};

struct CUkern_st {
    uint32_t magic;
    struct CUfunc_st *func;
};

FK_HIDDEN extern pthread_mutex_t fk_lock;
FK_HIDDEN extern atomic_int fk_initialized;

FK_HIDDEN void fk_count(uint32_t id);
FK_HIDDEN /* a parameter's offset and size from a function name's '__' suffix (fake_module.c) */
CUresult fk_param_info(const char *name, size_t index, size_t *offset, size_t *size);
char *fk_ptx_copy(const void *image);   /* fake_paraminfo.c */
/* JIT options (fake_jit.c): checked, the logs, sizes, wall time and threads per block written; 'failed': the
   image failed to compile (the error log says so). CUDA_SUCCESS or CUDA_ERROR_INVALID_VALUE. */
FK_HIDDEN CUresult fk_jit_options(const char *api, unsigned n, CUjit_option *opts, void **vals, int failed);
FK_HIDDEN int fk_jit_fails(const void *image);   /* an image whose text starts with ".error" */
/* A link's logs (fake_jit.c): the value of a size option; 'text' into the info (error: the error) log of 'size' bytes;
   the wall time. */
FK_HIDDEN uint32_t fk_jit_size(unsigned n, const CUjit_option *opts, void *const *vals, CUjit_option size_opt);
FK_HIDDEN void fk_jit_link_log(unsigned n, const CUjit_option *opts, void **vals, int error, const char *text,
                               uint32_t size);
FK_HIDDEN void fk_jit_wall(unsigned n, const CUjit_option *opts, void **vals, float ms);
#define FAKE_ENTER(name) fk_count(CUSHIM_API_##name)
#define FK_REQUIRE_INIT() do { if (!atomic_load(&fk_initialized)) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

FK_HIDDEN int fk_device_count(void);
FK_HIDDEN size_t fk_device_total_mem(void);
/* Current context of the calling thread, NULL if none. */
FK_HIDDEN CUcontext fk_current_ctx(void);
FK_HIDDEN int fk_ctx_valid(CUcontext ctx);
FK_HIDDEN int fk_host_vmm_attr(int attrib);   /* fake_vmm.c: the host VMM attributes (FAKE_CUDA_HOST_VMM), else -1 */
FK_HIDDEN CUresult fk_launch_attrs(const CUlaunchConfig *c);   /* fake_module.c: a configuration's attributes */
/* CUDA_SUCCESS if 's' is NULL, a special stream or a live stream. */
FK_HIDDEN CUresult fk_stream_check(CUstream s);
/* Wait until the host functions queued on 's' (NULL: all) have run. */
FK_HIDDEN void fk_hostfn_drain(CUstream s);
FK_HIDDEN double fk_now_ms(void);
/* Zeroed memory for a fake object (context, stream, event, module, ...). Never freed: a destroyed
   object keeps a dead magic word so later use is reported, and every object stays reachable from a
   global list, so LeakSanitizer has nothing to say about them. */
FK_HIDDEN void *fk_obj_alloc(size_t size);

/* Simulated kernel durations (fake_stream.c): with FAKE_CUDA_KERNEL_US=N each
   launch occupies its stream for N microseconds after the work before it; events
   recorded after it complete then, and synchronisation waits for it. Unset: work
   completes at once, as before. */
FK_HIDDEN void fk_kernel_enqueue(CUstream s);
/* When the work queued on 's' so far is done (ms of fk_now_ms), 0 if idle. */
FK_HIDDEN double fk_stream_done_ms(CUstream s);
FK_HIDDEN double fk_all_done_ms(void);      /* the same over every stream */
FK_HIDDEN void fk_wait_until_ms(double t);

/* Memory (fake_mem.c). */
FK_HIDDEN void fk_mem_forget_all(void);   /* after fork in the child: nothing */
FK_HIDDEN CUresult fk_mem_alloc_on(void **out, size_t size, int dev);   /* dev -1: current context's */
FK_HIDDEN CUresult fk_mem_free_dev(uintptr_t p);
FK_HIDDEN CUresult fk_mem_track_mapped(uintptr_t p, size_t n, int dev);   /* fake_vmm.c: a mapping made accessible */
FK_HIDDEN void fk_mem_untrack_mapped(uintptr_t p);
/* IPC across processes (FAKE_CUDA_IPC=1: device memory is a memfd each, fake_mem.c): the memfd, offset and size of
   the allocation holding 'p' (0), or -1 (heap memory: not shareable); an opened mapping tracked as device memory of
   the current context's device (CUDA_ERROR_INVALID_CONTEXT without one). */
FK_HIDDEN int fk_mem_ipc_export(uintptr_t p, int *fd, uint64_t *off, uint64_t *size);
FK_HIDDEN CUresult fk_mem_ipc_track(uintptr_t p, size_t n);

/* Stream-ordered work (fake_graph.c): what a copy, a memset or a launch does, kept so that a stream being
   captured records it into its graph and a graph launch runs it later. Kernel arguments are copied (their
   layout from the function's name, fk_param_info), as the driver copies them at capture. */
#define FK_WORK_KERNEL 1
#define FK_WORK_COPY 2
#define FK_WORK_SET 3
#define FK_WORK_MAX_ARGS 16
#define FK_WORK_ARG_BYTES 256
typedef struct fk_work {
    int kind;
    CUfunction f;
    unsigned grid[3], block[3];
    uint32_t nargs;                    /* KERNEL: arguments known from the name ('__' suffix), else 0 */
    char spec[FK_WORK_MAX_ARGS];       /* ... their letters */
    uint32_t off[FK_WORK_MAX_ARGS];
    uint8_t args[FK_WORK_ARG_BYTES];
    uintptr_t dst, src;                /* COPY, SET */
    size_t n, elem;
    unsigned value;
} fk_work;
/* 1 when 's' is being captured: 'w' was added to its graph (*r CUDA_SUCCESS), or the capture is invalidated
   (*r its error). 0: not captured, run it. */
FK_HIDDEN int fk_capture(CUstream s, const fk_work *w, CUresult *r);
/* A captured stream's work failed its checks: the capture is invalidated, as the driver's is. */
FK_HIDDEN void fk_capture_fail(CUstream s);
/* Runs 'w' now ('how': "stream" or "graph", for FAKE_CUDA_WORK_LOG). */
FK_HIDDEN void fk_work_run(const fk_work *w, CUstream s, const char *how);
/* A kernel's arguments copied into 'w' from kernelParams (the layout from f's name; none when kernelParams is
   NULL): CUDA_SUCCESS, or CUDA_ERROR_INVALID_VALUE for a layout past FK_WORK_ARG_BYTES. */
FK_HIDDEN CUresult fk_work_kernel(fk_work *w, CUfunction f, const unsigned grid[3], const unsigned block[3],
                                  void **params);
/* Does a launch of 'f' on 's' need its arguments copied (a capture, the fk_add kernel, FAKE_CUDA_WORK_LOG)?
   Otherwise kernelParams is not read, as before these existed. */
FK_HIDDEN int fk_work_wants_args(CUstream s, CUfunction f);
FK_HIDDEN void fk_kernel_record(const fk_work *w, CUstream s);   /* fake_module.c: counts, last name, time */
FK_HIDDEN void fk_set_run(uintptr_t dst, unsigned value, size_t elem, size_t n);   /* fake_mem.c */
FK_HIDDEN int fk_dev_range(uintptr_t p, size_t n);   /* fake_mem.c: [p, p+n) lies in one device allocation */

#endif /* FAKE_INTERNAL_H */
