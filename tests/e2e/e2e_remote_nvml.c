/*
 * e2e_remote_nvml.c - the queries nvidia-smi makes, through NVML, for the remoting's end-to-end test
 * (run_remote_rt.sh): its output through cushim-serve must equal a local run's on the fake NVML.
 */
#include <nvml.h>
#include <stdio.h>
#include <string.h>

static void report(const char *what, nvmlReturn_t r)
{
    printf("%s: %d (%s)\n", what, (int)r, nvmlErrorString(r));
}

int main(void)
{
    char version[96] = "";
    unsigned n = 0;
    report("nvmlInit_v2", nvmlInit_v2());
    report("nvmlSystemGetDriverVersion", nvmlSystemGetDriverVersion(version, sizeof version));
    printf("driver version: %s\n", version);
    report("nvmlDeviceGetCount_v2", nvmlDeviceGetCount_v2(&n));
    printf("devices: %u\n", n);
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t d = NULL;
        nvmlMemory_t m = { 0 };
        nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
        report("nvmlDeviceGetHandleByIndex_v2", nvmlDeviceGetHandleByIndex_v2(i, &d));
        report("nvmlDeviceGetMemoryInfo", nvmlDeviceGetMemoryInfo(d, &m));
        printf("device %u: total %llu free %llu used %llu\n", i, m.total, m.free, m.used);
        report("nvmlDeviceGetMemoryInfo_v2", nvmlDeviceGetMemoryInfo_v2(d, &m2));
        printf("device %u: total %llu reserved %llu free %llu used %llu\n", i, m2.total, m2.reserved, m2.free,
               m2.used);
        /* the process list, as PyTorch's out-of-memory message asks for it: the room first, then the entries
           (their pids are the server's: printed as present, not by value) */
        unsigned cnt = 0;
        report("nvmlDeviceGetComputeRunningProcesses_v3(room 0)", nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, NULL));
        printf("device %u: %u processes\n", i, cnt);
        nvmlProcessInfo_t procs[8];
        memset(procs, 0xee, sizeof procs);
        cnt = 8;
        report("nvmlDeviceGetComputeRunningProcesses_v3", nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, procs));
        for (unsigned k = 0; k < cnt && k < 8; k++)
            printf("device %u: process %u: pid %s, %llu bytes\n", i, k, procs[k].pid != 0 ? "set" : "0",
                   procs[k].usedGpuMemory);
        printf("device %u: entry %u untouched: %s\n", i, cnt, cnt < 8 && procs[cnt].pid == 0xeeeeeeeeu ? "yes" : "no");
    }
    nvmlDevice_t none = NULL;
    report("nvmlDeviceGetHandleByIndex_v2(99)", nvmlDeviceGetHandleByIndex_v2(99, &none));
    report("nvmlShutdown", nvmlShutdown());
    return 0;
}
