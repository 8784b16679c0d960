/*
 * e2e_deepbind_lib.c - a library that links libcuda and is loaded with RTLD_DEEPBIND by
 * e2e_deepbind.c: its own scope (itself, libcuda, libc) is searched before the global one, so
 * its calls bind to whatever libcuda.so.1 it was loaded with, never to a preloaded shim, and its
 * own dlsym calls bind to libc's. Calls directly, and through a cuGetProcAddress pointer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "fake_cuda.h"   /* FAKE_CUDA_VERSION */

#define DB_EXPORT __attribute__((visibility("default")))

/* cuInit once, cuDriverGetVersion n times; the version, or -1. */
DB_EXPORT int deepbind_direct(int n)
{
    int v = -1;
    if (cuInit(0) != CUDA_SUCCESS)
        return -1;
    for (int i = 0; i < n; i++)
        if (cuDriverGetVersion(&v) != CUDA_SUCCESS)
            return -1;
    return v;
}

/* cuDeviceGetCount through the pointer cuGetProcAddress_v2 hands out, n times; the count, or -1. */
DB_EXPORT int deepbind_procaddr(int n)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    if (cuGetProcAddress_v2("cuDeviceGetCount", &p, FAKE_CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS || !p)
        return -1;
    int c = -1;
    for (int i = 0; i < n; i++)
        if (((CUresult(*)(int *))p)(&c) != CUDA_SUCCESS)
            return -1;
    return c;
}
