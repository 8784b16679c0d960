/*
 * e2e_direct.c - a driver-API program linked against libcuda.so.1 (-lcuda), shim preloaded.
 *
 * The classic path: the dynamic linker binds the program's cu* references to
 * the preloaded shim. Every call must reach the hooks exactly once, with the
 * program's own arguments and the fake's results, and reach the fake exactly
 * once. Also runs e2e_direct_app.c, user code written against plain cuda.h.
 * run_dropin.sh runs it again with the drop-in libcuda.so.1 in place of the fake.
 */
#include <string.h>

#include "e2e_common.h"
#include "e2e_direct_app.h"

/* The fake's inspection functions, found at run time: in drop-in mode libcuda.so.1 is the shim. */
static size_t fake_bytes(int dev)
{
    size_t (*f)(int) = (size_t(*)(int))e2e_fake_sym("fake_cuda_bytes_allocated");
    return f ? f(dev) : (size_t)-1;
}

static uint64_t fake_launches(void)
{
    uint64_t (*f)(void) = (uint64_t(*)(void))e2e_fake_sym("fake_cuda_launch_count");
    return f ? f() : (uint64_t)-1;
}

int main(void)
{
    e2e_init("e2e_direct");
    e2e_record(E2E_LIB_DRIVER);

    int v = 0, n = 0;
    E2E_CU(cuDriverGetVersion(&v));
    E2E_CHECK(v == FAKE_CUDA_VERSION, "driver version %d", v);
    E2E_CALL(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
    E2E_CU(cuInit(0));
    E2E_CU(cuDeviceGetCount(&n));
    E2E_CHECK(n == 2, "device count %d", n);

    CUdevice dev = -1;
    char name[64] = "";
    int major = 0;
    size_t total = 0;
    E2E_CU(cuDeviceGet(&dev, 1));
    E2E_CU(cuDeviceGetName(name, (int)sizeof name, dev));
    E2E_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    E2E_CU(cuDeviceTotalMem_v2(&total, dev));
    E2E_CHECK(dev == 1 && strstr(name, "fake") != NULL && major == 9 && total > 0, "dev %d '%s' cc %d", dev,
              name, major);

    CUcontext ctx = NULL, cur = NULL;
    E2E_CU(cuCtxCreate_v4(&ctx, NULL, 0, dev));
    E2E_CU(cuCtxGetCurrent(&cur));
    E2E_CHECK(cur == ctx && ctx != NULL, "current %p, created %p", (void *)cur, (void *)ctx);

    /* Memory: arguments as the program passed them, results as the fake returned them. */
    enum { N = 4096 };
    static unsigned char host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (unsigned char)i;
    CUdeviceptr d = 0;
    E2E_CU(cuMemAlloc_v2(&d, N));
    const cushim_params_cuMemAlloc_v2 *pa = e2e_last_params("cuMemAlloc_v2");
    if (e2e_shim()) {
        E2E_CHECK(pa != NULL && pa->dptr == &d && pa->bytesize == N, "hook saw dptr %p bytesize %zu",
                  pa ? (void *)pa->dptr : NULL, pa ? pa->bytesize : 0);
        E2E_CHECK(e2e_last_result("cuMemAlloc_v2") == CUDA_SUCCESS, "result %d", e2e_last_result("cuMemAlloc_v2"));
    }
    E2E_CHECK(fake_bytes(1) == N, "fake has %zu bytes", fake_bytes(1));
    E2E_CU(cuMemcpyHtoD_v2(d, host, N));
    E2E_CU(cuMemsetD8_v2(d + 1024, 0xab, 1024));
    E2E_CU(cuMemcpyDtoH_v2(back, d, N));
    E2E_CHECK(back[0] == 0 && back[1023] == (unsigned char)1023 && back[1024] == 0xab && back[2047] == 0xab &&
              back[2048] == 0, "copied data wrong");
    if (e2e_shim()) {
        const cushim_params_cuMemcpyDtoH_v2 *pc = e2e_last_params("cuMemcpyDtoH_v2");
        E2E_CHECK(pc && pc->dstHost == back && pc->srcDevice == d && pc->ByteCount == N, "DtoH params");
    }
    size_t free_b = 0, total_b = 0;
    E2E_CU(cuMemGetInfo_v2(&free_b, &total_b));
    E2E_CHECK(total_b - free_b == N, "free %zu total %zu", free_b, total_b);

    /* An error result must come back unchanged, and the hooks must see it. */
    E2E_CALL(CUDA_ERROR_INVALID_VALUE, cuMemFree_v2((CUdeviceptr)12345));
    if (e2e_shim())
        E2E_CHECK(e2e_last_result("cuMemFree_v2") == CUDA_ERROR_INVALID_VALUE, "hook saw %d",
                  e2e_last_result("cuMemFree_v2"));

    /* Per-thread variants are exports of their own. */
    E2E_CU(cuMemcpyHtoD_v2_ptds(d, host, 16));
    E2E_CU(cuMemsetD8Async_ptsz(d, 1, 16, NULL));

    /* Streams, events, a module, launches. */
    CUstream s = NULL;
    CUevent e1 = NULL, e2 = NULL;
    CUmodule mod = NULL;
    CUfunction f = NULL, missing = NULL;
    float ms = -1;
    E2E_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    E2E_CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
    E2E_CU(cuEventCreate(&e2, CU_EVENT_DEFAULT));
    E2E_CU(cuEventRecord(e1, s));
    E2E_CU(cuModuleLoadData(&mod, "fake image"));
    E2E_CU(cuModuleGetFunction(&f, mod, "vector_add"));
    E2E_CALL(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&missing, mod, "missing_kernel"));
    void *args[] = {&d, &d, &n};
    for (int i = 0; i < 3; i++)
        E2E_CU(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, args, NULL));
    E2E_CALL(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, s, args, NULL));
    if (e2e_shim()) {
        const cushim_params_cuLaunchKernel *pl = e2e_last_params("cuLaunchKernel");
        E2E_CHECK(pl && pl->f == f && pl->blockDimX == 2048 && pl->hStream == s && pl->kernelParams == args,
                  "launch params");
    }
    E2E_CHECK(fake_launches() == 3, "fake recorded %llu launches",
              (unsigned long long)fake_launches());
    E2E_CU(cuMemcpyHtoDAsync_v2(d, host, N, s));
    E2E_CU(cuEventRecord(e2, s));
    E2E_CU(cuStreamSynchronize(s));
    E2E_CU(cuEventElapsedTime_v2(&ms, e1, e2));
    E2E_CHECK(ms >= 0, "elapsed %f", (double)ms);

    const char *str = NULL;
    E2E_CU(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &str));
    E2E_CHECK(str && strcmp(str, "CUDA_ERROR_OUT_OF_MEMORY") == 0, "name '%s'", str ? str : "(null)");

    E2E_CU(cuEventDestroy_v2(e1));
    E2E_CU(cuEventDestroy_v2(e2));
    E2E_CU(cuStreamDestroy_v2(s));
    E2E_CU(cuModuleUnload(mod));
    E2E_CU(cuMemFree_v2(d));
    E2E_CU(cuCtxDestroy_v2(ctx));
    E2E_CHECK(fake_bytes(1) == 0, "fake still has %zu bytes", fake_bytes(1));

    /* User code through cuda.h's macros. */
    E2E_CHECK(direct_app_run() == 0, "the plain cuda.h program failed");

    e2e_expect("cuDriverGetVersion", 1);
    e2e_expect("cuInit", 2);
    e2e_expect("cuDeviceGetCount", 2);
    e2e_expect("cuDeviceGet", 2);
#if CUDA_VERSION >= 13000
    e2e_expect("cuCtxCreate_v4", 2);
#else   /* before 13.0 cuda.h's cuCtxCreate is cuCtxCreate_v2 */
    e2e_expect("cuCtxCreate_v4", 1);
    e2e_expect("cuCtxCreate_v2", 1);
#endif
    e2e_expect("cuMemAlloc_v2", 2);
    e2e_expect("cuMemAlloc", 0);
    e2e_expect("cuMemcpyHtoD_v2", 2);
    e2e_expect("cuMemcpyHtoD_v2_ptds", 1);
    e2e_expect("cuMemsetD8Async_ptsz", 1);
    e2e_expect("cuMemcpyDtoH_v2", 2);
    e2e_expect("cuMemFree_v2", 3);
    e2e_expect("cuCtxDestroy_v2", 2);
    e2e_expect("cuLaunchKernel", 4);
    e2e_expect("cuModuleGetFunction", 2);
    e2e_expect("cuEventRecord", 2);
    e2e_expect_hooks_match_fake(E2E_LIB_DRIVER);
    return e2e_finish();
}
