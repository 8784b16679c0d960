/*
 * kern.cu - kernels that app_driver loads through the driver API.
 *
 * Built at compile time into kern.cubin (sm_90 SASS) and kern.ptx (JIT at
 * load); app_driver reads both files and passes them to cuModuleLoadData.
 */
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

extern "C" __global__ void add_u32(unsigned *p, unsigned v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += v;
}
