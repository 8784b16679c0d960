/*
 * wrap.h - the body of every interposed CUDA function (the hot path).
 *
 * Included by wrappers_driver.c / wrappers_runtime.c before the generated
 * .inc files. Per API:
 *
 *   NAME        exported; tail-calls rt_slots[ID].fast: the real function when it
 *               is resolved and the slot has no chain (no hook, no counter),
 *               rt_first_NAME before the real function is known (first_entry.c:
 *               resolves it, then jumps on with the registers untouched),
 *               else rt_slow_NAME (one load, one indirect jmp).
 *   rt_slow_NAME  hidden, noinline, next to NAME (one page for a hooked call's
 *               two: bench/cpu/footprint.sh), reached only when a hook, a counter or
 *               something unusual applies (its hooked case runs straight down:
 *               fewer code lines, docs/benchmarks.md): the params struct is built, then
 *               rt_enter decides (resolve once, count, fail closed, straight
 *               through when no hook applies) and for a hooked call fills the
 *               call frame and runs the pre hooks; the real function is called
 *               through UNPACK (the possibly modified params) unless a pre hook
 *               skipped it; rt_post runs the post hooks and pops the frame.
 *
 * The frame is a cleanup variable: rt_end pops it if the block is left with the
 * frame still pushed - a C++ exception or thread cancellation unwinding through
 * it (these files are compiled with -fexceptions for that; dispatch.c says how
 * a longjmp is seen).
 * See docs/runtime.md for the disassembly of the fast path.
 */
#ifndef RT_WRAP_H
#define RT_WRAP_H

#include <string.h>

#include "cushim_params.h"
#include "base.h"
#include "dispatch.h"
#include "libs.h"
#include "slots.h"

#define RT_STRIP_(...) __VA_ARGS__
#define RT_STRIP(args) RT_STRIP_ args

/* The value returned when no real function is called: the real function does
   not exist (RT_MODE_FAIL), or the shim failed closed (RT_MODE_FAIL_INIT). The
   values are the library's descriptor's 'fail' and 'fail-init' (libs.c), written
   in the return value's own size; a return type that is no status (RETKIND
   CUSHIM_RET_OTHER) gets zeros. Generic over the status kinds: a new library
   needs no line here. */
#define RT_FAIL(RETKIND, v, mode) lb_fail_write((RETKIND), (mode), &(v), sizeof(v))

/* The export is one load and one jump whatever the build: sanitizer instrumentation
   (ASan's shadow check, UBSan's pointer-overflow check, TSan's atomic-load call) would use argument registers that
   this build's prototype does not know about, and a caller of a copy of another
   major may pass arguments in them (first_entry.c). */
#define RT_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK)                                   \
    __attribute__((noinline)) RET rt_slow_##NAME PROTO                                            \
    {                                                                                             \
        RET rt_ret_;                                                                              \
        memset(&rt_ret_, 0, sizeof rt_ret_); /* what post hooks see of a skipped call */          \
        cushim_params_##NAME rt_p_ = { RT_STRIP(ARGS) };                                          \
        rt_frame rt_f_ __attribute__((cleanup(rt_frame_cleanup)));                                \
        int rt_mode_ = rt_enter(&rt_f_, ID, &rt_p_, &rt_ret_);                                    \
        if (RT_LIKELY(rt_mode_ == RT_MODE_HOOKED)) { /* the usual case here: straight down */     \
            cushim_params_##NAME *p = &rt_p_;                                                     \
            (void)p;                                                                              \
            rt_ret_ = ((RET(*) PROTO)rt_f_.call.real)UNPACK;                                      \
        } else if (rt_mode_ == RT_MODE_DIRECT) {                                                  \
            return ((RET(*) PROTO)rt_f_.call.real)ARGS;                                           \
        } else if (rt_mode_ != RT_MODE_SKIPPED) {                                                 \
            RT_FAIL(RETKIND, rt_ret_, rt_mode_);                                                  \
            return rt_ret_;                                                                       \
        }                                                                                         \
        rt_post(&rt_f_);                                                                          \
        return rt_ret_;                                                                           \
    }                                                                                             \
    CUSHIM_EXPORT RT_NO_SANITIZE RET NAME PROTO                                                   \
    {                                                                                             \
        return ((RET(*) PROTO)atomic_load_explicit(&rt_slots[ID].fast, memory_order_relaxed))ARGS; \
    }                                                                                             \
    RT_FIRST_ENTRY(ID, NAME)

/* rt_first_NAME: rt_slots[ID].fast until the real function is known; first_entry.c says why. */
#define RT_FIRST_ENTRY(ID, NAME)                                                                  \
    __asm__("    .text\n"                                                                         \
            "    .p2align 3\n"                                                                    \
            "    .globl rt_first_" #NAME "\n"                                                     \
            "    .hidden rt_first_" #NAME "\n"                                                    \
            "    .type rt_first_" #NAME ", @function\n"                                           \
            "rt_first_" #NAME ":\n"                                                               \
            "    endbr64\n"                                                                       \
            "    movl $" #ID ", %r11d\n"                                                          \
            "    jmp rt_first_common\n"                                                           \
            "    .size rt_first_" #NAME ", .-rt_first_" #NAME "\n");

#endif /* RT_WRAP_H */
