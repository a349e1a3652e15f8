"""Classic random features of the softmax kernel SM(x, y) = exp(xᵀy): trigonometric, positive, hyperbolic.

Each map takes the projection matrix W: (m, d) (rows ω_i, e.g. from ``rflib.projections``) and points X: (n, d),
and returns features whose inner products are unbiased estimates of SM when the ω_i are marginally N(0, I_d)::

    W = projections.orthogonal(key, m, d)
    estimate = positive(W, X) @ positive(W, Y).T      # (n, k), E[estimate] = softmax_kernel(X, Y)

The ``*_features`` variants return the factored :class:`~rflib.features.base.Features` used by attention.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from rflib import _checks, fastmath
from rflib.features.base import Estimator, Features, positive_from_projection

#: Why a dense feature of finite X is not finite: its row factor exp(log_scale) overflows the dtype (trigonometric
#: features, factor e^(‖x‖²/2), in float32 from ‖x‖ ≈ 13.3), and times the bounded body gives inf, or NaN where the
#: body is 0.
FEATURE_OVERFLOW = (
    "the features' row factor exp(log_scale) overflowed at these norms of X: use float64, rescale X, or the factored "
    "*_features form (its log_scale and bounded body stay finite)"
)


def _checked(W, X):
    X = _checks.points("X", X)
    W = _checks.projection_matrix("W", W, X.shape[1])
    return W, X


@jax.jit
def _trig(W, X):
    proj = X @ W.T
    log_scale = 0.5 * jnp.sum(X**2, axis=1) - 0.5 * jnp.log(W.shape[0])
    return Features(log_scale, fastmath.sincos_columns(proj))


@jax.jit
def _positive(W, X):
    row_log_scale = -0.5 * jnp.sum(X**2, axis=1) - 0.5 * jnp.log(W.shape[0])
    return positive_from_projection(row_log_scale, X, W)


@jax.jit
def _hyperbolic(W, X):
    row_log_scale = -0.5 * jnp.sum(X**2, axis=1) - 0.5 * jnp.log(2 * W.shape[0])
    return positive_from_projection(row_log_scale, X, jnp.concatenate([W, -W]))  # one matmul: fastest on CPU


def trig_features(W, X) -> Features:
    """Trigonometric features φ(u) = m^{-1/2} e^{‖u‖²/2} (sin ω_1ᵀu … sin ω_mᵀu, cos ω_1ᵀu … cos ω_mᵀu).

    HRF eq 2 (Performer §2.3 with h(u) = e^{‖u‖²/2}). φ(x)ᵀφ(y) = e^{(‖x‖²+‖y‖²)/2} (1/m) Σ_i cos ω_iᵀ(x − y)
    (HRF eq 35): unbiased, exact when x = y, possibly negative. Shapes: W (m, d), X (n, d) → body (n, 2m).
    """
    return _trig(*_checked(W, X))


def positive_features(W, X) -> Features:
    """Positive features (FAVOR+) φ(u) = m^{-1/2} e^{−‖u‖²/2} (e^{ω_1ᵀu}, …, e^{ω_mᵀu}).

    Performer Lemma 1 (the non-antithetic form, = HRF's complex-exponential estimator with A = I, §2.3).
    φ(x)ᵀφ(y) > 0 always. Shapes: W (m, d), X (n, d) → body (n, m).
    """
    return _positive(*_checked(W, X))


def hyperbolic_features(W, X) -> Features:
    """Hyperbolic (antithetic positive) features φ(u) = (2m)^{-1/2} e^{−‖u‖²/2} (e^{ω_iᵀu})_i ⋆ (e^{−ω_iᵀu})_i.

    HRF eq 3 (Performer Lemma 1, hyperbolic form): φ(x)ᵀφ(y) = e^{−(‖x‖²+‖y‖²)/2} (1/m) Σ_i cosh ω_iᵀ(x + y)
    (HRF eq 34): positive, exact when x = −y. "m features" means m projections ω, 2m columns.
    Shapes: W (m, d), X (n, d) → body (n, 2m).
    """
    return _hyperbolic(*_checked(W, X))


def trig(W, X) -> jax.Array:
    """Dense :func:`trig_features`: (n, 2m). Raises ValueError (eager calls only) where a
    feature is not finite: its factor e^(±‖x‖²/2) overflowed (use float64, rescale X, or the factored form)."""
    return _checks.finite_result("trig", trig_features(W, X).dense(), FEATURE_OVERFLOW)


def positive(W, X) -> jax.Array:
    """Dense :func:`positive_features`: (n, m). Raises ValueError (eager calls only) where a
    feature is not finite: its factor e^(±‖x‖²/2) overflowed (use float64, rescale X, or the factored form)."""
    return _checks.finite_result("positive", positive_features(W, X).dense(), FEATURE_OVERFLOW)


def hyperbolic(W, X) -> jax.Array:
    """Dense :func:`hyperbolic_features`: (n, 2m). Raises ValueError (eager calls only) where a
    feature is not finite: its factor e^(±‖x‖²/2) overflowed (use float64, rescale X, or the factored form)."""
    return _checks.finite_result("hyperbolic", hyperbolic_features(W, X).dense(), FEATURE_OVERFLOW)


def gaussian_kernel_features(features: Features, X) -> Features:
    """Turn softmax-kernel features of X into Gaussian-kernel (σ = 1) features: multiply by e^{−‖x‖²/2}.

    Uses exp(−‖x − y‖²/2) = e^{−‖x‖²/2} SM(x, y) e^{−‖y‖²/2} (HRF §2.1). With :func:`trig_features` this gives the
    classic sin/cos random Fourier features. Shapes: X (n, d), features with n rows → same shapes.
    """
    X = _checks.points("X", X)
    if features.log_scale.shape[0] != X.shape[0]:
        raise ValueError(
            f"features has {features.log_scale.shape[0]} rows but X has {X.shape[0]}: pass the X they were built from"
        )
    return Features(features.log_scale - 0.5 * jnp.sum(X**2, axis=1), features.body)


def trig_estimator(W) -> Estimator:
    """The trigonometric estimator ŜM^trig_m (HRF eq 2) with projections W: (m, d)."""
    return Estimator(partial(trig_features, W), partial(trig_features, W))


def positive_estimator(W) -> Estimator:
    """The non-antithetic positive estimator (FAVOR+, Performer Lemma 1; = CE with A = I) with W: (m, d)."""
    return Estimator(partial(positive_features, W), partial(positive_features, W))


def hyperbolic_estimator(W) -> Estimator:
    """The antithetic positive estimator ŜM^{++}_m (HRF eq 3, "FAVOR+" in the HRF paper) with W: (m, d)."""
    return Estimator(partial(hyperbolic_features, W), partial(hyperbolic_features, W))
