/*
 * procaddr.c - cuGetProcAddress's answer derived from the generated variant
 * table (cushim_procaddr.inc); see procaddr.h. Pure: no state, no locks,
 * compiled into both libcushim.so and the fake driver.
 */
#include <string.h>

#include "cushim_api_ids.h"
#include "procaddr.h"


typedef struct pa_row {
    const char *base;
    int flag;
    int min_version;
    uint32_t id;
} pa_row;

static const pa_row pa_rows[] = {
#define CUSHIM_PROCADDR(BASE, FLAG, MINV, ID) { BASE, FLAG, MINV, ID },
#include "cushim_procaddr.inc"
#undef CUSHIM_PROCADDR
};

#define PA_NROWS (sizeof pa_rows / sizeof pa_rows[0])

/* First row of 'base' (rows are sorted by base with strcmp), or PA_NROWS. */
static size_t pa_first(const char *base)
{
    size_t lo = 0, hi = PA_NROWS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(pa_rows[mid].base, base) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < PA_NROWS && strcmp(pa_rows[lo].base, base) == 0) ? lo : PA_NROWS;
}

/* Best row of 'flag' within [first, end): largest min_version <= v; -1 none. */
static long pa_best(size_t first, size_t end, int flag, int v, int *any)
{
    long best = -1;
    for (size_t i = first; i < end; i++) {
        if (pa_rows[i].flag != flag)
            continue;
        *any = 1;
        if (pa_rows[i].min_version <= v)
            best = (long)i;
    }
    return best;
}

int cushim_pa_lookup(const char *symbol, int cuda_version, uint64_t flags, uint32_t *api_id,
                     int *status)
{
    if (api_id != NULL)
        *api_id = 0;
    if (cuda_version > CUSHIM_GEN_CUDA_VERSION)
        return CUSHIM_PA_RESULT_INVALID_VALUE;   /* newer than the driver: status untouched */
    uint32_t id = 0;
    int st = CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND;
    size_t first = symbol ? pa_first(symbol) : PA_NROWS;
    if (first < PA_NROWS) {
        size_t end = first;
        while (end < PA_NROWS && strcmp(pa_rows[end].base, symbol) == 0)
            end++;
        int any_pt = 0, any_legacy = 0;
        long best = -1;
        int want_pt = (flags & CUSHIM_PA_FLAG_PER_THREAD) && !(flags & CUSHIM_PA_FLAG_LEGACY_STREAM);
        if (want_pt)
            best = pa_best(first, end, CUSHIM_PA_PER_THREAD, cuda_version, &any_pt);
        if (!any_pt)   /* per-thread variants exist but none old enough: no legacy fallback */
            best = pa_best(first, end, CUSHIM_PA_LEGACY, cuda_version, &any_legacy);
        if (best >= 0) {
            id = pa_rows[best].id;
            st = CUSHIM_PA_STATUS_SUCCESS;
        } else {
            st = CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT;
        }
    }
    if (api_id != NULL)
        *api_id = id;
    if (status != NULL)
        *status = st;
    return CUSHIM_PA_RESULT_SUCCESS;
}
