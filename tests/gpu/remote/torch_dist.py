# torch_dist.py - torch.distributed's NCCL back end and torch.multiprocessing's CUDA tensor sharing, for the GPU
# check 'remotenccl' (tests/gpu/checks/remotenccl.sh): run natively and with every process a client of one
# cushim-serve, each mode must print the same.
#   nccl1 PORT        one rank on GPU 0 (NCCL takes one rank per GPU in a communicator): all-reduce, broadcast,
#                     all-gather, reduce-scatter, a batch of sends to itself, barrier
#   nccl2 PORT DIR    two ranks, GPUs 0 and 1 (spawned processes, each its own client): all-reduce of rank+1,
#                     all-gather, send/recv between the two; each rank's lines in DIR, printed by rank here
#   ipc               a CUDA tensor put in a torch.multiprocessing queue (cudaIpcGetMemHandle) to a spawned child
#                     (cudaIpcOpenMemHandle): the child reads it and adds 1 in place; the parent reads its change
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def collectives(rank, world, out):
    dev = torch.device("cuda", rank)
    x = torch.arange(16, dtype=torch.float32, device=dev) * (rank + 1)
    dist.all_reduce(x)
    out.append("all_reduce %s" % x[:6].tolist())
    b = torch.full((8,), float(rank + 10), device=dev)
    dist.broadcast(b, src=0)
    out.append("broadcast %s" % b[:3].tolist())
    g = torch.empty(4 * world, device=dev)
    dist.all_gather_into_tensor(g, torch.full((4,), float(rank + 1), device=dev))
    out.append("all_gather %s" % g.tolist())
    rs = torch.empty(2, device=dev)
    dist.reduce_scatter_tensor(rs, torch.arange(2 * world, dtype=torch.float32, device=dev) + rank)
    out.append("reduce_scatter %s" % rs.tolist())
    peer = (rank + 1) % world
    send = torch.full((5,), float(rank * 100 + 7), device=dev)
    recv = torch.empty(5, device=dev)
    ops = [dist.P2POp(dist.isend, send, peer), dist.P2POp(dist.irecv, recv, (rank - 1) % world)]
    for w in dist.batch_isend_irecv(ops):   # one NCCL group: ncclGroupStart, ncclSend, ncclRecv, ncclGroupEnd
        w.wait()
    out.append("send/recv %s" % recv.tolist())
    dist.barrier()
    torch.cuda.synchronize()
    out.append("done")


def nccl_rank(rank, world, port, outdir):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    out = []
    collectives(rank, world, out)
    dist.destroy_process_group()
    if outdir is None:
        print("\n".join(out), flush=True)
    else:
        with open(os.path.join(outdir, "rank%d.txt" % rank), "w") as f:
            f.write("\n".join(out) + "\n")


def ipc_child(q, ack):
    t = q.get()
    print("child sees %.1f on %s" % (t.sum().item(), t.device), flush=True)
    t.add_(1.0)
    torch.cuda.synchronize()
    del t
    ack.put("added")


def ipc():
    ctx = mp.get_context("spawn")
    q, ack = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=ipc_child, args=(q, ack))
    p.start()
    t = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    q.put(t)
    print("child:", ack.get(timeout=120), flush=True)
    torch.cuda.synchronize()
    print("parent sees %.1f" % t.sum().item(), flush=True)
    p.join(timeout=120)
    print("child exit", p.exitcode, flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "nccl1":
        nccl_rank(0, 1, int(sys.argv[2]), None)
    elif mode == "nccl2":
        if torch.cuda.device_count() < 2:
            print("SKIP fewer than 2 GPUs")
            sys.exit(3)
        mp.spawn(nccl_rank, args=(2, int(sys.argv[2]), sys.argv[3]), nprocs=2, join=True)
        for r in range(2):
            with open(os.path.join(sys.argv[3], "rank%d.txt" % r)) as f:
                sys.stdout.write("rank %d\n%s" % (r, f.read()))
    elif mode == "ipc":
        ipc()
    else:
        sys.exit("usage: torch_dist.py nccl1 PORT | nccl2 PORT DIR | ipc")
