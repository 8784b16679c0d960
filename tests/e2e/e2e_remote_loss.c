/*
 * e2e_remote_loss.c - a client of API forwarding whose server goes away (run_remote.sh, docs/remote.md).
 *
 * cuInit and cuDeviceGetCount are answered by the server; the program says "ready" and waits until the file
 * argv[1] exists (the test kills the server's back end meanwhile, or this program). Then the next call the
 * server must answer (the primary context's state: it can change, so it is never answered from the client's
 * cache) must fail with CUDA_ERROR_DEVICE_UNAVAILABLE within a few seconds - no hang - and so must every later
 * one, cached answers included.
 *
 * With "copy" after the file (argv[2]), the program copies 4 MiB to and from the device in a loop until the file
 * exists (through the shared area when the server is on this host): the back end, or this program, dies in the
 * middle of copies, and the copy that finds the server gone must fail the same way. With "sync" the loop is of
 * cuCtxSynchronize (a synchronous round trip each: the doorbell of the shared area when there is one).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int n = -1, copy = argc == 3 && strcmp(argv[2], "copy") == 0, sync = argc == 3 && strcmp(argv[2], "sync") == 0;
    size_t bytes = 4u << 20;
    CUcontext ctx;
    CUdeviceptr d = 0;
    unsigned char *h = malloc(bytes);
    if ((argc != 2 && !copy && !sync) || h == NULL || cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS ||
        n <= 0 || ((copy || sync) && (cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
                 cuMemAlloc(&d, bytes) != CUDA_SUCCESS))) {
        fprintf(stderr, "e2e_remote_loss: the server did not answer (devices %d)\n", n);
        return 1;
    }
    memset(h, 0x5a, bytes);
    printf("ready\n");
    fflush(stdout);
    double t0 = now();
    CUresult r1 = CUDA_SUCCESS, r2, r3;
    double start = now();
    while (now() - start < 20.0 && access(argv[1], F_OK) != 0 && r1 == CUDA_SUCCESS) {
        t0 = now();
        if (sync)
            r1 = cuCtxSynchronize();
        else if (!copy)
            usleep(10000);
        else if ((r1 = cuMemcpyHtoD(d, h, bytes)) == CUDA_SUCCESS)
            r1 = cuMemcpyDtoH(h, d, bytes);
    }
    unsigned flags = 0;
    int active = 0;
    if (r1 == CUDA_SUCCESS) {
        t0 = now();
        r1 = copy ? cuMemcpyDtoH(h, d, bytes) : sync ? cuCtxSynchronize() : cuDevicePrimaryCtxGetState(0, &flags, &active);
    }
    r2 = cuInit(0);
    r3 = cuDeviceGetCount(&n);
    double dt = now() - t0;
    if (r1 != CUDA_ERROR_DEVICE_UNAVAILABLE || r2 != CUDA_ERROR_DEVICE_UNAVAILABLE ||
        r3 != CUDA_ERROR_DEVICE_UNAVAILABLE || dt > 5.0) {
        fprintf(stderr, "e2e_remote_loss: after the server went away: %d, %d, %d in %.3f s\n", (int)r1, (int)r2,
                (int)r3, dt);
        return 1;
    }
    printf("lost: %d in %.3f s\n", (int)r1, dt);
    return 0;
}
