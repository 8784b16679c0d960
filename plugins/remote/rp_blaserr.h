/*
 * rp_blaserr.h - cuBLAS's words for the remoting's errors (rp_blaserr.c; docs/remote.md, "cuBLAS and cuBLASLt").
 */
#ifndef RP_BLASERR_H
#define RP_BLASERR_H

#include <stdint.h>

#include "cushim/cushim.h"

void rp_blaserr_init(const cushim_host *host);
/* A driver code of the remoting (CUDA_ERROR_NOT_SUPPORTED...) as a cublasStatus_t. */
int32_t rp_cublas_error(int32_t driver_code);

#endif /* RP_BLASERR_H */
