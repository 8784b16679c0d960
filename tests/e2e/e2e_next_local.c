/*
 * e2e_next_local.c - dlsym(RTLD_NEXT, ...) must not see a library someone else loaded RTLD_LOCAL
 * (issue #10, item 11).
 *
 * The program defines and exports cuDriverGetVersion itself (an interposer built into an
 * application), and libcuda.so.1 is loaded RTLD_LOCAL (as libcudart does). glibc's answer to the
 * program's dlsym(RTLD_NEXT, "cuDriverGetVersion") is NULL: the only later definition is not in
 * the global scope. The shim emulates RTLD_NEXT (glibc can only answer for its own caller) and
 * used to walk every later object, RTLD_LOCAL ones included, answering with its wrapper. After
 * libcuda.so.1 is promoted to the global scope (dlopen RTLD_NOLOAD | RTLD_GLOBAL) the answer is
 * the driver's function (the shim: its wrapper). Run by run_compare.sh without and with the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "e2e_classify.h"
#include "e2e_common.h"

/* The application's own definition, exported (-Wl,--export-dynamic-symbol). */
__attribute__((visibility("default"))) CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    *v = 1;
    return CUDA_SUCCESS;
}

static void show(const char *how, const char *name, const void *p)
{
    char buf[512];
    printf("%s %s -> %s\n", how, name, e2e_classify(p, buf, sizeof buf));
}

int main(void)
{
    e2e_init("e2e_next_local");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen libcuda.so.1 RTLD_LOCAL -> %s\n", h ? "handle" : "NULL");
    show("next-local", "cuDriverGetVersion", dlsym(RTLD_NEXT, "cuDriverGetVersion"));
    show("next-local", "cuInit", dlsym(RTLD_NEXT, "cuInit"));
    show("default-local", "cuDriverGetVersion", dlsym(RTLD_DEFAULT, "cuDriverGetVersion"));
    void *g = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    printf("promoted to RTLD_GLOBAL -> %s\n", g ? "handle" : "NULL");
    show("next-global", "cuDriverGetVersion", dlsym(RTLD_NEXT, "cuDriverGetVersion"));
    show("next-global", "cuInit", dlsym(RTLD_NEXT, "cuInit"));
    fflush(stdout);
    return e2e_finish();
}
