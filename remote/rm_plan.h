/*
 * rm_plan.h - how each API crosses the wire, decided once from the generated
 * metadata (docs/remote.md, "Classification").
 *
 * rm_plans_build walks every API's parameters (cushim_api_info, cushim_param_info,
 * cushim_struct_info; read only through the accessors of an rm_meta, so the same
 * code runs in a plugin on host->api_param and in tests on the generated tables)
 * and gives each parameter an operation and each API a class. The hand-written
 * exceptions are one table, rm_special.c; nothing else knows an API by name.
 * The codec (rm_codec.h) only runs plans.
 */
#ifndef RM_PLAN_H
#define RM_PLAN_H

#include <stdint.h>

#include "cushim/cushim.h"

/* The metadata accessors (the host table's own slots fit: rm_meta_from_host). */
typedef struct rm_meta {
    uint32_t (*api_count)(void);
    const cushim_api_info *(*api_at)(uint32_t index);
    const cushim_param_info *(*api_param)(const cushim_api_info *api, uint32_t index);
    uint32_t (*api_id_limit)(void);
    uint32_t cuda_version;
    /* a struct's field by index (host->struct_field, SDK 1.1); NULL: the generated tables' own layout */
    const cushim_field_info *(*struct_field)(const cushim_struct_info *s, uint32_t index);
} rm_meta;

void rm_meta_from_host(rm_meta *m, const cushim_host *host);

/* API classes. */
#define RM_CLASS_FORWARD 1       /* forwardable by metadata: every parameter carried                       */
#define RM_CLASS_FORWARD_NULL 2  /* forwardable by metadata while the pointers the codec cannot carry are
                                    NULL (the call says so at run time); otherwise needs hand-written code   */
#define RM_CLASS_HAND 3          /* hand-written here (rm_special.c) and forwarded                           */
#define RM_CLASS_NEEDS_HAND 4    /* needs hand-written code that does not exist yet (callbacks...)          */
#define RM_CLASS_UNSUPPORTED 5   /* cannot be forwarded; 'reason' says why                                  */
#define RM_CLASS_COUNT 6

/* Parameter operations. */
#define RM_OP_VALUE 1            /* by value: 'size' bytes                                                  */
#define RM_OP_STRING_IN 2        /* const char *: a NUL-terminated string, <= RM_MAX_STRING                  */
#define RM_OP_ARRAY 3            /* pointer to count x elem bytes; 'dir' says which way they go             */
#define RM_OP_STRING_OUT 4       /* const char **: the callee stores a pointer to a string it owns          */
#define RM_OP_NULL_ONLY 5        /* a pointer the codec cannot carry: forwarded only when NULL              */
#define RM_OP_IMAGE 6            /* hand-written: a module image, sized from its content                    */
#define RM_OP_KPARAMS 7          /* hand-written: kernel arguments, sized by the function's parameter info  */
#define RM_OP_OPAQUE 8           /* cannot be carried at all (a callback): the API is not forwarded         */
#define RM_OP_KNODE 10           /* hand-written: a kernel node's parameters (CUDA_KERNEL_NODE_PARAMS): the
                                    struct, its kernelParams carried as a launch's (KPARAMS), 'extra' NULL   */
#define RM_OP_OWNED_OUT 11       /* hand-written: an output pointer the callee sets to an array it owns (capture
                                    dependencies), counted by the output 'func_param' points to: the server
                                    sends the elements, the client keeps a copy per thread (rm_ctx.keep)      */
#define RM_OP_CLIENT 9           /* hand-written in the client (rc_cudart.c: the runtime's copies and launches
                                    become driver calls); never carried itself: absent only on the wire     */
#define RM_OP_SCALAR 12          /* hand-written: a pointer-mode scalar (cuBLAS alpha/beta/result): a host
                                    value of 1..RM_SCALAR_MAX bytes or a device address, as the client's
                                    rm_ctx.scalar says for this call (rm_scalars in rm_special.c)           */
#define RM_SCALAR_MAX 16         /* the largest scalar (cuDoubleComplex): what the server stages            */
#define RM_OP_ATTR 13            /* hand-written: a value whose size its attribute gives (cuPointerGetAttribute's
                                    'data'): 'func_param' the attribute (an enum by value), 'attrs' the table
                                    of sizes by attribute (rm_attr_tables in rm_special.c)                  */
#define RM_OP_ATTRS 14           /* hand-written: an array of pointers to such values, one per element of the
                                    attribute array 'func_param' (cuPointerGetAttributes's 'data'), counted
                                    as that array is; out only                                             */
#define RM_OP_ADDR 15            /* hand-written: an address the callee looks up, by value (cuPointer*'s 'ptr'):
                                    the client's shared pinned memory goes as its region and offset, which
                                    the server turns into its own mapping (rm_ctx.addr_out / addr_in)       */
#define RM_OP_LCONFIG 16         /* hand-written: a launch configuration (CUlaunchConfig) passed in: the struct,
                                    and its 'attrs' array counted by its 'numAttrs' (CUlaunchAttribute: ids
                                    and value unions holding no host pointer, rm_lattr_refused excepted)    */
#define RM_OP_JITOPTS 17         /* hand-written: option values (void **optionValues), one per element of the
                                    option array 'func_param' (CUjit_option, CUlibraryOption) and counted as it
                                    is; each carried by its option's kind (rm_jit_tables in rm_jit.c): a value
                                    in the slot, a value written back, a log buffer sized by its companion    */
#define RM_MAX_LATTRS 64         /* launch attributes of one configuration                                 */
#define RM_MAX_JITOPTS 64        /* options of one call                                                     */
#define RM_MAX_JIT_LOG (1u << 20) /* bytes of one JIT log buffer                                            */
#define RM_ATTR_STAGE 64         /* bytes the server stages for one attribute value, zeroed, whatever its
                                    size: a driver that writes more than the table says stays in them       */
#define RM_MAX_ATTRS 64          /* attributes of one cuPointerGetAttributes call                           */

#define RM_MAX_PARAMS 32

/* Asynchronous class (rm_plan.async): calls whose result the program cannot observe before its next
   synchronising call. The client queues them and sends them in batches (docs/remote.md, "Fast paths"). */
#define RM_ASYNC_NO 0
#define RM_ASYNC_META 1          /* the metadata says: stream-ordered work (copy, set, launch, event), a
                                    CUstream parameter, every parameter by value: no output, no host pointer */
#define RM_ASYNC_SPECIAL 2       /* rm_special.c says (kernel launches: their arguments are copied at call
                                    time; stream waits); still no output                                    */
#define RM_ASYNC_GROUP 3         /* only inside an NCCL group (ncclGroupStart .. ncclGroupEnd of the calling
                                    thread), whose end reports the group's errors (rm_special.c); no output */

/* Answers the client may keep (rm_plan.cache): the same inputs always give the same outputs. */
#define RM_CACHE_NO 0
#define RM_CACHE_PROCESS 1       /* immutable for the process's life (device count, attributes, names...)   */
#define RM_CACHE_FUNC 2          /* immutable until a function's attributes are set or its module unloaded  */
#define RM_CACHE_FORGET 3        /* this call forgets every RM_CACHE_FUNC answer (cuFuncSetAttribute...)    */

typedef struct rm_pplan {
    uint8_t op;
    uint8_t dir;                 /* cushim_param_dir                                                        */
    uint8_t counted;             /* ARRAY: its count is another parameter (decoded after the uncounted)      */
    uint8_t count_indirect;      /* the count parameter points to the count                                 */
    uint8_t count_size;          /* bytes of the count (1, 2, 4, 8)                                         */
    uint8_t count_signed;
    uint8_t null_fields;         /* ARRAY of structs whose pointer fields must be NULL (rm_struct_nulls)    */
    uint8_t num;                 /* VALUE: an object by number (rm_numbered, 1..RM_NUM_KINDS); 0: none       */
    uint8_t count_less;          /* ARRAY counted by a rank (rm_ranks): count_param's value less this ...    */
    uint8_t count_max;           /* ... when that value is count_less..count_max, else 0 elements (0: no rank) */
    uint8_t jit_retained;        /* JITOPTS: the callee keeps the values past the call (cuLinkCreate): options
                                    written back are refused                                                */
    int16_t count_param;         /* -1: none                                                                */
    int16_t func_param;          /* KPARAMS: the parameter holding the function handle; OWNED_OUT: the count */
    uint16_t offset, size;       /* in the params struct                                                    */
    uint32_t elem;               /* ARRAY: bytes of one element                                             */
    uint32_t fixed;              /* ARRAY: a fixed element count (0: count_param, else 1)                  */
    const cushim_struct_info *st; /* ARRAY of structs: the element's descriptor (null_fields)               */
    uint32_t zero_off, zero_size; /* ARRAY of structs (IN): a field that must be 0 (rm_zero_field_find), 0:
                                    none                                                                    */
    const struct rm_attr_table *attrs; /* ATTR, ATTRS: the sizes by attribute                               */
    const cushim_enum_info *attr_enum; /* ATTR, ATTRS, JITOPTS: the attribute's or option's enum in this tree */
    const struct rm_jit_table *jit; /* JITOPTS: the options' kinds                                           */
    uint32_t align;              /* ARRAY: the server stages it at this alignment (a CUtensorMap: 64 and more,
                                    rm_aligns); 0: the arena's own (16)                                     */
} rm_pplan;

typedef struct rm_plan {
    const cushim_api_info *info;
    uint32_t id;
    uint32_t hash;               /* layout hash: both ends must agree (rm_codec checks it per call)          */
    uint8_t cls;                 /* RM_CLASS_*                                                              */
    uint8_t nparams;
    uint8_t nptr;                /* parameters in 'order'                                                   */
    uint8_t ret_status;          /* the return value is a status (cushim_ret_is_status)                     */
    uint8_t ret_string;          /* it returns a text the callee owns (rm_ret_string): the reply carries the
                                    text, at most RM_MAX_RET_STRING bytes, never the server's pointer; an object
                                    by number it names that is not live goes as NULL (ncclGetLastError: "comm
                                    is currently unused")                                                   */
    uint8_t async;               /* RM_ASYNC_*: queued and batched by the client                             */
    uint8_t cache;               /* RM_CACHE_*                                                              */
    int8_t cache_skip_param;     /* RM_CACHE_PROCESS except when this parameter (-1: none) ...               */
    int8_t chunk_dev;            /* a byte copy the client may split in chunks: its device address param,    */
    int8_t chunk_host;           /* its host buffer (an ARRAY of bytes) and its byte count (a value); -1:   */
    int8_t chunk_count;          /* not such a copy (decided from the metadata: category copy)               */
    int64_t cache_skip_value;    /* ... holds this value (an attribute that can change: the compute mode)    */
    uint8_t capture;             /* RM_CAPTURE_*: begins or ends a stream capture (the client tracks them)   */
    int8_t devcopy_param;        /* a CUDA_MEMCPY3D parameter whose memory types must be device or array
                                    (a graph's memcpy node: host memory is the client's); -1: none          */
    /* objects by number (rm_numbered, rm_num.h): this API creates (its parameter num_out_param the output)
       or destroys one of kind num_create / num_destroy (0: neither); an attribute setter or getter whose value
       for attribute num_attr_value is one of kind num_attr_kind (0: none), in its 'buf' of 8 bytes */
    uint8_t num_create, num_destroy, num_attr_kind, num_attr_out;
    int8_t num_attr_param, num_buf_param, num_size_param, num_out_param;
    int64_t num_attr_value;
    int8_t link_param;           /* a CUlinkState whose kept option outputs (cuLinkCreate's logs, sizes, wall
                                    time) the reply carries after the outputs (rm_links); -1: none         */
    uint8_t link_drop;           /* ... and this call ends the link (cuLinkDestroy)                          */
    const char *reason;          /* not RM_CLASS_FORWARD: why (points into 'why' or at static text)         */
    const char *async_reason;    /* async: why (static text)                                                */
    char why[120];
    uint8_t order[RM_MAX_PARAMS]; /* wire order of the pointer parameters: uncounted first, then counted     */
    rm_pplan p[RM_MAX_PARAMS];
} rm_plan;

typedef struct rm_plans {
    uint32_t id_limit;
    uint32_t count;              /* APIs planned                                                            */
    uint32_t cuda_version;
    uint64_t tree_hash;          /* every plan's hash, folded in id order                                   */
    rm_plan **by_id;             /* id_limit entries, NULL where no API                                     */
    rm_plan *all;                /* 'count' plans, in api_at order                                          */
} rm_plans;

rm_plans *rm_plans_build(const rm_meta *m);
void rm_plans_free(rm_plans *ps);

static inline const rm_plan *rm_plan_of(const rm_plans *ps, uint32_t id)
{
    return id < ps->id_limit ? ps->by_id[id] : (const rm_plan *)0;
}

const char *rm_class_name(int cls);   /* "forward", "forward-if-null", "hand-written", "needs-hand", "unsupported" */
const char *rm_op_name(int op);

/* Does one element of struct 'st' at 'elem' keep every pointer field NULL? (null_fields) */
int rm_struct_nulls(const cushim_struct_info *st, const void *elem);

/* A struct's field by name: 1 and its offset and size, or 0. */
int rm_struct_field_at(const cushim_struct_info *st, const char *name, uint32_t *offset, uint32_t *size);

/* ---- the hand-written part (rm_special.c) ---- */
typedef struct rm_special {
    const char *glob;            /* fnmatch(3) on the exported name                                        */
    uint8_t cls;                 /* RM_CLASS_HAND, RM_CLASS_NEEDS_HAND or RM_CLASS_UNSUPPORTED              */
    uint8_t op;                  /* HAND: the operation 'param' gets                                       */
    const char *param;           /* HAND: the parameter handled by hand                                    */
    const char *func;            /* RM_OP_KPARAMS: the parameter naming the function; RM_OP_OWNED_OUT: the
                                    output counting its elements (a size_t *); RM_OP_ARRAY: a
                                    pointer parameter carried as its value (an address the callee looks up,
                                    never reads: cudaPointerGetAttributes's 'ptr')                          */
    const char *reason;
} rm_special;

const rm_special *rm_special_find(const char *name, uint32_t categories);

/* Objects by number (rm_num.h; docs/remote.md, "cuBLAS and cuBLASLt" and "NCCL"): the opaque types of cuBLAS,
   cuBLASLt and NCCL whose values the back end gives as numbers and maps to its library's pointers (rm_special.c,
   one table of types and one of the APIs that make or end them). */
#define RM_NUM_KINDS 10
typedef struct rm_numbered {
    const char *type;            /* the parameter type by value ("cublasHandle_t")                          */
    uint8_t handle;              /* a library handle: an unknown number is the library's bad-handle answer
                                    (CUBLAS_STATUS_NOT_INITIALIZED), not a malformed call                   */
    const char *also;            /* another type whose live numbers pass here too, as that object (the
                                    library allows the cast: a cublasHandle_t as a cublasLtHandle_t), but
                                    never to this type's Destroy; NULL: none                                */
} rm_numbered;
/* An API that makes an object by number (through its pointer parameter 'param', one element), ends one, or names
   one by value in a parameter whose C type says nothing ('void *': an NCCL registration handle). */
#define RM_NUM_MAKE 0
#define RM_NUM_END 1
#define RM_NUM_USE 2
typedef struct rm_num_api {
    const char *glob;            /* fnmatch(3) on the exported name                                         */
    const char *type;            /* the object's type (rm_numbered)                                         */
    const char *param;           /* MAKE: its output; END, USE: the parameter holding one by value (NULL:
                                    each parameter of that C type)                                          */
    uint8_t role;                /* RM_NUM_*                                                                */
} rm_num_api;
const rm_numbered *rm_numbered_at(int kind);   /* kind 1..RM_NUM_KINDS; NULL otherwise */
/* The i-th row of the table of makers and enders; NULL past the end. */
const rm_num_api *rm_num_api_at(size_t i);
int rm_numbered_type(const char *type);          /* its kind, or 0 */
/* An attribute whose value holds an object by number (cublasLtMatmulDescSetAttribute's
   CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR: a cublasLtEmulationDesc_t). */
typedef struct rm_num_attr {
    const char *api;
    const char *attr;            /* the enum value's name (absent from the tree: none)                      */
    const char *type;            /* the object's type (rm_numbered)                                         */
} rm_num_attr;
const rm_num_attr *rm_num_attr_find(const char *api);
/* Does 'api' return a text the callee owns, carried as its bytes (rm_plan.ret_string)? (rm_special.c) */
int rm_ret_string_find(const char *api);

/* Pointer-mode scalars (RM_OP_SCALAR): is parameter 'param' of 'api' one? (rm_special.c, one table) */
typedef struct rm_scalar {
    const char *glob;            /* fnmatch(3) on the exported name                                         */
    const char *param;           /* the parameter's name                                                    */
} rm_scalar;
int rm_scalar_find(const char *api, const char *param);

/* Values sized by an attribute (RM_OP_ATTR, RM_OP_ATTRS; rm_special.c, one table per enum). */
#define RM_ATTR_BYTES 1          /* 'size' bytes, as the callee wrote them                                   */
#define RM_ATTR_HOSTPTR 2        /* a host address of the callee's process: only a shared pinned region's
                                    address means something to the client (rm_ctx.addr_out / addr_in); any
                                    other but NULL is refused                                               */
#define RM_ATTR_POINTEE 4        /* the pointee's whole size (a value union: CUlaunchAttributeValue), from the
                                    metadata of the value parameter ('elem'); the row's size is 0          */
#define RM_ATTR_ADDR 3           /* a device address: in a shared pinned region (unified addressing) the
                                    client's address of it, else the server's value as it is               */
typedef struct rm_attr_size {
    const char *name;            /* the enum value's name: looked up in the tree's enum (absent: unknown)    */
    uint8_t size;                /* bytes of the value (at most RM_ATTR_STAGE)                              */
    uint8_t kind;                /* RM_ATTR_*                                                               */
} rm_attr_size;
typedef struct rm_attr_table {
    const char *enum_name;       /* the attribute parameter's enum type ("CUpointer_attribute")              */
    const rm_attr_size *rows;
    uint32_t n;
} rm_attr_table;
/* The table of the enum 'enum_name', or NULL. */
const rm_attr_table *rm_attr_table_find(const char *enum_name);
/* Attribute 'value' of 'pp' (an ATTR or ATTRS plan): its size and kind, or 0 when the table or this tree does not
   know it (the call is refused: CUDA_ERROR_NOT_SUPPORTED). */
uint32_t rm_attr_size_of(const rm_pplan *pp, int64_t value, uint8_t *kind);
/* A hash of what the table says in this tree's enum (value, size, kind): folded into the layout hash. */
uint32_t rm_attr_hash(const rm_attr_table *t, const cushim_enum_info *e);
/* A launch attribute id (by its enum name) that RM_OP_LCONFIG refuses: its value holds a host pointer. */
int rm_lattr_refused(const char *name);
/* RM_OP_LCONFIG: where the configuration struct 'st' keeps its attributes and their count, and the attribute's
   struct (its 'id' field names the attribute). 1 when 'st' is such a struct. */
int rm_lconfig_fields(const cushim_struct_info *st, uint32_t *attrs_off, uint32_t *num_off,
                      const cushim_struct_info **attr_st);
/* JIT and library options (RM_OP_JITOPTS; rm_jit.c, one table per enum). The value of option k is the k-th slot
   of 'optionValues' (a void *), as cuda.h documents each CUjit_option and CUlibraryOption. */
#define RM_JIT_VALUE 1           /* a value cast to void * (unsigned int, int, an enum): the slot's 8 bytes in   */
#define RM_JIT_INOUT 2           /* ... and the slot written back by the callee (a log's size: what it filled;
                                    THREADS_PER_BLOCK; WALL_TIME's float): the slot's 8 bytes in and back    */
#define RM_JIT_LOG 3             /* a char * buffer the callee writes, of the size its companion option's value
                                    gives (that option once in the same array, at most RM_MAX_JIT_LOG)       */
#define RM_JIT_ZERO 4            /* carried as 0 whatever the client gave (CU_LIBRARY_BINARY_IS_PRESERVED: the
                                    server's copy of the image lives for the call only; a hint the driver may
                                    ignore anyway)                                                          */
typedef struct rm_jit_opt {
    const char *name;            /* the enum value's name: looked up in the tree's enum (absent: refused)      */
    uint8_t kind;                /* RM_JIT_*; 0: refused, 'why' says why                                     */
    const char *size_opt;        /* RM_JIT_LOG: the option giving the buffer's size                          */
    const char *why;             /* refused: why (the log line)                                              */
} rm_jit_opt;
typedef struct rm_jit_table {
    const char *enum_name;       /* the option array's enum type ("CUjit_option")                            */
    const rm_jit_opt *rows;
    uint32_t n;
} rm_jit_table;
/* Option arrays by API: 'values' (void **) is carried by the kinds of 'options' (an enum array counted as it is);
   'retained': the callee keeps the values until a later call (cuLinkCreate: logs accumulate until
   cuLinkDestroy), so options written back are refused there. */
typedef struct rm_jitopts {
    const char *glob;            /* fnmatch(3) on the exported name                                         */
    const char *values;
    const char *options;
    uint8_t retained;
} rm_jitopts;
const rm_jitopts *rm_jitopts_find(const char *api, const char *values);
const rm_jit_table *rm_jit_table_find(const char *enum_name);
/* Option 'value' of 'pp' (a JITOPTS plan): its row, or NULL when the table or this tree does not name it. */
const rm_jit_opt *rm_jit_opt_of(const rm_pplan *pp, int64_t value);
/* The value of the option named 'name' in this tree's enum of 'pp': 1 and *value, or 0. */
int rm_jit_value_of(const rm_pplan *pp, const char *name, int32_t *value);
/* A hash of the table in this tree's enum (value, kind): folded into the layout hash. */
uint32_t rm_jit_hash(const rm_jit_table *t, const cushim_enum_info *e);

/* Arrays counted by a rank (cuTensorMapEncode*'s globalStrides: tensorRank - 1 elements): the count is 'count'
   (an unsigned value parameter) less 'less', or 0 elements when that value lies outside less..max (a rank the
   driver refuses before reading the arrays). */
typedef struct rm_rank {
    const char *glob;
    const char *param;
    const char *count;
    uint8_t less, max;
} rm_rank;
const rm_rank *rm_rank_find(const char *api, const char *param);
/* A link's later calls (rm_links): is 'param' of 'api' the CUlinkState whose kept outputs its reply carries? 1, and
   *drop when the call ends the link. */
int rm_link_find(const char *api, const char *param, uint8_t *drop);

/* The alignment the callee requires of a buffer (cuda.h: a CUtensorMap's address aligned to 64 bytes), or 0. */
uint32_t rm_align_find(const char *api, const char *param);

/* Is parameter 'param' of 'api' an address the callee only looks up (RM_OP_ADDR)? */
int rm_addr_find(const char *api, const char *param);

/* What the metadata cannot say about an API's timing and answers (rm_special.c, one table). */
#define RM_TRAIT_ASYNC 1u        /* asynchronous although a parameter is a host pointer read at call time    */
#define RM_TRAIT_CACHE 2u        /* RM_CACHE_PROCESS                                                         */
#define RM_TRAIT_CACHE_FUNC 4u   /* RM_CACHE_FUNC                                                            */
#define RM_TRAIT_FORGET 8u       /* RM_CACHE_FORGET                                                          */
#define RM_TRAIT_CAPTURE_BEGIN 16u /* begins a stream capture (rm_plan.capture)                              */
#define RM_TRAIT_CAPTURE_END 32u /* ends one                                                                 */
#define RM_TRAIT_DEVCOPY 64u     /* 'skip_param' names a CUDA_MEMCPY3D that must copy device memory only     */
#define RM_TRAIT_GROUP 128u      /* RM_ASYNC_GROUP: batched inside an NCCL group                              */
#define RM_CAPTURE_BEGIN 1
#define RM_CAPTURE_END 2
typedef struct rm_trait {
    const char *glob;            /* fnmatch(3) on the exported name                                         */
    uint32_t flags;              /* RM_TRAIT_*                                                              */
    const char *skip_param;      /* CACHE: not kept when this parameter ... (DEVCOPY: the copy's parameter) */
    const char *skip_value;      /* ... holds this enum value (by name)                                     */
    const char *reason;
} rm_trait;

const rm_trait *rm_trait_find(const char *name);

/* A struct field that must hold 0 for the call to be forwarded (an exportable VMM handle: the server's file
   descriptor or fabric handle would mean nothing to the client). */
typedef struct rm_zero_field {
    const char *glob;            /* fnmatch(3) on the exported name                                         */
    const char *param;           /* a pointer to structs, carried in                                        */
    const char *field;           /* the field of the struct that must be 0                                  */
    const char *reason;          /* the plan's reason (what a refused call logs)                            */
} rm_zero_field;

const rm_zero_field *rm_zero_field_find(const char *api, const char *param);

/* A module image's size from its content: a cubin (ELF), a fatbin, or NUL-terminated text (PTX). At most
   'avail' bytes are read; returns the size, or 0 when it is not known within 'avail' (no NUL in text, an ELF
   whose tables lie further). The server calls it on the bytes it received, the client on the program's. */
uint64_t rm_image_size(const void *image, uint64_t avail);

#endif /* RM_PLAN_H */
