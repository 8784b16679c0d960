/*
 * rp_blasargs.h - a cuBLAS or cuBLASLt call's parameters by name, and the argument checks cuBLAS makes before it
 * runs a GEMM or a cuBLASLt Create, made in the client (rp_blasargs.c; docs/remote.md, "cuBLAS and cuBLASLt").
 */
#ifndef RP_BLASARGS_H
#define RP_BLASARGS_H

#include <stdint.h>

#include "cushim/cushim.h"

void rba_init(const cushim_host *host);
/* Parameter 'name' of 'a' (its index in *index when not NULL), or NULL. */
const cushim_param_info *rba_param(const cushim_api_info *a, const char *name, uint32_t *index);
/* A by-value parameter (at most 8 bytes, sign-extended from 4). 1 when the API has it. */
int rba_value(const cushim_api_info *a, const void *params, const char *name, int64_t *v);
/* A pointer parameter's value (NULL when the API has none of that name). */
void *rba_ptr(const cushim_api_info *a, const void *params, const char *name);
/* The bytes of a scalar of cudaDataType 'type' by its name (CUDA_R_16F 2, CUDA_C_64F 16...); 0: unknown. */
uint32_t rba_dtype_bytes(const cushim_param_info *p, int64_t type);
/* The scalar of cublasGemmEx and its batched forms: the compute type's, doubled when C is complex; 0: unknown. */
uint32_t rba_compute_bytes(const cushim_api_info *a, const void *params);
/* An SGEMM/DGEMM (batched: strided batched) whose arguments pass the reference BLAS's checks. */
int rba_gemm_ok(const cushim_api_info *a, const void *params, int batched);
/* ... and for GemmEx, its types named and its scalar's size known. */
int rba_gemm_ex_ok(const cushim_api_info *a, const void *params, int batched);
/* A cuBLASLt Create (RBA_DESC, RBA_LAYOUT, RBA_PREF) whose arguments pass what the client can check. */
enum { RBA_DESC, RBA_LAYOUT, RBA_PREF };
int rba_create_ok(const cushim_api_info *a, const void *params, int what);

#endif /* RP_BLASARGS_H */
