/*
 * copies_main.c - two majors of the CUDA runtime in one process on a real GPU:
 * this program is linked against the toolkit's libcudart.so.13 and opens
 * (RTLD_LOCAL) COPIES_LIB, a library linked against a libcudart.so.12. Prints
 * PASS/FAIL lines; under the shim (tests/gpu/checks/copies.sh) the counts file
 * must hold only this program's runtime calls (the 12 copy's callers bind past
 * the shim), while both copies work.
 *   copies_main LIB
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*int_fn)(void);
typedef void *(*ptr_fn)(void);
typedef cudaError_t (*ver_fn)(int *);

static const char *file_of(const void *p)
{
    Dl_info di;
    return p != NULL && dladdr(p, &di) != 0 && di.dli_fname ? di.dli_fname : "?";
}

int main(int argc, char **argv)
{
    int fails = 0, v = 0;
    if (argc < 2)
        return 2;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess || v / 1000 != 13) {
        printf("FAIL main-version the program's runtime says %d\n", v);
        fails++;
    } else {
        printf("PASS main-version %d\n", v);
    }
    void *d = NULL;
    if (cudaMalloc(&d, 1 << 20) != cudaSuccess || cudaMemset(d, 1, 1 << 20) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess || cudaFree(d) != cudaSuccess) {
        printf("FAIL main-memory\n");
        fails++;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("FAIL lib-open %s\n", dlerror());
        return 1;
    }
    int_fn version = (int_fn)dlsym(h, "copies_version");
    int_fn roundtrip = (int_fn)dlsym(h, "copies_roundtrip");
    ptr_fn bound = (ptr_fn)dlsym(h, "copies_bound");
    int lv = version ? version() : -9, rt = roundtrip ? roundtrip() : -9;
    if (lv / 1000 != 12 || rt != 0) {
        printf("FAIL lib-copy the 12 library's runtime says %d, round trip %d\n", lv, rt);
        fails++;
    } else {
        printf("PASS lib-copy %d, device round trip through it correct\n", lv);
    }
    const char *bf = file_of(bound ? bound() : NULL);
    printf("%s lib-bound the 12 library's cudaRuntimeGetVersion is in %s\n",
           strstr(bf, "libcudart.so.12") ? "PASS" : "FAIL", bf);
    fails += strstr(bf, "libcudart.so.12") == NULL;
    void *h12 = dlopen("libcudart.so.12", RTLD_NOW | RTLD_NOLOAD);
    ver_fn f12 = h12 ? (ver_fn)dlsym(h12, "cudaRuntimeGetVersion") : NULL;
    int v12 = 0;
    if (f12 == NULL || f12(&v12) != cudaSuccess || v12 / 1000 != 12) {
        printf("FAIL dlsym-12 dlsym on the 12 copy's handle reached %d (%s)\n", v12, file_of((void *)f12));
        fails++;
    } else {
        printf("PASS dlsym-12 %d from %s\n", v12, file_of((void *)f12));
    }
    if (cudaRuntimeGetVersion(&v) != cudaSuccess || v / 1000 != 13) {
        printf("FAIL main-version-after the program's runtime says %d\n", v);
        fails++;
    }
    return fails ? 1 : 0;
}
