/*
 * invoke.h - host->call_real (invoke.c): call any API's real function with its
 * arguments in a params struct.
 */
#ifndef RT_INVOKE_H
#define RT_INVOKE_H

#include <stdint.h>

int rt_call_real(uint32_t id, void *params, void *retval);
/* host->call: the same through our exported wrapper (rt_wrapper_of), so the hooks run. */
int rt_call_hooked(uint32_t id, void *params, void *retval);

#endif /* RT_INVOKE_H */
