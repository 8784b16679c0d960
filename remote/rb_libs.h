/*
 * rb_libs.h - the libraries a back end serves besides the driver (rb_libs.c).
 */
#ifndef RB_LIBS_H
#define RB_LIBS_H

#include <stdint.h>

/* Loads the runtime of the tree's major (or $CUSHIM_SERVE_CUDART) and NVML, when present. */
void rb_load_libraries(uint32_t cuda_version, int verbose);
/* Loads cuBLASLt and cuBLAS of that major (or $CUSHIM_SERVE_CUBLASLT, $CUSHIM_SERVE_CUBLAS) once, at the first
   call of theirs (rm_backend.c); after rb_load_libraries. */
void rb_load_blas(void);
/* Loads libnccl.so.2 (or $CUSHIM_SERVE_NCCL) once, at the client's first NCCL call (rm_backend.c). */
void rb_load_nccl(void);

#endif /* RB_LIBS_H */
