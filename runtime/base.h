/*
 * base.h - what every file of the runtime may use: visibility, branch hints,
 * the hot section and fences. Declares no module; includes nothing of the
 * runtime. (docs/architecture.md, "Layers": layer 0.)
 */
#ifndef RT_BASE_H
#define RT_BASE_H

#include <stdatomic.h>

#define RT_HIDDEN __attribute__((visibility("hidden")))
#define CUSHIM_EXPORT __attribute__((visibility("default")))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The globals a hooked call reads (the clock's anchor, the lifecycle, unwind and epoch flags): all in one
   section, so they share a few lines of one page instead of one line and one page each among the rest of
   .data and .bss. A call made between stretches of the program's own work (PyTorch's Python between its CUDA
   calls) finds little of the shim in the near caches and TLBs: bench/cpu/footprint.sh counts the lines and
   pages a call touches. The linker gathers the section from every object (an orphan section of its own). */
#define RT_HOT __attribute__((section(".cushim_hot")))
/* The functions every hooked call runs, for the same reason: GCC puts them in .text.hot, which the linker
   gathers at the start of .text; each starts a cache line, so that it runs in as few lines as its code needs
   (a line costs a call ~2-3 ns in a real program: docs/benchmarks.md "The floor of any recorder"). */
#define RT_HOT_FN __attribute__((hot, aligned(64)))

/* Fences. ThreadSanitizer does not model atomic_thread_fence (GCC rejects it
   with -fsanitize=thread): there a seq_cst read-modify-write of one shared
   dummy stands in, which on x86 is the same full barrier. The dummy is a weak
   definition in every file that includes this header: the linker keeps one. */
#if defined(__SANITIZE_THREAD__)
__attribute__((weak, visibility("hidden"))) _Atomic int rt_fence_dummy;
#define RT_FENCE_SEQ_CST() ((void)atomic_fetch_add_explicit(&rt_fence_dummy, 0, memory_order_seq_cst))
#define RT_FENCE_ACQUIRE() ((void)atomic_fetch_add_explicit(&rt_fence_dummy, 0, memory_order_acq_rel))
#else
#define RT_FENCE_SEQ_CST() atomic_thread_fence(memory_order_seq_cst)
#define RT_FENCE_ACQUIRE() atomic_thread_fence(memory_order_acquire)
#endif

#endif /* RT_BASE_H */
