#!/usr/bin/env python3
"""ml_devices.py - per-device quotas seen by PyTorch (memlimit2): prints 'dev I total T oom O' for each
device, O being what allocating 3 GiB there gave ('own' out-of-memory, 'none' success, 'other')."""
import torch

for i in range(torch.cuda.device_count()):
    free, total = torch.cuda.mem_get_info(i)
    try:
        x = torch.empty(3 << 30, dtype=torch.uint8, device="cuda:%d" % i)
        x.fill_(1)
        torch.cuda.synchronize(i)
        o = "none"
        del x
    except torch.OutOfMemoryError:
        o = "own"
    except Exception as e:  # noqa: BLE001
        o = "other-" + type(e).__name__
    torch.cuda.empty_cache()
    print("dev %d total %d oom %s" % (i, total, o))
