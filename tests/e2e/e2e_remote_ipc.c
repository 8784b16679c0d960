/*
 * e2e_remote_ipc.c - CUDA IPC between two processes, as torch.multiprocessing shares a CUDA tensor
 * (docs/remote.md, "IPC"); run locally on the fake driver (FAKE_CUDA_IPC=1) and as clients of one cushim-serve
 * (run_remote_ipc.sh).
 *
 *   e2e_remote_ipc export FILE   device memory filled with a pattern, its handle and an interprocess event's handle
 *                                written to FILE and FILE.event (whole, then renamed); then waits for FILE.done
 *                                and prints what the buffer holds (an importer wrote into it)
 *   e2e_remote_ipc import FILE   opens the handles: prints each result; with the memory open, its pattern's sum,
 *                                then writes a marker into it and closes it
 *   e2e_remote_ipc bogus         opens a handle no process exported: prints the result
 *   e2e_remote_ipc fd, rt-fd     exports memory as a POSIX file descriptor (cuMemExportToShareableHandle, the
 *                                runtime's cudaMemPoolExportToShareableHandle): prints the result
 *   e2e_remote_ipc rt-export FILE, rt-import FILE, rt-bogus: the same with the runtime API only, in the order
 *                                PyTorch's CUDA IPC makes its calls (torch.multiprocessing, CudaIPCTypes.cpp): the
 *                                producer exports its allocation's base and an interprocess event recorded after
 *                                the writes; the consumer opens the event and makes its stream wait on it, opens
 *                                the memory (cudaIpcMemLazyEnablePeerAccess) and reads the tensor at its offset in
 *                                the block, and on release records the event and closes the memory
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (256 * 1024)   /* 32-bit words: 1 MiB */

static int wait_for(const char *path)
{
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            fclose(f);
            return 0;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return -1;
}

static int put(const char *path, const void *p, size_t n)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(p, n, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0)
        return -1;
    return 0;
}

static int get(const char *path, void *p, size_t n)
{
    FILE *f = wait_for(path) == 0 ? fopen(path, "rb") : NULL;
    size_t got = f != NULL ? fread(p, n, 1, f) : 0;
    if (f != NULL)
        fclose(f);
    return got == 1 ? 0 : -1;
}

/* The runtime API's side: the tensor is N words at byte offset OFF of its allocation (the caching allocator's
   block), as PyTorch shares a tensor: the block's handle and the offset. */
#define OFF (64 * 1024)
static int runtime_mode(int argc, char **argv)
{
    static unsigned words[N];
    char path[4096];
    if (cudaSetDevice(0) != cudaSuccess) {
        fprintf(stderr, "e2e_remote_ipc: no device\n");
        return 1;
    }
    if (strcmp(argv[1], "rt-export") == 0 && argc == 3) {
        char *base = NULL;
        cudaEvent_t ev = NULL;
        cudaIpcMemHandle_t mh;
        cudaIpcEventHandle_t eh;
        for (unsigned i = 0; i < N; i++)
            words[i] = i * 2246822519u;
        if (cudaMalloc((void **)&base, OFF + sizeof words) != cudaSuccess ||
            cudaMemcpy(base + OFF, words, sizeof words, cudaMemcpyHostToDevice) != cudaSuccess)
            return 1;
        printf("get mem %d\n", (int)cudaIpcGetMemHandle(&mh, base));
        printf("event %d\n", (int)cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | cudaEventInterprocess));
        printf("record %d\n", (int)cudaEventRecord(ev, 0));
        printf("get event %d\n", (int)cudaIpcGetEventHandle(&eh, ev));
        snprintf(path, sizeof path, "%s.event", argv[2]);
        if (put(path, &eh, sizeof eh) != 0 || put(argv[2], &mh, sizeof mh) != 0)
            return 1;
        fflush(stdout);
        snprintf(path, sizeof path, "%s.done", argv[2]);
        if (wait_for(path) != 0)
            return 1;
        printf("event sync %d\n", (int)cudaEventSynchronize(ev));
        printf("read %d\n", (int)cudaMemcpy(words, base + OFF, sizeof words, cudaMemcpyDeviceToHost));
        printf("after the importers: word 0 %#x, word 1 %#x, word %d %#x\n", words[0], words[1], N - 1, words[N - 1]);
        printf("destroy %d free %d\n", (int)cudaEventDestroy(ev), (int)cudaFree(base));
        return 0;
    }
    if (strcmp(argv[1], "rt-import") == 0 && argc == 3) {
        char *base = NULL;
        cudaEvent_t ev = NULL;
        cudaIpcMemHandle_t mh;
        cudaIpcEventHandle_t eh;
        snprintf(path, sizeof path, "%s.event", argv[2]);
        if (get(argv[2], &mh, sizeof mh) != 0 || get(path, &eh, sizeof eh) != 0)
            return 1;
        cudaError_t e = cudaIpcOpenEventHandle(&ev, eh);
        printf("open event %d\n", (int)e);
        if (e == cudaSuccess)
            printf("wait %d\n", (int)cudaStreamWaitEvent(0, ev, 0));
        e = cudaIpcOpenMemHandle((void **)&base, mh, cudaIpcMemLazyEnablePeerAccess);
        printf("open mem %d\n", (int)e);
        if (e == cudaSuccess) {
            unsigned long long sum = 0;
            printf("read %d\n", (int)cudaMemcpy(words, base + OFF, sizeof words, cudaMemcpyDeviceToHost));
            for (unsigned i = 0; i < N; i++)
                sum += words[i];
            printf("sum %llu\n", sum);
            printf("write %d\n", (int)cudaMemset(base + OFF, 0x5a, 4));
            if (ev != NULL)
                printf("record %d\n", (int)cudaEventRecord(ev, 0));
            printf("close %d\n", (int)cudaIpcCloseMemHandle(base));
        }
        if (ev != NULL)
            printf("destroy %d\n", (int)cudaEventDestroy(ev));
        return 0;
    }
    if (strcmp(argv[1], "rt-bogus") == 0) {
        void *p = NULL;
        cudaIpcMemHandle_t mh;
        memset(&mh, 0x42, sizeof mh);
        printf("open bogus %d\n", (int)cudaIpcOpenMemHandle(&p, mh, cudaIpcMemLazyEnablePeerAccess));
        return 0;
    }
    if (strcmp(argv[1], "rt-fd") == 0) {
        int fd = -1;
        cudaMemPool_t pool = NULL;
        printf("pool %d\n", (int)cudaDeviceGetDefaultMemPool(&pool, 0));
        printf("export fd %d\n", (int)cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
        return 0;
    }
    fprintf(stderr, "usage: e2e_remote_ipc rt-export|rt-import FILE | rt-bogus | rt-fd\n");
    return 2;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    static unsigned words[N];
    char path[4096];
    if (argc >= 2 && strncmp(argv[1], "rt-", 3) == 0)
        return runtime_mode(argc, argv);
    if (argc < 2 || cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_remote_ipc: no device or bad arguments\n");
        return 1;
    }
    if (strcmp(argv[1], "export") == 0 && argc == 3) {
        CUdeviceptr d;
        CUevent ev;
        CUipcMemHandle mh;
        CUipcEventHandle eh;
        for (unsigned i = 0; i < N; i++)
            words[i] = i * 2654435761u;
        if (cuMemAlloc(&d, sizeof words) != CUDA_SUCCESS || cuMemcpyHtoD(d, words, sizeof words) != CUDA_SUCCESS ||
            cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) != CUDA_SUCCESS)
            return 1;
        printf("get mem %d\n", (int)cuIpcGetMemHandle(&mh, d));
        printf("get event %d\n", (int)cuIpcGetEventHandle(&eh, ev));
        snprintf(path, sizeof path, "%s.event", argv[2]);
        if (put(path, &eh, sizeof eh) != 0 || put(argv[2], &mh, sizeof mh) != 0)
            return 1;
        fflush(stdout);
        snprintf(path, sizeof path, "%s.done", argv[2]);
        if (wait_for(path) != 0)
            return 1;
        printf("read %d\n", (int)cuMemcpyDtoH(words, d, sizeof words));
        printf("after the importers: word 0 %#x, word 1 %#x, word %d %#x\n", words[0], words[1], N - 1, words[N - 1]);
        cuMemFree(d);
        return 0;
    }
    if (strcmp(argv[1], "import") == 0 && argc == 3) {
        CUdeviceptr d = 0;
        CUevent ev = NULL;
        CUipcMemHandle mh;
        CUipcEventHandle eh;
        snprintf(path, sizeof path, "%s.event", argv[2]);
        if (get(argv[2], &mh, sizeof mh) != 0 || get(path, &eh, sizeof eh) != 0)
            return 1;
        CUresult r = cuIpcOpenMemHandle(&d, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        printf("open mem %d\n", (int)r);
        if (r == CUDA_SUCCESS) {
            unsigned long long sum = 0;
            printf("read %d\n", (int)cuMemcpyDtoH(words, d, sizeof words));
            for (unsigned i = 0; i < N; i++)
                sum += words[i];
            printf("sum %llu\n", sum);
            printf("write %d\n", (int)cuMemsetD32(d, 0xc0ffee, 1));
            printf("close %d\n", (int)cuIpcCloseMemHandle(d));
        }
        r = cuIpcOpenEventHandle(&ev, eh);
        printf("open event %d\n", (int)r);
        if (r == CUDA_SUCCESS)
            printf("event sync %d\n", (int)cuEventSynchronize(ev));
        return 0;
    }
    if (strcmp(argv[1], "bogus") == 0) {
        CUdeviceptr d = 0;
        CUipcMemHandle mh;
        memset(&mh, 0x42, sizeof mh);
        printf("open bogus %d\n", (int)cuIpcOpenMemHandle(&d, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
        return 0;
    }
    if (strcmp(argv[1], "fd") == 0) {
        int fd = -1;
        printf("export fd %d\n", (int)cuMemExportToShareableHandle(&fd, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        return 0;
    }
    fprintf(stderr, "usage: e2e_remote_ipc export|import FILE | bogus | fd\n");
    return 2;
}
