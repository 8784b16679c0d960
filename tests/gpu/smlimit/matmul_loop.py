"""matmul_loop.py - steady GPU loads for the smlimit GPU check (tests/gpu/checks/smlimit.sh).

    python3 matmul_loop.py MODE [--seconds S] [--warmup W] [--size N]

MODE  matmul  a bf16 N x N matmul loop; prints 'rate <TFLOP/s>'
      graph   the same matmuls captured in a CUDA graph (10 per graph) and replayed; 'rate <TFLOP/s>'
      train   a bf16 MLP training step loop (forward, backward, AdamW); 'rate <steps/s>'
The loop runs W seconds unmeasured (the limiter's initial credit is spent there), then S seconds
measured: the rate is the work finished between two synchronisations divided by the host time between
them. Exit 2 when no GPU is there.
"""
import argparse
import sys
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["matmul", "graph", "train"])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=8192)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no GPU", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    torch.manual_seed(0)
    n = a.size
    if a.mode in ("matmul", "graph"):
        x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        y = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        out = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
        per = 1
        if a.mode == "graph":
            per = 10
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    torch.matmul(x, y, out=out)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(per):
                    torch.matmul(x, y, out=out)

            def step():
                g.replay()
        else:
            def step():
                torch.matmul(x, y, out=out)
        work = 2.0 * n * n * n * per / 1e12   # TFLOP per step
    else:
        width, batch = 4096, 8192
        model = torch.nn.Sequential(
            torch.nn.Linear(width, width), torch.nn.GELU(),
            torch.nn.Linear(width, width), torch.nn.GELU(),
            torch.nn.Linear(width, width), torch.nn.GELU(),
            torch.nn.Linear(width, 1024),
        ).to(dev, dtype=torch.bfloat16)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        xb = torch.randn(batch, width, device=dev, dtype=torch.bfloat16)
        yb = torch.randn(batch, 1024, device=dev, dtype=torch.bfloat16)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
        work = 1.0

    def run_for(seconds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        steps = 0
        while True:
            for _ in range(4):
                step()
            steps += 4
            # the host runs ahead of the GPU by at most the launch queue; the time check is cheap
            if time.perf_counter() - t0 >= seconds:
                break
        torch.cuda.synchronize()
        return steps, time.perf_counter() - t0

    run_for(a.warmup)
    steps, dt = run_for(a.seconds)
    print("rate %.3f" % (steps * work / dt), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
