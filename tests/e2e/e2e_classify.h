/*
 * e2e_classify.h - say where a symbol address lives, in words that do not change between runs.
 *
 * "NULL", "fake:<symbol>" (the fake driver or runtime), "shim:<symbol>"
 * (libcushim.so or the drop-in libcuda.so.1), "libc:<symbol>", or
 * "other:<file without .so...>:<symbol>". Runs without and with the shim are compared by
 * mapping fake: to shim: (run_compare.sh): the shim must answer exactly as
 * the driver would, with its own wrapper of the same name in place of the
 * driver's function.
 */
#ifndef E2E_CLASSIFY_H
#define E2E_CLASSIFY_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include (dladdr)"
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static inline const char *e2e_classify(const void *p, char *buf, size_t len)
{
    Dl_info di;
    if (p == NULL)
        return "NULL";
    if (dladdr(p, &di) == 0 || di.dli_fname == NULL) {
        snprintf(buf, len, "unknown");
        return buf;
    }
    const char *file = strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname;
    const char *sym = di.dli_sname ? di.dli_sname : "?";
    /* A symbol that dladdr attributes to a different address is not the start of a function. */
    if (di.dli_saddr != p)
        sym = "?inside";
    if (strstr(di.dli_fname, "/tests/fake/") != NULL)
        snprintf(buf, len, "fake:%s", sym);
    else if (strstr(file, "libcushim") != NULL || strstr(di.dli_fname, "/dropin/") != NULL)
        snprintf(buf, len, "shim:%s", sym);
    else if (strncmp(file, "libc.so", 7) == 0)
        snprintf(buf, len, "libc:%s", sym);
    else   /* "libtsan.so.2" and "libtsan.so" (a preload by path) are the same object */
        snprintf(buf, len, "other:%.*s:%s", strstr(file, ".so") ? (int)(strstr(file, ".so") - file) : (int)strlen(file),
                 file, sym);
    return buf;
}

#endif /* E2E_CLASSIFY_H */
