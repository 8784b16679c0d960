/*
 * realdl.c - glibc's own dlsym and dlvsym, called from inside the shim.
 *
 * They are found in libc.so.6's own symbol table (elfsym.c), never through the
 * dynamic linker: inside the shim a call to 'dlsym' would bind to our override.
 * Each call here is made from a function of the shim that is neither inlined
 * nor a tail call, so that glibc sees a return address inside the shim: an
 * RTLD_NEXT look-up means "after the shim".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

#include "base.h"
#include "elfsym.h"
#include "log.h"
#include "realdl.h"

static _Atomic int rd_missing_logged;

elf_dlsym_fn rd_real_dlsym(void)
{
    elf_dlsym_fn f = elf_real_dlsym();
    if (RT_UNLIKELY(f == NULL) && !atomic_exchange(&rd_missing_logged, 1))
        log_error("glibc's dlsym not found in libc.so.6 or libdl.so.2; dlsym look-ups fail");
    return f;
}

elf_dlvsym_fn rd_real_dlvsym(void)
{
    return elf_real_dlvsym();
}

/* noinline + not a tail call: glibc must see a return address inside the shim. */
__attribute__((noinline)) void *rd_dlsym(void *handle, const char *name)
{
    elf_dlsym_fn f = rd_real_dlsym();
    if (f == NULL)
        return NULL;
    void *r = f(handle, name);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}

__attribute__((noinline)) void *rd_dlsym_next(const char *name)
{
    elf_dlsym_fn f = rd_real_dlsym();
    if (f == NULL)
        return NULL;
    void *r = f(RTLD_NEXT, name);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}

__attribute__((noinline)) void *rd_dlvsym_next(const char *name, const char *version)
{
    elf_dlvsym_fn f = rd_real_dlvsym();
    if (f == NULL)
        return NULL;
    void *r = f(RTLD_NEXT, name, version);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}
