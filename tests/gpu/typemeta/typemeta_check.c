/*
 * typemeta_check.c - GPU check of the type metadata (tests/gpu/checks/typemeta.sh).
 * Run with LD_PRELOAD=libcushim.so on the GPU machine, built against that machine's
 * CUDA headers:
 *  1. every field of every listed struct (generated/cuda-13.0/cushim_types_check.h, laid
 *     out in typemeta_layouts.c) sits where the shim's tables (host->struct_by_name) say, by offsetof() here;
 *  2. a hook decodes a real cuMemcpy2D's CUDA_MEMCPY2D through the metadata only
 *     (param struct_type, field offsets, enum_value_name) and finds what was passed;
 *  3. a post hook reads cuGraphGetNodes' element count behind its pointer
 *     (count_param + count_indirect) and finds the graph's node count.
 * Prints 'PASS name detail' / 'FAIL name detail' lines; exit status 0 iff all pass.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "cushim/cushim.h"
#include "typemeta_layouts.h"

static const cushim_host *host;
static int failures;

static void report(int ok, const char *name, const char *detail)
{
    printf("%s %s %s\n", ok ? "PASS" : "FAIL", name, detail);
    failures += !ok;
}


static void check_layouts(void)
{
    int fields = 0, bad = 0;
    char d[256] = "";
    for (const struct tm_layout *l = tm_layouts; l->name; l++) {
        const cushim_struct_info *s = host->struct_by_name(l->name);
        const cushim_field_info *f = NULL;
        if (!s) {
            snprintf(d, sizeof d, "struct %s missing from the shim", l->name);
            bad++;
            continue;
        }
        if (!l->field) {
            if (s->size != l->size) {
                snprintf(d, sizeof d, "sizeof %s: shim %u, here %zu", l->name, s->size, l->size);
                bad++;
            }
            continue;
        }
        for (uint32_t i = 0; i < s->nfields; i++)
            if (!strcmp(s->fields[i].name, l->field))
                f = &s->fields[i];
        fields++;
        if (!f || f->offset != l->offset || f->size != l->size) {
            snprintf(d, sizeof d, "%s.%s: shim %u/%u, here offsetof %zu size %zu", l->name, l->field,
                     f ? f->offset : 0, f ? f->size : 0, l->offset, l->size);
            bad++;
        }
    }
    if (!bad)
        snprintf(d, sizeof d, "%d fields of the listed structs match offsetof() of this machine's headers", fields);
    report(!bad && fields > 100, "layouts", d);
}

/* What the hooks decoded. */
static char seen_src[64], seen_dst[64];
static size_t seen_width, seen_height;
static long long seen_count = -1;

static const cushim_param_info *param_named(const cushim_api_info *a, const char *name, int *index)
{
    for (uint32_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = host->api_param(a, i);
        if (!strcmp(p->name, name)) {
            if (index)
                *index = (int)i;
            return p;
        }
    }
    return NULL;
}

static const cushim_field_info *field_named(const cushim_struct_info *s, const char *name)
{
    for (uint32_t i = 0; s && i < s->nfields; i++)
        if (!strcmp(s->fields[i].name, name))
            return &s->fields[i];
    return NULL;
}

/* Generic: the first STRUCT-pointee parameter, decoded by its descriptor. */
static int pre_memcpy2d(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    for (uint32_t i = 0; i < call->info->nparams; i++) {
        const cushim_param_info *p = host->api_param(call->info, i);
        const cushim_struct_info *s = p->struct_type;
        const unsigned char *st;
        const cushim_field_info *f;
        if (p->kind != CUSHIM_KIND_POINTER || p->pointee != CUSHIM_KIND_STRUCT || !s)
            continue;
        st = *(const unsigned char *const *)((const char *)call->params + p->offset);
        if (!st)
            return CUSHIM_CONTINUE;
        if ((f = field_named(s, "srcMemoryType")) && f->enum_type) {
            int v;
            memcpy(&v, st + f->offset, sizeof v);
            snprintf(seen_src, sizeof seen_src, "%s", host->enum_value_name(f->enum_type, v) ?: "?");
        }
        if ((f = field_named(s, "dstMemoryType")) && f->enum_type) {
            int v;
            memcpy(&v, st + f->offset, sizeof v);
            snprintf(seen_dst, sizeof seen_dst, "%s", host->enum_value_name(f->enum_type, v) ?: "?");
        }
        if ((f = field_named(s, "WidthInBytes")) && f->size == sizeof(size_t))
            memcpy(&seen_width, st + f->offset, sizeof seen_width);
        if ((f = field_named(s, "Height")) && f->size == sizeof(size_t))
            memcpy(&seen_height, st + f->offset, sizeof seen_height);
    }
    return CUSHIM_CONTINUE;
}

static void post_getnodes(cushim_call *call, void *user, uint64_t *slot)
{
    const cushim_param_info *p = param_named(call->info, "nodes", NULL), *c;
    const void *cp;
    (void)user, (void)slot;
    if (!p || p->count_param < 0 || !p->count_indirect || cushim_call_result(call) != 0)
        return;
    c = host->api_param(call->info, (uint32_t)p->count_param);
    cp = *(const void *const *)((const char *)call->params + c->offset);
    if (!cp)
        return;
    if (c->elem_size == 8) {
        unsigned long long n;
        memcpy(&n, cp, sizeof n);
        seen_count = (long long)n;
    } else if (c->elem_size == 4) {
        unsigned n;
        memcpy(&n, cp, sizeof n);
        seen_count = n;
    }
}

static int tm_init(const cushim_host *h, cushim_plugin *self)
{
    cushim_hook_spec a = {sizeof a, 0, "base:cuMemcpy2D", 0, 0, pre_memcpy2d, NULL, NULL};
    cushim_hook_spec b = {sizeof b, 0, "base:cuGraphGetNodes", 0, 0, NULL, post_getnodes, NULL};
    uint64_t g;
    if (h->hooks_add(self, &a, &g) != CUSHIM_OK || h->hooks_add(self, &b, &g) != CUSHIM_OK)
        return 1;
    return 0;
}

static const cushim_plugin_def tm_def = {sizeof(cushim_plugin_def), CUSHIM_ABI_VERSION, "typemeta", "1",
                                         "type metadata GPU check", NULL, tm_init, NULL, NULL};

#define CK(x)                                                            \
    do {                                                                 \
        CUresult r_ = (x);                                               \
        if (r_ != CUDA_SUCCESS) {                                        \
            snprintf(d, sizeof d, "%s failed: %d", #x, (int)r_);         \
            report(0, "cuda", d);                                        \
            return 1;                                                    \
        }                                                                \
    } while (0)

int main(void)
{
    cushim_host_get_fn get = (cushim_host_get_fn)(uintptr_t)dlsym(RTLD_DEFAULT, CUSHIM_HOST_GET_NAME);
    cushim_plugin *self = NULL;
    char err[256] = "", d[256];
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr dptr;
    static unsigned char hostbuf[256 * 4];
    CUDA_MEMCPY2D cp;
    CUgraph graph;
    CUgraphNode nodes[3], got[8];
    size_t n = 0;

    host = get ? get(CUSHIM_ABI_VERSION) : NULL;
    if (!host || !CUSHIM_HOST_HAS(host, struct_by_name)) {
        report(0, "host", "no cushim host with the type metadata slots (is LD_PRELOAD set?)");
        return 1;
    }
    check_layouts();
    {
        int64_t v = -1;
        const cushim_enum_info *e = NULL;
        int ok = host->enum_constant("CU_MEMORYTYPE_DEVICE", &v, &e) == CUSHIM_OK && v == CU_MEMORYTYPE_DEVICE &&
                 e == host->enum_by_name("CUmemorytype") &&
                 !strcmp(host->enum_value_name(host->enum_by_name("CUresult"), CUDA_ERROR_OUT_OF_MEMORY) ?: "",
                         "CUDA_ERROR_OUT_OF_MEMORY");
        report(ok, "enums", "CU_MEMORYTYPE_DEVICE and CUDA_ERROR_OUT_OF_MEMORY by name and value");
    }
    if (host->plugin_register(&tm_def, NULL, &self, err, sizeof err) != CUSHIM_OK) {
        report(0, "register", err);
        return 1;
    }
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc(&dptr, sizeof hostbuf));
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_HOST;
    cp.srcHost = hostbuf;
    cp.srcPitch = 256;
    cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.dstDevice = dptr;
    cp.dstPitch = 256;
    cp.WidthInBytes = 200;
    cp.Height = 4;
    CK(cuMemcpy2D(&cp));
    snprintf(d, sizeof d, "decoded src %s dst %s width %zu height %zu", seen_src, seen_dst, seen_width, seen_height);
    report(!strcmp(seen_src, "CU_MEMORYTYPE_HOST") && !strcmp(seen_dst, "CU_MEMORYTYPE_DEVICE") && seen_width == 200 &&
               seen_height == 4,
           "memcpy2d", d);
    CK(cuGraphCreate(&graph, 0));
    for (int i = 0; i < 3; i++)
        CK(cuGraphAddEmptyNode(&nodes[i], graph, NULL, 0));
    n = 8;
    CK(cuGraphGetNodes(graph, got, &n));
    snprintf(d, sizeof d, "count read behind the pointer: %lld (driver says %zu)", seen_count, n);
    report(seen_count == 3 && n == 3, "graph-count", d);
    cuGraphDestroy(graph);
    cuMemFree(dptr);
    cuDevicePrimaryCtxRelease(dev);
    return failures ? 1 : 0;
}
