/*
 * ml_size.c - sizes, devices and results of allocating calls, from the
 * generated allocation roles (ml_size.h). The descriptor layouts (array
 * descriptors, allocation properties, graph node parameters) are read through
 * the generated struct metadata (the layout of the exact variant each API
 * takes, _v1 included), falling back to the CUDA headers' own types (through
 * the generated params header) where the host lists no such struct.
 */
#define _GNU_SOURCE   /* cushim_read_mem */
#include "ml_size.h"

#include <stddef.h>
#include <string.h>

#include <cushim/cushim_io.h>

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

/*
 * A field of the struct parameter i points to (or holds by value), by a path
 * such as "Width" or "poolProps.location.id", through the generated struct
 * metadata (param->struct_type, field offsets and sizes): the layout of the
 * very variant the API takes (CUDA_ARRAY_DESCRIPTOR_v1 for the legacy
 * cuArrayCreate, 32-bit fields). 0 when found (value zero-extended), -1 when
 * the host has no metadata for it: the callers then use the header types.
 */
static int ml_field(const cushim_host *h, const cushim_call *c, int i, const char *path, uint64_t *out)
{
    const cushim_param_info *p = ml_p(h, c, i);
    const cushim_struct_info *st;
    const char *base;
    uint32_t off = 0;
    if (p == NULL || h->sizeof_param_info < offsetof(cushim_param_info, struct_type) + sizeof(void *) ||
        (st = p->struct_type) == NULL)
        return -1;
    if (p->kind == CUSHIM_KIND_STRUCT)
        base = (const char *)c->params + p->offset;   /* by value */
    else if ((base = (const char *)(uintptr_t)ml_arg(h, c, i)) == NULL)
        return -1;
    while (st != NULL) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        const cushim_field_info *f = NULL;
        for (uint32_t k = 0; k < st->nfields; k++) {
            const cushim_field_info *fk = cushim_struct_field(h, st, k);   /* never st->fields[k] */
            if (fk != NULL && strlen(fk->name) == n && !strncmp(fk->name, path, n)) {
                f = fk;
                break;
            }
        }
        if (f == NULL)
            return -1;
        off += f->offset;
        if (dot == NULL) {
            uint64_t v = 0;
            if (f->size > sizeof v || f->array_len)
                return -1;
            memcpy(&v, base + off, f->size);
            *out = v;
            return 0;
        }
        st = f->struct_type;
        path = dot + 1;
    }
    return -1;
}

/* ml_field, or 'fallback' (the build's header layout) when the metadata has none. */
static uint64_t ml_fld(const cushim_host *h, const cushim_call *c, int i, const char *path, uint64_t fallback)
{
    uint64_t v;
    return ml_field(h, c, i, path, &v) == 0 ? v : fallback;
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
    case CUSHIM_SIZE_ARRAY:
    case CUSHIM_SIZE_ARRAY3D:
    case CUSHIM_SIZE_MIPMAP: {
        /* Width, Height, Depth, NumChannels, Format: metadata first (the variant's own layout) */
        static const char *const names[5] = {"Width", "Height", "Depth", "NumChannels", "Format"};
        uint64_t v[5] = {0, 0, 0, 0, 0}, levels = r->size_rule == CUSHIM_SIZE_MIPMAP ? ml_arg(h, c, s[1]) : 1;
        int meta = 1;
        if (ml_argp(h, c, s[0]) == NULL)
            return 0;
        for (int k = 0; k < 5 && meta; k++)
            if (!(k == 2 && r->size_rule == CUSHIM_SIZE_ARRAY))
                meta = ml_field(h, c, s[0], names[k], &v[k]) == 0;
        if (!meta && r->size_rule == CUSHIM_SIZE_ARRAY) {
            const CUDA_ARRAY_DESCRIPTOR *d = ml_argp(h, c, s[0]);
            v[0] = d->Width, v[1] = d->Height, v[2] = 0, v[3] = d->NumChannels, v[4] = (uint64_t)d->Format;
        } else if (!meta) {
            const CUDA_ARRAY3D_DESCRIPTOR *d = ml_argp(h, c, s[0]);
            v[0] = d->Width, v[1] = d->Height, v[2] = d->Depth, v[3] = d->NumChannels, v[4] = (uint64_t)d->Format;
        }
        return ml_levels(v[0], v[1], v[2], levels, ml_mul(ml_max1(v[3]), ml_format_bytes((unsigned)v[4])), v[1] != 0,
                         v[2] != 0);
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
        if (ml_argp(h, c, s[0]) == NULL)
            return 0;
        if (c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME) {
            const struct cudaMemAllocNodeParams *n = ml_argp(h, c, s[0]);
            return ml_fld(h, c, s[0], "bytesize", n->bytesize);
        } else {
            const CUDA_MEM_ALLOC_NODE_PARAMS *n = ml_argp(h, c, s[0]);
            return ml_fld(h, c, s[0], "bytesize", n->bytesize);
        }
    default:
        return 0;
    }
}

/* Whether the struct parameter i points to can be read: its metadata's size, else 'fallback' (the header
   type's). NULL, and a struct by value, count as readable (the readers test NULL). */
static int ml_pointee_ok(const cushim_host *h, const cushim_call *c, int i, size_t fallback)
{
    const cushim_param_info *p = ml_p(h, c, i);
    const void *ptr = ml_argp(h, c, i);
    size_t n = fallback;
    if (p == NULL || ptr == NULL || p->kind == CUSHIM_KIND_STRUCT)
        return 1;
    if (h->sizeof_param_info >= offsetof(cushim_param_info, struct_type) + sizeof(void *) &&
        p->struct_type != NULL && p->struct_type->size != 0)
        n = p->struct_type->size;
    return cushim_mem_readable(ptr, n) != 0;   /* -1: no such read on this system, read as before */
}

int ml_role_readable(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r)
{
    int rt = c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME;
    size_t node = rt ? sizeof(struct cudaMemAllocNodeParams) : sizeof(CUDA_MEM_ALLOC_NODE_PARAMS);
    int ok = 1;
    switch (r->size_rule) {
    case CUSHIM_SIZE_ARRAY:
        ok = ml_pointee_ok(h, c, r->size_arg[0], sizeof(CUDA_ARRAY_DESCRIPTOR));
        break;
    case CUSHIM_SIZE_ARRAY3D:
    case CUSHIM_SIZE_MIPMAP:
        ok = ml_pointee_ok(h, c, r->size_arg[0], sizeof(CUDA_ARRAY3D_DESCRIPTOR));
        break;
    case CUSHIM_SIZE_CHAN2D:
    case CUSHIM_SIZE_CHAN3D:
    case CUSHIM_SIZE_CHANMIP:
        ok = ml_pointee_ok(h, c, r->size_arg[0], sizeof(struct cudaChannelFormatDesc));
        break;
    case CUSHIM_SIZE_NODE:
        ok = ml_pointee_ok(h, c, r->size_arg[0], node);
        break;
    default:
        break;
    }
    if (ok && r->dev_rule == CUSHIM_DEV_PROP)
        ok = ml_pointee_ok(h, c, r->dev_arg, sizeof(CUmemAllocationProp));
    else if (ok && r->dev_rule == CUSHIM_DEV_NODE)
        ok = ml_pointee_ok(h, c, r->dev_arg, node);
    return ok;
}

int ml_role_prop_device(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r)
{
    int type, id;
    if (ml_argp(h, c, r->dev_arg) == NULL)
        return -1;
    if (r->dev_rule == CUSHIM_DEV_PROP) {
        const CUmemAllocationProp *p = ml_argp(h, c, r->dev_arg);
        type = (int)ml_fld(h, c, r->dev_arg, "location.type", (uint64_t)p->location.type);
        id = (int)ml_fld(h, c, r->dev_arg, "location.id", (uint64_t)(uint32_t)p->location.id);
    } else if (c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME) {
        const struct cudaMemAllocNodeParams *n = ml_argp(h, c, r->dev_arg);
        type = (int)ml_fld(h, c, r->dev_arg, "poolProps.location.type", (uint64_t)n->poolProps.location.type);
        id = (int)ml_fld(h, c, r->dev_arg, "poolProps.location.id", (uint64_t)(uint32_t)n->poolProps.location.id);
    } else {
        const CUDA_MEM_ALLOC_NODE_PARAMS *n = ml_argp(h, c, r->dev_arg);
        type = (int)ml_fld(h, c, r->dev_arg, "poolProps.location.type", (uint64_t)n->poolProps.location.type);
        id = (int)ml_fld(h, c, r->dev_arg, "poolProps.location.id", (uint64_t)(uint32_t)n->poolProps.location.id);
    }
    /* CU_MEM_LOCATION_TYPE_DEVICE and cudaMemLocationTypeDevice are both 1 */
    if (type == (int)CU_MEM_LOCATION_TYPE_DEVICE)
        return id >= 0 ? id : -1;
    return type == 0 ? -1 : -2;
}

uint64_t ml_role_out(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r)
{
    if (r->size_rule == CUSHIM_SIZE_NODE && r->action == CUSHIM_ROLE_ALLOC) {
        if (ml_argp(h, c, r->out_arg) == NULL)
            return 0;
        if (c->info != NULL && c->info->library == CUSHIM_LIB_RUNTIME) {
            const struct cudaMemAllocNodeParams *n = ml_argp(h, c, r->out_arg);
            return ml_fld(h, c, r->out_arg, "dptr", (uint64_t)(uintptr_t)n->dptr);
        } else {
            const CUDA_MEM_ALLOC_NODE_PARAMS *n = ml_argp(h, c, r->out_arg);
            return ml_fld(h, c, r->out_arg, "dptr", (uint64_t)n->dptr);
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
