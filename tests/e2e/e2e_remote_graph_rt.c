/*
 * e2e_remote_graph_rt.c - stream capture and graphs through the runtime API (run_remote_graph.sh, docs/remote.md
 * "Graphs"): a device copy captured on a stream (cudaStreamBeginCapture ... cudaStreamEndCapture, asked with
 * cudaStreamIsCapturing and cudaStreamGetCaptureInfo on the way), the graph instantiated, uploaded and launched
 * three times with a new source each time; then a capture whose copy the driver refuses (its error at the call,
 * the capture invalidated: cudaStreamEndCapture's error and no graph). Prints what a program sees.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "e2e_remote_graph_rt: %s: %d (line %d)\n", #x, (int)e_, __LINE__);    \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)
#define SAY(x) printf("%s: %d\n", #x, (int)(x))
#define N 1024

int main(void)
{
    static int h[N], back[N];
    cudaStream_t s;
    int *a, *b;
    enum cudaStreamCaptureStatus st;
    cudaGraph_t g = NULL;
    cudaGraphExec_t e;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreate(&s));
    CK(cudaMalloc((void **)&a, sizeof h));
    CK(cudaMalloc((void **)&b, sizeof h));
    for (int i = 0; i < N; i++)
        h[i] = i;
    CK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
    CK(cudaStreamIsCapturing(s, &st));
    printf("capturing before: %d\n", (int)st);
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaStreamIsCapturing(s, &st));
    printf("capturing: %d\n", (int)st);
    SAY(cudaMemcpyAsync(b, a, sizeof h, cudaMemcpyDeviceToDevice, s));
#if CUDART_VERSION >= 13000
    const cudaGraphNode_t *deps = NULL;
    size_t n = 0;
    unsigned long long id = 0;
    CK(cudaStreamGetCaptureInfo(s, &st, &id, &g, &deps, NULL, &n));
    printf("info: %d, id %s, graph %s, %zu dependencies\n", (int)st, id ? "set" : "0", g ? "set" : "NULL", n);
#endif
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaStreamIsCapturing(s, &st));
    printf("capturing after: %d\n", (int)st);
    CK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    printf("b after capture: %d %d\n", back[0], back[N - 1]);   /* captured, not run */
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphUpload(e, s));
    for (int k = 0; k < 3; k++) {
        h[0] = 100 + k;
        CK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
        CK(cudaGraphLaunch(e, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
        printf("launch %d: %d %d\n", k, back[0], back[N - 1]);
    }
    CK(cudaGraphExecDestroy(e));
    CK(cudaGraphDestroy(g));
    /* an error inside a capture: at its call, the capture invalidated */
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    SAY(cudaMemcpyAsync(b, (void *)(uintptr_t)0x1000, sizeof h, cudaMemcpyDeviceToDevice, s));
    CK(cudaStreamIsCapturing(s, &st));
    printf("capturing: %d\n", (int)st);
    g = (cudaGraph_t)1;
    SAY(cudaStreamEndCapture(s, &g));
    printf("graph: %s\n", g ? "set" : "NULL");
    SAY(cudaStreamSynchronize(s));
    return 0;
}
