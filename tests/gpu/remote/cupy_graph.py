# cupy_graph.py - CuPy for the GPU check 'remotegraphs' (tests/gpu/checks/remotegraphs.sh): an elementwise kernel,
# a RawKernel (NVRTC, loaded with cuModuleLoadData) and a stream captured into a CUDA graph (cupy.cuda.Stream's
# begin_capture/end_capture) and launched 5 times. Prints values a native run and a run through cushim-serve must
# agree on.
import cupy as cp

x = cp.arange(1 << 16, dtype=cp.float32)
y = cp.sin(x * 0.001) + 1.0
print("elementwise: %.6f" % float(y.sum()))
add = cp.RawKernel(r'''
extern "C" __global__ void add(float *p, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}''', "add")
n = x.size
add(((n + 255) // 256,), (256,), (x, cp.float32(0.5), cp.int32(n)))
print("rawkernel: %.6f" % float(x.sum()))
s = cp.cuda.Stream(non_blocking=True)
with s:
    y *= 1.0   # the multiply kernel compiled and loaded before the capture (no module load while capturing)
    s.synchronize()
    s.begin_capture()
    add(((n + 255) // 256,), (256,), (x, cp.float32(1.0), cp.int32(n)))
    y *= 2.0
    g = s.end_capture()
for i in range(5):
    g.launch(stream=s)
s.synchronize()
print("graph: x %.6f y %.6f" % (float(x.sum()), float(y.sum())))
print("ok")
