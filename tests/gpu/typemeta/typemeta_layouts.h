/* typemeta_layouts.h - one listed struct (field NULL) or field, as this machine's compiler lays it out. */
#ifndef TYPEMETA_LAYOUTS_H
#define TYPEMETA_LAYOUTS_H
#include <stddef.h>
struct tm_layout {
    const char *name, *field;
    size_t offset, size;
};
extern const struct tm_layout tm_layouts[]; /* ends with name NULL */
#endif
