/*
 * e2e_trace_names.c - names the program chooses, holding what a terminal or a JSON reader must never get raw,
 * reaching the trace plugin's outputs (run_trace.sh case 'hostile'), against the fake driver:
 *   - a kernel name (cuModuleGetFunction, then cuLaunchKernel: the trace's "name" and "kernel" args),
 *   - the thread's name (pthread_setname_np: the trace's thread_name event) and nvtxNameOsThread's,
 *   - NVTX ranges pushed (default domain, and a domain of such a name) and started/ended: the nvtx_sum table
 *     printed at exit and by 'cushim stats', and the trace's events.
 * Each name holds an ESC sequence, a newline, a tab, a C0 byte, DEL, bytes that are not UTF-8 (0xff, a lone 0x9b
 * - CSI to an 8-bit terminal -, a cut sequence, an encoded surrogate), C1 in UTF-8 (U+009B), U+202E (which
 * reverses the rest of a line as it is shown), a quote and a backslash. Exit 0, or 1 when a call failed.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef E2E_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#define HOSTILE "\x1b[31mred\x1b]0;title\x07\n\t\x01\x7f\xff\x9b" "2J\xc2\x9b\xe2\x80\xae\xed\xa0\x80\xe4\xb8\"\\end"

int main(void)
{
    CUdevice d;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr p;
    char kname[100] = "k" HOSTILE;
    pthread_setname_np(pthread_self(), "t\x1b[1m\xff\x9b\n");   /* 15 bytes at most */
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, d) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuModuleLoadData(&mod, "ptx") != CUDA_SUCCESS || cuModuleGetFunction(&fn, mod, kname) != CUDA_SUCCESS ||
        cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS ||
        cuCtxSynchronize() != CUDA_SUCCESS) {
        fprintf(stderr, "e2e_trace_names: a call failed\n");
        return 1;
    }
#ifdef E2E_HAVE_NVTX
    {
        nvtxDomainHandle_t dom = nvtxDomainCreateA("d" HOSTILE);
        nvtxEventAttributes_t a;
        nvtxRangeId_t id;
        memset(&a, 0, sizeof a);
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "m" HOSTILE;
        nvtxNameOsThreadA((uint32_t)gettid(), "o" HOSTILE);
        nvtxRangePushA("r" HOSTILE);
        nvtxDomainRangePushEx(dom, &a);
        id = nvtxRangeStartA("s" HOSTILE);
        if (cuMemAlloc(&p, 64) == CUDA_SUCCESS)
            cuMemFree(p);
        nvtxRangeEnd(id);
        nvtxDomainRangePop(dom);
        nvtxRangePop();
    }
#else
    if (cuMemAlloc(&p, 64) == CUDA_SUCCESS)
        cuMemFree(p);
    printf("built without NVTX headers\n");
#endif
    return 0;
}
