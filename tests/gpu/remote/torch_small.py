# torch_small.py - a small PyTorch program for the GPU check 'remote' (tests/gpu/checks/remote.sh): tensors made,
# copied both ways and reduced on the GPU with elementwise kernels only (cuBLAS: torch_blas.py). Prints values
# a local run and a run through cushim-serve must agree on.
import torch

print("cuda available:", torch.cuda.is_available())
print("devices:", torch.cuda.device_count())
print("name:", torch.cuda.get_device_name(0))
x = torch.arange(1 << 20, dtype=torch.float32).cuda()
y = (x * 0.5 + 1.0).sin()
print("sum: %.4f" % y.sum().item())
print("max: %.4f" % y.max().item())
z = torch.zeros(1000, device="cuda")
z[::7] = 3.0
print("nonzero:", int(torch.count_nonzero(z).item()))
print("back:", y[:4].cpu().tolist())
torch.cuda.synchronize()
print("ok")
