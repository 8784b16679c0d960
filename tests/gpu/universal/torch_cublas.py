"""A PyTorch float32 matmul whose cuBLAS calls the shim counts ('universal cublas').

TF32 off, so torch.mm of float32 goes to cublasSgemm_v2 (or cublasGemmEx); the check compares the shim's
per-API counts with cuBLAS's own API log (CUBLAS_LOGINFO_DBG=1, CUBLAS_LOGDEST_DBG=<file>).
Prints the result's checksum against a CPU reference.
"""
import json

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)
a = torch.randn(256, 128)
b = torch.randn(128, 64)
ref = a @ b
ga, gb = a.cuda(), b.cuda()
for _ in range(3):
    c = torch.mm(ga, gb)
torch.cuda.synchronize()
err = (c.cpu() - ref).abs().max().item()
print(json.dumps({"max_abs_err": err}))
raise SystemExit(0 if err < 1e-3 else 1)
