/*
 * objects.h - what the shim knows of the loaded objects (objects.c): itself,
 * whether it is the drop-in, which kind of object holds an address, objects
 * pinned for good, and how many objects were ever loaded.
 */
#ifndef RT_OBJECTS_H
#define RT_OBJECTS_H

#include <stdint.h>

#include "libs.h"

enum { OB_NONE = 0, OB_SELF = 1, OB_DRIVER = 2, OB_RUNTIME = 3, OB_OTHER = 4,
       OB_LIBRARY = 5 /* another interposed library (NVML, ...: libs.c) */ };
int ob_classify(const void *addr);
uintptr_t ob_self_base(void);
void *ob_self_handle(void);                       /* our link_map = our dlopen handle */
int ob_is_dropin(void);
/* The real driver's load address (driver.c, once found): classified OB_DRIVER whatever its file name. */
void ob_set_driver(uintptr_t base);
int ob_is_driver(uintptr_t base);
void ob_pin(const void *fn);                      /* keep fn's object loaded for good */
unsigned long long ob_loaded_adds(void);          /* objects ever loaded into the process (dlpi_adds) */
const char *ob_basename(const char *path);
int ob_lib_matches(const lb_library *lib, const char *path);   /* its file name begins with one of lib's sonames */

#endif /* RT_OBJECTS_H */
