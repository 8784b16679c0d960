/*
 * e2e_dlplugin.c - a plugin that links libcuda.so.1 itself, loaded by e2e_dlsym with
 * dlopen(RTLD_LOCAL), as Python loads an extension module that links the driver.
 *
 * Its own look-ups see its local scope (itself and its libcuda): RTLD_DEFAULT
 * and RTLD_NEXT from here find the driver even though the program's global
 * scope does not; through the shim they must find the shim's wrappers. Its
 * direct calls bind to the preloaded shim like any other.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include <cuda.h>

__attribute__((noinline)) void *dlplugin_default(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

__attribute__((noinline)) void *dlplugin_next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

int dlplugin_driver_version(void)
{
    int v = 0;
    return cuDriverGetVersion(&v) == CUDA_SUCCESS ? v : -1;
}
