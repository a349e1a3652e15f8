"""Closed-form MSE of the complex exponential (CE) estimators of the softmax kernel (HRF §2.3), m iid features.

The same conventions as :mod:`rflib.moments.classic`: log forms, pairs broadcast over leading axes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rflib import _checks


def _ce_w(x, y, A):
    x = _checks.vectors("x", x)
    y = _checks.vectors("y", y, dim=x.shape[-1])
    A = _checks.square_matrix("A", A, x.shape[-1], invertible=True)  # A^(-T) is taken: a singular A gave NaN
    A = A.astype(jnp.result_type(A.dtype, 1j))
    w = x.astype(A.dtype) @ A.T + y.astype(A.dtype) @ jnp.linalg.inv(A)  # rows: A x + A^{-T} y
    return jnp.sum(x * y, axis=-1), w


def log_mse_complex_exponential(x, y, A, m: int, *, part: str = "real") -> jax.Array:
    """log MSE of the CE estimator Ψ_A(x)ᵀΨ_{A^{-T}}(y) with m iid features (HRF §2.3; our derivation).

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
        return 2.0 * dot - jnp.log(float(m)) + s + jnp.log(-jnp.expm1(-s))  # log(e^s − 1), finite for any s
    w_sq = jnp.sum(w * w, axis=-1)
    a, b = jnp.real(w_sq), jnp.imag(w_sq)
    small_s = jnp.minimum(s, 1.0)  # keeps the unused branch finite
    small = jnp.log(jnp.expm1(small_s) + jnp.expm1(jnp.minimum(a, 1.0)) * jnp.cos(b) - 2.0 * jnp.sin(b / 2) ** 2)
    large = s + jnp.log1p(jnp.exp(a - s) * jnp.cos(b) - 2.0 * jnp.exp(-s))
    return 2.0 * dot - jnp.log(2.0 * m) + jnp.where(s <= 1.0, small, large)


def log_mse(x, y, m: int, *, A, part: str = "real") -> jax.Array:
    """The family's uniform entry point: :func:`log_mse_complex_exponential` with the matrix A and the part as
    keywords.  (..., d), (..., d) → (...)."""
    return log_mse_complex_exponential(x, y, A, m, part=part)
