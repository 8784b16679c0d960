/*
 * e2e_remote_fast.c - the remoting's fast paths end to end (run_remote.sh, docs/remote.md "Fast paths"):
 *
 *   copies CHUNK [LAST]  HtoD then DtoH of sizes around the client's chunk size (CHUNK-1, CHUNK, CHUNK+1,
 *                  3*CHUNK+5, at an offset into the allocation too) and of LAST bytes (256 MiB): every byte back as sent, nothing written
 *                  past the host buffer.
 *   pinned         HtoD then DtoH between pinned host memory (cuMemAllocHost, cuMemHostAlloc) and the device, 1 MiB,
 *                  8 MiB + 1 and 24 MiB + 5 at offsets 0 and 4093 into the blocks, synchronous and on a stream
 *                  (cuMemcpy*Async, then cuStreamSynchronize): byte-exact, nothing written
 *                  past; cuMemFreeHost of memory that is not pinned fails; 300 blocks allocated and freed (more
 *                  than a back end's regions at once: their slots are reused). Through the shared area each
 *                  copy is one call (zero copy: stats=1 counts them).
 *   batch          3000 cuMemsetD32Async to one word in order (several batches: the last value wins); a memset
 *                  of an invalid address returns CUDA_SUCCESS and its error comes from the next synchronous call
 *                  (which ran), not from the one after; a forked child does not send its parent's queued calls.
 *   launches N     N launches of a kernel with many pointer arguments (over 1 KiB each on the wire), then
 *                  cuCtxSynchronize: the batches are bounded in bytes, so they are several (stats=1 says how many).
 *   threads        each client thread has its own current context on the server: a new thread has none while
 *                  the main thread's is set, and a thread that clears its own leaves the main thread's.
 *   exit N         N cuMemsetD32Async and exit with no synchronising call (the server's counts must show N).
 *   cache          every immutable query asked twice; prints the answers (equal locally and remotely) and how
 *                  many times the server must have been asked if only what cannot change was kept.
 * Run locally against the fake driver or remotely; 'batch' is remote only (locally the error comes at once).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x)                                                                      \
    do {                                                                           \
        CUresult r_ = (x);                                                         \
        if (r_ != CUDA_SUCCESS) {                                                  \
            fprintf(stderr, "e2e_remote_fast: %s: %d (line %d)\n", #x, (int)r_, __LINE__); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static CUcontext setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    return ctx;
}

static int copies(size_t chunk, size_t last)
{
    size_t sizes[] = { chunk - 1, chunk, chunk + 1, 3 * chunk + 5, last };
    size_t max = sizes[4], guard = 64;
    unsigned char *src = malloc(max), *dst = malloc(max + guard);
    CUdeviceptr d;
    if (src == NULL || dst == NULL)
        return 1;
    setup();
    CK(cuMemAlloc(&d, max + 4096));
    for (size_t i = 0; i < max; i++)
        src[i] = (unsigned char)(i * 2654435761u >> 13);
    for (int k = 0; k < 5; k++) {
        for (size_t off = 0; off <= 4096; off += 4096 - 3 * (k != 4)) {   /* at 0, then at an odd offset */
            size_t n = sizes[k];
            if (off + n > max + 4096)
                break;
            memset(dst, 0xa5, n + guard);
            src[0] ^= (unsigned char)k;   /* each size sees other bytes */
            CK(cuMemcpyHtoD(d + off, src, n));
            CK(cuMemcpyDtoH(dst, d + off, n));
            if (memcmp(src, dst, n) != 0) {
                size_t i = 0;
                while (src[i] == dst[i])
                    i++;
                fprintf(stderr, "e2e_remote_fast: %zu bytes at offset %zu: byte %zu differs\n", n, off, i);
                return 1;
            }
            for (size_t i = n; i < n + guard; i++)
                if (dst[i] != 0xa5) {
                    fprintf(stderr, "e2e_remote_fast: %zu bytes: written past the buffer at %zu\n", n, i);
                    return 1;
                }
            printf("copied %zu bytes at offset %zu both ways\n", n, off);
            if (k == 4)
                break;
        }
    }
    CK(cuMemFree(d));
    free(src);
    free(dst);
    return 0;
}

static int batch(void)
{
    CUdeviceptr d;
    unsigned v = 0;
    setup();
    CK(cuMemAlloc(&d, 4096));
    for (unsigned i = 1; i <= 3000; i++)
        CK(cuMemsetD32Async(d, i, 1, NULL));
    CK(cuMemcpyDtoH(&v, d, 4));
    if (v != 3000) {
        fprintf(stderr, "e2e_remote_fast: after 3000 ordered memsets the word holds %u\n", v);
        return 1;
    }
    /* an error of a batched call: reported by the next synchronous call, which still ran */
    CUresult a = cuMemsetD32Async((CUdeviceptr)16, 1, 1, NULL);
    CUresult b = cuMemsetD32Async(d, 7, 1, NULL);
    v = 0;
    CUresult c = cuMemcpyDtoH(&v, d, 4);
    CUresult e = cuCtxSynchronize();
    if (a != CUDA_SUCCESS || b != CUDA_SUCCESS || c != CUDA_ERROR_INVALID_VALUE || v != 7 || e != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_remote_fast: batched error: queued %d %d, next sync call %d (copied %u), then %d\n",
                (int)a, (int)b, (int)c, v, (int)e);
        return 1;
    }
    /* fork: the parent's queued calls stay the parent's */
    CK(cuMemsetD32Async(d, 11, 1, NULL));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int n = 0;
        CUresult r = cuInit(0), q = cuDeviceGetCount(&n);
        if (r != CUDA_SUCCESS || q != CUDA_SUCCESS || n <= 0) {
            fprintf(stderr, "e2e_remote_fast: child of fork: cuInit %d, cuDeviceGetCount %d\n", (int)r, (int)q);
            _exit(1);
        }
        _exit(0);
    }
    int st = 1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "e2e_remote_fast: the child of fork failed\n");
        return 1;
    }
    CK(cuMemcpyDtoH(&v, d, 4));
    if (v != 11) {
        fprintf(stderr, "e2e_remote_fast: the memset queued before fork left %u\n", v);
        return 1;
    }
    CK(cuMemFree(d));
    printf("batched: order kept, error at the next synchronous call, fork clean\n");
    return 0;
}

static int launches(int n)
{
    char name[256] = "wide__";
    void *args[200];
    CUdeviceptr vals[200];
    CUmodule mod;
    CUfunction fn;
    setup();
    memset(name + 6, 'p', 200);   /* the fake driver's parameter spelling: 200 pointers */
    name[206] = '\0';
    for (int i = 0; i < 200; i++) {
        vals[i] = (CUdeviceptr)(0x1000 + i);
        args[i] = &vals[i];
    }
    CK(cuModuleLoadData(&mod, ".version 9.0\n.target sm_75\n.address_size 64\n"));
    CK(cuModuleGetFunction(&fn, mod, name));
    for (int i = 0; i < n; i++)
        CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuModuleUnload(mod));
    printf("launched %d\n", n);
    return 0;
}

static CUcontext th_primary;
static int th_bad;

static void *th_fresh(void *arg)
{
    CUcontext cur = (CUcontext)arg;
    if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != NULL) {
        fprintf(stderr, "e2e_remote_fast: a new thread's current context is %p, not none\n", (void *)cur);
        th_bad = 1;
    }
    return NULL;
}

static void *th_clear(void *arg)
{
    CUcontext cur = NULL;
    (void)arg;
    if (cuCtxSetCurrent(th_primary) != CUDA_SUCCESS || cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != th_primary ||
        cuCtxSetCurrent(NULL) != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_remote_fast: a thread could not set its own context\n");
        th_bad = 1;
    }
    return NULL;
}

static int threads(void)
{
    pthread_t t;
    CUcontext cur = NULL;
    th_primary = setup();
    if (pthread_create(&t, NULL, th_fresh, (void *)&cur) != 0 || pthread_join(t, NULL) != 0 ||
        pthread_create(&t, NULL, th_clear, NULL) != 0 || pthread_join(t, NULL) != 0 || th_bad)
        return 1;
    CK(cuCtxGetCurrent(&cur));
    if (cur != th_primary) {
        fprintf(stderr, "e2e_remote_fast: the main thread's context became %p after another thread cleared its own\n",
                (void *)cur);
        return 1;
    }
    printf("threads: each has its own current context\n");
    return 0;
}

static int at_exit(int n)
{
    CUdeviceptr d;
    setup();
    CK(cuMemAlloc(&d, 4096));
    for (int i = 0; i < n; i++)
        CK(cuMemsetD32Async(d, (unsigned)i, 1, NULL));
    return 0;   /* no synchronisation: the queued calls must still reach the server */
}

static int cache(void)
{
    int count = 0, version = 0, asks_attr = 0, asks_name = 0, asks_other = 0;
    CUdevice dev;
    setup();
    for (int round = 0; round < 2; round++) {
        char name[256];
        CUuuid uuid;
        size_t total = 0;
        CK(cuDeviceGetCount(&count));
        CK(cuDriverGetVersion(&version));
        CK(cuDeviceGet(&dev, 0));
        CK(cuDeviceGetName(name, sizeof name, dev));
        CK(cuDeviceGetUuid_v2(&uuid, dev));
        CK(cuDeviceTotalMem(&total, dev));
        asks_other += round == 0 ? 6 : 0;
        printf("count %d version %d name '%s' total %zu uuid", count, version, name, total);
        for (int i = 0; i < 16; i++)
            printf("%02x", (unsigned char)uuid.bytes[i]);
        printf("\n");
        for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
            int v = -1;
            CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev);
            printf("attr %d: %d %d\n", a, (int)r, v);
            /* asked again: a failure, and the compute mode (nvidia-smi can change it) */
            asks_attr += round == 0 || r != CUDA_SUCCESS || a == CU_DEVICE_ATTRIBUTE_COMPUTE_MODE;
        }
        for (int e = 0; e < 1000; e++) {
            const char *s = NULL, *t = NULL;
            CUresult r = cuGetErrorName((CUresult)e, &s), q = cuGetErrorString((CUresult)e, &t);
            if (r == CUDA_SUCCESS || round == 0)
                printf("error %d: %d %s / %d %s\n", e, (int)r, s ? s : "-", (int)q, t ? t : "-");
            asks_name += round == 0 || r != CUDA_SUCCESS;
        }
    }
    printf("expect cuDeviceGetAttribute %d\nexpect cuGetErrorName %d\nexpect cuDeviceGetCount 1\n", asks_attr,
           asks_name);
    (void)asks_other;
    return 0;
}

static int pinned(void)
{
    size_t sizes[] = { (size_t)1 << 20, ((size_t)8 << 20) + 1, ((size_t)24 << 20) + 5 }, max = (size_t)32 << 20;
    size_t guard = 64;
    unsigned char *src, *dst, local[16];
    CUdeviceptr d;
    setup();
    CK(cuMemAlloc(&d, max));
    CK(cuMemAllocHost((void **)&src, max));
    CK(cuMemHostAlloc((void **)&dst, max, CU_MEMHOSTALLOC_PORTABLE));
    for (size_t i = 0; i < max; i++)
        src[i] = (unsigned char)(i * 2654435761u >> 11);
    for (int k = 0; k < 3; k++)
        for (size_t off = 0; off <= 4093; off += 4093) {
            size_t n = sizes[k];
            memset(dst + off, 0xa5, n + guard);
            src[off] ^= (unsigned char)(k + 1);
            CK(cuMemcpyHtoD(d, src + off, n));
            CK(cuMemcpyDtoH(dst + off, d, n));
            if (memcmp(src + off, dst + off, n) != 0) {
                fprintf(stderr, "e2e_remote_fast: pinned, %zu bytes at offset %zu differ\n", n, off);
                return 1;
            }
            for (size_t i = off + n; i < off + n + guard; i++)
                if (dst[i] != 0xa5) {
                    fprintf(stderr, "e2e_remote_fast: pinned, %zu bytes: written past at %zu\n", n, i);
                    return 1;
                }
            printf("pinned: copied %zu bytes at offset %zu both ways\n", n, off);
            /* the same on a stream: the program synchronises before it reads */
            memset(dst + off, 0xa5, n + guard);
            src[off] ^= 0x80;
            CK(cuMemcpyHtoDAsync(d, src + off, n, NULL));
            CK(cuMemcpyDtoHAsync(dst + off, d, n, NULL));
            CK(cuStreamSynchronize(NULL));
            if (memcmp(src + off, dst + off, n) != 0 || dst[off + n] != 0xa5) {
                fprintf(stderr, "e2e_remote_fast: pinned, on a stream, %zu bytes at offset %zu differ\n", n, off);
                return 1;
            }
            printf("pinned: copied %zu bytes at offset %zu both ways on a stream\n", n, off);
        }
    /* a forked child writes its copy of the pinned memory: the parent's stays as it was (fork's copy-on-write) */
    unsigned char before = src[100];
    pid_t child = fork();
    if (child == 0) {
        src[100] = (unsigned char)(before + 1);
        _exit(0);
    }
    int st = -1;
    waitpid(child, &st, 0);
    printf("pinned: a forked child's write %s the parent's memory\n", src[100] == before ? "left" : "changed");
    printf("cuMemFreeHost of memory not pinned: %d\n", (int)cuMemFreeHost(local));
    CK(cuMemFreeHost(src));
    CK(cuMemFreeHost(dst));
    for (int i = 0; i < 300; i++) {
        void *p;
        CK(cuMemAllocHost(&p, 4096));
        memset(p, i, 4096);
        CK(cuMemFreeHost(p));
    }
    CK(cuMemFree(d));
    printf("pinned: 300 blocks allocated and freed\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "copies") == 0)
        return copies(strtoul(argv[2], NULL, 0), argc >= 4 ? strtoul(argv[3], NULL, 0) : (size_t)256 << 20);
    if (argc >= 2 && strcmp(argv[1], "batch") == 0)
        return batch();
    if (argc >= 2 && strcmp(argv[1], "pinned") == 0)
        return pinned();
    if (argc >= 3 && strcmp(argv[1], "launches") == 0)
        return launches(atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "threads") == 0)
        return threads();
    if (argc >= 3 && strcmp(argv[1], "exit") == 0)
        return at_exit(atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "cache") == 0)
        return cache();
    fprintf(stderr, "usage: e2e_remote_fast copies CHUNK | pinned | batch | launches N | threads | exit N | cache\n");
    return 2;
}
