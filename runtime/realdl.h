/*
 * realdl.h - glibc's own dlsym and dlvsym, called from inside the shim
 * (realdl.c): with the shim as the caller, which is what RTLD_NEXT is relative
 * to.
 */
#ifndef RT_REALDL_H
#define RT_REALDL_H

#include "elfsym.h"

elf_dlsym_fn rd_real_dlsym(void);                 /* glibc's dlsym (logged once when missing) */
elf_dlvsym_fn rd_real_dlvsym(void);
void *rd_dlsym(void *handle, const char *name);   /* glibc's, caller = the shim */
void *rd_dlsym_next(const char *name);            /* RTLD_NEXT relative to the shim */
void *rd_dlvsym_next(const char *name, const char *version);

#endif /* RT_REALDL_H */
