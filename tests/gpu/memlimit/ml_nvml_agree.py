#!/usr/bin/env python3
"""ml_nvml_agree.py - the shim's figure for this process against NVML's (tests/gpu/checks/memlimit.sh).

USAGE: ml_nvml_agree.py QUOTA_BYTES

Through the driver API (ctypes on libcuda.so.1, so the preloaded shim sees every call): creates a
context and asks nvidia-smi for this process's used memory (the context's own overhead), allocates
2 x 1 GiB with cuMemAlloc, asks again, and reads the shim's figure as QUOTA - free (cuMemGetInfo under
memlimit). Prints 'overhead <bytes>', 'nvml <bytes>' (the process's figure minus the overhead), 'shim
<bytes>', or 'skip <why>' when nvidia-smi lists no process (another PID namespace).
"""
import ctypes
import os
import subprocess
import sys

quota = int(sys.argv[1])
cu = ctypes.CDLL("libcuda.so.1")


def ok(r, what):
    if r != 0:
        print("error %s %d" % (what, r))
        sys.exit(1)


def nvml_used():
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30,
                             env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}).stdout
    except Exception:  # noqa: BLE001
        return None
    for line in out.splitlines():
        p = [s.strip() for s in line.split(",")]
        if len(p) == 2 and p[0] == str(os.getpid()):
            return int(p[1]) * 2**20
    return None


ok(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
ok(cu.cuCtxSetCurrent(ctx), "set")
base = nvml_used()
if base is None:
    print("skip nvidia-smi is missing or lists no process %d (another PID namespace?)" % os.getpid())
    sys.exit(0)
ptrs = []
for _ in range(2):
    p = ctypes.c_uint64()
    ok(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 30)), "cuMemAlloc")
    ptrs.append(p)
free, total = ctypes.c_size_t(), ctypes.c_size_t()
ok(cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
after = nvml_used()
print("overhead %d" % base)
print("nvml %d" % (after - base))
print("shim %d" % (quota - free.value))
print("total %d" % total.value)
for p in ptrs:
    cu.cuMemFree_v2(p)
