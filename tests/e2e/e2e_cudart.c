/*
 * e2e_cudart.c - a runtime-API program linked only against libcudart.so.13 (the fake), shim preloaded.
 *
 * The runtime links no driver symbol: it dlopen()s libcuda.so.1 and resolves
 * everything through cuGetProcAddress (tests/fake/fake_cudart.c does what the
 * real one does). A shim that only exported wrappers would see no driver call
 * at all; this program checks that the hooks see every driver call the
 * runtime makes, exactly once, that the runtime's look-ups were answered with
 * the shim's wrappers, and that cudaGetDriverEntryPoint[ByVersion] hand out
 * wrappers of the right variant. Driver hooks only: a hooked runtime call
 * runs its driver calls unhooked, by design (the shim's depth guard); the
 * counts file (run_counts.sh) covers both libraries.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "e2e_classify.h"
#include "e2e_common.h"

uint64_t fake_cudart_driver_lookups(void);

static void kernel_stub(void) {}   /* stands for a __global__ function's host stub */

int main(void)
{
    e2e_init("e2e_cudart");
    e2e_record(E2E_LIB_DRIVER);

    int rv = 0, dv = 0, n = 0, dev = -1;
    E2E_CU(cudaRuntimeGetVersion(&rv));
    E2E_CU(cudaDriverGetVersion(&dv));
    E2E_CHECK(rv == FAKE_CUDA_VERSION && dv == FAKE_CUDA_VERSION, "runtime %d driver %d", rv, dv);
    E2E_CU(cudaGetDeviceCount(&n));
    E2E_CHECK(n == 2, "device count %d", n);
    E2E_CU(cudaSetDevice(1));
    E2E_CU(cudaGetDevice(&dev));
    E2E_CHECK(dev == 1, "device %d", dev);

    enum { N = 1 << 16 };
    static unsigned char host[N], back[N];
    memset(host, 0x5a, N);
    void *d = NULL;
    E2E_CU(cudaMalloc(&d, N));
    if (e2e_shim()) {
        const cushim_params_cuMemAlloc_v2 *p = e2e_last_params("cuMemAlloc_v2");
        E2E_CHECK(p && p->bytesize == N, "the driver allocation the runtime made: %zu bytes", p ? p->bytesize : 0);
    }
    E2E_CU(cudaMemcpy(d, host, N, cudaMemcpyHostToDevice));
    E2E_CU(cudaMemset((char *)d + 16, 0, 16));
    E2E_CU(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost));
    E2E_CHECK(back[0] == 0x5a && back[16] == 0 && back[31] == 0 && back[32] == 0x5a, "data");

    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    float ms = -1;
    E2E_CU(cudaStreamCreate(&s));
    E2E_CU(cudaEventCreate(&a));
    E2E_CU(cudaEventCreate(&b));
    E2E_CU(cudaEventRecord(a, s));
    void *args[] = {&d};
    E2E_CU(cudaLaunchKernel((const void *)kernel_stub, (dim3){8, 1, 1}, (dim3){128, 1, 1}, args, 0, s));
    E2E_CU(cudaLaunchKernel((const void *)kernel_stub, (dim3){8, 1, 1}, (dim3){128, 1, 1}, args, 0, s));
    E2E_CU(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, s));
    E2E_CU(cudaEventRecord(b, s));
    E2E_CU(cudaStreamSynchronize(s));
    E2E_CU(cudaEventSynchronize(b));
    E2E_CU(cudaEventElapsedTime(&ms, a, b));
    E2E_CU(cudaDeviceSynchronize());
    /* Per-thread-default-stream exports: the runtime resolves their driver side with flag 2. */
    E2E_CU(cudaMemcpy_ptds(back, d, 64, cudaMemcpyDeviceToHost));
    E2E_CU(cudaLaunchKernel_ptsz((const void *)kernel_stub, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0, NULL));

    /* Driver entry points through the runtime: the shim's wrappers, of the variant asked for. */
    /* Wrappers are expected where the shim is in the process, even if its hook API is out of reach. */
    int wrapped = e2e_shim() || (getenv("E2E_DROPIN") && strcmp(getenv("E2E_DROPIN"), "1") == 0);
    void *p = NULL;
    enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSymbolNotFound;
    char buf[256];
    E2E_CU(cudaGetDriverEntryPoint("cuMemAlloc", &p, cudaEnableDefault, &st));
    const char *want = wrapped ? "shim:cuMemAlloc_v2" : "fake:cuMemAlloc_v2";
    E2E_CHECK(st == cudaDriverEntryPointSuccess && strcmp(e2e_classify(p, buf, sizeof buf), want) == 0,
              "cudaGetDriverEntryPoint(cuMemAlloc): %s, want %s", e2e_classify(p, buf, sizeof buf), want);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))p;
    CUdeviceptr extra = 0;
    if (mem_alloc != NULL) {
        E2E_CU(mem_alloc(&extra, 4096));
        E2E_CU(cudaFree((void *)(uintptr_t)extra));
    }
    E2E_CU(cudaGetDriverEntryPointByVersion("cuMemAlloc", &p, 3000, cudaEnableDefault, &st));
    want = wrapped ? "shim:cuMemAlloc" : "fake:cuMemAlloc";
    E2E_CHECK(strcmp(e2e_classify(p, buf, sizeof buf), want) == 0, "ByVersion(cuMemAlloc, 3000): %s, want %s",
              e2e_classify(p, buf, sizeof buf), want);
    E2E_CU(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &p, FAKE_CUDA_VERSION, cudaEnablePerThreadDefaultStream, &st));
    want = wrapped ? "shim:cuLaunchKernel_ptsz" : "fake:cuLaunchKernel_ptsz";
    E2E_CHECK(strcmp(e2e_classify(p, buf, sizeof buf), want) == 0, "ByVersion(cuLaunchKernel, ptds): %s, want %s",
              e2e_classify(p, buf, sizeof buf), want);
    E2E_CU(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &p, FAKE_CUDA_VERSION, cudaEnableDefault, &st));
    E2E_CHECK(p == NULL && st == cudaDriverEntryPointSymbolNotFound, "unknown symbol: %p status %d", p, (int)st);

    E2E_CU(cudaEventDestroy(a));
    E2E_CU(cudaEventDestroy(b));
    E2E_CU(cudaStreamDestroy(s));
    E2E_CU(cudaFree(d));
    E2E_CHECK(cudaGetLastError() == cudaSuccess, "sticky error");
    E2E_CALL(cudaErrorInvalidDevice, cudaSetDevice(7));
    E2E_CHECK(strcmp(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice") == 0, "error name");

    /* The driver calls behind all that: each seen once by the hooks and once by the fake. */
    e2e_expect("cuInit", 1);
    e2e_expect("cuMemAlloc_v2", 2);
    e2e_expect("cuMemFree_v2", 2);
    e2e_expect("cuMemcpyHtoD_v2", 1);
    e2e_expect("cuMemcpyDtoH_v2", 1);
    e2e_expect("cuMemcpyDtoH_v2_ptds", 1);
    e2e_expect("cuMemcpyDtoHAsync_v2", 1);
    e2e_expect("cuMemsetD8_v2", 1);
    e2e_expect("cuLaunchKernel", 2);
    e2e_expect("cuLaunchKernel_ptsz", 1);
    e2e_expect("cuModuleLoadData", 1);
    e2e_expect("cuModuleGetFunction", 1);
    e2e_expect("cuDevicePrimaryCtxRetain", 1);
    e2e_expect("cuEventElapsedTime_v2", 1);
    e2e_expect("cuStreamDestroy_v2", 1);
#if CUDA_VERSION >= 13000
    e2e_expect("cuCtxSynchronize_v2", 1);
#else   /* what "cuCtxSynchronize" is before 13.0 */
    e2e_expect("cuCtxSynchronize", 1);
#endif
    e2e_expect_hooks_match_fake(E2E_LIB_DRIVER);
    /* The runtime's own look-ups: every one went through the shim's cuGetProcAddress. */
    if (e2e_shim()) {
        uint64_t seen = e2e_pre("cuGetProcAddress_v2") + e2e_pre("cuGetProcAddress");
        E2E_CHECK(seen == fake_cudart_driver_lookups(), "hooks saw %llu cuGetProcAddress calls, the runtime made %llu",
                  (unsigned long long)seen, (unsigned long long)fake_cudart_driver_lookups());
    }
    E2E_CHECK(e2e_fake_rt_count("cudaMalloc") == 1 && e2e_fake_rt_count("cudaLaunchKernel") == 2,
              "the runtime received %llu cudaMalloc, %llu cudaLaunchKernel",
              (unsigned long long)e2e_fake_rt_count("cudaMalloc"),
              (unsigned long long)e2e_fake_rt_count("cudaLaunchKernel"));
    return e2e_finish();
}
