/*
 * driver.c - the real libcuda.
 *
 * Preload mode (libcushim.so) takes the libcuda.so.1 already loaded, else
 * CUSHIM_REAL_LIBCUDA, else dlopen("libcuda.so.1"). Drop-in mode (these objects
 * linked as libcuda.so.1) never opens by soname - that would be itself - but
 * by path: a libcuda.so* already loaded, CUSHIM_REAL_LIBCUDA, LD_LIBRARY_PATH
 * entries other than its own directory, /etc/ld.so.cache entries (ldcache.c),
 * standard directories; any candidate whose cuInit turns out to be ours is
 * rejected. Lazy (first CUDA call or look-up) and lock-free: racing searches
 * find the same library, a losing dlopen is undone. The driver found is pinned
 * (objects.c), and its address handed to objects.c for classification.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "config.h"
#include "driver.h"
#include "elfsym.h"
#include "ldcache.h"
#include "log.h"
#include "objects.h"
#include "realdl.h"
#include "cushim/cushim_io.h"

static _Atomic(void *) drv_h;                 /* handle, NULL until found */
/* dlpi_adds (objects ever loaded) after the last failed search, + 1; 0: none failed.
   The search is repeated only when this changed: a later dlopen may bring libcuda in. */
static _Atomic unsigned long long drv_fail_adds;
static _Atomic int drv_missing_logged;

/* 'path' is a regular file (opened without blocking, then closed): dlopen of a FIFO - CUSHIM_REAL_LIBCUDA, a
   libcuda.so.1 in a searched directory - would wait for a writer forever. Said once (the search may be repeated).
   Left: the file replaced between this look and dlopen (loader.c says why the descriptor is not dlopened). */
static int drv_regular_file(const char *path)
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
static void *drv_try_open(const char *path, int flags)
{
    if (!(flags & RTLD_NOLOAD) && strchr(path, '/') != NULL && !drv_regular_file(path))
        return NULL;
    void *h = dlopen(path, flags);
    if (h == NULL)
        return NULL;
    void *init = rd_dlsym(h, "cuInit");
    if (init == NULL || ob_classify(init) == OB_SELF ||
        (ob_is_dropin() && rd_dlsym(h, "cushim_api_id_limit") != NULL)) {
        log_debug("%s is not the real driver (cuInit %s)", path,
                  init == NULL ? "missing" : ob_classify(init) == OB_SELF ? "is ours" : "is cushim's");
        dlclose(h);
        return NULL;
    }
    log_info("real driver: %s", path);
    return h;
}

static int drv_same_dir(const char *dir, const char *self_dir)
{
    char a[PATH_MAX];
    if (self_dir[0] == '\0' || realpath(dir, a) == NULL)
        return 0;
    return strcmp(a, self_dir) == 0;
}

static void *drv_try_dir(const char *dir, size_t len, const char *self_dir)
{
    char path[PATH_MAX], d[PATH_MAX];
    if (len == 0 || len + sizeof "/libcuda.so.1" >= sizeof path)
        return NULL;
    memcpy(d, dir, len);
    d[len] = '\0';
    if (drv_same_dir(d, self_dir))
        return NULL;
    memcpy(path, d, len);
    strcpy(path + len, "/libcuda.so.1");
    if (access(path, R_OK) != 0)
        return NULL;
    return drv_try_open(path, RTLD_NOW | RTLD_LOCAL);
}

struct drv_cache_q {
    const char *self_dir;
    void *h;
};

/* An /etc/ld.so.cache entry for libcuda.so.1, unless in our own directory. */
static int drv_try_cached(const char *path, void *arg)
{
    struct drv_cache_q *q = arg;
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    size_t dl = slash != NULL ? (size_t)(slash - path) : 0;
    if (slash == NULL || dl >= sizeof dir)
        return 0;
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    if (drv_same_dir(dir, q->self_dir))
        return 0;
    q->h = drv_try_open(path, RTLD_NOW | RTLD_LOCAL);
    return q->h != NULL;
}

/* A libcuda.so* already loaded (by path, RTLD_LOCAL, by someone else): the drop-in's
   first candidate, so that a driver a program dlopens later is found on the next try. */
struct drv_loaded_q {
    uintptr_t self;
    char path[PATH_MAX];
};

static int drv_loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct drv_loaded_q *q = data;
    (void)size;
    if (info->dlpi_name == NULL || info->dlpi_addr == q->self ||
        strncmp(ob_basename(info->dlpi_name), "libcuda.so", 10) != 0 || strchr(info->dlpi_name, '/') == NULL ||
        strlen(info->dlpi_name) >= sizeof q->path)
        return 0;
    strcpy(q->path, info->dlpi_name);
    return 1;
}

static void *drv_search(void)
{
    char self_dir[PATH_MAX] = "";
    Dl_info di;
    if (dladdr((void *)&drv_search, &di) != 0 && di.dli_fname != NULL &&
        realpath(di.dli_fname, self_dir) != NULL) {
        char *s = strrchr(self_dir, '/');
        if (s != NULL)
            *s = '\0';
    }
    void *h = NULL;
    struct drv_loaded_q lq = { ob_self_base(), "" };
    dl_iterate_phdr(drv_loaded_cb, &lq);
    if (lq.path[0] != '\0')
        h = drv_try_open(lq.path, RTLD_NOW | RTLD_NOLOAD);
    const char *llp = getenv("LD_LIBRARY_PATH");
    while (h == NULL && llp != NULL && *llp != '\0') {
        const char *end = strchr(llp, ':');
        size_t len = end ? (size_t)(end - llp) : strlen(llp);
        h = drv_try_dir(llp, len, self_dir);
        llp = end ? end + 1 : NULL;
    }
    if (h == NULL) {
        struct drv_cache_q cq = { self_dir, NULL };
        ldc_each("libcuda.so.1", drv_try_cached, &cq);
        h = cq.h;
    }
    static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64",
                                        "/usr/lib", "/lib", "/usr/lib/wsl/lib" };
    for (size_t i = 0; h == NULL && i < sizeof dirs / sizeof dirs[0]; i++)
        h = drv_try_dir(dirs[i], strlen(dirs[i]), self_dir);
    return h;
}

static void *drv_open(void)
{
    const rt_config *c = cfg_get();
    void *h = NULL;
    /* 'none': this process has no driver and must not load one (the remoting's client, `cushim run --remote`:
       a search by name would find the drop-in on the library path and take that copy for the driver) */
    if (c->no_driver)
        return NULL;
    if (ob_is_dropin()) {
        if (c->real_libcuda != NULL)
            h = drv_try_open(c->real_libcuda, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL)
            h = drv_search();
    } else {
        h = drv_try_open("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h == NULL && c->real_libcuda != NULL)
            h = drv_try_open(c->real_libcuda, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL)
            h = drv_try_open("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    return h;
}

/*
 * The real driver's handle, or NULL. Found once, kept (and pinned) for the rest of
 * the process. A failed search is repeated only after another object was loaded
 * (a program may dlopen libcuda later): a call without a driver costs one
 * dl_iterate_phdr step then, never a file-system search; resolved calls never come here.
 */
void *drv_handle(void)
{
    void *h = atomic_load_explicit(&drv_h, memory_order_acquire);
    if (RT_LIKELY(h != NULL))
        return h;
    unsigned long long failed = atomic_load_explicit(&drv_fail_adds, memory_order_relaxed);
    if (failed != 0 && ob_loaded_adds() + 1 == failed)
        return NULL;
    h = drv_open();
    if (h == NULL) {
        /* Read after the search: its own rejected candidates (dlopen + dlclose) count as loads. */
        atomic_store_explicit(&drv_fail_adds, ob_loaded_adds() + 1, memory_order_relaxed);
        if (atomic_exchange(&drv_missing_logged, 1) == 0)
            log_warn("no real libcuda.so.1 found (set CUSHIM_REAL_LIBCUDA to its path); driver calls "
                     "return CUDA_ERROR_NOT_FOUND until one is loaded");
        return atomic_load_explicit(&drv_h, memory_order_acquire);
    }
    uintptr_t base;
    void *init = rd_dlsym(h, "cuInit");
    if (init != NULL && elf_object_of(init, &base, NULL, 0))
        ob_set_driver(base);
    ob_pin(init);
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&drv_h, &expected, h)) {
        dlclose(h);   /* another thread won; same library, one more reference dropped */
        h = expected;
    } else if (failed != 0) {
        log_info("real driver found after an earlier search failed");
    }
    return h;
}

