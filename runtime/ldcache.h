/*
 * ldcache.h - the dynamic linker's cache, /etc/ld.so.cache (ldcache.c).
 */
#ifndef RT_LDCACHE_H
#define RT_LDCACHE_H

/* Calls fn(path, arg) for each path the cache lists for 'soname', in the cache's order, until fn returns
   non-zero; returns that value, or 0 (also when there is no cache, or it is of another format). */
int ldc_each(const char *soname, int (*fn)(const char *path, void *arg), void *arg);

#endif /* RT_LDCACHE_H */
