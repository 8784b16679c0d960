/*
 * ov_bw.cu - what a kernel gets from host-backed memory, for tests/gpu/checks/oversub.sh: the two ways memlimit's
 * oversubscription can back an allocation past the quota (docs/plugins/memlimit.md "Oversubscription") side by side,
 * and device memory for scale.
 *
 *   managed   cuMemAllocManaged, advised SET_PREFERRED_LOCATION = CPU and SET_ACCESSED_BY = device 0 (memlimit's
 *             cuMemAlloc / cudaMalloc path)
 *   hostvmm   cuMemCreate at CU_MEM_LOCATION_TYPE_HOST_NUMA (the node the driver names closest to the device), else
 *             CU_MEM_LOCATION_TYPE_HOST, mapped with cuMemMap and given to device 0 with cuMemSetAccess (memlimit's
 *             cuMemCreate path)
 *   device    cudaMalloc
 *
 * USAGE: ov_bw [MIB [REPS]]     (default 1024 MiB, 9 repetitions)
 *
 * A grid-stride kernel reads and writes every float4 of the buffer once (2 x MIB moved). Each repetition times the
 * three kinds one after the other (interleaved, so drift of clocks or of the machine hits all alike) with CUDA
 * events; the first repetition warms up and is not counted. Prints 'location host_numa|host', then
 * 'gbps KIND MEDIAN MIN MAX' per kind (GB/s = 1e9 bytes/s) and 'ratio hostvmm/managed R'; 'skip REASON' when the
 * device supports no host location for VMM memory. Exit status 1 on a CUDA error.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>
#include <vector>

#define CK(x)                                                                           \
    do {                                                                                \
        CUresult e_ = (x);                                                              \
        if (e_ != CUDA_SUCCESS) {                                                       \
            const char *s_ = "?";                                                       \
            cuGetErrorName(e_, &s_);                                                    \
            fprintf(stderr, "ov_bw: %s failed: %s (%d)\n", #x, s_, (int)e_);            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)
#define CKR(x)                                                                          \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "ov_bw: %s failed: %s\n", #x, cudaGetErrorString(e_));      \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

__global__ void rmw(float4 *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = p[i];
        v.x = v.x * 0.5f + 1.0f;
        v.y = v.y * 0.5f + 1.0f;
        v.z = v.z * 0.5f + 1.0f;
        v.w = v.w * 0.5f + 1.0f;
        p[i] = v;
    }
}

static void advise_host(CUdeviceptr p, size_t n)
{
#if CUDA_VERSION >= 13000
    CUmemLocation cpu = {}, dev = {};
    cpu.type = CU_MEM_LOCATION_TYPE_HOST;
    dev.type = CU_MEM_LOCATION_TYPE_DEVICE;
    dev.id = 0;
    CK(cuMemAdvise(p, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, cpu));
    CK(cuMemAdvise(p, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev));
#else
    CK(cuMemAdvise(p, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU));
    CK(cuMemAdvise(p, n, CU_MEM_ADVISE_SET_ACCESSED_BY, 0));
#endif
}

/* VMM physical memory at a host location, mapped for device 0; 0 with *loc "" when the device supports none. */
static CUdeviceptr host_vmm(size_t *bytes, const char **loc)
{
    int numa_ok = 0, host_ok = 0, numa = 0;
    CUmemAllocationProp prop = {};
    CUmemGenericAllocationHandle h;
    CUmemAccessDesc acc = {};
    CUdeviceptr va = 0;
    size_t g = 0;
    cuDeviceGetAttribute(&numa_ok, (CUdevice_attribute)141, 0);   /* HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
    cuDeviceGetAttribute(&host_ok, (CUdevice_attribute)145, 0);   /* HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    if (numa_ok == 1) {
        if (cuDeviceGetAttribute(&numa, (CUdevice_attribute)134, 0) != CUDA_SUCCESS || numa < 0)   /* HOST_NUMA_ID */
            numa = 0;
        prop.location.type = (CUmemLocationType)3;   /* CU_MEM_LOCATION_TYPE_HOST_NUMA */
        prop.location.id = numa;
        *loc = "host_numa";
    } else if (host_ok == 1) {
        prop.location.type = (CUmemLocationType)2;   /* CU_MEM_LOCATION_TYPE_HOST */
        *loc = "host";
    } else {
        *loc = "";
        return 0;
    }
    CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    *bytes = (*bytes + g - 1) / g * g;
    CK(cuMemCreate(&h, *bytes, &prop, 0));
    CK(cuMemAddressReserve(&va, *bytes, 0, 0, 0));
    CK(cuMemMap(va, *bytes, 0, h, 0));
    CK(cuMemRelease(h));   /* the mapping holds it */
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = 0;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, *bytes, &acc, 1));
    return va;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], NULL, 0) : 1024, bytes = mib << 20, vbytes = bytes;
    int reps = argc > 2 ? atoi(argv[2]) : 9, sms = 0;
    const char *loc = "";
    const char *names[3] = {"managed", "hostvmm", "device"};
    CUdeviceptr p[3] = {0, 0, 0};
    std::vector<float> ms[3];
    cudaEvent_t a, b;
    CKR(cudaSetDevice(0));
    CKR(cudaFree(0));   /* the primary context, current for the driver calls below */
    CKR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    p[1] = host_vmm(&vbytes, &loc);
    if (p[1] == 0) {
        printf("skip the device supports no host location for VMM memory (attributes 141 and 145 are 0)\n");
        return 0;
    }
    CK(cuMemAllocManaged(&p[0], bytes, CU_MEM_ATTACH_GLOBAL));
    advise_host(p[0], bytes);
    CK(cuMemAlloc(&p[2], bytes));
    for (int k = 0; k < 3; k++)
        CK(cuMemsetD8(p[k], 0, bytes));   /* populated before timing (managed: in host memory, as advised) */
    CKR(cudaDeviceSynchronize());
    CKR(cudaEventCreate(&a));
    CKR(cudaEventCreate(&b));
    printf("location %s\n", loc);
    for (int r = 0; r <= reps; r++)
        for (int k = 0; k < 3; k++) {
            float t = 0;
            CKR(cudaEventRecord(a));
            rmw<<<sms * 8, 256>>>((float4 *)(uintptr_t)p[k], bytes / sizeof(float4));
            CKR(cudaEventRecord(b));
            CKR(cudaEventSynchronize(b));
            CKR(cudaGetLastError());
            CKR(cudaEventElapsedTime(&t, a, b));
            if (r > 0)
                ms[k].push_back(t);
        }
    double med[3];
    for (int k = 0; k < 3; k++) {
        std::sort(ms[k].begin(), ms[k].end());
        double gb = 2.0 * (double)bytes / 1e9;
        med[k] = gb / (ms[k][ms[k].size() / 2] / 1e3);
        printf("gbps %s %.2f %.2f %.2f\n", names[k], med[k], gb / (ms[k].back() / 1e3), gb / (ms[k].front() / 1e3));
    }
    printf("ratio hostvmm/managed %.3f\n", med[1] / med[0]);
    CK(cuMemUnmap(p[1], vbytes));
    CK(cuMemAddressFree(p[1], vbytes));
    CK(cuMemFree(p[0]));
    CK(cuMemFree(p[2]));
    return 0;
}
