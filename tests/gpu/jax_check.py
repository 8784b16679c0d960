#!/usr/bin/env python3
"""jax_check.py - one small JAX computation on the GPU, checked numerically against NumPy.

A jitted elementwise + reduction and a matrix product. Fails if JAX did not pick the GPU.
Prints 'result <float.hex> ...' and 'jax_check: OK', exit 0 only when all values match.
"""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def main():
    backend = jax.default_backend()
    devs = jax.devices()
    print("jax %s backend %s devices %s" % (jax.__version__, backend, devs), file=sys.stderr)
    if backend != "gpu":
        print("jax_check: FAIL backend is %r, not gpu" % backend)
        return 1

    @jax.jit
    def f(x):
        return jnp.sum(jnp.sin(x) ** 2 + jnp.cos(x) ** 2)

    n = 1 << 20
    s = float(f(jnp.arange(n, dtype=jnp.float32) * 1e-3))
    rng = np.random.default_rng(7)
    m1 = rng.standard_normal((256, 128)).astype(np.float32)
    m2 = rng.standard_normal((128, 64)).astype(np.float32)
    mm = jax.jit(lambda a, b: jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST))
    prod = np.asarray(mm(m1, m2).block_until_ready())
    ref = m1.astype(np.float64) @ m2.astype(np.float64)
    err = float(np.max(np.abs(prod - ref)))
    print("result %s %s" % (float.hex(s), float.hex(err)))
    ok = abs(s - n) < 1e-3 * n and err < 1e-3
    print("jax_check: %s (sum %r, matmul max error %g)" % ("OK" if ok else "FAIL", s, err))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
