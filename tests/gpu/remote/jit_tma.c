/*
 * jit_tma.c - JIT options, a link and TMA descriptors on the real driver, for the GPU check 'remoteptrattr jit'
 * (tests/gpu/checks/remoteptrattr.sh): run natively and through cushim-serve, the outputs must be equal.
 *   cuModuleLoadDataEx of PTX with the info and error logs (LOG_VERBOSE: ptxas's own text), their sizes, the wall
 *   time (masked: > 0 or not), threads per block written back; a PTX with a syntax error and its error log;
 *   cuLinkCreate with its logs and the wall time (kept by the driver for the link's life), cuLinkAddData with options
 *   and one that fails (its error log), cuLinkAddFile of a file of this process, cuLinkComplete (the info log), the
 *   image loaded and its kernel launched; cuTensorMapEncodeTiled (ranks 1..5 and 0, 6), Im2col (rank 4): the
 *   result and whether the same inputs give the same 128 bytes; cuTensorMapReplaceAddress back to the same address
 *   gives them again, to another does not.
 * Usage: jit_tma DIR
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                        \
    do {                                                                             \
        CUresult r_ = (x);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                    \
            fprintf(stderr, "jit_tma: %s: %d (line %d)\n", #x, (int)r_, __LINE__); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)
#define SLOT(v) ((void *)(uintptr_t)(v))

static const char ptx[] =
    ".version 7.8\n.target sm_70\n.address_size 64\n"
    ".visible .entry k(.param .u64 p) {\n .reg .b64 %rd<2>;\n .reg .b32 %r<2>;\n"
    " ld.param.u64 %rd1, [p];\n cvta.to.global.u64 %rd1, %rd1;\n mov.u32 %r1, 7;\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";

static void load(const char *what, const char *image)
{
    char info[4096], error[4096];
    memset(info, 0, sizeof info);
    memset(error, 0, sizeof error);
    CUjit_option o[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME, CU_JIT_LOG_VERBOSE,
                         CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_THREADS_PER_BLOCK };
    void *v[] = { info, SLOT(sizeof info), error, SLOT(sizeof error), NULL, SLOT(1), SLOT(3), SLOT(100) };
    CUmodule m = NULL;
    CUresult r = cuModuleLoadDataEx(&m, image, 8, o, v);
    float wall;
    memcpy(&wall, &v[4], sizeof wall);
    printf("%s: %d, info %u, error %u, wall %s, threads %u\n--- info\n%s\n--- error\n%s\n---\n", what, (int)r,
           (unsigned)(uintptr_t)v[1], (unsigned)(uintptr_t)v[3], wall > 0 ? "> 0" : "0", (unsigned)(uintptr_t)v[7],
           info, error);
    if (m != NULL)
        CK(cuModuleUnload(m));
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule m;
    CUfunction f;
    if (argc != 2)
        return 2;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    load("load ex", ptx);
    load("load ex, bad", ".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry k( { ret; }\n");

    CUlinkState st;
    static char linfo[4096], lerr[4096];
    CUjit_option co[] = { CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME,
                          CU_JIT_LOG_VERBOSE };
    void *cv[] = { SLOT(3), linfo, SLOT(sizeof linfo), lerr, SLOT(sizeof lerr), NULL, SLOT(1) };
    CK(cuLinkCreate(7, co, cv, &st));
    CUjit_option ao[] = { CU_JIT_MAX_REGISTERS };
    void *av[] = { SLOT(32) };
    CK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "a.ptx", 1, ao, av));
    char path[512];
    snprintf(path, sizeof path, "%s/b.ptx", argv[1]);
    FILE *fp = fopen(path, "w");
    if (fp == NULL || fputs(".version 7.8\n.target sm_70\n.address_size 64\n.visible .func g() { ret; }\n", fp) < 0 ||
        fclose(fp) != 0)
        return 1;
    printf("add file: %d\n", (int)cuLinkAddFile(st, CU_JIT_INPUT_PTX, path, 1, ao, av));
    printf("add missing file: %d\n", (int)cuLinkAddFile(st, CU_JIT_INPUT_PTX, "/nonexistent/c.ptx", 0, NULL, NULL));
    void *cubin;
    size_t size;
    printf("add bad data: %d, error log %u\n--- error\n%s\n---\n",
           (int)cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)".version 7.8\n.target sm_70\n.visible .entry (", 44,
                              "bad.ptx", 0, NULL, NULL), (unsigned)(uintptr_t)cv[4], lerr);
    CUresult lr = cuLinkComplete(st, &cubin, &size);
    printf("complete: %d\n", (int)lr);
    float lwall;
    memcpy(&lwall, &cv[5], sizeof lwall);
    printf("link: info %u, error %u, wall %s\n--- info\n%s\n---\n", (unsigned)(uintptr_t)cv[2],
           (unsigned)(uintptr_t)cv[4], lwall > 0 ? "> 0" : "0", linfo);
    CUdeviceptr d;
    unsigned got = 0;
    CK(cuMemAlloc(&d, 1 << 20));
    if (lr == CUDA_SUCCESS) {
        CK(cuModuleLoadData(&m, cubin));
        CK(cuModuleGetFunction(&f, m, "k"));
        void *args[] = { &d };
        CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
        CK(cuMemcpyDtoH(&got, d, sizeof got));
        printf("linked kernel wrote %u\n", got);
        CK(cuModuleUnload(m));
    }
    CK(cuLinkDestroy(st));

    CUtensorMap a, b;
    cuuint64_t dim[5] = { 64, 32, 8, 4, 2 }, str[4] = { 128, 4096, 32768, 131072 };
    cuuint32_t box[5] = { 16, 8, 2, 1, 1 }, es[5] = { 1, 1, 1, 1, 1 };
    for (cuuint32_t rank = 0; rank <= 6; rank++) {
        memset(&a, 0, sizeof a);
        memset(&b, 0xff, sizeof b);
        CUresult r1 = cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, (void *)(uintptr_t)d, dim,
                                             str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        CUresult r2 = cuTensorMapEncodeTiled(&b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, (void *)(uintptr_t)d, dim,
                                             str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        printf("tiled rank %u: %d %d, same bytes %d\n", rank, (int)r1, (int)r2, memcmp(&a, &b, sizeof a) == 0);
    }
    int lo[2] = { -1, -1 }, up[2] = { 1, 1 };
    cuuint64_t idim[4] = { 64, 16, 16, 2 }, istr[3] = { 256, 4096, 65536 };
    cuuint32_t ies[4] = { 1, 1, 1, 1 };
    CUresult r = cuTensorMapEncodeIm2col(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, (void *)(uintptr_t)d, idim, istr, lo,
                                         up, 64, 32, ies, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("im2col rank 4: %d\n", (int)r);
    CK(cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)(uintptr_t)d, dim, str, box, es, 0, 0,
                              0, 0));
    memcpy(&b, &a, sizeof a);
    CK(cuTensorMapReplaceAddress(&b, (void *)(uintptr_t)(d + 4096)));
    int moved = memcmp(&a, &b, sizeof a) != 0;
    CK(cuTensorMapReplaceAddress(&b, (void *)(uintptr_t)d));
    printf("replace: moved %d, back %d\n", moved, memcmp(&a, &b, sizeof a) == 0);
    CK(cuMemFree(d));
    return 0;
}
