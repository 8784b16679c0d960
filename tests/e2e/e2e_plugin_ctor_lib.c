/*
 * e2e_plugin_ctor_lib.c - a library whose constructor makes the process's first
 * CUDA call and its first dlsym of a CUDA name. Linked by e2e_plugin_ctor, so
 * it is initialised before the preloaded shim: the shim initialises (and loads
 * CUSHIM_PLUGINS) on that call, and the plugins' hooks see it.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int e2e_ctor_lib_result = -1;

__attribute__((constructor)) static void ctor(void)
{
    void *f = dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
    int v = 0;
    e2e_ctor_lib_result = f != NULL && cuInit(0) == CUDA_SUCCESS && ((CUresult(*)(int *))f)(&v) == CUDA_SUCCESS &&
                                  v > 0 ? 0 : 1;
}
