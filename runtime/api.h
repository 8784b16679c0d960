/*
 * api.h - the generated API metadata (cushim_meta.c) and its look-ups by id
 * and by exported name (api.c).
 */
#ifndef RT_API_H
#define RT_API_H

#include <stdint.h>

#include "base.h"
#include "cushim/cushim.h"
#include "cushim_api_ids.h"

/* generated (cushim_meta.c) */
extern const cushim_api_info cushim_gen_apis[];
extern const uint32_t cushim_gen_api_count;
extern const uint16_t cushim_gen_by_name[];
extern const int16_t cushim_gen_index_of_id[CUSHIM_API_ID_LIMIT];

int api_index_by_name(const char *name);          /* index into cushim_gen_apis or -1 */
const cushim_api_info *api_info(uint32_t id);      /* NULL if absent */
const cushim_api_info *api_by_name(const char *name);   /* exported name; NULL if absent */
uint32_t cushim_api_id_limit(void);                /* exported: copies of the shim recognise each other */

#endif /* RT_API_H */
