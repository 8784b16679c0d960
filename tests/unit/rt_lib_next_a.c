/*
 * rt_lib_next_a.c - test library: defines rt_next_probe (1) and asks
 * dlsym(RTLD_NEXT, ...) from its own position (RTLD_NEXT must mean "after A").
 */
#define _GNU_SOURCE
#include <dlfcn.h>

__attribute__((visibility("default"))) int rt_next_probe(void)
{
    return 1;
}

__attribute__((visibility("default"))) void *rt_next_lookup(const char *name)
{
    void *r = dlsym(RTLD_NEXT, name);
    __asm__ volatile("" : : "r"(r) : "memory");   /* no tail call: the caller must be A */
    return r;
}

__attribute__((visibility("default"))) void *rt_next_vlookup(const char *name, const char *version)
{
    void *r = dlvsym(RTLD_NEXT, name, version);
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}
