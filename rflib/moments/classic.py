"""Closed-form mean-squared errors of the softmax-kernel estimators, for m iid features ω_i ~ N(0, I_d).

Notation (HRF §2, Performer Lemma 2): SM = exp(xᵀy), z = x + y, Δ = x − y. All functions act elementwise on
pairs: ``x``, ``y``: (..., d) broadcastable → (...). The ``log_*`` forms are the primary ones: the MSE spans
hundreds of orders of magnitude (HRF Fig 1 plots up to e^150), so it is computed in log space and exponentiated
only on request. An exact estimator (MSE 0) has log-MSE −inf.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks


def pair_terms(x, y) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(xᵀy, ‖x + y‖², ‖x − y‖²) of pairs: (..., d), (..., d) → three (...) arrays (validated)."""
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
    dot, z_sq, delta_sq = pair_terms(x, y)
    return -jnp.log(2.0 * m) + z_sq - 2.0 * dot + 2.0 * _log_one_minus_exp_neg(delta_sq)


def log_mse_positive(x, y, m: int) -> jax.Array:
    """log MSE of the positive (non-antithetic FAVOR+) estimator with m features (Performer Lemma 2):

    MSE(ŜM^+_m) = (1/m) SM² (e^{‖z‖²} − 1) = (1/m) e^{‖z‖²} SM² (1 − e^{−‖z‖²}).   Shapes: (..., d) → (...).
    """
    m = _checks.positive_int("m", m)
    dot, z_sq, _ = pair_terms(x, y)
    return -jnp.log(float(m)) + 2.0 * dot + z_sq + _log_one_minus_exp_neg(z_sq)


def log_mse_hyperbolic(x, y, m: int) -> jax.Array:
    """log MSE of the hyperbolic (antithetic positive) estimator with m projections, 2m features (HRF Lemma 2.2):

    MSE(ŜM^{++}_m) = (1/(2m)) e^{‖z‖²} SM² (1 − e^{−‖z‖²})².   Shapes: (..., d), (..., d) → (...).
    """
    m = _checks.positive_int("m", m)
    dot, z_sq, _ = pair_terms(x, y)
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


def orthogonal_row_pairs(m: int, d: int) -> int:
    """Ordered pairs (i ≠ j) of rows that share a block when m rows come in blocks of d mutually orthogonal rows,
    the last block truncated (:func:`rflib.projections.orthogonal`): Σ_blocks b(b − 1)."""
    m, d = _checks.positive_int("m", m), _checks.positive_int("d", d)
    full, rest = divmod(m, d)
    return full * d * (d - 1) + rest * (rest - 1)


ORTHOGONAL_TRIG_MAX_D = 128
"""The largest d for which :func:`log_mse_trig_orthogonal`'s quadrature is validated (its Gauss–Laguerre weights
for χ²_{2d} lose precision beyond)."""


def log_mse_trig_orthogonal(x, y, m: int, *, nodes: int = 64) -> np.ndarray:
    """log MSE of the trigonometric estimator with m orthogonal random features (ORF: blocks of d Haar-orthogonal
    directions with independent χ_d lengths, the last block truncated, as :func:`rflib.projections.orthogonal`
    draws them), by quadrature; 2 ≤ d ≤ :data:`ORTHOGONAL_TRIG_MAX_D`.

    The estimate is e^{(‖x‖²+‖y‖²)/2} (1/m) Σ_i cos(ω_iᵀΔ). Each row is marginally N(0, I_d), so its variance is the
    iid one, v = (1 − e^{−‖Δ‖²})²/2 (Lemma 2.2), and the P = :func:`orthogonal_row_pairs` ordered pairs of rows of
    one block add their covariance c:  MSE = e^{‖x‖²+‖y‖²} (v/m + P c/m²).

    For two rows ω₁ = R₁u₁, ω₂ = R₂u₂ of one block, cos a cos b = (cos(a + b) + cos(a − b))/2, and ω₁ ± ω₂ has the
    length S = √(R₁² + R₂²) ~ χ_{2d} and, by Haar invariance, a uniform direction u independent of it. With
    E_u cos(s u₁) = ₀F₁(; d/2; −s²/4), c = E_S[₀F₁(; d/2; −‖Δ‖²S²/4)] − e^{−‖Δ‖²}, and S²/2 ~ Gamma(d): a
    ``nodes``-point generalised Gauss–Laguerre rule (the default is accurate to ≈ 1e-12 for ‖Δ‖ ≤ 10).
    Shapes: (..., d), (..., d) → (...) numpy float64; −inf for x = y.
    """
    from scipy import special

    m = _checks.positive_int("m", m)
    nodes = _checks.positive_int("nodes", nodes)
    x = _checks.finite_numpy("x", x)
    y = _checks.finite_numpy("y", y)
    if x.ndim == 0 or y.ndim == 0 or x.shape[-1] != y.shape[-1]:
        raise ValueError(f"x and y must be pairs (..., d) with one d, got shapes {x.shape} and {y.shape}")
    d = x.shape[-1]
    if not 2 <= d <= ORTHOGONAL_TRIG_MAX_D:
        raise ValueError(
            f"x must have 2 ≤ d ≤ {ORTHOGONAL_TRIG_MAX_D} coordinates (orthogonal rows need two; the quadrature is "
            f"validated up to {ORTHOGONAL_TRIG_MAX_D}), got d = {d}"
        )
    x, y = np.broadcast_arrays(x, y)
    rho_sq = np.sum((x - y) ** 2, axis=-1)
    half_s_sq, weights = special.roots_genlaguerre(nodes, d - 1.0)
    weights = weights / weights.sum()
    product = special.hyp0f1(d / 2.0, -rho_sq[..., None] * half_s_sq / 2.0) @ weights
    covariance = product - np.exp(-rho_sq)
    variance = np.expm1(-rho_sq) ** 2 / 2.0
    spread = variance / m + orthogonal_row_pairs(m, d) * covariance / m**2
    with np.errstate(divide="ignore"):
        return np.sum(x**2, axis=-1) + np.sum(y**2, axis=-1) + np.log(np.maximum(spread, 0.0))


def log_relative_mse(log_mse, x, y) -> jax.Array:
    """log(MSE / SM²), the squared relative error, from a log-MSE of the pairs (x, y): log_mse (...), x and y
    (..., d) → (...), broadcast. log_mse may be −inf (an exact estimate); NaN and +inf are refused."""
    dot, _, _ = pair_terms(x, y)
    _checks.real_dtype("log_mse", log_mse)
    if _checks.is_concrete(log_mse):
        values = np.asarray(log_mse, dtype=float)
        if np.isnan(values).any() or np.isposinf(values).any():
            raise ValueError("log_mse contains NaN or +inf (only −inf, an MSE of 0, is a log-MSE's limit)")
    try:
        jnp.broadcast_shapes(jnp.shape(log_mse), dot.shape)
    except ValueError:
        raise ValueError(f"log_mse {jnp.shape(log_mse)} must broadcast with the pairs' shape {dot.shape}") from None
    return log_mse - 2.0 * dot


KINDS = ("trig", "positive", "hyperbolic")


def log_mse(x, y, m: int, *, kind: str) -> jax.Array:
    """The family's uniform entry point (every ``rflib.moments`` module has one): log MSE of the ``kind``
    estimator (``"trig"``, ``"positive"`` or ``"hyperbolic"``) with m iid features.  (..., d), (..., d) → (...)."""
    _checks.one_of("kind", kind, KINDS)
    return {"trig": log_mse_trig, "positive": log_mse_positive, "hyperbolic": log_mse_hyperbolic}[kind](x, y, m)
