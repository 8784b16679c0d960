/*
 * cushim.h - the call frame and hook registration of the cushim dispatch core.
 *
 * Every interposed CUDA function builds a 'cushim_call' when at least one hook
 * is enabled for it, runs the pre hooks in priority order, calls the real
 * function (unless a pre hook skipped it), then runs the post hooks in reverse
 * order. Hooks registered here are the building block of the plugin SDK.
 *
 * The functions below are exported by libcushim.so (the only non-CUDA exports
 * besides dlsym/dlvsym). A program can reach them with
 * dlsym(RTLD_DEFAULT, "cushim_hook_add") when the shim is preloaded.
 */
#ifndef CUSHIM_H
#define CUSHIM_H

#include <stdint.h>
#include "cushim_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUSHIM_ABI_MAJOR 0
#define CUSHIM_ABI_MINOR 1
#define CUSHIM_ABI_VERSION ((CUSHIM_ABI_MAJOR << 16) | CUSHIM_ABI_MINOR)

/* Return codes of the hook API (not CUDA codes). */
#define CUSHIM_OK 0
#define CUSHIM_EINVAL (-1)    /* bad argument: unknown API id, NULL callbacks */
#define CUSHIM_ENOMEM (-2)
#define CUSHIM_ELIMIT (-3)    /* too many hooks on one API (CUSHIM_MAX_HOOKS) */
#define CUSHIM_ENOENT (-4)    /* no such hook handle */

#define CUSHIM_MAX_HOOKS 32   /* per API */

/* What a pre hook returns. */
#define CUSHIM_CONTINUE 0     /* go on: next pre hook, then the real call  */
#define CUSHIM_SKIP 1         /* do not call the real function; the hook has
                                 written the result into call->retval      */

/* One interposed call, alive from the first pre hook to the last post hook. */
typedef struct cushim_call {
    uint32_t api_id;                /* CUSHIM_API_<name>                      */
    uint32_t flags;                 /* CUSHIM_CALL_* bits                     */
    const cushim_api_info *info;    /* metadata: name, parameters, ...        */
    void *params;                   /* cushim_params_<name> *: may be modified
                                       by pre hooks; read by post hooks       */
    void *retval;                   /* points to the return value (RET)       */
    void *real;                     /* the real function about to be called   */
} cushim_call;

#define CUSHIM_CALL_SKIPPED 1u      /* a pre hook skipped the real call       */

/*
 * 'slot' is private to one hook for one call: what the pre hook stores there
 * the post hook of the same registration reads back (a correlation id, a
 * start time).
 */
typedef int (*cushim_pre_fn)(cushim_call *call, void *user, uint64_t *slot);
typedef void (*cushim_post_fn)(cushim_call *call, void *user, uint64_t *slot);

/* Convenience accessors for the common return kinds. */
static inline int cushim_call_result(const cushim_call *c) { return *(const int *)c->retval; }
static inline void cushim_call_set_result(cushim_call *c, int r) { *(int *)c->retval = r; }

/*
 * Register pre and/or post (either may be NULL, not both) on 'api_id'.
 * Lower 'priority' runs first among pre hooks (and last among post hooks).
 * On success stores a handle for cushim_hook_remove() in *handle.
 * Safe to call from any thread while other threads are inside CUDA calls.
 */
int cushim_hook_add(uint32_t api_id, int priority, cushim_pre_fn pre, cushim_post_fn post,
                    void *user, uint64_t *handle);
int cushim_hook_remove(uint64_t handle);

/* Metadata look-ups; NULL / 0 when absent from the build's CUDA version. */
const cushim_api_info *cushim_api_by_id(uint32_t api_id);
const cushim_api_info *cushim_api_by_name(const char *name);
uint32_t cushim_api_id_limit(void);   /* one past the largest id */

#ifdef __cplusplus
}
#endif
#endif /* CUSHIM_H */
