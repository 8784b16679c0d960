#!/usr/bin/env python3
"""ov_train.py - deterministic PyTorch training whose memory is a few GiB, for tests/gpu/checks/oversub.sh.

USAGE: ov_train.py [STEPS]

An fp32 MLP (4 layers of 8192 x 8192) trained with Adam on fixed-seed data, deterministic algorithms, PyTorch's
default caching allocator (run without expandable segments). Prints 'loss <step> <float.hex>' per step,
'params <float.hex>', 'peak <bytes>' (torch.cuda.max_memory_reserved: what the allocator took from cudaMalloc)
and 'seconds <float>' (the training steps after the first, synchronised).
"""
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    if not torch.cuda.is_available():
        print("skip CUDA not available")
        return 0
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator().manual_seed(1234)
    width, batch = 8192, 2048
    x = torch.randn(batch, width, generator=g).to(dev)
    y = torch.randn(batch, width, generator=g).to(dev)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers[:-1]).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    t0 = None
    for step in range(steps):
        if step == 1:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        print("loss %d %s" % (step, loss.item().hex()), flush=True)
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0 if t0 is not None else 0.0
    total = sum(p.detach().double().sum().item() for p in model.parameters())
    print("params %s" % total.hex())
    print("peak %d" % torch.cuda.max_memory_reserved())
    print("seconds %.3f" % secs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
