"""Cluster-adapted complex exponential estimators and HRF-C (HRF §2.4 and App H).

Queries come from n_q clusters with centres r^x_i, keys from n_k clusters with centres r^y_j. For each pair (i, j)
a CE estimator Ψ_A(x)ᵀΨ_{A^{-T}}(y) is tuned so that its variance is small near the centres: by eq 17 the variance
vanishes iff A x + A^{-T} y = 0, so A^{ij} minimises the loss l(A) = |A r^x_i + A^{-T} r^y_j|² (eq 21, modulus).
HRF-C ("hybrid zero-one mixture", Def H.2) uses, for each pair of points, the estimator of their cluster pair
(:func:`cluster_hybrid_estimator`):

    Ψ₁(x) = ⋆_{i,j} 1[x ∈ X_i] Ψ_{A^{ij}}(x),     Ψ₂(y) = ⋆_{i,j} 1[y ∈ Y_j] Ψ_{(A^{ij})^{-T}}(y),

dimension n_q·n_k·m (eq 103 prints Ψ_i(y) where Ψ_j(y) is meant).

Diagonal A, as in the paper's experiments, per coordinate k with a = r^x_{i,k}, b = r^y_{j,k}:

- complex (eqs 83–87): a·b > 0 → A_kk = i√(b/a); a·b < 0 → A_kk = √(−b/a); exact, l(A) = 0;
- real (eq 88): A_kk = √|b/a|, leaving l(A) = 4 Σ_{k: ab > 0} a·b (only same-sign coordinates contribute).

Eq 88 is unstable when a centre coordinate is tiny: A_kk is then huge and points away from the centre get an
astronomically large variance (ERRATA.md HRF-E18; the paper does not mention it). :func:`real_diagonal_A` therefore
clips A_kk to [1/clip, clip] (default 10) — the documented stabilisation — and :func:`moment_diagonal_A` offers a
cluster-moment alternative (an extension, not in the paper).

The "hybrid Gaussian mixture" of Def H.1 (eqs 93–100; :func:`gaussian_mixture_hybrid_estimator`) weights every
cluster pair's estimator ŜM^{ij} by a linearised Gaussian coefficient λ̂^{ij} ≈ exp(−‖A^{ij}x + (A^{ij})^{-1}y‖²/(2τ²))
(:func:`cluster_gaussian_lambda`), which is 1 where the pair's CE variance vanishes, and gives a default base ŜM⁰ the
rest, λ̂⁰ = 1 − Σ λ̂^{ij} (eq 98): Lemma 2.3's construction with p = n_q·n_k.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks
from rflib.features import complex_exp, hybrid
from rflib.features.base import SCALE_OVERFLOW, Estimator, Features, concat, pair_products


def _centre_pair(rx, ry):
    rx = np.asarray(_checks.vectors("rx", rx), dtype=np.float64)
    ry = np.asarray(_checks.vectors("ry", ry, dim=rx.shape[-1]), dtype=np.float64)
    if rx.shape != ry.shape:
        raise ValueError(f"rx and ry must have the same shape, got {rx.shape} and {ry.shape}")
    return rx, ry


def real_diagonal_A(rx, ry, *, clip: float | None = 10.0) -> np.ndarray:
    """Eq 88: A_kk = √|r^y_k / r^x_k|, the real diagonal minimiser of |A r^x + A^{-1} r^y|², clipped to
    [1/clip, clip] (``clip=None`` keeps the paper's raw values; r^x_k = 0 then gives 1e12, "large").

    Coordinates with r^x_k = r^y_k = 0 get A_kk = 1 (the paper's choice). Shapes: (..., d), (..., d) → (..., d).
    """
    rx, ry = _centre_pair(rx, ry)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.sqrt(np.abs(ry / rx))
    a = np.where((rx == 0) & (ry == 0), 1.0, a)
    a = np.where((rx == 0) & (ry != 0), 1e12, a)
    a = np.where((ry == 0) & (rx != 0), 1e-12, a)
    if clip is not None:
        clip = _checks.positive_float("clip", clip)
        if clip < 1:
            raise ValueError(f"clip must be ≥ 1 (A_kk is clipped to [1/clip, clip]), got {clip}")
        a = np.clip(a, 1.0 / clip, clip)
    return a


def complex_diagonal_A(rx, ry, *, large: float = 1e3, small: float = 1e-3) -> np.ndarray:
    """Eqs 83–87: complex diagonal A with A r^x + A^{-1} r^y = 0 coordinate-wise wherever possible.

    a·b > 0 → iβ, β = √(b/a); a·b < 0 → α = √(−b/a); a = b = 0 → 1 + i (any non-zero value works);
    exactly one of a, b zero → no exact solution: ``large`` if a = 0, ``small`` if b = 0 (the paper's choice).
    Shapes: (..., d), (..., d) → (..., d) complex.
    """
    rx, ry = _centre_pair(rx, ry)
    large = _checks.real_number("large", large, low=0.0, low_open=True)  # a NaN made those entries NaN
    small = _checks.real_number("small", small, low=0.0, low_open=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ry / rx
        A = np.where(ratio > 0, 1j * np.sqrt(np.abs(ratio)), np.sqrt(np.abs(ratio)) + 0j)
    A = np.where((rx == 0) & (ry == 0), 1.0 + 1.0j, A)
    A = np.where((rx == 0) & (ry != 0), large + 0j, A)
    A = np.where((ry == 0) & (rx != 0), small + 0j, A)
    return A


def moment_diagonal_A(X_cluster, Y_cluster) -> np.ndarray:
    """A_kk = (E_{y∈Y_j} y_k² / E_{x∈X_i} x_k²)^{1/4}, the real diagonal A minimising the *cluster-averaged*
    E‖A x + A^{-1} y‖² over independent x ∈ X_i, y ∈ Y_j. An extension (not in the paper), stable where eq 88 is
    not. Shapes: (n_i, d), (n_j, d) → (d,).
    """
    X = np.asarray(_checks.points("X_cluster", X_cluster), dtype=np.float64)
    Y = np.asarray(_checks.points("Y_cluster", Y_cluster, dim=X.shape[1]), dtype=np.float64)
    ex, ey = np.mean(X**2, axis=0), np.mean(Y**2, axis=0)
    if np.any(ex == 0) or np.any(ey == 0):
        raise ValueError("a coordinate is identically zero in one cluster: its moment-matched A is undefined")
    return (ey / ex) ** 0.25


def cluster_loss(A_diag, rx, ry) -> np.ndarray:
    """l(A) = |A r^x + A^{-T} r^y|² (eq 21, modulus) for diagonal A.  Shapes: (..., d) ×3 → (...)."""
    rx, ry = _centre_pair(rx, ry)
    A = np.asarray(A_diag)
    if A.dtype == np.bool_ or not np.issubdtype(A.dtype, np.number) or not np.all(np.isfinite(A)) or np.any(A == 0):
        raise ValueError("A_diag must be finite, non-zero real or complex numbers (A^{-1} is applied: a zero gave NaN)")
    return np.sum(np.abs(A * rx + ry / A) ** 2, axis=-1)


def nearest_centre(X, centres) -> jax.Array:
    """Index of the nearest centre for each row: X (n, d), centres (c, d) → (n,) int."""
    X = _checks.points("X", X)
    centres = _checks.points("centres", centres, dim=X.shape[1])
    sq = jnp.sum(X**2, axis=1)[:, None] - 2.0 * X @ centres.T + jnp.sum(centres**2, axis=1)[None, :]
    return jnp.argmin(sq, axis=1)


def _masked(features: Features, mask) -> Features:
    return Features(jnp.where(mask, features.log_scale, -jnp.inf), jnp.where(mask[:, None], features.body, 0.0))


def _cluster_side(pair_sides, centres, own_axis, X):
    X = _checks.points("X", X)
    label = nearest_centre(X, centres)
    blocks = []
    for i, row in enumerate(pair_sides):
        for j, side in enumerate(row):
            mask = label == (i if own_axis == 0 else j)
            blocks.append(_masked(side(X), mask))
    return concat(blocks)


def _checked_grid(pair_estimators, centres_x, centres_y):
    """The centres checked, (n_q, d) and (n_k, d), and ``pair_estimators`` checked to be n_q × n_k."""
    centres_x = _checks.points("centres_x", centres_x)
    centres_y = _checks.points("centres_y", centres_y, dim=centres_x.shape[1])
    n_q, n_k = centres_x.shape[0], centres_y.shape[0]
    if len(pair_estimators) != n_q or any(len(row) != n_k for row in pair_estimators):
        raise ValueError(f"pair_estimators must be {n_q} × {n_k} (query clusters × key clusters)")
    return centres_x, centres_y


def cluster_hybrid_estimator(pair_estimators: Sequence[Sequence[Estimator]], centres_x, centres_y) -> Estimator:
    """HRF-C (Def H.2): the estimator of the cluster pair (cluster(x), cluster(y)), as one feature map.

    Args:
      pair_estimators: n_q × n_k nested sequence; entry [i][j] is the estimator for query cluster i and key
        cluster j (e.g. :func:`~rflib.features.complex_exp.diagonal_ce_estimator` with
        :func:`real_diagonal_A` of the two centres).
      centres_x: (n_q, d) query-cluster centres; points are assigned to the nearest one.
      centres_y: (n_k, d) key-cluster centres.

    Inactive blocks get log scale −inf before the common scale is taken, so the active block never underflows.
    """
    centres_x, centres_y = _checked_grid(pair_estimators, centres_x, centres_y)
    lefts = [[est.query_features for est in row] for row in pair_estimators]
    rights = [[est.key_features for est in row] for row in pair_estimators]
    return Estimator(partial(_cluster_side, lefts, centres_x, 0), partial(_cluster_side, rights, centres_y, 1))


def diagonal_ce_cluster_estimator(Ws, A, centres_x, centres_y) -> Estimator:
    """HRF-C as in the paper's experiments (App H.3): for query cluster i and key cluster j, the CE estimator with
    the real diagonal A^{ij} (:func:`~rflib.features.complex_exp.diagonal_ce_estimator`, eqs 90–92).

    Args:
      Ws: (n_q, n_k, m, d) the projections of each cluster pair.
      A: n_q × n_k nested sequence of diagonals (d,), e.g. :func:`real_diagonal_A` of the two centres.
      centres_x: (n_q, d) query-cluster centres; centres_y: (n_k, d) key-cluster centres.
    Returns:
      the :func:`cluster_hybrid_estimator` of those n_q × n_k estimators (dimension n_q·n_k·m).
    """
    shape = _checks.finite_array("Ws", Ws, 4).shape
    if len(A) != shape[0] or any(len(row) != shape[1] for row in A):
        raise ValueError(f"A must be {shape[0]} × {shape[1]} diagonals, one per pair of clusters (Ws[i, j])")
    pairs = [[complex_exp.diagonal_ce_estimator(Ws[i][j], A[i][j]) for j in range(shape[1])] for i in range(shape[0])]
    return cluster_hybrid_estimator(pairs, centres_x, centres_y)


def cluster_hybrid_direct(pair_estimators, centres_x, centres_y, X, Y) -> jax.Array:
    """Def H.2 evaluated directly: for each pair, the estimate of its own cluster pair.  (n, d), (k, d) → (n, k).
    pair_estimators, centres_x, centres_y as in :func:`cluster_hybrid_estimator`. A pair's estimator is evaluated on
    every pair but kept only on its own clusters, so only the kept entries must be finite (else ValueError, as
    :meth:`~rflib.features.base.Estimator.estimate`)."""
    centres_x, centres_y = _checked_grid(pair_estimators, centres_x, centres_y)
    X = _checks.points("X", X, dim=centres_x.shape[1])
    Y = _checks.points("Y", Y, dim=centres_x.shape[1])
    ix = np.asarray(nearest_centre(X, centres_x))
    jy = np.asarray(nearest_centre(Y, centres_y))
    out = jnp.zeros((ix.size, jy.size))
    for i, row in enumerate(pair_estimators):
        for j, est in enumerate(row):
            mask = (ix == i)[:, None] & (jy == j)[None, :]
            out = jnp.where(mask, pair_products(est.query_features(X), est.key_features(Y)), out)
    return _checks.finite_result("cluster_hybrid_direct", out, SCALE_OVERFLOW)


def _scaled_side(side, scale, X):
    return side(_checks.points("X", X) * scale)


def cluster_gaussian_lambda(T, tau: float, a) -> hybrid.LambdaEstimator:
    """λ̂^{ij} of Def H.1 (eqs 93–96) for a real diagonal A = diag(a): an unbiased estimate of
    λ(x, y) = exp(−‖A x + A^{-1} y‖²/(2τ²)), which is 1 where the CE estimator with this A has zero variance (eq 17).

    Eq 93's factorisation (Ax)ᵀ(A^{-1}y) = xᵀy needs A real and diagonal, as in the paper's experiments (eq 88); it
    is HRF eq 20's Gaussian λ with M = I on the rescaled inputs (a ⊙ x, y / a). Shapes: T (n, d), a (d,) > 0.
    """
    _checks.positive_entries("a (the diagonal of A, which must be invertible)", a)
    a = jnp.asarray(a)
    lam = hybrid.gaussian_lambda(T, tau)  # exp(−‖u + v‖²/(2τ²))
    sides = Estimator(
        partial(_scaled_side, lam.features.query_features, a), partial(_scaled_side, lam.features.key_features, 1 / a)
    )
    return hybrid.LambdaEstimator(0.0, sides)


def gaussian_mixture_hybrid_estimator(
    pair_estimators: Sequence[Sequence[Estimator]], pair_lambdas: Sequence[Sequence[hybrid.LambdaEstimator]], base
) -> Estimator:
    """The hybrid Gaussian-mixture estimator of Def H.1 (eqs 97–98): Σ_{i,j} λ̂^{ij} ŜM^{ij} + λ̂⁰ ŜM⁰ with
    λ̂⁰ = 1 − Σ_{i,j} λ̂^{ij}, as one random-feature map (Lemma 2.3, :func:`~rflib.features.hybrid.hybrid_estimator`).

    Args:
      pair_estimators: n_q × n_k nested sequence of ŜM^{ij} (e.g. diagonal CE estimators with A^{ij}, eq 100).
      pair_lambdas: n_q × n_k nested sequence of λ̂^{ij} (:func:`cluster_gaussian_lambda`), drawn independently of
        the estimators.
      base: the default estimator ŜM⁰ (e.g. trigonometric or FAVOR+ features).
    """
    shape = [len(row) for row in pair_estimators]
    if not shape or [len(row) for row in pair_lambdas] != shape:
        raise ValueError("pair_estimators and pair_lambdas must be non-empty n_q × n_k nested sequences of one shape")
    bases = [est for row in pair_estimators for est in row] + [base]
    return hybrid.hybrid_estimator(bases, [lam for row in pair_lambdas for lam in row])
