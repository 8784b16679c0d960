/*
 * getproc.h - interposition of the cuGetProcAddress family (getproc.c).
 */
#ifndef RT_GETPROC_H
#define RT_GETPROC_H

#include <stdint.h>

void gp_init(void);                         /* hands the handlers to the slots (initialisation, first) */
void *gp_handler_for(uint32_t id);          /* hand-written "real", or NULL */
uint64_t gp_passthrough_count(void);
void gp_reset_after_fork(void);      /* fork child */

#endif /* RT_GETPROC_H */
