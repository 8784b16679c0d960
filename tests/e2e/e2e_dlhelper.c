/*
 * e2e_dlhelper.c - a shared library that looks symbols up itself, for e2e_dlsym.
 *
 * dlsym(RTLD_NEXT, ...) answers relative to the calling object: called from
 * here, "next" means the objects loaded after this library, not after the
 * program and not after the shim that overrides dlsym.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

__attribute__((noinline)) void *dlhelper_next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

__attribute__((noinline)) void *dlhelper_default(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

__attribute__((noinline)) void *dlhelper_vnext(const char *name, const char *version)
{
    return dlvsym(RTLD_NEXT, name, version);
}
