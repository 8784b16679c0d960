/*
 * ml_oversub.c - memlimit's answers to an allocation that does not fit (ml_oversub.h): which APIs host memory can
 * stand for, backing an allocation with managed memory in host memory or a VMM handle with host-located physical
 * memory, and the bounded wait for other processes to free (the options' syntax and the bound: ml_ovopts.c). Real
 * functions only, resolved at first use; no hook runs here, no lock is held.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ml_oversub.h"

#include "cushim_params.h"

typedef CUresult (*ml_cuMemAllocManaged_fn)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*ml_cuMemAdvise_fn)(CUdeviceptr, size_t, int, CUdevice);   /* the export with a CUdevice */
typedef CUresult (*ml_cuMemFree_fn)(CUdeviceptr);
typedef CUresult (*ml_cuDeviceTotalMem_fn)(size_t *, CUdevice);
typedef cudaError_t (*ml_cudaMallocManaged_fn)(void **, size_t, unsigned int);
typedef cudaError_t (*ml_cudaFree_fn)(void *);
typedef cudaError_t (*ml_cudaGetLastError_fn)(void);
typedef CUresult (*ml_cuDeviceGetAttribute_fn)(int *, int, CUdevice);
typedef CUresult (*ml_cuMemCreate_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                      unsigned long long);
typedef CUresult (*ml_cuMemGetAllocationGranularity_fn)(size_t *, const CUmemAllocationProp *, int);

/* By number: the headers of 11.8 name none of them, and a driver newer than the headers may still have them. */
#define OV_ATTR_HOST_NUMA_ID 134            /* CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID                                  */
#define OV_ATTR_HOST_NUMA_VMM 141           /* CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
#define OV_ATTR_HOST_VMM 145                /* CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED      */
#define OV_LOC_HOST 2                       /* CU_MEM_LOCATION_TYPE_HOST                                         */
#define OV_LOC_HOST_NUMA 3                  /* CU_MEM_LOCATION_TYPE_HOST_NUMA                                    */
#define OV_GRANULARITY_MINIMUM 0            /* CU_MEM_ALLOC_GRANULARITY_MINIMUM                                  */

enum { OV_ALLOC_MANAGED, OV_ADVISE, OV_FREE, OV_TOTAL, OV_RT_MANAGED, OV_RT_FREE, OV_RT_LAST_ERROR, OV_ATTR,
       OV_CREATE, OV_GRANULARITY, OV_NFN };
static const char *const ov_names[OV_NFN] = {"cuMemAllocManaged", "cuMemAdvise",     "cuMemFree_v2",
                                             "cuDeviceTotalMem_v2", "cudaMallocManaged", "cudaFree",
                                             "cudaGetLastError", "cuDeviceGetAttribute", "cuMemCreate",
                                             "cuMemGetAllocationGranularity"};
static _Atomic(void *) ov_fn[OV_NFN];

static void *ov_real(const cushim_host *h, int which)
{
    void *f = atomic_load_explicit(&ov_fn[which], memory_order_acquire);
    if (f == NULL) {
        const cushim_api_info *a = h->api_by_name(ov_names[which]);
        if (a != NULL && (f = h->real(a->id)) != NULL)
            atomic_store_explicit(&ov_fn[which], f, memory_order_release);
    }
    return f;
}

int ml_oversub_eligible(const cushim_api_info *a, const cushim_alloc_role *r)
{
    if (a == NULL || r == NULL || r->action != CUSHIM_ROLE_ALLOC || r->mem != CUSHIM_MEM_DEVICE ||
        r->size_rule != CUSHIM_SIZE_PARAM || r->dev_rule != CUSHIM_DEV_CTX || a->nparams != 2 || r->out_arg < 0 ||
        r->out_arg >= (int)a->nparams)
        return 0;
    for (uint16_t i = 0; i < a->nparams; i++) {
        const cushim_param_info *p = &a->params[i];
        if (p->canonical_type != NULL && strstr(p->canonical_type, "CUstream_st") != NULL)
            return 0;
    }
    /* the out parameter is a pointer to a pointer-sized value (CUdeviceptr *, void **) */
    return a->params[r->out_arg].kind == CUSHIM_KIND_POINTER && a->params[r->out_arg].elem_size == 8;
}

int ml_oversub_vmm_eligible(const cushim_api_info *a, const cushim_alloc_role *r)
{
    if (a == NULL || r == NULL || r->action != CUSHIM_ROLE_ALLOC || r->mem != CUSHIM_MEM_DEVICE ||
        r->size_rule != CUSHIM_SIZE_PARAM || r->dev_rule != CUSHIM_DEV_PROP || a->nparams != 4 || r->out_arg != 0 ||
        r->dev_arg != 2 || r->size_arg[0] != 1)
        return 0;
    return a->params[0].kind == CUSHIM_KIND_POINTER && a->params[0].elem_size == 8 &&
           a->params[2].canonical_type != NULL && strstr(a->params[2].canonical_type, "CUmemAllocationProp") != NULL &&
           a->params[3].kind == CUSHIM_KIND_SCALAR;
}

int32_t ml_oversub_back_vmm(const cushim_host *h, int dev, uint64_t bytes, const void *prop,
                            unsigned long long flags, uint64_t *handle, char *where, size_t wherelen)
{
    ml_cuDeviceGetAttribute_fn attr = (ml_cuDeviceGetAttribute_fn)ov_real(h, OV_ATTR);
    ml_cuMemCreate_fn create = (ml_cuMemCreate_fn)ov_real(h, OV_CREATE);
    ml_cuMemGetAllocationGranularity_fn gran = (ml_cuMemGetAllocationGranularity_fn)ov_real(h, OV_GRANULARITY);
    CUmemAllocationProp hp;
    CUmemGenericAllocationHandle hd = 0;
    size_t g = 0;
    int v = 0, numa = 0;
    CUresult e;
    if (attr == NULL || create == NULL || gran == NULL || prop == NULL)
        return (int32_t)CUDA_ERROR_NOT_SUPPORTED;
    memcpy(&hp, prop, sizeof hp);
    if (attr(&v, OV_ATTR_HOST_NUMA_VMM, (CUdevice)dev) == CUDA_SUCCESS && v == 1) {
        /* the host node closest to the device; -1 (no NUMA) or no answer: node 0, as cuMemCreate asks then */
        if (attr(&numa, OV_ATTR_HOST_NUMA_ID, (CUdevice)dev) != CUDA_SUCCESS || numa < 0)
            numa = 0;
        hp.location.type = (CUmemLocationType)OV_LOC_HOST_NUMA;
        hp.location.id = numa;
    } else if ((v = 0, attr(&v, OV_ATTR_HOST_VMM, (CUdevice)dev)) == CUDA_SUCCESS && v == 1 &&
               hp.requestedHandleTypes == 0) {
        hp.location.type = (CUmemLocationType)OV_LOC_HOST;
        hp.location.id = 0;
    } else {
        return (int32_t)CUDA_ERROR_NOT_SUPPORTED;
    }
    if ((e = gran(&g, &hp, OV_GRANULARITY_MINIMUM)) != CUDA_SUCCESS)
        return (int32_t)e;
    if (g == 0 || bytes % g != 0)   /* created at the device's granularity, not the host's: as today */
        return (int32_t)CUDA_ERROR_NOT_SUPPORTED;
    if ((e = create(&hd, (size_t)bytes, &hp, flags)) != CUDA_SUCCESS)
        return (int32_t)e;
    *handle = (uint64_t)hd;
    if (where != NULL && wherelen > 0)
        snprintf(where, wherelen, (int)hp.location.type == OV_LOC_HOST ? "host" : "host_numa:%d", numa);
    return 0;
}

uint64_t ml_oversub_device_total(const cushim_host *h, int dev)
{
    ml_cuDeviceTotalMem_fn f = (ml_cuDeviceTotalMem_fn)ov_real(h, OV_TOTAL);
    size_t t = 0;
    return f != NULL && f(&t, (CUdevice)dev) == CUDA_SUCCESS ? (uint64_t)t : 0;
}

int32_t ml_oversub_back(const cushim_host *h, int runtime, int dev, uint64_t bytes, uint64_t *ptr)
{
    ml_cuMemAdvise_fn advise = (ml_cuMemAdvise_fn)ov_real(h, OV_ADVISE);
    CUdeviceptr p = 0;
    if (advise == NULL)
        return runtime ? (int32_t)cudaErrorMemoryAllocation : (int32_t)CUDA_ERROR_OUT_OF_MEMORY;
    if (runtime) {
        ml_cudaMallocManaged_fn mm = (ml_cudaMallocManaged_fn)ov_real(h, OV_RT_MANAGED);
        ml_cudaFree_fn fr = (ml_cudaFree_fn)ov_real(h, OV_RT_FREE);
        void *v = NULL;
        cudaError_t e;
        if (mm == NULL || fr == NULL)
            return (int32_t)cudaErrorMemoryAllocation;
        if ((e = mm(&v, (size_t)bytes, cudaMemAttachGlobal)) != cudaSuccess)
            return (int32_t)e;
        p = (CUdeviceptr)(uintptr_t)v;
        if (advise(p, (size_t)bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU) != CUDA_SUCCESS ||
            advise(p, (size_t)bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, (CUdevice)dev) != CUDA_SUCCESS) {
            fr(v);
            return (int32_t)cudaErrorMemoryAllocation;
        }
    } else {
        ml_cuMemAllocManaged_fn mm = (ml_cuMemAllocManaged_fn)ov_real(h, OV_ALLOC_MANAGED);
        ml_cuMemFree_fn fr = (ml_cuMemFree_fn)ov_real(h, OV_FREE);
        CUresult e;
        if (mm == NULL || fr == NULL)
            return (int32_t)CUDA_ERROR_OUT_OF_MEMORY;
        if ((e = mm(&p, (size_t)bytes, CU_MEM_ATTACH_GLOBAL)) != CUDA_SUCCESS)
            return (int32_t)e;
        if ((e = advise(p, (size_t)bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU)) != CUDA_SUCCESS ||
            (e = advise(p, (size_t)bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, (CUdevice)dev)) != CUDA_SUCCESS) {
            fr(p);
            return (int32_t)e;
        }
    }
    *ptr = (uint64_t)p;
    return 0;
}

void ml_oversub_forget_error(const cushim_host *h)
{
    ml_cudaGetLastError_fn f = (ml_cudaGetLastError_fn)ov_real(h, OV_RT_LAST_ERROR);
    if (f != NULL)
        (void)f();
}

static uint64_t ov_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int ml_wait_fit(uint32_t ms, int (*fits)(void *ctx), void *ctx)
{
    uint64_t deadline = ov_now_ms() + ms, nap = 1;
    for (;;) {
        uint64_t now = ov_now_ms(), d;
        struct timespec ts;
        if (fits(ctx))
            return 1;
        if (now >= deadline)
            return 0;
        d = deadline - now < nap ? deadline - now : nap;
        ts.tv_sec = (time_t)(d / 1000);
        ts.tv_nsec = (long)(d % 1000) * 1000000L;
        nanosleep(&ts, NULL);
        nap = nap * 2 > 50 ? 50 : nap * 2;
    }
}
