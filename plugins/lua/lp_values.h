/*
 * lp_values.h - C values <-> Lua values (lp_values.c): parameter descriptors, numbers, strings,
 * results and enums by name, named constants.
 */
#ifndef LP_VALUES_H
#define LP_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "lp_engine.h"
#include "lp_load.h"

enum { LC_NONE, LC_INT, LC_UINT, LC_FLOAT, LC_DOUBLE, LC_STRING, LC_CHARBUF };

typedef struct lp_pdesc {
    uint8_t conv, size;     /* the parameter's own value                         */
    uint8_t deref;          /* an output pointer read/written through            */
    uint8_t pconv, psize;   /* the pointee's conversion                          */
    const cushim_enum_info *etype;     /* values shown by name (type metadata)   */
    const cushim_struct_info *stype;   /* a struct by value, or pointed to      */
    uint8_t sptr;                      /* stype is pointed to (read-only)        */
    uint32_t offset;                   /* in the call's parameter block          */
} lp_pdesc;

int lp_has_types(void) LP_HIDDEN;
uint8_t lp_conv_of_type(const char *ct, size_t len) LP_HIDDEN;
const lp_pdesc *lp_desc(const cushim_api_info *info) LP_HIDDEN;
void lp_push_result(lua_State *L, uint32_t kind, int32_t code) LP_HIDDEN;
int lp_const_value(lua_State *L, const char *name, lua_Integer *out) LP_HIDDEN;
void lp_push_mem(lua_State *L, const void *p, uint8_t conv, uint8_t size) LP_HIDDEN;
int lp_store_mem(lua_State *L, int idx, void *p, uint8_t conv, uint8_t size) LP_HIDDEN;
int lp_param_index(const cushim_api_info *info, const char *key) LP_HIDDEN;
void lp_push_enum(lua_State *L, const cushim_enum_info *e) LP_HIDDEN;

/* Whether the driver has vouched for the memory behind this call's pointers: in an after hook of a call that
   succeeded and was not skipped, it read the inputs and wrote the outputs. Elsewhere (a before hook, a call
   that failed) a pointer may point at memory that cannot be read - the driver would have refused it with an
   error - and the program's bytes are read through cushim_read_mem (lp_values.c). Decided as the after stage
   starts (lp_hooks.c): a hook that sets call.result = "CUDA_SUCCESS" on a failed call vouches for nothing. */
static inline int lp_trusted(const lp_proxy *px, const cushim_api_info *info)
{
    (void)info;
    return px->vouched;
}
/* The NUL-terminated string at 's' (at most 'max' bytes of it) read without a fault; nil where memory that
   cannot be read comes before its end. */
void lp_push_cstr(lua_State *L, const char *s, size_t max) LP_HIDDEN;

#define LP_STR_MAX ((size_t)1 << 20)   /* a string parameter's bytes read at most (longer: this prefix) */
/* 'n' of the program's bytes at 'p' into 'dst' (n <= 8) where the driver did not vouch for them: 1, or 0 where
   they cannot be read. */
int lp_read_in(void *dst, const void *p, size_t n) LP_HIDDEN;
int lp_values_init(void) LP_HIDDEN;   /* at init, one thread */
int lp_result_code(lua_State *L, int idx, uint32_t ret_kind, int32_t *code) LP_HIDDEN;
/* cushim_mem_readable, kept in one file (lp_values.c): each file that calls cushim_io.h's safe reads has its own
   copy of their thread-local state, and the plugins' static TLS is budgeted (ctest plugin_tls_budget). */
int lp_mem_readable(const void *p, size_t n) LP_HIDDEN;
int lp_code_of(lua_State *L, int idx, uint32_t ret_kind, int32_t *code, char *err, size_t errlen) LP_HIDDEN;
const char *lp_result_name(uint32_t kind, int32_t code) LP_HIDDEN;

#endif /* LP_VALUES_H */
