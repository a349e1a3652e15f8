"""Exact Gaussian expectations by Gauss–Hermite quadrature: the oracle for unbiasedness and MSE identities.

Every classic softmax-kernel estimator depends on ω ~ N(0, I_d) only through a few projections ωᵀv_1 … ωᵀv_k
(e.g. ωᵀx and ωᵀy). Writing ω's component in span{v_j} as Q g with Q an orthonormal basis and g ~ N(0, I_r),
E f(ω) becomes an r-dimensional Gaussian integral, which a tensor-product Gauss–Hermite rule with p points per axis
computes exactly for polynomials of degree < 2p and to machine precision for the smooth exponential and
trigonometric integrands used here. Because the nodes are genuine vectors in ℝ^d, a node matrix can be fed to
the real feature maps as a projection matrix W: the tests then check rflib's code, not a re-derivation of it.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.polynomial import hermite_e

from rflib import _checks


def standard_normal_rule(dim: int, n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Tensor-product Gauss–Hermite rule for N(0, I_dim).

    Returns nodes (n_points**dim, dim) and weights (n_points**dim,) summing to 1, so that
    ``weights @ f(nodes)`` ≈ E f(g), exact for polynomials of degree < 2·n_points in each coordinate.
    """
    dim = _checks.positive_int("dim", dim)
    n_points = _checks.positive_int("n_points", n_points)
    x, w = hermite_e.hermegauss(n_points)
    w = w / w.sum()
    nodes = np.array(list(itertools.product(x, repeat=dim)), dtype=np.float64)
    weights = np.prod(np.array(list(itertools.product(w, repeat=dim)), dtype=np.float64), axis=1)
    return nodes, weights


def projection_rule(directions, n_points: int = 80, *, rank_tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature rule over ω ~ N(0, I_d) for integrands that depend on ω only through ``directions @ ω``.

    Args:
      directions: (k, d) the vectors v_j; they may be linearly dependent (the rank r is detected).
      n_points: Gauss–Hermite points per axis of span{v_j}.
      rank_tol: singular values below ``rank_tol × largest`` are treated as zero.

    Returns:
      W: (n_points**r, d) nodes, each a vector ω in span{v_j}; weights: (n_points**r,) summing to 1.
      For any f(ω) = g(Vω): ``weights @ f(W)`` ≈ E f(ω).
    """
    V = _checks.finite_numpy("directions", directions, (1, 2))
    if V.ndim == 1:
        V = V[None, :]
    n_points = _checks.positive_int("n_points", n_points)
    rank_tol = _checks.real_number("rank_tol", rank_tol, low=0.0, high=1.0, high_open=True)
    _, s, vt = np.linalg.svd(V, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        nodes, weights = np.zeros((1, V.shape[1])), np.ones(1)
        return nodes, weights
    basis = vt[s > rank_tol * s[0]]  # (r, d), orthonormal rows
    g, weights = standard_normal_rule(basis.shape[0], n_points)
    return g @ basis, weights


def expectation(values, weights) -> np.ndarray:
    """Σ_i w_i values_i over the first axis: values (N, ...), real or complex (a complex estimator's values), weights
    (N,) → (...)."""
    weights = _checks.finite_numpy("weights", weights, 1)
    if not _checks.is_concrete(values):
        raise ValueError("values must be a concrete array (this function runs in numpy, not under jax.jit)")
    values = np.asarray(values)
    if values.dtype == np.bool_ or not np.issubdtype(values.dtype, np.number):
        raise ValueError(f"values must be a real or complex numeric array, got dtype {values.dtype}")
    values = values.astype(np.complex128 if np.iscomplexobj(values) else np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("values contains NaN or inf; the integrand overflowed or the input is not clean")
    if values.ndim == 0 or values.shape[0] != weights.shape[0]:
        raise ValueError(f"values must have a first axis of {weights.shape[0]} (one per weight), got {values.shape}")
    return np.tensordot(weights, values, axes=(0, 0))


def single_feature_estimates(feature_map, W, x, y) -> np.ndarray:
    """The single-projection estimates e_i(x, y) of a softmax-kernel feature map, one per row ω_i of W.

    ``feature_map(W, X)`` must return (n, b·m) features normalised by m^{-1/2} (b column blocks per projection, as
    the maps of ``rflib.features`` do); e_i = m Σ_blocks φ(x)_{·,i} φ(y)_{·,i}, so that the m-feature estimate is
    the mean of the e_i. Shapes: W (m, d), x (d,), y (d,) → (m,).
    """
    _checks.callable_arg("feature_map", feature_map, "features (n, b·m) of W and X")
    W, x, y = _projection_and_pair(W, x, y)
    n_rows = W.shape[0]
    phi_x = np.asarray(feature_map(W, x[None, :]))[0]
    phi_y = np.asarray(feature_map(W, y[None, :]))[0]
    if phi_x.size % n_rows:
        raise ValueError(f"feature_map returned {phi_x.size} features, not a multiple of the {n_rows} rows of W")
    return n_rows * (phi_x * phi_y).reshape(phi_x.size // n_rows, n_rows).sum(axis=0)


def estimator_values(make_estimator, W, x, y) -> np.ndarray:
    """Single-projection estimates e_i(x, y) of an asymmetric estimator, one per row ω_i of W.

    ``make_estimator(W)`` must return an :class:`rflib.features.base.Estimator` whose maps have b column
    blocks of one column per row of W, normalised by m^{-1/2} (trig, positive, hyperbolic, CE). Then
    e_i = m Σ_blocks Ψ₁(x)_{·,i} Ψ₂(y)_{·,i}. Shapes: W (m, d), x (d,), y (d,) → (m,).
    """
    _checks.callable_arg("make_estimator", make_estimator, "an Estimator built from W")
    W, x, y = _projection_and_pair(W, x, y)
    est = make_estimator(W)
    left = np.asarray(est.query_features(x[None, :]).dense())[0]
    right = np.asarray(est.key_features(y[None, :]).dense())[0]
    if left.size % W.shape[0]:
        raise ValueError(f"the estimator has {left.size} features, not a multiple of the {W.shape[0]} rows of W")
    return W.shape[0] * (left * right).reshape(-1, W.shape[0]).sum(axis=0)


def estimator_moments(feature_map, x, y, *, n_points: int = 100) -> dict[str, float]:
    """Exact moments of one feature's estimate e(x, y) of SM(x, y) = exp(xᵀy), for ω ~ N(0, I_d).

    Returns a dict with ``mean`` = E e, ``mse`` = E(e − SM)² and ``fourth`` = E(e − SM)⁴ (the latter gives the
    standard error of a Monte Carlo MSE: sd of (e − SM)² = √(fourth − mse²)). Integrates over span{x, y}.
    """
    _checks.callable_arg("feature_map", feature_map, "features (n, b·m) of W and X")
    x, y = _pair(x, y)
    W, weights = projection_rule(np.stack([x, y]), n_points=n_points)
    err = single_feature_estimates(feature_map, W, x, y) - np.exp(x @ y)
    return {
        "mean": float(expectation(err, weights) + np.exp(x @ y)),
        "mse": float(expectation(err**2, weights)),
        "fourth": float(expectation(err**4, weights)),
    }


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Two finite float64 vectors of one length d: x (d,), y (d,)."""
    x = _checks.finite_numpy("x", x, 1)
    y = _checks.finite_numpy("y", y, 1)
    if y.shape != x.shape:
        raise ValueError(f"y must have the shape of x {x.shape}, got {y.shape}")
    return x, y


def _projection_and_pair(W, x, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W (m, d) and the pair x, y (d,), finite float64 (:func:`_pair`)."""
    x, y = _pair(x, y)
    W = _checks.finite_numpy("W", W, 2)
    if W.shape[1] != x.shape[0]:
        raise ValueError(f"W must have {x.shape[0]} columns (the length of x), got shape {W.shape}")
    return W, x, y
