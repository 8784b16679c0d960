// slice_probe.cu - how the GPU time-shares between processes (no MPS): one block per SM spins for
// 'ms' milliseconds reading %globaltimer and records every gap longer than 'gap_us' (the context was
// switched out). Run two at once; each prints its gaps and the runs between them:
//   slice_probe MS [GAP_US] [PERIOD_MS]
// PERIOD_MS > 0: instead of one long kernel, a kernel of 1 ms every PERIOD_MS (a bursty partner).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <unistd.h>

__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }

// block 0 thread 0 records gaps; all blocks spin so the context occupies every SM
__global__ void spin(unsigned long long ns, unsigned long long gap, unsigned long long *out, int cap, int *n)
{
    unsigned long long t0 = gt(), prev = t0, now = t0;
    while ((now = gt()) - t0 < ns) {
        if (blockIdx.x == 0 && threadIdx.x == 0 && now - prev > gap) {
            int i = atomicAdd(n, 1);
            if (i < cap) { out[2 * i] = prev; out[2 * i + 1] = now; }
        }
        prev = now;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int i = atomicAdd(n, 1);
        if (i < cap) { out[2 * i] = t0; out[2 * i + 1] = 0; }   // marker: kernel start
    }
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 2000;
    double gap_us = argc > 2 ? atof(argv[2]) : 20;
    double period = argc > 3 ? atof(argv[3]) : 0;
    int sms = 0, cap = 1 << 16;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    unsigned long long *d, *h = (unsigned long long *)malloc(sizeof(unsigned long long) * 2 * cap);
    int *dn, hn = 0;
    cudaMalloc(&d, sizeof(unsigned long long) * 2 * cap);
    cudaMalloc(&dn, sizeof(int));
    cudaMemset(dn, 0, sizeof(int));
    spin<<<sms, 32>>>(1000000ull, 1000000000ull, d, cap, dn);   // warm
    cudaDeviceSynchronize();
    cudaMemset(dn, 0, sizeof(int));
    if (period <= 0) {
        spin<<<sms, 32>>>((unsigned long long)(ms * 1e6), (unsigned long long)(gap_us * 1e3), d, cap, dn);
    } else {
        int k = (int)(ms / period);
        for (int i = 0; i < k; i++) {
            spin<<<sms, 32>>>(1000000ull, (unsigned long long)(gap_us * 1e3), d, cap, dn);
            usleep((useconds_t)(period * 1000));
        }
    }
    cudaDeviceSynchronize();
    cudaMemcpy(&hn, dn, sizeof(int), cudaMemcpyDeviceToHost);
    if (hn > cap) hn = cap;
    cudaMemcpy(h, d, sizeof(unsigned long long) * 2 * hn, cudaMemcpyDeviceToHost);
    std::vector<double> gaps, runs;
    std::vector<std::pair<unsigned long long, unsigned long long>> ev;
    for (int i = 0; i < hn; i++) ev.push_back({h[2 * i], h[2 * i + 1]});
    std::sort(ev.begin(), ev.end());
    unsigned long long last_end = 0;
    for (auto &e : ev) {
        if (e.second == 0) { last_end = e.first; continue; }   // a kernel start: runs count from there
        if (last_end) runs.push_back((e.first - last_end) / 1e3);
        gaps.push_back((e.second - e.first) / 1e3);
        last_end = e.second;
    }
    auto show = [](const char *what, std::vector<double> v) {
        if (v.empty()) { printf("%s none\n", what); return; }
        std::sort(v.begin(), v.end());
        double s = 0; for (double x : v) s += x;
        printf("%s n %zu min %.1f p10 %.1f median %.1f p90 %.1f max %.1f sum %.1f (us)\n", what, v.size(), v[0],
               v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back(), s);
    };
    show("gaps", gaps);
    show("runs", runs);
    return 0;
}
