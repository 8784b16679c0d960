#!/usr/bin/env python3
"""torch_oom.py - PyTorch under an injected allocation failure (the GPU suite's 'sdk' check).

USAGE: torch_oom.py warmup|oom

warmup  puts a small tensor on the GPU and computes with it; prints 'oom_check: warmup <value>'.
oom     the same warm-up, then asks for 1 GiB. The suite runs this mode with a faultinject rule that
        fails every driver allocation after the warm-up's (counted in a warmup run), so PyTorch's
        caching allocator gets CUDA_ERROR_OUT_OF_MEMORY from the driver, frees its cache, retries,
        and must raise its own torch.OutOfMemoryError. Afterwards the warm-up tensor must still
        compute correctly from memory PyTorch already holds: nothing else broke.
        Prints 'oom_check: PASS ...' or 'oom_check: FAIL ...' and exits 0 / 1.
"""
import sys

import torch


def warmup():
    x = torch.arange(1024, dtype=torch.float32, device="cuda")
    s = float((x * 2 + 1).sum().item())
    torch.cuda.synchronize()
    return x, s


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "oom"
    x, s = warmup()
    expect = float(sum(2 * i + 1 for i in range(1024)))
    if s != expect:
        print(f"oom_check: FAIL warm-up sum {s} != {expect}")
        return 1
    if mode == "warmup":
        print(f"oom_check: warmup {s}")
        return 0
    try:
        y = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        y.fill_(1)
        torch.cuda.synchronize()
        print("oom_check: FAIL 1 GiB allocation succeeded: the injected fault did not reach PyTorch")
        return 1
    except torch.OutOfMemoryError as e:
        first = str(e).splitlines()[0][:160]
    except Exception as e:  # anything else is a failure: the error must be PyTorch's own OOM
        print(f"oom_check: FAIL {type(e).__name__} instead of torch.OutOfMemoryError: {str(e)[:200]}")
        return 1
    s2 = float((x * 2 + 1).sum().item())
    torch.cuda.synchronize()
    if s2 != expect:
        print(f"oom_check: FAIL after the OOM the warm-up tensor computes {s2} != {expect}")
        return 1
    print(f"oom_check: PASS torch.OutOfMemoryError raised ('{first}'); afterwards x*2+1 still correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
