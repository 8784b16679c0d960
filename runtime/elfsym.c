/*
 * elfsym.c - the loaded objects as ld.so mapped them: their dynamic symbol
 * tables, their load order, which object holds an address.
 *
 * Used where asking the dynamic linker would call our own dlsym override or
 * would answer relative to the wrong object: finding glibc's real dlsym/dlvsym
 * (libc.so.6, or libdl.so.2 on glibc < 2.34), the next dlsym/dlvsym in a chain
 * of interposers, emulating a caller's RTLD_NEXT look-up, checking the version
 * of a definition for dlvsym, and seeing another copy of cushim loaded before
 * this one (config.c). Reads only what ld.so mapped; no allocation.
 *
 * One symbol reader for all of them: a name is looked up through the object's
 * GNU hash table (or its SysV one), as ld.so does - every object before ours
 * is searched for the peer check, hundreds in a Python process that dlopens
 * the drop-in late - and an object's exports are listed in table order.
 *
 * The real dlsym is needed before anything else is ready: sanitizer runtimes
 * call dlsym(RTLD_NEXT, ...) (our override, when the shim is preloaded) while
 * they initialise, before their interceptors work. So that path walks
 * _r_debug's link map with no libc call at all, and this file is compiled
 * without sanitizer instrumentation (runtime/CMakeLists.txt).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <string.h>

#include "base.h"
#include "elfsym.h"

#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN 0x8000
#endif

/* glibc relocates d_ptr in place for most objects, not all (vdso, RO dynamic). */
static uintptr_t elf_ptr(uintptr_t base, ElfW(Addr) p)
{
    return (p < base) ? base + p : p;
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

/* ---- one object's dynamic symbol table ---- */

typedef struct elf_tabs {
    uintptr_t base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *hash, *gnu_hash;
    const ElfW(Half) *versym;
    const ElfW(Verdef) *verdef;
} elf_tabs;

static int elf_tables(uintptr_t base, const ElfW(Dyn) *dyn, elf_tabs *t)
{
    memset(t, 0, sizeof *t);
    t->base = base;
    if (dyn == NULL)
        return 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: t->symtab = (const ElfW(Sym) *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: t->strtab = (const char *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_HASH: t->hash = (const uint32_t *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: t->gnu_hash = (const uint32_t *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_VERSYM: t->versym = (const ElfW(Half) *)elf_ptr(base, dyn->d_un.d_ptr); break;
        case DT_VERDEF: t->verdef = (const ElfW(Verdef) *)elf_ptr(base, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    return t->symtab != NULL && t->strtab != NULL;
}

/* The number of symbols (the dynamic section does not say: from the hash tables). */
static uint32_t elf_count(const elf_tabs *t)
{
    if (t->hash != NULL)
        return t->hash[1];
    if (t->gnu_hash == NULL)
        return 0;
    const uint32_t *gh = t->gnu_hash;
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

/* Symbol i is a definition (global or weak) of 'name' at 'addr' (when addr != 0), of its default version
   unless 'any_version'. */
static int elf_defines(const elf_tabs *t, uint32_t i, const char *name, uintptr_t addr, int any_version)
{
    const ElfW(Sym) *s = &t->symtab[i];
    int bind = ELF64_ST_BIND(s->st_info);
    return s->st_shndx != SHN_UNDEF && s->st_name != 0 && (bind == STB_GLOBAL || bind == STB_WEAK) &&
           (any_version || t->versym == NULL || (t->versym[i] & VERSYM_HIDDEN) == 0) &&
           (addr == 0 || t->base + s->st_value == addr) && elf_streq(t->strtab + s->st_name, name);
}

static uint32_t elf_gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s != '\0'; s++)
        h = h * 33 + (uint8_t)*s;
    return h;
}

static uint32_t elf_sysv_hash(const char *s)
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

/* The index of a definition of 'name' (elf_defines), through the hash table as ld.so looks it up; 0 if
   none. Every version of a name hashes alike, so the chain holds them all. */
static uint32_t elf_index(const elf_tabs *t, const char *name, uintptr_t addr, int any_version)
{
    if (t->gnu_hash != NULL) {
        const uint32_t *gh = t->gnu_hash;
        uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], shift = gh[3];
        if (nbuckets == 0 || bloom_size == 0)
            return 0;
        const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)&gh[4];
        const uint32_t *buckets = (const uint32_t *)(const void *)&bloom[bloom_size];
        const uint32_t *chain = &buckets[nbuckets];
        const uint32_t bits = sizeof(ElfW(Addr)) * 8;
        uint32_t h = elf_gnu_hash(name);
        ElfW(Addr) word = bloom[(h / bits) % bloom_size];
        ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
        if ((word & mask) != mask)
            return 0;
        uint32_t i = buckets[h % nbuckets];
        if (i < symoffset)
            return 0;
        for (;; i++) {
            uint32_t h2 = chain[i - symoffset];
            if ((h | 1) == (h2 | 1) && elf_defines(t, i, name, addr, any_version))
                return i;
            if (h2 & 1)
                return 0;
        }
    }
    if (t->hash != NULL) {
        uint32_t nbucket = t->hash[0], nchain = t->hash[1];
        if (nbucket == 0)
            return 0;
        const uint32_t *bucket = &t->hash[2], *chain = &bucket[nbucket];
        uint32_t steps = 0;
        for (uint32_t i = bucket[elf_sysv_hash(name) % nbucket]; i != 0 && i < nchain && steps < nchain;
             i = chain[i], steps++)
            if (elf_defines(t, i, name, addr, any_version))
                return i;
    }
    return 0;
}

/* Defined global/weak symbol 'name' of the object; default version only. */
static void *elf_lookup(uintptr_t base, const ElfW(Dyn) *dyn, const char *name)
{
    elf_tabs t;
    if (!elf_tables(base, dyn, &t))
        return NULL;
    uint32_t i = elf_index(&t, name, 0, 0);
    return i ? (void *)(base + t.symtab[i].st_value) : NULL;
}

static const ElfW(Dyn) *elf_dynamic(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return NULL;
}

static int elf_contains(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* ---- glibc's dlsym, and the chain of interposers (no libc call) ---- */

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

/* Our own link map entry: the one whose dynamic section is ours. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

static const struct link_map *elf_self_map(void)
{
    for (const struct link_map *lm = _r_debug.r_map; lm != NULL; lm = lm->l_next)
        if (lm->l_ld == _DYNAMIC)
            return lm;
    return NULL;
}

static int elf_is_libc(const struct link_map *lm)
{
    const char *b = lm->l_name ? elf_basename(lm->l_name) : "";
    return elf_streq(b, "libc.so.6") || elf_streq(b, "libdl.so.2");
}

/*
 * The next 'name' ("dlsym" or "dlvsym") in the chain of interposers: walking the
 * link map from our own entry on, the first object that defines it and is not
 * another copy of cushim (it defines cushim_api_id_limit), up to libc; libc's
 * own when libc comes first (the usual case) or we are not found (another
 * namespace, or loaded after libc). Load order equals search order for the
 * objects loaded at start-up (LD_PRELOAD entries, then dependencies), where
 * other interposers sit; an object loaded later is never taken. No libc call.
 */
void *elf_chain_next(const char *name)
{
    const struct link_map *self = elf_self_map();
    for (const struct link_map *lm = self ? self->l_next : NULL; lm != NULL; lm = lm->l_next) {
        if (elf_is_libc(lm))
            break;
        void *f = elf_lookup(lm->l_addr, lm->l_ld, name);
        if (f != NULL && elf_lookup(lm->l_addr, lm->l_ld, "cushim_api_id_limit") == NULL)
            return f;
    }
    return elf_find_in_libc(name);
}

static _Atomic(elf_dlsym_fn) elf_dlsym_p;
static _Atomic(elf_dlvsym_fn) elf_dlvsym_p;

elf_dlsym_fn elf_real_dlsym(void)
{
    elf_dlsym_fn f = atomic_load_explicit(&elf_dlsym_p, memory_order_acquire);
    if (RT_LIKELY(f != NULL))
        return f;
    f = (elf_dlsym_fn)elf_find_in_libc("dlsym");
    if (f != NULL)
        atomic_store_explicit(&elf_dlsym_p, f, memory_order_release);
    return f;
}

elf_dlvsym_fn elf_real_dlvsym(void)
{
    elf_dlvsym_fn f = atomic_load_explicit(&elf_dlvsym_p, memory_order_acquire);
    if (RT_LIKELY(f != NULL))
        return f;
    f = (elf_dlvsym_fn)elf_find_in_libc("dlvsym");
    if (f != NULL)
        atomic_store_explicit(&elf_dlvsym_p, f, memory_order_release);
    return f;
}

/* ---- objects in load order ---- */

struct elf_next_q {
    uintptr_t after_addr;
    const char *after_name;
    uintptr_t skip_addr;
    const char *name;
    int seen;
    void *result;
    uintptr_t def_addr;       /* the definer's load address and name */
    const char *def_name;
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
    q->result = elf_lookup(info->dlpi_addr, elf_dynamic(info), q->name);
    q->def_addr = info->dlpi_addr;
    q->def_name = info->dlpi_name ? info->dlpi_name : "";
    return q->result != NULL;
}

void *elf_next_definer(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                       const char *name, uintptr_t *def_addr, const char **def_name)
{
    struct elf_next_q q = { after_addr, after_name ? after_name : "", skip_addr, name, 0, NULL, 0, NULL };
    dl_iterate_phdr(elf_next_cb, &q);
    if (def_addr != NULL)
        *def_addr = q.def_addr;
    if (def_name != NULL)
        *def_name = q.def_name;
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

struct elf_before_q {
    uintptr_t self_addr;
    const char *name;
    char *definer, *self;
    size_t cap;
    int found;
};

static void elf_copy_name(char *dst, size_t cap, const char *name)
{
    if (cap == 0)
        return;
    const char *n = (name != NULL && name[0] != '\0') ? name : "the executable";
    size_t len = strnlen(n, cap - 1);
    memcpy(dst, n, len);
    dst[len] = '\0';
}

static int elf_before_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct elf_before_q *q = data;
    (void)size;
    if (elf_contains(info, q->self_addr)) {
        elf_copy_name(q->self, q->cap, info->dlpi_name);
        return 1;   /* reached ourselves: what follows is loaded after us */
    }
    if (!q->found && elf_lookup(info->dlpi_addr, elf_dynamic(info), q->name) != NULL) {
        elf_copy_name(q->definer, q->cap, info->dlpi_name);
        q->found = 1;   /* walk on to our own entry, for its name */
    }
    return 0;
}

int elf_defined_before_self(const char *name, char *definer, char *self, size_t cap)
{
    struct elf_before_q q = { (uintptr_t)&elf_defined_before_self, name, definer, self, cap, 0 };
    if (cap > 0)
        definer[0] = self[0] = '\0';
    dl_iterate_phdr(elf_before_cb, &q);
    return q.found;
}

/* ---- the object holding an address, or loaded at a base ---- */

/* A copy of a loaded object's name (dlpi_name). ld.so writes it when it loads the object and publishes it under
   its own lock, which ThreadSanitizer does not see (ld.so calls libc's mutex functions directly): read without
   instrumentation, byte by byte (volatile: never turned into an intercepted strcpy), so that a scan on one
   thread while another dlopens is not reported as a race. */
__attribute__((no_sanitize("thread"), noinline)) void elf_name_copy(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    if (src != NULL)
        for (char c; i + 1 < cap && (c = ((const volatile char *)src)[i]) != '\0'; i++)
            dst[i] = c;
    dst[i] = '\0';
}

struct elf_obj_q {
    uintptr_t base;       /* object load address (find by base), or 0 */
    uintptr_t addr;       /* an address inside the object (find by address), or 0 */
    const ElfW(Dyn) *dyn;
    uintptr_t found_base;
    char *name;           /* NULL: not wanted */
    size_t cap;
    int found;
};

static int elf_obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct elf_obj_q *q = data;
    (void)size;
    if (q->addr != 0 ? !elf_contains(info, q->addr) : info->dlpi_addr != q->base)
        return 0;
    q->dyn = elf_dynamic(info);
    q->found_base = info->dlpi_addr;
    if (q->name != NULL)
        elf_name_copy(q->name, q->cap, info->dlpi_name);
    q->found = 1;
    return 1;
}

/* dladdr would do, but it scans the whole symbol table (~10^5 instructions here). */
int elf_object_of(const void *addr, uintptr_t *base, char *name, size_t cap)
{
    struct elf_obj_q q = { 0, (uintptr_t)addr, NULL, 0, cap > 0 ? name : NULL, cap, 0 };
    if (q.name != NULL)
        q.name[0] = '\0';
    if (addr != NULL)
        dl_iterate_phdr(elf_obj_cb, &q);
    *base = q.found_base;
    return q.found;
}

int elf_object_defines(uintptr_t base, const char *name)
{
    struct elf_obj_q q = { base, 0, NULL, 0, NULL, 0, 0 };
    dl_iterate_phdr(elf_obj_cb, &q);
    return q.found && elf_lookup(q.found_base, q.dyn, name) != NULL;
}

int elf_object_defines_at(const void *addr, const char *name)
{
    struct elf_obj_q q = { 0, (uintptr_t)addr, NULL, 0, NULL, 0, 0 };
    if (addr == NULL)
        return 0;
    dl_iterate_phdr(elf_obj_cb, &q);
    return q.found && elf_lookup(q.found_base, q.dyn, name) != NULL;
}

/*
 * Would glibc's dlvsym(..., name, version) accept the definition of 'name' at
 * 'addr'? As glibc's check_match for a dlvsym request (a "hidden" version
 * reference): an object without symbol versions matches any version; else
 * the symbol's version must be 'version' - an unversioned (global) definition
 * does not match.
 */
int elf_version_matches(const void *addr, const char *name, const char *version)
{
    struct elf_obj_q q = { 0, (uintptr_t)addr, NULL, 0, NULL, 0, 0 };
    elf_tabs t;
    if (addr == NULL)
        return 0;
    dl_iterate_phdr(elf_obj_cb, &q);
    if (!q.found || !elf_tables(q.found_base, q.dyn, &t))
        return 0;
    uint32_t i = elf_index(&t, name, (uintptr_t)addr, 1);
    if (i == 0)
        return 0;
    if (t.versym == NULL)
        return 1;
    unsigned ndx = t.versym[i] & 0x7fff;
    if (ndx < 2 || t.verdef == NULL)
        return 0;
    for (const ElfW(Verdef) *d = t.verdef;; d = (const ElfW(Verdef) *)((const char *)d + d->vd_next)) {
        if (d->vd_ndx == ndx && !(d->vd_flags & VER_FLG_BASE)) {
            const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)d + d->vd_aux);
            return elf_streq(t.strtab + a->vda_name, version);
        }
        if (d->vd_next == 0)
            return 0;
    }
}

/* The k-th (from 0) defined global/weak function or data symbol of the object loaded at
   'base', default version only: its name, and its address in *addr. NULL past the last. */
const char *elf_object_symbol(uintptr_t base, uint32_t k, void **addr)
{
    struct elf_obj_q q = { base, 0, NULL, 0, NULL, 0, 0 };
    elf_tabs t;
    dl_iterate_phdr(elf_obj_cb, &q);
    if (!q.found || !elf_tables(q.found_base, q.dyn, &t))
        return NULL;
    uint32_t count = elf_count(&t);
    for (uint32_t i = 1; i < count; i++) {
        const ElfW(Sym) *s = &t.symtab[i];
        int bind = ELF64_ST_BIND(s->st_info);
        int type = ELF64_ST_TYPE(s->st_info);   /* not TLS, not IFUNC: dlsym gives another address */
        if (s->st_shndx == SHN_UNDEF || s->st_name == 0 || (bind != STB_GLOBAL && bind != STB_WEAK) ||
            s->st_shndx == SHN_ABS || (type != STT_FUNC && type != STT_OBJECT) ||
            (t.versym != NULL && (t.versym[i] & VERSYM_HIDDEN)))
            continue;
        if (k-- == 0) {
            *addr = (void *)(q.found_base + s->st_value);
            return t.strtab + s->st_name;
        }
    }
    return NULL;
}

/* The DT_SONAME of the object containing 'addr' (its file's base name when it has
   none), copied to out; 0 when no loaded object contains addr. */
int elf_object_soname(const void *addr, char *out, size_t cap)
{
    char name[PATH_MAX];
    struct elf_obj_q q = { 0, (uintptr_t)addr, NULL, 0, name, sizeof name, 0 };
    if (addr == NULL || cap == 0)
        return 0;
    dl_iterate_phdr(elf_obj_cb, &q);
    if (!q.found)
        return 0;
    const char *strtab = NULL;
    size_t soname = 0;
    int has = 0;
    for (const ElfW(Dyn) *d = q.dyn; d != NULL && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = (const char *)elf_ptr(q.found_base, d->d_un.d_ptr);
        else if (d->d_tag == DT_SONAME)
            soname = d->d_un.d_val, has = 1;
    }
    const char *s = has && strtab != NULL ? strtab + soname : elf_basename(name);
    size_t n = strlen(s);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 1;
}
