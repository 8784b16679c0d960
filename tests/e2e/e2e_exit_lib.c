/*
 * e2e_exit_lib.c - a library that makes CUDA calls while the process exits:
 * from an atexit handler it registers in its constructor (so before the
 * preloaded shim initialises: the program's own libraries are initialised
 * first) and from its destructor (which runs after the shim's destructor).
 * Issue #10 item 4: such calls reached the driver but not the counts file.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void exit_fail(const char *what)
{
    fprintf(stderr, "e2e_exit_lib: FAIL: %s\n", what);
    _exit(1);
}

/* Registered before the shim initialises, with this library's DSO handle:
   glibc runs it from _dl_fini (__cxa_finalize) when this library is destroyed. */
static void early_handler(void)
{
    for (int i = 0; i < 3; i++) {
        CUdeviceptr d = 0;
        if (cuMemAlloc(&d, 64) != CUDA_SUCCESS || cuMemFree(d) != CUDA_SUCCESS)
            exit_fail("CUDA calls in the early atexit handler");
    }
}

__attribute__((constructor)) static void lib_ctor(void)
{
    atexit(early_handler);
}

/* After the program's atexit handlers and after the shim's own destructor. */
__attribute__((destructor)) static void lib_dtor(void)
{
    int v = 0;
    if (cuCtxSynchronize() != CUDA_SUCCESS || cuCtxSynchronize() != CUDA_SUCCESS)
        exit_fail("cuCtxSynchronize in the destructor");
    for (int i = 0; i < 4; i++)
        if (cuDriverGetVersion(&v) != CUDA_SUCCESS)
            exit_fail("cuDriverGetVersion in the destructor");
}

__attribute__((visibility("default"))) int e2e_exit_lib_setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return -1;
    return 0;
}
