/*
 * elfsym.h - symbol look-up in the dynamic symbol tables of loaded objects
 * (elfsym.c).
 */
#ifndef RT_ELFSYM_H
#define RT_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

typedef void *(*rl_dlsym_fn)(void *, const char *);
typedef void *(*rl_dlvsym_fn)(void *, const char *, const char *);
rl_dlsym_fn elf_real_dlsym(void);     /* glibc's; safe before any initialisation */
rl_dlvsym_fn elf_real_dlvsym(void);
void *elf_find_in_libc(const char *name);   /* default-version definition in libc.so.6 / libdl.so.2 */
/* Objects after the one loaded at 'after_addr' named 'after_name' (its l_addr and
   l_name), in load order, except the one at 'skip_addr': the first that defines
   'name'. Returns its symbol address (an IFUNC's resolver) or NULL. */
void *elf_next_definer(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                       const char *name);
void *elf_next_definer_obj(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                           const char *name, uintptr_t *def_addr, const char **def_name);
int elf_loaded_after(uintptr_t a, uintptr_t b);   /* object at a comes after object at b */
const char *elf_object_symbol(uintptr_t base, uint32_t k, void **addr);   /* k-th export, NULL past the end */
void *elf_chain_next(const char *name);     /* next "dlsym"/"dlvsym" after us (an interposer's or libc's) */
int elf_object_defines(uintptr_t base, const char *name);        /* the object loaded at base */
int elf_object_defines_at(const void *addr, const char *name);   /* the object containing addr */
int elf_version_matches(const void *addr, const char *name, const char *version);   /* as glibc's dlvsym */
int elf_object_soname(const void *addr, char *out, size_t cap);   /* DT_SONAME, else file base name */

#endif /* RT_ELFSYM_H */
