/*
 * ml_oversub.h - what memlimit does when an allocation does not fit: wait for the other processes of a shared
 * budget to free (on_full=wait[:SEC]), and back a device allocation with managed memory placed in host memory, or
 * a VMM handle with host-located physical memory (oversubscribe[=RATIO]), so the program sees a device pointer
 * or a handle it maps as before and runs slower instead of failing
 * (docs/plugins/memlimit.md "Oversubscription"). Nothing here runs while an allocation fits.
 */
#ifndef ML_OVERSUB_H
#define ML_OVERSUB_H

#include <stdint.h>

#include <cushim/cushim.h>

#define ML_OVERSUB_DEFAULT_MILLI 2000u   /* oversubscribe without a ratio: twice the quota in all */
#define ML_OVERSUB_MAX_MILLI 64000u
#define ML_WAIT_DEFAULT_MS 30000u        /* on_full=wait without seconds */
#define ML_WAIT_MAX_MS 86400000u         /* a day */

/* oversubscribe=RATIO: "", "true", "yes" or "on" (any case): the default; a decimal ratio from 1 to 64 ("1.5");
   "false", "no", "off" or "0": off (0). In thousandths. -1 for text that is none of these. */
int ml_oversub_parse_ratio(const char *s, uint32_t *milli);
/* on_full=fail | wait | wait:SEC (SEC a decimal, at most a day): the wait in ms, 0 for fail; -1 for bad text. */
int ml_oversub_parse_wait(const char *s, uint32_t *ms);
/* HAMi's CUDA_OVERSUBSCRIBE: "true" (HAMi's device plugin's word) is on; anything else off. */
int ml_oversub_hami(const char *v);

/* Whether API 'a' with role 'r' allocates device memory that managed memory can stand for: an allocation of
   plain device memory by size on the current context (cuMemAlloc_v2, cudaMalloc), answered with a 64-bit pointer
   (not the legacy cuMemAlloc's CUdeviceptr_v1), with no stream (the stream-ordered allocations are freed through
   their pool) and no pitch. */
int ml_oversub_eligible(const cushim_api_info *a, const cushim_alloc_role *r);
/* Whether API 'a' with role 'r' creates VMM physical memory from a CUmemAllocationProp that host-located memory
   can stand for: cuMemCreate's shape (handle *, size, const CUmemAllocationProp *, flags). */
int ml_oversub_vmm_eligible(const cushim_api_info *a, const cushim_alloc_role *r);

/* The bound on device-resident + host-backed bytes of a device: 'quota' x ratio; with no quota, the device's
   memory ('total') x ratio. 0 when neither is known (then nothing is host-backed). */
uint64_t ml_oversub_bound(uint64_t quota, uint64_t total, uint32_t milli);

/* Back 'bytes' for device 'dev' with managed memory placed in host memory and accessed by 'dev': the runtime's
   cudaMallocManaged for a runtime call (it initialises the runtime's context as cudaMalloc would), else the
   driver's cuMemAllocManaged, then cuMemAdvise SET_PREFERRED_LOCATION = CPU and SET_ACCESSED_BY = dev. Real
   functions only (no hook sees them). 0 with *ptr, or the library's error (nothing left allocated). */
int32_t ml_oversub_back(const cushim_host *h, int runtime, int dev, uint64_t bytes, uint64_t *ptr);
/* Create 'bytes' of VMM physical memory like 'prop' (the program's device-located properties) but located in host
   memory, for CUDA ordinal 'dev': CU_MEM_LOCATION_TYPE_HOST_NUMA (the node the driver names closest to the device,
   0 without NUMA) where the device says HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, else
   CU_MEM_LOCATION_TYPE_HOST where it says HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED and the program asked for no
   shareable handle type (the driver allows none there); 'bytes' a multiple of that location's minimum granularity.
   Real functions only. 0 with *handle and *where ("host_numa:N" or "host", for the log), else the driver's error or
   CUDA_ERROR_NOT_SUPPORTED (nothing created). */
int32_t ml_oversub_back_vmm(const cushim_host *h, int dev, uint64_t bytes, const void *prop,
                            unsigned long long flags, uint64_t *handle, char *where, size_t wherelen);
/* A runtime call that failed and was answered by ml_oversub_back after all: the runtime's last error forgotten
   (cudaGetLastError), so a later check does not see the out-of-memory the program never got. */
void ml_oversub_forget_error(const cushim_host *h);
/* The device's memory, from the driver (0 if unknown). */
uint64_t ml_oversub_device_total(const cushim_host *h, int dev);

/* Wait up to 'ms' for fits(ctx) to say 1, sleeping between polls with backoff (1 ms doubling to 50 ms, never past
   the deadline); no lock is held. 1 when it fits, 0 at the deadline. */
int ml_wait_fit(uint32_t ms, int (*fits)(void *ctx), void *ctx);

#endif
