#!/usr/bin/env python3
"""cupy_check.py - one small CuPy computation, checked numerically against NumPy.

Runs a custom ElementwiseKernel (NVRTC-compiled, loaded with cuModuleLoadData and
launched with cuLaunchKernel), a reduction and a cuBLAS matrix product. Prints
'result <float.hex> ...' and 'cupy_check: OK', exit 0 only when all values match.
"""
import sys

import numpy as np
import cupy as cp


def main():
    n = 1 << 20
    a = cp.arange(n, dtype=cp.float64) * 1e-3
    k = cp.ElementwiseKernel("float64 x", "float64 y", "y = sin(x) * sin(x) + cos(x) * cos(x)",
                             "cushim_sincos")
    s = float(k(a).sum())
    rng = np.random.default_rng(7)
    m1 = rng.standard_normal((256, 128))
    m2 = rng.standard_normal((128, 64))
    prod = cp.asnumpy(cp.asarray(m1) @ cp.asarray(m2))
    ref = m1 @ m2
    err = float(np.max(np.abs(prod - ref)))
    cs = float(cp.cumsum(cp.ones(4096, dtype=cp.float32))[-1])
    cp.cuda.Device(0).synchronize()
    print("result %s %s %s" % (float.hex(s), float.hex(err), float.hex(cs)))
    ok = abs(s - n) < 1e-6 * n and err < 1e-9 and cs == 4096.0
    print("cupy_check: %s (sum %r, matmul max error %g, cumsum %r)" % ("OK" if ok else "FAIL", s, err, cs))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
