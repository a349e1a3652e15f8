"""Closed-form MSE of the hybrid estimators (HRF Theorem 3.1, Lemma 3.2, Theorems D.1, F.1), m iid projections.

A hybrid estimator mixes base estimators with λ-coefficients estimated by their own random features; its MSE needs
the base MSEs (:mod:`rflib.moments.classic`) and a few moments of λ̂ (:class:`LambdaMoments`). Log forms throughout.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from rflib import _checks
from rflib.moments.classic import log_mse_hyperbolic, log_mse_trig, pair_terms


class LambdaMoments(NamedTuple):
    """Moments of a λ-estimator that Theorem 3.1 needs: E λ̂², E (1 − λ̂)² and E λ̂(1 − λ̂) (arrays)."""

    second: jax.Array
    one_minus_second: jax.Array
    cross: jax.Array


def angular_lambda_moments(theta, n: int) -> LambdaMoments:
    """Lemma 3.2 for n sign features: with p = θ/π (n λ̂ ~ Binomial(n, p)),

    E λ̂² = p(p − p/n + 1/n),  E(1 − λ̂)² = (1 − p)(1 − p + p/n),  E λ̂(1 − λ̂) = p(1 − p)(1 − 1/n).
    """
    n = _checks.positive_int("n", n)
    theta = _checks.elementwise("theta", theta)
    _checks.values_in_range("theta", theta, low=0.0, high=float(jnp.pi), what="an angle")
    p = theta / jnp.pi
    return LambdaMoments(p * (p - p / n + 1.0 / n), (1 - p) * (1 - p + p / n), p * (1 - p) * (1 - 1.0 / n))


def normalized_gaussian_lambda_moments(delta_sq, n: int, sigma: float, r: float) -> LambdaMoments:
    """Theorem F.1's λ-moments for App F's trig-estimated normalised Gaussian λ̂ (n features, norm r, width σ):

    E λ̂ = (1 − e^{−σ²‖Δ‖²/2})/ρ,  Var λ̂ = (1 − e^{−σ²‖Δ‖²})²/(2nρ²),  ρ = 1 − e^{−2σ²r²}.
    """
    n = _checks.positive_int("n", n)
    sigma = _checks.positive_float("sigma", sigma)
    r = _checks.positive_float("r", r)
    delta_sq = _checks.elementwise("delta_sq", delta_sq)  # ‖Δ‖²: NaN, complex and negative values passed silently
    _checks.values_in_range("delta_sq", delta_sq, low=0.0, what="a squared distance")
    rho = -jnp.expm1(-2.0 * sigma**2 * r**2)
    mean = -jnp.expm1(-(sigma**2) * delta_sq / 2.0) / rho
    var = jnp.expm1(-(sigma**2) * delta_sq) ** 2 / (2.0 * n * rho**2)
    return LambdaMoments(mean**2 + var, (1.0 - mean) ** 2 + var, mean - mean**2 - var)


def log_mse_bipolar_hybrid(x, y, m: int, lam: LambdaMoments, *, shared: bool = False) -> jax.Array:
    """log MSE of the bipolar hybrid λ̂ ŜM^{++}_m + (1 − λ̂) ŜM^trig_m (HRF eq 12, Theorem 3.1).

    (I) independent projections: E λ̂² MSE(ŜM^{++}_m) + E(1 − λ̂)² MSE(ŜM^trig_m);
    (II) ``shared=True`` (the same ω in both bases): minus (2/m) SM² (1 − cos(‖x‖² − ‖y‖²)) E λ̂(1 − λ̂).
    The correction vanishes for ‖x‖ = ‖y‖, and increases the MSE where E λ̂(1 − λ̂) < 0 (possible for λ̂ ∉ [0, 1]).
    Shapes: x, y (..., d), moments broadcastable to (...) → (...).
    """
    m = _checks.positive_int("m", m)
    if not isinstance(lam, LambdaMoments):
        raise ValueError(f"lam must be LambdaMoments (e.g. angular_lambda_moments), got {type(lam).__name__}")
    for name, value in (("lam.second", lam.second), ("lam.one_minus_second", lam.one_minus_second)):
        _checks.values_in_range(name, _checks.elementwise(name, value), low=0.0, what="a second moment")  # log(<0)
    _checks.elementwise("lam.cross", lam.cross)
    dot, _, _ = pair_terms(x, y)
    main = jnp.logaddexp(
        jnp.log(lam.second) + log_mse_hyperbolic(x, y, m), jnp.log(lam.one_minus_second) + log_mse_trig(x, y, m)
    )
    if not shared:
        return main
    norm_gap = jnp.sum(jnp.asarray(x) ** 2, axis=-1) - jnp.sum(jnp.asarray(y) ** 2, axis=-1)
    log_corr = jnp.log(4.0 * jnp.abs(lam.cross) / m) + 2.0 * dot + 2.0 * jnp.log(jnp.abs(jnp.sin(norm_gap / 2)))
    reduces = lam.cross > 0
    diff = jnp.where(reduces, jnp.minimum(log_corr - main, 0.0), 0.0)
    return jnp.where(reduces, main + jnp.log1p(-jnp.exp(diff)), jnp.logaddexp(main, log_corr))


def log_mse_angular_hybrid(x, y, m: int, n: int, *, shared: bool = False) -> jax.Array:
    """log MSE of the angular hybrid (Theorem D.1 = Theorem 3.1 with Lemma 3.2's moments).  (..., d) → (...)."""
    x = _checks.vectors("x", x)
    y = _checks.vectors("y", y, dim=x.shape[-1])
    _checks.nonzero_rows("x", x)
    _checks.nonzero_rows("y", y)
    nx, ny = jnp.linalg.norm(x, axis=-1, keepdims=True), jnp.linalg.norm(y, axis=-1, keepdims=True)
    xh, yh = x / nx, y / ny
    theta = 2.0 * jnp.arctan2(jnp.linalg.norm(xh - yh, axis=-1), jnp.linalg.norm(xh + yh, axis=-1))
    return log_mse_bipolar_hybrid(x, y, m, angular_lambda_moments(theta, n), shared=shared)


def log_mse(x, y, m: int, *, n: int, shared: bool = False) -> jax.Array:
    """The family's uniform entry point: log MSE of the angular hybrid with m projections per base and n
    λ-projections (:func:`log_mse_angular_hybrid`).  (..., d), (..., d) → (...)."""
    return log_mse_angular_hybrid(x, y, m, n, shared=shared)
