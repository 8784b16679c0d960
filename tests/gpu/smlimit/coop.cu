// coop.cu - a cooperative-launch load for the smlimit GPU check: a kernel launched with
// cudaLaunchCooperativeKernel (every block resident, grid-wide syncs) that spins about 'us'
// microseconds, in a loop; prints 'rate <launches/s>' over the measured seconds.
//   coop [seconds=4] [warmup=1] [us=1000]
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <chrono>

namespace cg = cooperative_groups;

__global__ void spin(long long cycles, int rounds, unsigned long long *sink)
{
    cg::grid_group grid = cg::this_grid();
    unsigned long long acc = 0;
    for (int r = 0; r < rounds; r++) {
        long long t0 = clock64();
        while (clock64() - t0 < cycles)
            acc += (unsigned long long)t0;
        grid.sync();
    }
    if (acc == 42)
        *sink = acc;
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "coop: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 4, warmup = argc > 2 ? atof(argv[2]) : 1;
    double us = argc > 3 ? atof(argv[3]) : 1000;
    int dev = 0, sms = 0, per_sm = 0, khz = 0;
    unsigned long long *sink;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin, 128, 0));
    CK(cudaMalloc(&sink, sizeof *sink));
    int rounds = 4;
    long long cycles = (long long)(us / rounds * khz / 1000.0);
    dim3 grid(sms * (per_sm > 0 ? 1 : 1)), block(128);
    void *args[] = {&cycles, &rounds, &sink};
    auto run_for = [&](double s, long *n) -> double {
        cudaDeviceSynchronize();
        auto t0 = std::chrono::steady_clock::now();
        double dt = 0;
        *n = 0;
        do {
            for (int i = 0; i < 4; i++)
                if (cudaLaunchCooperativeKernel((void *)spin, grid, block, args, 0, 0) != cudaSuccess)
                    return -1;
            *n += 4;
            dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        } while (dt < s);
        cudaDeviceSynchronize();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    long n;
    if (run_for(warmup, &n) < 0) { fprintf(stderr, "coop: launch failed\n"); return 1; }
    double dt = run_for(seconds, &n);
    if (dt < 0) { fprintf(stderr, "coop: launch failed\n"); return 1; }
    printf("rate %.3f\n", n / dt);
    return 0;
}
