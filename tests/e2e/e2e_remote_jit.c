/*
 * e2e_remote_jit.c - what Triton, torch.compile's Inductor, CuPy and Numba ask of the driver's JIT and TMA, run
 * locally and through cushim-serve (tests/e2e/run_remote_jit.sh compares the two outputs line by line):
 *   cuModuleLoadDataEx with JIT options - an info and an error log with their sizes, the wall time (a float
 *   written back), threads per block (in and out), values by value - each log's text, the sizes written back, the
 *   bytes past what was written untouched; a log cut at a small size; a PTX that fails, with its error log;
 *   cuLinkCreate with values, cuLinkAddData with options, cuLinkAddFile of a file of this process, the linked image
 *   loaded; a missing file; cuLibraryLoadData with JIT and library options; cuTensorMapEncodeTiled, Im2col and
 *   Im2colWide, the 128 bytes printed (the global address relative to its allocation), cuTensorMapReplaceAddress,
 *   ranks the driver refuses.
 * Lines starting "remote-only" are what remoting refuses and a local driver takes (the script checks them apart).
 * Usage: e2e_remote_jit DIR (a folder for the file cuLinkAddFile reads)
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                              \
    do {                                                                                   \
        CUresult r_ = (x);                                                                 \
        if (r_ != CUDA_SUCCESS) {                                                          \
            fprintf(stderr, "e2e_remote_jit: %s: %d (line %d)\n", #x, (int)r_, __LINE__); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

#define SLOT(v) ((void *)(uintptr_t)(v))

static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k__p(.param .u64 p) { ret; }\n";

static size_t CUDA_CB smem_of(int block)
{
    return (size_t)block * 64;
}

static unsigned slot_u32(void *v)
{
    return (unsigned)(uintptr_t)v;
}

/* cuModuleLoadDataEx with the logs, the wall time and threads per block; 'info_size' the info log's room */
static void load_ex(const char *what, const char *image, unsigned info_size)
{
    char info[256], error[128];
    memset(info, 'x', sizeof info);
    memset(error, 'y', sizeof error);
    CUjit_option o[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME, CU_JIT_OPTIMIZATION_LEVEL,
                         CU_JIT_MAX_REGISTERS, CU_JIT_TARGET_FROM_CUCONTEXT, CU_JIT_THREADS_PER_BLOCK,
                         CU_JIT_GENERATE_LINE_INFO };
    void *v[] = { info, SLOT(info_size), error, SLOT(sizeof error), SLOT(0x7777777777777777ull), SLOT(3), SLOT(40),
                  NULL, SLOT(100), SLOT(1) };
    CUmodule m = NULL;
    CUresult r = cuModuleLoadDataEx(&m, image, 10, o, v);
    float wall;
    memcpy(&wall, &v[4], sizeof wall);
    unsigned isz = slot_u32(v[1]), esz = slot_u32(v[3]);
    printf("%s: %d, info %u '%.*s' next %02x, error %u '%.*s' next %02x, wall %.2f (high %08x), threads %u, "
           "values %u %u\n", what, (int)r, isz, isz ? (int)isz - 1 : 0, info, (unsigned char)info[isz],
           esz, esz ? (int)esz - 1 : 0, error, (unsigned char)error[esz ? esz : 1], wall,
           (unsigned)((uintptr_t)v[4] >> 32), slot_u32(v[8]), slot_u32(v[5]), slot_u32(v[6]));
    if (m != NULL)
        CK(cuModuleUnload(m));
}

static void jit(const char *dir)
{
    char bad[sizeof ptx + 8];
    snprintf(bad, sizeof bad, ".error%s", ptx);
    load_ex("load ex", ptx, 256);
    load_ex("load ex, small log", ptx, 12);
    load_ex("load ex, bad ptx", bad, 256);
    /* refused over remoting: host pointers of this process, and a log without its size option */
    const char *names[] = { "g" };
    CUjit_option so[] = { CU_JIT_GLOBAL_SYMBOL_NAMES, CU_JIT_GLOBAL_SYMBOL_COUNT };
    void *sv[] = { names, SLOT(1) };
    CUmodule m = NULL;
    for (int k = 0; k < 2; k++) {
        CUresult r = cuModuleLoadDataEx(&m, ptx, 2, so, sv);
        printf("remote-only symbol names: %d\n", (int)r);
        if (r == CUDA_SUCCESS)
            CK(cuModuleUnload(m));
    }
    char info[64];
    CUjit_option lo[] = { CU_JIT_INFO_LOG_BUFFER };
    void *lv[] = { info };
    CUresult r = cuModuleLoadDataEx(&m, ptx, 1, lo, lv);
    printf("remote-only log without its size: %d\n", (int)r);
    if (r == CUDA_SUCCESS)
        CK(cuModuleUnload(m));

    /* a link: its logs, their sizes and the wall time kept by the driver until cuLinkDestroy and written at each
       later call; options in cuLinkAddData, a file of this process */
    CUlinkState st;
    char linfo_[200], lerr[100];
    memset(linfo_, 'x', sizeof linfo_);
    memset(lerr, 'y', sizeof lerr);
    CUjit_option co[] = { CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME,
                          CU_JIT_LOG_VERBOSE };
    void *cv[] = { SLOT(2), linfo_, SLOT(sizeof linfo_), lerr, SLOT(sizeof lerr), NULL, SLOT(1) };
#define LINK_LOGS(what)                                                                                             \
    do {                                                                                                            \
        float w_;                                                                                                   \
        memcpy(&w_, &cv[5], sizeof w_);                                                                             \
        printf("%s: info %u '%s' next %02x, error %u '%s', wall %.2f\n", what, slot_u32(cv[2]), linfo_,            \
               (unsigned char)linfo_[slot_u32(cv[2])], slot_u32(cv[4]), lerr, w_);                                 \
    } while (0)
    CK(cuLinkCreate(7, co, cv, &st));
    LINK_LOGS("link created");
    CUjit_option ao[] = { CU_JIT_MAX_REGISTERS, CU_JIT_THREADS_PER_BLOCK };
    void *av[] = { SLOT(64), SLOT(70) };
    CK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "a.ptx", 2, ao, av));
    printf("add data: threads %u\n", slot_u32(av[1]));
    LINK_LOGS("added a.ptx");
    printf("add bad data: %d\n", (int)cuLinkAddData(st, CU_JIT_INPUT_PTX, bad, sizeof bad, "bad.ptx", 0, NULL, NULL));
    LINK_LOGS("added bad.ptx");
    char path[512];
    snprintf(path, sizeof path, "%s/b.ptx", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs("// b.ptx: read by the program's process\n", f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "e2e_remote_jit: cannot write %s\n", path);
        exit(1);
    }
    void *fv[] = { SLOT(64), SLOT(300) };
    CK(cuLinkAddFile(st, CU_JIT_INPUT_PTX, path, 2, ao, fv));
    printf("add file: threads %u\n", slot_u32(fv[1]));
    LINK_LOGS("added b.ptx");
    printf("add missing file: %d\n", (int)cuLinkAddFile(st, CU_JIT_INPUT_PTX, "/nonexistent/c.ptx", 0, NULL, NULL));
    void *cubin;
    size_t size;
    CK(cuLinkComplete(st, &cubin, &size));
    printf("linked: %zu bytes, the file's text %s\n", size, strstr(cubin, "// b.ptx: read by") ? "in" : "missing");
    LINK_LOGS("completed");
    CK(cuModuleLoadData(&m, cubin));
    CK(cuModuleUnload(m));
    CK(cuLinkDestroy(st));
    memset(lerr, 'z', 8);
    CK(cuLinkCreate(7, co, cv, &st));   /* a second link with the same buffers, destroyed at once */
    CK(cuLinkDestroy(st));
    printf("destroyed: error log '%.8s'\n", lerr);

    /* a library with JIT and library options */
    char linfo[128];
    CUjit_option jo[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_CACHE_MODE };
    void *jv[] = { linfo, SLOT(sizeof linfo), SLOT(1) };
    CUlibraryOption lopt[] = { CU_LIBRARY_BINARY_IS_PRESERVED };
    void *lval[] = { SLOT(1) };
    CUlibrary lib;
    r = cuLibraryLoadData(&lib, ptx, jo, jv, 3, lopt, lval, 1);
    printf("library: %d, info %u '%s'\n", (int)r, slot_u32(jv[1]), r == CUDA_SUCCESS ? linfo : "");
    if (r == CUDA_SUCCESS)
        CK(cuLibraryUnload(lib));

    /* a module and a library from files of this process */
    snprintf(path, sizeof path, "%s/m.ptx", dir);
    if ((f = fopen(path, "w")) == NULL || fputs(ptx, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "e2e_remote_jit: cannot write %s\n", path);
        exit(1);
    }
    CUfunction fn;
    r = cuModuleLoad(&m, path);
    printf("module from a file: %d, function %d\n", (int)r, r == CUDA_SUCCESS ? (int)cuModuleGetFunction(&fn, m, "k__p") : -1);
    if (r == CUDA_SUCCESS)
        CK(cuModuleUnload(m));
    printf("module from a missing file: %d\n", (int)cuModuleLoad(&m, "/nonexistent/m.ptx"));
    jv[1] = SLOT(sizeof linfo);
    r = cuLibraryLoadFromFile(&lib, path, jo, jv, 3, NULL, NULL, 0);
    printf("library from a file: %d, info %u '%s'\n", (int)r, slot_u32(jv[1]), r == CUDA_SUCCESS ? linfo : "");
    if (r == CUDA_SUCCESS)
        CK(cuLibraryUnload(lib));
    printf("library from a file, preserved: %d\n", (int)cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, lopt, lval, 1));

    /* the occupancy calculator (CuPy's: no callback, a fixed dynamic shared memory size) */
    int grid = -1, block = -1;
    CK(cuModuleLoadData(&m, ptx));
    CK(cuModuleGetFunction(&fn, m, "k__p"));
    r = cuOccupancyMaxPotentialBlockSize(&grid, &block, fn, NULL, 40 << 10, 0);
    printf("potential block size: %d, grid %d block %d\n", (int)r, grid, block);
    r = cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, fn, NULL, 0, 256, 0);
    printf("potential block size, flags: %d, grid %d block %d\n", (int)r, grid, block);
    printf("remote-only potential block size, callback: %d\n",
           (int)cuOccupancyMaxPotentialBlockSize(&grid, &block, fn, smem_of, 0, 0));
    CK(cuModuleUnload(m));
}

static void show_map(const char *what, CUresult r, const CUtensorMap *map, CUdeviceptr base)
{
    unsigned long long a;
    const unsigned char *b = (const unsigned char *)map;
    printf("%s: %d", what, (int)r);
    if (r == CUDA_SUCCESS) {
        memcpy(&a, b, 8);
        printf(" base%+lld", (long long)(a - base));
        for (int i = 8; i < 128; i++)
            printf("%s%02x", i % 8 ? "" : " ", b[i]);
    }
    printf("\n");
}

static void tensormaps(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 1 << 20));
    CUtensorMap map;
    cuuint64_t dim[5] = { 64, 32, 8, 4, 2 }, strides[4] = { 128, 4096, 32768, 131072 };
    cuuint32_t box[5] = { 16, 8, 2, 1, 1 }, es[5] = { 1, 1, 1, 1, 1 };
    int lower[3] = { -1, -2, -3 }, upper[3] = { 1, 2, 3 };
    for (cuuint32_t rank = 1; rank <= 5; rank++) {
        char what[32];
        memset(&map, 0xee, sizeof map);
        snprintf(what, sizeof what, "tiled rank %u", rank);
        show_map(what, cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, (void *)(uintptr_t)d, dim,
                                              strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), &map, d);
    }
    memset(&map, 0xee, sizeof map);
    printf("tiled rank 0: %d\n", (int)cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 0,
                                                               (void *)(uintptr_t)d, dim, strides, box, es, 0, 0, 0, 0));
    printf("tiled rank 6: %d\n", (int)cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 6,
                                                               (void *)(uintptr_t)d, dim, strides, box, es, 0, 0, 0, 0));
    printf("untouched: %02x\n", ((unsigned char *)&map)[0]);
    for (cuuint32_t rank = 2; rank <= 5; rank++) {
        char what[32];
        snprintf(what, sizeof what, "im2col rank %u", rank);
        show_map(what, cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank, (void *)(uintptr_t)d,
                                               dim, strides, lower, upper, 8, 16, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                               CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), &map, d);
    }
    show_map("im2col wide rank 4",
             cuTensorMapEncodeIm2colWide(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, (void *)(uintptr_t)(d + 64), dim,
                                         strides, -4, 5, 32, 64, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                         CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128, CU_TENSOR_MAP_SWIZZLE_128B,
                                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
             &map, d);
    show_map("replace address", cuTensorMapReplaceAddress(&map, (void *)(uintptr_t)(d + 4096)), &map, d);
    printf("replace, misaligned: %d\n", (int)cuTensorMapReplaceAddress(&map, (void *)(uintptr_t)(d + 8)));
    CK(cuMemFree(d));
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    if (argc != 2) {
        fprintf(stderr, "usage: e2e_remote_jit DIR\n");
        return 2;
    }
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    jit(argv[1]);
    tensormaps();
    CK(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
