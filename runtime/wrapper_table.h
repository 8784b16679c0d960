/*
 * wrapper_table.h - per API id, the addresses of the code wrap.h generates
 * (wrapper_table.c): the exported wrapper, its slow path, its first entry.
 */
#ifndef RT_WRAPPER_TABLE_H
#define RT_WRAPPER_TABLE_H

#include "cushim_api_ids.h"

extern void *const rt_wrapper_of[CUSHIM_API_ID_LIMIT];   /* our exported wrapper       */
extern void *const rt_slow_of[CUSHIM_API_ID_LIMIT];      /* its slow path              */
extern void *const rt_first_of[CUSHIM_API_ID_LIMIT];     /* its first entry (first_entry.c) */

#endif /* RT_WRAPPER_TABLE_H */
