/*
 * rb_libs.c - the libraries a back end serves besides the driver (docs/remote.md, "Runtime-API programs",
 * "cuBLAS and cuBLASLt", "NCCL"): the CUDA runtime of the tree's major and NVML, loaded after the shim at start,
 * and cuBLASLt and cuBLAS, and NCCL, loaded at the client's first call of theirs (hundreds of MiB that a client
 * which never calls them does not wait for), so that host->call_real finds them (the shim resolves a library's
 * functions in the copy that is loaded and never loads one itself). CUSHIM_SERVE_CUDART, CUSHIM_SERVE_CUBLAS,
 * CUSHIM_SERVE_CUBLASLT and CUSHIM_SERVE_NCCL name them by path (a wheel's); a library that is missing leaves its
 * calls answered "no such function" (the client sees cudaErrorSymbolNotFound / NVML_ERROR_FUNCTION_NOT_FOUND /
 * CUBLAS_STATUS_NOT_SUPPORTED / ncclSystemError).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rb_libs.h"

static uint32_t rb_major;
static int rb_verbose;

static void rb_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);   /* kept for the back end's life */
    if (h == NULL || rb_verbose)
        fprintf(stderr, "cushim-serve[%d]: %s %s%s\n", (int)getpid(), path,
                h ? "loaded" : "not loaded (its calls are answered 'no such function'): ", h ? "" : dlerror());
}

void rb_load_libraries(uint32_t cuda_version, int verbose)
{
    char rt[64];
    const char *path = getenv("CUSHIM_SERVE_CUDART");
    rb_major = cuda_version / 1000;
    rb_verbose = verbose;
    if (path == NULL || path[0] == '\0') {
        if (rb_major == 11)
            snprintf(rt, sizeof rt, "libcudart.so.11.0");
        else
            snprintf(rt, sizeof rt, "libcudart.so.%u", rb_major);
        path = rt;
    }
    rb_open(path);
    rb_open("libnvidia-ml.so.1");
}

static void rb_open_blas(void)
{
    char blas[64], blaslt[64];
    const char *pb = getenv("CUSHIM_SERVE_CUBLAS"), *pl = getenv("CUSHIM_SERVE_CUBLASLT");
    snprintf(blas, sizeof blas, "libcublas.so.%u", rb_major);
    snprintf(blaslt, sizeof blaslt, "libcublasLt.so.%u", rb_major);
    /* cuBLASLt before cuBLAS, which needs it (a wheel's libcublas finds its libcublasLt by its RUNPATH) */
    rb_open(pl != NULL && pl[0] != '\0' ? pl : blaslt);
    rb_open(pb != NULL && pb[0] != '\0' ? pb : blas);
}

void rb_load_blas(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, rb_open_blas);
}

/* NCCL's soname has its own major (2), whatever the CUDA release: a PyTorch wheel's libnccl.so.2 is found where
   the server's LD_LIBRARY_PATH names the wheel's folder (nvidia/nccl/lib), or by CUSHIM_SERVE_NCCL. */
static void rb_open_nccl(void)
{
    const char *p = getenv("CUSHIM_SERVE_NCCL");
    rb_open(p != NULL && p[0] != '\0' ? p : "libnccl.so.2");
}

void rb_load_nccl(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, rb_open_nccl);
}
