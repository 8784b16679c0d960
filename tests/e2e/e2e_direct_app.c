/*
 * e2e_direct_app.c - the user's half of e2e_direct: plain driver-API code against plain <cuda.h>.
 *
 * Compiled without the generated headers, so cuMemAlloc, cuCtxCreate and
 * friends go through cuda.h's macros to the exports the compiler really
 * references (cuMemAlloc_v2, cuCtxCreate_v4): e2e_direct checks that the shim
 * saw exactly those.
 */
#include <cuda.h>
#include <string.h>

#include "e2e_direct_app.h"

int direct_app_run(void)
{
    CUcontext ctx;
    CUdevice dev;
    CUdeviceptr d;
    char host[256], back[256];
    int bad = 0;

    memset(host, 7, sizeof host);
    bad += cuInit(0) != CUDA_SUCCESS;
    bad += cuDeviceGet(&dev, 0) != CUDA_SUCCESS;
#if CUDA_VERSION >= 13000   /* cuCtxCreate took create params in 13.0 */
    bad += cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS;
#else
    bad += cuCtxCreate(&ctx, 0, dev) != CUDA_SUCCESS;
#endif
    bad += cuMemAlloc(&d, sizeof host) != CUDA_SUCCESS;
    bad += cuMemcpyHtoD(d, host, sizeof host) != CUDA_SUCCESS;
    bad += cuMemcpyDtoH(back, d, sizeof back) != CUDA_SUCCESS;
    bad += memcmp(host, back, sizeof host) != 0;
    bad += cuMemFree(d) != CUDA_SUCCESS;
    bad += cuCtxDestroy(ctx) != CUDA_SUCCESS;
    return bad;
}
