/*
 * wrapper_table.c - per API id: the address of our exported wrapper (what
 * dlsym and cuGetProcAddress hand out instead of the real function), of its
 * slow path and of its first entry (first_entry.c): the code wrap.h expands,
 * as data for getproc.c, dlsym.c and the slots (slots.c).
 */
#include "cushim_all_params.h"
#include "wrapper_table.h"

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) RET NAME PROTO; RET rt_slow_##NAME PROTO; \
    void rt_first_##NAME(void);
#include "cushim_apis.inc"
#undef CUSHIM_API

void *const rt_wrapper_of[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = (void *)NAME,
#include "cushim_apis.inc"
#undef CUSHIM_API
};

void *const rt_slow_of[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = (void *)rt_slow_##NAME,
#include "cushim_apis.inc"
#undef CUSHIM_API
};

void *const rt_first_of[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = (void *)rt_first_##NAME,
#include "cushim_apis.inc"
#undef CUSHIM_API
};
