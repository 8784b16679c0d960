# torch_blas.py - PyTorch's cuBLAS and cuBLASLt paths for the GPU check 'remotert blas' (tests/gpu/checks/remotert.sh;
# docs/remote.md, "cuBLAS and cuBLASLt"): float32 mm with TF32 off and on (cublasSgemm_v2 / cublasGemmEx),
# float64 mm (cublasDgemm_v2), half mm (cublasGemmEx, 16F data, 32F compute), bmm (strided batched), addmm with a
# bias and linear (cuBLASLt's matmul with an epilogue), a backward pass. Prints, per case, a digest of the result's
# bytes: a local run and a run through cushim-serve (the server's cuBLAS the same copy) must print the same.
import hashlib

import torch


def digest(t):
    raw = t.detach().contiguous().cpu().view(torch.uint8).flatten().tolist()   # no numpy needed
    return hashlib.sha256(bytes(raw)).hexdigest()[:16]


torch.manual_seed(0)
dev = "cuda"
a = torch.randn(257, 129, device=dev)
b = torch.randn(129, 65, device=dev)
torch.backends.cuda.matmul.allow_tf32 = False
print("mm f32:", digest(a @ b))
torch.backends.cuda.matmul.allow_tf32 = True
print("mm f32 tf32:", digest(a @ b))
torch.backends.cuda.matmul.allow_tf32 = False
print("mm f64:", digest(a.double() @ b.double()))
print("mm f16:", digest(a.half() @ b.half()))
x = torch.randn(8, 33, 17, device=dev)
y = torch.randn(8, 17, 9, device=dev)
print("bmm:", digest(torch.bmm(x, y)))
bias = torch.randn(65, device=dev)
print("addmm bias:", digest(torch.addmm(bias, a, b)))
lin = torch.nn.Linear(129, 65).to(dev)
out = lin(a)
print("linear:", digest(out))
out.square().sum().backward()
print("linear grad w:", digest(lin.weight.grad))
print("linear grad b:", digest(lin.bias.grad))
torch.cuda.synchronize()
print("ok")
