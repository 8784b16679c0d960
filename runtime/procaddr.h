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
#define CUSHIM_PA_RESULT_NOT_FOUND 500        /* CUDA_ERROR_NOT_FOUND */
#define CUSHIM_PA_FLAG_LEGACY_STREAM 1ull     /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */
#define CUSHIM_PA_FLAG_PER_THREAD 2ull        /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define CUSHIM_PA_STATUS_SUCCESS 0            /* CU_GET_PROC_ADDRESS_SUCCESS */
#define CUSHIM_PA_STATUS_SYMBOL_NOT_FOUND 1
#define CUSHIM_PA_STATUS_VERSION_NOT_SUFFICIENT 2

/*
 * The export cuGetProcAddress(symbol, cuda_version, flags) returns, derived
 * from the table: the per-thread variants when 'flags' asks for per-thread
 * (bit 1, legacy bit clear) and the base has any, else the legacy variants;
 * among them the one with the largest min version not above 'cuda_version'.
 * Per-thread asked but no per-thread variant old enough: the legacy answer.
 * Returns CUSHIM_PA_RESULT_SUCCESS with *api_id set, or
 * CUSHIM_PA_RESULT_NOT_FOUND with *api_id = 0 and *status SYMBOL_NOT_FOUND
 * (unknown base) or VERSION_NOT_SUFFICIENT (all variants newer). 'status'
 * and 'api_id' may be NULL.
 */
int cushim_pa_lookup(const char *symbol, int cuda_version, uint64_t flags, uint32_t *api_id,
                     int *status);

#ifdef __cplusplus
}
#endif
#endif /* CUSHIM_PROCADDR_H */
