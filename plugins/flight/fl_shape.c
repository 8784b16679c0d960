/*
 * fl_shape.c - the parameters a flight record is read by (fl_shape.h): by name and kind from the metadata, the
 * same rule in the plugin (what it copies) and in 'cushim flight dump' (how it reads the copy).
 */
#include "fl_shape.h"

#include <string.h>

static int fl_named(const char *n, const char *const *names)
{
    for (; n != NULL && *names != NULL; names++)
        if (strcmp(n, *names) == 0)
            return 1;
    return 0;
}

void fl_shape_of(const cushim_api_info *api, fl_param_fn param, fl_shape *out)
{
    static const char *const funcs[] = {"f", "hfunc", "func", "kernel", NULL};
    static const char *const args[] = {"kernelParams", "args", NULL};
    static const char *const streams[] = {"hStream", "stream", "hstream", NULL};
    out->func = out->args = out->stream = -1;
    out->driver_launch = 0;
    for (uint32_t i = 0; i < api->nparams; i++) {
        const cushim_param_info *p = param(api, i);
        if (p == NULL)
            continue;
        if (out->stream < 0 && p->kind == CUSHIM_KIND_HANDLE && fl_named(p->name, streams))
            out->stream = (int)i;
        if (!(api->categories & CUSHIM_CAT_LAUNCH))
            continue;
        if (out->func < 0 && (p->kind == CUSHIM_KIND_HANDLE || p->kind == CUSHIM_KIND_POINTER) &&
            fl_named(p->name, funcs))
            out->func = (int)i;
        if (out->args < 0 && p->kind == CUSHIM_KIND_POINTER && fl_named(p->name, args))
            out->args = (int)i;
    }
    if (out->func >= 0 && out->args >= 0 && api->library == CUSHIM_LIB_DRIVER) {
        const cushim_param_info *f = param(api, (uint32_t)out->func), *a = param(api, (uint32_t)out->args);
        out->driver_launch = f != NULL && a != NULL && f->kind == CUSHIM_KIND_HANDLE && f->size == 8 && a->size == 8;
    }
}

int fl_shape_is_addr(const cushim_api_info *api, const cushim_param_info *p)
{
    if (p->size != 8)
        return 0;
    if (p->kind == CUSHIM_KIND_DEVPTR)
        return 1;
    return p->kind == CUSHIM_KIND_POINTER && api->library == CUSHIM_LIB_RUNTIME &&
           (api->categories & (CUSHIM_CAT_COPY | CUSHIM_CAT_SET)) != 0;
}
