// rt_vecadd.cu - a runtime-API program (nvcc -cudart shared, no -lcuda) for the GPU check 'remote'
// (tests/gpu/checks/remote.sh): <<<>>> launches on a stream and the default stream, copies both ways in
// several sizes (one over the client's 32 MiB piece), events, device properties, a launch the runtime refuses, a
// kernel's function by cudaGetFuncBySymbol and its kernel by cudaGetKernel launched through the driver's calls and
// the runtime's (XLA's way), its name and parameter layout, and their error for an address no fat binary
// registered; cudaLaunchKernelEx (a cluster of 2 on a device with clusters), a cooperative launch, the cache
// configuration, dynamic shared memory and cluster occupancy, and a kernel node (the runtime's calls that take a
// stub answered through their driver forms over remoting).
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
    // XLA's way (docs/remote.md, "A stub's function and kernel"): the kernel's function by cudaGetFuncBySymbol and
    // its kernel by cudaGetKernel, used with the driver's calls (taken through the runtime: no -lcuda) and, for the
    // kernel, with the runtime's calls that take a stub
    {
        typedef int (*fattr_fn)(int *, int, cudaFunction_t);
        typedef int (*launch_fn)(cudaFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 cudaStream_t, void **, void **);
        typedef int (*kfunc_fn)(cudaFunction_t *, cudaKernel_t);
        void *fa = nullptr, *la = nullptr, *kf = nullptr;
        cudaDriverEntryPointQueryResult st;
        report("entry point cuFuncGetAttribute",
               cudaGetDriverEntryPointByVersion("cuFuncGetAttribute", &fa, 12000, cudaEnableDefault, &st));
        report("entry point cuLaunchKernel",
               cudaGetDriverEntryPointByVersion("cuLaunchKernel", &la, 12000, cudaEnableDefault, &st));
        report("entry point cuKernelGetFunction",
               cudaGetDriverEntryPointByVersion("cuKernelGetFunction", &kf, 12000, cudaEnableDefault, &st));
        const int N = 4096;
        float *hx = (float *)std::malloc(N * sizeof(float)), *hy = (float *)std::malloc(N * sizeof(float));
        float *dx = nullptr, *dy = nullptr, a = 2.0f, b = 1.0f;
        int n = N;
        void *args[] = { &dy, &dx, &a, &b, &n };
        for (int i = 0; i < N; i++)
            hx[i] = (float)(i % 101);
        cudaMalloc(&dx, N * sizeof(float));
        cudaMalloc(&dy, N * sizeof(float));
        cudaMemcpy(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice);
        cudaFunction_t f = nullptr, f2 = nullptr, kfn = nullptr;
        cudaKernel_t k = nullptr, k2 = nullptr;
        report("cudaGetFuncBySymbol", cudaGetFuncBySymbol(&f, (const void *)axpb));
        report("cudaGetFuncBySymbol again", cudaGetFuncBySymbol(&f2, (const void *)axpb));
        std::printf("the same function: %s\n", f != nullptr && f == f2 ? "yes" : "no");
        report("cudaGetKernel", cudaGetKernel(&k, (const void *)axpb));
        report("cudaGetKernel again", cudaGetKernel(&k2, (const void *)axpb));
        std::printf("the same kernel: %s\n", k != nullptr && k == k2 ? "yes" : "no");
        const char *name = nullptr;
        report("cudaFuncGetName", cudaFuncGetName(&name, (const void *)axpb));
        std::printf("name: %s\n", name != nullptr ? name : "(none)");
        for (size_t i = 0; i < 6; i++) {   // five parameters, then one past them
            size_t off = 77, size = 77;
            cudaError_t e = cudaFuncGetParamInfo((const void *)axpb, i, &off, &size);
            std::printf("parameter %zu: %s, offset %zu, size %zu\n", i, cudaGetErrorName(e), off, size);
        }
        report("then cudaGetLastError", cudaGetLastError());
        for (int way = 0; way < 3; way++) {   // the function's driver launch; the kernel's function's; the kernel's
            int r = -1, threads = -1, bad = 0;
            a = 2.0f + (float)way;
            if (way == 0 && fa != nullptr && f != nullptr)
                r = ((fattr_fn)fa)(&threads, 0 /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */, f);
            if (way == 1 && kf != nullptr && k != nullptr)
                r = ((kfunc_fn)kf)(&kfn, k);
            if (way == 2 && k != nullptr) {
                cudaFuncAttributes attr;
                r = (int)cudaFuncGetAttributes(&attr, (const void *)k);
                threads = attr.maxThreadsPerBlock;
            }
            cudaFunction_t use = way == 0 ? f : kfn;
            if (way < 2 && la != nullptr && use != nullptr)
                r = r != 0 ? r : ((launch_fn)la)(use, (N + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
            if (way == 2)
                r = r != 0 ? r : (int)cudaLaunchKernel((const void *)k, dim3((N + 255) / 256), dim3(256), args, 0, 0);
            report("cudaDeviceSynchronize", cudaDeviceSynchronize());
            cudaMemcpy(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost);
            for (int i = 0; i < N; i++)
                bad += hy[i] != a * hx[i] + b;
            std::printf("way %d: %d, %d threads, %d wrong\n", way, r, threads, bad);
        }
        cudaFree(dx);
        cudaFree(dy);
        std::free(hx);
        std::free(hy);
        report("last error", cudaGetLastError());
        std::fflush(stdout);
        // an address no fat binary registered (a host function): the runtime's word, the oracle of the client's
        report("cudaGetFuncBySymbol of a host function", cudaGetFuncBySymbol(&f, (const void *)report));
        report("then cudaGetLastError", cudaGetLastError());
        report("cudaGetKernel of a host function", cudaGetKernel(&k, (const void *)report));
        report("then cudaGetLastError", cudaGetLastError());
    }
    // the other calls that take a stub, through their driver forms over remoting (docs/remote.md, "Calls that take
    // a host stub"): cudaLaunchKernelEx (cudaLaunchKernelExC) with a cluster of 2 where the device has clusters
    // (sm_90), plain otherwise; a cooperative launch; the cache configuration; dynamic shared memory and cluster
    // occupancy; a kernel node added, set in the instantiation, launched
    {
        const int N = 8192;   // 32 blocks of 256: a cluster of 2 divides the grid
        float *hx = (float *)std::malloc(N * sizeof(float)), *hy = (float *)std::malloc(N * sizeof(float));
        float *dx = nullptr, *dy = nullptr, a = 0, b = 0.5f;
        int n = N, clusters = 0, coop = 0;
        void *args[] = { &dy, &dx, &a, &b, &n };
        for (int i = 0; i < N; i++)
            hx[i] = (float)(i % 53);
        cudaMalloc(&dx, N * sizeof(float));
        cudaMalloc(&dy, N * sizeof(float));
        cudaMemcpy(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice);
        cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, 0);
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
        std::printf("clusters: %s, cooperative: %s\n", clusters ? "yes" : "no", coop ? "yes" : "no");
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = 2, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(N / 256), cfg.blockDim = dim3(256), cfg.attrs = at, cfg.numAttrs = clusters ? 1 : 0;
        size_t smem = 0;
        int nclusters = -1;
        report("cudaFuncSetCacheConfig", cudaFuncSetCacheConfig((const void *)axpb, cudaFuncCachePreferShared));
        report("cudaOccupancyAvailableDynamicSMemPerBlock",
               cudaOccupancyAvailableDynamicSMemPerBlock(&smem, (const void *)axpb, 2, 256));
        std::printf("dynamic shared memory per block: %zu\n", smem);
        if (clusters) {
            report("cudaOccupancyMaxActiveClusters", cudaOccupancyMaxActiveClusters(&nclusters, (const void *)axpb, &cfg));
            std::printf("active clusters of 2: %d\n", nclusters);
        }
        for (int way = 0; way < 3; way++) {   // cudaLaunchKernelEx; cooperative; a kernel node
            int bad = 0;
            cudaError_t e = cudaSuccess;
            a = 5.0f + (float)way;
            cudaMemset(dy, 0, N * sizeof(float));
            if (way == 0)
                e = cudaLaunchKernelEx(&cfg, axpb, dy, (const float *)dx, a, b, n);
            if (way == 1 && coop)
                e = cudaLaunchCooperativeKernel((const void *)axpb, dim3(N / 256), dim3(256), args, 0, 0);
            if (way == 2) {
                cudaGraph_t g = nullptr;
                cudaGraphExec_t ge = nullptr;
                cudaGraphNode_t node = nullptr;
                cudaKernelNodeParams kp = {};
                kp.func = (void *)axpb, kp.gridDim = dim3(N / 256), kp.blockDim = dim3(256), kp.kernelParams = args;
                float keep = a;
                a = 1.0f;   // the node's arguments are copied when it is added: changed by the exec update below
                e = cudaGraphCreate(&g, 0);
                e = e != cudaSuccess ? e : cudaGraphAddKernelNode(&node, g, nullptr, 0, &kp);
                e = e != cudaSuccess ? e : cudaGraphInstantiate(&ge, g, 0);
                a = keep;
                e = e != cudaSuccess ? e : cudaGraphExecKernelNodeSetParams(ge, node, &kp);
                e = e != cudaSuccess ? e : cudaGraphLaunch(ge, 0);
                report("cudaStreamSynchronize", cudaStreamSynchronize(0));
                if (ge != nullptr)
                    cudaGraphExecDestroy(ge);
                if (g != nullptr)
                    cudaGraphDestroy(g);
            }
            report("cudaDeviceSynchronize", cudaDeviceSynchronize());
            cudaMemcpy(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost);
            for (int i = 0; i < N; i++)
                bad += hy[i] != a * hx[i] + b;
            std::printf("launch way %d: %s, %d wrong\n", way, cudaGetErrorName(e), way == 1 && !coop ? 0 : bad);
        }
        cudaFree(dx);
        cudaFree(dy);
        std::free(hx);
        std::free(hy);
        report("last error", cudaGetLastError());
    }
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    return 0;
}
