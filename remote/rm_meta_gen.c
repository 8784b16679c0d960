/*
 * rm_meta_gen.c - an rm_meta over the generated tables themselves
 * (generated/cuda-X.Y/cushim_meta.c linked in), for the programs that have no
 * host table: the codec's table test and the decoder's fuzz harness. A plugin
 * or the server reads the same tables through the host (rm_meta_from_host).
 */
#include "cushim_api_ids.h"
#include "rm_plan.h"

extern const cushim_api_info cushim_gen_apis[];
extern const uint32_t cushim_gen_api_count;

static uint32_t rm_gen_count(void)
{
    return cushim_gen_api_count;
}

static const cushim_api_info *rm_gen_at(uint32_t index)
{
    return index < cushim_gen_api_count ? &cushim_gen_apis[index] : NULL;
}

static const cushim_param_info *rm_gen_param(const cushim_api_info *api, uint32_t index)
{
    return api != NULL && index < api->nparams ? &api->params[index] : NULL;
}

static uint32_t rm_gen_limit(void)
{
    return CUSHIM_API_ID_LIMIT;
}

void rm_meta_generated(rm_meta *m);
void rm_meta_generated(rm_meta *m)
{
    m->api_count = rm_gen_count;
    m->api_at = rm_gen_at;
    m->api_param = rm_gen_param;
    m->api_id_limit = rm_gen_limit;
    m->cuda_version = CUSHIM_GEN_CUDA_VERSION;
    m->struct_field = NULL;   /* the generated tables' own layout */
}
