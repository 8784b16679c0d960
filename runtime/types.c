/*
 * types.c - type metadata look-ups (host enum_by_name, enum_value_name,
 * enum_constant, struct_by_name) over the tables cushim-gen emits into
 * cushim_meta.c: every enum of the headers, the structs the overlay lists,
 * and sorted name indexes searched by bisection. Pure functions of constant
 * data: any thread, any time, signal handlers included.
 */
#include <string.h>

#include "types.h"

/* Index of 'name' in a sorted array of names, or -1. */
static int ty_bisect(const char *const *names, uint32_t n, const char *name)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, names[mid]);
        if (c == 0)
            return (int)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

const cushim_enum_info *types_enum_by_name(const char *type_name)
{
    int i;
    if (type_name == NULL)
        return NULL;
    i = ty_bisect(cushim_gen_enum_names, cushim_gen_enum_name_count, type_name);
    return i < 0 ? NULL : &cushim_gen_enums[cushim_gen_enum_name_index[i]];
}

/* The first name in header order: aliases (CU_DEVICE_ATTRIBUTE_...) follow the original.
   'e' must be one of this shim's tables (anything else, e.g. another copy's, gives NULL). */
const char *types_enum_value_name(const cushim_enum_info *e, int64_t value)
{
    uintptr_t a = (uintptr_t)e, lo = (uintptr_t)cushim_gen_enums;
    if (e == NULL || a < lo || a >= (uintptr_t)(cushim_gen_enums + cushim_gen_enum_count) ||
        (a - lo) % sizeof *e != 0 || e->values == NULL)
        return NULL;
    for (uint32_t i = 0; i < e->nvalues; i++)
        if (e->values[i].value == value)
            return e->values[i].name;
    return NULL;
}

int types_enum_constant(const char *constant_name, int64_t *value, const cushim_enum_info **type)
{
    const cushim_enum_info *e;
    int i;
    if (constant_name == NULL)
        return CUSHIM_ENOMATCH;
    i = ty_bisect(cushim_gen_enum_const_names, cushim_gen_enum_const_count, constant_name);
    if (i < 0)
        return CUSHIM_ENOMATCH;
    e = &cushim_gen_enums[cushim_gen_enum_const_at[i][0]];
    if (value != NULL)
        *value = e->values[cushim_gen_enum_const_at[i][1]].value;
    if (type != NULL)
        *type = e;
    return CUSHIM_OK;
}

const cushim_struct_info *types_struct_by_name(const char *type_name)
{
    uint32_t lo = 0, hi = cushim_gen_struct_count;
    if (type_name == NULL)
        return NULL;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const cushim_struct_info *s = &cushim_gen_structs[cushim_gen_struct_by_name[mid]];
        int c = strcmp(type_name, s->name);
        if (c == 0)
            return s;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
