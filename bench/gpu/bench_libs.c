/*
 * bench_libs.c - the no-hook cost of an NVML and a cuBLAS call: the same
 * cheap query through a pointer from dlsym on the library's handle, run
 * directly and again with the shim preloaded (the pointer is then the shim's
 * wrapper: one load and an indirect jump). Built and run by the GPU check
 * 'universal bench' (tests/gpu/checks/universal.sh) and by bench/cpu/libs.sh:
 *
 *   bench_libs nvml|cublas [CALLS [REPS]]
 *     prints "<lib> ns_per_call <best of REPS rounds of CALLS calls>" after one
 *     round of warm-up (defaults: nvml 1e6 calls, cublas 1e7 calls, 7 rounds)
 *   BENCH_LIBS_INPROC=BLOCKS   also, in the same process, the wrapper against the
 *     real function: the real one's address read from the library's own ELF
 *     dynamic symbol table (the file the loader mapped, plus its load address;
 *     the loaded image's dynamic section when the file has no section headers),
 *     so nothing the shim interposes (dlsym, dlvsym) is asked. BLOCKS pairs of
 *     blocks of CALLS/5 calls, alternately wrapper-first and real-first, through
 *     one loop function (same code, same alignment); prints
 *     "<lib> inproc wrapper_best W real_best R wrapper_med WM real_med RM
 *      diff_med D diff_min A diff_max B blocks N same_pointer S"
 *     where diff is wrapper - real of each pair (ns per call). Without the shim
 *     both pointers are the same function (same_pointer 1): a check of the lookup.
 *   BENCH_LIBS_CUBLAS_FN=name   the cuBLAS query (default cublasGetPointerMode_v2;
 *     any 'status f(handle, int *)' works, e.g. cublasGetVersion_v2 of the test
 *     suite's fake cuBLAS)
 *   BENCH_LIBS_CUBLAS_SONAME=soname   the cuBLAS to open (default libcublas.so.13; libcublas.so.12 for a
 *     CUDA 12 installation or the 12.9 tree's fakes)
 * No CUDA header needed: the few prototypes are declared here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf_lookup.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

typedef int (*fn_void)(void);
typedef int (*fn_create)(void **);
/* both queries are called as f(arg, out): NVML's count ignores the first argument slot */
typedef int (*fn_query)(void *, void *);

static void *q_arg;   /* the cuBLAS handle, or the NVML count's output */
static int q_nvml;

/* One loop for every measurement, never inlined: the wrapper and the real function are timed through the
   same instructions at the same address. */
__attribute__((noinline)) static double run_block(void *fn, long calls)
{
    unsigned n = 0;
    int m = 0;
    double t0 = now_ns();
    if (q_nvml) {
        int (*f)(unsigned *) = (int (*)(unsigned *))fn;
        for (long i = 0; i < calls; i++)
            f(&n);
    } else {
        fn_query f = (fn_query)fn;
        for (long i = 0; i < calls; i++)
            f(q_arg, &m);
    }
    return (now_ns() - t0) / (double)calls;
}

/* ---- in-process comparison ---- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int inproc(const char *lib, const char *so_base, const char *name, void *wrapper, long calls, int blocks)
{
    void *real = elf_lookup(so_base, name);
    if (real == NULL) {
        fprintf(stderr, "bench_libs: %s not found in the .dynsym of the loaded %s*\n", name, so_base);
        return 2;
    }
    double *w = calloc((size_t)blocks, sizeof *w), *r = calloc((size_t)blocks, sizeof *r),
           *d = calloc((size_t)blocks, sizeof *d);
    if (!w || !r || !d) {
        free(w), free(r), free(d);
        return 2;
    }
    long per = calls / 5 > 0 ? calls / 5 : 1;
    run_block(wrapper, per);   /* warm both */
    run_block(real, per);
    double wb = 1e30, rb = 1e30, dmin = 1e30, dmax = -1e30;
    for (int b = 0; b < blocks; b++) {
        if (b % 2 == 0) {
            w[b] = run_block(wrapper, per);
            r[b] = run_block(real, per);
        } else {
            r[b] = run_block(real, per);
            w[b] = run_block(wrapper, per);
        }
        d[b] = w[b] - r[b];
        wb = w[b] < wb ? w[b] : wb;
        rb = r[b] < rb ? r[b] : rb;
        dmin = d[b] < dmin ? d[b] : dmin;
        dmax = d[b] > dmax ? d[b] : dmax;
    }
    double wm = median(w, blocks), rm = median(r, blocks), dm = median(d, blocks);
    printf("%s inproc wrapper_best %.3f real_best %.3f wrapper_med %.3f real_med %.3f diff_med %.3f diff_min %.3f "
           "diff_max %.3f blocks %d same_pointer %d\n", lib, wb, rb, wm, rm, dm, dmin, dmax, blocks, wrapper == real);
    free(w), free(r), free(d);
    return 0;
}

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : "nvml";
    int nvml = strcmp(lib, "nvml") == 0;
    long calls = argc > 2 ? atol(argv[2]) : nvml ? 1000000 : 10000000;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    const char *ip = getenv("BENCH_LIBS_INPROC");
    int blocks = ip ? atoi(ip) : 0;
    const char *so_base, *name;
    void *fn;
    double best = 1e30;
    if (calls < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_libs nvml|cublas [CALLS [REPS]]\n");
        return 2;
    }
    q_nvml = nvml;
    if (nvml) {
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
        fn_void init = h ? (fn_void)dlsym(h, "nvmlInit_v2") : NULL;
        so_base = "libnvidia-ml.so";
        name = "nvmlDeviceGetCount_v2";
        fn = h ? dlsym(h, name) : NULL;
        if (!init || !fn || init() != 0) {
            fprintf(stderr, "bench_libs: no NVML\n");
            return 2;
        }
    } else {
        const char *so = getenv("BENCH_LIBS_CUBLAS_SONAME");
        void *h = dlopen(so && *so ? so : "libcublas.so.13", RTLD_NOW);
        fn_create create = h ? (fn_create)dlsym(h, "cublasCreate_v2") : NULL;
        const char *qn = getenv("BENCH_LIBS_CUBLAS_FN");
        so_base = "libcublas.so";
        name = qn && *qn ? qn : "cublasGetPointerMode_v2";
        fn = h ? dlsym(h, name) : NULL;
        if (!create || !fn || create(&q_arg) != 0) {
            fprintf(stderr, "bench_libs: no cuBLAS (or no GPU)\n");
            return 2;
        }
    }
    run_block(fn, calls);   /* warm-up (caches, branch predictors, the core's clock), not counted */
    for (int r = 0; r < reps; r++) {
        double t = run_block(fn, calls);
        best = t < best ? t : best;
    }
    printf("%s ns_per_call %.2f\n", lib, best);
    fflush(stdout);
    if (blocks > 0)
        return inproc(lib, so_base, name, fn, calls, blocks);
    return 0;
}
