"""Monte Carlo of random-feature estimators at fixed input pairs: many independent draws of the random matrices.

For iid Gaussian projections, an estimator of SM(x, y) depends on ω only through (ωᵀx, ωᵀy), whose law is fixed by
the Gram matrix of (x, y). :func:`reduce_to_span` maps a pair in ℝ^d to a pair in ℝ² with the same Gram matrix, so
simulations at d = 64 can be run in d = 2 *exactly in distribution* (HRF notes §3.0, "speed trick"). This does not
hold for structured (orthogonal, Hadamard, QMC) projections: use the full-dimensional pairs for those.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, projections
from rflib.features import png

Sampler = Callable[[jax.Array, int, int], jax.Array]


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


def gaussian_sampler(key, rows: int, d: int) -> jax.Array:
    """Default sampler: iid N(0, 1) entries, (rows, d)."""
    return jax.random.normal(key, (rows, d))


def paired_estimates(
    key,
    X,
    Y,
    make_estimator: Callable[..., object],
    shapes: Mapping[str, tuple[int, int]],
    draws: int,
    *,
    samplers: Mapping[str, Sampler] | None = None,
    matrices: Mapping[str, np.ndarray] | None = None,
    law: str = "iid",
    chunk: int = 4096,
) -> np.ndarray:
    """Estimates of SM(x_i, y_i) for the rows of X and Y (pairs, not all combinations), ``draws`` times, each draw
    with freshly sampled random matrices.

    Args:
      key: JAX key; the same key gives the same estimates (independently of ``chunk``).
      X, Y: (p, d) the p pairs.
      make_estimator: called as ``make_estimator(**matrices)`` → an :class:`~rflib.features.base.Estimator`
        (e.g. ``hybrid.angular_hybrid_estimator`` with matrices named W_pos, W_trig, T). Must be traceable by
        ``jax.vmap``. Pass the same object on every call to reuse the compiled simulator.
      shapes: name → (rows, d) of each random matrix.
      draws: number of independent draws.
      samplers: name → ``sampler(key, rows, d)`` (traceable), default :func:`gaussian_sampler`; e.g.
        ``projections.orthogonal`` for ORF.
      matrices: name → pre-drawn stack (draws, rows, d), for samplers that cannot be traced (e.g. scrambled Halton).
      law: the projection law (:data:`rflib.projections.LAWS`) of every matrix that ``samplers`` and ``matrices`` do
        not give: ``"iid"`` and ``"sorf"`` are sampled inside the compiled simulator; the other laws (batched QR,
        Halton's scipy sequence, Givens and HD products) are pre-drawn as (draws, rows, d) stacks by
        :func:`rflib.projections.sample` from a key split off ``key``.
      chunk: draws evaluated per vmapped batch (bounds memory).

    Returns:
      (draws, p) float64 numpy array.
    """
    draws = _checks.positive_int("draws", draws)
    chunk = _checks.positive_int("chunk", chunk)
    X = jnp.asarray(_checks.points("X", X))
    Y = jnp.asarray(_checks.points("Y", Y, dim=X.shape[1]))
    if X.shape != Y.shape:
        raise ValueError(f"X and Y must hold the same number of pairs, got shapes {X.shape} and {Y.shape}")
    law = _checks.one_of("law", law, projections.LAWS)
    samplers = dict(samplers or {})
    matrices = dict(matrices or {})
    if law == "sorf":
        samplers = {name: projections.structured_orthogonal for name in shapes} | samplers
    elif law != "iid" and (names := [n for n in shapes if n not in matrices and n not in samplers]):
        stack_key, key = jax.random.split(key)
        stack_keys = jax.random.split(stack_key, len(names))
        drawn_stacks = zip(names, stack_keys, strict=True)
        matrices = {n: projections.sample(law, k, *shapes[n], draws=draws) for n, k in drawn_stacks} | matrices
    for name, stack in matrices.items():
        if np.shape(stack) != (draws, *shapes[name]):
            raise ValueError(f"matrices[{name!r}] must have shape {(draws, *shapes[name])}, got {np.shape(stack)}")
    drawn = tuple(sorted((n, s, samplers.get(n, gaussian_sampler)) for n, s in shapes.items() if n not in matrices))
    given = tuple(sorted(matrices))
    batched = _batched_estimates(make_estimator, drawn, given)
    draw_keys = jax.random.split(key, draws)
    out = []
    for i in range(0, draws, chunk):
        stacks = [jnp.asarray(matrices[n][i : i + chunk], dtype=X.dtype) for n in given]
        out.append(np.asarray(batched(draw_keys[i : i + chunk], X, Y, *stacks)))
    return np.concatenate(out)


def pointwise_estimates(key, x, y, make_estimator, shapes, draws: int, **kwargs) -> np.ndarray:
    """:func:`paired_estimates` for one pair x, y: (d,) → (draws,)."""
    x = _checks.vectors("x", x)
    return paired_estimates(key, jnp.atleast_2d(x), jnp.atleast_2d(y), make_estimator, shapes, draws, **kwargs)[:, 0]


@functools.lru_cache(maxsize=64)
def _batched_estimates(make_estimator, drawn, given):
    """One jitted, vmapped simulator per (factory, drawn matrices, given matrices); X and Y are arguments."""

    def one(k, X, Y, *stacks):
        keys = jax.random.split(k, max(len(drawn), 1))
        mats = {
            name: sampler(kk, *shape).astype(X.dtype)
            for (name, shape, sampler), kk in zip(drawn, keys[: len(drawn)], strict=True)
        }
        mats.update(zip(given, stacks, strict=True))
        return make_estimator(**mats).paired(X, Y)

    return jax.jit(jax.vmap(one, in_axes=(0, None, None) + (0,) * len(given)))


# --- Monte Carlo summaries (KAMA-NNs Figs 1–2) ------------------------------------------------------------


def error_summary(estimates, K) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Monte Carlo summary over independent draws (axis 0): (MSE, its standard error std(err²)/√R, mean error,
    its standard error).  estimates: (R, …); K: the exact value(s), broadcastable to (…)."""
    err = np.asarray(estimates) - np.asarray(K)
    root = math.sqrt(err.shape[0])
    return (err**2).mean(0), (err**2).std(0) / root, err.mean(0), err.std(0) / root


def relative_frobenius_error(K_hat, K) -> np.ndarray:
    """‖K̂ − K‖_F / ‖K‖_F (the paper's printed denominator ‖K(X̂)‖_F is a typo).  K_hat: (…, N, N)."""
    K = np.asarray(K)
    return np.linalg.norm(np.asarray(K_hat) - K, axis=(-2, -1)) / np.linalg.norm(K)


def gram_errors(name: str, W, X, K) -> np.ndarray:
    """‖K̂(X) − K‖_F / ‖K‖_F for every matrix in W: (draws, m, d), one draw at a time (no (draws, N, N) array).

    X: (N, d); K: (N, N) the exact kernel matrix.  Returns (draws,).
    """
    X, K = jnp.asarray(X), jnp.asarray(K)
    norm = jnp.linalg.norm(K)
    return np.asarray(jax.lax.map(lambda w: jnp.linalg.norm(png.gram_estimate(name, w, X) - K) / norm, jnp.asarray(W)))
