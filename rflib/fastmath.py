"""sin and cos together, fast on XLA:CPU in float32.

XLA:CPU lowers ``jnp.sin``/``jnp.cos`` to a scalar libm call per element: about 6.5 ns each on this machine, 20×
the cost of ``jnp.exp`` (which XLA vectorises), so trigonometric feature maps ran 15× slower than their projection
matmul (``benchmarks/feature_maps.py``). :func:`sincos` computes both from one range reduction with the Cephes
``sinf``/``cosf`` algorithm (Moshier, Cephes Math Library, ``sinf.c``): x = j·π/4 + z with π/4 split in three parts
(exact products for |x| ≤ 8192), then minimax polynomials on |z| ≤ π/4. Plain arithmetic and selects, so XLA fuses
and vectorises it: 1.1 ms instead of 14 ms for sin and cos of 4096 × 256 values. Absolute error ≤ 1e-7 on
|x| ≤ 8192 (libm: 3.3e-8, correctly rounded); relative error near the zeros of sin and cos is larger, as with any
float32 three-part reduction (tested against float64 numpy in ``tests/test_fastmath.py``).

The fast path is taken for float32 on the CPU backend when max |x| ≤ 8192 (one reduction over x decides, inside
jit, through ``lax.cond``); everything else — float64, other backends (whose sin/cos are already fast), larger
arguments — uses ``jnp.sin``/``jnp.cos``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

FAST_LIMIT = 8192.0  # |x| up to which j·(DP1 + DP2 + DP3) reduces without rounding error in float32
_FOUR_OVER_PI = np.float32(4 / np.pi)
_DP1, _DP2, _DP3 = np.float32(0.78515625), np.float32(2.4187564849853515625e-4), np.float32(3.77489497744594108e-8)
_SIN = (np.float32(-1.9515295891e-4), np.float32(8.3321608736e-3), np.float32(-1.6666654611e-1))
_COS = (np.float32(2.443315711809948e-5), np.float32(-1.388731625493765e-3), np.float32(4.166664568298827e-2))


def _sincos_reduced(x):
    """Cephes sinf/cosf for float32 |x| ≤ FAST_LIMIT: (sin x, cos x)."""
    ax = jnp.abs(x)
    j = jnp.floor(ax * _FOUR_OVER_PI).astype(jnp.int32)
    j = j + (j & 1)  # round the octant up to even: z ∈ [−π/4, π/4]
    y = j.astype(jnp.float32)
    z = ((ax - y * _DP1) - y * _DP2) - y * _DP3
    zz = z * z
    s = z + z * zz * ((_SIN[0] * zz + _SIN[1]) * zz + _SIN[2])
    c = 1.0 - 0.5 * zz + zz * zz * ((_COS[0] * zz + _COS[1]) * zz + _COS[2])
    quadrant = (j >> 1) & 3  # |x| = quadrant·π/2 + z (mod 2π)
    swap = (quadrant & 1) == 1
    sin_abs = jnp.where(swap, c, s) * jnp.where(quadrant >= 2, -1.0, 1.0).astype(jnp.float32)
    cos_val = jnp.where(swap, s, c) * jnp.where((quadrant == 1) | (quadrant == 2), -1.0, 1.0).astype(jnp.float32)
    return jnp.where(x < 0, -sin_abs, sin_abs), cos_val


def _library(x):
    return jnp.sin(x), jnp.cos(x)


def sincos(x) -> tuple[jax.Array, jax.Array]:
    """(sin x, cos x) elementwise, any shape; traceable (use inside jit).  Fast on CPU in float32 (module doc)."""
    return _fast_or_library(jnp.asarray(x), _sincos_reduced, _library)


def _fast_or_library(x, fast, library):
    """``fast(x)`` where the fast path applies (float32 on the CPU backend, max |x| ≤ FAST_LIMIT, decided inside
    jit), else ``library(x)``."""
    if x.dtype != jnp.float32 or jax.default_backend() != "cpu" or x.size == 0:
        return library(x)
    return jax.lax.cond(jnp.max(jnp.abs(x)) <= FAST_LIMIT, fast, library, x)


def sincos_columns(x) -> jax.Array:
    """(n, F) → (n, 2F): [sin x | cos x], the body of trigonometric features; traceable.

    :func:`sincos` followed by a column concatenation, with the joining done inside each branch of its ``lax.cond``
    (a stack on a new middle axis, then a reshape): XLA:CPU then writes the output in the same fused loop as the
    polynomials instead of materialising sin and cos and copying them (1.2 ms instead of 2 ms at 4 096 × 256).
    """
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (n, F), got shape {x.shape}")

    def joined(branch):
        return lambda x: jnp.stack(branch(x), axis=1).reshape(x.shape[0], 2 * x.shape[1])

    return _fast_or_library(x, joined(_sincos_reduced), joined(_library))


def cos(x) -> jax.Array:
    """cos x through :func:`sincos` (XLA drops the unused sine)."""
    return sincos(x)[1]
