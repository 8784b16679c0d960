# cupy_managed.py - CuPy with its managed allocator for the GPU check 'remotemanaged' (tests/gpu/checks/remotemanaged.sh;
# docs/remote.md "Managed memory"): every array in managed memory (cudaMallocManaged), elementwise kernels, a
# reduction, copies to the host. Prints values a native run and a run through cushim-serve must agree on.
import cupy as cp

cp.cuda.set_allocator(cp.cuda.MemoryPool(cp.cuda.malloc_managed).malloc)
x = cp.arange(1 << 20, dtype=cp.float32)
attrs = cp.cuda.runtime.pointerGetAttributes(x.data.ptr)
print("managed: %d" % (attrs.type == 3))
y = cp.sqrt(x) * 2.0 + 1.0
print("sum: %.3f" % float(y.sum()))
h = y.get()
print("host: %.3f %.3f" % (h[0], h[-1]))
y[::2] = 0.0
cp.cuda.Device().synchronize()
print("strided: %.3f" % float(y.sum()))
print("ok")
