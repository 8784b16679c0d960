#!/usr/bin/env python3
"""torch_step.py - PyTorch training steps, timed: the program of the GPU check 'remotestep'
(tests/gpu/checks/remotestep.sh; issue 43's step targets), run locally and over remoting in turns.

USAGE: torch_step.py MODEL WARMUP STEPS
  MODEL  mlp          launch-bound: 4 Linear layers of 256 (ReLU), batch 64, f32, SGD with momentum;
                      about 1 ms a step on an H100, nearly all of it the host issuing ~40 kernels and GEMMs
         transformer  compute-bound: 16 pre-norm blocks of width 2048 (16 heads, attention written out as two
                      batched GEMMs and a softmax, MLP 4x with GELU), batch 8 x 1024 tokens, bf16, SGD;
                      about 27 TFLOP a step: >= 50 ms on an H100 (60-70 ms by estimate)
  TORCH_STEP_LAYERS=K in the environment gives the transformer K blocks instead of 16 (its step scales with K).
  WARMUP steps run first untimed (cuBLAS's heuristics, the caching allocator's growth), then STEPS timed ones.

Each timed step: torch.cuda.synchronize(), the wall clock read, an event recorded, the step (zero_grad, forward,
loss, backward, optimizer step), an event recorded and waited for, the wall clock read. Prints

  torch_step MODEL warmup W steps N
  gpu_ms median M p10 A p90 B      (the events' elapsed times)
  wall_ms median M p10 A p90 B     (the wall clock's)
  loss HEX                         (the last step's loss, float.hex: seeded, deterministic algorithms)

Seeds and data are fixed, so a remote run prints the loss a local run of the same length prints. Exits 1
with a message when PyTorch or CUDA is not available, 2 when an argument is wrong.
"""
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

MODELS = ("mlp", "transformer")


def usage(msg):
    print("torch_step: %s\nusage: torch_step.py mlp|transformer WARMUP STEPS" % msg, file=sys.stderr)
    return 2


def percentile(sorted_vals, q):
    """the q-th percentile (0..100) of sorted_vals, linear between the closest ranks"""
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    pos = (len(sorted_vals) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def summary(name, vals):
    s = sorted(vals)
    return "%s median %.4f p10 %.4f p90 %.4f" % (name, percentile(s, 50), percentile(s, 10), percentile(s, 90))


def build_mlp(torch, dev):
    g = torch.Generator(device="cpu").manual_seed(1234)
    x = torch.randn(8, 64, 256, generator=g).to(dev)   # 8 batches of 64, used in turn
    y = torch.randn(8, 64, 16, generator=g).to(dev)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 16)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return model, opt, x, y


def build_transformer(torch, dev):
    nn = torch.nn
    width, heads, batch, seq = 2048, 16, 8, 1024
    layers = int(os.environ.get("TORCH_STEP_LAYERS", "16"))
    dt = torch.bfloat16

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(width, device=dev, dtype=dt)
            self.qkv = nn.Linear(width, 3 * width, device=dev, dtype=dt)
            self.proj = nn.Linear(width, width, device=dev, dtype=dt)
            self.ln2 = nn.LayerNorm(width, device=dev, dtype=dt)
            self.up = nn.Linear(width, 4 * width, device=dev, dtype=dt)
            self.down = nn.Linear(4 * width, width, device=dev, dtype=dt)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
            # written out rather than scaled_dot_product_attention, whose fused backwards are not all
            # deterministic: the same losses locally and remotely
            att = torch.softmax((q * (width // heads) ** -0.5) @ k.transpose(-2, -1), dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, width))
            return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))

    model = nn.Sequential(*[Block() for _ in range(layers)], nn.LayerNorm(width, device=dev, dtype=dt),
                          nn.Linear(width, 256, device=dev, dtype=dt))
    g = torch.Generator(device=dev).manual_seed(1234)
    x = torch.randn(2, batch, seq, width, generator=g, device=dev, dtype=dt)   # 2 batches, used in turn
    y = torch.randn(2, batch, seq, 256, generator=g, device=dev, dtype=torch.float32)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    return model, opt, x, y


def main(argv):
    if len(argv) != 4 or argv[1] not in MODELS:
        return usage("want MODEL (%s), WARMUP and STEPS" % "|".join(MODELS))
    try:
        warmup, steps = int(argv[2]), int(argv[3])
    except ValueError:
        return usage("WARMUP and STEPS are numbers: %r %r" % (argv[2], argv[3]))
    if warmup < 0 or steps < 1:
        return usage("WARMUP >= 0 and STEPS >= 1: %d %d" % (warmup, steps))
    layers = os.environ.get("TORCH_STEP_LAYERS", "16")
    if not layers.isdigit() or int(layers) < 1:
        return usage("TORCH_STEP_LAYERS=%s: give a number of blocks, 1 or more" % layers)
    try:
        import torch
    except ImportError as e:
        print("torch_step: no PyTorch for %s: %s" % (sys.executable, e), file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("torch_step: CUDA not available", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    model, opt, x, y = (build_mlp if argv[1] == "mlp" else build_transformer)(torch, dev)
    loss = None

    def step(i):
        xb, yb = x[i % x.shape[0]], y[i % y.shape[0]]
        opt.zero_grad(set_to_none=True)
        out = model(xb)
        lv = torch.nn.functional.mse_loss(out.float(), yb)
        lv.backward()
        opt.step()
        return lv

    for i in range(warmup):
        loss = step(i)
    gpu_ms, wall_ms = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(warmup, warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        loss = step(i)
        end.record()
        end.synchronize()
        t1 = time.perf_counter()
        wall_ms.append((t1 - t0) * 1e3)
        gpu_ms.append(start.elapsed_time(end))
    print("torch_step %s warmup %d steps %d" % (argv[1], warmup, steps))
    print(summary("gpu_ms", gpu_ms))
    print(summary("wall_ms", wall_ms))
    print("loss %s" % float.hex(float(loss.item())))
    print("device %s" % torch.cuda.get_device_name(0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
