/*
 * e2e_plugin.c - a CUDA program run with plugins from CUSHIM_PLUGINS (run_plugin.sh).
 *
 * Default: ordinary driver work, then a forked child that works too (the
 * probe's fork_child and its report for the child). With --fail-closed: the
 * shim must have failed closed (a required plugin did not load): every call
 * returns CUDA_ERROR_NOT_INITIALIZED without reaching the driver, while dlsym
 * and cuGetProcAddress still answer, so the program meets the error on call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_common.h"

static void work(int n)
{
    CUdevice dev;
    CUcontext ctx;
    E2E_CU(cuInit(0));
    E2E_CU(cuDeviceGet(&dev, 0));
    E2E_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    E2E_CU(cuCtxSetCurrent(ctx));
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        E2E_CU(cuMemAlloc_v2(&d, 256));
        E2E_CU(cuMemFree_v2(d));
    }
}

static int fail_closed(void)
{
    int v = 0, count = -1;
    E2E_CALL(CUDA_ERROR_NOT_INITIALIZED, cuInit(0));
    E2E_CALL(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&count));
    E2E_CHECK(count == -1, "cuDeviceGetCount wrote %d", count);
    E2E_CHECK(e2e_fake_count("cuInit") == 0 && e2e_fake_count("cuDeviceGetCount") == 0,
              "the driver was reached: cuInit %llu, cuDeviceGetCount %llu",
              (unsigned long long)e2e_fake_count("cuInit"), (unsigned long long)e2e_fake_count("cuDeviceGetCount"));
    /* What describes an error or a version keeps answering, so that the program can report the refusal
       (std::string(cudaGetErrorString(e)) died on the NULL a refused call returned). */
    E2E_CU(cuDriverGetVersion(&v));
    E2E_CHECK(v == FAKE_CUDA_VERSION, "cuDriverGetVersion wrote %d", v);
    const char *text = NULL;
    E2E_CU(cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &text));
    E2E_CHECK(text != NULL && *text != '\0', "cuGetErrorString gave no text");
    /* Look-ups keep answering: the program gets functions, and the error when it calls them. */
    CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
    E2E_CHECK(alloc != NULL, "dlsym(RTLD_DEFAULT, cuMemAlloc_v2) = NULL");
    CUdeviceptr d = 0;
    if (alloc != NULL)
        E2E_CALL(CUDA_ERROR_NOT_INITIALIZED, alloc(&d, 16));
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    E2E_CU(cuGetProcAddress_v2("cuCtxSynchronize", &fn, FAKE_CUDA_VERSION, 0, &st));
    E2E_CHECK(fn != NULL, "cuGetProcAddress found nothing");
    if (fn != NULL)
        E2E_CALL(CUDA_ERROR_NOT_INITIALIZED, ((CUresult(*)(void))fn)());
    return e2e_finish();
}

int main(int argc, char **argv)
{
    e2e_init("e2e_plugin");
    if (argc > 1 && strcmp(argv[1], "--fail-closed") == 0)
        return fail_closed();
    work(3);
    pid_t pid = fork();
    if (pid == 0) {
        work(2);
        exit(e2e_failures() ? 1 : 0);   /* exit handlers run: the child's plugins flush */
    }
    int st = 0;
    E2E_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: %d", st);
    return e2e_finish();
}
