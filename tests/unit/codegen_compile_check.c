/*
 * codegen_compile_check.c - compile check of a generated tree: every
 * X-macro line becomes a forwarding wrapper 'RET NAME PROTO' that must
 * match the header declaration exactly, an invoker that unpacks the params
 * struct, and the procaddr table must name existing ids. Built with
 * -Wall -Wextra -Werror against generated/cuda-<X.Y> and that version's
 * headers (tests/unit/codegen.cmake).
 */
#include <stddef.h>
#include <stdint.h>

#include "cushim_params.h"
#include "cushim_api_ids.h"
#include "cushim/cushim_meta.h"

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK)                   \
    static RET(*check_real_##NAME) PROTO;                                         \
    RET NAME PROTO                                                                \
    {                                                                             \
        return check_real_##NAME ARGS;                                            \
    }                                                                             \
    static RET check_invoke_##NAME(cushim_params_##NAME *p)                       \
    {                                                                             \
        (void)p;                                                                  \
        return check_real_##NAME UNPACK;                                          \
    }                                                                             \
    static const int check_kind_##NAME = RETKIND + 0 * (ID);
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
#undef CUSHIM_API

enum { CUSHIM_PA_LEGACY = 0, CUSHIM_PA_PER_THREAD = 1 };
struct check_pa {
    const char *base;
    int flag;
    int version;
    int id;
};
#define CUSHIM_PROCADDR(BASE, FLAG, VER, ID) {BASE, FLAG, VER, ID},
const struct check_pa check_pa_table[] = {
#include "cushim_procaddr.inc"
};

/* Keep the static helpers referenced. */
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) \
    (void *)check_invoke_##NAME, (void *)&check_kind_##NAME,
void *const check_refs[] = {
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
};
#undef CUSHIM_API

extern const cushim_api_info cushim_gen_apis[];
extern const uint32_t cushim_gen_api_count;
extern const cushim_struct_info cushim_gen_structs[];
extern const uint32_t cushim_gen_struct_count;

/* Type metadata: every listed struct's size and every field's offset and size, as
   the compiler lays them out (offsetof), against what libclang gave the generator
   (cushim_types_check.h, at compile time) and what cushim_meta.c holds (at run time). */
#include <stdio.h>
#include <string.h>
#include <nvml.h>   /* NVML's listed structs (nvmlProcessInfo_*): cushim_types_check.h checks them where it is */
#if __has_include(<nccl.h>)
#include <nccl.h>   /* NCCL's (ncclUniqueId, ncclConfig_t), in the trees whose toolkit has nccl.h */
#endif
struct check_layout {
    const char *name, *field;
    size_t offset, size;
};
#define CUSHIM_STRUCT_CHECK(NAME, CTYPE, SIZE)                                              \
    _Static_assert(sizeof(CTYPE) == (SIZE), "sizeof " #NAME);
#define CUSHIM_FIELD_CHECK(NAME, CTYPE, FIELD, OFFSET, SIZE)                                \
    _Static_assert(offsetof(CTYPE, FIELD) == (OFFSET), "offsetof " #NAME "." #FIELD);      \
    _Static_assert(sizeof(((CTYPE *)0)->FIELD) == (SIZE), "sizeof " #NAME "." #FIELD);
#include "cushim_types_check.h"
#undef CUSHIM_STRUCT_CHECK
#undef CUSHIM_FIELD_CHECK
#define CUSHIM_STRUCT_CHECK(NAME, CTYPE, SIZE) {#NAME, NULL, 0, sizeof(CTYPE)},
#define CUSHIM_FIELD_CHECK(NAME, CTYPE, FIELD, OFFSET, SIZE) \
    {#NAME, #FIELD, offsetof(CTYPE, FIELD), sizeof(((CTYPE *)0)->FIELD)},
static const struct check_layout check_layouts[] = {
#include "cushim_types_check.h"
    {NULL, NULL, 0, 0}};

static int check_types(void)
{
    int bad = 0, fields = 0;
    for (const struct check_layout *l = check_layouts; l->name; l++) {
        const cushim_struct_info *s = NULL;
        for (uint32_t i = 0; i < cushim_gen_struct_count; i++)
            if (!strcmp(cushim_gen_structs[i].name, l->name))
                s = &cushim_gen_structs[i];
        if (!s) {
            fprintf(stderr, "struct %s: not in cushim_gen_structs\n", l->name);
            bad++;
            continue;
        }
        if (!l->field) {
            if (s->size != l->size) {
                fprintf(stderr, "struct %s: size %u, sizeof %zu\n", l->name, s->size, l->size);
                bad++;
            }
            continue;
        }
        {
            const cushim_field_info *f = NULL;
            for (uint32_t k = 0; k < s->nfields; k++)
                if (!strcmp(s->fields[k].name, l->field))
                    f = &s->fields[k];
            if (!f || f->offset != l->offset || f->size != l->size) {
                fprintf(stderr, "%s.%s: table %u/%u, offsetof/sizeof %zu/%zu\n", l->name, l->field,
                        f ? f->offset : 0, f ? f->size : 0, l->offset, l->size);
                bad++;
            }
            fields++;
        }
    }
    printf("type metadata: %u structs, %d fields checked against offsetof()\n", cushim_gen_struct_count, fields);
    return bad || (cushim_gen_struct_count > 0 && fields == 0);
}

/* Known values and the pointee/count examples of docs/generator.md, in every version. */
extern const cushim_enum_info cushim_gen_enums[];
extern const uint32_t cushim_gen_enum_count;

static int64_t check_enum_value(const char *type, const char *name)
{
    for (uint32_t i = 0; i < cushim_gen_enum_count; i++)
        if (!strcmp(cushim_gen_enums[i].name, type))
            for (uint32_t k = 0; k < cushim_gen_enums[i].nvalues; k++)
                if (!strcmp(cushim_gen_enums[i].values[k].name, name))
                    return cushim_gen_enums[i].values[k].value;
    return -12345;
}

static const cushim_param_info *check_param(const char *base, const char *pname)
{
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        if (!strcmp(cushim_gen_apis[i].base_name, base) && cushim_gen_apis[i].per_thread == CUSHIM_PT_NONE)
            for (uint32_t k = 0; k < cushim_gen_apis[i].nparams; k++)
                if (!strcmp(cushim_gen_apis[i].params[k].name, pname))
                    return &cushim_gen_apis[i].params[k];
    fprintf(stderr, "no %s(%s)\n", base, pname);
    return NULL;
}

#define CHECK(cond)                                               \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "check failed: %s\n", #cond);         \
            bad++;                                                \
        }                                                         \
    } while (0)

static int check_examples(void)
{
    int bad = 0;
    const cushim_param_info *p;
    CHECK(check_enum_value("CUresult", "CUDA_ERROR_OUT_OF_MEMORY") == 2);
    CHECK(check_enum_value("enum cudaMemcpyKind", "cudaMemcpyDeviceToHost") == 2);
    CHECK(check_enum_value("cudaError_t", "cudaErrorMemoryAllocation") == 2);
    CHECK(check_enum_value("CUmemorytype", "CU_MEMORYTYPE_DEVICE") == 2);
    CHECK((p = check_param("cuModuleGetFunction", "hfunc")) && p->pointee == CUSHIM_KIND_HANDLE);
    CHECK((p = check_param("cuGetErrorString", "pStr")) && p->pointee == CUSHIM_KIND_STRING);
    CHECK((p = check_param("cuMemAlloc", "dptr")) && p->pointee == CUSHIM_KIND_DEVPTR);
    CHECK((p = check_param("cuDeviceGetCount", "count")) && p->pointee == CUSHIM_KIND_SCALAR);
    CHECK((p = check_param("cuMemcpy2D", "pCopy")) && p->pointee == CUSHIM_KIND_STRUCT && p->struct_type &&
          !strncmp(p->struct_type->name, "CUDA_MEMCPY2D", 13));
    CHECK((p = check_param("cudaGetDeviceProperties", "prop")) && p->pointee == CUSHIM_KIND_STRUCT &&
          !p->struct_type);
    CHECK((p = check_param("cuMemMap", "handle")) && p->kind == CUSHIM_KIND_HANDLE);
    CHECK((p = check_param("cudaLaunchKernel", "gridDim")) && p->kind == CUSHIM_KIND_STRUCT && p->struct_type &&
          !strcmp(p->struct_type->name, "dim3"));
    CHECK((p = check_param("cuCtxGetCacheConfig", "pconfig")) && p->pointee == CUSHIM_KIND_ENUM && p->enum_type &&
          !strcmp(p->enum_type->name, "CUfunc_cache"));
    CHECK((p = check_param("cuGraphGetNodes", "nodes")) && p->count_param == 2 && p->count_indirect == 1);
    CHECK((p = check_param("cuGraphGetRootNodes", "rootNodes")) && p->count_param == 2 && p->count_indirect == 1);
    CHECK((p = check_param("cuGraphGetEdges", "from")) && p->count_indirect == 1);
    CHECK((p = check_param("cudaGraphGetNodes", "nodes")) && p->count_param == 2 && p->count_indirect == 1);
    return bad;
}

int main(void)
{
    return cushim_gen_api_count == 0 || cushim_gen_apis[0].id == 0 || check_types() || check_examples();
}
