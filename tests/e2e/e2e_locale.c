/*
 * e2e_locale.c - a program that sets its locale from the environment (LC_ALL=de_DE.UTF-8: ',' as the decimal
 * point) before it first uses CUDA, and only then opens libcuda.so.1 (run_locale.sh puts the drop-in there): the
 * shim and its plugins start after setlocale, so their options are read under the program's LC_NUMERIC.
 *
 * USAGE: e2e_locale BYTES...   allocates each size in turn, printing 'alloc BYTES RESULT'; first
 *        'probe X' (1.5 as printf writes it now) and 'init RESULT'. Exit 77 when the locale cannot be set.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

typedef CUresult (*f_init)(unsigned);
typedef CUresult (*f_dget)(CUdevice *, int);
typedef CUresult (*f_retain)(CUcontext *, CUdevice);
typedef CUresult (*f_setc)(CUcontext);
typedef CUresult (*f_alloc)(CUdeviceptr *, size_t);

int main(int argc, char **argv)
{
    char probe[16];
    if (setlocale(LC_ALL, "") == NULL) {
        fprintf(stderr, "e2e_locale: cannot set the locale of the environment\n");
        return 77;
    }
    snprintf(probe, sizeof probe, "%.1f", 1.5);
    printf("probe %s\n", probe);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "e2e_locale: %s\n", dlerror());
        return 2;
    }
    f_init init = (f_init)dlsym(h, "cuInit");
    f_dget dget = (f_dget)dlsym(h, "cuDeviceGet");
    f_retain retain = (f_retain)dlsym(h, "cuDevicePrimaryCtxRetain");
    f_setc setc = (f_setc)dlsym(h, "cuCtxSetCurrent");
    f_alloc alloc = (f_alloc)dlsym(h, "cuMemAlloc_v2");
    if (!init || !dget || !retain || !setc || !alloc)
        return 2;
    CUdevice d;
    CUcontext c;
    CUresult r = init(0);
    printf("init %d\n", (int)r);
    if (r == CUDA_SUCCESS && (dget(&d, 0) != CUDA_SUCCESS || retain(&c, d) != CUDA_SUCCESS || setc(c) != CUDA_SUCCESS))
        return 2;
    for (int i = 1; i < argc && r == CUDA_SUCCESS; i++) {
        CUdeviceptr p;
        printf("alloc %s %d\n", argv[i], (int)alloc(&p, (size_t)strtoull(argv[i], NULL, 10)));
    }
    return 0;
}
