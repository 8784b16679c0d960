#!/usr/bin/env python3
"""ml_nccl.py - two-process NCCL all-reduce under memory quotas (tests/gpu/checks/memlimit.sh, memlimit2).

USAGE: ml_nccl.py RANK WORLD PORT
Each rank (started by the check with the shim preloaded and a quota) puts a 64 MiB tensor of value
RANK+1 on GPU RANK, all-reduces it (sum) with NCCL and prints 'rank R sum S total T' (T: the device
memory torch reports, the quota). The check wants S = 1 + 2 on both ranks.
"""
import os
import sys

import torch
import torch.distributed as dist

rank, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = port
torch.cuda.set_device(rank)
dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
t = torch.full((16 << 20,), float(rank + 1), device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
s = t[0].item()
ok = bool((t == s).all().item())
free, total = torch.cuda.mem_get_info(rank)
print("rank %d sum %g uniform %d total %d" % (rank, s, int(ok), total))
dist.destroy_process_group()
