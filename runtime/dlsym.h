/*
 * dlsym.h - what the exported dlsym/dlvsym (dlsym_entry.c) answer (dlsym.c).
 */
#ifndef RT_DLSYM_H
#define RT_DLSYM_H

/* NULL with *fwd set: jump to *fwd with the caller's arguments; else the answer. */
void *dl_decide(void *handle, const char *name, const char *version, void *caller, void **fwd);

#endif /* RT_DLSYM_H */
