/*
 * e2e_remote_loss.c - a client of API forwarding whose server goes away (run_remote.sh, docs/remote.md).
 *
 * cuInit and cuDeviceGetCount are answered by the server; the program says "ready" and waits until the file
 * argv[1] exists (the test kills the server's back end meanwhile, or this program). Then the next call the
 * server must answer (the primary context's state: it can change, so it is never answered from the client's
 * cache) must fail with CUDA_ERROR_DEVICE_UNAVAILABLE within a few seconds - no hang - and so must every later
 * one, cached answers included.
 */
#include <cuda.h>
#include <stdio.h>
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
    int n = -1;
    if (argc != 2 || cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS || n <= 0) {
        fprintf(stderr, "e2e_remote_loss: the server did not answer (devices %d)\n", n);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 2000 && access(argv[1], F_OK) != 0; i++)
        usleep(10000);
    double t0 = now();
    unsigned flags = 0;
    int active = 0;
    CUresult r1 = cuDevicePrimaryCtxGetState(0, &flags, &active), r2 = cuInit(0), r3 = cuDeviceGetCount(&n);
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
