"""PyTorch's NVML queries under the shim (tests/gpu/checks/universal.sh, 'universal nvml-torch').

Prints one JSON line: the device count NVML gave torch (torch.cuda._raw_device_count_nvml: ctypes CDLL of
libnvidia-ml.so.1, nvmlInit + nvmlDeviceGetCount_v2), torch.cuda.device_count(), and what the pynvml-based
queries (torch.cuda.device_memory_used, torch.cuda.list_gpu_processes) answered, when pynvml is installed.
"""
import json
import sys

import torch

out = {"cuda_count": torch.cuda.device_count()}
out["nvml_count"] = torch.cuda._raw_device_count_nvml()
x = torch.ones(1 << 20, device="cuda")  # this process holds memory on device 0
torch.cuda.synchronize()
try:
    out["memory_used"] = int(torch.cuda.device_memory_used(0))
except Exception as e:  # no pynvml: the raw query above still went through NVML
    out["memory_used_error"] = repr(e)[:200]
try:
    out["processes"] = torch.cuda.list_gpu_processes(0)[:300]
except Exception as e:
    out["processes_error"] = repr(e)[:200]
print(json.dumps(out))
sys.exit(0 if out["nvml_count"] == out["cuda_count"] and out["cuda_count"] > 0 else 1)
