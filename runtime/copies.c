/*
 * copies.c - several loaded copies of one library (docs/runtime.md, "Several
 * loaded copies of one library"): which copy is this build's, the real
 * function of a library other than the driver, and the warnings when copies
 * of another major are loaded.
 *
 * A library whose exports carry a version node (lb_symver: libcudart.so.13,
 * libcublas.so.13) is forwarded to the copy whose soname is that node: "our"
 * copy. A copy of another major is never a wrapper's real function while ours
 * is loaded: its callers' references (cudaMalloc@libcudart.so.12) bind past
 * the shim, dlsym on its handle hands out its own functions. A library
 * without versions (NVML, NCCL) has no such distinction: its first copy found
 * is ours. Several copies loaded at once are reported once per library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "copies.h"
#include "elfsym.h"
#include "libs.h"
#include "log.h"
#include "objects.h"
#include "realdl.h"

int cp_is_ours(const lb_library *lib, const void *fn)
{
    const char *node = lib ? lb_symver(lib->value) : NULL;
    char so[256];
    if (node == NULL || !elf_object_soname(fn, so, sizeof so) || strcmp(so, node) == 0)
        return 1;
    for (const char *const *s = lib->sonames; *s != NULL; s++) {
        size_t n = strlen(*s);
        /* Another major: the library's soname followed by ".N"; a soname without a major
           (libcudart.so) cannot tell, and an object that is no copy of the library (another
           interposer, the next layer) is not "another major" either. */
        if (strncmp(so, *s, n) == 0 && so[n] == '.' && so[n + 1] >= '0' && so[n + 1] <= '9')
            return 0;
    }
    return 1;
}

#define CP_COPIES_MAX 8
struct cp_copies_q {
    const lb_library *lib;
    int n;
    uintptr_t base[CP_COPIES_MAX];
    char name[CP_COPIES_MAX][160];
};

static int cp_copies_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct cp_copies_q *q = data;
    char name[PATH_MAX];
    (void)size;
    if (q->n >= CP_COPIES_MAX || info->dlpi_addr == ob_self_base())
        return 0;
    elf_name_copy(name, sizeof name, info->dlpi_name);
    if (name[0] == '\0' || !ob_lib_matches(q->lib, name))
        return 0;
    q->base[q->n] = info->dlpi_addr;
    size_t n = strlen(name);   /* a name too long for the report keeps its end (the file name) */
    const char *from = n < sizeof q->name[q->n] ? name : name + n - (sizeof q->name[q->n] - 1);
    memcpy(q->name[q->n], from, (size_t)(name + n - from) + 1);
    q->n++;
    return 0;
}

/* The first loaded function of one of the library's exports in the object at 'base': an address inside it. */
static const void *cp_addr_in(uintptr_t base)
{
    void *addr = NULL;
    return elf_object_symbol(base, 0, &addr) != NULL ? addr : NULL;
}

static _Atomic unsigned long long cp_copies_adds[32];   /* dlpi_adds at the last scan + 1, per library */
static _Atomic int cp_copies_warned[32], cp_foreign_warned[32];

/* Look at the loaded copies of 'lib' again when objects were loaded since the last look; warn once
   when there are several, and once when the only one is of another major than this build's (its callers'
   calls of the library never reach the shim: nothing else would tell). Cheap when nothing was loaded (one
   dl_iterate_phdr step). */
void cp_scan(const lb_library *lib)
{
    if (lib == NULL || lib->value < 0 || lib->value >= 32 || lib->value == CUSHIM_LIB_DRIVER)
        return;
    unsigned long long adds = ob_loaded_adds() + 1;
    if (atomic_exchange(&cp_copies_adds[lib->value], adds) == adds)
        return;
    struct cp_copies_q q;
    memset(&q, 0, sizeof q);
    q.lib = lib;
    dl_iterate_phdr(cp_copies_cb, &q);
    if (q.n == 1 && lb_symver(lib->value) != NULL) {
        const void *a = cp_addr_in(q.base[0]);
        char so[128] = "?";
        if (a != NULL && !cp_is_ours(lib, a) && !atomic_exchange(&cp_foreign_warned[lib->value], 1)) {
            elf_object_soname(a, so, sizeof so);
            log_warn("%s (soname %s) is the loaded %s library, of another major than this build's (%s): its callers "
                     "bind to it past the shim, so their %s calls are not observed (the driver calls it makes are). "
                     "A shim built from that release's tree observes them (docs/building.md, \"Building for another CUDA "
                     "release\")", q.name[0], so, lib->name, lb_symver(lib->value), lib->name);
        }
    }
    if (q.n < 2 || atomic_exchange(&cp_copies_warned[lib->value], 1))
        return;
    char list[1024];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < q.n && used < sizeof list; i++) {
        char so[128] = "?";
        const void *a = cp_addr_in(q.base[i]);
        if (a != NULL)
            elf_object_soname(a, so, sizeof so);
        int ours = a != NULL && cp_is_ours(lib, a);
        int w = snprintf(list + used, sizeof list - used, "%s%s (soname %s%s)", i ? ", " : "", q.name[i], so,
                         lb_symver(lib->value) == NULL ? "" : ours ? ", this build's major" : ", another major");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (lb_symver(lib->value) != NULL)
        log_warn("%d copies of the %s library are loaded: %s. Each keeps its own callers: calls of the copy of "
                 "this build's major (%s) are interposed; a caller linked against another major binds to its "
                 "own copy past the shim, and dlsym on that copy's handle hands out its own functions "
                 "(neither is observed)", q.n, lib->name, list, lb_symver(lib->value));
    else
        log_warn("%d copies of the %s library are loaded: %s. The shim forwards the calls it interposes to the "
                 "first copy found; dlsym on another copy's handle hands out that copy's own functions (not "
                 "observed), but a call the dynamic linker bound to the shim's export reaches the first copy "
                 "(docs/runtime.md, \"Several loaded copies of one library\")", q.n, lib->name, list);
}

/* Every library with a version node (the runtime, cuBLAS...): at each first resolution of a driver function,
   which a program of another major reaches too (its own runtime copy calls the driver through the shim). */
void cp_scan_versioned(void)
{
    for (unsigned i = 0; i < lb_nlibraries; i++)   /* those interposed (CUSHIM_LIBS): the others are not observed anyway */
        if (lb_symver(lb_libraries[i].value) != NULL && lb_chosen(lb_libraries[i].value))
            cp_scan(&lb_libraries[i]);
}

/* 'name' in the loaded copy at 'path': through a NOLOAD handle (one reference, dropped again;
   ob_pin keeps what we use). Never ours. */
static void *cp_sym_in(const char *path, const char *name)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *r = rd_dlsym(h, name);
    dlclose(h);
    return r != NULL && ob_classify(r) == OB_SELF ? NULL : r;
}

/*
 * The real 'name' of a library other than the driver (the runtime, NVML, ...):
 *   1. for a library with a version node, the definition of that version after
 *      the shim (dlvsym RTLD_NEXT), when it is in our copy;
 *   2. the next definition after the shim: another interposer's (the next
 *      layer), or a copy of the library - ours, else kept as a last resort;
 *   3. our copy among the loaded objects (one loaded RTLD_LOCAL);
 *   4. the copy kept in 2, else the first loaded copy (another major: the
 *      caller then passes through untouched, dispatch.c rt_check_foreign).
 * Never loads the library: a program that never loads NVML gets NULL (the
 * wrapper answers the descriptor's 'fail' value) and pays nothing. Pinned.
 */
void *cp_library_real(const lb_library *lib, const char *name)
{
    const char *node = lb_symver(lib->value);
    cp_scan(lib);
    void *r = NULL, *other = NULL;
    if (node != NULL) {
        r = rd_dlvsym_next(name, node);
        if (r != NULL && (ob_classify(r) == OB_SELF || !cp_is_ours(lib, r)))
            r = NULL;
    }
    if (r == NULL) {
        r = rd_dlsym_next(name);
        if (r != NULL && ob_classify(r) == OB_SELF)
            r = NULL;
        if (r != NULL && node != NULL && !cp_is_ours(lib, r))
            other = r, r = NULL;
    }
    if (r == NULL) {
        struct cp_copies_q q;
        memset(&q, 0, sizeof q);
        q.lib = lib;
        dl_iterate_phdr(cp_copies_cb, &q);
        for (int i = 0; i < q.n && r == NULL; i++) {
            void *f = cp_sym_in(q.name[i], name);
            if (f == NULL)
                continue;
            if (cp_is_ours(lib, f))
                r = f;
            else if (other == NULL)
                other = f;
        }
    }
    if (r == NULL)
        r = other;
    ob_pin(r);
    return r;
}
