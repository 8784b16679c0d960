"""Two-process NCCL all-reduce across two GPUs with torch.distributed, under the shim ('universal nccl').

Each rank all-reduces a tensor of rank+1 (sum 3 with two ranks) ITERS times and prints one JSON line:
rank, pid, the sums seen. The check compares each rank's ncclAllReduce count in the shim's counts file
(<file>.<pid>: the ranks are spawned processes) with the AllReduce lines of NCCL's own debug log
(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL NCCL_DEBUG_FILE=<dir>/nccl.%p.log).
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ITERS = 4


def run(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    sums = []
    for _ in range(ITERS):
        t = torch.full((1024,), float(rank + 1), device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        sums.append(float(t[0].item()))
    dist.destroy_process_group()
    print(json.dumps({"rank": rank, "pid": os.getpid(), "sums": sums}), flush=True)


if __name__ == "__main__":
    if torch.cuda.device_count() < 2:
        print(json.dumps({"skip": "fewer than 2 GPUs"}))
        sys.exit(3)
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 29517
    mp.spawn(run, args=(2, port), nprocs=2, join=True)
