/*
 * copies_lib.c - linked against a libcudart.so.12 found on the GPU machine (a
 * wheel's), dlopen()ed RTLD_LOCAL by copies_main (linked against the toolkit's
 * libcudart.so.13). Its references are cudaX@libcudart.so.12.
 */
#include <cuda_runtime_api.h>
#include <string.h>

/* Its copy's version, then a device round trip through that copy: 0 when the bytes came back. */
__attribute__((visibility("default"))) int copies_version(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}

__attribute__((visibility("default"))) int copies_roundtrip(void)
{
    enum { N = 1 << 20 };
    static unsigned char host[N], back[N];
    void *d = 0;
    memset(host, 0x3c, N);
    if (cudaMalloc(&d, N) != cudaSuccess)
        return -1;
    if (cudaMemcpy(d, host, N, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemset((char *)d + 4096, 0x7e, 4096) != cudaSuccess ||
        cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        return -2;
    cudaFree(d);
    memset(host + 4096, 0x7e, 4096);
    return memcmp(host, back, N) == 0 ? 0 : -3;
}

__attribute__((visibility("default"))) void *copies_bound(void)
{
    return (void *)&cudaRuntimeGetVersion;
}
