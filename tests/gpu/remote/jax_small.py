# jax_small.py - JAX for the GPU check 'remotegraphs' (tests/gpu/checks/remotegraphs.sh): a jitted function (XLA
# compiles it and launches its kernels through the driver API; XLA may run it as a CUDA graph), called 5 times.
# Prints values a native run and a run through cushim-serve must agree on.
import jax
import jax.numpy as jnp

print("backend:", jax.default_backend())


@jax.jit
def step(w, x):
    h = jnp.tanh(x @ w)
    return w - 0.01 * (x.T @ h), jnp.sum(h * h)


key = jax.random.PRNGKey(0)
w = jax.random.normal(key, (64, 64), dtype=jnp.float32)
x = jax.random.normal(jax.random.PRNGKey(1), (32, 64), dtype=jnp.float32)
for i in range(5):
    w, loss = step(w, x)
    print("call %d: %.6f" % (i, float(loss)))
print("w: %.6f" % float(jnp.sum(w)))
print("ok")
