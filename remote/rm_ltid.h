/*
 * rm_ltid.h - cuBLASLt descriptors by number over remoting (docs/remote.md, "cuBLAS and cuBLASLt"): a matmul
 * descriptor, matrix layout or matmul preference is, on the wire and in the client, a number the back end gave,
 * never the library's pointer. Both sides count the Create calls of a connection the same way - every call message
 * of cublasLtMatmulDescCreate, cublasLtMatrixLayoutCreate or cublasLtMatmulPreferenceCreate the client sends is
 * the next number, in the order sent, whether it ran or not - so the client knows a descriptor's number when it
 * queues its Create, without waiting for the reply. The back end maps each number to the library's descriptor
 * (rb_cublas.c) and refuses any other value for one.
 */
#ifndef RM_LTID_H
#define RM_LTID_H

#include <stdint.h>

#define RM_LTID_BASE 0xc1d0000000000000ull   /* above every user-space address: never a real pointer */
#define RM_LTID_MASK 0xffff000000000000ull

/* The number of the k-th Create of a connection (k from 0). */
static inline uint64_t rm_ltid(uint64_t k)
{
    return RM_LTID_BASE + k + 1;
}

static inline int rm_ltid_is(uint64_t v)
{
    return (v & RM_LTID_MASK) == RM_LTID_BASE && v != RM_LTID_BASE;
}

#endif /* RM_LTID_H */
