/*
 * counts.h - the CUSHIM_COUNTS call counter (counts.c).
 */
#ifndef RT_COUNTS_H
#define RT_COUNTS_H

#include <stdint.h>

extern int cnt_enabled;
void cnt_add(uint32_t id);
uint64_t cnt_get(uint32_t id);
void cnt_write(void);
/* Where a CUSHIM_COUNTS path sends its lines (cnt_init): CNT_KIND_FD for one of the
   process's own descriptors (*fd set: /dev/stderr, /dev/fd/N, /proc/self/fd/N, or a
   link to one), CNT_KIND_APPEND for another non-regular or /proc path (opened and
   appended to at exit), CNT_KIND_FILE for a regular file (claimed, may be created),
   CNT_KIND_BAD when it cannot be used (*err set: a directory, a missing device). */
enum { CNT_KIND_FILE = 0, CNT_KIND_FD = 1, CNT_KIND_APPEND = 2, CNT_KIND_BAD = 3 };
int cnt_path_kind(const char *path, int *fd, int *err);

#endif /* RT_COUNTS_H */
