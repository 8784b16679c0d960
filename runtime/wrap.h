/*
 * wrap.h - the body of every interposed CUDA function (the hot path).
 *
 * Included by wrappers_driver.c / wrappers_runtime.c before the generated
 * .inc files. Per API:
 *
 *   NAME        exported; tail-calls rt_fast[ID]: the real function when it
 *               is resolved and the slot has no chain (no hook, no counter),
 *               else rt_slow_NAME (one load, one indirect jmp).
 *   rt_slow_NAME  hidden, noinline, cold: resolve the real function once, count,
 *               and when hooks are enabled (and this thread is not already
 *               inside a hooked call) build the call frame: params struct,
 *               pre hooks, real call through UNPACK, post hooks.
 *
 * See docs/runtime.md for the disassembly of the fast path.
 */
#ifndef RT_WRAP_H
#define RT_WRAP_H

#include <string.h>

#include "cushim_params.h"
#include "rt_internal.h"

#define RT_STRIP_(...) __VA_ARGS__
#define RT_STRIP(args) RT_STRIP_ args

/* The value returned when the real function cannot be found. */
#define RT_FAIL_CUSHIM_RET_CURESULT(RET, v) ((v) = (RET)CUDA_ERROR_NOT_FOUND)
#define RT_FAIL_CUSHIM_RET_CUDAERROR(RET, v) ((v) = (RET)cudaErrorSymbolNotFound)
#define RT_FAIL_CUSHIM_RET_OTHER(RET, v) memset(&(v), 0, sizeof(v))

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK)                                   \
    __attribute__((noinline, cold)) RET rt_slow_##NAME PROTO                                      \
    {                                                                                             \
        RET rt_ret_;                                                                              \
        rt_frame rt_f_;                                                                           \
        void *rt_real_ = rt_enter(ID, &rt_f_);                                                    \
        if (rt_f_.mode == RT_MODE_FAIL) {                                                         \
            RT_FAIL_##RETKIND(RET, rt_ret_);                                                      \
            return rt_ret_;                                                                       \
        }                                                                                         \
        if (rt_f_.mode == RT_MODE_DIRECT)                                                         \
            return ((RET(*) PROTO)rt_real_)ARGS;                                                  \
        cushim_params_##NAME rt_p_ = { RT_STRIP(ARGS) };                                          \
        memset(&rt_ret_, 0, sizeof rt_ret_);                                                      \
        cushim_call rt_c_ = { ID, 0, NULL, &rt_p_, &rt_ret_, rt_real_ };                          \
        if (rt_pre(&rt_c_, &rt_f_) == 0) {                                                        \
            cushim_params_##NAME *p = &rt_p_;                                                     \
            (void)p;                                                                              \
            rt_ret_ = ((RET(*) PROTO)rt_c_.real)UNPACK;                                           \
        }                                                                                         \
        rt_post(&rt_c_, &rt_f_);                                                                  \
        return rt_ret_;                                                                           \
    }                                                                                             \
    CUSHIM_EXPORT RET NAME PROTO                                                                  \
    {                                                                                             \
        return ((RET(*) PROTO)atomic_load_explicit(&rt_fast[ID], memory_order_relaxed))ARGS;     \
    }

#endif /* RT_WRAP_H */
