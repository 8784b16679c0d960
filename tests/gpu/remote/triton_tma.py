# triton_tma.py - a Triton kernel reading and writing through TMA descriptors (Hopper), for the GPU check
# 'remotegraphs triton-tma' (tests/gpu/checks/remotegraphs.sh): the same script runs natively and through
# cushim-serve, the outputs must be equal. The descriptors are made on the host (Triton's driver calls
# cuTensorMapEncodeTiled: over remoting the server's driver encodes them, the 128 bytes come back and are passed to
# the kernel by value).
#   probe   exit 0 when this machine's Triton and GPU have host-side TMA descriptors, 3 when not
#   run     a 2D copy-and-scale of a 256x256 float32 tensor in 64x64 tiles, three times with new inputs: the sums
import sys

import torch
import triton
import triton.language as tl

mode = sys.argv[1] if len(sys.argv) > 1 else "run"
try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:
    TensorDescriptor = None
if TensorDescriptor is None or not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9:
    print("no host-side TMA descriptors (triton %s)" % triton.__version__)
    sys.exit(3 if mode == "probe" else 1)
if mode == "probe":
    sys.exit(0)


@triton.jit
def scale_kernel(in_desc, out_desc, factor, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    x = in_desc.load([m, n])
    out_desc.store([m, n], x * factor)


torch.manual_seed(0)
M = N = 256
BM = BN = 64
for i in range(3):
    x = torch.randn(M, N, device="cuda") + i
    y = torch.empty_like(x)
    scale_kernel[(M // BM, N // BN)](TensorDescriptor.from_tensor(x, [BM, BN]), TensorDescriptor.from_tensor(y, [BM, BN]),
                                     2.0, BM=BM, BN=BN)
    torch.cuda.synchronize()
    print("round %d: sum %.4f, equal %s" % (i, y.sum().item(), bool(torch.equal(y, x * 2.0))))
