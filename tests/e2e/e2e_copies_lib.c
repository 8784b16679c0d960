/*
 * e2e_copies_lib.c - a library linked against one copy of the (fake) runtime,
 * dlopen()ed RTLD_LOCAL by e2e_copies: built twice, against the shim's major
 * (e2e_copies_hshim) and the other major (e2e_copies_hother). Its references are
 * versioned (cudaRuntimeGetVersion@libcudart.so.N), as a real library's are.
 */
#include <cuda_runtime_api.h>

__attribute__((visibility("default"))) int copies_runtime_version(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}

__attribute__((visibility("default"))) int copies_malloc_free(void)
{
    void *p = 0;
    if (cudaMalloc(&p, 4096) != cudaSuccess || p == 0)
        return -1;
    return cudaFree(p) == cudaSuccess ? 0 : -2;
}

/* What the dynamic linker bound this library's cudaRuntimeGetVersion to. */
__attribute__((visibility("default"))) void *copies_bound(void)
{
    return (void *)&cudaRuntimeGetVersion;
}
