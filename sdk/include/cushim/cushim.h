/*
 * cushim.h - the cushim plugin SDK: the public ABI between the shim (the host)
 * and plugins. docs/plugin-sdk.md is the guide; this header is the contract.
 *
 * A plugin is a shared library that exports ONE function,
 *
 *     const cushim_plugin_def *cushim_plugin_entry(void);
 *
 * (write it with CUSHIM_PLUGIN(def) below). The host reads the definition's
 * size and ABI version before anything else, refuses a plugin built for
 * another major version or a newer minor than its own, parses and validates
 * the plugin's options against the declared option list, then calls init()
 * with the host's function table. A plugin never links against the shim: it
 * reaches it only through that table, so one binary works whether the shim was
 * preloaded (libcushim.so) or loaded as the drop-in libcuda.so.1 (RTLD_LOCAL).
 *
 * ABI rules (append-only, like sqlite3_api_routines; since 1.0 every released
 * version is pinned by a test, tests/sdk/abi/MAJOR.MINOR.c):
 *   - CUSHIM_ABI_VERSION is (MAJOR << 16) | MINOR. A minor release only appends:
 *     new slots at the end of 'cushim_host', new fields at the end of structs,
 *     new enum values, new selector words. Nothing moves or changes meaning.
 *   - Every struct that can grow starts with (or, for the generated metadata,
 *     is described by) its size: a field exists iff its offset is below that
 *     size. Use CUSHIM_HAS(struct_ptr_with_size, field) / CUSHIM_HOST_HAS.
 *   - Metadata: 'cushim_api_info' may be read by field (one struct per API,
 *     fields only appended; check host->sizeof_api_info for fields newer than
 *     your build). 'cushim_param_info' is an array element: read parameters
 *     ONLY through host->api_param(api, i), never api->params[i]. The same for
 *     struct fields and enum values (1.1): cushim_struct_field(host, s, i) and
 *     cushim_enum_value_at(host, e, i), never s->fields[i] or e->values[i]. A host
 *     whose elements have grown still gives plugins built for 1.0 (which index
 *     directly) arrays of the 1.0 layout: 48-byte fields, 16-byte values.
 *   - 'cushim_call' is built by the host: read by field, check call->size for
 *     fields newer than your build.
 *
 * Threads (see docs/plugin-sdk.md): hooks run on whatever thread makes the CUDA
 * call, concurrently, including driver-owned threads (host callbacks) and
 * during process exit. A CUDA call made inside a hook goes straight to the real
 * function (no hook sees it). host->real(id) gives real functions to any
 * thread, the plugin's own included.
 */
#ifndef CUSHIM_H
#define CUSHIM_H

#include <stddef.h>
#include <stdint.h>

#include "cushim_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUSHIM_ABI_MAJOR 1
#define CUSHIM_ABI_MINOR 2
#define CUSHIM_ABI_VERSION ((uint32_t)((CUSHIM_ABI_MAJOR << 16) | CUSHIM_ABI_MINOR))
#define CUSHIM_ABI_MAJOR_OF(v) ((uint32_t)(v) >> 16)
#define CUSHIM_ABI_MINOR_OF(v) ((uint32_t)(v) & 0xffffu)

/* Does a struct that starts with 'uint32_t size' have 'field'? */
#define CUSHIM_HAS(p, type, field) \
    ((p)->size >= offsetof(type, field) + sizeof(((type *)0)->field))
#define CUSHIM_HOST_HAS(host, slot) CUSHIM_HAS(host, cushim_host, slot)

#if defined(_WIN32)
#define CUSHIM_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CUSHIM_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Return codes of the SDK functions (not CUDA codes). */
#define CUSHIM_OK 0
#define CUSHIM_EINVAL (-1)   /* bad argument: unknown id, NULL callbacks, bad selector */
#define CUSHIM_ENOMEM (-2)
#define CUSHIM_ELIMIT (-3)   /* too many hooks on one API (CUSHIM_MAX_HOOKS) */
#define CUSHIM_ENOENT (-4)   /* no such hook group, option, key or name */
#define CUSHIM_ESTATE (-5)   /* not allowed now (e.g. hooks_sync inside a hook, after flush) */
#define CUSHIM_ENOMATCH (-6) /* the selector is valid but matches no API of this build */

#define CUSHIM_MAX_HOOKS 32  /* per API */

/* What a pre hook returns. */
#define CUSHIM_CONTINUE 0    /* go on: next pre hook, then the real call              */
#define CUSHIM_SKIP 1        /* do not call the real function; the hook has written
                                the result (cushim_call_set_result*) */

/* Log levels (host->log). */
#define CUSHIM_LOG_DEBUG 0
#define CUSHIM_LOG_INFO 1
#define CUSHIM_LOG_WARN 2
#define CUSHIM_LOG_ERROR 3

typedef struct cushim_plugin cushim_plugin;   /* opaque: the host's record of one plugin */

/* ------------------------------------------------------------------------ */
/* The call frame: one interposed call that has at least one hook.           */
/* ------------------------------------------------------------------------ */
typedef struct cushim_call {
    uint32_t size;                  /* sizeof(cushim_call) as built by the host       */
    uint32_t api_id;                /* CUSHIM_API_<name>                              */
    const cushim_api_info *info;    /* metadata: name, base name, parameters, ...     */
    void *params;                   /* cushim_params_<name> *: pre hooks may modify it;
                                       the real call sees the modification            */
    void *retval;                   /* the return value, info->ret_size bytes         */
    void *real;                     /* the function about to be called                */
    uint32_t flags;                 /* CUSHIM_CALL_*                                  */
    uint32_t depth;                 /* enclosing hooked calls on this thread: 0 for a
                                       call made by the application, 1 for a driver
                                       call made by cudart inside a hooked runtime call */
    const struct cushim_call *parent; /* the innermost enclosing hooked call on this
                                       thread (depth > 0), else NULL                   */
    uint64_t seq;                   /* unique in the process, never 0 (correlation id) */
    uint64_t tid;                   /* the calling thread's kernel thread id           */
    uint64_t t_enter_ns;            /* host->now_ns() at entry when a hook on this API
                                       was added with CUSHIM_HOOK_TIME, else 0         */
    uint64_t t_exit_ns;             /* post hooks: host->now_ns() read once as the real
                                       function returned (or, skipped, before the post
                                       hooks) when a hook on this API was added with
                                       CUSHIM_HOOK_EXIT_TIME, else 0; 0 in pre hooks   */
} cushim_call;

#define CUSHIM_CALL_SKIPPED 1u      /* a pre hook skipped the real call               */

/*
 * 'slot' is private to one hook for one call: what the pre hook stores there
 * the post hook of the same registration reads back (a start time, an id).
 * Post hooks run in reverse order, only for hooks whose pre stage was reached.
 */
typedef int (*cushim_pre_fn)(cushim_call *call, void *user, uint64_t *slot);
typedef void (*cushim_post_fn)(cushim_call *call, void *user, uint64_t *slot);

/* Results, for every return kind (info->ret_kind, info->ret_size). */
static inline int32_t cushim_call_result(const cushim_call *c)  /* CUresult, cudaError_t */
{
    return *(const int32_t *)c->retval;
}
/* Whether an API returns a status whose 0 is success (info->ret_kind): CUresult, cudaError_t, nvmlReturn_t,
   ncclResult_t, cublasStatus_t. A kind appended later reads as no status here: on the safe side below. */
static inline int cushim_ret_is_status(uint32_t ret_kind)
{
    return ret_kind == CUSHIM_RET_CURESULT || ret_kind == CUSHIM_RET_CUDAERROR || ret_kind == CUSHIM_RET_NVMLRETURN ||
           ret_kind == CUSHIM_RET_NCCLRESULT || ret_kind == CUSHIM_RET_CUBLASSTATUS;
}
/* The C type of a status kind ("CUresult", "cudaError_t", "nvmlReturn_t", "ncclResult_t", "cublasStatus_t"), for
   messages; NULL for a kind that is no status. */
static inline const char *cushim_ret_type_name(uint32_t ret_kind)
{
    switch (ret_kind) {
    case CUSHIM_RET_CURESULT: return "CUresult";
    case CUSHIM_RET_CUDAERROR: return "cudaError_t";
    case CUSHIM_RET_NVMLRETURN: return "nvmlReturn_t";
    case CUSHIM_RET_NCCLRESULT: return "ncclResult_t";
    case CUSHIM_RET_CUBLASSTATUS: return "cublasStatus_t";
    default: return NULL;
    }
}
/* The error a status kind holds, for messages: "a driver error (CUresult)", "an NVML error (nvmlReturn_t)", ...;
   "an error" for a kind that is no status (or one appended later). */
static inline const char *cushim_ret_error_text(uint32_t ret_kind)
{
    switch (ret_kind) {
    case CUSHIM_RET_CURESULT: return "a driver error (CUresult)";
    case CUSHIM_RET_CUDAERROR: return "a runtime error (cudaError_t)";
    case CUSHIM_RET_NVMLRETURN: return "an NVML error (nvmlReturn_t)";
    case CUSHIM_RET_NCCLRESULT: return "an NCCL error (ncclResult_t)";
    case CUSHIM_RET_CUBLASSTATUS: return "a cuBLAS error (cublasStatus_t)";
    default: return "an error";
    }
}
/* In a post hook: 1 when the callee has vouched for the program's pointers - it returns a status, returned
   success, and no pre hook skipped it: it has read every input it takes and written every output, so plain
   reads behind them are safe. 0 after a call that failed (a library may refuse a pointer without touching
   it), was skipped, or returns no status, and in pre hooks: read the program's pointers with cushim_read_mem
   (cushim_io.h) there. */
static inline int cushim_call_vouched(const cushim_call *c, const cushim_api_info *info)
{
    return cushim_ret_is_status(info->ret_kind) && cushim_call_result(c) == 0 && !(c->flags & CUSHIM_CALL_SKIPPED);
}
static inline void cushim_call_set_result(cushim_call *c, int32_t r)
{
    *(int32_t *)c->retval = r;
}
static inline void cushim_call_get_result_bytes(const cushim_call *c, void *out, size_t n)
{
    const unsigned char *s = (const unsigned char *)c->retval;
    unsigned char *d = (unsigned char *)out;
    for (size_t i = 0; i < n && i < c->info->ret_size; i++)
        d[i] = s[i];
}
static inline void cushim_call_set_result_bytes(cushim_call *c, const void *v, size_t n)
{
    const unsigned char *s = (const unsigned char *)v;
    unsigned char *d = (unsigned char *)c->retval;
    for (size_t i = 0; i < n && i < c->info->ret_size; i++)
        d[i] = s[i];
}
/* In a pre hook: 'return cushim_call_skip(call, CUDA_ERROR_OUT_OF_MEMORY);' */
static inline int cushim_call_skip(cushim_call *c, int32_t result)
{
    cushim_call_set_result(c, result);
    return CUSHIM_SKIP;
}

/* ------------------------------------------------------------------------ */
/* Hook registration.                                                       */
/* ------------------------------------------------------------------------ */
/*
 * Selectors (host->hooks_add, host->api_match, host->api_select):
 *
 *   SELECTOR := TERM { ',' TERM }           union of the terms
 *   TERM     := ATOM { '&' ATOM }           intersection of the atoms
 *   ATOM     := '!' ATOM                    every API the atom does not match
 *                                           (all&!cudaGetDevice)
 *             | 'all'
 *             | 'id:' N                     one API id
 *             | 'name:' NAME                one exported name (cuMemAlloc_v2)
 *             | 'base:' NAME                every ABI variant of a base name:
 *                                           cuMemAlloc, cuMemAlloc_v2, _ptds, _ptsz,
 *                                           and the runtime's _v2 names
 *             | 'glob:' PATTERN             fnmatch(3) on exported names
 *             | 'cat:' CAT { '+' CAT }      any of these categories: alloc free copy
 *                                           set launch sync module graph vmm stream
 *                                           event context device init interop query pool
 *             | 'lib:' ('driver'|'runtime')
 *             | PATTERN with * ? or [       same as glob:
 *             | NAME                        base:NAME if it is a base name, else name:NAME
 * White space around terms is ignored. A selector naming nothing of this build
 * (an API of a newer CUDA) gives CUSHIM_ENOMATCH; a malformed one CUSHIM_EINVAL.
 */
#define CUSHIM_HOOK_TIME 1u      /* fill call->t_enter_ns (a clock read costs ~9-22 ns a call) */
#define CUSHIM_HOOK_EXIT_TIME 2u /* fill call->t_exit_ns for the post hooks (one more read) */
/* (1.1) The pre hook serves the call itself: a call whose library lacks the function (no driver installed,
   a remote GPU) reaches the hooks with call->real NULL instead of failing before them. If no pre hook skips
   it, it fails as without the flag and the post hooks see CUSHIM_CALL_SKIPPED. Needs a pre hook; a 1.0 host
   refuses the flag (CUSHIM_EINVAL). */
#define CUSHIM_HOOK_SERVE 4u

typedef struct cushim_hook_spec {
    uint32_t size;            /* sizeof(cushim_hook_spec)                              */
    uint32_t flags;           /* CUSHIM_HOOK_* or 0                                    */
    const char *select;       /* selector; NULL: the one API 'api_id'                  */
    uint32_t api_id;
    int32_t priority;         /* lower runs first among pre hooks, last among post     */
    cushim_pre_fn pre;        /* either may be NULL, not both                          */
    cushim_post_fn post;
    void *user;               /* passed to pre and post                                */
} cushim_hook_spec;

/* ------------------------------------------------------------------------ */
/* Options: declared by the plugin, parsed and validated by the host.       */
/* ------------------------------------------------------------------------ */
#define CUSHIM_OPT_STRING 1
#define CUSHIM_OPT_INT 2      /* int64, decimal or 0x hex                               */
#define CUSHIM_OPT_BOOL 3     /* 1/0 true/false yes/no on/off                           */
#define CUSHIM_OPT_DOUBLE 4
#define CUSHIM_OPT_BYTES 5    /* 4096, 512K, 8MiB, 8GiB, 1.5G (K=KiB=1024)               */
#define CUSHIM_OPT_TYPE_MASK 0xffu
#define CUSHIM_OPT_REPEAT 0x100u   /* may be given several times (host->opt_count/_at)  */
#define CUSHIM_OPT_REQUIRED 0x200u /* loading fails when it is not given                */

typedef struct cushim_option {
    const char *name;           /* [a-z0-9_-]+ ; an array of options ends with name NULL */
    uint32_t type;              /* CUSHIM_OPT_* | flags                                  */
    const char *default_value;  /* text, validated like a given value; NULL: none         */
    const char *help;           /* one line, shown by 'cushim plugins'                    */
} cushim_option;

/* ------------------------------------------------------------------------ */
/* The plugin's definition (returned by its entry point; static storage).   */
/* ------------------------------------------------------------------------ */
typedef struct cushim_host cushim_host;

typedef struct cushim_plugin_def {
    uint32_t size;              /* sizeof(cushim_plugin_def)                              */
    uint32_t abi_version;       /* CUSHIM_ABI_VERSION the plugin was built against       */
    const char *name;           /* [a-z0-9_-]+, used in log lines                        */
    const char *version;        /* the plugin's own version text                         */
    const char *description;    /* one line                                              */
    const cushim_option *options;   /* may be NULL                                       */
    /* Called once, before the first CUDA call is forwarded, options already
       validated. Register hooks here. Non-zero: the load fails (log why first);
       everything the plugin registered is undone. */
    int (*init)(const cushim_host *host, cushim_plugin *self);
    /* At process exit, after the last CUDA call the plugin's hooks can see, in
       reverse load order; its hooks never run afterwards. May be NULL. */
    void (*flush)(cushim_plugin *self);
    /* In the child of fork(), on the only thread, before fork() returns. May be NULL. */
    void (*fork_child)(cushim_plugin *self);
} cushim_plugin_def;

typedef const cushim_plugin_def *(*cushim_plugin_entry_fn)(void);
#define CUSHIM_PLUGIN_ENTRY_NAME "cushim_plugin_entry"

#ifdef __cplusplus
#define CUSHIM_PLUGIN_EXTERN_C extern "C"
#else
#define CUSHIM_PLUGIN_EXTERN_C
#endif
/* Exports the entry point returning '&def'. */
#define CUSHIM_PLUGIN(def)                                                               \
    CUSHIM_PLUGIN_EXTERN_C CUSHIM_PLUGIN_EXPORT const cushim_plugin_def *cushim_plugin_entry(void); \
    CUSHIM_PLUGIN_EXTERN_C CUSHIM_PLUGIN_EXPORT const cushim_plugin_def *cushim_plugin_entry(void) \
    {                                                                                    \
        return &(def);                                                                   \
    }

/* ------------------------------------------------------------------------ */
/* The host's function table. Append-only: never reorder. Slots appended
   after 1.0 are marked with the version that added them: check
   CUSHIM_HOST_HAS(host, slot) before calling one of those.                 */
/* ------------------------------------------------------------------------ */
struct cushim_host {
    uint32_t size;                  /* sizeof(cushim_host) of the host                 */
    uint32_t abi_version;           /* the host's CUSHIM_ABI_VERSION                   */
    uint32_t sizeof_call;           /* sizeof(cushim_call) built by the host           */
    uint32_t sizeof_api_info;       /* sizeof(cushim_api_info) of the host's metadata  */
    uint32_t sizeof_param_info;     /* stride of the host's parameter arrays           */
    uint32_t cuda_version;          /* CUDA headers the host was generated from (13000) */

    /* e.g. "cushim 0.1.0, CUDA 13.0 headers, SDK ABI 1.0" */
    const char *(*version)(void);

    /* Metadata. APIs are enumerated by index 0..api_count()-1 (in id order). */
    uint32_t (*api_count)(void);
    const cushim_api_info *(*api_at)(uint32_t index);
    uint32_t (*api_id_limit)(void);            /* one past the largest id             */
    const cushim_api_info *(*api_by_id)(uint32_t api_id);      /* NULL if absent      */
    const cushim_api_info *(*api_by_name)(const char *name);   /* exported name       */
    const cushim_param_info *(*api_param)(const cushim_api_info *api, uint32_t index);
    /* 1 if 'api_id' matches 'selector', 0 if not, CUSHIM_EINVAL if malformed. */
    int (*api_match)(const char *selector, uint32_t api_id);
    /* Ids matched, in id order, written up to 'cap'; returns how many match (may
       exceed cap), or CUSHIM_EINVAL. 'err' (may be NULL) gets a reason. */
    int (*api_select)(const char *selector, uint32_t *ids, uint32_t cap, char *err, size_t errlen);
    /* "CUDA_ERROR_OUT_OF_MEMORY" for (CUSHIM_RET_CURESULT, 2), "cudaErrorMemoryAllocation"
       for (CUSHIM_RET_CUDAERROR, 2); NULL if unknown. */
    const char *(*result_name)(uint32_t ret_kind, int32_t code);
    /* The reverse: any driver or runtime error name. CUSHIM_OK or CUSHIM_ENOENT. */
    int (*result_by_name)(const char *name, uint32_t *ret_kind, int32_t *code);

    /* Hooks. One call registers the hook on every API the selector matches and
       returns one group handle. Any thread, any time (not from a signal handler). */
    int (*hooks_add)(cushim_plugin *self, const cushim_hook_spec *spec, uint64_t *group);
    int (*hooks_remove)(cushim_plugin *self, uint64_t group);
    /* Returns once no thread runs a hook removed before the call: its 'user'
       data and code may then be freed. CUSHIM_ESTATE from inside a hook. */
    int (*hooks_sync)(void);

    /* The real function of an API, resolved now; NULL if the library lacks it.
       Calling it never enters hooks (and is not counted). Any thread. */
    void *(*real)(uint32_t api_id);

    /* This thread, a cheap monotonic clock, the innermost hooked call in progress. */
    uint64_t (*thread_id)(void);
    uint64_t (*now_ns)(void);
    const cushim_call *(*current_call)(void);

    /* Per-thread storage for plugins: one pointer per key per thread. The
       destructor runs at thread exit for non-NULL values. */
    int (*tls_create)(cushim_plugin *self, void (*destructor)(void *), uint32_t *key);
    void *(*tls_get)(uint32_t key);
    int (*tls_set)(uint32_t key, void *value);

    /* Logging through the host's log (CUSHIM_LOG, CUSHIM_LOG_FILE), one line,
       prefixed with the plugin's name. */
    void (*log)(cushim_plugin *self, int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
    int (*log_enabled)(int level);

    /* Options (validated before init): the given value, else the default.
       A name not declared: NULL / 0 and a log line. */
    const char *(*opt_string)(cushim_plugin *self, const char *name);
    int64_t (*opt_int)(cushim_plugin *self, const char *name);
    int (*opt_bool)(cushim_plugin *self, const char *name);
    double (*opt_double)(cushim_plugin *self, const char *name);
    uint64_t (*opt_bytes)(cushim_plugin *self, const char *name);
    uint32_t (*opt_count)(cushim_plugin *self, const char *name);   /* times given  */
    const char *(*opt_string_at)(cushim_plugin *self, const char *name, uint32_t index);
    int (*opt_given)(cushim_plugin *self, const char *name);        /* 1 if given   */

    /* The environment, secure-execution aware: in a setuid/setgid/capability
       program (AT_SECURE) env_path() returns NULL for every variable, since
       plugins must never open a file or load code named by the environment there. */
    const char *(*env)(const char *name);        /* getenv                       */
    const char *(*env_path)(const char *name);   /* secure_getenv semantics      */
    int (*secure)(void);                         /* 1 in secure-execution mode   */

    /* The plugin's own record. */
    const char *(*plugin_name)(const cushim_plugin *self);
    void (*plugin_set_data)(cushim_plugin *self, void *data);
    void *(*plugin_data)(const cushim_plugin *self);

    /* Register a plugin whose definition is already in memory (a program
       configuring the shim in-process, tests). 'options' uses the
       CUSHIM_PLUGINS option syntax ("key=value,key=value", '\' escapes).
       Runs init now. CUSHIM_OK, or an error with a reason in 'err'. */
    int (*plugin_register)(const cushim_plugin_def *def, const char *options, cushim_plugin **self,
                           char *err, size_t errlen);

    /* ---- type metadata (docs/plugin-sdk.md "Type metadata") ---- */
    /* An enum by its typedef name ("CUmemorytype", "cudaMemcpyKind") or tag
       ("enum CUmemorytype_enum"); NULL if the headers have none. */
    const cushim_enum_info *(*enum_by_name)(const char *type_name);
    /* "CU_MEMORYTYPE_DEVICE" for (CUmemorytype, 2); NULL when not a named value
       (the first name in header order when several share the value), or when 'e'
       is not one of the host's tables. */
    const char *(*enum_value_name)(const cushim_enum_info *e, int64_t value);
    /* Any enumerator of the headers by name ("cudaMemcpyHostToDevice"): its value
       and (if 'type' is not NULL) its enum. CUSHIM_OK, or CUSHIM_ENOMATCH. */
    int (*enum_constant)(const char *constant_name, int64_t *value, const cushim_enum_info **type);
    /* A struct the overlay lists, by typedef name ("CUDA_MEMCPY2D", "dim3"); NULL if not listed. */
    const cushim_struct_info *(*struct_by_name)(const char *type_name);

    /* ---- calling any real function without its prototype (the lua plugin) ---- */
    /* Calls the real function of 'api_id' (what real(api_id) returns) with the
       arguments in 'params', a cushim_params_<name> laid out as the metadata
       says (info->params_size bytes, offsets in api_param), and stores its
       return value in 'retval' (info->ret_size bytes). Never enters hooks and
       is not counted; a runtime function's own driver calls are hooked unless
       the caller is inside a hook. Any thread. CUSHIM_OK; CUSHIM_EINVAL for an
       unknown id or NULL pointers; CUSHIM_ENOENT if the library lacks it. */
    int (*call_real)(uint32_t api_id, void *params, void *retval);

    /* ---- allocation roles (the memlimit plugin) ---- */
    /* The allocation role of an API (cushim_meta.h), NULL if it has none. */
    const cushim_alloc_role *(*alloc_role)(uint32_t api_id);

    /* ---- 1.1: metadata arrays read by index ----
       'cushim_field_info' and 'cushim_enum_value' are array elements whose size may grow in a later minor
       release (fields appended): read them through these, never s->fields[i] or e->values[i] (the compile-time
       size as the stride would read the wrong element once the host's is larger). cushim_struct_field and
       cushim_enum_value_at below call them, and index directly on a 1.0 host, whose arrays have the 1.0 layout. */
    /* Field 'index' (0..s->nfields-1) of a struct the host described; NULL past the end or for NULL 's'. */
    const cushim_field_info *(*struct_field)(const cushim_struct_info *s, uint32_t index);
    /* Value 'index' (0..e->nvalues-1) of an enum the host described; NULL past the end or for NULL 'e'. */
    const cushim_enum_value *(*enum_value_at)(const cushim_enum_info *e, uint32_t index);

    /* ---- 1.2: calling any API as the program does (the remoting's back end) ---- */
    /* Calls API 'api_id' as the program's own call goes: through the shim's exported function, so every
       plugin's hooks run and the call is counted, then the real function; 'params' and 'retval' as for
       call_real. Made inside a hook, it is a CUDA call made inside a hook (not hooked again). Driver and
       runtime APIs. CUSHIM_OK (the API's own result is in 'retval'); CUSHIM_EINVAL for an unknown id, an API
       of another library, or NULL pointers. */
    int (*call)(uint32_t api_id, void *params, void *retval);
};

/* A struct's field and an enum's value by index, on any host of this major (see struct_field above). */
static inline const cushim_field_info *cushim_struct_field(const cushim_host *host, const cushim_struct_info *s,
                                                           uint32_t index)
{
    if (CUSHIM_HOST_HAS(host, struct_field) && host->struct_field != NULL)
        return host->struct_field(s, index);
    return s != NULL && index < s->nfields ? &s->fields[index] : NULL;
}

static inline const cushim_enum_value *cushim_enum_value_at(const cushim_host *host, const cushim_enum_info *e,
                                                            uint32_t index)
{
    if (CUSHIM_HOST_HAS(host, enum_value_at) && host->enum_value_at != NULL)
        return host->enum_value_at(e, index);
    return e != NULL && index < e->nvalues ? &e->values[index] : NULL;
}

/*
 * For a program (not a plugin) that wants the host in-process: the shim
 * exports this one function. Find it with dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME)
 * (preload mode) or on the drop-in's handle. Returns NULL when 'abi_version'
 * is not served (another major, or newer than the host).
 */
typedef const cushim_host *(*cushim_host_get_fn)(uint32_t abi_version);
#define CUSHIM_HOST_GET_NAME "cushim_host_get"

#ifdef __cplusplus
}
#endif
#endif /* CUSHIM_H */
