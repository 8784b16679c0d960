/*
 * standin_cuda.c - a minimal libcuda.so.1 for the CPU benchmark when the fake
 * driver (tests/fake) is not built: cuInit and a trivial cuDriverGetVersion.
 */
__attribute__((visibility("default"))) int cuInit(unsigned int flags)
{
    (void)flags;
    return 0;
}

__attribute__((visibility("default"))) int cuDriverGetVersion(int *v)
{
    if (v == 0)
        return 1;
    *v = 13000;
    return 0;
}
