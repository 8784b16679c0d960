// scale.cu - the kernel rt_main.c loads as PTX (nvcc -ptx on the GPU machine).
extern "C" __global__ void scale(float *x, float k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= k;
}
