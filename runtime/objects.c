/*
 * objects.c - what the shim knows of the loaded objects: which object is its
 * own (and whether it is the drop-in libcuda.so.1), which kind of object holds
 * an address (ours, the driver, a libcudart, another interposed library,
 * anything else), the objects pinned because we cache their functions, and
 * how many objects were ever loaded (a failed search is repeated only after a
 * load). The driver's own address comes from driver.c, which found it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "elfsym.h"
#include "libs.h"
#include "log.h"
#include "objects.h"

static _Atomic uintptr_t ob_driver_base;      /* load address + 1 (0: unknown) */
static _Atomic int ob_dropin_state;           /* 0 unknown, 1 preload, 2 drop-in */

void ob_set_driver(uintptr_t base)
{
    atomic_store_explicit(&ob_driver_base, base + 1, memory_order_relaxed);
}

int ob_is_driver(uintptr_t base)
{
    return base + 1 == atomic_load_explicit(&ob_driver_base, memory_order_relaxed);
}

/*
 * Keep the object containing 'fn' loaded for the rest of the process. Called for
 * every function we cache as a real (the driver's, a libcudart's, another
 * interposer's): a program that dlcloses the library and opens it again must
 * not leave our wrappers jumping to where it used to be mapped. RTLD_NOLOAD |
 * RTLD_NODELETE marks the loaded object so that no dlclose unloads it; the
 * reference is kept as well. Once per object (a small table; beyond it the
 * dlopen is merely repeated). The executable and the shim need nothing.
 */
#define OB_PINNED_MAX 32
static _Atomic uintptr_t ob_pinned[OB_PINNED_MAX];   /* load address + 1 */

void ob_pin(const void *fn)
{
    uintptr_t base;
    char name[PATH_MAX];
    if (fn == NULL || !elf_object_of(fn, &base, name, sizeof name) || name[0] == '\0' || base == ob_self_base())
        return;
    size_t i;
    for (i = 0; i < OB_PINNED_MAX; i++) {
        uintptr_t v = atomic_load_explicit(&ob_pinned[i], memory_order_acquire);
        if (v == base + 1)
            return;
        if (v == 0)
            break;
    }
    void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (h == NULL) {
        log_debug("cannot pin %s: %s", name, dlerror());
        return;
    }
    for (; i < OB_PINNED_MAX; i++) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&ob_pinned[i], &expected, base + 1) || expected == base + 1)
            break;
    }
    log_debug("pinned %s", name);
}

uintptr_t ob_self_base(void)
{
    static _Atomic uintptr_t self;
    static _Atomic int known;
    if (!atomic_load_explicit(&known, memory_order_acquire)) {
        uintptr_t b;
        elf_object_of((const void *)&ob_self_base, &b, NULL, 0);
        atomic_store_explicit(&self, b, memory_order_relaxed);
        atomic_store_explicit(&known, 1, memory_order_release);
    }
    return atomic_load_explicit(&self, memory_order_relaxed);
}

void *ob_self_handle(void)
{
    static _Atomic(void *) self;
    void *h = atomic_load_explicit(&self, memory_order_relaxed);
    if (h == NULL) {
        Dl_info di;
        struct link_map *lm = NULL;
        if (dladdr1((void *)&ob_self_handle, &di, (void **)&lm, RTLD_DL_LINKMAP) != 0)
            h = lm;
        atomic_store_explicit(&self, h, memory_order_relaxed);
    }
    return h;
}

const char *ob_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int ob_is_dropin(void)
{
    int s = atomic_load_explicit(&ob_dropin_state, memory_order_relaxed);
    if (s == 0) {
        uintptr_t base;
        char name[PATH_MAX];
        s = 1;
        if (elf_object_of((const void *)&ob_is_dropin, &base, name, sizeof name) &&
            strncmp(ob_basename(name), "libcuda.so", 10) == 0)
            s = 2;
        atomic_store_explicit(&ob_dropin_state, s, memory_order_relaxed);
    }
    return s == 2;
}

int ob_lib_matches(const lb_library *lib, const char *path)
{
    const char *b = ob_basename(path);
    for (const char *const *s = lib->sonames; *s != NULL; s++)
        if (strncmp(b, *s, strlen(*s)) == 0)
            return 1;
    return 0;
}

int ob_classify(const void *addr)
{
    if (addr == NULL)
        return OB_NONE;
    uintptr_t base;
    char name[PATH_MAX];
    if (!elf_object_of(addr, &base, name, sizeof name))
        return OB_OTHER;
    if (base == ob_self_base())
        return OB_SELF;
    if (ob_is_driver(base))
        return OB_DRIVER;
    const char *b = ob_basename(name);
    if (strncmp(b, "libcudart.so", 12) == 0)
        return OB_RUNTIME;
    if (strncmp(b, "libcuda.so", 10) == 0)
        return OB_DRIVER;
    for (unsigned i = 0; i < lb_nlibraries; i++)
        if (lb_libraries[i].value != CUSHIM_LIB_DRIVER && lb_libraries[i].value != CUSHIM_LIB_RUNTIME &&
            ob_lib_matches(&lb_libraries[i], name))
            return OB_LIBRARY;
    return OB_OTHER;
}

static int ob_adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
        *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

unsigned long long ob_loaded_adds(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(ob_adds_cb, &adds);
    return adds;
}
