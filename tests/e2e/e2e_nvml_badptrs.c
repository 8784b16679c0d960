/*
 * e2e_nvml_badptrs - NVML calls that the library refuses before it writes their outputs, each output pointing
 * into a PROT_NONE page (run_nokill.sh nvmlbad): a count before nvmlInit, a handle for an index past the
 * devices, memory information for a handle that is none; then the same calls that succeed. Prints each
 * result; the same results are expected with the shim and each plugin as without them (a plugin that reads
 * an output the call did not write ends the program with SIGSEGV).
 */
#define _GNU_SOURCE
#include <nvml.h>
#include <stdio.h>
#include <sys/mman.h>

int main(void)
{
    void *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned int n = 0;
    nvmlDevice_t dev = NULL;
    nvmlMemory_t mem;
    if (bad == MAP_FAILED)
        return 2;
    printf("%d", (int)nvmlDeviceGetCount_v2((unsigned int *)bad));                  /* not initialised */
    printf(" %d", (int)nvmlInit_v2());
    printf(" %d", (int)nvmlDeviceGetHandleByIndex_v2(999, (nvmlDevice_t *)bad));    /* no such device */
    printf(" %d", (int)nvmlDeviceGetMemoryInfo((nvmlDevice_t)bad, (nvmlMemory_t *)bad));   /* no such handle */
    printf(" %d", (int)nvmlDeviceGetCount_v2(&n));
    printf(" %d", (int)nvmlDeviceGetHandleByIndex_v2(0, &dev));
    printf(" %d", (int)nvmlDeviceGetMemoryInfo(dev, &mem));
    printf(" %u %d\n", n, dev != NULL);
    return 0;
}
