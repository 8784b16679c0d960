/*
 * wrapper_table.c - API id -> address of our exported wrapper, what dlsym and
 * cuGetProcAddress hand out instead of the real function.
 */
#include "cushim_params.h"
#include "rt_internal.h"

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) RET NAME PROTO;
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
#undef CUSHIM_API

void *const rt_wrapper_of[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = (void *)NAME,
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
#undef CUSHIM_API
};
