/*
 * wrap.h - the body of every interposed CUDA function (the hot path).
 *
 * Included by wrappers_driver.c / wrappers_runtime.c before the generated
 * .inc files. Per API:
 *
 *   NAME        exported; if the slot has no chain and a resolved real
 *               function, tail-call it (two loads, two tests, one jmp);
 *               otherwise call the slow path.
 *   rt_slow_NAME  noinline, cold: resolve the real function once, count,
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
    __attribute__((noinline, cold)) static RET rt_slow_##NAME PROTO                               \
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
        if (RT_LIKELY(atomic_load_explicit(&rt_slots[ID].chain, memory_order_relaxed) == NULL)) { \
            void *rt_real_ = atomic_load_explicit(&rt_slots[ID].real, memory_order_relaxed);      \
            if (RT_LIKELY(rt_real_ != NULL))                                                      \
                return ((RET(*) PROTO)rt_real_)ARGS;                                              \
        }                                                                                         \
        return rt_slow_##NAME ARGS;                                                               \
    }

#endif /* RT_WRAP_H */
