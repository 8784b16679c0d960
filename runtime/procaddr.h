/*
 * procaddr.h - the cuGetProcAddress variant rule as a pure function.
 *
 * Shared with the fake driver (tests/fake compiles runtime/procaddr.c too):
 * no shim state, no CUDA headers; only the generated cushim_procaddr.inc and
 * cushim_api_ids.h.
 */
#ifndef CUSHIM_PROCADDR_H
#define CUSHIM_PROCADDR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of cushim_procaddr.inc rows. */
enum { CUSHIM_PA_LEGACY = 0, CUSHIM_PA_PER_THREAD = 1 };

/* Values as in cuda.h (CUresult, cuGetProcAddress flags, CUdriverProcAddressQueryResult). */
#define CUSHIM_PA_RESULT_SUCCESS 0
#define CUSHIM_PA_RESULT_INVALID_VALUE 1      /* CUDA_ERROR_INVALID_VALUE */
#define CUSHIM_PA_FLAG_LEGACY_STREAM 1ull     /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */
#define CUSHIM_PA_FLAG_PER_THREAD 2ull        /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define CUSHIM_PA_STATUS_SUCCESS 0            /* CU_GET_PROC_ADDRESS_SUCCESS */
#define CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND 1
#define CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT 2

/*
 * The export cuGetProcAddress_v2(symbol, cuda_version, flags, &status) of a
 * driver of the table's CUDA version (CUSHIM_GEN_CUDA_VERSION) returns, as
 * recorded from the real driver (tests/gpu/fixtures/procaddr-oracle.tsv):
 *  - cuda_version above CUSHIM_GEN_CUDA_VERSION: CUDA_ERROR_INVALID_VALUE,
 *    *status untouched;
 *  - else CUDA_SUCCESS, and *status SUCCESS with *api_id set, or
 *    SYMBOL_NOT_FOUND (not a base name: unknown, or an exported name with a
 *    _vN/_ptds/_ptsz suffix) or VERSION_NOT_SUFFICIENT, with *api_id = 0.
 * The variant: per-thread rows when 'flags' asks for per-thread (bit 1,
 * legacy bit 0 clear) and the base has any, else the legacy rows; among them
 * the largest min version not above 'cuda_version'. 'status' and 'api_id'
 * may be NULL. (What the driver returns for a NULL status pointer is the
 * caller's business; the v1 API documents CUDA_ERROR_NOT_FOUND.)
 */
int cushim_pa_lookup(const char *symbol, int cuda_version, uint64_t flags, uint32_t *api_id,
                     int *status);

#ifdef __cplusplus
}
#endif
#endif /* CUSHIM_PROCADDR_H */
