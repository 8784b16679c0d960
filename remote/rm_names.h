/*
 * rm_names.h - an API's id and a result code by name, read from the shim's metadata through the host table:
 * what the client plugin (plugins/remote) and the server's back end (rb_*.c) both look up at init (rm_names.c).
 */
#ifndef RM_NAMES_H
#define RM_NAMES_H

#include <stdint.h>

#include "cushim/cushim.h"

/* The id of the API 'name', or 'missing' when the tree has none of that name. */
uint32_t rm_api_id(const cushim_host *h, const char *name, uint32_t missing);
/* The code of the result 'name' (CUDA_ERROR_INVALID_VALUE, cudaErrorMemoryAllocation, CUBLAS_STATUS_...), or
   'dflt' when the tree has none of that name. */
int32_t rm_result_code(const cushim_host *h, const char *name, int32_t dflt);

#endif /* RM_NAMES_H */
