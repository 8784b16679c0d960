/*
 * e2e_reload.c - a library is opened, used, closed, its old address range taken by something
 * else, and opened again: calls must keep working (issue #10, item 2).
 *
 * USAGE: e2e_reload driver|cudart|dropin
 *   driver  dlopen("libcuda.so.1"), cuDriverGetVersion through dlsym, dlclose, again
 *   cudart  dlopen("libcudart.so.13", the tree's major), cudaRuntimeGetVersion + cudaMalloc/cudaFree, dlclose, again
 *   dropin  as 'driver', where libcuda.so.1 is the drop-in (LD_LIBRARY_PATH)
 *
 * Without the shim (or with a shim that keeps the library loaded) this works: after dlclose the
 * library is either gone - then its old range is mapped with ud2 instructions here, so a stale
 * function pointer kept by anyone traps - or still loaded, and the second dlopen finds it. A shim
 * that cached the first copy's functions and let it be unloaded jumps into the ud2 page (SIGILL).
 * Run through run_counts.sh, the shim's counts must also equal what the fakes received: one
 * drop-in copy counted everything (a drop-in unloaded and loaded again would start over).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "e2e_common.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

struct range {
    uintptr_t lo, hi;
};
struct obj_q {
    const char *base;     /* basename prefix of the object */
    struct range r[8];
    int n;
    char path[4096];
};

static int obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct obj_q *q = data;
    (void)size;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *b = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (strncmp(b, q->base, strlen(q->base)) != 0)
        return 0;
    snprintf(q->path, sizeof q->path, "%s", name);
    for (int i = 0; i < info->dlpi_phnum && q->n < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + pg - 1) & ~(pg - 1);
        q->r[q->n++] = (struct range){lo, hi};
    }
    return 1;
}

/* Fill the address range the closed library had with ud2 (0f 0b): a stale pointer traps. */
static int occupy(const struct obj_q *q)
{
    int mapped = 0;
    for (int i = 0; i < q->n; i++) {
        size_t len = q->r[i].hi - q->r[i].lo;
        void *p = mmap((void *)q->r[i].lo, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (p == MAP_FAILED)
            continue;
        if ((uintptr_t)p != q->r[i].lo) {   /* an old kernel took the address as a hint only */
            munmap(p, len);
            continue;
        }
        for (size_t o = 0; o + 1 < len; o += 2) {
            ((unsigned char *)p)[o] = 0x0f;
            ((unsigned char *)p)[o + 1] = 0x0b;
        }
        mprotect(p, len, PROT_READ | PROT_EXEC);
        mapped++;
    }
    return mapped;
}

typedef int (*int_out_fn)(int *);
typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);

/* One round: open, look up, call, close. Returns the handle's object path for the next round. */
static void round_driver(const char *soname, int round, struct obj_q *q)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "round %d: dlopen(%s): %s", round, soname, dlerror());
    if (h == NULL)
        return;
    int_out_fn ver = (int_out_fn)dlsym(h, "cuDriverGetVersion");
    E2E_CHECK(ver != NULL, "round %d: dlsym(cuDriverGetVersion) = NULL", round);
    int v = 0;
    if (ver != NULL)
        E2E_CU(ver(&v));
    E2E_CHECK(v == FAKE_CUDA_VERSION, "round %d: cuDriverGetVersion gave %d", round, v);
    q->n = 0;
    q->path[0] = '\0';
    dl_iterate_phdr(obj_cb, q);
    E2E_CHECK(q->n > 0, "round %d: %s is not in the link map", round, q->base);
    E2E_CU(dlclose(h));
}

static void round_cudart(int round, struct obj_q *q)
{
    void *h = dlopen(E2E_CUDART_SONAME, RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "round %d: dlopen(%s): %s", round, E2E_CUDART_SONAME, dlerror());
    if (h == NULL)
        return;
    int_out_fn ver = (int_out_fn)dlsym(h, "cudaRuntimeGetVersion");
    malloc_fn mal = (malloc_fn)dlsym(h, "cudaMalloc");
    free_fn fr = (free_fn)dlsym(h, "cudaFree");
    E2E_CHECK(ver && mal && fr, "round %d: runtime look-ups failed", round);
    if (ver && mal && fr) {
        int v = 0;
        void *d = NULL;
        E2E_CU(ver(&v));
        E2E_CHECK(v == FAKE_CUDA_VERSION, "round %d: cudaRuntimeGetVersion gave %d", round, v);
        E2E_CU(mal(&d, 4096));
        E2E_CU(fr(d));
    }
    q->n = 0;
    dl_iterate_phdr(obj_cb, q);
    E2E_CHECK(q->n > 0, "round %d: %s is not in the link map", round, q->base);
    E2E_CU(dlclose(h));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "driver";
    e2e_init("e2e_reload");
    int rt = strcmp(mode, "cudart") == 0;
    struct obj_q q = {rt ? "libcudart.so" : "libcuda.so", {{0, 0}}, 0, ""};
    int occupied = 0;
    for (int round = 0; round < 3; round++) {
        if (rt)
            round_cudart(round, &q);
        else
            round_driver("libcuda.so.1", round, &q);
        /* Still loaded (someone keeps a reference)? Then nothing to take over. */
        void *still = q.path[0] ? dlopen(q.path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
        if (still != NULL) {
            dlclose(still);
            continue;
        }
        occupied += occupy(&q);
        /* Also load something else into the freed space, as a real program would. */
        void *other = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
        (void)other;
    }
    printf("e2e_reload %s: %d ranges occupied after dlclose\n", mode, occupied);
    return e2e_finish();
}
