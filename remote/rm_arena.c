/*
 * rm_arena.c - the server's bounded staging memory (rm_arena.h).
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "rm_arena.h"

#if defined(__SANITIZE_ADDRESS__)
#define RM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RM_ASAN 1
#endif
#endif
#ifdef RM_ASAN
#include <sanitizer/asan_interface.h>
#define RM_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define RM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define RM_REDZONE 32u
#else
#define RM_POISON(p, n) ((void)(p), (void)(n))
#define RM_UNPOISON(p, n) ((void)(p), (void)(n))
#define RM_REDZONE 0u
#endif

/* Pages above this many bytes touched are given back at reset: a large call does not pin its memory. */
#define RM_KEEP_BYTES (8u << 20)

int rm_arena_init(rm_arena *a, size_t max)
{
    memset(a, 0, sizeof *a);
    void *p = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    a->base = p;
    a->max = max;
    RM_POISON(a->base, a->max);
    return 0;
}

void rm_arena_destroy(rm_arena *a)
{
    if (a->base != NULL) {
        RM_UNPOISON(a->base, a->max);
        munmap(a->base, a->max);
    }
    memset(a, 0, sizeof *a);
}

void *rm_arena_alloc_raw(rm_arena *a, size_t n)
{
    size_t at = (a->used + 15u) & ~(size_t)15u;
    size_t need = n + RM_REDZONE;
    if (a->base == NULL || at > a->max || n > a->max - at || need < n || need > a->max - at)
        return NULL;
    unsigned char *p = a->base + at;
    a->used = at + need;
    if (a->used > a->high)
        a->high = a->used;
    RM_UNPOISON(p, n);
    return p;
}

void *rm_arena_alloc(rm_arena *a, size_t n)
{
    void *p = rm_arena_alloc_raw(a, n);
    if (p != NULL)
        memset(p, 0, n);
    return p;
}

void rm_arena_reset(rm_arena *a)
{
    if (a->base == NULL)
        return;
    RM_POISON(a->base, a->used);
    if (a->high > RM_KEEP_BYTES) {
        RM_UNPOISON(a->base + RM_KEEP_BYTES, a->high - RM_KEEP_BYTES);
        madvise(a->base + RM_KEEP_BYTES, a->high - RM_KEEP_BYTES, MADV_DONTNEED);
        RM_POISON(a->base + RM_KEEP_BYTES, a->high - RM_KEEP_BYTES);
        a->high = RM_KEEP_BYTES;
    }
    a->used = 0;
}
