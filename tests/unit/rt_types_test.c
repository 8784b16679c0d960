/*
 * rt_types_test.c - type metadata through the host table: enum tables
 * (enum_by_name, enum_value_name, enum_constant), the listed structs'
 * field descriptors (struct_by_name) against offsetof(), and the
 * parameters' pointee kinds, enum/struct refs and counts behind a pointer
 * (docs/plugin-sdk.md, "Type metadata").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static const cushim_host *host;

static int setup(void **state)
{
    (void)state;
    host = rt_host();
    return host == NULL || host->size < offsetof(cushim_host, struct_by_name) + sizeof host->struct_by_name;
}

static void test_enum_tables(void **state)
{
    const cushim_enum_info *e, *t;
    (void)state;
    e = host->enum_by_name("CUresult");
    assert_non_null(e);
    assert_string_equal(e->name, "CUresult");
    assert_int_equal(e->size, sizeof(CUresult));
    assert_string_equal(e->values[0].name, "CUDA_SUCCESS");
    assert_string_equal(host->enum_value_name(e, 2), "CUDA_ERROR_OUT_OF_MEMORY");
    assert_int_equal(CUDA_ERROR_OUT_OF_MEMORY, 2);
    assert_ptr_equal(host->enum_by_name("enum cudaError_enum"), e);
    assert_ptr_equal(host->enum_by_name("cudaError_enum"), e);
    assert_null(host->enum_value_name(e, 123456789));
    assert_null(host->enum_value_name(NULL, 0));
    {
        cushim_enum_info copy = *e; /* not one of the host's tables */
        assert_null(host->enum_value_name(&copy, 2));
    }

    /* a runtime enum without typedef: 'enum X', reachable as X too */
    e = host->enum_by_name("cudaMemcpyKind");
    assert_non_null(e);
    assert_string_equal(e->name, "enum cudaMemcpyKind");
    assert_ptr_equal(host->enum_by_name("enum cudaMemcpyKind"), e);
    assert_string_equal(host->enum_value_name(e, cudaMemcpyDeviceToHost), "cudaMemcpyDeviceToHost");
    assert_int_equal(cudaMemcpyDeviceToHost, 2);
    /* a typedef declared apart from its enum names it */
    e = host->enum_by_name("cudaError_t");
    assert_non_null(e);
    assert_string_equal(e->name, "cudaError_t");
    assert_string_equal(host->enum_value_name(e, cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");

    e = host->enum_by_name("CUmemorytype");
    assert_non_null(e);
    assert_string_equal(host->enum_value_name(e, CU_MEMORYTYPE_DEVICE), "CU_MEMORYTYPE_DEVICE");
    assert_null(host->enum_by_name("CUnoSuchEnum"));
    assert_null(host->enum_by_name(""));
    assert_null(host->enum_by_name(NULL));

    /* global constant look-up */
    {
        int64_t v = -1;
        assert_int_equal(host->enum_constant("CU_MEMORYTYPE_DEVICE", &v, &t), CUSHIM_OK);
        assert_int_equal(v, CU_MEMORYTYPE_DEVICE);
        assert_ptr_equal(t, e);
        assert_int_equal(host->enum_constant("cudaMemcpyHostToDevice", &v, NULL), CUSHIM_OK);
        assert_int_equal(v, cudaMemcpyHostToDevice);
        assert_int_equal(host->enum_constant("CUDA_ERROR_OUT_OF_MEMORY", NULL, NULL), CUSHIM_OK);
        assert_int_equal(host->enum_constant("CU_NO_SUCH_CONSTANT", &v, &t), CUSHIM_ENOMATCH);
        assert_int_equal(host->enum_constant("", &v, &t), CUSHIM_ENOMATCH);
        assert_int_equal(host->enum_constant(NULL, &v, &t), CUSHIM_ENOMATCH);
    }
}

/* Every enumerator of every table is found by name with its value and enum;
   every table is found by its name. */
static void test_enum_constants_exhaustive(void **state)
{
    uint32_t n = 0;
    (void)state;
    assert_true(cushim_gen_enum_count > 100);
    for (uint32_t i = 0; i < cushim_gen_enum_count; i++) {
        const cushim_enum_info *e = &cushim_gen_enums[i];
        if (strncmp(e->name, "enum <", 6) != 0)
            assert_ptr_equal(host->enum_by_name(e->name), e);
        assert_true(e->size == 4 || e->size == 8 || e->size == 1 || e->size == 2);
        for (uint32_t k = 0; k < e->nvalues; k++) {
            int64_t v;
            const cushim_enum_info *t = NULL;
            assert_int_equal(host->enum_constant(e->values[k].name, &v, &t), CUSHIM_OK);
            assert_ptr_equal(t, e);
            assert_true(v == e->values[k].value);
            assert_non_null(host->enum_value_name(e, v));
            n++;
        }
    }
    assert_int_equal(n, cushim_gen_enum_const_count);
    for (uint32_t i = 1; i < cushim_gen_enum_const_count; i++)
        assert_true(strcmp(cushim_gen_enum_const_names[i - 1], cushim_gen_enum_const_names[i]) < 0);
}

static const cushim_field_info *field(const cushim_struct_info *s, const char *name)
{
    for (uint32_t i = 0; s && i < s->nfields; i++)
        if (!strcmp(s->fields[i].name, name))
            return &s->fields[i];
    return NULL;
}

static void test_structs(void **state)
{
    const cushim_struct_info *s = host->struct_by_name("CUDA_MEMCPY2D"), *t;
    const cushim_field_info *f;
    (void)state;
    assert_non_null(s);
    assert_int_equal(s->size, sizeof(CUDA_MEMCPY2D));
    f = field(s, "srcMemoryType");
    assert_non_null(f);
    assert_int_equal(f->offset, offsetof(CUDA_MEMCPY2D, srcMemoryType));
    assert_int_equal(f->kind, CUSHIM_KIND_ENUM);
    assert_ptr_equal(f->enum_type, host->enum_by_name("CUmemorytype"));
    f = field(s, "dstDevice");
    assert_int_equal(f->kind, CUSHIM_KIND_DEVPTR);
    assert_int_equal(f->offset, offsetof(CUDA_MEMCPY2D, dstDevice));
    assert_int_equal(field(s, "srcArray")->kind, CUSHIM_KIND_HANDLE);

    s = host->struct_by_name("dim3");
    assert_non_null(s);
    assert_int_equal(s->nfields, 3);
    assert_int_equal(field(s, "z")->offset, offsetof(dim3, z));

    /* nested listed struct by value */
    s = host->struct_by_name("cudaMemcpy3DParms");
    assert_non_null(s);
    assert_int_equal(s->size, sizeof(struct cudaMemcpy3DParms));
    f = field(s, "srcPos");
    assert_int_equal(f->kind, CUSHIM_KIND_STRUCT);
    assert_ptr_equal(f->struct_type, host->struct_by_name("cudaPos"));
    assert_int_equal(field(s, "extent")->offset, offsetof(struct cudaMemcpy3DParms, extent));
    assert_ptr_equal(field(s, "kind")->enum_type, host->enum_by_name("cudaMemcpyKind"));

#if CUSHIM_GEN_CUDA_VERSION >= 12000
    /* pointer to a listed struct */
    s = host->struct_by_name("CUlaunchConfig");
    assert_non_null(s);
    f = field(s, "attrs");
    assert_int_equal(f->kind, CUSHIM_KIND_POINTER);
    assert_int_equal(f->pointee, CUSHIM_KIND_STRUCT);
    assert_ptr_equal(f->struct_type, host->struct_by_name("CUlaunchAttribute"));
    assert_int_equal(field(s, "hStream")->kind, CUSHIM_KIND_HANDLE);
#endif

    /* a fixed array: whole size, element count */
    s = host->struct_by_name("CUmemPoolProps");
    f = field(s, "reserved");
    assert_non_null(f);
    assert_int_equal(f->size, sizeof(((CUmemPoolProps *)0)->reserved));
    assert_int_equal(f->array_len, sizeof(((CUmemPoolProps *)0)->reserved) / sizeof(((CUmemPoolProps *)0)->reserved[0]));
    assert_int_equal(f->offset, offsetof(CUmemPoolProps, reserved));
    t = host->struct_by_name("CUmemLocation");
    assert_ptr_equal(field(s, "location")->struct_type, t);

    /* the by-name index covers every struct, in order */
    for (uint32_t i = 0; i < cushim_gen_struct_count; i++)
        assert_ptr_equal(host->struct_by_name(cushim_gen_structs[i].name), &cushim_gen_structs[i]);
    assert_null(host->struct_by_name("cudaDeviceProp")); /* not listed */
    assert_null(host->struct_by_name(NULL));
    assert_null(host->struct_by_name("zzz"));
}

/* The first API with this base name that has parameter 'pname'. */
static const cushim_param_info *param(const char *base, const char *pname, int *index)
{
    for (uint32_t i = 0; i < host->api_count(); i++) {
        const cushim_api_info *a = host->api_at(i);
        if (strcmp(a->base_name, base) != 0 || a->per_thread != CUSHIM_PT_NONE)
            continue;
        for (uint32_t k = 0; k < a->nparams; k++) {
            const cushim_param_info *p = host->api_param(a, k);
            if (!strcmp(p->name, pname)) {
                if (index)
                    *index = (int)k;
                return p;
            }
        }
    }
    fail_msg("no API %s with a parameter %s", base, pname);
    return NULL;
}

/* SDK 1.1: fields and enum values by index through the host (plugins never index the arrays with their own
   compile-time stride), the same elements as this build's tables, NULL past the end or for NULL. */
static void test_element_accessors(void **state)
{
    (void)state;
    assert_true(CUSHIM_HOST_HAS(host, struct_field) && CUSHIM_HOST_HAS(host, enum_value_at));
    const cushim_struct_info *s = host->struct_by_name("CUDA_MEMCPY2D");
    assert_non_null(s);
    for (uint32_t i = 0; i < s->nfields; i++) {
        assert_ptr_equal(host->struct_field(s, i), &s->fields[i]);
        assert_ptr_equal(cushim_struct_field(host, s, i), &s->fields[i]);
    }
    assert_null(host->struct_field(s, s->nfields));
    assert_null(host->struct_field(NULL, 0));
    const cushim_enum_info *e = host->enum_by_name("CUmemorytype");
    assert_non_null(e);
    for (uint32_t i = 0; i < e->nvalues; i++)
        assert_ptr_equal(cushim_enum_value_at(host, e, i), &e->values[i]);
    assert_null(host->enum_value_at(e, e->nvalues));
    assert_null(host->enum_value_at(NULL, 0));
}

static void test_param_pointees(void **state)
{
    const cushim_param_info *p;
    (void)state;
    assert_int_equal(host->sizeof_param_info, sizeof(cushim_param_info));
    p = param("cuModuleGetFunction", "hfunc", NULL);
    assert_int_equal(p->kind, CUSHIM_KIND_POINTER);
    assert_int_equal(p->pointee, CUSHIM_KIND_HANDLE);
    assert_int_equal(param("cuGetErrorString", "pStr", NULL)->pointee, CUSHIM_KIND_STRING);
    assert_ptr_equal(param("cuGetErrorString", "error", NULL)->enum_type, host->enum_by_name("CUresult"));
    assert_int_equal(param("cuMemAlloc", "dptr", NULL)->pointee, CUSHIM_KIND_DEVPTR);
    assert_int_equal(param("cuDeviceGetCount", "count", NULL)->pointee, CUSHIM_KIND_SCALAR);
    p = host->api_param(host->api_by_name("cuMemcpy2D_v2"), 0);
    assert_int_equal(p->pointee, CUSHIM_KIND_STRUCT);
    assert_ptr_equal(p->struct_type, host->struct_by_name("CUDA_MEMCPY2D"));
    /* the legacy export takes the 32-bit layout */
    p = param("cuMemcpy2D", "pCopy", NULL);
    assert_non_null(p->struct_type);
    assert_string_equal(p->struct_type->name, "CUDA_MEMCPY2D_v1");
    assert_int_equal(p->struct_type->size, sizeof(CUDA_MEMCPY2D_v1));
    p = param("cudaGetDeviceProperties", "prop", NULL);
    assert_int_equal(p->pointee, CUSHIM_KIND_STRUCT);
    assert_null(p->struct_type); /* cudaDeviceProp is not listed */
    p = param("cuMemMap", "handle", NULL);
    assert_int_equal(p->kind, CUSHIM_KIND_HANDLE);
    assert_int_equal(p->pointee, 0);
    p = param("cudaLaunchKernel", "gridDim", NULL);
    assert_int_equal(p->kind, CUSHIM_KIND_STRUCT);
    assert_ptr_equal(p->struct_type, host->struct_by_name("dim3"));
    p = param("cuCtxGetCacheConfig", "pconfig", NULL);
    assert_int_equal(p->pointee, CUSHIM_KIND_ENUM);
    assert_ptr_equal(p->enum_type, host->enum_by_name("CUfunc_cache"));
    /* values and handles point to nothing */
    assert_int_equal(param("cuModuleGetFunction", "hmod", NULL)->pointee, 0);
}

static void test_counts_behind_pointer(void **state)
{
    const cushim_param_info *p;
    int ix;
    static const char *const apis[][3] = {
        {"cuGraphGetNodes", "nodes", "numNodes"},       {"cuGraphGetRootNodes", "rootNodes", "numRootNodes"},
        {"cuGraphGetEdges", "from", "numEdges"},        {"cuGraphGetEdges", "to", "numEdges"},
        {"cudaGraphGetNodes", "nodes", "numNodes"},     {"cudaGraphGetRootNodes", "pRootNodes", "pNumRootNodes"},
        {"cudaGraphGetEdges", "from", "numEdges"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++) {
        int cx;
        p = param(apis[i][0], apis[i][1], &ix);
        param(apis[i][0], apis[i][2], &cx);
        if (p->count_param != cx || p->count_indirect != 1)
            fail_msg("%s %s: count_param %d indirect %d, want %d indirect", apis[i][0], apis[i][1], p->count_param,
                     p->count_indirect, cx);
    }
    /* a count passed by value stays direct */
    p = param("cuLaunchCooperativeKernelMultiDevice", "launchParamsList", &ix);
    assert_int_equal(p->count_indirect, 0);
    assert_true(p->count_param > ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enum_tables),
        cmocka_unit_test(test_enum_constants_exhaustive),
        cmocka_unit_test(test_structs),
        cmocka_unit_test(test_element_accessors),
        cmocka_unit_test(test_param_pointees),
        cmocka_unit_test(test_counts_behind_pointer),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
