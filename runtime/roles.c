/*
 * roles.c - the allocation roles of the generated metadata
 * (cushim_alloc_roles.inc) as a table indexed by API id, behind the host's
 * alloc_role slot. Built once at compile time: the generated X-macro list
 * becomes designated initialisers, so a lookup is one bounds check and one
 * load.
 */
#include "cushim_api_ids.h"
#include "roles.h"

#define CUSHIM_ALLOC_ROLE(api, act, mem_, szr, devr, s0, s1, s2, da, oa, ra, why)                          \
    [CUSHIM_API_##api] = {.size = sizeof(cushim_alloc_role), .api_id = CUSHIM_API_##api, .action = act,      \
                          .mem = mem_, .size_rule = szr, .dev_rule = devr, .size_arg = {s0, s1, s2},          \
                          .dev_arg = da, .out_arg = oa, .ref_arg = ra, .reason = why},
static const cushim_alloc_role rt_roles[CUSHIM_API_ID_LIMIT] = {
#include "cushim_alloc_roles.inc"
};
#undef CUSHIM_ALLOC_ROLE

/* 'size' is 0 for an API without a role. */
const cushim_alloc_role *rt_alloc_role(uint32_t api_id)
{
    if (api_id >= CUSHIM_API_ID_LIMIT || rt_roles[api_id].size == 0)
        return NULL;
    return &rt_roles[api_id];
}
