# torch_graph.py - CUDA graphs in PyTorch for the GPU check 'remotegraphs' (tests/gpu/checks/remotegraphs.sh):
# the same script runs natively and through cushim-serve, and the outputs must be equal.
#   elementwise  torch.cuda.CUDAGraph capturing elementwise kernels and copies (no cuBLAS), replayed 10 times with
#                new inputs copied into the static tensor between replays
#   mlp          a small MLP's training step (forward, backward, SGD) captured with torch.cuda.graph after warm-up
#                on a side stream (PyTorch's documented recipe), replayed 20 times; the losses and the parameters
#   compile      torch.compile(mode="reduce-overhead") of a small model (Triton kernels, replayed as CUDA graphs):
#                its outputs over 5 calls
import sys

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "elementwise"
torch.manual_seed(0)
dev = "cuda"


def show(name, t):
    t = t.detach().float().cpu()
    print("%s: sum %.6f first %s" % (name, t.sum().item(), ["%.6f" % v for v in t.flatten()[:3].tolist()]))


if mode == "elementwise":
    x = torch.zeros(1 << 16, device=dev)
    y = torch.zeros(1 << 16, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):   # warm-up (kernels loaded) before capture
        y.copy_((x * 2.0 + 1.0).sin())
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y.copy_((x * 2.0 + 1.0).sin())
        y.add_(x.cos())
    print("captured, pool:", g.pool() is not None)
    for i in range(10):
        x.copy_(torch.arange(1 << 16, device=dev, dtype=torch.float32) * (0.001 * (i + 1)))
        g.replay()
        show("replay %d" % i, y)
elif mode == "mlp":
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev)
    loss_fn = torch.nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    static_x = torch.randn(32, 64, device=dev)
    static_y = torch.randn(32, 10, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    gen = torch.Generator(device="cpu").manual_seed(1)
    for i in range(20):
        static_x.copy_(torch.randn(32, 64, generator=gen))
        static_y.copy_(torch.randn(32, 10, generator=gen))
        g.replay()
        print("step %d loss %.6f" % (i, static_loss.item()))
    for n, p in model.named_parameters():
        show(n, p)
elif mode == "compile":
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).to(dev)
    f = torch.compile(model, mode="reduce-overhead")
    gen = torch.Generator(device="cpu").manual_seed(2)
    with torch.no_grad():
        for i in range(5):
            x = torch.randn(16, 32, generator=gen).to(dev)
            show("call %d" % i, f(x))
else:
    sys.exit("usage: torch_graph.py elementwise|mlp|compile")
torch.cuda.synchronize()
print("ok")
