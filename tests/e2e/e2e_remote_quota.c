/*
 * e2e_remote_quota.c - a client of a server with a memory quota (run_remote_deploy.sh, docs/remote-deploy.md).
 *
 * Usage: e2e_remote_quota BLOCK_BYTES [WAIT_FILE]
 * Prints what cuMemGetInfo says of device 0 ("total T free F"), then allocates BLOCK_BYTES blocks until one
 * fails (at most 1024) and prints "allocated N then R" (R the failing call's CUresult: 2 is
 * CUDA_ERROR_OUT_OF_MEMORY), keeps them until WAIT_FILE exists (another client runs meanwhile), frees them and
 * exits 0; 1 when the driver (the server) does not answer.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    size_t free_b = 0, total_b = 0, block = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
    static CUdeviceptr p[1024];
    if (block == 0 || cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuMemGetInfo(&free_b, &total_b) != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_remote_quota: no device (usage: e2e_remote_quota BLOCK_BYTES [WAIT_FILE])\n");
        return 1;
    }
    printf("total %zu free %zu\n", total_b, free_b);
    int n = 0;
    CUresult r = CUDA_SUCCESS;
    while (n < 1024 && (r = cuMemAlloc(&p[n], block)) == CUDA_SUCCESS)
        n++;
    printf("allocated %d then %d\n", n, (int)r);
    fflush(stdout);
    for (int i = 0; argc > 2 && i < 3000 && access(argv[2], F_OK) != 0; i++)
        usleep(10000);
    for (int i = 0; i < n; i++)
        cuMemFree(p[i]);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
