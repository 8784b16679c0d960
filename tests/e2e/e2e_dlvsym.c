/*
 * e2e_dlvsym.c - dlvsym of CUDA names with versions (issue #10, item 7), through every kind of
 * handle: RTLD_DEFAULT, RTLD_NEXT (from the program), dlopen(NULL), the libcuda.so.1 handle.
 *
 * Run by run_compare.sh without and with the shim: each answer must be glibc's - neither libcuda
 * nor the shim versions its CUDA exports, so glibc finds no cuInit@NOPE_1.0, cuInit@GLIBC_2.2.5
 * or cuInit@libcuda.so.1 (a dlvsym asks for a hidden version, which an unversioned definition
 * never matches). The shim used to answer with its wrapper wherever it looked past itself (it
 * dropped the version there). A NULL answer must also leave a dlerror() message, as glibc's does.
 * Controls: versions that exist (malloc@GLIBC_2.2.5) and plain dlsym of the same names.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "e2e_classify.h"
#include "e2e_common.h"

static void show(const char *how, const char *name, const char *version, const void *p)
{
    char buf[512];
    const char *err = dlerror();
    printf("%s %s@%s -> %s%s\n", how, name, version ? version : "-", e2e_classify(p, buf, sizeof buf),
           p == NULL ? (err ? " (dlerror set)" : " (dlerror EMPTY)") : "");
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;   /* an argument only names the output files (run_compare.sh) */
    e2e_init("e2e_dlvsym");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    printf("dlopen libcuda.so.1 -> %s\n", h ? "handle" : "NULL");
    void *self = dlopen(NULL, RTLD_NOW);
    const char *names[] = { "cuInit", "cuMemAlloc_v2", "cuGetProcAddress_v2", "cudaMalloc", "malloc" };
    const char *versions[] = { "NOPE_1.0", "GLIBC_2.2.5", "libcuda.so.1" };   /* not "": glibc 2.36 crashes on it */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        for (size_t j = 0; j < sizeof versions / sizeof versions[0]; j++) {
            const char *n = names[i], *v = versions[j];
            (void)dlerror();
            show("default", n, v, dlvsym(RTLD_DEFAULT, n, v));
            show("next", n, v, dlvsym(RTLD_NEXT, n, v));
            show("self", n, v, dlvsym(self, n, v));
            if (h != NULL)
                show("handle", n, v, dlvsym(h, n, v));
        }
        (void)dlerror();
        show("plain-default", names[i], NULL, dlsym(RTLD_DEFAULT, names[i]));
        if (h != NULL)
            show("plain-handle", names[i], NULL, dlsym(h, names[i]));
    }
    fflush(stdout);
    return e2e_finish();
}
