"""Closed-form mean-squared errors of the softmax-kernel estimators, for m iid features ω_i ~ N(0, I_d).

Notation (HRF §2, Performer Lemma 2): SM = exp(xᵀy), z = x + y, Δ = x − y. All functions act elementwise on
pairs: ``x``, ``y``: (..., d) broadcastable → (...). The ``log_*`` forms are the primary ones: the MSE spans
hundreds of orders of magnitude (HRF Fig 1 plots up to e^150), so it is computed in log space and exponentiated
only on request. An exact estimator (MSE 0) has log-MSE −inf.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from rflib import _checks


def _pair_terms(x, y):
    x = _checks.vectors("x", x)
    y = _checks.vectors("y", y, dim=x.shape[-1])
    dot = jnp.sum(x * y, axis=-1)
    z_sq = jnp.sum((x + y) ** 2, axis=-1)
    delta_sq = jnp.sum((x - y) ** 2, axis=-1)
    return dot, z_sq, delta_sq


def _log_one_minus_exp_neg(t):
    """log(1 − e^{−t}) for t ≥ 0, accurate for small t (−inf at t = 0)."""
    return jnp.log(-jnp.expm1(-t))


def log_mse_trig(x, y, m: int) -> jax.Array:
    """log MSE of the trigonometric estimator with m frequencies (HRF Lemma 2.2 = Performer Lemma 2):

    MSE(ŜM^trig_m) = (1/(2m)) e^{‖z‖²} SM^{−2} (1 − e^{−‖Δ‖²})².   Shapes: (..., d), (..., d) → (...).
    """
    m = _checks.positive_int("m", m)
    dot, z_sq, delta_sq = _pair_terms(x, y)
    return -jnp.log(2.0 * m) + z_sq - 2.0 * dot + 2.0 * _log_one_minus_exp_neg(delta_sq)


def log_mse_positive(x, y, m: int) -> jax.Array:
    """log MSE of the positive (non-antithetic FAVOR+) estimator with m features (Performer Lemma 2):

    MSE(ŜM^+_m) = (1/m) SM² (e^{‖z‖²} − 1) = (1/m) e^{‖z‖²} SM² (1 − e^{−‖z‖²}).   Shapes: (..., d) → (...).
    """
    m = _checks.positive_int("m", m)
    dot, z_sq, _ = _pair_terms(x, y)
    return -jnp.log(float(m)) + 2.0 * dot + z_sq + _log_one_minus_exp_neg(z_sq)


def log_mse_hyperbolic(x, y, m: int) -> jax.Array:
    """log MSE of the hyperbolic (antithetic positive) estimator with m projections, 2m features (HRF Lemma 2.2):

    MSE(ŜM^{++}_m) = (1/(2m)) e^{‖z‖²} SM² (1 − e^{−‖z‖²})².   Shapes: (..., d), (..., d) → (...).
    """
    m = _checks.positive_int("m", m)
    dot, z_sq, _ = _pair_terms(x, y)
    return -jnp.log(2.0 * m) + z_sq + 2.0 * dot + 2.0 * _log_one_minus_exp_neg(z_sq)


def mse_trig(x, y, m: int) -> jax.Array:
    """exp of :func:`log_mse_trig`."""
    return jnp.exp(log_mse_trig(x, y, m))


def mse_positive(x, y, m: int) -> jax.Array:
    """exp of :func:`log_mse_positive`."""
    return jnp.exp(log_mse_positive(x, y, m))


def mse_hyperbolic(x, y, m: int) -> jax.Array:
    """exp of :func:`log_mse_hyperbolic`."""
    return jnp.exp(log_mse_hyperbolic(x, y, m))


def log_relative_mse(log_mse, x, y) -> jax.Array:
    """log(MSE / SM²), the squared relative error, from a log-MSE of the pairs (x, y): (...) → (...)."""
    dot, _, _ = _pair_terms(x, y)
    return log_mse - 2.0 * dot


# --- complex exponential estimators (HRF §2.3) -------------------------------------------------------------------


def _ce_w(x, y, A):
    x = _checks.vectors("x", x)
    y = _checks.vectors("y", y, dim=x.shape[-1])
    A = jnp.asarray(A)
    if A.shape != (x.shape[-1], x.shape[-1]):
        raise ValueError(f"A must be ({x.shape[-1]}, {x.shape[-1]}), got shape {A.shape}")
    A = A.astype(jnp.result_type(A.dtype, 1j))
    w = x.astype(A.dtype) @ A.T + y.astype(A.dtype) @ jnp.linalg.inv(A)  # rows: A x + A^{-T} y
    return jnp.sum(x * y, axis=-1), w


def log_mse_complex_exponential(x, y, A, m: int, *, part: str = "real") -> jax.Array:
    """log MSE of the CE estimator Ψ_A(x)ᵀΨ_{A^{-T}}(y) with m iid features (HRF §2.3; derived in the HRF notes §2.5).

    With w = A x + A^{-T} y ∈ ℂ^d, |w|² = Σ|w_i|² and the bilinear w² = Σ w_i²:

    - ``part="complex"``: E|ŜM − SM|² = (SM²/m)(e^{|w|²} − 1);
    - ``part="real"`` (the real estimator Re ŜM): (SM²/(2m))(e^{|w|²} + Re e^{w²} − 2).

    A = iI gives Lemma 2.2's trigonometric MSE, real A gives (SM²/m)(e^{‖w‖²} − 1). The variance is zero iff
    w = 0 (eq 17). Shapes: x, y (..., d), A (d, d) → (...).
    """
    m = _checks.positive_int("m", m)
    if part not in ("real", "complex"):
        raise ValueError(f"part must be 'real' or 'complex', got {part!r}")
    dot, w = _ce_w(x, y, A)
    s = jnp.sum(jnp.abs(w) ** 2, axis=-1)
    if part == "complex":
        return 2.0 * dot - jnp.log(float(m)) + jnp.log(jnp.expm1(s))
    w_sq = jnp.sum(w * w, axis=-1)
    a, b = jnp.real(w_sq), jnp.imag(w_sq)
    small_s = jnp.minimum(s, 1.0)  # keeps the unused branch finite
    small = jnp.log(jnp.expm1(small_s) + jnp.expm1(jnp.minimum(a, 1.0)) * jnp.cos(b) - 2.0 * jnp.sin(b / 2) ** 2)
    large = s + jnp.log1p(jnp.exp(a - s) * jnp.cos(b) - 2.0 * jnp.exp(-s))
    return 2.0 * dot - jnp.log(2.0 * m) + jnp.where(s <= 1.0, small, large)


# --- hybrid estimators (HRF Theorem 3.1, Lemma 3.2, Theorems D.1, F.1) ------------------------------------------


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
    delta_sq = jnp.asarray(delta_sq)
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
    dot, _, _ = _pair_terms(x, y)
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
