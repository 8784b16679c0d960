"""ranks.py - one rank of a torchrun job for the GPU check 'traceranks' (tests/gpu/checks/trace.sh).

Each rank makes CUDA calls (so its trace file is open), waits at a barrier for the other (so that both write
their files at the same time), launches more work, and meets the other again before it exits.
"""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.randn(512, 512, device="cuda")
s = float((x @ x).sum().item())   # the first CUDA calls: the trace file is opened and held
dist.barrier()                    # both ranks hold theirs now
for _ in range(10):
    x = (x @ x) / 512
torch.cuda.synchronize()
dist.barrier()
print("rank %d ok %s" % (rank, "finite" if s == s else "nan"), flush=True)
dist.destroy_process_group()
