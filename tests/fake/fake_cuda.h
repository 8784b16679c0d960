/*
 * fake_cuda.h - what tests may ask the fake libcuda.so.1 about its state.
 *
 * The fake driver (tests/fake/) counts every call it receives, by exported
 * name, and keeps totals of memory and launches. Tests reach these functions
 * with dlsym(RTLD_DEFAULT, "fake_cuda_...") or by linking the fake; none of
 * them is a CUDA API, so the shim never wraps them and calling them changes
 * no CUDA-visible state.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* The version the fake driver reports (cuDriverGetVersion; the newest its cuGetProcAddress answers for) and the fake
   runtime reports and asks cuGetProcAddress with: the recorded driver's 13000 for 13.x headers, the release's own
   before 13.0 (a fake built from 12.9's headers is a 12.9 driver: tools/test-release.sh 12.9). Expands
   CUDA_VERSION: cuda.h comes first. */
#define FAKE_CUDA_VERSION (CUDA_VERSION < 13000 ? CUDA_VERSION : 13000)

#ifdef __cplusplus
extern "C" {
#endif

/* Calls the fake received under exported name 'name' (0 for unknown names). */
uint64_t fake_cuda_call_count(const char *name);
/* Calls received under every exported name together. */
uint64_t fake_cuda_calls_total(void);
/* Write 'name<TAB>count' for every name called at least once to 'path'. */
int fake_cuda_dump_counts(const char *path);

/* Device memory currently allocated on 'dev' (cuMemAlloc*, async, and managed memory resident on the device). */
size_t fake_cuda_bytes_allocated(int dev);
/* Managed memory of device 'dev' (allocated with it current) resident on the device (host_backed 0) or in host
   memory (1): past the device's free memory, after cuMemAdvise(SET_PREFERRED_LOCATION, CPU) or a prefetch to the
   CPU. Placement is per allocation. */
size_t fake_cuda_managed_bytes(int dev, int host_backed);
/* The advice given to the managed allocation holding 'p': the preferred location (-2 none, -1 CU_DEVICE_CPU, else
   a device) and the devices given SET_ACCESSED_BY (bit i: device i). 0, or -1 when 'p' is not managed memory. */
int fake_cuda_mem_advice(const void *p, int *preferred, unsigned *accessed_by);
/* Bytes of VMM physical memory created at a host location (FAKE_CUDA_HOST_VMM, fake_vmm.c) and not released. */
size_t fake_cuda_vmm_host_bytes(void);
/* Allocations alive now, of every kind (device, host, managed). */
size_t fake_cuda_live_allocations(void);
/* Size requested by the last successful device allocation. */
size_t fake_cuda_last_alloc_size(void);
/* Kernel launches recorded (cuLaunchKernel*, any variant). */
uint64_t fake_cuda_launch_count(void);
/* Name of the kernel last launched, "" if none. */
const char *fake_cuda_last_launch_name(void);
/* Host functions run by the fake's callback thread so far. */
uint64_t fake_cuda_host_funcs_run(void);
/* The fake's own address of 'name' (what its cuGetProcAddress hands out). */
void *fake_cuda_proc(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* FAKE_CUDA_H */
