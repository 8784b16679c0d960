/*
 * e2e_remote_graph.c - stream capture and graphs end to end (run_remote_graph.sh, docs/remote.md "Graphs"). Each
 * mode prints what a program sees; run_remote_graph.sh compares a run through cushim-serve with a local one.
 * The kernel is the fake driver's "fk_add_i32__pii" (p, n, v: adds v to n ints at p).
 *
 *   capture N   a stream captured (cuStreamBeginCapture_v2): a memset, a launch, a device copy, a launch; the
 *               capture's state asked on the way (cuStreamIsCapturing, cuStreamGetCaptureInfo_v2 with its
 *               optional outputs NULL and not); nothing ran while captured; the graph instantiated
 *               (cuGraphInstantiateWithFlags), uploaded and launched N times with a launch on the stream after
 *               each; a second instantiation (cuGraphInstantiateWithParams) launched once; the results.
 *   knode       a graph built by hand: a memset node, then a kernel node with its arguments
 *               (cuGraphAddKernelNode_v2); launched; its arguments changed in the instantiation
 *               (cuGraphExecKernelNodeSetParams_v2) and in the graph (cuGraphKernelNodeSetParams_v2,
 *               instantiated again); the results after each.
 *   error       a launch the driver refuses (1024 x 2 threads) inside a capture: its error at that call, the
 *               capture invalidated (the next captured call and cuStreamEndCapture say so), no error left over.
 *   pinned N    a capture of a copy from pinned host memory (cuMemAllocHost), a launch and a copy back into it:
 *               each of the N launches reads the host buffer as it is then and writes the result back.
 *   deps        cuStreamGetCaptureInfo's dependencies (a pointer to the driver's array) used to add a memset node by
 *               hand to the graph being captured.
 *   refused     what the remoting refuses (run_remote_graph.sh checks the remote answers): a host node, a
 *               memcpy node from host memory, a kernel node's parameters read back, a copy from pageable host
 *               memory into a stream being captured (the capture stays valid), the capture's edge data,
 *               a kernel node's arguments by 'extra', a host function on the stream being captured.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                 \
    do {                                                                                      \
        CUresult r_ = (x);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                             \
            fprintf(stderr, "e2e_remote_graph: %s: %d (line %d)\n", #x, (int)r_, __LINE__);   \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)
#define SAY(x) printf("%s: %d\n", #x, (int)(x))

#define WORDS 256

/* cuStreamGetCaptureInfo is the _v3 form (with edge data) from CUDA 13's header, the _v2 form before */
#if CUDA_VERSION >= 13000
#define GET_INFO(st, id, g, deps, n) cuStreamGetCaptureInfo(s, st, id, g, deps, NULL, n)
#else
#define GET_INFO(st, id, g, deps, n) cuStreamGetCaptureInfo(s, st, id, g, deps, n)
#endif

static CUcontext ctx;
static CUfunction add;
static CUstream s;
static CUdeviceptr a, b;

static void setup(void)
{
    CUdevice dev;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, ".version 7.0\n.target sm_50\n.address_size 64\n"));
    CK(cuModuleGetFunction(&add, mod, "fk_add_i32__pii"));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&a, WORDS * 4));
    CK(cuMemAlloc(&b, WORDS * 4));
    CK(cuMemsetD32(a, 0, WORDS));
    CK(cuMemsetD32(b, 0, WORDS));
}

static CUresult launch_add(CUdeviceptr p, int v, unsigned block)
{
    int n = WORDS;
    void *args[] = { &p, &n, &v };
    return cuLaunchKernel(add, 1, 1, 1, block, 1, 1, 0, s, args, NULL);
}

static void show(const char *what, CUdeviceptr p)
{
    int h[WORDS];
    CK(cuMemcpyDtoH(h, p, sizeof h));
    printf("%s: %d %d %d\n", what, h[0], h[WORDS / 2], h[WORDS - 1]);
}

static int capture(int n)
{
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    CUgraph g = NULL;
    CUgraphExec e, e2;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    printf("mode before: %d\n", (int)mode);
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    CK(cuStreamIsCapturing(s, &st));
    printf("capturing before: %d\n", (int)st);
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamIsCapturing(s, &st));
    printf("capturing: %d\n", (int)st);
    CK(cuMemsetD32Async(a, 1, WORDS, s));
    CK(launch_add(a, 2, 128));
    CK(cuMemcpyDtoDAsync(b, a, WORDS * 4, s));
    CK(launch_add(b, 10, 64));
    CK(GET_INFO(&st, NULL, NULL, NULL, NULL));
    printf("info, outputs NULL: %d\n", (int)st);
    CK(GET_INFO(&st, &id, &g, NULL, NULL));
    printf("info: %d, id %s, graph %s\n", (int)st, id != 0 ? "set" : "0", g != NULL ? "set" : "NULL");
    g = NULL;
    CK(cuStreamEndCapture(s, &g));
    printf("graph: %s\n", g != NULL ? "set" : "NULL");
    CK(cuStreamIsCapturing(s, &st));
    printf("capturing after: %d\n", (int)st);
    show("a after capture", a);   /* captured, not run */
    CK(cuGraphInstantiate(&e, g, 0));
    CK(cuGraphUpload(e, s));
    for (int i = 0; i < n; i++) {
        CK(cuGraphLaunch(e, s));
        CK(launch_add(b, 100, 32));   /* stream work between launches, in order */
    }
    CK(cuStreamSynchronize(s));
    show("a", a);
    show("b", b);
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = { .flags = 0, .hUploadStream = s };
    CK(cuGraphInstantiateWithParams(&e2, g, &ip));
    printf("instantiate result: %d\n", (int)ip.result_out);
    CK(cuGraphLaunch(e2, s));
    CK(cuCtxSynchronize());
    show("b again", b);
    CK(cuGraphExecDestroy(e));
    CK(cuGraphExecDestroy(e2));
    CK(cuGraphDestroy(g));
    return 0;
}

static CUDA_KERNEL_NODE_PARAMS knode_params(CUdeviceptr *p, int *n, int *v, void **args)
{
    args[0] = p, args[1] = n, args[2] = v;
    CUDA_KERNEL_NODE_PARAMS k = { .func = add, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256,
                                  .blockDimY = 1, .blockDimZ = 1, .kernelParams = args };
    return k;
}

static int knode(void)
{
    CUgraph g;
    CUgraphNode ms, kn;
    CUgraphExec e;
    CUdeviceptr p = a;
    int n = WORDS, v = 7;
    void *args[3];
    CK(cuGraphCreate(&g, 0));
    CUDA_MEMSET_NODE_PARAMS m = { .dst = a, .value = 5, .elementSize = 4, .width = WORDS, .height = 1 };
    CK(cuGraphAddMemsetNode(&ms, g, NULL, 0, &m, ctx));
    CUDA_KERNEL_NODE_PARAMS k = knode_params(&p, &n, &v, args);
    CK(cuGraphAddKernelNode(&kn, g, &ms, 1, &k));
    v = 1000;   /* the arguments were copied when the node was added */
    CK(cuGraphInstantiate(&e, g, 0));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    show("kernel node", a);
    v = 20;
    CK(cuGraphExecKernelNodeSetParams(e, kn, &k));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    show("exec node set", a);
    CK(cuGraphExecDestroy(e));
    v = 1;
    n = WORDS / 2;
    CK(cuGraphKernelNodeSetParams(kn, &k));
    CK(cuGraphInstantiate(&e, g, 0));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    show("node set", a);
    CK(cuGraphExecDestroy(e));
    CK(cuGraphDestroy(g));
    return 0;
}

static int error(void)
{
    CUstreamCaptureStatus st;
    CUgraph g = (CUgraph)1;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SAY(cuMemsetD32Async(a, 3, WORDS, s));
    SAY(launch_add(a, 1, 2048));   /* more threads than a block holds */
    SAY(cuMemsetD32Async(a, 4, WORDS, s));
    CK(cuStreamIsCapturing(s, &st));
    printf("capturing: %d\n", (int)st);
    SAY(cuStreamEndCapture(s, &g));
    printf("graph: %s\n", g != NULL ? "set" : "NULL");
    SAY(cuCtxSynchronize());
    SAY(cuStreamSynchronize(s));
    show("a", a);
    return 0;
}

static int pinned(int n)
{
    int *h;
    CUgraph g;
    CUgraphExec e;
    CK(cuMemAllocHost((void **)&h, WORDS * 4));
    for (int k = 0; k < WORDS; k++)
        h[k] = k;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SAY(cuMemcpyHtoDAsync(a, h, WORDS * 4, s));
    CK(launch_add(a, 1000, 256));
    SAY(cuMemcpyDtoHAsync(h, a, WORDS * 4, s));
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiate(&e, g, 0));
    for (int i = 0; i < n; i++) {
        h[0] = i;   /* read by the graph's copy at this launch */
        CK(cuGraphLaunch(e, s));
        CK(cuStreamSynchronize(s));
        printf("launch %d: %d %d %d\n", i, h[0], h[1], h[WORDS - 1]);
    }
    CK(cuGraphExecDestroy(e));
    CK(cuGraphDestroy(g));
    CK(cuMemFreeHost(h));
    return 0;
}

/* The capture's dependencies returned by pointer, used to add a node by hand to the graph being captured. */
static int deps(void)
{
    CUstreamCaptureStatus st;
    CUgraph g = NULL, cg;
    CUgraphNode node;
    CUgraphExec e;
    const CUgraphNode *d = (const CUgraphNode *)1;
    size_t n = 7;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(GET_INFO(&st, NULL, &g, &d, &n));
    printf("dependencies at start: %zu, %s\n", n, d == NULL ? "NULL" : "set");
    CK(cuMemsetD32Async(a, 2, WORDS, s));
    CK(launch_add(a, 3, 128));
    CK(GET_INFO(&st, NULL, &g, &d, &n));
    printf("dependencies: %zu, %s\n", n, d == NULL ? "NULL" : "set");
    CUDA_MEMSET_NODE_PARAMS m = { .dst = b, .value = 9, .elementSize = 4, .width = WORDS, .height = 1 };
    SAY(cuGraphAddMemsetNode(&node, g, d, n, &m, ctx));   /* after the launch, by the handle returned */
    CK(cuStreamEndCapture(s, &cg));
    CK(cuGraphInstantiate(&e, cg, 0));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    show("a", a);
    show("b", b);
    CK(cuGraphExecDestroy(e));
    CK(cuGraphDestroy(cg));
    return 0;
}

static void host_fn(void *data)
{
    (void)data;
}

static int refused(void)
{
    CUgraph g, cg;
    CUgraphNode kn, out;
    CUdeviceptr p = a;
    int n = WORDS, v = 1;
    void *args[3];
    static int host[WORDS];
    CK(cuGraphCreate(&g, 0));
    CUDA_HOST_NODE_PARAMS hp = { .fn = host_fn, .userData = NULL };
    SAY(cuGraphAddHostNode(&out, g, NULL, 0, &hp));
    CUDA_MEMCPY3D c = { .srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = host, .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                        .dstDevice = a, .WidthInBytes = sizeof host, .Height = 1, .Depth = 1 };
    SAY(cuGraphAddMemcpyNode(&out, g, NULL, 0, &c, ctx));
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED, c.srcHost = NULL, c.srcDevice = (CUdeviceptr)(uintptr_t)host;
    SAY(cuGraphAddMemcpyNode(&out, g, NULL, 0, &c, ctx));
    CUDA_KERNEL_NODE_PARAMS k = knode_params(&p, &n, &v, args);
    CK(cuGraphAddKernelNode(&kn, g, NULL, 0, &k));
    SAY(cuGraphKernelNodeGetParams(kn, &k));
    k.kernelParams = NULL, k.extra = args;   /* arguments as one buffer (CU_LAUNCH_PARAM_*): not carried */
    SAY(cuGraphKernelNodeSetParams(kn, &k));
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SAY(cuMemcpyHtoDAsync(a, host, sizeof host, s));
    SAY(cuMemcpyDtoHAsync(host, a, sizeof host, s));
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    CUstreamCaptureStatus st;
    SAY(cuStreamGetCaptureInfo_v3(s, &st, NULL, NULL, &deps, &edges, &ndeps));
    SAY(cuLaunchHostFunc(s, host_fn, NULL));   /* a host function captured: it would be a host node */
    CK(launch_add(a, 1, 32));
    SAY(cuStreamEndCapture(s, &cg));
    CK(cuGraphDestroy(cg));
    CK(cuGraphDestroy(g));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: e2e_remote_graph capture N | knode | error | pinned N | deps | refused\n");
        return 2;
    }
    setup();
    int n = argc > 2 ? atoi(argv[2]) : 3;
    int r = !strcmp(argv[1], "capture") ? capture(n) : !strcmp(argv[1], "knode") ? knode() :
            !strcmp(argv[1], "error") ? error() : !strcmp(argv[1], "pinned") ? pinned(n) :
            !strcmp(argv[1], "refused") ? refused() : !strcmp(argv[1], "deps") ? deps() : 2;
    return r;
}
