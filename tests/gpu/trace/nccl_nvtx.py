"""nccl_nvtx.py - NCCL's NVTX ranges (domain "NCCL") for the GPU check 'tracenccl' (tests/gpu/checks/trace.sh).

One process, one rank: torch.distributed on NCCL (world size 1, a file store), 5 all-gathers (out of place: with
one rank NCCL copies, so each makes CUDA calls; an in-place all-reduce of one rank may make none) inside a
default-domain range "outer" pushed by torch.cuda.nvtx, so that ranges of two domains are open at once on the
thread. Prints the sum, so that a traced run's output can be compared with an untraced one's.
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist

store = os.path.join(tempfile.mkdtemp(prefix="nccl_nvtx."), "store")
dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda")
y = torch.zeros(1 << 20, device="cuda")
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("outer")
for i in range(5):
    x.add_(1)
    dist.all_gather_into_tensor(y, x)
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("sum %.1f" % float(y.sum().item()), flush=True)
dist.destroy_process_group()
sys.exit(0)
