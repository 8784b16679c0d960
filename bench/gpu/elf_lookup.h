/*
 * elf_lookup.h - a function's own address in a loaded library, read from the library's ELF dynamic symbol
 * table (the file the loader mapped, plus its load address; the loaded image's dynamic section when the file
 * has no section headers), so that nothing a preloaded shim interposes (dlsym, dlvsym, cuGetProcAddress) is
 * asked. The GPU benchmarks time a wrapper against the real function in one process with it
 * (bench_libs.c, memlimit_bench.c). BENCH_LIBS_MEM_LOOKUP set: the loaded-image fallback alone (tested
 * against the fake libraries). Static functions: include it once per program.
 */
#ifndef CUSHIM_BENCH_ELF_LOOKUP_H
#define CUSHIM_BENCH_ELF_LOOKUP_H

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct find_lib {
    const char *base;   /* "libnvidia-ml.so": a path component starting with it */
    char path[4096];
    uintptr_t addr;
    const ElfW(Phdr) *phdr;
    int phnum;
    int found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct find_lib *f = data;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    size_t n = strlen(f->base);
    (void)size;
    if (slash == NULL || strncmp(slash + 1, f->base, n) != 0 || (slash[1 + n] != '\0' && slash[1 + n] != '.'))
        return 0;
    snprintf(f->path, sizeof f->path, "%s", info->dlpi_name);
    f->addr = (uintptr_t)info->dlpi_addr;
    f->phdr = info->dlpi_phdr;
    f->phnum = info->dlpi_phnum;
    f->found = 1;
    return 1;
}

/* A dynamic-section pointer: glibc relocates them in memory on x86-64 and aarch64; a small value is an offset. */
static const void *dyn_ptr(const struct find_lib *f, ElfW(Addr) p)
{
    return (const void *)(p < f->addr ? f->addr + p : p);
}

/* The same from the loaded image (a file without section headers): the symbol table the dynamic section names,
   its size from DT_HASH's chain count or the highest symbol index DT_GNU_HASH reaches. */
static void *mem_lookup(const struct find_lib *f, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const uint32_t *hash = NULL, *gnu = NULL;
    size_t nsym = 0;
    for (int i = 0; i < f->phnum; i++)
        if (f->phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(f->addr + f->phdr[i].p_vaddr);
    for (; dyn != NULL && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: sym = dyn_ptr(f, dyn->d_un.d_ptr); break;
        case DT_STRTAB: str = dyn_ptr(f, dyn->d_un.d_ptr); break;
        case DT_HASH: hash = dyn_ptr(f, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu = dyn_ptr(f, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    if (sym == NULL || str == NULL)
        return NULL;
    if (hash != NULL)
        nsym = hash[1];
    else if (gnu != NULL) {   /* nbuckets, symoffset, bloom size, shift, bloom[], buckets[], chains[] */
        uint32_t nb = gnu[0], off = gnu[1], bloom = gnu[2], last = 0;
        const uint32_t *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4), *chains = buckets + nb;
        for (uint32_t b = 0; b < nb; b++)
            last = buckets[b] > last ? buckets[b] : last;
        if (last >= off)
            while (!(chains[last - off] & 1))
                last++;
        nsym = last + 1;
    }
    for (size_t k = 0; k < nsym; k++)
        if (sym[k].st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
            strcmp(str + sym[k].st_name, name) == 0)
            return (void *)(f->addr + sym[k].st_value);
    return NULL;
}

/* The address of the defined function NAME in the loaded library whose file name starts with BASE, from the
   .dynsym of its file (else from the loaded image's dynamic section); NULL if not found. */
static void *elf_lookup(const char *base, const char *name)
{
    struct find_lib f = { .base = base };
    void *res = NULL;
    struct stat st;
    dl_iterate_phdr(find_cb, &f);
    if (!f.found)
        return NULL;
    if (getenv("BENCH_LIBS_MEM_LOOKUP"))   /* the fallback alone (tested against the fake libraries) */
        return mem_lookup(&f, name);
    int fd = open(f.path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shnum == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len) {
        munmap((void *)m, len);
        return mem_lookup(&f, name);
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum && res == NULL; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > len || strs->sh_offset + strs->sh_size > len ||
            sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
        const char *str = (const char *)(m + strs->sh_offset);
        size_t nsym = sh[i].sh_size / sizeof(Elf64_Sym), name_len = strlen(name);
        for (size_t k = 0; k < nsym; k++) {
            if (sym[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
                sym[k].st_name + name_len + 1 > strs->sh_size)
                continue;
            if (strcmp(str + sym[k].st_name, name) == 0) {
                res = (void *)(f.addr + sym[k].st_value);
                break;
            }
        }
    }
    munmap((void *)m, len);
    return res ? res : mem_lookup(&f, name);
}

#endif /* CUSHIM_BENCH_ELF_LOOKUP_H */
