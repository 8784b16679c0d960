/*
 * ml_size.c - sizes, devices and results of allocating calls, from the
 * generated allocation roles (ml_size.h). The descriptor layouts (array
 * descriptors, allocation properties, graph node parameters, extents) are the
 * CUDA headers' own types, included through the generated params header.
 */
#include "ml_size.h"

#include <string.h>

#include "cushim_params.h"

static const cushim_param_info *ml_p(const cushim_host *h, const cushim_call *c, int i)
{
    const cushim_api_info *info = c->info;
    if (i < 0 || info == NULL || (uint32_t)i >= info->nparams)
        return NULL;
    return h->api_param(info, (uint32_t)i);
}

uint64_t ml_arg(const cushim_host *h, const cushim_call *c, int i)
{
    const cushim_param_info *p = ml_p(h, c, i);
    uint64_t v = 0;
    if (p == NULL || p->size > sizeof v)
        return 0;
    memcpy(&v, (const char *)c->params + p->offset, p->size);   /* little-endian */
    return v;
}

static const void *ml_argp(const cushim_host *h, const cushim_call *c, int i)
{
    return (const void *)(uintptr_t)ml_arg(h, c, i);
}

uint64_t ml_arg_deref(const cushim_host *h, const cushim_call *c, int i)
{
    const cushim_param_info *p = ml_p(h, c, i);
    const void *ptr = ml_argp(h, c, i);
    uint64_t v = 0;
    size_t n;
    if (p == NULL || ptr == NULL)
        return 0;
    n = p->elem_size && p->elem_size <= 8 ? p->elem_size : 8;
    memcpy(&v, ptr, n);
    return v;
}

void ml_arg_store(const cushim_host *h, const cushim_call *c, int i, uint64_t v)
{
    const cushim_param_info *p = ml_p(h, c, i);
    void *ptr = (void *)(uintptr_t)ml_arg(h, c, i);
    size_t n;
    if (p == NULL || ptr == NULL)
        return;
    n = p->elem_size && p->elem_size <= 8 ? p->elem_size : 8;
    memcpy(ptr, &v, n);
}

static uint64_t ml_max1(uint64_t v)
{
    return v ? v : 1;
}

/* Bytes of one element of an array format (per channel); unknown: 4. */
static uint64_t ml_format_bytes(unsigned f)
{
    switch (f) {
    case 0x01: case 0x08: return 1;               /* (UN)SIGNED_INT8            */
    case 0x02: case 0x09: case 0x10: return 2;    /* (UN)SIGNED_INT16, HALF     */
    case 0x03: case 0x0a: case 0x20: return 4;    /* (UN)SIGNED_INT32, FLOAT    */
    default: return 4;
    }
}

static uint64_t ml_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t ml_levels(uint64_t w, uint64_t hgt, uint64_t d, uint64_t levels, uint64_t elem, int has_h, int has_d)
{
    uint64_t sum = 0;
    if (levels == 0)
        levels = 1;
    for (uint64_t l = 0; l < levels && l < 64; l++) {
        uint64_t lw = ml_max1(w >> l), lh = has_h ? ml_max1(hgt >> l) : 1, ld = has_d ? ml_max1(d >> l) : 1;
        sum += ml_mul(ml_mul(ml_mul(lw, lh), ld), elem);
        if (lw == 1 && lh == 1 && ld == 1)
            break;
    }
    return sum;
}

static uint64_t ml_chan_bytes(const struct cudaChannelFormatDesc *d)
{
    int bits;
    if (d == NULL)
        return 0;
    bits = (d->x > 0 ? d->x : 0) + (d->y > 0 ? d->y : 0) + (d->z > 0 ? d->z : 0) + (d->w > 0 ? d->w : 0);
    return bits > 0 ? (uint64_t)(bits + 7) / 8 : 4;
}

static struct cudaExtent ml_extent(const cushim_host *h, const cushim_call *c, int i)
{
    const cushim_param_info *p = ml_p(h, c, i);
    struct cudaExtent e;
    memset(&e, 0, sizeof e);
    if (p != NULL && p->size == sizeof e)
        memcpy(&e, (const char *)c->params + p->offset, sizeof e);
    return e;
}

uint64_t ml_role_size(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r, int after)
{
    const int8_t *s = r->size_arg;
    switch (r->size_rule) {
    case CUSHIM_SIZE_PARAM:
        return ml_arg(h, c, s[0]);
    case CUSHIM_SIZE_PRODUCT:
        return ml_mul(ml_arg(h, c, s[0]), ml_arg(h, c, s[1]));
    case CUSHIM_SIZE_PITCH:
        return ml_mul(after ? ml_arg_deref(h, c, s[0]) : ml_arg(h, c, s[1]), ml_max1(ml_arg(h, c, s[2])));
    case CUSHIM_SIZE_ARRAY: {
        const CUDA_ARRAY_DESCRIPTOR *d = ml_argp(h, c, s[0]);
        if (d == NULL)
            return 0;
        return ml_mul(ml_mul(d->Width, ml_max1(d->Height)), ml_mul(d->NumChannels, ml_format_bytes(d->Format)));
    }
    case CUSHIM_SIZE_ARRAY3D:
    case CUSHIM_SIZE_MIPMAP: {
        const CUDA_ARRAY3D_DESCRIPTOR *d = ml_argp(h, c, s[0]);
        uint64_t elem, levels = r->size_rule == CUSHIM_SIZE_MIPMAP ? ml_arg(h, c, s[1]) : 1;
        if (d == NULL)
            return 0;
        elem = ml_mul(ml_max1(d->NumChannels), ml_format_bytes(d->Format));
        return ml_levels(d->Width, d->Height, d->Depth, levels, elem, d->Height != 0, d->Depth != 0);
    }
    case CUSHIM_SIZE_EXTENT: {
        struct cudaExtent e = ml_extent(h, c, s[0]);
        return ml_mul(ml_mul(e.width, ml_max1(e.height)), ml_max1(e.depth));
    }
    case CUSHIM_SIZE_PITCH3D: {
        struct cudaExtent e = ml_extent(h, c, s[1]);
        const struct cudaPitchedPtr *pp = ml_argp(h, c, s[0]);
        uint64_t w = after && pp != NULL ? pp->pitch : e.width;
        return ml_mul(ml_mul(w, ml_max1(e.height)), ml_max1(e.depth));
    }
    case CUSHIM_SIZE_CHAN2D:
        return ml_mul(ml_mul(ml_arg(h, c, s[1]), ml_max1(ml_arg(h, c, s[2]))),
                      ml_chan_bytes(ml_argp(h, c, s[0])));
    case CUSHIM_SIZE_CHAN3D:
    case CUSHIM_SIZE_CHANMIP: {
        struct cudaExtent e = ml_extent(h, c, s[1]);
        uint64_t levels = r->size_rule == CUSHIM_SIZE_CHANMIP ? ml_arg(h, c, s[2]) : 1;
        return ml_levels(e.width, e.height, e.depth, levels, ml_chan_bytes(ml_argp(h, c, s[0])), e.height != 0,
                         e.depth != 0);
    }
    case CUSHIM_SIZE_NODE:
        if (c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME) {
            const struct cudaMemAllocNodeParams *n = ml_argp(h, c, s[0]);
            return n ? n->bytesize : 0;
        } else {
            const CUDA_MEM_ALLOC_NODE_PARAMS *n = ml_argp(h, c, s[0]);
            return n ? n->bytesize : 0;
        }
    default:
        return 0;
    }
}

int ml_role_prop_device(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r)
{
    int type, id;
    if (r->dev_rule == CUSHIM_DEV_PROP) {
        const CUmemAllocationProp *p = ml_argp(h, c, r->dev_arg);
        if (p == NULL)
            return -1;
        type = (int)p->location.type;
        id = p->location.id;
    } else if (c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME) {
        const struct cudaMemAllocNodeParams *n = ml_argp(h, c, r->dev_arg);
        if (n == NULL)
            return -1;
        type = (int)n->poolProps.location.type;
        id = n->poolProps.location.id;
    } else {
        const CUDA_MEM_ALLOC_NODE_PARAMS *n = ml_argp(h, c, r->dev_arg);
        if (n == NULL)
            return -1;
        type = (int)n->poolProps.location.type;
        id = n->poolProps.location.id;
    }
    /* CU_MEM_LOCATION_TYPE_DEVICE and cudaMemLocationTypeDevice are both 1 */
    if (type == (int)CU_MEM_LOCATION_TYPE_DEVICE)
        return id >= 0 ? id : -1;
    return type == 0 ? -1 : -2;
}

uint64_t ml_role_out(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r)
{
    if (r->size_rule == CUSHIM_SIZE_NODE && r->action == CUSHIM_ROLE_ALLOC) {
        if (c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME) {
            const struct cudaMemAllocNodeParams *n = ml_argp(h, c, r->out_arg);
            return n ? (uint64_t)(uintptr_t)n->dptr : 0;
        } else {
            const CUDA_MEM_ALLOC_NODE_PARAMS *n = ml_argp(h, c, r->out_arg);
            return n ? (uint64_t)n->dptr : 0;
        }
    }
    if (r->size_rule == CUSHIM_SIZE_PITCH3D) {
        const struct cudaPitchedPtr *pp = ml_argp(h, c, r->out_arg);
        return pp ? (uint64_t)(uintptr_t)pp->ptr : 0;
    }
    return ml_arg_deref(h, c, r->out_arg);
}

int ml_arg_is_handle(const cushim_host *h, const cushim_api_info *info, int i)
{
    const cushim_param_info *p;
    if (i < 0 || info == NULL || (uint32_t)i >= info->nparams)
        return 0;
    p = h->api_param(info, (uint32_t)i);
    return p != NULL && p->type != NULL && strstr(p->type, "GenericAllocationHandle") != NULL;
}
