/*
 * lp_params.h - a call's parameters read for Lua (lp_params.c): numbers, pointers read through,
 * character buffers, enums by name, and struct views (call.config.gridDimX).
 */
#ifndef LP_PARAMS_H
#define LP_PARAMS_H

#include "lp_engine.h"
#include "lp_load.h"
#include "lp_values.h"

void lp_push_param(lua_State *L, lp_proxy *px, const cushim_api_info *info, const lp_pdesc *d, void *params,
                   int i) LP_HIDDEN;
void lp_push_sview(lua_State *L, lp_proxy *px, unsigned char *base, const cushim_struct_info *si,
                   int writable) LP_HIDDEN;
void lp_sview_metatable(lua_State *L) LP_HIDDEN;   /* the struct views' metatable (once per state) */

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

#endif /* LP_PARAMS_H */
