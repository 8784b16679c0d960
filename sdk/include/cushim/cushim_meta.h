/*
 * cushim_meta.h - the shape of the generated API metadata.
 *
 * The generator (cushim-gen) emits one 'cushim_api_info' per exported CUDA
 * function and one 'cushim_param_info' per parameter (generated/cuda-X.Y/
 * cushim_meta.c). Tools such as the tracer and the Lua bridge walk a call's
 * parameters through these tables without knowing the API at compile time.
 *
 * Append-only: new fields go at the end of each struct; values of the enums
 * below never change meaning.
 */
#ifndef CUSHIM_META_H
#define CUSHIM_META_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a parameter is, from its canonical type (plus the overlay). */
typedef enum cushim_param_kind {
    CUSHIM_KIND_UNKNOWN = 0,  /* unclassified: the generator reports these   */
    CUSHIM_KIND_SCALAR = 1,   /* integer or floating value                   */
    CUSHIM_KIND_ENUM = 2,     /* enum value                                  */
    CUSHIM_KIND_HANDLE = 3,   /* opaque handle (pointer to incomplete struct) */
    CUSHIM_KIND_POINTER = 4,  /* any other data pointer                      */
    CUSHIM_KIND_STRING = 5,   /* const char * holding a NUL-terminated string */
    CUSHIM_KIND_STRUCT = 6,   /* struct or union passed by value             */
    CUSHIM_KIND_CALLBACK = 7, /* function pointer                            */
    CUSHIM_KIND_DEVPTR = 8    /* device address (CUdeviceptr and friends)    */
} cushim_param_kind;

/* Data direction, as seen by the caller. */
typedef enum cushim_param_dir {
    CUSHIM_DIR_UNKNOWN = 0,
    CUSHIM_DIR_IN = 1,
    CUSHIM_DIR_OUT = 2,
    CUSHIM_DIR_INOUT = 3
} cushim_param_dir;

typedef enum cushim_library {
    CUSHIM_LIB_DRIVER = 1,   /* libcuda.so.1    */
    CUSHIM_LIB_RUNTIME = 2,  /* libcudart.so.N  */
    /* universal shim: libraries from codegen/libs/<name>.lib (values appended, never reused) */
    CUSHIM_LIB_NVML = 3,     /* libnvidia-ml.so.1 */
    CUSHIM_LIB_NCCL = 4,     /* libnccl.so.2    (opt-in: CUSHIM_LIBS) */
    CUSHIM_LIB_CUBLAS = 5,   /* libcublas.so.N  (opt-in) */
    CUSHIM_LIB_CUBLASLT = 6  /* libcublasLt.so.N (opt-in) */
} cushim_library;

typedef enum cushim_per_thread {
    CUSHIM_PT_NONE = 0,
    CUSHIM_PT_PTDS = 1,      /* _ptds: per-thread default stream, synchronous */
    CUSHIM_PT_PTSZ = 2       /* _ptsz: per-thread default stream, async       */
} cushim_per_thread;

/* How the return value is to be read. */
typedef enum cushim_ret_kind {
    CUSHIM_RET_CURESULT = 1,  /* CUresult                       */
    CUSHIM_RET_CUDAERROR = 2, /* cudaError_t                    */
    CUSHIM_RET_OTHER = 3,     /* anything else (const char *, a struct, ...) */
    /* universal shim: one kind per library status type (values appended, never reused) */
    CUSHIM_RET_NVMLRETURN = 4, /* nvmlReturn_t                  */
    CUSHIM_RET_NCCLRESULT = 5, /* ncclResult_t                  */
    CUSHIM_RET_CUBLASSTATUS = 6 /* cublasStatus_t (cuBLAS and cuBLASLt) */
} cushim_ret_kind;

/* Categories (bit set), from the overlay and naming rules. */
#define CUSHIM_CAT_ALLOC     (1u << 0)  /* allocates device/host/managed memory */
#define CUSHIM_CAT_FREE      (1u << 1)  /* frees what ALLOC allocated           */
#define CUSHIM_CAT_COPY      (1u << 2)  /* memcpy family                        */
#define CUSHIM_CAT_SET       (1u << 3)  /* memset family                        */
#define CUSHIM_CAT_LAUNCH    (1u << 4)  /* kernel or graph launch               */
#define CUSHIM_CAT_SYNC      (1u << 5)  /* waits for device work                */
#define CUSHIM_CAT_MODULE    (1u << 6)  /* module / library / function loading  */
#define CUSHIM_CAT_GRAPH     (1u << 7)  /* graph construction and execution     */
#define CUSHIM_CAT_VMM       (1u << 8)  /* virtual memory management            */
#define CUSHIM_CAT_STREAM    (1u << 9)
#define CUSHIM_CAT_EVENT     (1u << 10)
#define CUSHIM_CAT_CONTEXT   (1u << 11)
#define CUSHIM_CAT_DEVICE    (1u << 12) /* device queries and attributes        */
#define CUSHIM_CAT_INIT      (1u << 13) /* initialisation, version, entry points */
#define CUSHIM_CAT_INTEROP   (1u << 14) /* graphics and external resource interop */
#define CUSHIM_CAT_QUERY     (1u << 15) /* read-only queries with no side effect */
#define CUSHIM_CAT_POOL      (1u << 16) /* stream-ordered allocator and pools    */

/* Every category as X(WORD, bit) in bit order, WORD as selectors, the overlay and
   apis.tsv write it: the one list the generator and the runtime read the words from. */
#define CUSHIM_CATEGORY_LIST(X)                                                              \
    X(alloc, CUSHIM_CAT_ALLOC) X(free, CUSHIM_CAT_FREE) X(copy, CUSHIM_CAT_COPY)             \
    X(set, CUSHIM_CAT_SET) X(launch, CUSHIM_CAT_LAUNCH) X(sync, CUSHIM_CAT_SYNC)             \
    X(module, CUSHIM_CAT_MODULE) X(graph, CUSHIM_CAT_GRAPH) X(vmm, CUSHIM_CAT_VMM)           \
    X(stream, CUSHIM_CAT_STREAM) X(event, CUSHIM_CAT_EVENT) X(context, CUSHIM_CAT_CONTEXT)   \
    X(device, CUSHIM_CAT_DEVICE) X(init, CUSHIM_CAT_INIT) X(interop, CUSHIM_CAT_INTEROP)     \
    X(query, CUSHIM_CAT_QUERY) X(pool, CUSHIM_CAT_POOL)

struct cushim_enum_info;   /* type metadata, below */
struct cushim_struct_info;

typedef struct cushim_param_info {
    const char *name;           /* as in the header (argN when unnamed)     */
    const char *type;           /* type as written                          */
    const char *canonical_type; /* canonical type                           */
    uint8_t kind;               /* cushim_param_kind                        */
    uint8_t dir;                /* cushim_param_dir                         */
    uint16_t offset;            /* offsetof(cushim_params_<api>, name)      */
    uint16_t size;              /* sizeof the field                         */
    int16_t count_param;        /* index of the parameter holding the element
                                   count of this pointer, or -1             */
    uint32_t elem_size;         /* size of one pointee element, 0 if unknown
                                   or void                                  */
    uint32_t fixed_count;       /* fixed element count from the overlay, 0 if
                                   none                                     */
    /* ---- type metadata ---- */
    uint8_t pointee;            /* for a pointer: kind of what it points to
                                   (cushim_param_kind), else 0              */
    uint8_t count_indirect;     /* 1: count_param is a pointer to the count
                                   (e.g. size_t *numNodes), read *it        */
    uint16_t reserved2;
    const struct cushim_enum_info *enum_type;     /* ENUM, or enum pointee   */
    const struct cushim_struct_info *struct_type; /* STRUCT or struct pointee,
                                   listed structs only (docs/generator.md)  */
} cushim_param_info;

typedef struct cushim_api_info {
    uint32_t id;                /* stable API id (CUSHIM_API_<name>)        */
    const char *name;           /* exported symbol                          */
    const char *base_name;      /* name without _vN/_ptds/_ptsz             */
    uint32_t abi_version;       /* N of PFN_<base>_v<N>, 0 if none          */
    uint8_t per_thread;         /* cushim_per_thread                        */
    uint8_t library;            /* cushim_library                           */
    uint8_t ret_kind;           /* cushim_ret_kind                          */
    uint8_t deprecated;         /* 1 if the header marks it deprecated      */
    uint32_t categories;        /* CUSHIM_CAT_* bits                        */
    const char *return_type;    /* as written                               */
    const char *header;         /* header file name, e.g. "cuda.h"          */
    uint32_t line;              /* line in that header                      */
    uint32_t params_size;       /* sizeof(cushim_params_<name>)             */
    uint32_t ret_size;          /* sizeof the return type                   */
    uint16_t nparams;
    const cushim_param_info *params;
} cushim_api_info;

/* ---- type metadata ----
 * Every enum of the parsed headers and the struct types the overlay lists
 * ('struct <TypeName>', docs/generator.md), emitted into cushim_meta.c.
 * Reach them through host->enum_by_name / struct_by_name, or from a
 * parameter's enum_type / struct_type. */
typedef struct cushim_enum_value {
    const char *name;           /* "CU_MEMORYTYPE_DEVICE"                   */
    int64_t value;
} cushim_enum_value;

typedef struct cushim_enum_info {
    const char *name;           /* typedef name, e.g. "CUmemorytype" (else "enum X") */
    uint32_t size;              /* sizeof the enum type                     */
    uint32_t nvalues;
    const cushim_enum_value *values;   /* header order                      */
} cushim_enum_info;

struct cushim_struct_info;

typedef struct cushim_field_info {
    const char *name;           /* field name ("" for an anonymous member)   */
    const char *type;           /* type as written (arrays as 'T[N]')       */
    uint8_t kind;               /* cushim_param_kind                        */
    uint8_t pointee;            /* for POINTER fields: kind of the pointee, else 0 */
    uint16_t reserved;
    uint32_t offset, size;      /* bytes                                    */
    uint32_t array_len;         /* fixed array length, 0 if not an array    */
    const cushim_enum_info *enum_type;             /* ENUM (or enum pointee) */
    const struct cushim_struct_info *struct_type;  /* STRUCT (or struct pointee), listed structs only */
} cushim_field_info;

typedef struct cushim_struct_info {
    const char *name;           /* typedef name, e.g. "CUDA_MEMCPY2D"       */
    uint32_t size;
    uint32_t nfields;
    const cushim_field_info *fields;
} cushim_struct_info;
/* ---- memlimit: allocation roles (host->alloc_role) ------------------------
 * For every API that creates or releases memory (and every API in category
 * alloc, free, vmm or pool: those that move no memory carry ROLE_NONE and a
 * reason), from the overlay's 'role' entries (docs/generator.md). Parameter
 * indexes are into the API's parameters (host->api_param), -1 when unused.
 * Read by field; 'size' says which fields exist (CUSHIM_HAS). */
typedef enum cushim_role_action {
    CUSHIM_ROLE_NONE = 0,     /* moves no memory; 'reason' says why            */
    CUSHIM_ROLE_ALLOC = 1,    /* creates memory: out_arg receives it           */
    CUSHIM_ROLE_RELEASE = 2,  /* releases what ref_arg names                   */
    CUSHIM_ROLE_IMPORT = 3,   /* maps memory created elsewhere (IPC, shareable
                                 handles, pool pointers): not new memory       */
    CUSHIM_ROLE_UNIMPORT = 4, /* undoes an import (ref_arg)                    */
    CUSHIM_ROLE_RETAIN = 5    /* one more reference to an existing allocation
                                 (out_arg); released like the original         */
} cushim_role_action;

typedef enum cushim_role_mem {
    CUSHIM_MEM_NONE = 0,
    CUSHIM_MEM_DEVICE = 1,    /* device memory (linear, pools, VMM, graph nodes) */
    CUSHIM_MEM_HOST = 2,      /* page-locked host memory                      */
    CUSHIM_MEM_MANAGED = 3,   /* managed (unified) memory                     */
    CUSHIM_MEM_ARRAY = 4      /* CUDA arrays and mipmapped arrays (device)     */
} cushim_role_mem;

/* How the size is computed from the arguments s0, s1, s2 (size_arg[]). A
   pointer argument is read after a successful call (an output such as a pitch). */
typedef enum cushim_role_size {
    CUSHIM_SIZE_NONE = 0,
    CUSHIM_SIZE_PARAM = 1,    /* the value of s0                                        */
    CUSHIM_SIZE_PRODUCT = 2,  /* s0 * s1                                                  */
    CUSHIM_SIZE_ARRAY = 3,    /* s0: const CUDA_ARRAY_DESCRIPTOR *                       */
    CUSHIM_SIZE_ARRAY3D = 4,  /* s0: const CUDA_ARRAY3D_DESCRIPTOR *                     */
    CUSHIM_SIZE_MIPMAP = 5,   /* s0: const CUDA_ARRAY3D_DESCRIPTOR *, s1: level count     */
    CUSHIM_SIZE_EXTENT = 6,   /* s0: struct cudaExtent (width in bytes * height * depth)  */
    CUSHIM_SIZE_PITCH3D = 7,  /* s0: struct cudaPitchedPtr * (out), s1: struct cudaExtent */
    CUSHIM_SIZE_CHAN2D = 8,   /* s0: const struct cudaChannelFormatDesc *, s1 width, s2 height */
    CUSHIM_SIZE_CHAN3D = 9,   /* s0: channel format, s1: struct cudaExtent (elements)     */
    CUSHIM_SIZE_CHANMIP = 10, /* s0: channel format, s1: struct cudaExtent, s2: levels    */
    CUSHIM_SIZE_NODE = 11,    /* s0: CUDA_MEM_ALLOC_NODE_PARAMS * / cudaMemAllocNodeParams * (bytesize) */
    CUSHIM_SIZE_PITCH = 12    /* s0: size_t * pitch (out), s1: width in bytes, s2: height: *s0 * s2
                                 after the call, s1 * s2 before it (the pitch is at least the width) */
} cushim_role_size;

/* Which device the memory is on. */
typedef enum cushim_role_dev {
    CUSHIM_DEV_NONE = 0,
    CUSHIM_DEV_CTX = 1,       /* the calling thread's current context (runtime: device) */
    CUSHIM_DEV_PARAM = 2,     /* dev_arg holds a device ordinal                          */
    CUSHIM_DEV_PROP = 3,      /* dev_arg: const CUmemAllocationProp * (location.id)      */
    CUSHIM_DEV_POOL = 4,      /* dev_arg: a memory pool; the pool's device              */
    CUSHIM_DEV_NODE = 5,      /* dev_arg: node parameters (poolProps.location.id)        */
    CUSHIM_DEV_PTR = 6        /* the device of the pointer released                      */
} cushim_role_dev;

typedef struct cushim_alloc_role {
    uint32_t size;            /* sizeof(cushim_alloc_role) of the host                   */
    uint32_t api_id;
    uint8_t action;           /* cushim_role_action */
    uint8_t mem;              /* cushim_role_mem    */
    uint8_t size_rule;        /* cushim_role_size   */
    uint8_t dev_rule;         /* cushim_role_dev    */
    int8_t size_arg[3];
    int8_t dev_arg;
    int8_t out_arg;           /* ALLOC, IMPORT, RETAIN: where the pointer/handle is stored
                                 (SIZE_NODE: the node parameters' dptr field)             */
    int8_t ref_arg;           /* RELEASE, UNIMPORT: the value naming what is released     */
    const char *reason;       /* ROLE_NONE: why this API moves no memory; else NULL      */
} cushim_alloc_role;
/* ---- end memlimit ---- */

#ifdef __cplusplus
}
#endif
#endif /* CUSHIM_META_H */
