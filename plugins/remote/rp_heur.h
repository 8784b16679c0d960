/*
 * rp_heur.h - cublasLtMatmulAlgoGetHeuristic's answers kept in the client (rp_heur.c; docs/remote.md, "cuBLAS and
 * cuBLASLt"): a bounded table from a key of bytes - everything the answer depends on, which rp_cublas.c builds from
 * the objects it follows - to the results and their count.
 */
#ifndef RP_HEUR_H
#define RP_HEUR_H

#include <stddef.h>
#include <stdint.h>

#define RP_HEUR_ENTRIES 64       /* answers kept; the oldest is replaced                                     */
#define RP_HEUR_RESULTS 8        /* requestedAlgoCount kept at most (PyTorch asks 1)                          */
#define RP_HEUR_KEY 2048         /* key bytes at most                                                        */

/* 1 when 'key' is kept: its 'returned' results (elem bytes each, at most 'requested') copied to 'results'. */
int rp_heur_find(const void *key, size_t klen, void *results, size_t elem, int requested, int *returned);
/* An answer the server gave for 'key' kept (nothing when it does not fit). */
void rp_heur_put(const void *key, size_t klen, const void *results, size_t elem, int returned);
uint64_t rp_heur_hits(void);
void rp_heur_fork_child(void);

#endif /* RP_HEUR_H */
