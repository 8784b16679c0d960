/*
 * api.c - metadata look-ups by id and by exported name. Plugins reach them
 * through the host table (host.c); the one export left here,
 * cushim_api_id_limit, is how another copy of the shim recognises this one
 * (config.c stands aside for an earlier one, driver.c and layers.c skip one).
 */
#include <string.h>

#include "api.h"
#include "base.h"

int api_index_by_name(const char *name)
{
    uint32_t lo = 0, hi = cushim_gen_api_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint16_t idx = cushim_gen_by_name[mid];
        int c = strcmp(name, cushim_gen_apis[idx].name);
        if (c == 0)
            return idx;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

const cushim_api_info *api_info(uint32_t id)
{
    if (id >= CUSHIM_API_ID_LIMIT || cushim_gen_index_of_id[id] < 0)
        return NULL;
    return &cushim_gen_apis[cushim_gen_index_of_id[id]];
}

const cushim_api_info *api_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    int i = api_index_by_name(name);
    return i < 0 ? NULL : &cushim_gen_apis[i];
}

CUSHIM_EXPORT uint32_t cushim_api_id_limit(void)
{
    return CUSHIM_API_ID_LIMIT;
}
