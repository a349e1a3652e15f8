"""Monte Carlo of random-feature estimators at fixed input pairs: many independent draws of the random matrices.

For iid Gaussian projections, an estimator of SM(x, y) depends on ω only through (ωᵀx, ωᵀy), whose law is fixed by
the Gram matrix of (x, y). :func:`reduce_to_span` maps a pair in ℝ^d to a pair in ℝ² with the same Gram matrix, so
simulations at d = 64 can be run in d = 2 *exactly in distribution* (HRF notes §3.0, "speed trick"). This does not
hold for structured (orthogonal, Hadamard, QMC) projections: use the full-dimensional pair for those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks


def reduce_to_span(x, y) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) ∈ ℝ^d × ℝ^d → (x', y') ∈ ℝ² × ℝ² with the same norms and inner product: x' = ‖x‖e₁."""
    x = np.asarray(_checks.vectors("x", x), dtype=np.float64)
    y = np.asarray(_checks.vectors("y", y, dim=x.shape[-1]), dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x and y must be single vectors (d,), got shape {x.shape}")
    nx = np.linalg.norm(x)
    if nx == 0:
        return np.zeros(2), np.array([np.linalg.norm(y), 0.0])
    along = x @ y / nx
    return np.array([nx, 0.0]), np.array([along, np.sqrt(max(y @ y - along**2, 0.0))])


def pointwise_estimates(
    key,
    x,
    y,
    make_estimator: Callable[..., object],
    shapes: Mapping[str, tuple[int, int]],
    draws: int,
    *,
    chunk: int = 4096,
    sampler: Callable | None = None,
) -> np.ndarray:
    """``draws`` independent estimates of SM(x, y), each with freshly drawn random matrices.

    Args:
      key: JAX key; the same key gives the same estimates.
      x, y: (d,) the pair.
      make_estimator: called as ``make_estimator(**matrices)`` → an object with ``.estimate(X, Y)`` (e.g.
        ``lambda W_pos, W_trig, T: hybrid.angular_hybrid_estimator(W_pos, W_trig, T)``). Must be traceable by
        ``jax.vmap``.
      shapes: name → (rows, d) of each random matrix, e.g. ``{"W_pos": (16, d), "W_trig": (16, d), "T": (8, d)}``.
      draws: number of estimates.
      chunk: draws evaluated per vmapped batch (bounds memory at chunk × Σ rows × d numbers).
      sampler: ``sampler(key, rows, d)`` → one matrix; default iid N(0, 1) entries. Must be traceable.

    Returns:
      (draws,) float64 numpy array of estimates.
    """
    draws = _checks.positive_int("draws", draws)
    chunk = _checks.positive_int("chunk", chunk)
    x = jnp.asarray(_checks.vectors("x", x))
    y = jnp.asarray(_checks.vectors("y", y, dim=x.shape[-1]))
    names = sorted(shapes)
    sample = sampler or (lambda k, rows, d: jax.random.normal(k, (rows, d), dtype=x.dtype))

    def one(k):
        keys = jax.random.split(k, len(names))
        mats = {name: sample(kk, *shapes[name]) for name, kk in zip(names, keys, strict=True)}
        return make_estimator(**mats).estimate(x[None], y[None])[0, 0]

    batched = jax.jit(jax.vmap(one))
    draw_keys = jax.random.split(key, draws)
    out = [np.asarray(batched(draw_keys[i : i + chunk])) for i in range(0, draws, chunk)]
    return np.concatenate(out)
