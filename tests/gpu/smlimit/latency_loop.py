"""latency_loop.py - an inference-like loop for the priority GPU check (tests/gpu/checks/priority.sh): small
batches (a bf16 MLP of a few layers on BATCH rows), each synchronized, the latency of each timed.

    python3 latency_loop.py [--seconds S] [--warmup W] [--batch B] [--idle-ms I] [--start-at T]

Prints 'latency p50_ms P p99_ms Q n N' over the measured part, and 'batches_per_s R'. --idle-ms sleeps between
batches (a serving loop that waits for requests); --start-at T (seconds since the epoch) keeps running unmeasured
after the warmup until the wall clock reaches T (a partner's warmup then lies outside the measured part).
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--idle-ms", type=float, default=0.0)
    ap.add_argument("--start-at", type=float, default=0.0)
    a = ap.parse_args()
    torch.manual_seed(0)
    w = [torch.randn(a.width, a.width, device="cuda", dtype=torch.bfloat16) / a.width ** 0.5 for _ in range(4)]
    x = torch.randn(a.batch, a.width, device="cuda", dtype=torch.bfloat16)

    def batch():
        y = x
        for m in w:
            y = torch.relu(y @ m)
        torch.cuda.synchronize()

    end = time.time() + a.warmup
    while time.time() < end or time.time() < a.start_at:
        batch()
    lat = []
    t_end = time.time() + a.seconds
    while time.time() < t_end:
        t0 = time.perf_counter()
        batch()
        lat.append((time.perf_counter() - t0) * 1000.0)
        if a.idle_ms > 0:
            time.sleep(a.idle_ms / 1000.0)
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print("latency p50_ms %.4f p99_ms %.4f n %d" % (p(0.50), p(0.99), len(lat)), flush=True)
    print("batches_per_s %.1f" % (len(lat) / a.seconds), flush=True)


if __name__ == "__main__":
    main()
