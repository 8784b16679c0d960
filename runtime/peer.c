/*
 * peer.c - is another copy of cushim loaded before this one?
 *
 * Two copies in one process (LD_PRELOAD=/a/libcushim.so:/b/libcushim.so, an
 * installed copy and a build tree's, libcushim.so preloaded plus the drop-in
 * libcuda.so.1) would each count and hook, and split the counts between two
 * files. Every copy exports cushim_api_id_limit; the copy that finds an object
 * exporting it earlier in link-map order (the order dl_iterate_phdr reports,
 * the dynamic linker's search order for the initial objects) than itself stays
 * out of the way (config.c turns it into CUSHIM_DISABLE with reason "peer").
 * The first copy never sees a peer before itself, so exactly one stays active
 * whatever order the copies initialise in.
 *
 * Runs from config.c, which may be reached from a dlsym made by another
 * library's constructor before ours: the symbol tables are read directly (GNU
 * or SysV hash, as ld.so does), no dlsym (it would be our own override), no
 * allocation. elfsym.c does the same for glibc's dlsym, by linear scan; here
 * hash look-ups, because every earlier object is searched (hundreds in a
 * Python process that dlopens the drop-in late).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>

#include "peer.h"

#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN 0x8000
#endif

static const char peer_symbol[] = "cushim_api_id_limit";

/* glibc relocates d_ptr in place for most objects, not all (vdso). */
static uintptr_t peer_ptr(uintptr_t base, ElfW(Addr) p)
{
    return (p < base) ? base + p : p;
}

static uint32_t peer_gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s != '\0'; s++)
        h = h * 33 + (uint8_t)*s;
    return h;
}

static uint32_t peer_sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s != '\0'; s++) {
        h = (h << 4) + (uint8_t)*s;
        uint32_t g = h & 0xf0000000u;
        if (g != 0)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

struct peer_tables {
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *hash, *gnu_hash;
    const ElfW(Half) *versym;
};

/* Symbol i defines 'name' (global or weak, not a hidden version). */
static int peer_defines(const struct peer_tables *t, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &t->symtab[i];
    int bind = ELF64_ST_BIND(s->st_info);
    return s->st_shndx != SHN_UNDEF && s->st_name != 0 && (bind == STB_GLOBAL || bind == STB_WEAK) &&
           (t->versym == NULL || (t->versym[i] & VERSYM_HIDDEN) == 0) &&
           strcmp(t->strtab + s->st_name, name) == 0;
}

static int peer_gnu_lookup(const struct peer_tables *t, const char *name)
{
    const uint32_t *gh = t->gnu_hash;
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], shift = gh[3];
    if (nbuckets == 0 || bloom_size == 0)
        return 0;
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)&gh[4];
    const uint32_t *buckets = (const uint32_t *)(const void *)&bloom[bloom_size];
    const uint32_t *chain = &buckets[nbuckets];
    const uint32_t bits = sizeof(ElfW(Addr)) * 8;
    uint32_t h = peer_gnu_hash(name);
    ElfW(Addr) word = bloom[(h / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
    if ((word & mask) != mask)
        return 0;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return 0;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        if ((h | 1) == (h2 | 1) && peer_defines(t, i, name))
            return 1;
        if (h2 & 1)
            return 0;
    }
}

static int peer_sysv_lookup(const struct peer_tables *t, const char *name)
{
    uint32_t nbucket = t->hash[0], nchain = t->hash[1];
    if (nbucket == 0)
        return 0;
    const uint32_t *bucket = &t->hash[2], *chain = &bucket[nbucket];
    uint32_t steps = 0;
    for (uint32_t i = bucket[peer_sysv_hash(name) % nbucket]; i != 0 && i < nchain && steps < nchain;
         i = chain[i], steps++)
        if (peer_defines(t, i, name))
            return 1;
    return 0;
}

static int peer_exports(const struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (dyn == NULL)
        return 0;
    uintptr_t base = info->dlpi_addr;
    struct peer_tables t = { 0 };
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: t.symtab = (const ElfW(Sym) *)peer_ptr(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: t.strtab = (const char *)peer_ptr(base, dyn->d_un.d_ptr); break;
        case DT_HASH: t.hash = (const uint32_t *)peer_ptr(base, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: t.gnu_hash = (const uint32_t *)peer_ptr(base, dyn->d_un.d_ptr); break;
        case DT_VERSYM: t.versym = (const ElfW(Half) *)peer_ptr(base, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    if (t.symtab == NULL || t.strtab == NULL)
        return 0;
    if (t.gnu_hash != NULL)
        return peer_gnu_lookup(&t, name);
    if (t.hash != NULL)
        return peer_sysv_lookup(&t, name);
    return 0;
}

static int peer_contains(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

struct peer_q {
    uintptr_t self_addr;
    char *peer, *self;
    size_t cap;
    int found;
};

static void peer_copy(char *dst, size_t cap, const char *name)
{
    if (cap == 0)
        return;
    const char *n = (name != NULL && name[0] != '\0') ? name : "the executable";
    size_t len = strnlen(n, cap - 1);
    memcpy(dst, n, len);
    dst[len] = '\0';
}

static int peer_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct peer_q *q = data;
    (void)size;
    if (peer_contains(info, q->self_addr)) {
        peer_copy(q->self, q->cap, info->dlpi_name);
        return 1;   /* reached ourselves: what follows is loaded after us */
    }
    if (!q->found && peer_exports(info, peer_symbol)) {
        peer_copy(q->peer, q->cap, info->dlpi_name);
        q->found = 1;   /* walk on to our own entry, for its name */
    }
    return 0;
}

int peer_find(char *peer, char *self, size_t cap)
{
    struct peer_q q = { (uintptr_t)&peer_find, peer, self, cap, 0 };
    if (cap > 0)
        peer[0] = self[0] = '\0';
    dl_iterate_phdr(peer_cb, &q);
    return q.found;
}
