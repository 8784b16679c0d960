/*
 * ldcache.c - the paths /etc/ld.so.cache lists for a soname, for the drop-in's
 * search of the real driver (driver.c).
 *
 * Format "glibc-ld.so.cache1.1", the only one glibc >= 2.32 writes: a header
 * (magic, the number of entries), then entries of 24 bytes whose key and value
 * are offsets of NUL-terminated strings from the header. Every offset is
 * checked against the mapping: a damaged or hostile cache is never read past
 * its end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldcache.h"

int ldc_each(const char *soname, int (*fn)(const char *path, void *arg), void *arg)
{
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int r = 0;
    if (fstat(fd, &st) != 0 || st.st_size < 48) {
        close(fd);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    static const char magic[] = "glibc-ld.so.cache1.1";
    const char *base = memmem(m, size < 4096 ? size : 4096, magic, sizeof magic - 1);
    if (base != NULL && (size_t)(base - m) + 48 <= size) {
        uint32_t nlibs;
        memcpy(&nlibs, base + 20, 4);
        const char *entries = base + 48;
        for (uint32_t i = 0; i < nlibs && r == 0; i++) {
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
            if (strcmp(base + key, soname) == 0)
                r = fn(base + value, arg);
        }
    }
    munmap((void *)m, size);
    return r;
}
