/*
 * codegen_gen_test.c - cushim-gen end to end on the synthetic headers of
 * tests/unit/headers/: parser (names, ABI variants, PFN mapping, static
 * helpers filtered), directions and the overlay, exact emitter output
 * (including the CUresult/cudaError_t names of cushim_results.inc), ids,
 * --verify, determinism, and the error cases (non-zero exit, clear message,
 * no output folder left behind).
 *
 * CG_EXE is the cushim-gen binary, CG_HEADERS the headers folder (set by
 * tests/unit/codegen.cmake).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct fx {
    char dir[256];   /* scratch folder            */
    char out[300];   /* output folder             */
    char ids[300];   /* id registry               */
    char err[300];   /* stderr of the last run    */
    char inc[300];   /* headers used              */
} fx;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = calloc(1, (size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

static int sh(const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;
    int rc;
    va_start(ap, fmt);
    if (vasprintf(&cmd, fmt, ap) < 0)
        return -1;
    va_end(ap);
    rc = system(cmd);
    free(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Runs cushim-gen with 'args' on f->inc and the synthetic headers' own library
   descriptors (headers/libs); stderr goes to f->err. */
static int gen(fx *f, const char *args)
{
    return sh("'%s' --cuda-include '%s' --ids '%s' --libs-dir '%s/libs' %s 2>'%s' >>'%s.stdout'", CG_EXE, f->inc,
              f->ids, CG_HEADERS, args, f->err, f->err);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/cushim-gen-test.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->out, sizeof f->out, "%s/out", f->dir);
    snprintf(f->ids, sizeof f->ids, "%s/ids.tsv", f->dir);
    snprintf(f->err, sizeof f->err, "%s/stderr", f->dir);
    snprintf(f->inc, sizeof f->inc, "%s/inc", f->dir);
    /* a private copy of the headers, so that a test may break them */
    if (sh("cp -R '%s/basic' '%s'", CG_HEADERS, f->inc) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sh("rm -rf '%s'", f->dir);
    free(f);
    return 0;
}

static char *out_file(fx *f, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", f->out, name);
    return slurp(path);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* No output folder and no temporary folder beside it. */
static void assert_no_output(fx *f)
{
    assert_false(exists(f->out));
    assert_int_equal(sh("ls -d '%s'/out.* >/dev/null 2>&1", f->dir), 2);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle)) {
        print_error("expected to find:\n  %s\n", needle);
        fail();
    }
}

static void assert_lacks(const char *hay, const char *needle)
{
    if (hay && strstr(hay, needle)) {
        print_error("did not expect:\n  %s\n", needle);
        fail();
    }
}

#define OVERLAY "--overlay '" CG_HEADERS "/basic.overlay'"


static void run_ok(fx *f)
{
    char args[1024];
    snprintf(args, sizeof args, "%s --out '%s'", OVERLAY, f->out);
    assert_int_equal(gen(f, args), 0);
}

static void test_parse_names_and_variants(void **state)
{
    fx *f = *state;
    char *drv, *rt, *tsv;
    run_ok(f);
    drv = out_file(f, "cushim_driver_apis.inc");
    rt = out_file(f, "cushim_runtime_apis.inc");
    tsv = out_file(f, "apis.tsv");
    /* macro-renamed declarations appear under their exported names */
    assert_contains(drv, "CUSHIM_API(2, cuMemAlloc_v2, CUresult, CUSHIM_RET_CURESULT, (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize), (p->dptr, p->bytesize))\n");
    assert_contains(drv, " cuMemcpyHtoD_v2_ptds, ");
    assert_contains(drv, " cuMemAlloc, CUresult, CUSHIM_RET_CURESULT, (unsigned int *dptr, unsigned int bytesize)");
    /* the overlay's 'role' entry, on both ABI variants, parameters by index */
    {
        char *roles = out_file(f, "cushim_alloc_roles.inc");
        assert_contains(roles, "CUSHIM_ALLOC_ROLE(cuMemAlloc_v2, CUSHIM_ROLE_ALLOC, CUSHIM_MEM_DEVICE, CUSHIM_SIZE_PARAM, "
                               "CUSHIM_DEV_CTX, 1, -1, -1, -1, 0, -1, NULL)\n");
        assert_contains(roles, "CUSHIM_ALLOC_ROLE(cuMemAlloc, CUSHIM_ROLE_ALLOC,");
        free(roles);
    }
    /* zero parameters, unnamed parameter, struct return, raw function pointer, array */
    assert_contains(drv, "CUSHIM_API(7, cuNoParams, CUresult, CUSHIM_RET_CURESULT, (void), (), ())\n");
    assert_contains(drv, "CUSHIM_API(8, cuName, const char *, CUSHIM_RET_OTHER, (int arg0), (arg0), (p->arg0))\n");
    assert_contains(drv, "(cushim_fnty_cuRawCallback_cb cb, int *arr, void *unknown)");
    assert_contains(rt, "cudaCreateChannelDesc, struct cudaChannelFormatDesc, CUSHIM_RET_OTHER, (int x, int y, int z, int w)");
    /* static inline helpers are not exports */
    assert_lacks(drv, "cuHelper");
    assert_lacks(rt, "cudaGetDeviceCount2");
    /* runtime legacy and per-thread names, both */
    assert_contains(rt, "CUSHIM_API(13, cudaMemcpy, cudaError_t, CUSHIM_RET_CUDAERROR, (void *dst, const void *src, size_t count)");
    assert_contains(rt, "CUSHIM_API(14, cudaMemcpy_ptds, cudaError_t, ");
    assert_lacks(drv, "cudaMemcpy");
    /* base names, ABI versions, per-thread kinds, libraries, categories */
    assert_contains(tsv, "id\texported_name\tbase_name\tabi_version\tper_thread\tlibrary\theader\tcategory\n");
    assert_contains(tsv, "\n2\tcuMemAlloc_v2\tcuMemAlloc\t3020\tnone\tdriver\tcuda.h\talloc\n");
    assert_contains(tsv, "\n3\tcuMemcpyHtoD_v2_ptds\tcuMemcpyHtoD\t7000\tptds\tdriver\tcuda.h\tcopy\n");
    assert_contains(tsv, "\n14\tcudaMemcpy_ptds\tcudaMemcpy\t0\tptds\truntime\tcuda_runtime_api.h\tcopy\n");
    assert_contains(tsv, "\n7\tcuNoParams\tcuNoParams\t0\tnone\tdriver\tcuda.h\tsync\n");
    free(drv);
    free(rt);
    free(tsv);
}

static void test_procaddr_mapping(void **state)
{
    fx *f = *state;
    char *inc, *tsv;
    run_ok(f);
    inc = out_file(f, "cushim_procaddr.inc");
    tsv = out_file(f, "procaddr.tsv");
    /* sorted by base, legacy first, version ascending; _ptds at N maps to the legacy export at N */
    assert_contains(inc, "CUSHIM_PROCADDR(\"cuMemcpyHtoD\", CUSHIM_PA_LEGACY, 2000, CUSHIM_API_cuMemcpyHtoD)\n"
                         "CUSHIM_PROCADDR(\"cuMemcpyHtoD\", CUSHIM_PA_LEGACY, 3020, CUSHIM_API_cuMemcpyHtoD_v2)\n"
                         "CUSHIM_PROCADDR(\"cuMemcpyHtoD\", CUSHIM_PA_PER_THREAD, 7000, CUSHIM_API_cuMemcpyHtoD_v2_ptds)\n");
    assert_contains(inc, "CUSHIM_PROCADDR(\"cuMemAlloc\", CUSHIM_PA_LEGACY, 2000, CUSHIM_API_cuMemAlloc)\n"
                         "CUSHIM_PROCADDR(\"cuMemAlloc\", CUSHIM_PA_LEGACY, 3020, CUSHIM_API_cuMemAlloc_v2)\n");
    /* a typedef in an inactive preprocessor branch counts */
    assert_contains(inc, "CUSHIM_PROCADDR(\"cuLaunchHostFunc\", CUSHIM_PA_LEGACY, 10000, CUSHIM_API_cuLaunchHostFunc)\n");
    assert_contains(tsv, "base_name\tflags\tmin_cuda_version\texported_name\n");
    assert_contains(tsv, "cuMemcpyHtoD\tper_thread\t7000\tcuMemcpyHtoD_v2_ptds\n");
    free(inc);
    free(tsv);
}

static void test_directions_and_overlay(void **state)
{
    fx *f = *state;
    char *meta, *err, *chk;
    run_ok(f);
    meta = out_file(f, "cushim_meta.c");
    /* doc 'Returned' + pointer to a device address: out */
    assert_contains(meta, "{ \"dptr\", \"CUdeviceptr *\", \"unsigned long long *\", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, "
                          "CUSHIM_F_(cuMemAlloc_v2, dptr), -1, CUSHIM_E_(cuMemAlloc_v2, dptr), 0, CUSHIM_KIND_DEVPTR, 0, 0, NULL, NULL },");
    /* const pointee: in; CUdeviceptr value: devptr */
    assert_contains(meta, "{ \"srcHost\", \"const void *\", \"const void *\", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN,");
    assert_contains(meta, "{ \"dstDevice\", \"CUdeviceptr\", \"unsigned long long\", CUSHIM_KIND_DEVPTR, CUSHIM_DIR_IN,");
    /* doc markers [out] and [in,out]; overlay fixed count */
    assert_contains(meta, "{ \"desc\", \"CUDA_DESC *\", \"struct CUdesc_st *\", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT,");
    assert_contains(meta, "{ \"buf\", \"void *\", \"void *\", CUSHIM_KIND_POINTER, CUSHIM_DIR_INOUT, CUSHIM_F_(cuGetDesc, buf), -1, 0, 4, CUSHIM_KIND_UNKNOWN, 0, 0, NULL, NULL },");
    /* type metadata: enum tables in header order, the overlay's 'struct CUDA_DESC', a
       pointer parameter to a listed struct, pointee kinds */
    assert_contains(meta, "{\"CUDA_SUCCESS\", 0}, {\"CUDA_ERROR_INVALID_VALUE\", 1},\n    {\"CUDA_ERROR_OUT_OF_MEMORY\", 2},");
    assert_contains(meta, "{ \"CUresult\", 4, 6, cushim_gen_ev_0 },");
    assert_contains(meta, "static const cushim_field_info cushim_gen_sf_0[] = { /* CUDA_DESC */\n"
                          "    { \"w\", \"int\", CUSHIM_KIND_SCALAR, CUSHIM_KIND_UNKNOWN, 0, 0, 4, 0, NULL, NULL },\n"
                          "    { \"h\", \"int\", CUSHIM_KIND_SCALAR, CUSHIM_KIND_UNKNOWN, 0, 4, 4, 0, NULL, NULL },\n};");
    assert_contains(meta, "{ \"CUDA_DESC\", 8, 2, cushim_gen_sf_0 },");
    /* anonymous member types: a struct (with one nested), a union of plain data described as structs of their own
       after the listed ones; a union with a pointer member left without a descriptor */
    assert_contains(meta, "{ \"flags\", \"struct <anonymous>\", CUSHIM_KIND_STRUCT, CUSHIM_KIND_UNKNOWN, 0, 4, 8, 0, NULL, "
                          "&cushim_gen_structs[2] },");
    assert_contains(meta, "{ \"plain\", \"union <anonymous>\", CUSHIM_KIND_STRUCT, CUSHIM_KIND_UNKNOWN, 0, 16, 8, 0, NULL, "
                          "&cushim_gen_structs[3] },");
    assert_contains(meta, "{ \"ptrs\", \"union <anonymous>\", CUSHIM_KIND_STRUCT, CUSHIM_KIND_UNKNOWN, 0, 24, 8, 0, NULL, NULL },");
    assert_contains(meta, "{ \"CUDA_ANON.flags\", 8, 3, cushim_gen_sf_2 },\n    { \"CUDA_ANON.plain\", 8, 3, cushim_gen_sf_3 },\n"
                          "    { \"CUDA_ANON.flags.inner\", 4, 1, cushim_gen_sf_4 },");
    assert_contains(meta, "{ \"s\", \"CUstream\", CUSHIM_KIND_HANDLE, CUSHIM_KIND_UNKNOWN, 0, 0, 8, 0, NULL, NULL },");
    assert_contains(meta, "{ \"inner\", \"struct <anonymous>\", CUSHIM_KIND_STRUCT, CUSHIM_KIND_UNKNOWN, 0, 4, 4, 0, NULL, "
                          "&cushim_gen_structs[4] },");
    assert_contains(meta, "CUSHIM_F_(cuGetDesc, desc), -1, CUSHIM_E_(cuGetDesc, desc), 0, CUSHIM_KIND_STRUCT, 0, 0, NULL, "
                          "&cushim_gen_structs[0] },");
    assert_contains(meta, "CUSHIM_F_(cuGetHandles, streams), 1, CUSHIM_E_(cuGetHandles, streams), 0, CUSHIM_KIND_HANDLE, 0, 0,");
    /* the sorted lookup tables: names, enumerators */
    assert_contains(meta, "const char *const cushim_gen_enum_const_names[");
    chk = out_file(f, "cushim_types_check.h");
    assert_contains(chk, "CUSHIM_STRUCT_CHECK(CUDA_DESC, CUDA_DESC, 8)\nCUSHIM_FIELD_CHECK(CUDA_DESC, CUDA_DESC, w, 0, 4)\n");
    assert_contains(chk, "CUSHIM_STRUCT_CHECK(CUDA_ANON.flags, __typeof__(((CUDA_ANON *)0)->flags), 8)\n");
    assert_contains(chk, "CUSHIM_FIELD_CHECK(CUDA_ANON.flags.inner, __typeof__(((__typeof__(((CUDA_ANON *)0)->flags) *)0)->inner), "
                         "deep, 0, 4)\n");
    /* handles, callbacks, overlay direction, inferred element count */
    assert_contains(meta, "{ \"hStream\", \"CUstream\", \"struct CUstream_st *\", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN,");
    assert_contains(meta, "{ \"fn\", \"CUhostFn\", \"void (*)(void *)\", CUSHIM_KIND_CALLBACK, CUSHIM_DIR_IN,");
    assert_contains(meta, "{ \"unknown\", \"void *\", \"void *\", CUSHIM_KIND_POINTER, CUSHIM_DIR_INOUT,");
    assert_contains(meta, "{ \"streams\", \"CUstream *\", \"struct CUstream_st **\", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, "
                          "CUSHIM_F_(cuGetHandles, streams), 1,");
    assert_contains(meta, "{ \"arr\", \"int *\", \"int *\", CUSHIM_KIND_POINTER,");
    /* cudaMemcpy 'dst' is left unclassified by this overlay and reported */
    assert_contains(meta, "{ \"dst\", \"void *\", \"void *\", CUSHIM_KIND_POINTER, CUSHIM_DIR_UNKNOWN,");
    err = slurp(f->err);
    assert_contains(err, "2 parameters unclassified");
    free(meta);
    free(err);
    free(chk);
}

static void test_emitters_exact(void **state)
{
    fx *f = *state;
    char *ids, *params, *hdrs, *meta;
    run_ok(f);
    ids = out_file(f, "cushim_api_ids.h");
    params = out_file(f, "cushim_params.h");
    hdrs = out_file(f, "cushim_cuda_headers.h");
    meta = out_file(f, "cushim_meta.c");
    assert_true(ids && !strncmp(ids, "/* DO NOT EDIT: generated by cushim-gen ", 40));
    assert_contains(ids, "#define CUSHIM_GEN_CUDA_VERSION 12345\n#define CUSHIM_GEN_CUDA_VERSION_STRING \"12.34\"\n");
    assert_contains(ids, "enum cushim_api_id {\n    CUSHIM_API_cuInit = 1,\n    CUSHIM_API_cuMemAlloc_v2 = 2,\n");
    assert_contains(ids, "#define CUSHIM_API_ID_LIMIT 17\n");
    assert_contains(params, "#include \"cushim_cuda_headers.h\"\n");
    assert_contains(params, "typedef void (*cushim_fnty_cuRawCallback_cb)(int, void *);\n");
    assert_contains(params, "typedef struct cushim_params_cuMemAlloc_v2 {\n    CUdeviceptr *dptr;\n    size_t bytesize;\n} cushim_params_cuMemAlloc_v2;\n");
    assert_contains(params, "typedef struct cushim_params_cuNoParams {\n    char cushim_unused_;\n} cushim_params_cuNoParams;\n");
    assert_contains(hdrs, "#ifndef __CUDA_API_VERSION_INTERNAL\n#define __CUDA_API_VERSION_INTERNAL\n#endif\n\n"
                          "#include <cuda.h>\n#include <cuda_runtime_api.h>\n");
    assert_lacks(hdrs, "cudaGL.h");
    assert_contains(meta, "{ 5, \"cuLaunchHostFunc\", \"cuLaunchHostFunc\", 10000, CUSHIM_PT_NONE, CUSHIM_LIB_DRIVER, "
                          "CUSHIM_RET_CURESULT, 1, CUSHIM_CAT_LAUNCH, \"CUresult\", \"cuda.h\", ");
    assert_contains(meta, "{ 7, \"cuNoParams\", \"cuNoParams\", 0, CUSHIM_PT_NONE, CUSHIM_LIB_DRIVER, CUSHIM_RET_CURESULT, 0, "
                          "CUSHIM_CAT_SYNC, \"CUresult\", \"cuda.h\", ");
    assert_contains(meta, "sizeof(cushim_params_cuNoParams), sizeof(CUresult), 0, NULL },");
    assert_contains(meta, "sizeof(struct cudaChannelFormatDesc), 4, cushim_gen_p_cudaCreateChannelDesc },");
    assert_contains(meta, "const uint32_t cushim_gen_api_count = 16;\n");
    /* by strcmp of name: cuGetDesc(index 3) cuGetHandles(8) cuInit(0) ... cuMemAlloc(9) cuMemAlloc_v2(1) */
    assert_contains(meta, "const uint16_t cushim_gen_by_name[] = {\n    3, 8, 0, 4, 9, 1, 10, 11, 2, 7, 6, 5, 14, 15, 12, 13,\n};");
    assert_contains(meta, "const int16_t cushim_gen_index_of_id[CUSHIM_API_ID_LIMIT] = {\n    -1, 0, 1, 2,");
    free(ids);
    free(params);
    free(hdrs);
    free(meta);
}

/* cushim_results.inc: every enumerator of the two result enums, values as the
 * compiler computes them (implicit, hex, alias, expression), driver first,
 * header order, nothing from other enums. */
static void test_results_exact(void **state)
{
    fx *f = *state;
    char *res, *body;
    run_ok(f);
    res = out_file(f, "cushim_results.inc");
    assert_non_null(res);
    assert_true(!strncmp(res, "/* DO NOT EDIT: generated by cushim-gen ", 40));
    assert_contains(res, " from CUDA 12.34 headers (cuda.h CUDA_VERSION 12345). */\n");
    body = strstr(res, "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 0,");
    assert_non_null(body);
    assert_string_equal(body, "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 0, \"CUDA_SUCCESS\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 1, \"CUDA_ERROR_INVALID_VALUE\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 2, \"CUDA_ERROR_OUT_OF_MEMORY\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 500, \"CUDA_ERROR_NOT_FOUND\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 500, \"CUDA_ERROR_NOT_FOUND_ALIAS\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CURESULT, 999, \"CUDA_ERROR_UNKNOWN\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 0, \"cudaSuccess\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 1, \"cudaErrorInvalidValue\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 2, \"cudaErrorMemoryAllocation\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 3, \"cudaErrorInitializationError\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 5, \"cudaErrorProfilerDisabled\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 999, \"cudaErrorUnknown\")\n"
                              "CUSHIM_RESULT(CUSHIM_RET_CUDAERROR, 10000, \"cudaErrorApiFailureBase\")\n");
    /* the comment between banner and lines names the macro; the file never defines it */
    assert_contains(res, "CUSHIM_RESULT(RETKIND, VALUE, NAME)");
    assert_lacks(res, "#define");
    free(res);
}

static void test_deterministic_and_verify(void **state)
{
    fx *f = *state;
    char args[1024];
    run_ok(f);
    snprintf(args, sizeof args, "%s --out '%s/again'", OVERLAY, f->dir);
    assert_int_equal(gen(f, args), 0);
    assert_int_equal(sh("diff -r '%s' '%s/again' >/dev/null", f->out, f->dir), 0);
    snprintf(args, sizeof args, "%s --verify '%s'", OVERLAY, f->out);
    assert_int_equal(gen(f, args), 0);
    /* one changed byte, one extra file: both reported */
    assert_int_equal(sh("sed -i 's/cuInit/cuInitX/' '%s/apis.tsv' && touch '%s/junk'", f->out, f->out), 0);
    assert_int_not_equal(gen(f, args), 0);
    {
        char *err = slurp(f->err);
        assert_contains(err, "differs: ");
        assert_contains(err, "apis.tsv (first difference at line 3)");
        assert_contains(err, "extra: ");
        free(err);
    }
    /* regenerating replaces the folder */
    run_ok(f);
    assert_false(exists(f->out) && sh("test -e '%s/junk'", f->out) == 0);
}

static void test_ids_stable_append_only(void **state)
{
    fx *f = *state;
    char *tsv, *ids;
    FILE *o = fopen(f->ids, "w");
    /* a registry from an older release: a vanished name keeps its id */
    fputs("# ids\n1\tcuGone\n2\tcuMemAlloc_v2\n", o);
    fclose(o);
    run_ok(f);
    tsv = out_file(f, "apis.tsv");
    assert_contains(tsv, "\n2\tcuMemAlloc_v2\t");
    assert_contains(tsv, "\n3\tcuInit\t");
    assert_lacks(tsv, "cuGone");
    ids = slurp(f->ids);
    assert_contains(ids, "# ids\n1\tcuGone\n2\tcuMemAlloc_v2\n3\tcuInit\n4\tcuMemcpyHtoD_v2_ptds\n");
    free(ids);
    free(tsv);
    tsv = out_file(f, "cushim_meta.c");
    assert_contains(tsv, "const int16_t cushim_gen_index_of_id[CUSHIM_API_ID_LIMIT] = {\n    -1, -1, 0, 1,");
    free(tsv);
    /* --verify never grows the registry */
    o = fopen(f->ids, "w");
    fputs("1\tcuInit\n", o);
    fclose(o);
    {
        char args[1024];
        snprintf(args, sizeof args, "%s --verify '%s'", OVERLAY, f->out);
        assert_int_not_equal(gen(f, args), 0);
        ids = slurp(f->ids);
        assert_string_equal(ids, "1\tcuInit\n");
        free(ids);
    }
}

/* --report against small shared libraries standing in for the toolkit's */
static void test_report(void **state)
{
    fx *f = *state;
    char args[1024], *rep;
    assert_int_equal(sh("mkdir -p '%s/root/lib64/stubs' && cd '%s/root' && "
                        "printf 'int cuInit(void){return 0;}\\nint cuExtra(void){return 0;}\\n' > d.c && "
                        "printf 'int cudaMemcpy(void){return 0;}\\nint __cudaRegisterFatBinary(void){return 0;}\\n' > r.c && "
                        "cc -shared -fPIC -o lib64/stubs/libcuda.so d.c && cc -shared -fPIC -o lib64/libcudart.so r.c",
                        f->dir, f->dir),
                     0);
    snprintf(args, sizeof args, "%s --report --cuda-root '%s/root'", OVERLAY, f->dir);
    assert_int_equal(gen(f, args), 0);
    snprintf(args, sizeof args, "%s.stdout", f->err);
    rep = slurp(args);
    assert_contains(rep, "driver (lib64/stubs/libcuda.so): 2 exports, 1 in the model (50.0%)\n");
    assert_contains(rep, "  uncovered cuExtra: not declared by the parsed headers\n");
    assert_contains(rep, "  extra cuMemAlloc_v2: declared in cuda.h, not exported by the stub");
    assert_contains(rep, "runtime (lib64/libcudart.so): 2 exports, 1 in the model (100.0%); 1 __cuda* compiler registration hooks left out by design\n");
    assert_contains(rep, "  uncovered __cudaRegisterFatBinary: compiler registration hook");
    assert_contains(rep, "  extra cudaMemcpy_ptds: declared in cuda_runtime_api.h, not exported by the library\n");
    assert_contains(rep, "parameters unclassified (kind or direction unknown): 2\n");
    assert_contains(rep, "allocation roles: 2 APIs, 0 in allocating categories without one\n");
    free(rep);
    /* an API in category alloc with no 'role' entry fails the report, naming it */
    assert_int_equal(sh("grep -v '^role' '%s' > '%s/norole.overlay'", CG_HEADERS "/basic.overlay", f->dir), 0);
    snprintf(args, sizeof args, "--overlay '%s/norole.overlay' --report --cuda-root '%s/root'", f->dir, f->dir);
    assert_int_not_equal(gen(f, args), 0);
    snprintf(args, sizeof args, "%s.stdout", f->err);
    rep = slurp(args);
    assert_contains(rep, "  no allocation role: cuMemAlloc_v2 (category alloc, free, vmm or pool)");
    free(rep);
    /* a missing library is an error */
    snprintf(args, sizeof args, "%s --report --cuda-root '%s/nowhere'", OVERLAY, f->dir);
    assert_int_not_equal(gen(f, args), 0);
}

/* ---- error cases: non-zero exit, a message, no output ---- */

static void expect_failure(fx *f, const char *extra, const char *message)
{
    char args[1024], *err;
    snprintf(args, sizeof args, "%s --out '%s'", extra, f->out);
    assert_int_not_equal(gen(f, args), 0);
    err = slurp(f->err);
    assert_contains(err, message);
    free(err);
    assert_no_output(f);
    assert_false(exists(f->ids));
}

static void test_error_missing_dir(void **state)
{
    fx *f = *state;
    sh("rm -rf '%s'", f->inc);
    expect_failure(f, OVERLAY, "does not exist");
}

static void test_error_missing_header(void **state)
{
    fx *f = *state;
    sh("rm '%s/cudaTypedefs.h'", f->inc);
    expect_failure(f, OVERLAY, "cudaTypedefs.h' is missing");
    sh("cp '%s/basic/cudaTypedefs.h' '%s/' && rm '%s/cuda_runtime_api.h'", CG_HEADERS, f->inc, f->inc);
    expect_failure(f, OVERLAY, "cuda_runtime_api.h' is missing");
    sh("cp '%s/basic/cuda_runtime_api.h' '%s/' && rm '%s/cuda.h'", CG_HEADERS, f->inc, f->inc);
    expect_failure(f, OVERLAY, "cuda.h' is missing");
}

static void test_error_syntax(void **state)
{
    fx *f = *state;
    /* a broken declaration as line 74, before the final #endif */
    assert_int_equal(sh("sed -i '$i CUresult cuBroken(int x;' '%s/cuda.h'", f->inc), 0);
    expect_failure(f, OVERLAY, "/cuda.h:74: error: expected ')'");
}

static void test_error_bad_pfn(void **state)
{
    fx *f = *state;
    sh("echo 'typedef CUresult (CUDAAPI *PFN_cuOdd)(void);' >> '%s/cudaTypedefs.h'", f->inc);
    expect_failure(f, OVERLAY, "cudaTypedefs.h:20: PFN typedef 'PFN_cuOdd' does not follow the scheme");
    sh("cp '%s/basic/cudaTypedefs.h' '%s/' && echo 'typedef CUresult (CUDAAPI *PFN_cuOdd_vX)(void);' >> '%s/cudaTypedefs.h'",
       CG_HEADERS, f->inc, f->inc);
    expect_failure(f, OVERLAY, "PFN_cuOdd_vX");
}

static void test_error_bad_overlay(void **state)
{
    fx *f = *state;
    char ov[400], extra[500];
    FILE *o;
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"param cuNoSuchFunction x dir=in\n", "overlay:1: no function matches 'cuNoSuchFunction'"},
        {"# c\nparam cuInit NoSuchParam dir=in\n", "overlay:2: no parameter matches 'NoSuchParam'"},
        {"param cuInit Flags dir=sideways\n", "dir must be in, out or inout"},
        {"param cuGetDesc buf count=nosuch\n", "count parameter 'nosuch' does not exist in cuGetDesc"},
        {"cat cuInit teleport\n", "unknown category 'teleport'"},
        {"frobnicate cuInit\n", "unknown entry type"},
        {"param cuInit Flags colour=red\n", "unknown setting 'colour'"},
        {"param cuInit Flags dir=out\n", "dir= on 'Flags' of cuInit, which is passed by value (unsigned int)"},
        {"struct CUnoSuchStruct\n", "overlay:1: struct 'CUnoSuchStruct' is not a complete struct or union type"},
        {"param cuGetDesc buf count=*nosuch\n", "count parameter 'nosuch' does not exist in cuGetDesc"},
    };
    snprintf(ov, sizeof ov, "%s/bad.overlay", f->dir);
    snprintf(extra, sizeof extra, "--overlay '%s'", ov);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        o = fopen(ov, "w");
        fputs(cases[i].text, o);
        fclose(o);
        expect_failure(f, extra, cases[i].message);
    }
    /* since=/until= skip an entry outside the version range; a glob skips value parameters */
    o = fopen(ov, "w");
    fputs("param cuNoSuchFunction x dir=in since=99000\nparam cuNoSuchFunction x dir=in until=12000\n"
          "param cu* Flags dir=out\n", o);
    fclose(o);
    {
        char args[1024];
        snprintf(args, sizeof args, "%s --out '%s'", extra, f->out);
        assert_int_equal(gen(f, args), 0);
    }
}

/* The descriptor key symbol-version: NODE, then MAJOR=NODE exceptions; a malformed one fails where descriptors
   are read (the runtime's build reads the key: runtime/CMakeLists.txt). */
static void test_descriptor_symbol_version(void **state)
{
    fx *f = *state;
    char extra[1024];
    static const struct {
        const char *line, *message;
    } bad[] = {
        {"symbol-version libcudart.so.{major} 11:libcudart.so.11.0", "exceptions read MAJOR=NODE"},
        {"symbol-version libcudart.so.{major} =libcudart.so.11.0", "exceptions read MAJOR=NODE"},
        {"symbol-version libcudart.so.{major} 11=", "exceptions read MAJOR=NODE"},
        {"symbol-version libcudart.so.{major} 11=lib/cudart", "takes a node name"},
        {"symbol-version lib cudart", "exceptions read MAJOR=NODE"},
    };
    snprintf(extra, sizeof extra, OVERLAY " --libs-dir '%s/libs'", f->dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sh("rm -rf '%s/libs' && cp -R '%s/libs' '%s/' && echo '%s' >>'%s/libs/runtime.lib'", f->dir,
                            CG_HEADERS, f->dir, bad[i].line, f->dir), 0);
        expect_failure(f, extra, bad[i].message);
    }
    assert_int_equal(sh("rm -rf '%s/libs' && cp -R '%s/libs' '%s/' && echo 'symbol-version libcudart.so.{major} "
                        "11=libcudart.so.11.0 9=libcudart.so.9.0' >>'%s/libs/runtime.lib'", f->dir, CG_HEADERS, f->dir,
                        f->dir), 0);
    char args[1400];
    snprintf(args, sizeof args, "%s --out '%s'", extra, f->out);
    assert_int_equal(gen(f, args), 0);
}

/* Either result enum missing: an error naming it, no output. */
static void test_error_no_result_enum(void **state)
{
    fx *f = *state;
    assert_int_equal(sh("sed -i 's/enum cudaError_enum {/enum cudaError_other {/' '%s/cuda.h'", f->inc), 0);
    expect_failure(f, OVERLAY, "no definition of 'enum cudaError_enum' (CUresult)");
    /* the tag renamed in both places, so that the headers still compile */
    assert_int_equal(sh("cp '%s/basic/cuda.h' '%s/' && sed -i 's/ cudaError$/ cudaErrorX/; "
                        "s/enum cudaError cudaError_t/enum cudaErrorX cudaError_t/' '%s/driver_types.h'",
                        CG_HEADERS, f->inc, f->inc), 0);
    expect_failure(f, OVERLAY, "no definition of 'enum cudaError' (cudaError_t)");
}

static void test_error_usage(void **state)
{
    fx *f = *state;
    assert_int_not_equal(sh("'%s' --frob 2>/dev/null", CG_EXE), 0);
    assert_int_not_equal(sh("'%s' --cuda-include '%s' 2>/dev/null", CG_EXE, f->inc), 0);
    assert_no_output(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_names_and_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_procaddr_mapping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directions_and_overlay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emitters_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deterministic_and_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ids_stable_append_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_descriptor_symbol_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_missing_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_missing_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_syntax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_bad_pfn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_bad_overlay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_no_result_enum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_usage, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
