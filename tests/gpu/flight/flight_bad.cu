// flight_bad.cu - a program for the flight recorder's GPU check (tests/gpu/checks/flight.sh).
//   flight_bad sticky   two good kernels on a stream, then 'culprit' writing one element past the end of its
//                       allocation's page run (an illegal address), then cudaDeviceSynchronize: exits 3 with the
//                       sticky error, as a real program would find it at an unrelated later call
//   flight_bad hang S   a kernel that spins S seconds, then cudaDeviceSynchronize (the watchdog's case); exits 0
//   flight_bad sleep    a few calls, prints READY, then sleeps (killed by SIGKILL by the check)
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__global__ void fill(float *a, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v;
}
__global__ void add(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += a[i];
}
// writes far past 'p': 'off' elements (an address no allocation of this process covers)
__global__ void culprit(float *p, long long off) {
    if (threadIdx.x == 0 && blockIdx.x == 0) p[off] = 1.0f;
}
__global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "sticky";
    const int n = 1 << 20;
    float *a = NULL, *b = NULL;
    cudaStream_t s;
    if (cudaMalloc(&a, n * sizeof(float)) != cudaSuccess || cudaMalloc(&b, n * sizeof(float)) != cudaSuccess ||
        cudaStreamCreate(&s) != cudaSuccess) {
        fprintf(stderr, "flight_bad: setup failed\n");
        return 2;
    }
    fill<<<n / 256, 256, 0, s>>>(a, n, 1.0f);
    fill<<<n / 256, 256, 0, s>>>(b, n, 2.0f);
    cudaStreamSynchronize(s);
    if (strcmp(mode, "sticky") == 0) {
        add<<<n / 256, 256, 0, s>>>(a, b, n);
        culprit<<<1, 32, 0, s>>>(b, 1LL << 36);   // 256 GiB past b: no allocation there
        cudaError_t e = cudaDeviceSynchronize();
        printf("flight_bad: sync returned %s\n", cudaGetErrorName(e));
        return e == cudaErrorIllegalAddress ? 3 : 1;
    }
    if (strcmp(mode, "hang") == 0) {
        int sec = argc > 2 ? atoi(argv[2]) : 3, khz = 0;
        cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
        spin<<<1, 1, 0, s>>>((long long)sec * khz * 1000LL);
        cudaError_t e = cudaDeviceSynchronize();
        printf("flight_bad: sync returned %s\n", cudaGetErrorName(e));
        return e == cudaSuccess ? 0 : 1;
    }
    if (strcmp(mode, "sleep") == 0) {
        add<<<n / 256, 256, 0, s>>>(a, b, n);
        cudaStreamSynchronize(s);
        printf("READY\n");
        fflush(stdout);
        sleep(60);
        return 0;
    }
    fprintf(stderr, "flight_bad: unknown mode %s\n", mode);
    return 2;
}
