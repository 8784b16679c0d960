#!/usr/bin/env python3
"""hami_oom.py - the PyTorch training loop of torch_train.py, then one allocation past a quota.

USAGE: hami_oom.py [STEPS] [GIB]

Runs torch_train.main() (its 'loss ...' and 'params ...' lines, unchanged, so runs can be compared
with a native one), then allocates GIB GiB (default 5) on the GPU and prints one line:
'alloc <GIB>GiB oom' when PyTorch raised its out-of-memory error (a quota such as HAMi-core's
CUDA_DEVICE_MEMORY_LIMIT=4g held), 'alloc <GIB>GiB ok' when the allocation succeeded, or
'alloc <GIB>GiB error <type>' for anything else. Exit status: torch_train's.
"""
import os
import sys

gib = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
sys.argv = sys.argv[:2]   # torch_train reads STEPS only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_train  # noqa: E402
import torch  # noqa: E402


def main():
    rc = torch_train.main()
    sys.stdout.flush()
    try:
        x = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
        x.fill_(1)
        torch.cuda.synchronize()
        print("alloc %gGiB ok" % gib)
        del x
    except torch.OutOfMemoryError:
        print("alloc %gGiB oom" % gib)
    except Exception as e:  # noqa: BLE001 - report, the caller judges
        print("alloc %gGiB error %s" % (gib, type(e).__name__))
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
