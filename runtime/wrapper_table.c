/*
 * wrapper_table.c - per API id: the address of our exported wrapper (what
 * dlsym and cuGetProcAddress hand out instead of the real function), of its
 * slow path, of its first entry (first_entry.c), and its slot (rt_internal.h
 * rt_slot), whose fast-path target starts at the first entry.
 */
#include "cushim_all_params.h"
#include "api.h"
#include "dispatch.h"
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

rt_slot rt_slots[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = { .fast = (void *)rt_first_##NAME },
#include "cushim_apis.inc"
#undef CUSHIM_API
};

void rt_slots_index(void)
{
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        if (cushim_gen_apis[i].id < CUSHIM_API_ID_LIMIT)
            rt_slots[cushim_gen_apis[i].id].index1 = (int16_t)(i + 1);
}
