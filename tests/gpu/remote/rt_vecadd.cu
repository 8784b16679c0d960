// rt_vecadd.cu - a runtime-API program (nvcc -cudart shared, no -lcuda) for the GPU check 'remote'
// (tests/gpu/checks/remote.sh): <<<>>> launches on a stream and the default stream, copies both ways in
// several sizes (one over the client's 32 MiB piece), events, device properties, a launch the runtime refuses.
// Prints only what a local run and a run through cushim-serve must agree on.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void axpb(float *y, const float *x, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}

static void report(const char *what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

int main()
{
    int n = 0;
    report("cudaGetDeviceCount", cudaGetDeviceCount(&n));
    cudaDeviceProp prop;
    report("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, 0));
    std::printf("device 0: %s, compute %d.%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
    const int sizes[] = { 1, 1000, 1 << 20, 12 << 20 };   // the last: 48 MiB of floats
    for (int k = 0; k < 4; k++) {
        int N = sizes[k];
        float *hx = (float *)std::malloc(N * sizeof(float)), *hy = (float *)std::malloc(N * sizeof(float));
        float *dx = nullptr, *dy = nullptr;
        for (int i = 0; i < N; i++)
            hx[i] = (float)(i % 977) * 0.25f;
        cudaStream_t s;
        cudaEvent_t a, b;
        float ms = -1;
        cudaMalloc(&dx, N * sizeof(float));
        cudaMalloc(&dy, N * sizeof(float));
        cudaStreamCreate(&s);
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        cudaMemcpyAsync(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice, s);
        cudaEventRecord(a, s);
        axpb<<<(N + 255) / 256, 256, 0, s>>>(dy, dx, 3.0f, 1.0f, N);
        cudaEventRecord(b, s);
        cudaMemcpyAsync(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost, s);
        report("cudaStreamSynchronize", cudaStreamSynchronize(s));
        cudaEventElapsedTime(&ms, a, b);
        double sum = 0;
        int bad = 0;
        for (int i = 0; i < N; i++) {
            sum += hy[i];
            bad += hy[i] != 3.0f * hx[i] + 1.0f;
        }
        axpb<<<(N + 255) / 256, 256>>>(dx, dy, 0.5f, 0.0f, N);   // the default stream
        cudaMemcpy(hx, dx, N * sizeof(float), cudaMemcpyDeviceToHost);
        std::printf("n %d: sum %.1f, %d wrong, then x[n-1] %.3f, elapsed %s\n", N, sum, bad, hx[N - 1],
                    ms >= 0 ? "measured" : "not measured");
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        cudaStreamDestroy(s);
        cudaFree(dx);
        cudaFree(dy);
        std::free(hx);
        std::free(hy);
    }
    report("last error", cudaGetLastError());
    axpb<<<1, 4096>>>(nullptr, nullptr, 0, 0, 0);   // too many threads: refused
    report("bad launch", cudaGetLastError());
    report("after it", cudaGetLastError());
    axpb<<<1, 0>>>(nullptr, nullptr, 0, 0, 0);      // a block of no threads: refused
    report("zero-thread launch", cudaGetLastError());
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    return 0;
}
