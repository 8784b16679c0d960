#!/usr/bin/env python3
"""us_bylib.py - memory by library on the GPU (tests/gpu/checks/usage.sh 'usage bylib').

USAGE: us_bylib.py CUSHIM_USAGE BUDGET_NAME   (run under the shim with memlimit in budget BUDGET_NAME)

Trains a small PyTorch MLP (fp32, AdamW) for 20 steps, holds a large tensor (16 GiB) so that the process's memory is
far above its context's own overhead, runs a cuBLAS matmul through PyTorch (bf16) and, where the wheel's
libcublas can be loaded, creates a cuBLAS handle directly (its own allocations). Then, with everything live,
reads NVML's figure for this process (nvidia-smi --query-compute-apps, LD_PRELOAD removed) and the budget's
Prometheus text (cushim-usage --prometheus BUDGET_NAME; the --by-library table goes to stderr, the check's log)
and prints:
  nvml <bytes>                    NVML's used memory of this process
  charged <bytes>                 memlimit's figure for this process (device 0)
  lib <name> <bytes>              memory by library of this process (device 0)
  named <bytes>                   the sum over libraries with a name ('(unknown)', '(other)' and
                                  '(not attributed)' excluded)
  loss <first> <last>             the training's losses (it trained)
or 'skip <why>' when nvidia-smi lists no process of this pid (another PID namespace) or torch has no GPU.
"""
import ctypes
import os
import re
import subprocess
import sys

usage_tool, budget = sys.argv[1], sys.argv[2]
try:
    import torch
except ImportError:
    print("skip no torch module")
    sys.exit(0)
if not torch.cuda.is_available():
    print("skip torch sees no GPU")
    sys.exit(0)
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

torch.manual_seed(0)
dev = torch.device("cuda:0")
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(8192, 8192), torch.nn.ReLU())],
                            torch.nn.Linear(8192, 16)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(4096, 8192, device=dev)
y = torch.randint(0, 16, (4096,), device=dev)
losses = []
for _ in range(20):
    opt.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
held = torch.empty(16 << 30, dtype=torch.uint8, device=dev)   # 16 GiB held: far above the context's overhead
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
c = a @ a                                                       # cuBLAS (PyTorch gives it its workspace)
handle = ctypes.c_void_p()
for name in ("libcublas.so.13", "libcublas.so.12", "libcublas.so"):
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        continue
    if lib.cublasCreate_v2(ctypes.byref(handle)) == 0:
        break
torch.cuda.synchronize()

out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True, timeout=60, env=env).stdout
nvml = None
for line in out.splitlines():
    p = [s.strip() for s in line.split(",")]
    if len(p) == 2 and p[0] == str(os.getpid()):
        nvml = int(p[1]) << 20
if nvml is None:
    print("skip nvidia-smi lists no process %d (another PID namespace?)" % os.getpid())
    sys.exit(0)
prom = subprocess.run([usage_tool, "--prometheus", budget], capture_output=True, text=True, timeout=60, env=env)
if prom.returncode != 0:
    print("error cushim-usage: %s" % prom.stderr.strip())
    sys.exit(1)
table = subprocess.run([usage_tool, "--by-library", budget], capture_output=True, text=True, timeout=60, env=env)
sys.stderr.write(table.stdout + table.stderr)   # the table, as people see it, in the check's log
pid = str(os.getpid())
charged, named, libs = 0, 0, {}
lab = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
for line in prom.stdout.splitlines():
    m = re.fullmatch(r'(\w+)\{(.*)\} (\S+)', line)
    if not m:
        continue
    labels = dict(lab.findall(m.group(2)))
    if labels.get("pid") != pid or labels.get("device") not in ("0", "all"):
        continue
    if m.group(1) == "cushim_memlimit_used_bytes":
        charged = int(m.group(3))
    elif m.group(1) == "cushim_memlimit_library_used_bytes":
        libs[labels["library"]] = libs.get(labels["library"], 0) + int(m.group(3))
for k, v in sorted(libs.items(), key=lambda kv: -kv[1]):
    print("lib %s %d" % (k, v))
    if k not in ("(unknown)", "(other)", "(not attributed)"):
        named += v
print("nvml %d" % nvml)
print("charged %d" % charged)
print("named %d" % named)
print("loss %.6f %.6f" % (losses[0], losses[-1]))
del held, c
