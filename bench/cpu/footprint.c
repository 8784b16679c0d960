/*
 * footprint.c - the memory one interposed call touches: bench/cpu/footprint.sh runs this under
 * valgrind --tool=lackey --trace-mem=yes and counts the distinct cache lines and pages (code and data)
 * between the marks.
 *
 * USAGE: cushim_footprint <path of libcuda.so.1> <API> [marked calls]
 *   API: one that takes one pointer it writes to (cuCtxGetCurrent, cuCtxGetDevice, cuDriverGetVersion: the
 *   trace's read-only queries, hooked at exit alone) or none (cuCtxSynchronize: hooked at entry and exit).
 *
 * Calls API 200 times (first-call resolution, the plugin's thread buffer, the writer), then for each marked
 * call: 50 more unmarked calls, fp_mark_begin(), the call, fp_mark_end(). Prints to stderr the marks'
 * addresses and every loaded object's PT_LOAD segments (dl_iterate_phdr), which footprint.sh reads to
 * name where each line belongs. A call between the marks that another thread interrupts (the trace's
 * writer) is visible as an outlier: footprint.sh reports the median over the marked calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void fp_mark_begin(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void fp_mark_end(void)
{
    __asm__ volatile("" ::: "memory");
}

static int fp_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        fprintf(stderr, "fp_seg %lx %lx %c %s\n", (unsigned long)lo, (unsigned long)(lo + ph->p_memsz),
                (ph->p_flags & PF_X) ? 'x' : 'd', info->dlpi_name[0] ? info->dlpi_name : "main");
    }
    return 0;
}

typedef int (*fn_ptr)(void *);
typedef int (*fn_void)(void);

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBCUDA API [MARKED]\n", argv[0]);
        return 2;
    }
    int marked = argc > 3 ? atoi(argv[3]) : 9;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        fprintf(stderr, "footprint: %s\n", dlerror());
        return 1;
    }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*dev_get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
    int (*ctx_create)(void **, unsigned, int) = (int (*)(void **, unsigned, int))dlsym(h, "cuCtxCreate_v2");
    void *fn = dlsym(h, argv[2]);
    if (init == NULL || dev_get == NULL || ctx_create == NULL || fn == NULL) {
        fprintf(stderr, "footprint: %s not in %s\n", fn == NULL ? argv[2] : "cuInit/cuDeviceGet/cuCtxCreate_v2",
                argv[1]);
        return 1;
    }
    int dev = 0;
    void *ctx = NULL;
    if (init(0) != 0 || dev_get(&dev, 0) != 0 || ctx_create(&ctx, 0, dev) != 0) {
        fprintf(stderr, "footprint: no context\n");
        return 1;
    }
    /* every API takes one pointer (or nothing): the out value goes to 'out' */
    int takes_void = strcmp(argv[2], "cuCtxSynchronize") == 0;
    uint64_t out[4] = { 0 };
#define FP_CALL()                                                      \
    do {                                                               \
        if (takes_void)                                                \
            ((fn_void)fn)();                                           \
        else                                                           \
            ((fn_ptr)fn)(out);                                         \
    } while (0)
    for (int i = 0; i < 200; i++)
        FP_CALL();
    fprintf(stderr, "fp_marks %lx %lx\n", (unsigned long)(uintptr_t)&fp_mark_begin,
            (unsigned long)(uintptr_t)&fp_mark_end);
    fprintf(stderr, "fp_stack %lx\n", (unsigned long)(uintptr_t)__builtin_frame_address(0));
    void *probe = malloc(64);   /* where the main arena's heap is */
    fprintf(stderr, "fp_tcb %lx\nfp_heap %lx\n", (unsigned long)pthread_self(), (unsigned long)(uintptr_t)probe);
    free(probe);
    for (int m = 0; m < marked; m++) {
        for (int i = 0; i < 50; i++)
            FP_CALL();
        fp_mark_begin();
        FP_CALL();
        fp_mark_end();
    }
    dl_iterate_phdr(fp_phdr, NULL);
    return 0;
}
