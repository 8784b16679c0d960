/*
 * rt_secure_prog.c - run setuid by rt_secure_test.sh: makes driver calls through
 * libcushim.so (linked, absolute RUNPATH: secure-execution mode ignores
 * LD_PRELOAD paths) and fails if the library named by RT_FORBIDDEN_LIB - the
 * test's CUSHIM_REAL_LIBCUDA - was loaded. Exits 77 when the kernel did not put
 * it in secure-execution mode (a nosuid filesystem ignores the set-user-ID bit).
 * Without --expect-secure it is the control run: the library must be loaded.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);

static int loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    return info->dlpi_name != NULL && strcmp(info->dlpi_name, (const char *)data) == 0;
}

int main(int argc, char **argv)
{
    int expect_secure = argc > 1 && strcmp(argv[1], "--expect-secure") == 0;
    unsigned long secure = getauxval(AT_SECURE);
    if (expect_secure && !secure) {
        printf("rt_secure_prog: AT_SECURE is 0 although it runs set-user-ID (ruid %d, euid %d): the filesystem "
               "holding it ignores the set-user-ID bit (mounted nosuid)\n", (int)getuid(), (int)geteuid());
        return 77;
    }
    if (!expect_secure && secure) {
        printf("rt_secure_prog: control run is in secure-execution mode\n");
        return 1;
    }
    int v = 0;
    cuInit(0);
    cuDriverGetVersion(&v);
    cuDriverGetVersion(&v);
    const char *lib = getenv("RT_FORBIDDEN_LIB");
    int loaded = lib != NULL && dl_iterate_phdr(loaded_cb, (void *)lib) != 0;
    if (expect_secure && loaded) {
        printf("rt_secure_prog: %s (CUSHIM_REAL_LIBCUDA) was loaded in secure-execution mode\n", lib);
        return 1;
    }
    if (!expect_secure && !loaded) {
        printf("rt_secure_prog: control run: %s (CUSHIM_REAL_LIBCUDA) was not loaded\n", lib ? lib : "(unset)");
        return 1;
    }
    printf("rt_secure_prog: AT_SECURE=%lu ruid %d euid %d, %s %s\n", secure, (int)getuid(), (int)geteuid(),
           lib ? lib : "(unset)", loaded ? "loaded" : "not loaded");
    return 0;
}
