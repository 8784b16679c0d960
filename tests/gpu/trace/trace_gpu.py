#!/usr/bin/env python3
"""trace_gpu.py - a small deterministic PyTorch workload for the trace plugin's GPU check.

USAGE:
  trace_gpu.py run STEPS             warm-up steps, then STEPS steps inside the NVTX range 'measured'
                                     (torch.cuda.nvtx.range_push), each step in its own range 'step N'
  trace_gpu.py witness STEPS OUT     the same steps under the PyTorch profiler (CUPTI activity, no shim):
                                     writes the number of GPU kernels of the measured steps to OUT
  trace_gpu.py bench STEPS           prints 'median_step_ns N' over STEPS synchronised steps after warm-up
  trace_gpu.py abbench BLOCKS STEPS  under 'cushim run --trace --trace-toggle=USR2': BLOCKS blocks of STEPS steps,
                                     recording and paused in the order ABBA... (the process sends itself
                                     SIGUSR2 to switch); prints each block's median step and 'ab_ratio R': the
                                     median over pairs of (recording block / neighbouring paused block) - the
                                     recording's cost in one process, free of process-to-process noise
                                     TRACE_AB_SETTLE_MS=N: after each switch, twice (N ms of sleep, then an
                                     untimed step) before the block's steps (a switch that a helper thread
                                     completes, as unhook's does, or that waits for a launch)
  trace_gpu.py detach STEPS PAUSE GRACE
                                     under 'cushim run --trace-gpu --trace-unhook --trace-capture=cudaProfilerApi'
                                     (check tracedetach): STEPS steps in a capture range (NVTX 'range1'), PAUSE
                                     seconds of steps paused - those of the first 0.8 x GRACE s in NVTX
                                     'pause-early', those from GRACE + 0.3 s on in 'pause-late' (the plugin
                                     detaches CUPTI GRACE s into the pause) - then STEPS steps in a second range
                                     ('range2'); prints 'pause_early_ns MEDIAN N' and 'pause_late_ns MEDIAN N'
                                     (steps), 'burst_early_ns MEDIAN B' and 'burst_late_ns MEDIAN B' (a burst of
                                     B launches of a one-element add and one synchronize after each step;
                                     TRACE_DETACH_BURST=B, 200).
                                     The first record is the range push after cudaProfilerStart (the file opens
                                     there, CUPTI starts inside that NVTX call); TRACE_DETACH_NVTX_WARM=1 pushes
                                     a range 'warm' before the first capture range (the file opens while paused)

  trace_gpu.py fork STEPS [paused]   under 'cushim run --trace-gpu' (check tracefork): STEPS steps, then a fork;
                                     the child calls cuProfilerStart, cuDeviceGetCount and cuProfilerStop through
                                     libcuda's handle (ctypes: the shim's wrappers; not torch, which refuses
                                     CUDA in a forked child) and exits through Python's normal exit (the trace's
                                     flush at exit runs); the parent waits for it (60 s, then kills it and says
                                     'child hung'), then STEPS steps more. 'paused': the steps in two capture
                                     ranges (cudaProfilerStart/Stop) and the fork after a paused step 1.5 s
                                     into the pause between them (--trace-unhook: CUPTI detached by then). Prints 'child PID' and
                                     'child_status S'.
  trace_gpu.py profiler STEPS        STEPS steps in NVTX 'before', STEPS under torch.profiler (CUPTI activity: a
                                     second CUPTI client in the process) in 'profiled', STEPS in 'after'; prints
                                     'profiler_kernels N' (the GPU kernels the profiler saw)
  trace_gpu.py profilerfirst STEPS   torch.profiler entered before the first CUDA work (its CUPTI client first), the
                                     set-up and STEPS steps in 'profiled' inside it, STEPS in 'after'; prints the same

TRACE_GPU_MODEL picks the model: mlp (default; a step of ~1.5-2 ms and ~456 CUDA calls whose time is the CPU's,
the calls coming one at a time between stretches of Python: the worst case for a tracer) or transformer (4
encoder layers, d_model 512, batch 32 x 256 tokens, AdamW: a step of ~21 ms on an H200 making ~9,100 CUDA calls
and ~250 launches, the GPU ~2 ms behind the CPU at the step's synchronize).

The warm-up runs the same step twice first (cuBLAS handles, allocator), so that the measured steps
launch the same kernels in every run.
"""
import os
import statistics
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def setup():
    kind = os.environ.get("TRACE_GPU_MODEL", "mlp")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    if kind == "mlp":
        torch.use_deterministic_algorithms(True)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        x = torch.randn(256, 64, device=dev)
        y = torch.randn(256, 8, device=dev)
    elif kind == "transformer":
        # a larger step (~21 ms on an H200, ~9,100 CUDA calls): the launches queue ahead of the GPU
        layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randn(32, 256, 512, device=dev)
        y = torch.randn(32, 256, 512, device=dev)
    else:
        raise SystemExit("TRACE_GPU_MODEL=%s: mlp or transformer" % kind)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    return step


def ranged(step, steps, name):
    """STEPS synchronised steps inside the NVTX range NAME"""
    torch.cuda.nvtx.range_push(name)
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def profiler_kernels(prof):
    return len([e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                and not e.name.startswith(("Memcpy", "Memset"))])


def profiler_first(steps):
    """torch.profiler entered before the program's first CUDA work (its CUPTI client comes first), the model set
    up and STEPS steps in 'profiled' inside it, STEPS steps in 'after' once it ended"""
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    prof.__enter__()
    step = setup()
    ranged(step, steps, "profiled")
    prof.__exit__(None, None, None)
    print("profiler_kernels %d" % profiler_kernels(prof), flush=True)
    ranged(step, steps, "after")
    print("profiler done", flush=True)
    return 0


def main():
    mode = sys.argv[1]
    steps = int(sys.argv[2])
    if mode == "profilerfirst":
        return profiler_first(steps)
    step = setup()
    if mode == "run":
        torch.cuda.nvtx.range_push("measured")
        for i in range(steps):
            torch.cuda.nvtx.range_push("step %d" % i)
            step()
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        # a copy each way after the range (the memory tables, trace_check.py memops)
        h = torch.arange(1024, dtype=torch.float32).to("cuda")
        print("run: %d steps (%g)" % (steps, float(h.sum())))
    elif mode == "witness":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA
                   and not e.name.startswith(("Memcpy", "Memset"))]
        with open(sys.argv[3], "w") as f:
            f.write("%d\n" % len(kernels))
        print("witness: %d kernels" % len(kernels))
    elif mode == "bench":
        times = []
        for _ in range(steps):
            t0 = time.perf_counter_ns()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter_ns() - t0)
        print("median_step_ns %d" % statistics.median(times))
    elif mode == "detach":
        import faulthandler
        pause, grace = float(sys.argv[3]), float(sys.argv[4])
        nvtx = torch.cuda.nvtx
        # where a hang is (a switch of CUPTI that never returns): the Python stack on stderr after N s
        faulthandler.dump_traceback_later(float(os.environ.get("TRACE_DETACH_WATCHDOG", "80")), exit=True)

        # a burst: BURST launches of a one-element add, one synchronize - the launches' CPU time, which CUPTI's
        # per-launch work adds to, unhidden by the GPU (the step's time is mostly its Python and the GPU's)
        z = torch.zeros(1, device="cuda")
        burst_n = int(os.environ.get("TRACE_DETACH_BURST", "200"))

        def burst():
            for _ in range(burst_n):
                z.add_(1.0)
            torch.cuda.synchronize()

        def timed_steps(until, t_pause):
            """steps and bursts, alternated, until UNTIL s after T_PAUSE: (step times, burst times) in ns"""
            times, btimes = [], []
            while time.perf_counter() - t_pause < until:
                t0 = time.perf_counter_ns()
                step()
                torch.cuda.synchronize()
                t1 = time.perf_counter_ns()
                burst()
                times.append(t1 - t0)
                btimes.append(time.perf_counter_ns() - t1)
            return times, btimes

        if os.environ.get("TRACE_DETACH_NVTX_WARM") == "1":   # the file opened before the first range (run 122)
            nvtx.range_push("warm")
            nvtx.range_pop()
        for r in (1, 2):
            torch.cuda.profiler.start()
            print("range%d started" % r, flush=True)
            nvtx.range_push("range%d" % r)
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
            nvtx.range_pop()
            t0 = time.perf_counter_ns()
            torch.cuda.profiler.stop()   # the pause: the first one starts gpu_detach's flusher thread
            print("range%d stopped (profiler_stop_ns %d)" % (r, time.perf_counter_ns() - t0), flush=True)
            if r == 2:
                break
            t_pause = time.perf_counter()
            nvtx.range_push("pause-early")
            early = timed_steps(0.8 * grace, t_pause)
            nvtx.range_pop()
            timed_steps(grace + 0.3, t_pause)
            print("pause-early done", flush=True)
            nvtx.range_push("pause-late")
            late = timed_steps(pause, t_pause)
            nvtx.range_pop()
            print("pause-late done", flush=True)
        faulthandler.cancel_dump_traceback_later()
        print("pause_early_ns %d %d" % (statistics.median(early[0]), len(early[0])))
        print("pause_late_ns %d %d" % (statistics.median(late[0]), len(late[0])))
        print("burst_early_ns %d %d" % (statistics.median(early[1]), burst_n))
        print("burst_late_ns %d %d" % (statistics.median(late[1]), burst_n))
    elif mode == "fork":
        import ctypes
        paused = len(sys.argv) > 3 and sys.argv[3] == "paused"
        # libcuda's handle (torch loaded it RTLD_LOCAL: not in the global scope, where dlopen(NULL) looks, with
        # or without the shim); dlsym on it answers the shim's wrapper
        g = ctypes.CDLL("libcuda.so.1")

        def steps_once():
            if paused:
                torch.cuda.profiler.start()
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
            if paused:
                torch.cuda.profiler.stop()

        steps_once()
        if paused:   # CUPTI flushed 1 s into the pause, detached at the next launch's exit: this step's first
            time.sleep(1.5)
            step()
            torch.cuda.synchronize()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            n = ctypes.c_int(-1)
            r1 = g.cuProfilerStart()
            r2 = g.cuDeviceGetCount(ctypes.byref(n))
            r3 = g.cuProfilerStop()
            print("child %d results %d %d %d count %d" % (os.getpid(), r1, r2, r3, n.value), flush=True)
            sys.exit(0)
        print("child %d" % pid, flush=True)
        status = None
        for _ in range(600):
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid == pid:
                status = st
                break
            time.sleep(0.1)
        if status is None:
            print("child hung", flush=True)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            status = -1
        print("child_status %d" % status, flush=True)
        steps_once()
        print("parent done", flush=True)
    elif mode == "profiler":
        # a CUPTI client started inside the traced program: torch.profiler over the middle steps
        from torch.profiler import ProfilerActivity, profile
        ranged(step, steps, "before")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            ranged(step, steps, "profiled")
        print("profiler_kernels %d" % profiler_kernels(prof), flush=True)
        ranged(step, steps, "after")
        print("profiler done", flush=True)
    elif mode == "abbench":
        import signal
        blocks, per = steps, int(sys.argv[3])
        recording = True          # the trace plugin starts recording (no --trace-paused)
        settle = int(os.environ.get("TRACE_AB_SETTLE_MS", "0")) / 1000.0
        on, off, ratios = [], [], []
        for b in range(blocks):
            want = (b % 4) in (0, 3)   # ABBA: on, off, off, on, on, off, off, on ...
            if want != recording:
                os.kill(os.getpid(), signal.SIGUSR2)
                recording = want
                for _ in range(2 if settle > 0 else 0):   # twice: a switch may finish during the first step
                    time.sleep(settle)
                    step()   # untimed steps in the new state before the timed ones
                    torch.cuda.synchronize()
            times = []
            for _ in range(per):
                t0 = time.perf_counter_ns()
                step()
                torch.cuda.synchronize()
                times.append(time.perf_counter_ns() - t0)
            m = statistics.median(times)
            (on if recording else off).append(m)
            print("block %d %s %d" % (b, "recording" if recording else "paused", m))
        for a, b in zip(on, off):
            ratios.append(a / b)
        print("ab_on_ns %d" % statistics.median(on))
        print("ab_off_ns %d" % statistics.median(off))
        print("ab_ratio %.4f %.4f %.4f" % (statistics.median(ratios), min(ratios), max(ratios)))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
