/*
 * procaddr_fallback.c - TEMPORARY stand-in for runtime/procaddr.c (delete when that lands).
 * Implements cushim_pa_lookup() over the generated cushim_procaddr.inc so the fake can be built alone.
 */
#include <stdint.h>
#include <string.h>

#include "cushim_cuda_headers.h"
#include "cushim_api_ids.h"

#define CUSHIM_PA_LEGACY 0
#define CUSHIM_PA_PER_THREAD 1

struct pa_row { const char *base; int flag; int ver; uint32_t id; };
static const struct pa_row rows[] = {
#define CUSHIM_PROCADDR(B, F, V, ID) {B, F, V, ID},
#include "cushim_procaddr.inc"
};

int cushim_pa_lookup(const char *symbol, int cuda_version, uint64_t flags, uint32_t *api_id, int *status)
{
    int found = 0, best_leg = -1, best_pt = -1;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (strcmp(rows[i].base, symbol) != 0)
            continue;
        found = 1;
        if (rows[i].ver > cuda_version)
            continue;
        if (rows[i].flag == CUSHIM_PA_LEGACY)
            best_leg = (int)i;
        else
            best_pt = (int)i;
    }
    int pick = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt >= 0 ? best_pt : best_leg;
    if (!found || pick < 0) {
        *status = found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    *api_id = rows[pick].id;
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}
