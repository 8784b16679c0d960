/*
 * copies.h - several loaded copies of one library (copies.c).
 */
#ifndef RT_COPIES_H
#define RT_COPIES_H

#include "libs.h"

void *cp_library_real(const lb_library *lib, const char *name);   /* never loads it; prefers our copy */
int cp_is_ours(const lb_library *lib, const void *fn);   /* fn's copy is this build's major (lb_symver) */
void cp_scan(const lb_library *lib);                     /* warn once when several copies are loaded */
void cp_scan_versioned(void);                            /* cp_scan of each library with a version node */

#endif /* RT_COPIES_H */
