/*
 * e2e_callbacks.c - CUDA calls from threads the driver owns, and during process exit.
 *
 * cuLaunchHostFunc runs its function on a thread of the driver (the fake has
 * one, as the real driver does); that function calls CUDA, and those calls must
 * be caught like any other, exactly once. An atexit handler frees memory after
 * main has returned: run_counts.sh checks from the counts files, written after
 * the handler, that the shim still counted those calls exactly.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "e2e_common.h"

enum { NCALLBACKS = 50 };

static CUcontext ctx;
static pthread_t main_thread;
static _Atomic int cb_ran, cb_other_thread, cb_ok;
static CUdeviceptr exit_mem;

static void host_fn(void *user)
{
    (void)user;
    if (!pthread_equal(pthread_self(), main_thread))
        cb_other_thread++;
    CUdeviceptr d = 0;
    size_t f = 0, t = 0;
    int ok = cuCtxSetCurrent(ctx) == CUDA_SUCCESS && cuMemAlloc_v2(&d, 256) == CUDA_SUCCESS &&
             cuMemGetInfo_v2(&f, &t) == CUDA_SUCCESS && cuMemFree_v2(d) == CUDA_SUCCESS;
    if (ok)
        cb_ok++;
    cb_ran++;
}

static void at_exit(void)
{
    /* After main: the shim and the driver must both still work. */
    if (cuMemFree_v2(exit_mem) != CUDA_SUCCESS || cuCtxSynchronize() != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_callbacks: FAIL: CUDA calls in an atexit handler failed\n");
        _exit(1);
    }
}

int main(void)
{
    e2e_init("e2e_callbacks");
    e2e_record(E2E_LIB_DRIVER);
    main_thread = pthread_self();

    CUdevice dev;
    CUstream s;
    E2E_CU(cuInit(0));
    E2E_CU(cuDeviceGet(&dev, 0));
    E2E_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    E2E_CU(cuCtxSetCurrent(ctx));
    E2E_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    for (int i = 0; i < NCALLBACKS; i++)
        E2E_CU(cuLaunchHostFunc(s, host_fn, NULL));
    E2E_CU(cuStreamSynchronize(s));
    E2E_CHECK(cb_ran == NCALLBACKS && cb_ok == NCALLBACKS && cb_other_thread == NCALLBACKS,
              "callbacks ran %d, succeeded %d, on the driver's thread %d", (int)cb_ran, (int)cb_ok,
              (int)cb_other_thread);
    E2E_CU(cuStreamDestroy_v2(s));

    e2e_expect("cuLaunchHostFunc", NCALLBACKS);
    e2e_expect("cuMemAlloc_v2", NCALLBACKS);
    e2e_expect("cuMemFree_v2", NCALLBACKS);
    e2e_expect("cuCtxSetCurrent", NCALLBACKS + 1);
    e2e_expect_hooks_match_fake(E2E_LIB_DRIVER);

    E2E_CU(cuMemAlloc_v2(&exit_mem, 4096));
    atexit(at_exit);
    return e2e_finish();
}
