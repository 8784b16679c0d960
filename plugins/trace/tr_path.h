/* tr_path.h - the trace file's name (tr_path.c). */
#ifndef CUSHIM_TR_PATH_H
#define CUSHIM_TR_PATH_H
#include <stddef.h>

/* The file's name from the option 'given' for process 'pid' (child: a forked child's); malloc'd, NULL when out of
   memory. The first unset %q{VAR}'s name goes to 'unset' ("" when none; unset_size 0: not wanted). */
char *tr_path(const char *given, int pid, int child, char *unset, size_t unset_size);
/* The k-th other name (k >= 1) for 'path' when another process holds it; malloc'd, NULL when out of memory. */
char *tr_path_alt(const char *path, int pid, int k);
/* Does the name ask for Perfetto's protobuf format (.perfetto-trace, .pftrace, either with .gz)? */
int tr_path_perfetto(const char *path);

#endif
