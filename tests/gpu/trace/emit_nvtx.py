"""emit_nvtx.py - PyTorch's own NVTX ranges for the GPU check 'tracenvtx' (tests/gpu/checks/trace.sh).

A small MLP trained for 3 steps under torch.autograd.profiler.emit_nvtx(): PyTorch pushes a range for every
operator ("aten::addmm, seq = N, ..." on the main thread, the backward's on autograd's own thread), nested,
thousands of them, with a sequence number in most names - the heaviest NVTX load a PyTorch user makes. Prints
the loss of each step, so that a traced run's output can be compared with an untraced one's.
"""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")
with torch.autograd.profiler.emit_nvtx():
    for step in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        print("step %d loss %.6f" % (step, loss.item()), flush=True)
