/*
 * layers.c - stacking: the shim between other interposers of the driver API
 * (HAMi-core, a profiler's preload library...).
 *
 * The real function of a driver API is the next layer's - the next definition
 * after the shim in the global scope when that is another interposer (not the
 * driver, not a libcudart, not another copy of cushim) - else the driver's
 * (driver.c). A layer before us matters to dlsym.c: a handle look-up that went
 * past it is answered with its function, which leads to us.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

#include "driver.h"
#include "elfsym.h"
#include "layers.h"
#include "log.h"
#include "objects.h"
#include "realdl.h"

/* Not another interposer: the driver, a libcudart, or another copy of cushim (a preload and a drop-in, two
   drop-ins: it exports cushim_api_id_limit). */
static int ly_not_a_layer(uintptr_t base, const char *obj)
{
    const char *b = ob_basename(obj);
    return ob_is_driver(base) || strncmp(b, "libcuda.so", 10) == 0 || strncmp(b, "libcudart.so", 12) == 0 ||
           elf_object_defines(base, "cushim_api_id_limit");
}

/*
 * The next layer's 'name': the next definition after the shim in the global scope
 * (glibc's RTLD_NEXT from the shim), when it belongs to another interposer. NULL
 * otherwise (then the driver's function is the real one). Never loads anything.
 * Preload mode only: the drop-in is libcuda, loaded after every preloaded
 * interposer.
 */
void *ly_next(const char *name)
{
    if (ob_is_dropin())
        return NULL;
    void *n = rd_dlsym_next(name);
    uintptr_t base;
    char obj[PATH_MAX];
    if (n == NULL || !elf_object_of(n, &base, obj, sizeof obj) || base == ob_self_base() || ly_not_a_layer(base, obj))
        return NULL;
    return n;
}

/*
 * The layer before us for 'name': the first definition in the global scope (glibc's
 * RTLD_DEFAULT from the shim), when it belongs to an object loaded before the shim
 * that is not the program itself (an LD_PRELOAD entry ahead of us), not the driver or
 * a libcudart, not another copy of cushim. NULL otherwise.
 */
void *ly_prev(const char *name)
{
    void *f = rd_dlsym(RTLD_DEFAULT, name);
    uintptr_t base;
    char obj[PATH_MAX];
    if (f == NULL || !elf_object_of(f, &base, obj, sizeof obj) || obj[0] == '\0' || base == ob_self_base() ||
        !elf_loaded_after(ob_self_base(), base) || ly_not_a_layer(base, obj))
        return NULL;
    return f;
}

/* The real function of driver API 'name': the next layer's, else the driver's. Pinned. */
void *ly_driver_real(const char *name)
{
    void *r = ly_next(name);
    if (r != NULL) {
        log_debug("%s: the next layer's function is the real one", name);
    } else {
        void *h = drv_handle();
        r = h ? rd_dlsym(h, name) : NULL;
    }
    ob_pin(r);
    return r;
}
