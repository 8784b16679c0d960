/*
 * rt_lib_ctor.c - test libraries whose constructors and destructors probe CUDA
 * names with dlsym (built twice: RT_CTOR_NAME "x" depends on "y"). They run
 * with the loader lock held (dlopen/dlclose), where the shim's dlsym override
 * itself calls dlopen(RTLD_NOLOAD)/dlclose and dl_iterate_phdr. A wrong answer
 * exits the process with status 3 (rt_ctor_dlsym_test fails; a deadlock times out).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static void rt_ctor_check(const char *who, const char *how, void *p)
{
    const char *e = dlerror();
    /* as from glibc: NULL comes with a message, a symbol with none */
    if ((p == NULL) != (e != NULL)) {
        fprintf(stderr, "%s %s: %p, dlerror %s\n", who, how, p, e ? e : "(none)");
        _exit(3);
    }
}

static void rt_ctor_probe(const char *who)
{
    (void)dlerror();
    rt_ctor_check(who, "RTLD_DEFAULT cuInit", dlsym(RTLD_DEFAULT, "cuInit"));
    rt_ctor_check(who, "RTLD_NEXT cuInit", dlsym(RTLD_NEXT, "cuInit"));
    rt_ctor_check(who, "RTLD_DEFAULT cudaMalloc", dlsym(RTLD_DEFAULT, "cudaMalloc"));
    rt_ctor_check(who, "dlvsym RTLD_DEFAULT cuInit", dlvsym(RTLD_DEFAULT, "cuInit", "GLIBC_2.2.5"));
}

__attribute__((constructor)) static void rt_ctor_init(void)
{
    rt_ctor_probe(RT_CTOR_NAME " constructor");
}

__attribute__((destructor)) static void rt_ctor_fini(void)
{
    rt_ctor_probe(RT_CTOR_NAME " destructor");
}

#ifdef RT_CTOR_DEP
void rt_ctor_dep(void);
#endif

__attribute__((visibility("default"))) void RT_CTOR_FN(void)
{
#ifdef RT_CTOR_DEP
    rt_ctor_dep();
#endif
}
