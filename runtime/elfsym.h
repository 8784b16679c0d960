/*
 * elfsym.h - the loaded objects as ld.so mapped them (elfsym.c): dynamic symbol
 * tables, load order, the object holding an address. No libc call on the way
 * to glibc's dlsym: safe before any initialisation.
 */
#ifndef RT_ELFSYM_H
#define RT_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

typedef void *(*elf_dlsym_fn)(void *, const char *);
typedef void *(*elf_dlvsym_fn)(void *, const char *, const char *);
elf_dlsym_fn elf_real_dlsym(void);     /* glibc's; safe before any initialisation */
elf_dlvsym_fn elf_real_dlvsym(void);
void *elf_find_in_libc(const char *name);   /* default-version definition in libc.so.6 / libdl.so.2 */
void *elf_chain_next(const char *name);     /* next "dlsym"/"dlvsym" after us (an interposer's or libc's) */

/* Objects after the one loaded at 'after_addr' named 'after_name' (its l_addr and
   l_name), in load order, except the one at 'skip_addr': the first that defines
   'name'. Returns its symbol address (an IFUNC's resolver) or NULL; the definer's
   load address and name in *def_addr, *def_name (each may be NULL). */
void *elf_next_definer(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                       const char *name, uintptr_t *def_addr, const char **def_name);
int elf_loaded_after(uintptr_t a, uintptr_t b);   /* object at a comes after object at b */
/* 1 when an object loaded before this one (link-map order, the dynamic linker's search order
   for the initial objects) exports 'name': its file name is copied to 'definer' and ours to
   'self' (cap bytes each). No libc look-up, no allocation: safe from any constructor. */
int elf_defined_before_self(const char *name, char *definer, char *self, size_t cap);

/* The loaded object holding addr: its load address, and its name copied into name[cap] (NULL: not wanted)
   while ld.so holds its lock - never a pointer into ld.so's own string, which a dlopen on another thread may
   be writing. 0 if none. */
int elf_object_of(const void *addr, uintptr_t *base, char *name, size_t cap);
void elf_name_copy(char *dst, size_t cap, const char *src);   /* a dlpi_name, so copied */
const char *elf_object_symbol(uintptr_t base, uint32_t k, void **addr);   /* k-th export, NULL past the end */
int elf_object_defines(uintptr_t base, const char *name);        /* the object loaded at base */
int elf_object_defines_at(const void *addr, const char *name);   /* the object containing addr */
int elf_version_matches(const void *addr, const char *name, const char *version);   /* as glibc's dlvsym */
int elf_object_soname(const void *addr, char *out, size_t cap);   /* DT_SONAME, else file base name */

#endif /* RT_ELFSYM_H */
