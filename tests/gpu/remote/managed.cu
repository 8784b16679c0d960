// managed.cu - managed memory as teaching code and the CUDA samples use it, for the GPU check 'remotemanaged'
// (tests/gpu/checks/remotemanaged.sh; docs/remote.md "Managed memory"): cudaMallocManaged, host writes, a kernel,
// a synchronisation, host reads; a partial host write and a launch on a stream; cudaMemcpyDefault from and to
// managed memory; a second block written by a kernel while the first is read. Prints only what a native run and a
// run through cushim-serve must agree on (the concurrent-managed-access attribute, which differs, goes to stderr).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void addv(int *p, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += v;
}

__global__ void square(int *dst, const int *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i] * src[i];
}

static long long sum(const int *p, int n)
{
    long long s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

static void report(const char *what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

int main()
{
    const int n = 1 << 20;   // 4 MiB of ints
    int *a = nullptr, *b = nullptr, cma = -1;
    cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, 0);
    std::fprintf(stderr, "concurrent managed access: %d\n", cma);
    report("cudaMallocManaged a", cudaMallocManaged(&a, n * sizeof(int)));
    report("cudaMallocManaged b", cudaMallocManaged(&b, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        a[i] = i % 1000;
    addv<<<(n + 255) / 256, 256>>>(a, 7, n);
    report("launch", cudaGetLastError());
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    std::printf("after one launch: a[0] %d a[n-1] %d sum %lld\n", a[0], a[n - 1], sum(a, n));
    a[12345] = -1;   // a partial write
    cudaStream_t s;
    report("cudaStreamCreate", cudaStreamCreate(&s));
    addv<<<(n + 255) / 256, 256, 0, s>>>(a, 1, n);
    square<<<(n + 255) / 256, 256, 0, s>>>(b, a, n);
    report("cudaStreamSynchronize", cudaStreamSynchronize(s));
    std::printf("after a stream: a[12345] %d sum a %lld sum b %lld\n", a[12345], sum(a, n), sum(b, n));
    static int host[1 << 20];
    report("cudaMemcpy default from managed", cudaMemcpy(host, b, n * sizeof(int), cudaMemcpyDefault));
    std::printf("copied: %lld\n", sum(host, n));
    for (int i = 0; i < n; i++)
        host[i] = -i % 77;
    report("cudaMemcpy default to managed", cudaMemcpy(a, host, n * sizeof(int), cudaMemcpyDefault));
    std::printf("after the copy: sum a %lld\n", sum(a, n));
    addv<<<(n + 255) / 256, 256>>>(a, 3, n);
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    std::printf("after the last launch: sum a %lld\n", sum(a, n));
    report("cudaFree a", cudaFree(a));
    report("cudaFree b", cudaFree(b));
    report("cudaStreamDestroy", cudaStreamDestroy(s));
    return 0;
}
