/*
 * types.h - type metadata look-ups (types.c) over the generated enum and
 * struct tables (cushim_meta.c).
 */
#ifndef RT_TYPES_H
#define RT_TYPES_H

#include <stdint.h>

#include "cushim/cushim.h"

/* generated (cushim_meta.c) */
extern const cushim_enum_info cushim_gen_enums[];
extern const uint32_t cushim_gen_enum_count;
extern const cushim_struct_info cushim_gen_structs[];
extern const uint32_t cushim_gen_struct_count;
extern const uint32_t cushim_gen_enum_name_count;
extern const char *const cushim_gen_enum_names[];
extern const uint16_t cushim_gen_enum_name_index[];
extern const uint32_t cushim_gen_enum_const_count;
extern const char *const cushim_gen_enum_const_names[];
extern const uint16_t cushim_gen_enum_const_at[][2];
extern const uint16_t cushim_gen_struct_by_name[];

const cushim_enum_info *types_enum_by_name(const char *type_name);
const char *types_enum_value_name(const cushim_enum_info *e, int64_t value);
int types_enum_constant(const char *constant_name, int64_t *value, const cushim_enum_info **type);
const cushim_struct_info *types_struct_by_name(const char *type_name);

#endif /* RT_TYPES_H */
