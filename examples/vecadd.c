/*
 * vecadd.c - a small CUDA driver-API program: the sample the README runs under the shim.
 *
 * Initialises the driver, creates a context, JIT-loads a vector-add kernel from PTX, copies two vectors to the
 * device, launches the kernel on a stream, times it with events, copies the result back and checks it. On the
 * fake driver (tests/fake) kernels are recorded, not run, so the result check is skipped there.
 *
 * Build: linked against libcuda.so.1 (the toolkit's stub at build time). Run: tools/cushim run --fake -- vecadd
 *
 * Every failing call is reported with its error's name (cuGetErrorName) and the program exits 1, which makes it
 * the sample for fault injection (docs/plugins/faultinject.md):
 *   tools/cushim run --fake --fault='cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2' -- vecadd
 * fails at the second allocation: "vecadd: cuMemAlloc(&db, bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2)".
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char vecadd_ptx[] =
    ".version 9.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\t// .globl\tvecadd\n"
    ".visible .entry vecadd(\n"
    "\t.param .u64 vecadd_param_0,\n"
    "\t.param .u64 vecadd_param_1,\n"
    "\t.param .u64 vecadd_param_2,\n"
    "\t.param .u32 vecadd_param_3\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<2>;\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\t.reg .b32 \t%r<6>;\n"
    "\t.reg .b64 \t%rd<11>;\n"
    "\tld.param.u64 \t%rd1, [vecadd_param_0];\n"
    "\tld.param.u64 \t%rd2, [vecadd_param_1];\n"
    "\tld.param.u64 \t%rd3, [vecadd_param_2];\n"
    "\tld.param.u32 \t%r2, [vecadd_param_3];\n"
    "\tmov.u32 \t%r3, %ctaid.x;\n"
    "\tmov.u32 \t%r4, %ntid.x;\n"
    "\tmov.u32 \t%r5, %tid.x;\n"
    "\tmad.lo.s32 \t%r1, %r3, %r4, %r5;\n"
    "\tsetp.ge.s32 \t%p1, %r1, %r2;\n"
    "\t@%p1 bra \t$L__BB0_2;\n"
    "\tcvta.to.global.u64 \t%rd4, %rd1;\n"
    "\tmul.wide.s32 \t%rd5, %r1, 4;\n"
    "\tadd.s64 \t%rd6, %rd4, %rd5;\n"
    "\tcvta.to.global.u64 \t%rd7, %rd2;\n"
    "\tadd.s64 \t%rd8, %rd7, %rd5;\n"
    "\tld.global.f32 \t%f1, [%rd8];\n"
    "\tld.global.f32 \t%f2, [%rd6];\n"
    "\tadd.f32 \t%f3, %f2, %f1;\n"
    "\tcvta.to.global.u64 \t%rd9, %rd3;\n"
    "\tadd.s64 \t%rd10, %rd9, %rd5;\n"
    "\tst.global.f32 \t[%rd10], %f3;\n"
    "$L__BB0_2:\n"
    "\tret;\n"
    "}\n";

#define CHECK(call)                                                                    \
    do {                                                                               \
        CUresult rc_ = (call);                                                         \
        if (rc_ != CUDA_SUCCESS) {                                                     \
            const char *name_ = NULL;                                                  \
            cuGetErrorName(rc_, &name_);                                               \
            fprintf(stderr, "vecadd: %s failed: %s (%d)\n", #call, name_ ? name_ : "?", (int)rc_); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* The CUDA part; CHECK returns 1 from here on the first failing call, so that main frees the host buffers
   on every path (an early exit must not look like a leak to a checker such as LeakSanitizer). */
static int vecadd_run(int n, float *a, float *b, float *c)
{
    size_t bytes = (size_t)n * sizeof(float);
    for (int i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
        c[i] = -1.0f;
    }

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    CUevent start, stop;
    CUdeviceptr da, db, dc;
    char name[128] = "";
    int driver = 0;

    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&driver));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, vecadd_ptx));
    CHECK(cuModuleGetFunction(&fn, mod, "vecadd"));
    CHECK(cuMemAlloc(&da, bytes));
    CHECK(cuMemAlloc(&db, bytes));
    CHECK(cuMemAlloc(&dc, bytes));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    CHECK(cuMemcpyHtoDAsync(da, a, bytes, stream));
    CHECK(cuMemcpyHtoDAsync(db, b, bytes, stream));
    CHECK(cuMemcpyHtoD(dc, c, bytes));

    void *args[] = {&da, &db, &dc, &n};
    unsigned block = 256, grid = (unsigned)((n + block - 1) / block);
    CHECK(cuEventRecord(start, stream));
    CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, args, NULL));
    CHECK(cuEventRecord(stop, stream));
    CHECK(cuStreamSynchronize(stream));
    float ms = 0;
    CHECK(cuEventElapsedTime(&ms, start, stop));
    CHECK(cuMemcpyDtoH(c, dc, bytes));

    int fake = strstr(name, "Fake") != NULL || strstr(name, "fake") != NULL;
    int bad = 0;
    if (!fake)
        for (int i = 0; i < n; i++)
            bad += c[i] != 3.0f * (float)i;
    printf("vecadd: %d elements on '%s' (driver %d): kernel %.3f ms, %s\n", n, name, driver, ms,
           fake ? "result not checked (fake driver records launches)" : bad ? "WRONG RESULT" : "result OK");

    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(stop));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuMemFree(da));
    CHECK(cuMemFree(db));
    CHECK(cuMemFree(dc));
    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20, rc = 1;
    size_t bytes = n > 0 ? (size_t)n * sizeof(float) : 1;
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (n <= 0 || !a || !b || !c)
        fprintf(stderr, "vecadd: bad size or out of memory\n");
    else
        rc = vecadd_run(n, a, b, c);
    free(a);
    free(b);
    free(c);
    return rc;
}
