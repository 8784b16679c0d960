"""matmul_loop.py - steady GPU loads for the smlimit GPU check (tests/gpu/checks/smlimit.sh).

    python3 matmul_loop.py MODE [--seconds S] [--warmup W] [--size N] [--clocks] [--start-at T] [--linger L]

MODE  matmul  a bf16 N x N matmul loop; prints 'rate <TFLOP/s>'
      graph   the same matmuls captured in a CUDA graph (10 per graph) and replayed; 'rate <TFLOP/s>'
      train   a bf16 MLP training step loop (forward, backward, AdamW); 'rate <steps/s>'
The loop runs W seconds unmeasured (the limiter's initial credit is spent there), then S seconds
measured: the rate is the work finished between two synchronisations divided by the host time between
them. With --clocks, a thread samples device 0's SM clock, power draw and
clock-event reasons through NVML (ctypes, libnvidia-ml.so.1) every 20 ms of the measured part and prints
'clocks sm_mhz <median> <min> <max> power_w <median> reasons 0x<or of all samples> samples <n>': the
limiter holds a share of GPU *time*; these tell whether the GPU ran faster per busy second when throttled.
--start-at T (seconds since the epoch) keeps the load running unmeasured after the warmup until the wall
clock reaches T, and --linger L keeps it running L seconds after the measured part: two processes started
together measure the same window while both load the GPU (the smlimit check's 30/70 pair; without these, one
process's window could run past the other's exit, alone on the GPU). A process whose warmup ends after T
prints 'late <seconds>' and measures from there.
Exit 2 when no GPU is there.
"""
import argparse
import ctypes
import statistics
import sys
import threading
import time


class Clocks:
    """NVML samples of device 0 in a thread; nothing when NVML cannot be loaded."""

    def __init__(self):
        self.nvml = None
        self.samples = []
        self.reasons = 0
        self.stop = threading.Event()
        try:
            nv = ctypes.CDLL("libnvidia-ml.so.1")
            if nv.nvmlInit_v2() != 0:
                return
            self.dev = ctypes.c_void_p()
            if nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)) != 0:
                return
            self.nvml = nv
        except OSError:
            pass

    def _run(self):
        nv = self.nvml
        clk, mw, why = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
        while not self.stop.wait(0.02):
            if nv.nvmlDeviceGetClockInfo(self.dev, 1, ctypes.byref(clk)) != 0:   # NVML_CLOCK_SM
                continue
            if nv.nvmlDeviceGetPowerUsage(self.dev, ctypes.byref(mw)) != 0:
                continue
            if nv.nvmlDeviceGetCurrentClocksEventReasons(self.dev, ctypes.byref(why)) == 0:
                self.reasons |= why.value
            self.samples.append((clk.value, mw.value / 1000.0))

    def start(self):
        if self.nvml is not None:
            self.t = threading.Thread(target=self._run, daemon=True)
            self.t.start()

    def report(self):
        if self.nvml is None:
            print("clocks none (NVML not loaded)")
            return
        self.stop.set()
        self.t.join()
        if not self.samples:
            print("clocks none (no sample)")
            return
        mhz = [c for c, _ in self.samples]
        w = [p for _, p in self.samples]
        print("clocks sm_mhz %d %d %d power_w %.0f reasons 0x%x samples %d" % (
            statistics.median(mhz), min(mhz), max(mhz), statistics.median(w), self.reasons, len(mhz)), flush=True)

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["matmul", "graph", "train"])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--clocks", action="store_true")
    ap.add_argument("--start-at", type=float, default=0.0)
    ap.add_argument("--linger", type=float, default=0.0)
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
    if a.start_at > 0:
        wait = a.start_at - time.time()
        if wait < 0:
            print("late %.3f" % -wait, flush=True)
        else:
            run_for(wait)
    clocks = Clocks() if a.clocks else None
    if clocks:
        clocks.start()
    steps, dt = run_for(a.seconds)
    print("rate %.3f" % (steps * work / dt), flush=True)
    if clocks:
        clocks.report()
    if a.linger > 0:
        run_for(a.linger)
    return 0


if __name__ == "__main__":
    sys.exit(main())
