"""Exact checks of the estimators' identities: unbiasedness and MSE closed forms by Gauss–Hermite quadrature, and
feature-map identities (Performer Lemmas 1–2, HRF Lemmas 2.2–2.4 and 2.3).

Quadrature feeds its nodes to rflib's own feature maps as projection matrices (:mod:`rflib.quadrature`), so these
functions check the code, not a re-derivation of it. No randomness except where a function takes keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, kernels, moments, quadrature
from rflib.features import classic, complex_exp, hybrid


def moments_vs_quadrature(
    feature_maps: Mapping[str, Callable],
    log_mses: Mapping[str, Callable],
    radii,
    thetas,
    d: int,
    *,
    n_points: int = 120,
) -> list[tuple[str, float, float, float, float]]:
    """Bias and closed-form MSE of single-feature estimators against exact quadrature (HRF Lemma 2.2, Performer
    Lemma 2).

    For every r in ``radii`` and θ in ``thetas``: x, y ∈ ℝ^d with ‖x‖ = ‖y‖ = r at angle θ
    (:func:`rflib.kernels.pair_at_angle`); for every map, the exact moments of one feature
    (:func:`rflib.quadrature.estimator_moments`) against ``exp(log_mse(x, y, 1))``.

    Args:
      feature_maps: name → ``feature_map(W, X)``; log_mses: name → ``log_mse(x, y, m)`` (rflib.moments.classic).
      radii, thetas: the norms and angles. d: the dimension (≥ 2). n_points: Gauss–Hermite points per axis.
    Returns:
      one row (name, r, θ, E[estimate]/SM − 1, closed-form MSE / quadrature MSE − 1) per (r, θ, name), r outermost.
    """
    if set(feature_maps) != set(log_mses):
        raise ValueError(
            f"feature_maps and log_mses must name the same maps, got {sorted(feature_maps)} and {sorted(log_mses)}"
        )
    _checks.finite_numpy("radii", radii, 1)
    _checks.finite_numpy("thetas", thetas, 1)
    d = _checks.integer("d", d, low=2)
    n_points = _checks.positive_int("n_points", n_points)
    rows = []
    for r in radii:
        for theta in thetas:
            x, y = kernels.pair_at_angle([theta], r, d=d)
            for name, fmap in feature_maps.items():
                exact = quadrature.estimator_moments(fmap, x[0], y[0], n_points=n_points)
                closed = float(jnp.exp(log_mses[name](x[0], y[0], 1)))
                rows.append((name, r, theta, exact["mean"] / np.exp(x[0] @ y[0]) - 1, closed / exact["mse"] - 1))
    return rows


def complex_exp_vs_quadrature(A_cases: Mapping[str, np.ndarray], x, y, *, n_points: int = 100) -> list[tuple]:
    """Complex exponential estimators (HRF §2.3, eq 16) against quadrature, one row per matrix A.

    The single-projection estimate e(ω) = Ψ_A(x)ᵀΨ_{A^{-⊤}}(y) (:func:`rflib.features.complex_exp.ce_features`) is
    integrated over ω ~ N(0, I_d) by a tensor Gauss–Hermite rule on all of ℝ^d (A mixes every coordinate, so keep d
    small: n_points^d nodes).

    Args:
      A_cases: name → invertible complex (d, d) matrix A. x, y: (d,) the pair. n_points: points per axis.
    Returns:
      one row (name, |E e / SM − 1| (Lemma 2.4: 0), E(Re e − SM)² by quadrature, the closed form
      exp(:func:`rflib.moments.complex_exp.log_mse_complex_exponential` (x, y, A, 1)), |closed / quadrature − 1|).
    """
    x = _checks.finite_numpy("x", x, 1)
    y = _checks.finite_numpy("y", y, 1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one shape (d,), got {x.shape} and {y.shape}")
    n_points = _checks.positive_int("n_points", n_points)
    W_nodes, weights = quadrature.projection_rule(np.eye(x.shape[0]), n_points=n_points)
    rows = []
    for name, A in A_cases.items():
        left = complex_exp.ce_features(W_nodes, x[None], A)[0]
        right = complex_exp.ce_features(W_nodes, y[None], np.linalg.inv(A).T)[0]
        e = np.asarray(W_nodes.shape[0] * left * right)  # single-projection estimates, one per node
        sm = np.exp(x @ y)
        mean = quadrature.expectation(e, weights)
        real_mse = quadrature.expectation((e.real - sm) ** 2, weights)
        closed = float(jnp.exp(moments.complex_exp.log_mse_complex_exponential(x, y, A, 1)))
        rows.append((name, abs(mean / sm - 1), real_mse, closed, abs(closed / real_mse - 1)))
    return rows


def max_abs_gap(first, second, X, Y) -> float:
    """max over pairs |K̂₁(x, y) − K̂₂(x, y)| of two estimators (:class:`rflib.features.base.Estimator`) with their
    randomness frozen, e.g. Re CE(A = iI) against trig on the same ω (HRF §2.3). X: (n, d); Y: (k, d)."""
    X = _checks.points("X", X)
    Y = _checks.points("Y", Y, dim=X.shape[1])
    return float(jnp.max(jnp.abs(first.estimate(X, Y) - second.estimate(X, Y))))


def hybrid_feature_map_gaps(key_for, trials: int, *, d: int = 6, m: int = 8, n: int = 4) -> tuple[dict, int]:
    """HRF Lemma 2.3: Ψ₁(x)ᵀΨ₂(y) of :func:`rflib.features.hybrid.hybrid_estimator` against eq 8 evaluated term by
    term (:func:`rflib.features.hybrid.hybrid_direct`), for four hybrids of a hyperbolic and a trig base.

    Each trial splits ``key_for(trial)`` into 8 keys and draws X: (7, d), Y: (5, d) (scale 0.5), W_pos, W_trig: (m, d),
    T: (n, d) and a (d, d) matrix M, all N(0, 1); the hybrids are the angular λ (App D) with independent (I) and
    shared (II) ω, the normalised Gaussian λ with σ = 1.2, r = 0.5 (App F; a = 1/ρ > 1), and the Gaussian λ of
    eq 20 with c = 0.9 and M.

    Returns (hybrid name → max over trials of max |Ψ₁ᵀΨ₂ / eq 8 − 1|, the angular hybrid's feature dimension 4m(n + 1)
    measured on the last trial's maps).
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    trials = _checks.positive_int("trials", trials)
    d, m, n = (_checks.positive_int(name, v) for name, v in (("d", d), ("m", m), ("n", n)))
    gaps = {}
    for trial in range(trials):
        k = jax.random.split(key_for(trial), 8)
        X, Y = 0.5 * jax.random.normal(k[0], (7, d)), 0.5 * jax.random.normal(k[1], (5, d))
        W_pos, W_trig = jax.random.normal(k[2], (m, d)), jax.random.normal(k[3], (m, d))
        T = jax.random.normal(k[4], (n, d))
        configs = {
            "angular, independent ω (I)": ([W_pos, W_trig], hybrid.angular_lambda(T)),
            "angular, shared ω (II)": ([W_pos, W_pos], hybrid.angular_lambda(T)),
            "normalised Gaussian λ (a = 1/ρ > 1)": ([W_pos, W_trig], hybrid.normalized_gaussian_lambda(T, 1.2, 0.5)),
            "Gaussian λ, eq 20": ([W_pos, W_trig], hybrid.gaussian_lambda(T, 0.9, jax.random.normal(k[5], (d, d)))),
        }
        for name, (Ws, lam) in configs.items():
            bases = [classic.hyperbolic_estimator(Ws[0]), classic.trig_estimator(Ws[1])]
            via_features = hybrid.hybrid_estimator(bases, [lam]).estimate(X, Y)
            direct = hybrid.hybrid_direct(bases, [lam], X, Y)
            gaps[name] = max(gaps.get(name, 0.0), float(jnp.max(jnp.abs(via_features / direct - 1))))
    dim = hybrid.angular_hybrid_estimator(W_pos, W_trig, T).query_features(X).body.shape[1]
    return gaps, dim
