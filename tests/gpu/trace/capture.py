"""capture.py - a PyTorch training loop for the GPU check 'tracecapture' (tests/gpu/checks/trace.sh).

Eight steps, each inside an NVTX range 'step N' (recorded whether or not calls are); steps 3 and 4 are inside
torch.cuda.profiler.start()/stop() (cudaProfilerStart/Stop) and, inside that, an NVTX range 'capture'. Traced
with --trace-capture=cudaProfilerApi or --trace-capture=nvtx:capture, only the calls of steps 3 and 4 are
recorded (trace_check.py capture). Prints one line 'loss N <float.hex>' per step.
"""
import torch

torch.manual_seed(0)
dev = torch.device("cuda")
x = torch.randn(1024, 64, device=dev)
y = torch.randn(1024, 8, device=dev)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def step(i):
    torch.cuda.nvtx.range_push("step %d" % i)
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("loss %d %s" % (i, loss.item().hex()), flush=True)   # .item() synchronises: the step's calls end here
    torch.cuda.nvtx.range_pop()


for i in range(3):
    step(i)
torch.cuda.profiler.start()
torch.cuda.nvtx.range_push("capture")
for i in range(3, 5):
    step(i)
torch.cuda.nvtx.range_pop()
torch.cuda.profiler.stop()
for i in range(5, 8):
    step(i)
