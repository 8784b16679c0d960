/*
 * getproc.h - interposition of the cuGetProcAddress family (getproc.c).
 */
#ifndef RT_GETPROC_H
#define RT_GETPROC_H

#include <stdint.h>

void *gp_handler_for(uint32_t id);          /* hand-written "real", or NULL */
uint64_t gp_passthrough_count(void);

#endif /* RT_GETPROC_H */
