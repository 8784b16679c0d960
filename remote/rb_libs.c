/*
 * rb_libs.c - the libraries a back end serves besides the driver (docs/remote.md, "Runtime-API programs",
 * "cuBLAS and cuBLASLt"): the CUDA runtime of the tree's major, NVML, cuBLAS and cuBLASLt, loaded after the
 * shim so that host->call_real finds them (the shim resolves a library's functions in the copy that is loaded
 * and never loads one itself). CUSHIM_SERVE_CUDART, CUSHIM_SERVE_CUBLAS and CUSHIM_SERVE_CUBLASLT name them
 * by path (a wheel's); a library that is missing leaves its calls answered "no such function" (the client sees
 * cudaErrorSymbolNotFound / NVML_ERROR_FUNCTION_NOT_FOUND / CUBLAS_STATUS_NOT_SUPPORTED). cuBLAS is loaded
 * only when present: a back end without it serves everything else.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rb_libs.h"

void rb_load_libraries(uint32_t cuda_version, int verbose)
{
    char rt[64];
    const char *path = getenv("CUSHIM_SERVE_CUDART");
    if (path == NULL || path[0] == '\0') {
        if (cuda_version / 1000 == 11)
            snprintf(rt, sizeof rt, "libcudart.so.11.0");
        else
            snprintf(rt, sizeof rt, "libcudart.so.%u", cuda_version / 1000);
        path = rt;
    }
    char blas[64], blaslt[64];
    const char *pb = getenv("CUSHIM_SERVE_CUBLAS"), *pl = getenv("CUSHIM_SERVE_CUBLASLT");
    snprintf(blas, sizeof blas, "libcublas.so.%u", cuda_version / 1000);
    snprintf(blaslt, sizeof blaslt, "libcublasLt.so.%u", cuda_version / 1000);
    /* cuBLASLt before cuBLAS, which needs it (a wheel's libcublas finds its libcublasLt by its RUNPATH) */
    const char *const libs[] = { path, "libnvidia-ml.so.1", pl != NULL && pl[0] != '\0' ? pl : blaslt,
                                 pb != NULL && pb[0] != '\0' ? pb : blas };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);   /* kept for the back end's life */
        if (h == NULL || verbose)
            fprintf(stderr, "cushim-serve[%d]: %s %s%s\n", (int)getpid(), libs[i],
                    h ? "loaded" : "not loaded (its calls are answered 'no such function'): ", h ? "" : dlerror());
    }
}
