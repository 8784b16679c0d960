#!/usr/bin/env python3
"""torch_fill.py - one of the 'remote four' clients (tests/gpu/checks/remote.sh).

USAGE: torch_fill.py TAG GO_FILE

Fills the GPU with 256 MiB tensors, each filled with its own index, until PyTorch raises its own
torch.OutOfMemoryError (the server-side quota); prints 'fill TAG: N blocks, OOM <exception type>'; then
waits (up to 120 s) for GO_FILE to exist and verifies every block on the GPU (each block's sum) after the
other clients ran (one of them SIGKILLed): prints 'verify TAG: OK N blocks' or 'verify TAG: FAIL ...'.
Exits 0 when the OOM was PyTorch's own and every block verified.
"""
import os
import sys
import time

import torch

BLOCK = 256 << 20


def main():
    tag, go = sys.argv[1], sys.argv[2]
    blocks = []
    oom = "none"
    try:
        for i in range(64):   # 16 GiB: past any quota the check sets
            blocks.append(torch.full((BLOCK // 4,), float(i + 1), dtype=torch.float32, device="cuda"))
        torch.cuda.synchronize()
    except torch.OutOfMemoryError as e:
        oom = type(e).__name__
    print(f"fill {tag}: {len(blocks)} blocks, OOM {oom}", flush=True)
    deadline = time.time() + 120
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.1)
    # read back to the host (a copy, no device memory: the client holds its whole quota, and a reduction on the
    # GPU would need a block of its own)
    bad = [i for i, b in enumerate(blocks) if float(b.cpu().sum().item()) != float(i + 1) * (BLOCK // 4)]
    ok = oom == "OutOfMemoryError" and not bad and len(blocks) > 0
    print(f"verify {tag}: {'OK' if ok else 'FAIL'} {len(blocks)} blocks" + (f", bad {bad}" if bad else ""),
          flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
