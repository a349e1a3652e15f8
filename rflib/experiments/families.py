"""Every estimator family of the four papers at one feature budget, through the one Estimator interface: trig,
positive and hyperbolic (Performer, HRF §2.1), complex exponential (HRF §2.3), the angular hybrid (HRF eq 19), FAVOR#'s
fitted SDERF (Thm 4.3), and positive and PNG sign features on KAMA-NNs' Givens rows.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from rflib import _checks, attention, kernels, projections
from rflib.experiments.simulation import relative_frobenius_error
from rflib.features import classic, complex_exp, dense_exp, hybrid, png
from rflib.features.base import Estimator

HYBRID_M, HYBRID_N = 4, 3  # the angular hybrid's shape: 4m(n + 1) = 64 features


def every_family(W, W_givens, W_trig, T, *, sderf: dense_exp.DERF) -> dict[str, tuple[Estimator, str]]:
    """name → (estimator, the kernel it estimates: ``"softmax"`` or ``"angular"``), each with F features per point.

    Args:
      W: (F, d) orthogonal rows: positive and SDERF use all F, trig, hyperbolic and complex exponential the first F/2
        (two columns per projection), the angular hybrid W[:4] (its FAVOR+ base).
      W_givens: (F, d) KAMA Givens rows (positive features, PNG sign features of KAMA-NNs eq 2).
      W_trig: (4, d) the angular hybrid's trig base; T: (3, d) its n = 3 sign projections, drawn independently of W
        and W_trig (the hybrid is unbiased only when λ̂ is independent of its bases, HRF Theorem 3.1).
      sderf: FAVOR#'s fitted SDERF parameters (:func:`rflib.features.dense_exp.fit`).
    The complex exponential estimator (HRF eq 16) uses A = e^{iπ/4} I, halfway between the positive (A = I) and the
    trigonometric (A = iI) estimators. The angular hybrid has 4m(n + 1) = 64 features: the budget is equal for F = 64.
    """
    F, d = _checks.finite_array("W", W, 2).shape
    _checks.projection_matrix("W_givens", W_givens, d)
    _checks.projection_matrix("W_trig", W_trig, d)
    _checks.projection_matrix("T", T, d)
    for name, matrix, rows in (("W_givens", W_givens, F), ("W_trig", W_trig, HYBRID_M), ("T", T, HYBRID_N)):
        if matrix.shape[0] != rows:
            raise ValueError(f"{name} must have shape ({rows}, {d}), got {tuple(matrix.shape)}")
    if F < HYBRID_M or F % 2:
        raise ValueError(f"W must have an even number F ≥ {HYBRID_M} of rows, got shape {(F, d)}")
    half = W[: F // 2]  # two features per projection
    ce_A = jnp.exp(0.25j * jnp.pi) * jnp.eye(d)
    return {
        "trigonometric (HRF eq 2)": (classic.trig_estimator(half), "softmax"),
        "positive, FAVOR+ (Performer)": (classic.positive_estimator(W), "softmax"),
        "hyperbolic (HRF eq 3)": (classic.hyperbolic_estimator(half), "softmax"),
        "complex exp., A = e^{iπ/4} I (HRF §2.3)": (complex_exp.complex_exponential_estimator(half, ce_A), "softmax"),
        "angular hybrid, m = 4, n = 3 (HRF eq 19)": (
            hybrid.angular_hybrid_estimator(W[:HYBRID_M], W_trig, T),
            "softmax",
        ),
        "SDERF fitted, FAVOR# (Thm 4.3)": (dense_exp.estimator(sderf, W), "softmax"),
        "positive on KAMA Givens rows": (classic.positive_estimator(W_givens), "softmax"),
        "PNG sgn on KAMA Givens rows (KAMA-NNs eq 2)": (png.estimator("sgn", W_givens), "angular"),
    }


def family_errors(key_for, X, Y, V, draws: int, *, features: int) -> dict[str, list[tuple[float, float]]]:
    """Relative Frobenius error of every family's kernel matrix, and of its softmax attention, over independent draws.

    Each draw samples W (``features`` orthogonal rows, key ``key_for("W", draw)``), Givens rows
    (``key_for("givens", draw)``), the hybrid's 4 orthogonal trig rows (``key_for("hybrid trig", draw)``) and its 3
    iid sign projections (``key_for("hybrid sign", draw)``) with :func:`rflib.projections.sample`, and builds
    :func:`every_family`; SDERF is fitted once to X, Y.

    Args:
      X, Y: (n, d) queries and keys; V: (n, d_v) values. draws: independent draws. features: F per point (64).
    Returns:
      name → one (‖K̂ − K‖_F/‖K‖_F, ‖Âtt − Att‖_F/‖Att‖_F) per draw, K the softmax or angular kernel matrix; the
      attention error is NaN for the angular-kernel family.
    """
    _checks.callable_arg("key_for", key_for, "a JAX key for (kind, draw)")
    X = _checks.points("X", X)
    Y = _checks.points("Y", Y, dim=X.shape[1])
    V = _checks.points("V", V)
    if V.shape[0] != Y.shape[0]:
        raise ValueError(f"V must have one row per key, got {V.shape} for {Y.shape[0]} keys")
    draws = _checks.positive_int("draws", draws)
    features = _checks.positive_int("features", features)
    d = X.shape[1]
    K_softmax, K_angular = kernels.softmax_kernel(X, Y), kernels.angular_kernel(X, Y)
    att_exact = attention.softmax_attention(X, Y, V)
    sderf = dense_exp.fit("sderf", X, Y)
    errors = {}
    for draw in range(draws):
        W = projections.sample("orthogonal", key_for("W", draw), features, d)
        W_givens = projections.sample("givens", key_for("givens", draw), features, d)
        W_trig = projections.sample("orthogonal", key_for("hybrid trig", draw), HYBRID_M, d)
        T = projections.sample("iid", key_for("hybrid sign", draw), HYBRID_N, d)
        for name, (est, kernel) in every_family(W, W_givens, W_trig, T, sderf=sderf).items():
            if est.query_features(X).body.shape[1] != features:
                raise ValueError(f"{name} has {est.query_features(X).body.shape[1]} features, not features={features}")
            K = K_softmax if kernel == "softmax" else K_angular
            kernel_err = float(relative_frobenius_error(est.estimate(X, Y), K))
            att_err = math.nan
            if kernel == "softmax":
                out = attention.linear_attention(X, Y, V, est)
                att_err = float(jnp.linalg.norm(out - att_exact) / jnp.linalg.norm(att_exact))
            errors.setdefault(name, []).append((kernel_err, att_err))
    return errors
