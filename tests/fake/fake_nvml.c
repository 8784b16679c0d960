/*
 * fake_nvml.c - a small fake NVML (libnvidia-ml.so.1) for the CPU tests: the
 * functions a memory-quota plugin and nvidia-smi-like tools ask first, with
 * made-up devices. Every other NVML export is absent, as in an older driver:
 * the shim's wrapper of such a function answers NVML_ERROR_FUNCTION_NOT_FOUND.
 *
 * Environment: FAKE_NVML_DEVICES (default 2, 0..8), FAKE_NVML_COUNTS (file
 * the fake writes its per-name call counts to at exit, the format of
 * CUSHIM_COUNTS: "name<TAB>count").
 */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FN_EXPORT __attribute__((visibility("default")))
#define FN_MAX_DEVICES 8
#define FN_MEM_TOTAL (16ull << 30)
#define FN_MEM_USED (1ull << 30)
#define FN_PROC_MEM (512ull << 20)

struct nvmlDevice_st {
    unsigned index;
};
static struct nvmlDevice_st fn_devices[FN_MAX_DEVICES];
static atomic_int fn_inits;   /* nvmlInit minus nvmlShutdown */

enum { FN_INIT, FN_INIT_V2, FN_INIT_FLAGS, FN_SHUTDOWN, FN_COUNT, FN_COUNT_V2, FN_HANDLE_V2, FN_MEM, FN_MEM_V2,
       FN_PROCS_V3, FN_ERRSTR, FN_DRVVER, FN_INDEX, FN_N };
static const char *const fn_names[FN_N] = {
    "nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags", "nvmlShutdown", "nvmlDeviceGetCount", "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlErrorString", "nvmlSystemGetDriverVersion",
    "nvmlDeviceGetIndex",
};
static atomic_ullong fn_calls[FN_N];

static unsigned fn_ndevices(void)
{
    const char *s = getenv("FAKE_NVML_DEVICES");
    long n = s != NULL && *s != '\0' ? atol(s) : 2;
    return n < 0 ? 0 : n > FN_MAX_DEVICES ? FN_MAX_DEVICES : (unsigned)n;
}

static int fn_valid(nvmlDevice_t d)
{
    return d != NULL && d >= fn_devices && d < fn_devices + fn_ndevices();
}

static nvmlReturn_t fn_init(int which)
{
    atomic_fetch_add(&fn_calls[which], 1);
    for (unsigned i = 0; i < FN_MAX_DEVICES; i++)
        fn_devices[i].index = i;
    atomic_fetch_add(&fn_inits, 1);
    return NVML_SUCCESS;
}

FN_EXPORT nvmlReturn_t nvmlInit(void) { return fn_init(FN_INIT); }
FN_EXPORT nvmlReturn_t nvmlInit_v2(void) { return fn_init(FN_INIT_V2); }
FN_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return fn_init(FN_INIT_FLAGS); }

FN_EXPORT nvmlReturn_t nvmlShutdown(void)
{
    atomic_fetch_add(&fn_calls[FN_SHUTDOWN], 1);
    int n = atomic_load(&fn_inits);
    while (n > 0 && !atomic_compare_exchange_weak(&fn_inits, &n, n - 1))
        ;
    return n > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

static nvmlReturn_t fn_count(int which, unsigned int *count)
{
    atomic_fetch_add(&fn_calls[which], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = fn_ndevices();
    return NVML_SUCCESS;
}

FN_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return fn_count(FN_COUNT, count); }
FN_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { return fn_count(FN_COUNT_V2, count); }

FN_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    atomic_fetch_add(&fn_calls[FN_HANDLE_V2], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (device == NULL || index >= fn_ndevices())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &fn_devices[index];
    return NVML_SUCCESS;
}

/* The device's NVML index (memlimit maps it to a CUDA ordinal through CUDA_VISIBLE_DEVICES). */
FN_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    atomic_fetch_add(&fn_calls[FN_INDEX], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!fn_valid(device) || index == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = device->index;
    return NVML_SUCCESS;
}

FN_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    atomic_fetch_add(&fn_calls[FN_MEM], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!fn_valid(device) || memory == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    memory->total = FN_MEM_TOTAL;
    memory->used = FN_MEM_USED;
    memory->free = FN_MEM_TOTAL - FN_MEM_USED;
    return NVML_SUCCESS;
}

FN_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    atomic_fetch_add(&fn_calls[FN_MEM_V2], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!fn_valid(device) || memory == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory->total = FN_MEM_TOTAL;
    memory->reserved = 0;
    memory->used = FN_MEM_USED;
    memory->free = FN_MEM_TOTAL - FN_MEM_USED;
    return NVML_SUCCESS;
}

/* The processes on device 0: the caller itself, and FAKE_NVML_PROCS - 1 others (pids after the caller's: another
   container's, say) when that is set above 1. None on the other devices. */
FN_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                                nvmlProcessInfo_t *infos)
{
    atomic_fetch_add(&fn_calls[FN_PROCS_V3], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!fn_valid(device) || infoCount == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    const char *env = getenv("FAKE_NVML_PROCS");
    long want = env != NULL && *env != '\0' ? atol(env) : 1;
    unsigned n = device->index == 0 ? (want < 1 ? 1 : want > 64 ? 64 : (unsigned)want) : 0;
    if (*infoCount < n) {
        *infoCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *infoCount = n;
    for (unsigned i = 0; i < n && infos != NULL; i++) {
        memset(&infos[i], 0, sizeof infos[i]);
        infos[i].pid = (unsigned)getpid() + i;
        infos[i].usedGpuMemory = FN_PROC_MEM;
        infos[i].gpuInstanceId = ~0u;
        infos[i].computeInstanceId = ~0u;
    }
    return NVML_SUCCESS;
}

FN_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    atomic_fetch_add(&fn_calls[FN_ERRSTR], 1);
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    default: return "Unknown Error";
    }
}

FN_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    atomic_fetch_add(&fn_calls[FN_DRVVER], 1);
    if (atomic_load(&fn_inits) == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (version == NULL || length < sizeof "580.95.05")
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(version, "580.95.05", sizeof "580.95.05");
    return NVML_SUCCESS;
}

/* Test inspection: how often 'name' was called (not an NVML name: the shim leaves it alone). */
FN_EXPORT unsigned long long fake_nvml_count(const char *name)
{
    for (int i = 0; i < FN_N; i++)
        if (strcmp(fn_names[i], name) == 0)
            return atomic_load(&fn_calls[i]);
    return 0;
}

__attribute__((destructor)) static void fn_write_counts(void)
{
    const char *path = getenv("FAKE_NVML_COUNTS");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    for (int i = 0; i < FN_N; i++) {
        unsigned long long n = atomic_load(&fn_calls[i]);
        if (n)
            fprintf(f, "%s\t%llu\n", fn_names[i], n);
    }
    fclose(f);
}
