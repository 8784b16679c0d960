/*
 * elfsym.c - symbol look-up in the dynamic symbol tables of loaded objects.
 *
 * Used where asking the dynamic linker would call our own dlsym override or
 * would answer relative to the wrong object: finding glibc's real dlsym/dlvsym
 * (libc.so.6, or libdl.so.2 on glibc < 2.34) and emulating a caller's
 * RTLD_NEXT look-up. Reads only what ld.so mapped; no allocation.
 *
 * The real dlsym is needed before anything else is ready: sanitizer runtimes
 * call dlsym(RTLD_NEXT, ...) (our override, when the shim is preloaded) while
 * they initialise, before their interceptors work. So that path walks
 * _r_debug's link map with no libc call at all, and this file is compiled
 * without sanitizer instrumentation (runtime/CMakeLists.txt).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>

#include "rt_internal.h"

#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN 0x8000
#endif

/* glibc relocates d_ptr in place for most objects, not all (vdso, RO dynamic). */
static uintptr_t elf_ptr(uintptr_t base, ElfW(Addr) p)
{
    return (p < base) ? base + p : p;
}

static uint32_t elf_gnu_count(const uint32_t *gh)
{
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)&gh[4];
    const uint32_t *buckets = (const uint32_t *)(const void *)&bloom[bloom_size];
    const uint32_t *chain = &buckets[nbuckets];
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while ((chain[last - symoffset] & 1u) == 0)
        last++;
    return last + 1;
}

static int elf_streq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b)
        a++, b++;
    return *a == *b;
}

static const char *elf_basename(const char *path)
{
    const char *b = path;
    for (const char *s = path; *s != '\0'; s++)
        if (*s == '/')
            b = s + 1;
    return b;
}

/* Defined global/weak symbol 'name' of the object; default version only. */
static void *elf_lookup(uintptr_t base, const ElfW(Dyn) *dyn, const char *name)
{
    if (dyn == NULL)
        return NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *hash = NULL, *gnu_hash = NULL;
    const ElfW(Half) *versym = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_HASH: hash = (const uint32_t *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu_hash = (const uint32_t *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_VERSYM: versym = (const ElfW(Half) *)elf_ptr(base, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL)
        return NULL;
    uint32_t count = hash ? hash[1] : (gnu_hash ? elf_gnu_count(gnu_hash) : 0);
    for (uint32_t i = 1; i < count; i++) {
        const ElfW(Sym) *s = &symtab[i];
        if (s->st_shndx == SHN_UNDEF || s->st_name == 0)
            continue;
        int bind = ELF64_ST_BIND(s->st_info);
        if (bind != STB_GLOBAL && bind != STB_WEAK)
            continue;
        if (versym != NULL && (versym[i] & VERSYM_HIDDEN))
            continue;
        if (!elf_streq(strtab + s->st_name, name))
            continue;
        return (void *)(base + s->st_value);
    }
    return NULL;
}

void *elf_find_in_libc(const char *name)
{
    static const char *const sonames[] = { "libc.so.6", "libdl.so.2" };
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
        for (const struct link_map *lm = _r_debug.r_map; lm != NULL; lm = lm->l_next)
            if (lm->l_name != NULL && elf_streq(elf_basename(lm->l_name), sonames[i])) {
                void *r = elf_lookup(lm->l_addr, lm->l_ld, name);
                if (r != NULL)
                    return r;
            }
    return NULL;
}

static _Atomic(rl_dlsym_fn) elf_dlsym_p;
static _Atomic(rl_dlvsym_fn) elf_dlvsym_p;

rl_dlsym_fn elf_real_dlsym(void)
{
    rl_dlsym_fn f = atomic_load_explicit(&elf_dlsym_p, memory_order_acquire);
    if (RT_LIKELY(f != NULL))
        return f;
    f = (rl_dlsym_fn)elf_find_in_libc("dlsym");
    if (f != NULL)
        atomic_store_explicit(&elf_dlsym_p, f, memory_order_release);
    return f;
}

rl_dlvsym_fn elf_real_dlvsym(void)
{
    rl_dlvsym_fn f = atomic_load_explicit(&elf_dlvsym_p, memory_order_acquire);
    if (RT_LIKELY(f != NULL))
        return f;
    f = (rl_dlvsym_fn)elf_find_in_libc("dlvsym");
    if (f != NULL)
        atomic_store_explicit(&elf_dlvsym_p, f, memory_order_release);
    return f;
}

struct elf_next_q {
    uintptr_t after_addr;
    const char *after_name;
    uintptr_t skip_addr;
    const char *name;
    int seen;
    void *result;
};

static int elf_next_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct elf_next_q *q = data;
    (void)size;
    if (!q->seen) {
        const char *n = info->dlpi_name ? info->dlpi_name : "";
        if (info->dlpi_addr == q->after_addr && elf_streq(n, q->after_name))
            q->seen = 1;
        return 0;
    }
    if (info->dlpi_addr == q->skip_addr)
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    q->result = elf_lookup(info->dlpi_addr, dyn, q->name);
    return q->result != NULL;
}

void *elf_next_definer(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                       const char *name)
{
    struct elf_next_q q = { after_addr, after_name ? after_name : "", skip_addr, name, 0, NULL };
    dl_iterate_phdr(elf_next_cb, &q);
    return q.result;
}

struct elf_order_q {
    uintptr_t a, b;     /* load addresses */
    int ia, ib, i;
};

static int elf_order_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct elf_order_q *q = data;
    (void)size;
    if (q->ia < 0 && info->dlpi_addr == q->a)
        q->ia = q->i;
    if (q->ib < 0 && info->dlpi_addr == q->b)
        q->ib = q->i;
    q->i++;
    return q->ia >= 0 && q->ib >= 0;
}

int elf_loaded_after(uintptr_t a, uintptr_t b)
{
    struct elf_order_q q = { a, b, -1, -1, 0 };
    dl_iterate_phdr(elf_order_cb, &q);
    return q.ia >= 0 && q.ib >= 0 && q.ia > q.ib;
}
