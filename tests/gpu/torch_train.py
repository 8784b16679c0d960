#!/usr/bin/env python3
"""torch_train.py - a short deterministic PyTorch training loop for the GPU suite.

USAGE: torch_train.py [STEPS]

Trains a small MLP on fixed-seed random data on the GPU with deterministic algorithms
and prints one line per step, 'loss <step> <float.hex>', then 'params <float.hex>' (sum
of all parameters). Runs with and without the shim must print identical lines: every
kernel, cuBLAS call and copy went through the same real driver, only interposed.
"""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    if not torch.cuda.is_available():
        print("torch_train: CUDA not available", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(2048, 64, generator=g)
    w = torch.randn(64, 8, generator=g)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(2048, 8, generator=g)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 8))
    model.to(dev)
    x, y = x.to(dev), y.to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        i = (step * 256) % 2048
        xb, yb = x[i:i + 256], y[i:i + 256]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        v = loss.item()
        losses.append(v)
        print("loss %d %s" % (step, float.hex(v)))
    torch.cuda.synchronize()
    total = sum(float(p.detach().double().sum().item()) for p in model.parameters())
    print("params %s" % float.hex(total))
    print("device %s" % torch.cuda.get_device_name(0), file=sys.stderr)
    if not losses[-1] < losses[0]:
        print("torch_train: loss did not decrease: %r -> %r" % (losses[0], losses[-1]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
