/*
 * e2e_nocuda.c - a program that probes for CUDA where there is none, as many libraries do at start-up.
 *
 * Run by run_compare.sh without any driver on the library path, without and
 * with the shim: every probe (dlsym of CUDA names with RTLD_DEFAULT, and with
 * RTLD_NEXT given --next; dlvsym, dlopen of libcuda.so.1) must answer exactly as without
 * the shim: the shim's own exports must never make CUDA appear to exist.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "e2e_classify.h"
#include "e2e_common.h"

static void show(const char *how, const char *name, const void *p)
{
    char buf[512];
    printf("%s %s -> %s\n", how, name, e2e_classify(p, buf, sizeof buf));
}

int main(int argc, char **argv)
{
    /* --next: also dlsym(RTLD_NEXT, ...) probes (test e2e_nocuda_next). */
    int next = argc > 1 && strcmp(argv[1], "--next") == 0;
    e2e_init("e2e_nocuda");
    const char *names[] = {"cuInit", "cuGetProcAddress_v2", "cuMemAlloc_v2", "cudaMalloc",
                           "cudaGetDriverEntryPoint", "cuNoSuchFunction", "malloc"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        show("default", names[i], dlsym(RTLD_DEFAULT, names[i]));
        if (next)
            show("next", names[i], dlsym(RTLD_NEXT, names[i]));
        show("vsym-default", names[i], dlvsym(RTLD_DEFAULT, names[i], "GLIBC_2.2.5"));
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    printf("dlopen libcuda.so.1 -> %s\n", h ? "handle" : "NULL");
    void *h2 = dlopen("libcuda.so", RTLD_NOW | RTLD_GLOBAL);
    printf("dlopen libcuda.so -> %s\n", h2 ? "handle" : "NULL");
    show("default-after-dlopen", "cuInit", dlsym(RTLD_DEFAULT, "cuInit"));
    fflush(stdout);
    return e2e_finish();
}
