/*
 * e2e_deepbind.c - a library linking libcuda, loaded with RTLD_DEEPBIND (issue #10, item 8).
 *
 * USAGE: e2e_deepbind LIBRARY [preload-misses]
 * The library (e2e_deepbind_lib.c) calls cuInit once, cuDriverGetVersion 5 times, and
 * cuDeviceGetCount 3 times through a cuGetProcAddress pointer. With RTLD_DEEPBIND its own
 * dependencies are searched first, so:
 *   - drop-in mode (libcuda.so.1 is the shim): every call is seen; run through run_counts.sh,
 *     the shim's counts equal the fake's;
 *   - preload mode: none of them is seen - the limit docs/runtime.md states, which this run
 *     pins down ('preload-misses': the fake received the calls, the shim's hooks saw none,
 *     while the program's own call through dlsym is seen). If the shim ever catches them,
 *     this fails: update the documentation (and the launcher's help) then.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

int main(int argc, char **argv)
{
    e2e_init("e2e_deepbind");
    e2e_record(E2E_LIB_DRIVER);
    int misses = argc > 2 && strcmp(argv[2], "preload-misses") == 0;
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) : NULL;
    E2E_CHECK(h != NULL, "dlopen(%s, RTLD_DEEPBIND): %s", argc > 1 ? argv[1] : "?", dlerror());
    if (h == NULL)
        return e2e_finish();
    int (*direct)(int) = (int (*)(int))dlsym(h, "deepbind_direct");
    int (*procaddr)(int) = (int (*)(int))dlsym(h, "deepbind_procaddr");
    E2E_CHECK(direct && procaddr, "the library's functions");
    if (direct && procaddr) {
        E2E_CHECK(direct(5) == FAKE_CUDA_VERSION, "deepbind_direct");
        E2E_CHECK(procaddr(3) == 2, "deepbind_procaddr");
    }
    /* The program's own call, through dlsym on the driver's handle: always seen with the shim. */
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CUresult (*version)(int *) = cuda ? (CUresult(*)(int *))dlsym(cuda, "cuDriverGetVersion") : NULL;
    int v = 0;
    E2E_CHECK(version != NULL && version(&v) == CUDA_SUCCESS && v == FAKE_CUDA_VERSION, "the program's own call");
    E2E_CHECK(e2e_fake_count("cuDriverGetVersion") == 6 && e2e_fake_count("cuDeviceGetCount") == 3,
              "the fake received %llu cuDriverGetVersion, %llu cuDeviceGetCount",
              (unsigned long long)e2e_fake_count("cuDriverGetVersion"),
              (unsigned long long)e2e_fake_count("cuDeviceGetCount"));
    if (misses && e2e_shim()) {
        E2E_CHECK(e2e_pre("cuDriverGetVersion") == 1, "preload mode: the shim saw %llu cuDriverGetVersion calls, "
                  "expected only the program's own (1)", (unsigned long long)e2e_pre("cuDriverGetVersion"));
        E2E_CHECK(e2e_pre("cuInit") == 0 && e2e_pre("cuDeviceGetCount") == 0 && e2e_pre("cuGetProcAddress_v2") == 0,
                  "preload mode: the shim saw calls of the RTLD_DEEPBIND library");
    }
    return e2e_finish();
}
