/*
 * ml_caller.h - which library made an allocation: the first caller frame
 * outside the shim, the plugins and the CUDA driver and runtime libraries
 * (libcuda*, libcudart*), named by its object's file (basename cut after
 * ".so": libc10_cuda.so, libcublasLt.so, libnccl.so), "(program)" for the main
 * executable, "(unknown)" when the stack has no such frame within
 * ML_CALLER_DEPTH frames or its frame has no object (JIT code). Taken only on
 * allocation calls (memlimit.c); host-free (the unit test links it alone).
 *
 * The unwinder (_Unwind_Backtrace, libgcc_s) walks the stack from the hook up
 * and stops at the first frame not skipped: deep stacks (Python's) cost no
 * more than their top. Each return address is classified once (dladdr1) and
 * kept in a small direct-mapped cache by address, under one mutex never held
 * across anything but dladdr1. ml_caller_init makes the first walk, so none
 * inside a hook reads unwind tables for the first time or loads a library.
 */
#ifndef ML_CALLER_H
#define ML_CALLER_H

#define ML_CALLER_DEPTH 48     /* frames walked at most                        */
#define ML_CALLER_NAMES 256    /* distinct names kept; more read "(unknown)"   */
#define ML_CALLER_UNKNOWN 0    /* name ids 0 and 1 are fixed                   */
#define ML_CALLER_PROGRAM 1

/* Skip frames of the objects holding 'addrs' (any address inside each: the shim, this plugin), besides the
   CUDA libraries skipped by name. Primes the unwinder. Call once, before the first ml_caller. */
void ml_caller_init(const void *const *addrs, int n);
/* The name id of the library that called into the CUDA library the calling hook interposes. */
int ml_caller(void);
/* The name of id 'id' ("(unknown)" for an id never given). */
const char *ml_caller_name(int id);
/* After fork(), in the child: the mutex may have been held by another thread of the parent. */
void ml_caller_fork_child(void);

#endif
