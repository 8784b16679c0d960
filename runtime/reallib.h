/*
 * reallib.h - the real dlsym, the real driver and runtime libraries, object
 * classification, several loaded copies (reallib.c).
 */
#ifndef RT_REALLIB_H
#define RT_REALLIB_H

#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"
#include "libs.h"

enum { RL_NONE = 0, RL_SELF = 1, RL_DRIVER = 2, RL_RUNTIME = 3, RL_OTHER = 4,
       RL_LIBRARY = 5 /* another interposed library (NVML, ...: libs.c) */ };
rl_dlsym_fn rl_real_dlsym(void);
rl_dlvsym_fn rl_real_dlvsym(void);
void *rl_dlsym(void *handle, const char *name);   /* glibc's, caller = the shim */
void *rl_dlsym_next(const char *name);            /* RTLD_NEXT relative to the shim */
void *rl_driver_handle(void);                     /* NULL if no driver (searched again after a load) */
void *rl_next_layer(const char *name);            /* another interposer's 'name' after us, or NULL */
void *rl_prev_layer(const char *name);            /* a preloaded interposer's 'name' before us, or NULL */
void *rl_driver_real(const char *name);           /* the next layer's, else the driver's; pinned */
void rl_pin(const void *fn);                      /* keep fn's object loaded for good */
int rl_classify(const void *addr);
/* The loaded object holding addr: its load address, and its name copied into name[cap] (NULL: not wanted) while
   ld.so holds its lock - never a pointer into ld.so's own string, which a dlopen on another thread may be writing */
int rl_object_of(const void *addr, uintptr_t *base, char *name, size_t cap);
uintptr_t rl_self_base(void);
void *rl_self_handle(void);                       /* our link_map = our dlopen handle */
int rl_is_dropin(void);
void *rl_library_real(const lb_library *lib, const char *name);   /* never loads it; prefers our copy */
int rl_is_our_copy(const lb_library *lib, const void *fn);   /* fn's copy is this build's major (lb_symver) */
void rl_scan_copies(const lb_library *lib);       /* warn once when several copies are loaded */
void rl_scan_copies_versioned(void);               /* rl_scan_copies of each library with a version node */

#endif /* RT_REALLIB_H */
