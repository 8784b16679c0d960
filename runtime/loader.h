/*
 * loader.h - CUSHIM_PLUGINS (loader.c): syntax, where a NAME is found, dlopen.
 */
#ifndef RT_LOADER_H
#define RT_LOADER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Load the specs of 'list' (CUSHIM_PLUGINS syntax) from index *taken on,
   advancing it before each (a forked child resumes after the interrupted one). */
void ldr_load_list(const char *list, _Atomic uint32_t *taken);
/* The directory shipped plugins are looked up in, for the shim at 'self_path'. */
int ldr_plugin_file(const char *self_path, const char *name, char *out, size_t cap, char *tried,
                    size_t tried_cap);

#endif /* RT_LOADER_H */
