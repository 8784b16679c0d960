/*
 * roles.h - the allocation roles of the generated metadata, by API id (roles.c).
 */
#ifndef RT_ROLES_H
#define RT_ROLES_H

#include <stdint.h>

#include "cushim/cushim.h"

const cushim_alloc_role *rt_alloc_role(uint32_t api_id); /* NULL if none */

#endif /* RT_ROLES_H */
