/*
 * fake_cudart_other_shape.c - only in the fake runtime of the other major: its cudaProfilerStart
 * takes six arguments, a shape the headers the shim is built from do not
 * have (cudaProfilerStart(void)). A caller bound to the shim's wrapper while only
 * this copy is loaded must reach it with every argument register as it passed
 * them: the shim may never call a copy of another major through its own
 * prototype (tests/unit/rt_foreign_test.c). No CUDA header here: the prototype
 * is this file's own.
 */
#include <stdint.h>

static long shape_args[6];
static int shape_calls;

__attribute__((visibility("default"))) int cudaProfilerStart(long a, long b, long c, long d, long e, long f)
{
    shape_args[0] = a, shape_args[1] = b, shape_args[2] = c;
    shape_args[3] = d, shape_args[4] = e, shape_args[5] = f;
    shape_calls++;
    return 0;
}

/* The arguments of the last call (6 longs) and the number of calls. */
__attribute__((visibility("default"))) int fake_cudart_other_shape(long *out)
{
    for (int i = 0; i < 6; i++)
        out[i] = shape_args[i];
    return shape_calls;
}
