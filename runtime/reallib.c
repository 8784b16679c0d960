/*
 * reallib.c - the real dlsym/dlvsym, the real driver and runtime libraries.
 *
 * glibc's dlsym is found in libc.so.6's own symbol table (elfsym.c), never
 * through the dynamic linker: inside the shim a call to 'dlsym' would bind to
 * our override. Everything here is lazy (first CUDA call or look-up) and
 * lock-free: races resolve to the same answer, a losing dlopen is undone.
 *
 * Modes: preload (libcushim.so) takes the libcuda.so.1 already loaded, else
 * CUSHIM_REAL_LIBCUDA, else dlopen("libcuda.so.1"). Drop-in (these objects
 * linked as libcuda.so.1) never opens by soname - that would be itself - but
 * by path: a libcuda.so* already loaded, CUSHIM_REAL_LIBCUDA, LD_LIBRARY_PATH
 * entries other than its own directory, /etc/ld.so.cache entries, standard
 * directories; any candidate whose cuInit turns out to be ours is rejected.
 * A failed search is tried again once another object has been loaded.
 *
 * Every object whose functions we cache (the driver, a libcudart, another
 * interposer) is pinned (RTLD_NODELETE): a program may dlclose it, and our
 * wrappers must never jump to where it used to be.
 *
 * Stacking: the real function of a driver API is the next layer's - the next
 * definition after the shim in the global scope when that is another
 * interposer (not the driver, not another copy of cushim) - else the driver's
 * (rl_driver_real).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "config.h"
#include "elfsym.h"
#include "libs.h"
#include "log.h"
#include "reallib.h"
#include "cushim/cushim_io.h"

static _Atomic(void *) rl_driver_h;          /* handle, NULL until found */
/* dlpi_adds (objects ever loaded) after the last failed search, + 1; 0: none failed.
   The search is repeated only when this changed: a later dlopen may bring libcuda in. */
static _Atomic unsigned long long rl_driver_fail_adds;
static _Atomic int rl_driver_missing_logged;
static _Atomic uintptr_t rl_driver_base;      /* load address + 1 (0: unknown) */
static _Atomic int rl_dropin_state;          /* 0 unknown, 1 preload, 2 drop-in */
static _Atomic int rl_dlsym_missing_logged;

rl_dlsym_fn rl_real_dlsym(void)
{
    rl_dlsym_fn f = elf_real_dlsym();
    if (RT_UNLIKELY(f == NULL) && !atomic_exchange(&rl_dlsym_missing_logged, 1))
        log_error("glibc's dlsym not found in libc.so.6 or libdl.so.2; dlsym look-ups fail");
    return f;
}

rl_dlvsym_fn rl_real_dlvsym(void)
{
    return elf_real_dlvsym();
}

/* noinline + not a tail call: glibc must see a return address inside the shim. */
__attribute__((noinline)) void *rl_dlsym(void *handle, const char *name)
{
    rl_dlsym_fn f = rl_real_dlsym();
    if (f == NULL)
        return NULL;
    void *r = f(handle, name);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}

__attribute__((noinline)) void *rl_dlsym_next(const char *name)
{
    rl_dlsym_fn f = rl_real_dlsym();
    if (f == NULL)
        return NULL;
    void *r = f(RTLD_NEXT, name);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}

/* The loaded object containing 'addr': its load address and file name. dladdr
   would do, but it scans the whole symbol table (~10^5 instructions here). */
/* A copy of a loaded object's name (dlpi_name). ld.so writes it when it loads the object and publishes it under
   its own lock, which ThreadSanitizer does not see (ld.so calls libc's mutex functions directly): read without
   instrumentation, byte by byte (volatile: never turned into an intercepted strcpy), so that a scan on one
   thread while another dlopens is not reported as a race. */
__attribute__((no_sanitize("thread"), noinline)) static void rl_object_name(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    if (src != NULL)
        for (char c; i + 1 < cap && (c = ((const volatile char *)src)[i]) != '\0'; i++)
            dst[i] = c;
    dst[i] = '\0';
}

struct rl_obj_q {
    uintptr_t addr;
    uintptr_t base;
    char *name;   /* NULL: not wanted */
    size_t cap;
    int found;
};

static int rl_obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct rl_obj_q *q = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (q->addr >= lo && q->addr < lo + ph->p_memsz) {
            q->base = info->dlpi_addr;
            if (q->name != NULL)
                rl_object_name(q->name, q->cap, info->dlpi_name);
            q->found = 1;
            return 1;
        }
    }
    return 0;
}

int rl_object_of(const void *addr, uintptr_t *base, char *name, size_t cap)
{
    struct rl_obj_q q = { (uintptr_t)addr, 0, cap > 0 ? name : NULL, cap, 0 };
    if (q.name != NULL)
        q.name[0] = '\0';
    dl_iterate_phdr(rl_obj_cb, &q);
    *base = q.base;
    return q.found;
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
#define RL_PINNED_MAX 32
static _Atomic uintptr_t rl_pinned[RL_PINNED_MAX];   /* load address + 1 */

void rl_pin(const void *fn)
{
    uintptr_t base;
    char name[PATH_MAX];
    if (fn == NULL || !rl_object_of(fn, &base, name, sizeof name) || name[0] == '\0' || base == rl_self_base())
        return;
    size_t i;
    for (i = 0; i < RL_PINNED_MAX; i++) {
        uintptr_t v = atomic_load_explicit(&rl_pinned[i], memory_order_acquire);
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
    for (; i < RL_PINNED_MAX; i++) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&rl_pinned[i], &expected, base + 1) || expected == base + 1)
            break;
    }
    log_debug("pinned %s", name);
}

uintptr_t rl_self_base(void)
{
    static _Atomic uintptr_t self;
    static _Atomic int known;
    if (!atomic_load_explicit(&known, memory_order_acquire)) {
        uintptr_t b;
        rl_object_of((const void *)&rl_self_base, &b, NULL, 0);
        atomic_store_explicit(&self, b, memory_order_relaxed);
        atomic_store_explicit(&known, 1, memory_order_release);
    }
    return atomic_load_explicit(&self, memory_order_relaxed);
}

void *rl_self_handle(void)
{
    static _Atomic(void *) self;
    void *h = atomic_load_explicit(&self, memory_order_relaxed);
    if (h == NULL) {
        Dl_info di;
        struct link_map *lm = NULL;
        if (dladdr1((void *)&rl_self_handle, &di, (void **)&lm, RTLD_DL_LINKMAP) != 0)
            h = lm;
        atomic_store_explicit(&self, h, memory_order_relaxed);
    }
    return h;
}

static const char *rl_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int rl_is_dropin(void)
{
    int s = atomic_load_explicit(&rl_dropin_state, memory_order_relaxed);
    if (s == 0) {
        uintptr_t base;
        char name[PATH_MAX];
        s = 1;
        if (rl_object_of((const void *)&rl_is_dropin, &base, name, sizeof name) &&
            strncmp(rl_basename(name), "libcuda.so", 10) == 0)
            s = 2;
        atomic_store_explicit(&rl_dropin_state, s, memory_order_relaxed);
    }
    return s == 2;
}

static int rl_lib_matches(const lb_library *lib, const char *path);

int rl_classify(const void *addr)
{
    if (addr == NULL)
        return RL_NONE;
    uintptr_t base;
    char name[PATH_MAX];
    if (!rl_object_of(addr, &base, name, sizeof name))
        return RL_OTHER;
    if (base == rl_self_base())
        return RL_SELF;
    if (base + 1 == atomic_load_explicit(&rl_driver_base, memory_order_relaxed))
        return RL_DRIVER;
    const char *b = rl_basename(name);
    if (strncmp(b, "libcudart.so", 12) == 0)
        return RL_RUNTIME;
    if (strncmp(b, "libcuda.so", 10) == 0)
        return RL_DRIVER;
    for (unsigned i = 0; i < lb_nlibraries; i++)
        if (lb_libraries[i].value != CUSHIM_LIB_DRIVER && lb_libraries[i].value != CUSHIM_LIB_RUNTIME &&
            rl_lib_matches(&lb_libraries[i], name))
            return RL_LIBRARY;
    return RL_OTHER;
}

/* 'path' is a regular file (opened without blocking, then closed): dlopen of a FIFO - CUSHIM_REAL_LIBCUDA, a
   libcuda.so.1 in a searched directory - would wait for a writer forever. Said once (the search may be repeated).
   Left: the file replaced between this look and dlopen (loader.c says why the descriptor is not dlopened). */
static int rl_regular_file(const char *path)
{
    static _Atomic int said;
    char why[400];
    int fd = cushim_open_regular(path, O_RDONLY, 0, why, sizeof why);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    if (errno == EINVAL && atomic_exchange(&said, 1) == 0)
        log_warn("%s: not tried as the real driver", why);
    return 0;
}

/* A usable real driver: opened, and its cuInit is not ours. In drop-in mode
   also not another copy of the drop-in (it exports cushim_*): two copies would
   each take the other as the driver and their wrappers jump to each other
   forever. */
static void *rl_try_open(const char *path, int flags)
{
    if (!(flags & RTLD_NOLOAD) && strchr(path, '/') != NULL && !rl_regular_file(path))
        return NULL;
    void *h = dlopen(path, flags);
    if (h == NULL)
        return NULL;
    void *init = rl_dlsym(h, "cuInit");
    if (init == NULL || rl_classify(init) == RL_SELF ||
        (rl_is_dropin() && rl_dlsym(h, "cushim_api_id_limit") != NULL)) {
        log_debug("%s is not the real driver (cuInit %s)", path,
                  init == NULL ? "missing" : rl_classify(init) == RL_SELF ? "is ours" : "is cushim's");
        dlclose(h);
        return NULL;
    }
    log_info("real driver: %s", path);
    return h;
}

static int rl_same_dir(const char *dir, const char *self_dir)
{
    char a[PATH_MAX];
    if (self_dir[0] == '\0' || realpath(dir, a) == NULL)
        return 0;
    return strcmp(a, self_dir) == 0;
}

static void *rl_try_dir(const char *dir, size_t len, const char *self_dir)
{
    char path[PATH_MAX], d[PATH_MAX];
    if (len == 0 || len + sizeof "/libcuda.so.1" >= sizeof path)
        return NULL;
    memcpy(d, dir, len);
    d[len] = '\0';
    if (rl_same_dir(d, self_dir))
        return NULL;
    memcpy(path, d, len);
    strcpy(path + len, "/libcuda.so.1");
    if (access(path, R_OK) != 0)
        return NULL;
    return rl_try_open(path, RTLD_NOW | RTLD_LOCAL);
}

/* /etc/ld.so.cache, format "glibc-ld.so.cache1.1" (the only one glibc >= 2.32 writes). */
static void *rl_try_ldcache(const char *self_dir)
{
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *h = NULL;
    if (fstat(fd, &st) != 0 || st.st_size < 48) {
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    static const char magic[] = "glibc-ld.so.cache1.1";
    const char *base = memmem(m, size < 4096 ? size : 4096, magic, sizeof magic - 1);
    if (base != NULL && (size_t)(base - m) + 48 <= size) {
        uint32_t nlibs;
        memcpy(&nlibs, base + 20, 4);
        const char *entries = base + 48;
        for (uint32_t i = 0; i < nlibs && h == NULL; i++) {
            const char *e = entries + (size_t)i * 24;
            if ((size_t)(e + 24 - m) > size)
                break;
            uint32_t key, value;
            memcpy(&key, e + 4, 4);
            memcpy(&value, e + 8, 4);
            size_t ko = (size_t)(base - m) + key, vo = (size_t)(base - m) + value;
            if (ko >= size || vo >= size || memchr(m + ko, '\0', size - ko) == NULL ||
                memchr(m + vo, '\0', size - vo) == NULL)
                continue;   /* out of the file or unterminated: never read past the mapping */
            if (strcmp(base + key, "libcuda.so.1") != 0)
                continue;
            const char *path = base + value;
            const char *slash = strrchr(path, '/');
            if (slash == NULL)
                continue;
            char dir[PATH_MAX];
            size_t dl = (size_t)(slash - path);
            if (dl >= sizeof dir)
                continue;
            memcpy(dir, path, dl);
            dir[dl] = '\0';
            if (rl_same_dir(dir, self_dir))
                continue;
            h = rl_try_open(path, RTLD_NOW | RTLD_LOCAL);
        }
    }
    munmap((void *)m, size);
    return h;
}

/* A libcuda.so* already loaded (by path, RTLD_LOCAL, by someone else): the drop-in's
   first candidate, so that a driver a program dlopens later is found on the next try. */
struct rl_loaded_q {
    uintptr_t self;
    char path[PATH_MAX];
};

static int rl_loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct rl_loaded_q *q = data;
    (void)size;
    if (info->dlpi_name == NULL || info->dlpi_addr == q->self ||
        strncmp(rl_basename(info->dlpi_name), "libcuda.so", 10) != 0 || strchr(info->dlpi_name, '/') == NULL ||
        strlen(info->dlpi_name) >= sizeof q->path)
        return 0;
    strcpy(q->path, info->dlpi_name);
    return 1;
}

static void *rl_search_driver(void)
{
    char self_dir[PATH_MAX] = "";
    Dl_info di;
    if (dladdr((void *)&rl_search_driver, &di) != 0 && di.dli_fname != NULL &&
        realpath(di.dli_fname, self_dir) != NULL) {
        char *s = strrchr(self_dir, '/');
        if (s != NULL)
            *s = '\0';
    }
    void *h = NULL;
    struct rl_loaded_q lq = { rl_self_base(), "" };
    dl_iterate_phdr(rl_loaded_cb, &lq);
    if (lq.path[0] != '\0')
        h = rl_try_open(lq.path, RTLD_NOW | RTLD_NOLOAD);
    const char *llp = getenv("LD_LIBRARY_PATH");
    while (h == NULL && llp != NULL && *llp != '\0') {
        const char *end = strchr(llp, ':');
        size_t len = end ? (size_t)(end - llp) : strlen(llp);
        h = rl_try_dir(llp, len, self_dir);
        llp = end ? end + 1 : NULL;
    }
    if (h == NULL)
        h = rl_try_ldcache(self_dir);
    static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64",
                                        "/usr/lib", "/lib", "/usr/lib/wsl/lib" };
    for (size_t i = 0; h == NULL && i < sizeof dirs / sizeof dirs[0]; i++)
        h = rl_try_dir(dirs[i], strlen(dirs[i]), self_dir);
    return h;
}

static void *rl_open_driver(void)
{
    const rt_config *c = cfg_get();
    void *h = NULL;
    if (rl_is_dropin()) {
        if (c->real_libcuda != NULL)
            h = rl_try_open(c->real_libcuda, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL)
            h = rl_search_driver();
    } else {
        h = rl_try_open("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h == NULL && c->real_libcuda != NULL)
            h = rl_try_open(c->real_libcuda, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL)
            h = rl_try_open("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    return h;
}

static int rl_adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
        *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

/* How many objects were ever loaded into the process (glibc's dlpi_adds). */
static unsigned long long rl_loaded_adds(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(rl_adds_cb, &adds);
    return adds;
}

/*
 * The real driver's handle, or NULL. Found once, kept (and pinned) for the rest of
 * the process. A failed search is repeated only after another object was loaded
 * (a program may dlopen libcuda later): a call without a driver costs one
 * dl_iterate_phdr step then, never a file-system search; resolved calls never come here.
 */
void *rl_driver_handle(void)
{
    void *h = atomic_load_explicit(&rl_driver_h, memory_order_acquire);
    if (RT_LIKELY(h != NULL))
        return h;
    unsigned long long failed = atomic_load_explicit(&rl_driver_fail_adds, memory_order_relaxed);
    if (failed != 0 && rl_loaded_adds() + 1 == failed)
        return NULL;
    h = rl_open_driver();
    if (h == NULL) {
        /* Read after the search: its own rejected candidates (dlopen + dlclose) count as loads. */
        atomic_store_explicit(&rl_driver_fail_adds, rl_loaded_adds() + 1, memory_order_relaxed);
        if (atomic_exchange(&rl_driver_missing_logged, 1) == 0)
            log_warn("no real libcuda.so.1 found (set CUSHIM_REAL_LIBCUDA to its path); driver calls "
                     "return CUDA_ERROR_NOT_FOUND until one is loaded");
        return atomic_load_explicit(&rl_driver_h, memory_order_acquire);
    }
    uintptr_t base;
    void *init = rl_dlsym(h, "cuInit");
    if (init != NULL && rl_object_of(init, &base, NULL, 0))
        atomic_store_explicit(&rl_driver_base, base + 1, memory_order_relaxed);
    rl_pin(init);
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&rl_driver_h, &expected, h)) {
        dlclose(h);   /* another thread won; same library, one more reference dropped */
        h = expected;
    } else if (failed != 0) {
        log_info("real driver found after an earlier search failed");
    }
    return h;
}

/* Another copy of cushim (a preload and a drop-in, two drop-ins): it exports cushim_api_id_limit. */
static int rl_is_cushim_object(uintptr_t base)
{
    return elf_object_defines(base, "cushim_api_id_limit");
}

/*
 * The next layer's 'name' for a stack of interposers: the next definition after
 * the shim in the global scope (glibc's RTLD_NEXT from the shim), when it belongs
 * to another interposer - not the driver, not a libcudart, not another copy of
 * cushim. NULL otherwise (then the driver's function is the real one). Never
 * loads anything. Preload mode only: the drop-in is libcuda, loaded after every
 * preloaded interposer.
 */
void *rl_next_layer(const char *name)
{
    if (rl_is_dropin())
        return NULL;
    void *n = rl_dlsym_next(name);
    uintptr_t base;
    char obj[PATH_MAX];
    if (n == NULL || !rl_object_of(n, &base, obj, sizeof obj) || base == rl_self_base())
        return NULL;
    const char *b = rl_basename(obj);
    if (base + 1 == atomic_load_explicit(&rl_driver_base, memory_order_relaxed) ||
        strncmp(b, "libcuda.so", 10) == 0 || strncmp(b, "libcudart.so", 12) == 0 || rl_is_cushim_object(base))
        return NULL;
    return n;
}

/*
 * The layer before us for 'name': the first definition in the global scope (glibc's
 * RTLD_DEFAULT from the shim), when it belongs to an object loaded before the shim
 * that is not the program itself (an LD_PRELOAD entry ahead of us), not the driver or
 * a libcudart, not another copy of cushim. NULL otherwise.
 */
void *rl_prev_layer(const char *name)
{
    void *f = rl_dlsym(RTLD_DEFAULT, name);
    uintptr_t base;
    char obj[PATH_MAX];
    if (f == NULL || !rl_object_of(f, &base, obj, sizeof obj) || obj[0] == '\0' || base == rl_self_base() ||
        !elf_loaded_after(rl_self_base(), base))
        return NULL;
    const char *b = rl_basename(obj);
    if (base + 1 == atomic_load_explicit(&rl_driver_base, memory_order_relaxed) ||
        strncmp(b, "libcuda.so", 10) == 0 || strncmp(b, "libcudart.so", 12) == 0 || rl_is_cushim_object(base))
        return NULL;
    return f;
}

/* The real function of driver API 'name': the next layer's, else the driver's. Pinned. */
void *rl_driver_real(const char *name)
{
    void *r = rl_next_layer(name);
    if (r != NULL) {
        log_debug("%s: the next layer's function is the real one", name);
    } else {
        void *h = rl_driver_handle();
        r = h ? rl_dlsym(h, name) : NULL;
    }
    rl_pin(r);
    return r;
}

/*
 * Copies of one library (docs/runtime.md, "Several loaded copies of one library").
 *
 * A library whose exports carry a version node (lb_symver: libcudart.so.13,
 * libcublas.so.13) is forwarded to the copy whose soname is that node: "our"
 * copy. A copy of another major is never a wrapper's real function while ours
 * is loaded: its callers' references (cudaMalloc@libcudart.so.12) bind past
 * the shim, dlsym on its handle hands out its own functions. A library
 * without versions (NVML, NCCL) has no such distinction: its first copy found
 * is ours. Several copies loaded at once are reported once per library.
 */
int rl_is_our_copy(const lb_library *lib, const void *fn)
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

#define RL_COPIES_MAX 8
struct rl_copies_q {
    const lb_library *lib;
    int n;
    uintptr_t base[RL_COPIES_MAX];
    char name[RL_COPIES_MAX][160];
};

static int rl_copies_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct rl_copies_q *q = data;
    char name[PATH_MAX];
    (void)size;
    if (q->n >= RL_COPIES_MAX || info->dlpi_addr == rl_self_base())
        return 0;
    rl_object_name(name, sizeof name, info->dlpi_name);
    if (name[0] == '\0' || !rl_lib_matches(q->lib, name))
        return 0;
    q->base[q->n] = info->dlpi_addr;
    size_t n = strlen(name);   /* a name too long for the report keeps its end (the file name) */
    const char *from = n < sizeof q->name[q->n] ? name : name + n - (sizeof q->name[q->n] - 1);
    memcpy(q->name[q->n], from, (size_t)(name + n - from) + 1);
    q->n++;
    return 0;
}

/* The first loaded function of one of the library's exports in the object at 'base': an address inside it. */
static const void *rl_addr_in(uintptr_t base)
{
    void *addr = NULL;
    return elf_object_symbol(base, 0, &addr) != NULL ? addr : NULL;
}

static _Atomic unsigned long long rl_copies_adds[32];   /* dlpi_adds at the last scan + 1, per library */
static _Atomic int rl_copies_warned[32], rl_foreign_warned[32];

/* Look at the loaded copies of 'lib' again when objects were loaded since the last look; warn once
   when there are several, and once when the only one is of another major than this build's (its callers'
   calls of the library never reach the shim: nothing else would tell). Cheap when nothing was loaded (one
   dl_iterate_phdr step). */
void rl_scan_copies(const lb_library *lib)
{
    if (lib == NULL || lib->value < 0 || lib->value >= 32 || lib->value == CUSHIM_LIB_DRIVER)
        return;
    unsigned long long adds = rl_loaded_adds() + 1;
    if (atomic_exchange(&rl_copies_adds[lib->value], adds) == adds)
        return;
    struct rl_copies_q q;
    memset(&q, 0, sizeof q);
    q.lib = lib;
    dl_iterate_phdr(rl_copies_cb, &q);
    if (q.n == 1 && lb_symver(lib->value) != NULL) {
        const void *a = rl_addr_in(q.base[0]);
        char so[128] = "?";
        if (a != NULL && !rl_is_our_copy(lib, a) && !atomic_exchange(&rl_foreign_warned[lib->value], 1)) {
            elf_object_soname(a, so, sizeof so);
            log_warn("%s (soname %s) is the loaded %s library, of another major than this build's (%s): its callers "
                     "bind to it past the shim, so their %s calls are not observed (the driver calls it makes are). "
                     "A shim built from that release's tree observes them (README, \"Building for another CUDA "
                     "release\")", q.name[0], so, lib->name, lb_symver(lib->value), lib->name);
        }
    }
    if (q.n < 2 || atomic_exchange(&rl_copies_warned[lib->value], 1))
        return;
    char list[1024];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < q.n && used < sizeof list; i++) {
        char so[128] = "?";
        const void *a = rl_addr_in(q.base[i]);
        if (a != NULL)
            elf_object_soname(a, so, sizeof so);
        int ours = a != NULL && rl_is_our_copy(lib, a);
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
void rl_scan_copies_versioned(void)
{
    for (unsigned i = 0; i < lb_nlibraries; i++)   /* those interposed (CUSHIM_LIBS): the others are not observed anyway */
        if (lb_symver(lb_libraries[i].value) != NULL && lb_chosen(lb_libraries[i].value))
            rl_scan_copies(&lb_libraries[i]);
}

/* noinline + not a tail call: glibc must see a return address inside the shim. */
__attribute__((noinline)) static void *rl_dlvsym_next(const char *name, const char *version)
{
    rl_dlvsym_fn f = rl_real_dlvsym();
    if (f == NULL)
        return NULL;
    void *r = f(RTLD_NEXT, name, version);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}

/* A loaded object whose file name begins with one of 'lib's sonames. */
static int rl_lib_matches(const lb_library *lib, const char *path)
{
    const char *b = rl_basename(path);
    for (const char *const *s = lib->sonames; *s != NULL; s++)
        if (strncmp(b, *s, strlen(*s)) == 0)
            return 1;
    return 0;
}

/* 'name' in the loaded copy at 'path': through a NOLOAD handle (one reference, dropped again;
   rl_pin keeps what we use). Never ours. */
static void *rl_sym_in(const char *path, const char *name)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *r = rl_dlsym(h, name);
    dlclose(h);
    return r != NULL && rl_classify(r) == RL_SELF ? NULL : r;
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
void *rl_library_real(const lb_library *lib, const char *name)
{
    const char *node = lb_symver(lib->value);
    rl_scan_copies(lib);
    void *r = NULL, *other = NULL;
    if (node != NULL) {
        r = rl_dlvsym_next(name, node);
        if (r != NULL && (rl_classify(r) == RL_SELF || !rl_is_our_copy(lib, r)))
            r = NULL;
    }
    if (r == NULL) {
        r = rl_dlsym_next(name);
        if (r != NULL && rl_classify(r) == RL_SELF)
            r = NULL;
        if (r != NULL && node != NULL && !rl_is_our_copy(lib, r))
            other = r, r = NULL;
    }
    if (r == NULL) {
        struct rl_copies_q q;
        memset(&q, 0, sizeof q);
        q.lib = lib;
        dl_iterate_phdr(rl_copies_cb, &q);
        for (int i = 0; i < q.n && r == NULL; i++) {
            void *f = rl_sym_in(q.name[i], name);
            if (f == NULL)
                continue;
            if (rl_is_our_copy(lib, f))
                r = f;
            else if (other == NULL)
                other = f;
        }
    }
    if (r == NULL)
        r = other;
    rl_pin(r);
    return r;
}
