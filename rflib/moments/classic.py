"""Closed-form mean-squared errors of the softmax-kernel estimators, for m iid features ω_i ~ N(0, I_d).

Notation (HRF §2, Performer Lemma 2): SM = exp(xᵀy), z = x + y, Δ = x − y. All functions act elementwise on
pairs: ``x``, ``y``: (..., d) broadcastable → (...). The ``log_*`` forms are the primary ones: the MSE spans
hundreds of orders of magnitude (HRF Fig 1 plots up to e^150), so it is computed in log space and exponentiated
only on request. An exact estimator (MSE 0) has log-MSE −inf.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

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


def log_relative_mse(log_mse, x, y) -> jax.Array:
    """log(MSE / SM²), the squared relative error, from a log-MSE of the pairs (x, y): (...) → (...)."""
    dot, _, _ = pair_terms(x, y)
    return log_mse - 2.0 * dot


KINDS = ("trig", "positive", "hyperbolic")


def log_mse(x, y, m: int, *, kind: str) -> jax.Array:
    """The family's uniform entry point (every ``rflib.moments`` module has one): log MSE of the ``kind``
    estimator (``"trig"``, ``"positive"`` or ``"hyperbolic"``) with m iid features.  (..., d), (..., d) → (...)."""
    _checks.one_of("kind", kind, KINDS)
    return {"trig": log_mse_trig, "positive": log_mse_positive, "hyperbolic": log_mse_hyperbolic}[kind](x, y, m)
