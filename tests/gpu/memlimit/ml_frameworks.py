#!/usr/bin/env python3
"""ml_frameworks.py - a framework under a GPU memory quota (tests/gpu/checks/memlimit.sh).

USAGE: ml_frameworks.py torch|cupy|jax|cublas QUOTA_GIB

Prints, one per line:
  total <bytes>        the device memory the framework's own query reports (the quota under memlimit)
  result <hex> ...     a deterministic computation below the quota (compared with a native run)
  oom <kind>           allocating 1.5 x QUOTA_GIB: 'own' when the framework raised its own out-of-memory
                       error, 'none' when it succeeded, 'other <type> <text>' for anything else
  after <hex>          the computation again after the refusal: nothing else broke
The check compares 'total' with the quota, 'result' and 'after' with the native run's, and wants 'oom own'
under the quota. Exit status 0 unless the script itself broke.
"""
import os
import sys

kind = sys.argv[1]
quota = float(sys.argv[2]) * 2**30
big = int(quota * 1.5)


def hexs(vals):
    return " ".join(float(v).hex() for v in vals)


def run_torch():
    import torch
    free, total = torch.cuda.mem_get_info(0)
    print("total %d" % total)
    print("props %d" % torch.cuda.get_device_properties(0).total_memory)

    def work():
        g = torch.Generator(device="cuda").manual_seed(7)
        a = torch.randn(1024, 1024, device="cuda", generator=g)
        b = torch.randn(1024, 1024, device="cuda", generator=g)
        c = (a @ b).relu()
        s = torch.nn.functional.conv2d(c.view(1, 1, 1024, 1024), torch.ones(1, 1, 3, 3, device="cuda"))
        torch.cuda.synchronize()
        return [c.sum().item(), s.sum().item(), c[17, 23].item()]

    print("result " + hexs(work()))
    try:
        x = torch.empty(big, dtype=torch.uint8, device="cuda")
        x.fill_(1)
        torch.cuda.synchronize()
        print("oom none")
        del x
    except torch.OutOfMemoryError:
        print("oom own")
    except Exception as e:  # noqa: BLE001
        print("oom other %s %s" % (type(e).__name__, str(e).splitlines()[0][:120] if str(e) else ""))
    torch.cuda.empty_cache()
    print("after " + hexs(work()))


def run_cupy():
    import cupy as cp
    free, total = cp.cuda.runtime.memGetInfo()
    print("total %d" % total)

    def work():
        a = cp.arange(1 << 20, dtype=cp.float64) * 1e-3
        m = cp.random.RandomState(7).standard_normal((512, 512))
        return [float((cp.sin(a) ** 2).sum()), float((m @ m.T).trace())]

    print("result " + hexs(work()))
    try:
        x = cp.empty(big, dtype=cp.uint8)
        x.fill(1)
        cp.cuda.runtime.deviceSynchronize()
        print("oom none")
        del x
    except cp.cuda.memory.OutOfMemoryError:
        print("oom own")
    except Exception as e:  # noqa: BLE001
        print("oom other %s %s" % (type(e).__name__, str(e).splitlines()[0][:120] if str(e) else ""))
    cp.get_default_memory_pool().free_all_blocks()
    print("after " + hexs(work()))


def run_jax():
    # the caller sets XLA_PYTHON_CLIENT_PREALLOCATE=true and XLA_PYTHON_CLIENT_MEM_FRACTION: the
    # preallocation is a fraction of what the device reports, which under the quota is the quota
    import jax
    import jax.numpy as jnp
    d = jax.devices()[0]
    stats = d.memory_stats() or {}
    print("total %d" % stats.get("bytes_limit", -1))

    @jax.jit
    def f(x):
        return jnp.sum(jnp.sin(x) ** 2), jnp.dot(x[:512].reshape(16, 32), x[:512].reshape(32, 16)).sum()

    def work():
        a, b = f(jnp.arange(1 << 20, dtype=jnp.float32) * 1e-3)
        return [float(a), float(b)]

    print("result " + hexs(work()))
    try:
        x = jnp.ones((big,), dtype=jnp.uint8)
        x.block_until_ready()
        print("oom none")
        del x
    except Exception as e:  # noqa: BLE001 - XLA's own error is XlaRuntimeError RESOURCE_EXHAUSTED
        t = str(e)
        print("oom own" if "RESOURCE_EXHAUSTED" in t or "Out of memory" in t else
              "oom other %s %s" % (type(e).__name__, t.splitlines()[0][:120] if t else ""))
    print("after " + hexs(work()))


def run_cublas():
    # cuBLAS and cuDNN through PyTorch, deterministic settings
    import torch
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    free, total = torch.cuda.mem_get_info(0)
    print("total %d" % total)

    def work():
        g = torch.Generator(device="cuda").manual_seed(11)
        a = torch.randn(2048, 2048, device="cuda", generator=g)
        x = torch.randn(8, 16, 64, 64, device="cuda", generator=g)
        w = torch.randn(32, 16, 3, 3, device="cuda", generator=g)
        y = torch.nn.functional.conv2d(x, w, padding=1)
        z = a @ a
        torch.cuda.synchronize()
        return [z.sum().item(), y.sum().item(), z[5, 9].item(), y[1, 2, 3, 4].item()]

    print("result " + hexs(work()))
    try:
        n = int(big ** 0.5 / 2)   # one float32 matrix of ~1.5 x the quota
        m = torch.empty(n, n, dtype=torch.float32, device="cuda")
        m.normal_()
        (m @ m).sum().item()
        print("oom none")
    except torch.OutOfMemoryError:
        print("oom own")
    except Exception as e:  # noqa: BLE001
        print("oom other %s %s" % (type(e).__name__, str(e).splitlines()[0][:120] if str(e) else ""))
    torch.cuda.empty_cache()
    print("after " + hexs(work()))


{"torch": run_torch, "cupy": run_cupy, "jax": run_jax, "cublas": run_cublas}[kind]()
sys.stdout.flush()
