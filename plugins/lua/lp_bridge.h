/*
 * lp_bridge.h - what the bridge's files (lp_values.c, lp_call.c, lp_bridge.c)
 * share: parameter descriptors and the conversions between C and Lua values.
 */
#ifndef LP_BRIDGE_H
#define LP_BRIDGE_H

#include "lp_internal.h"

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

/* lp_values.c */
int lp_has_types(void) LP_HIDDEN;
uint8_t lp_conv_of_type(const char *ct, size_t len) LP_HIDDEN;
const lp_pdesc *lp_desc(const cushim_api_info *info) LP_HIDDEN;
void lp_push_result(lua_State *L, uint32_t kind, int32_t code) LP_HIDDEN;
int lp_const_value(lua_State *L, const char *name, lua_Integer *out) LP_HIDDEN;
void lp_push_mem(lua_State *L, const void *p, uint8_t conv, uint8_t size) LP_HIDDEN;
int lp_store_mem(lua_State *L, int idx, void *p, uint8_t conv, uint8_t size) LP_HIDDEN;
int lp_param_index(const cushim_api_info *info, const char *key) LP_HIDDEN;
void lp_push_enum(lua_State *L, const cushim_enum_info *e) LP_HIDDEN;
void lp_push_param(lua_State *L, lp_proxy *px, const cushim_api_info *info, const lp_pdesc *d, void *params,
                   int i) LP_HIDDEN;

/* Whether the driver has vouched for the memory behind this call's pointers: in an after hook of a call that
   succeeded and was not skipped, it read the inputs and wrote the outputs. Elsewhere (a before hook, a call
   that failed) a pointer may point at memory that cannot be read - the driver would have refused it with an
   error - and the program's bytes are read through cushim_read_mem (lp_values.c). Decided as the after stage
   starts (lp_state.c): a hook that sets call.result = "CUDA_SUCCESS" on a failed call vouches for nothing. */
static inline int lp_trusted(const lp_proxy *px, const cushim_api_info *info)
{
    (void)info;
    return px->vouched;
}
/* The NUL-terminated string at 's' (at most 'max' bytes of it) read without a fault; nil where memory that
   cannot be read comes before its end. */
void lp_push_cstr(lua_State *L, const char *s, size_t max) LP_HIDDEN;

/* Reads parameter i: the common kinds (a number, or one read through an output pointer the driver wrote)
   here, the others (struct views, enums by name, character buffers, reads the driver did not vouch for) by
   lp_push_param. */
static inline void lp_push_param_inl(lua_State *L, lp_proxy *px, const cushim_api_info *info, const lp_pdesc *d,
                                     void *params, int i)
{
    const lp_pdesc *e = &d[i];
    const char *at = (const char *)params + e->offset;
    uint8_t conv = e->conv, size = e->size;
    if (e->stype != NULL || e->etype != NULL || (e->deref && (e->pconv == LC_CHARBUF || !lp_trusted(px, info)))) {
        lp_push_param(L, px, info, d, params, i);
        return;
    }
    if (e->deref) {
        at = *(const char *const *)at;
        if (at == NULL) {
            lua_pushnil(L);
            return;
        }
        conv = e->pconv;
        size = e->psize;
    }
    if (size == 8 && (conv == LC_INT || conv == LC_UINT))
        lua_pushinteger(L, (lua_Integer) * (const int64_t *)at);
    else
        lp_push_mem(L, at, conv, size);
}

/* lp_call.c */
void lp_push_sview(lua_State *L, lp_proxy *px, unsigned char *base, const cushim_struct_info *si,
                   int writable) LP_HIDDEN;
void lp_push_api(lua_State *L, const cushim_api_info *info) LP_HIDDEN;
int lp_f_api(lua_State *L) LP_HIDDEN;
void lp_call_metatables(lua_State *L) LP_HIDDEN;

#endif /* LP_BRIDGE_H */
